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

ROT_SLICES=4
ROT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The groups that rotate, and their items in a fixed order (rot_items).
ROT_GROUPS="sim-mutants plugin-mutants hpc vm-mpi mpi mpi-many fuzz ompi-source"

# rot_items GROUP: the items of GROUP, one a line, in an order that balances the slices:
#   sim-mutants, plugin-mutants  the simulator's and the plugin's mutants
#   hpc          the HPC code runs (Open MPI version, ranks per Mac: every code of hpc.sh each)
#   vm-mpi       the VM tier's MPI tests of tbrdma (pml ucx's reference runs of the same programs
#                on the same rxe links test rxe, not tbrdma: by hand, docs/testing.md)
#   mpi          the mpi stage's tests that run on both Open MPI versions but not every time
#                ("TEST VERSION"): faults, startup, stripe, thirdparty, coll_rules, coll_mesh,
#                agent (the suite, liveness, zero-copy, signals and outages run every time on
#                both)
#   mpi-many     the Open MPI versions whose suite runs at 4 ranks per Mac (through the per-Mac
#                agents; about 2 minutes each)
#   fuzz         the libFuzzer targets (20 s each)
#   ompi-source  the configured Open MPI 5.0.7 source tree (test/ompi5/source-tree.sh, most of
#                the background lane) with homebrew_steps, which builds against it
rot_items()
{
    case "$1" in
    sim-mutants) "$ROT_TOP/test/sim/mutate.sh" --list ;;
    plugin-mutants) "$ROT_TOP/test/mutate/plugin.sh" --list ;;
    hpc) printf '%s\n' "4.1 1" "4.1 2" "5.0 1" ;;
    vm-mpi)
        printf 'test/vm/tests/%s.sh\n' mpi_tbrdma_p2p mpi_tbrdma_coll mpi_tbrdma_outage
        ;;
    mpi)
        printf '%s\n' "faults 4.1" "startup 5.0" "stripe 4.1" "thirdparty 5.0" "coll_rules 4.1" \
            "coll_mesh 5.0" "faults 5.0" "startup 4.1" "stripe 5.0" "thirdparty 4.1" \
            "coll_rules 5.0" "coll_mesh 4.1" "agent 5.0" "agent 4.1"
        ;;
    mpi-many) printf '%s\n' 4.1 5.0 ;;
    fuzz) (cd "$ROT_TOP/test/fuzz" && for f in *_fuzz.c; do echo "${f%.c}"; done) ;;
    ompi-source) echo source-tree ;;
    *) return 1 ;;
    esac
}

# rot_offset GROUP: where the group's first item goes (the single source-tree item to the slice
# with the fewest HPC runs; the suite at 4 ranks per Mac away from that slice, the longest; the
# plugin mutants where the slow ones stay off the slices of the suites at 4 ranks per Mac: with
# the wrong offset the slow zc_retries_1000 joined slice 1 with its 4 ranks per Mac suite, and a
# clean-clone run of it took 2,473 s, over the 40 minutes; offset 2 since the timers' three
# mutants joined the sorted list, keeping zc_retries_1000 and heap_frames_off in slice 0: with
# offset 1 they were in the source tree's slice, whose CI run then took 2,590 s. ROT_KEEP_APART
# names them, and test/self/rotation.sh checks where they are).
rot_offset()
{
    case "$1" in
    ompi-source) echo 3 ;;
    mpi-many) echo 1 ;;
    plugin-mutants) echo 2 ;;
    *) echo 0 ;;
    esac
}

# The slow items that must stay off the slices of the source tree and of the suites at 4 ranks
# per Mac, the longest slices: "GROUP ITEM" a line (test/self/rotation.sh checks it).
ROT_KEEP_APART="plugin-mutants zc_retries_1000
plugin-mutants heap_frames_off"

# rot_slice_of GROUP ITEM: the slice that holds ITEM of GROUP (nothing when none does).
rot_slice_of()
{
    local s
    for ((s = 0; s < ROT_SLICES; s++)); do
        rot_group "$s" "$1" | grep -qx -- "$2" && echo "$s"
    done
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
    local items=() off i=0 item
    mapfile -t items < <(rot_items "$2")
    off=$(rot_offset "$2")
    for item in "${items[@]}"; do
        rot_take $((i + off)) "$1" && echo "$item"
        i=$((i + 1))
    done
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
