#!/bin/bash
#
# run-all.sh FLAVOUR: runs the Open MPI integration tests of this directory (ompi-info.sh,
# mpirun.sh, component-path.sh, version-guard.sh) against one Open MPI flavour, 4.1 (the
# host's) or 5.0 (the Debian 13 chroot of test/ompi5), prints each test's output and verdict
# with its wall time, and ends with "ompi integration (FLAVOUR): N passed, M failed, K skipped".
# Exit status: 1 when a test failed, 77 when every test skipped, else 0.

set -u

TESTS="ompi-info mpirun component-path version-guard"

main()
{
    local flavour=${1:-} dir t rc t0 secs passed=0 failed=0 skipped=0 verdicts=""
    case "$flavour" in
    4.1 | 5.0) ;;
    *)
        echo "usage: $(basename "$0") 4.1|5.0" >&2
        exit 2
        ;;
    esac
    dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    for t in $TESTS; do
        echo "== $t ($flavour)"
        t0=$(date +%s)
        "$dir/$t.sh" "$flavour"
        rc=$?
        secs=$(($(date +%s) - t0))
        case "$rc" in
        0) passed=$((passed + 1)); verdicts+="  PASS  $t (${secs} s)"$'\n' ;;
        77) skipped=$((skipped + 1)); verdicts+="  SKIP  $t (${secs} s)"$'\n' ;;
        *) failed=$((failed + 1)); verdicts+="  FAIL  $t (exit $rc, ${secs} s)"$'\n' ;;
        esac
    done
    printf '%s' "$verdicts"
    echo "ompi integration ($flavour): $passed passed, $failed failed, $skipped skipped"
    if [ "$failed" != 0 ]; then
        exit 1
    fi
    if [ "$passed" = 0 ]; then
        exit 77
    fi
    exit 0
}

main "$@"
