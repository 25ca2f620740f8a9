#!/bin/bash
#
# version-guard.sh [4.1|5.0]: the flavour's ompi_info loads the plugin built for the OTHER
# flavour (4.1 loads the 5.0 build, 5.0 loads the 4.1 build). Open MPI does not check a DSO's
# BTL API, so tbrdma's register hook compares the running Open MPI with the one it was built
# for and declines. Two runs:
#   1. plain: ompi_info exits 0 and does not list tbrdma; what declined it (the dynamic loader,
#      e.g. the 5.0 build needs a newer glibc than Debian 12's, or the guard) is printed.
#   2. guard: make the .so loadable by this flavour's dynamic loader. The plugin links no Open
#      MPI library (its Open MPI symbols bind to the Open MPI that loads it, see
#      config/tbrdma_platform.m4), so undefined Open MPI symbols are expected and only missing
#      libraries or symbol versions count. 4.1 loading the 5.0 build needs the chroot's newer
#      glibc: 4.1's ompi_info then runs under the chroot's dynamic loader and glibc; a control
#      run without the plugin shows that setup alone works. The register hook then runs:
#      ompi_info exits 0 without a crash, prints the guard's "built for Open MPI X.Y but this
#      is Open MPI Z" line (or, for 5.0 loading the 4.1 build, the loader refuses it first over a
#      4.1-only symbol), and does not list tbrdma. When the .so still cannot be loaded the
#      guard is unreachable here: the test then skips (exit 77) after the plain checks.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IT_GUARD_UNREACHABLE=""

# Run a command in the other flavour's environment.
other_run()
{
    if [ "$IT_OTHER_FLAVOUR" = 5.0 ]; then
        "$IT_REPO/test/ompi5/in-chroot.sh" "$@"
    else
        "$@"
    fi
}

# Host path of a file path $1 of the other flavour's environment.
other_path()
{
    if [ "$IT_OTHER_FLAVOUR" = 5.0 ]; then
        echo "${TBRDMA_OMPI5_CHROOT:-$IT_REPO/build/ompi5/chroot}$1"
    else
        echo "$1"
    fi
}

# ompi_info (full listing) of this flavour with the other build in the component path.
cross_ompi_info()
{
    it_run env OMPI_MCA_mca_base_component_path="SYS_DEFAULT:$IT_OTHER_LIBS" ompi_info
}

guard_regex()
{
    echo "built for Open MPI ${IT_OTHER_FLAVOUR//./\\.} but this is Open MPI ${IT_FLAVOUR//./\\.}"
}

# Common checks of a cross-load run: $1 = name, $2 = output file, $3 = exit status.
check_declined()
{
    local name=$1 out=$2 rc=$3
    check "$name: ompi_info exits 0, no crash (exit $rc)" [ "$rc" = 0 ]
    check "$name: no 'MCA btl: tbrdma' component listed" it_lacks "$out" 'MCA btl: tbrdma'
    check "$name: no crash report (segfault, signal, abort)" \
        it_lacks "$out" \
        'Segmentation fault|Process received signal|core dumped|Aborted'
}

check_plain()
{
    local out=$IT_TMP/plain.out rc
    cross_ompi_info >"$out" 2>&1
    rc=$?
    echo "-- plain: $IT_FLAVOUR's ompi_info with $IT_OTHER_LIBS in the component path: exit $rc"
    check_declined plain "$out" "$rc"
    if it_has "$out" "$(guard_regex)"; then
        echo "plain: declined by tbrdma's version guard:"
        it_show "$out" "$(guard_regex)"
    else
        echo "plain: declined by the loader before the guard could run:"
        it_show "$out" 'mca_btl_tbrdma|libopen-pal|not found|cannot open'
    fi
    check "plain: the decline is explained (guard line, or a load error naming mca_btl_tbrdma)" \
        it_has "$out" "$(guard_regex)|mca_btl_tbrdma"
}

# The other build's direct Open MPI and PMIx libraries (libopen-pal.so.N, libpmix.so.N).
other_needed_libs()
{
    objdump -p "$IT_OTHER_LIBS/mca_btl_tbrdma.so" \
        | awk '$1 == "NEEDED" && $2 ~ /^lib(open-pal|pmix)[.]/ { print $2 }'
}

# Copy into $1 the other build's Open MPI and PMIx libraries, from the other flavour's system.
provide_libs()
{
    local dir=$1 lib path
    rm -rf "$dir"
    mkdir -p "$dir"
    for lib in $(other_needed_libs); do
        path=$(other_run ldd "$IT_OTHER_LIBS/mca_btl_tbrdma.so" \
            | awk -v lib="$lib" '$1 == lib && $2 == "=>" { print $3 }')
        if [ -z "$path" ] || ! cp -L "$(other_path "$path")" "$dir/$lib"; then
            echo "$lib not found in the $IT_OTHER_FLAVOUR system"
            return 1
        fi
        echo "copied $lib from the $IT_OTHER_FLAVOUR system ($path)"
    done
}

# The 5.0 build needs a newer glibc than the 4.1 host has. Emulate a host with both Open MPIs
# and the newer glibc: run 4.1's programs under the chroot's dynamic loader with only the
# chroot's glibc libraries (in $1/glibc) ahead of the usual search path.
use_chroot_glibc()
{
    local dir=$1 chroot lib
    chroot=${TBRDMA_OMPI5_CHROOT:-$IT_REPO/build/ompi5/chroot}
    mkdir -p "$dir/glibc"
    for lib in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 \
        libresolv.so.2; do
        ln -sf "$chroot/usr/lib/x86_64-linux-gnu/$lib" "$dir/glibc/$lib"
    done
    IT_LOADER=("$chroot/usr/lib64/ld-linux-x86-64.so.2" --library-path "$dir/glibc:$dir")
    echo "4.1's glibc is older than the 5.0 build needs: running 4.1's programs under the" \
        "chroot's dynamic loader and glibc"
}

# Load problems of the other build under the current loader setup (ldd -r equivalent): missing
# libraries and symbol versions. Undefined Open MPI symbols are by design (bound at load time
# to the Open MPI that loads the plugin), so they do not count.
load_problems()
{
    local dir=$1 so=$IT_OTHER_LIBS/mca_btl_tbrdma.so
    if [ ${#IT_LOADER[@]} = 0 ]; then
        it_run env LD_LIBRARY_PATH="$dir" ldd -r "$so" 2>&1
    else
        env LD_TRACE_LOADED_OBJECTS=1 LD_WARN=yes LD_BIND_NOW=yes "${IT_LOADER[@]}" "$so" 2>&1
    fi | grep -E 'not found'
}

# ompi_info of this flavour, with libraries from $1, component path $2; output to $3.
guard_ompi_info()
{
    local dir=$1 path=$2 out=$3
    if [ ${#IT_LOADER[@]} = 0 ]; then
        it_run env LD_LIBRARY_PATH="$dir" OMPI_MCA_mca_base_component_path="$path" ompi_info
    else
        env OMPI_MCA_mca_base_component_path="$path" "${IT_LOADER[@]}" "$(command -v ompi_info)"
    fi >"$out" 2>&1
}

check_guard()
{
    local dir=$IT_BUILD/test/integration/ompi/guard-libs-$IT_OTHER_FLAVOUR
    local out=$IT_TMP/guard.out rc problems text
    IT_LOADER=()
    echo "-- guard: make the $IT_OTHER_FLAVOUR build loadable by $IT_FLAVOUR's loader"
    if ! provide_libs "$dir"; then
        IT_GUARD_UNREACHABLE="the $IT_OTHER_FLAVOUR build's libraries cannot be provided"
        return 0
    fi
    problems=$(load_problems "$dir")
    if echo "$problems" | grep -q "GLIBC_" && [ "$IT_OTHER_FLAVOUR" = 5.0 ]; then
        use_chroot_glibc "$dir"
        problems=$(load_problems "$dir")
    fi
    if [ -n "$problems" ]; then
        # shellcheck disable=SC2001
        echo "$problems" | sed 's/^/    | /'
        IT_GUARD_UNREACHABLE="$IT_FLAVOUR's loader cannot load the $IT_OTHER_FLAVOUR build even"
        IT_GUARD_UNREACHABLE+=" with its libraries: $(echo "$problems" | head -n 1 \
            | sed 's/^[[:space:]]*//')"
        return 0
    fi
    guard_ompi_info "$dir" SYS_DEFAULT "$IT_TMP/control.out"
    rc=$?
    echo "-- guard control: the same ompi_info setup without the plugin: exit $rc"
    if [ "$rc" != 0 ] \
        || ! it_lacks "$IT_TMP/control.out" 'Segmentation fault|Process received signal'; then
        tail -n 5 "$IT_TMP/control.out" | sed 's/^/    | /'
        IT_GUARD_UNREACHABLE="the emulated setup fails even without the plugin (exit $rc)"
        return 0
    fi
    guard_ompi_info "$dir" "SYS_DEFAULT:$IT_OTHER_LIBS" "$out"
    rc=$?
    echo "-- guard: ompi_info with the $IT_OTHER_FLAVOUR build and its libraries: exit $rc"
    it_show "$out" 'tbrdma|signal|Segmentation|Failing at|\[ ?[0-9]+\]'
    check_declined guard "$out" "$rc"
    text=$(guard_regex)
    if it_has "$out" "$(guard_regex)"; then
        echo "guard: declined by tbrdma's version guard"
    else
        # 5.0 loading the 4.1 build: its modex code reads 4.1's opal_pmix (a data symbol),
        # which 5.0 lacks, so the dynamic loader refuses the .so before any of it runs.
        echo "guard: declined by the dynamic loader: a 4.1-only Open MPI symbol is missing"
    fi
    check "guard: declined cleanly, by the guard ('... ${text//\\/} ...') or by the loader" \
        it_has "$out" "$(guard_regex)|unable to open mca_btl_tbrdma: .*undefined symbol"
}

main()
{
    it_flavour "${1:-}"
    it_require_ompi
    if [ ! -f "$IT_OTHER_LIBS/mca_btl_tbrdma.so" ]; then
        skip "the $IT_OTHER_FLAVOUR build $IT_OTHER_LIBS/mca_btl_tbrdma.so does not exist"
    fi
    check_plain
    check_guard
    if [ -n "$IT_GUARD_UNREACHABLE" ] && [ "$CHECK_FAILED" = 0 ]; then
        skip "guard not reachable: $IT_GUARD_UNREACHABLE (plain cross-load: $CHECK_COUNT" \
            "checks passed)"
    fi
    finish
}

main "$@"
