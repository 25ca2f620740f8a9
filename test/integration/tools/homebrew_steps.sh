#!/usr/bin/env bash
# The Homebrew formula (packaging/homebrew/tbrdma.rb) on Linux, every step but Homebrew itself
# (the tarball, the formula's syntax and Homebrew's audit rules: distcheck.sh):
#   - tbrdma-brew-build refuses, naming both versions, when the installed Open MPI (Debian 12's
#     4.1.4 ompi_info) is not the version of the source tree (5.0.7);
#   - in the Open MPI 5.0.7 chroot (test/ompi5, the Homebrew stand-in: the configure-only source
#     tree of test/ompi5/source-tree.sh, reused), the formula's install step as brew runs it: the
#     tarball unpacked, its tbrdma-brew-build builds and installs tbrdma from that tree into a
#     prefix of its own (with the collectives' rules for 5.0, docs/collectives.md), names the
#     component's directory in a params file (Homebrew's etc/openmpi-mca-params.conf) once
#     however often it runs, and Open MPI 5.0.7 then finds the component through that file:
#     ompi_info lists it, built for 5.0.7, and tbrdma-info --version shows the source tree's
#     checksum (+src.: the same build).
# Not run here: brew itself, clang and macOS linking (docs/building.md says the same of the
# source-tree build). Skips when the chroot or the configured tree cannot be had.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
# shellcheck source=../../lib/check.sh
. "$top/test/lib/check.sh"
brew_dir="$top/packaging/homebrew"
helper="$brew_dir/tbrdma-brew-build"
src="$top/build/ompi5/src"
prefix="$top/build/ompi5/brew-prefix"
buildpath="$top/build/ompi5/brew-buildpath"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] || skip "needs root (the chroot)"

# The release tarball of distcheck.sh (made here when missing).
tarball=$(ls "$top"/build/dist/tbrdma-*.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
    echo "no tarball in build/dist: running distcheck.sh"
    "$here/distcheck.sh" >"$tmp/distcheck.log" 2>&1
    tarball=$(ls "$top"/build/dist/tbrdma-*.tar.gz 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || fatal "no release tarball (distcheck.sh: $(tail -n 1 "$tmp/distcheck.log"))"
fi

# The 5.0.7 tree of source-tree.sh (configured there; made here when missing).
if [ ! -r "$src/opal/include/opal_config.h" ]; then
    echo "no configured Open MPI tree in $src: running test/ompi5/source-tree.sh"
    "$top/test/ompi5/source-tree.sh" >"$tmp/source-tree.log" 2>&1
    [ -r "$src/opal/include/opal_config.h" ] || skip "no configured Open MPI 5.0.7 tree (test/ompi5/source-tree.sh: $(tail -n 1 "$tmp/source-tree.log"))"
fi

# 2. Versions differ: refused before anything is built.
out=$("$helper" --ompi-info "$(command -v ompi_info)" --ompi-prefix /usr --ompi-source "$src" \
    --prefix "$tmp/never" 2>&1)
rc=$?
echo "$out" | sed 's/^/    | /'
expect "another Open MPI than the tree's: refused (exit 1)" 1 "$rc"
check "the refusal names both versions and the fix" bash -c "echo \"\$1\" | grep -q \
'the installed Open MPI is 4.1.4 (.*ompi_info) but the source tree $src is 5.0.7: tbrdma must be built against exactly the Open MPI it runs in; fix: use the openmpi-4.1.4 release tarball'" _ "$out"
check "nothing was built" [ ! -e "$tmp/never" ]

# The arguments it would give Open MPI's configure are those source-tree.sh configured the
# tree with (both read from ompi_info -c, Java dropped).
"$top/test/ompi5/in-chroot.sh" "$helper" --print-configure-args --ompi-info /usr/bin/ompi_info \
    >"$tmp/args" 2>&1
check "Open MPI's configure arguments: the same as source-tree.sh's ($(wc -l <"$tmp/args") words)" \
    diff "$tmp/args" "$top/build/ompi5/openmpi-configure-args.txt"

# 3. Versions agree (in the chroot): the formula's install step, as brew runs it in the unpacked
# tarball (buildpath): built from the tree, installed, found by Open MPI.
rm -rf "$prefix" "$buildpath"
mkdir -p "$buildpath"
tar -xzf "$tarball" -C "$buildpath" --strip-components=1 || fatal "unpacking $tarball failed"
params="$prefix/etc/openmpi-mca-params.conf"
run_helper()
{
    "$top/test/ompi5/in-chroot.sh" "$buildpath/packaging/homebrew/tbrdma-brew-build" \
        --tbrdma-source "$buildpath" --build-dir "$buildpath/build" --ompi-info /usr/bin/ompi_info \
        --ompi-prefix /usr/lib/x86_64-linux-gnu/openmpi --ompi-source "$src" --prefix "$prefix" \
        --params-file "$params"
}
run_helper >"$tmp/build.log" 2>&1
rc=$?
grep -E '^tbrdma-brew-build: ' "$tmp/build.log" | sed 's/^/    | /'
[ "$rc" = 0 ] || tail -n 20 "$tmp/build.log" | sed 's/^/    | /'
expect "tbrdma-brew-build in the 5.0.7 chroot" 0 "$rc"
check "it used the configured tree as it was" grep -q "^tbrdma-brew-build: $src is configured already$" "$tmp/build.log"
check "the components are installed in PREFIX/lib/openmpi (btl and coll)" [ -f "$prefix/lib/openmpi/mca_btl_tbrdma.so" ] && [ -f "$prefix/lib/openmpi/mca_coll_tbrdma.so" ]
check "the tools are installed" [ -x "$prefix/bin/tbrdma-doctor" ] && [ -x "$prefix/bin/tbrdma-probe" ]
check "the collectives' rules for 5.0 and the settings naming them are installed" \
    bash -c "cmp -s '$prefix/share/tbrdma/coll-tuned.rules' '$top/share/coll/ompi-5.0.rules' && \
        grep -qx 'coll_tuned_dynamic_rules_filename=$prefix/share/tbrdma/coll-tuned.rules' \
        '$prefix/share/tbrdma/coll-tuned.conf'"
version=$("$top/test/ompi5/in-chroot.sh" "$prefix/bin/tbrdma-info" --version 2>&1)
echo "$version" | sed 's/^/    | /'
check "tbrdma-info says it was built for 5.0.7" grep -q 'built for Open MPI 5\.0\.7$' <<<"$version"
# The tarball's sources are the tree's: the same checksum as the build of ./build.sh.
src_id=$(sed -n 's/^#define TBRDMA_SOURCE_ID "\([0-9a-f]*\)"$/\1/p' "$top/build/tools/tbrdma_source_id.h")
check "the build from the tarball has the tree's source checksum (+src.$src_id)" \
    grep -q "^tbrdma-info (tbrdma) [0-9.]*+src\.${src_id:-none}, " <<<"$version"
"$helper" --params-only --params-file "$params" --component-dir "$prefix/lib/openmpi" >/dev/null
expect "the params file names the component's directory once (after two runs)" 1 \
    "$(grep -c "^opal_mca_base_component_path = SYS_DEFAULT:$prefix/lib/openmpi$" "$params")"
# Open MPI reads that file as Homebrew's Open MPI reads etc/openmpi-mca-params.conf (here named
# through mca_base_param_files, so that the chroot's own file stays untouched); without it,
# Open MPI does not find the component.
check "without the params file Open MPI 5.0.7 does not find it" bash -c \
    "! '$top/test/ompi5/in-chroot.sh' ompi_info | grep -q 'MCA btl: tbrdma'"
"$top/test/ompi5/in-chroot.sh" env OMPI_MCA_mca_base_param_files="$params" ompi_info \
    >"$tmp/ompi_info.txt" 2>&1
grep 'MCA btl: tbrdma' "$tmp/ompi_info.txt" | sed 's/^/    | /'
check_grep "Open MPI 5.0.7 finds it through the params file" "$tmp/ompi_info.txt" \
    'MCA btl: tbrdma \(MCA v2\.1\.0, API v3\.3\.0, Component v5\.0\.7\)'
finish
