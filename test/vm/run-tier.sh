#!/bin/bash
# The VM test tier: runs test/vm/tests/*.sh inside vm1 of Soft-RoCE VMs booted by tbvm.
# Usage: run-tier.sh [--per-count] [--timeout S] [TEST.sh...]
# Each test names the VMs it needs in a "# tbvm-vms: N" header line. By default the tier boots
# once, with the largest N, and runs every test in that boot (cheapest under TCG); --per-count
# boots once per distinct N instead. First it decides quickly whether VMs can run here at all
# (host tools, the kernel build, a 1-VM boot within TBVM_SMOKE_TIMEOUT s, default 90).
# Prints "vm tier: N passed, M failed, K skipped" and a last line
# "vm tier: passed|failed|skipped (<why>) in S s". Exit 0 when every test passed, 1 when one
# failed, else 77: a guest test that skipped makes the tier a skip, not a pass ("skipped (not a
# pass: N passed, K skipped: NAMES)"), which run-tests.sh lists and, with CI=true, fails. The MPI
# program of the mesh tests failing to compile is a failure. First line "vm tier: run <id>" when
# TBRDMA_RUN_ID is set (run-tests.sh's run).
set -uo pipefail

# shellcheck source=lib/common.sh
. "$(dirname "$(readlink -f "$0")")/lib/common.sh"
# shellcheck source=lib/build.sh
. "$TBVM_LIB/build.sh"

T0=$EPOCHREALTIME
TBVM=$TBVM_DIR/tbvm

finish()
{
    echo "vm tier: $1 in $(tbvm_since "$T0") s"
    exit "$2"
}

skip()
{
    finish "skipped ($1)" 77
}

# "N path" for every test: its "# tbvm-vms:" header (2 if absent).
test_counts()
{
    local t n
    for t in "$@"; do
        n=$(sed -n 's/^# tbvm-vms: *\([0-9]\).*/\1/p' "$t" | head -n 1)
        echo "${n:-2} $t"
    done
}

# Can a VM boot here at all? Host tools, the build, one small boot.
preflight()
{
    local why rc
    command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
    why=$(tbvm_check_tools 2>&1) || skip "${why#tbvm: }"
    for tool in rdma ibv_devinfo mpirun; do
        command -v "$tool" >/dev/null || skip "$tool not installed (guests use the host's /usr)"
    done
    why=$("$TBVM" build 2>&1) || skip "guest kernel build failed: $(tail -n 1 <<<"$why")"
    [ -n "$why" ] && echo "$why"
    local t=$EPOCHREALTIME
    "$TBVM" run --vms 1 --timeout "${TBVM_SMOKE_TIMEOUT:-90}" -- true 2>"$TBVM_BUILD/smoke.log"
    rc=$?
    [ "$rc" = 0 ] || skip "a 1-VM boot did not complete (status $rc, see $TBVM_BUILD/smoke.log)"
    echo "vm tier: 1-VM smoke boot with $("$TBVM" accel 2>/dev/null) took $(tbvm_since "$t") s"
}

# The MPI program of the mesh tests, compiled on the host (fast) into the build directory.
build_mpi_program()
{
    mkdir -p "$TBVM_BUILD/bin"
    if [ ! -x "$TBVM_BUILD/bin/tbvm_mpi_ring" ] ||
        [ "$TBVM_DIR/tests/mpi_ring.c" -nt "$TBVM_BUILD/bin/tbvm_mpi_ring" ]; then
        mpicc -O2 -o "$TBVM_BUILD/bin/tbvm_mpi_ring" "$TBVM_DIR/tests/mpi_ring.c" ||
            finish "failed (mpicc could not build tests/mpi_ring.c, the mesh tests' program)" 1
    fi
}

# The MPI test programs of test/mpi for the MPI tests (guest/mpi.sh), compiled on the host.
build_test_programs()
{
    local c p
    for c in "$TBVM_REPO"/test/mpi/tb_*.c; do
        p=$(basename "$c" .c)
        if [ ! -x "$TBVM_BUILD/bin/$p" ] || [ "$c" -nt "$TBVM_BUILD/bin/$p" ] ||
            [ "$TBVM_REPO/test/mpi/tb_common.h" -nt "$TBVM_BUILD/bin/$p" ]; then
            mpicc -O2 -Wall -o "$TBVM_BUILD/bin/$p" "$c" -lpthread ||
                echo "vm tier: mpicc failed on $p.c; the MPI tests will report it"
        fi
    done
}

# Boots N VMs once and runs the given tests in vm1; appends the results to $RESULTS.
run_boot()
{
    local n=$1 run rc name
    shift
    run="$TBVM_BUILD/runs/tier-$n-$$"
    rm -rf "$run"
    echo "vm tier: booting $n VMs for:$(for t in "$@"; do printf ' %s' "$(basename "$t" .sh)"; done)"
    "$TBVM" run --vms "$n" --timeout "$TIMEOUT" --rundir "$run" -- \
        test/vm/guest/run-tests.sh "$@"
    rc=$?
    [ -f "$run/boot-times" ] && echo "vm tier: boot times (s after qemu start): $(tr '\n' ' ' <"$run/boot-times")"
    [ -f "$run/results" ] && cat "$run/results" >>"$RESULTS"
    for t in "$@"; do
        name=$(basename "$t" .sh)
        if ! grep -q "^result $name " "$run/results" 2>/dev/null; then
            echo "result $name fail $rc 0 (not run: the VMs stopped with status $rc)" >>"$RESULTS"
        fi
    done
}

main()
{
    local per_count=0 tests=() counts max n list
    TIMEOUT=900
    while [ $# -gt 0 ]; do
        case "$1" in
        --per-count) per_count=1; shift ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        -*) sed -n '2,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
        *) tests+=("$(readlink -f "$1")"); shift ;;
        esac
    done
    [ ${#tests[@]} -gt 0 ] || tests=("$TBVM_DIR"/tests/*.sh)
    [ -z "${TBRDMA_RUN_ID:-}" ] || echo "vm tier: run $TBRDMA_RUN_ID"
    preflight
    build_mpi_program
    build_test_programs
    RESULTS="$TBVM_BUILD/tier-results.$$"
    : >"$RESULTS"
    counts=$(test_counts "${tests[@]}")
    if [ "$per_count" = 1 ]; then
        for n in $(awk '{ print $1 }' <<<"$counts" | sort -u); do
            list=$(awk -v n="$n" '$1 == n { print $2 }' <<<"$counts")
            # shellcheck disable=SC2086 # paths without spaces
            run_boot "$n" $list
        done
    else
        max=$(awk '{ print $1 }' <<<"$counts" | sort -n | tail -n 1)
        # shellcheck disable=SC2046 # paths without spaces
        run_boot "$max" $(awk '{ print $2 }' <<<"$counts")
    fi
    summarize
}

summarize()
{
    local pass fail skip skipped
    echo "vm tier results:"
    sed 's/^result /  /' "$RESULTS"
    pass=$(grep -c '^result [^ ]* pass ' "$RESULTS")
    fail=$(grep -c '^result [^ ]* fail ' "$RESULTS")
    skip=$(grep -c '^result [^ ]* skip ' "$RESULTS")
    skipped=$(sed -n 's/^result \([^ ]*\) skip .*/\1/p' "$RESULTS" | xargs)
    rm -f "$RESULTS"
    echo "vm tier: $pass passed, $fail failed, $skip skipped"
    if [ "$fail" -gt 0 ]; then
        finish "failed ($pass passed, $fail failed, $skip skipped)" 1
    elif [ "$skip" -gt 0 ]; then
        skip "not a pass: $pass passed, $skip skipped: $skipped"
    fi
    finish "passed ($pass passed)" 0
}

main "$@"
