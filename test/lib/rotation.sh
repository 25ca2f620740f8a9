# shellcheck shell=bash
# rotation.sh: which of the slow, many-item checks a run of ./run-tests.sh takes (sourced by
# run-tests.sh and test/self/rotation.sh). Every mutant (the simulator's and the plugin's), every
# HPC code run and every VM-tier MPI test is one item of a numbered list; item i belongs to slice
# i mod ROT_SLICES. A run takes the slice named by the commit it tests: the number of commits of
# HEAD (git rev-list --count) mod ROT_SLICES, so any ROT_SLICES commits in a row on main take every
# slice, and CI, which tests each submission's newest commit, runs every item at least once in
# every ROT_SLICES submissions of one commit each (a submission of k commits moves k slices on).
# ./run-tests.sh --full (ROT_FULL=1) takes every slice; ROT_SLICE=k forces slice k. Nothing is
# dropped: a run prints which slice it took and how many items it left to the others.

ROT_SLICES=3
ROT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The groups that rotate, and their items in a fixed order (rot_items).
ROT_GROUPS="sim-mutants plugin-mutants hpc vm-mpi"

# rot_items GROUP: the items of GROUP, one a line: the simulator's mutants, the plugin's, the
# HPC code runs (Open MPI version and ranks per Mac: every code of test/mpi/hpc.sh each), the VM
# tier's MPI tests (tbrdma's, and pml ucx's reference runs on the same rxe links).
rot_items()
{
    case "$1" in
    sim-mutants) "$ROT_TOP/test/sim/mutate.sh" --list ;;
    plugin-mutants) "$ROT_TOP/test/mutate/plugin.sh" --list ;;
    hpc) printf '%s\n' "4.1 1" "4.1 2" "5.0 1" ;;
    vm-mpi) (cd "$ROT_TOP" && printf '%s\n' test/vm/tests/mpi_*.sh) ;;
    *) return 1 ;;
    esac
}

# rot_slice: the slice this run takes ("all" with ROT_FULL=1).
rot_slice()
{
    if [ "${ROT_FULL:-0}" = 1 ]; then
        echo all
    elif [ -n "${ROT_SLICE:-}" ]; then
        echo $((ROT_SLICE % ROT_SLICES))
    else
        echo $(($(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-list --count HEAD 2>/dev/null || echo 0) % ROT_SLICES))
    fi
}

# rot_take INDEX SLICE: item INDEX (0-based) is in SLICE (or SLICE is "all").
rot_take()
{
    [ "$2" = all ] || [ $(($1 % ROT_SLICES)) -eq "$2" ]
}

# rot_group SLICE GROUP: the items of GROUP in SLICE, one a line.
rot_group()
{
    local items=()
    mapfile -t items < <(rot_items "$2")
    rot_pick "$1" "${items[@]}"
}

# rot_pick SLICE ITEM...: prints the items of SLICE, one a line, in order.
rot_pick()
{
    local slice=$1 i=0 item
    shift
    for item in "$@"; do
        rot_take "$i" "$slice" && echo "$item"
        i=$((i + 1))
    done
}
