#!/bin/bash
#
# run-all.sh FLAVOUR: runs the Open MPI integration tests of this directory (ompi-info.sh,
# mpirun.sh, component-path.sh, version-guard.sh) against one Open MPI flavour, 4.1 (the
# host's) or 5.0 (the Debian 13 chroot of test/ompi5), prints each test's output and verdict
# with its wall time, and ends with "ompi integration (FLAVOUR): N passed, M failed, K skipped".
# Exit status: 1 when a test failed, 0 when every test passed, else 77: a test that could not run
# (e.g. version-guard without the other flavour's build) makes the run a skip, not a pass, and
# the last line names it with its reason, so that ./run-tests.sh lists it (and CI=true fails it).

set -u

TESTS="ompi-info mpirun component-path version-guard"

main()
{
    local flavour=${1:-} dir t rc t0 secs passed=0 failed=0 skipped=0 verdicts="" why="" out
    case "$flavour" in
    4.1 | 5.0) ;;
    *)
        echo "usage: $(basename "$0") 4.1|5.0" >&2
        exit 2
        ;;
    esac
    dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    out=$(mktemp) || exit 1
    for t in $TESTS; do
        echo "== $t ($flavour)"
        t0=$(date +%s)
        "$dir/$t.sh" "$flavour" 2>&1 | tee "$out"
        rc=${PIPESTATUS[0]}
        secs=$(($(date +%s) - t0))
        case "$rc" in
        0) passed=$((passed + 1)); verdicts+="  PASS  $t (${secs} s)"$'\n' ;;
        77) skipped=$((skipped + 1)); verdicts+="  SKIP  $t (${secs} s)"$'\n'
            why+="; $t: $(sed -n 's/^SKIP: //p' "$out" | tail -n 1)" ;;
        *) failed=$((failed + 1)); verdicts+="  FAIL  $t (exit $rc, ${secs} s)"$'\n' ;;
        esac
    done
    rm -f "$out"
    printf '%s' "$verdicts"
    if [ "$skipped" != 0 ]; then
        why=" (not a pass: skipped ${why#; })"
    fi
    echo "ompi integration ($flavour): $passed passed, $failed failed, $skipped skipped$why"
    if [ "$failed" != 0 ]; then
        exit 1
    fi
    if [ "$skipped" != 0 ]; then
        exit 77
    fi
    exit 0
}

main "$@"
