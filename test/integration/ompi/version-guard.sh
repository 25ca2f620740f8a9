#!/bin/bash
#
# version-guard.sh [4.1|5.0]: the flavour's ompi_info loads the plugin built for the OTHER
# flavour (4.1 loads the 5.0 build, 5.0 loads the 4.1 build). Open MPI does not check a DSO's
# BTL API, so tbrdma's register hook compares the running Open MPI with the one it was built
# for and declines. Two runs:
#   1. plain: ompi_info exits 0 and does not list tbrdma; what declined it (the dynamic loader,
#      because the other flavour's libopen-pal is absent, or the guard) is printed.
#   2. guard: the libraries the dynamic loader misses are copied from the other flavour's
#      system into a directory on LD_LIBRARY_PATH, so the .so loads and its register hook
#      runs: ompi_info exits 0, prints the guard's "built for Open MPI X.Y but this is Open MPI
#      Z" line, and does not list tbrdma. When the loader still cannot load the .so (e.g. the
#      other system's glibc is newer than this one), the guard cannot be reached here: the
#      test then skips (exit 77) after the plain checks, saying why.

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

# ompi_info (full listing) of this flavour with the other build first in the component path.
# Extra leading arguments are env assignments.
cross_ompi_info()
{
    it_run env "$@" OMPI_MCA_mca_base_component_path="SYS_DEFAULT:$IT_OTHER_LIBS" ompi_info
}

guard_regex()
{
    echo "built for Open MPI ${IT_OTHER_FLAVOUR//./\\.} but this is Open MPI ${IT_FLAVOUR//./\\.}"
}

# Common checks of a cross-load run: $1 = name, $2 = output file, $3 = exit status.
check_declined()
{
    local name=$1 out=$2 rc=$3
    it_check "$name: ompi_info exits 0, no crash (exit $rc)" [ "$rc" = 0 ]
    it_check "$name: no 'MCA btl: tbrdma' component listed" it_lacks "$out" 'MCA btl: tbrdma'
    it_check "$name: no crash report (signal, backtrace)" \
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
    it_check "plain: the decline is explained (guard line, or a load error naming mca_btl_tbrdma)" \
        it_has "$out" "$(guard_regex)|mca_btl_tbrdma"
}

# Print the sonames the dynamic loader misses for the other build (LD_LIBRARY_PATH=$1).
missing_libs()
{
    it_run env LD_LIBRARY_PATH="$1" ldd "$IT_OTHER_LIBS/mca_btl_tbrdma.so" 2>&1 \
        | awk '$2 == "=>" && $3 == "not" { print $1 }'
}

# Copy into $1 the libraries this flavour lacks for the other build, taken from the other
# flavour's system (a few rounds: a copied library may need further ones).
provide_libs()
{
    local dir=$1 round lib path
    rm -rf "$dir"
    mkdir -p "$dir"
    for round in 1 2 3; do
        local missing
        missing=$(missing_libs "$dir")
        [ -n "$missing" ] || return 0
        for lib in $missing; do
            path=$(other_run ldd "$IT_OTHER_LIBS/mca_btl_tbrdma.so" \
                | awk -v lib="$lib" '$1 == lib && $2 == "=>" { print $3 }')
            if [ -z "$path" ] || ! cp -L "$(other_path "$path")" "$dir/$lib"; then
                echo "round $round: $lib not found in the $IT_OTHER_FLAVOUR system either"
                return 1
            fi
            echo "round $round: copied $lib from the $IT_OTHER_FLAVOUR system ($path)"
        done
    done
    [ -z "$(missing_libs "$dir")" ]
}

check_guard()
{
    local dir=$IT_BUILD/test/integration/ompi/guard-libs-$IT_OTHER_FLAVOUR
    local out=$IT_TMP/guard.out rc problems text
    echo "-- guard: make the $IT_OTHER_FLAVOUR build loadable by $IT_FLAVOUR's loader"
    if ! provide_libs "$dir"; then
        IT_GUARD_UNREACHABLE="the $IT_OTHER_FLAVOUR build's libraries cannot be provided"
        return 0
    fi
    problems=$(it_run env LD_LIBRARY_PATH="$dir" ldd "$IT_OTHER_LIBS/mca_btl_tbrdma.so" 2>&1 \
        | grep -E 'not found|version .* not found')
    if [ -n "$problems" ]; then
        # shellcheck disable=SC2001
        echo "$problems" | sed 's/^/    | /'
        IT_GUARD_UNREACHABLE="$IT_FLAVOUR's loader cannot load the $IT_OTHER_FLAVOUR build even"
        IT_GUARD_UNREACHABLE+=" with its libraries: $(echo "$problems" | head -n 1 | sed 's/^[[:space:]]*//')"
        return 0
    fi
    cross_ompi_info LD_LIBRARY_PATH="$dir" >"$out" 2>&1
    rc=$?
    echo "-- guard: ompi_info with LD_LIBRARY_PATH=$dir: exit $rc"
    it_show "$out" 'tbrdma'
    check_declined guard "$out" "$rc"
    text=$(guard_regex)
    it_check "guard: prints '... ${text//\\/} ...'" it_has "$out" "$(guard_regex)"
}

main()
{
    it_flavour "${1:-}"
    it_require_ompi
    if [ ! -f "$IT_OTHER_LIBS/mca_btl_tbrdma.so" ]; then
        it_skip "the $IT_OTHER_FLAVOUR build $IT_OTHER_LIBS/mca_btl_tbrdma.so does not exist"
    fi
    check_plain
    check_guard
    if [ -n "$IT_GUARD_UNREACHABLE" ] && [ "$IT_FAILS" = 0 ]; then
        it_skip "guard not reachable: $IT_GUARD_UNREACHABLE (plain cross-load: $IT_CHECKS" \
            "checks passed)"
    fi
    it_finish
}

main "$@"
