#!/usr/bin/env bash
# The Homebrew formula (packaging/homebrew/tbrdma.rb) on Linux, every step but Homebrew itself:
#   - make distcheck passes; the formula is valid Ruby; make-formula.sh fills in the url (file://,
#     or a release's https://, in a tap's Formula/) and sha256 of its tarball, and the result
#     passes Homebrew's audit rules that can be checked without a Mac (audit-formula.rb);
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

# 1. The formula: the tarball of `make distcheck` (which also builds it from the tarball, runs
# its unit tests there and installs and uninstalls it), the formula made for it with
# make-formula.sh, and Homebrew's audit rules that hold without a Mac (audit-formula.rb).
command -v ruby >/dev/null || fatal "ruby is needed to check the formula's syntax (test/install-deps.sh)"
check "tbrdma.rb is valid Ruby (ruby -c)" ruby -c "$brew_dir/tbrdma.rb"
home=$(sed -n 's/^ *\[\(https:[^]]*\)\])$/\1/p' "$top/configure.ac")
check "the formula's homepage is configure.ac's (AC_INIT: $home)" \
    grep -qxF "  homepage \"$home\"" "$brew_dir/tbrdma.rb"
check "configure.ac names the license and a bug-report address" \
    bash -c "grep -q 'License: BSD-3-Clause' '$top/configure.ac' && grep -q 'AC_INIT(\[tbrdma\], \[[0-9.]*\], \[https://' '$top/configure.ac'"
check "the template is not publishable as it is (its url and sha256 are slots)" \
    bash -c "! ruby '$brew_dir/audit-formula.rb' '$brew_dir/tbrdma.rb' >/dev/null"
make -C "$top/build" distcheck >"$tmp/dist.log" 2>&1 \
    || { tail -n 30 "$tmp/dist.log" | sed 's/^/    | /'; fatal "make distcheck failed (log above)"; }
check "make distcheck passed" grep -q "archives ready for distribution" "$tmp/dist.log"
tarball=$(ls "$top"/build/tbrdma-*.tar.gz | head -n 1)
name=$(basename "$tarball")
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
"$brew_dir/make-formula.sh" "$tarball" >"$tmp/tbrdma.rb"
check "make-formula.sh: the tarball's file:// URL" grep -q "^  url \"file://$tarball\"$" "$tmp/tbrdma.rb"
check "make-formula.sh: its sha256" grep -q "^  sha256 \"$sum\"$" "$tmp/tbrdma.rb"
check "make-formula.sh: nothing left to fill in, and Homebrew's rules hold (file:// allowed)" \
    ruby "$brew_dir/audit-formula.rb" --local "$tmp/tbrdma.rb"
url=https://downloads.example.org/tbrdma/$name
out=$("$brew_dir/make-formula.sh" --url "$url" --tap "$tmp/tap" "$tarball")
echo "    $out"
check "make-formula.sh --tap: the tap's Formula/tbrdma.rb with the release's url and sha256" \
    bash -c "grep -qxF '  url \"$url\"' '$tmp/tap/Formula/tbrdma.rb' \
        && grep -qxF '  sha256 \"$sum\"' '$tmp/tap/Formula/tbrdma.rb'"
check "the release formula passes Homebrew's rules as it is (https, license, order, test)" \
    ruby "$brew_dir/audit-formula.rb" "$tmp/tap/Formula/tbrdma.rb"
check "make-formula.sh refuses a url that is not https or names another file" \
    bash -c "! '$brew_dir/make-formula.sh' --url http://x.org/$name '$tarball' >/dev/null 2>&1 \
        && ! '$brew_dir/make-formula.sh' --url https://x.org/other.tar.gz '$tarball' >/dev/null 2>&1"

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
