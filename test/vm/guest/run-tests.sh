#!/bin/bash
# Runs VM-tier tests one after another inside vm1 of one boot (called by run-tier.sh through
# `tbvm run`). Usage: run-tests.sh TEST.sh...  Each test's output goes to stdout and to
# $TBVM_RUN/tests/<name>.log; its result is a line "result <name> pass|fail|skip <status>
# <seconds>" in $TBVM_RUN/results. After every test the network and rxe devices of every VM
# are put back as the plan says, so a test that broke a cable does not break the next one.
# Exits 0 if no test failed, 1 otherwise.
. "$TBVM_REPO/test/vm/guest/lib.sh"

TEST_TIMEOUT=${TBVM_TEST_TIMEOUT:-300}
mkdir -p "$TBVM_RUN/tests"
: >"$TBVM_RUN/results"
failed=0
for test in "$@"; do
    name=$(basename "$test" .sh)
    echo "==== vm test $name"
    t0=$EPOCHREALTIME
    timeout -k 5 "$TEST_TIMEOUT" bash "$test" 2>&1 | tee "$TBVM_RUN/tests/$name.log"
    rc=${PIPESTATUS[0]}
    secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    case "$rc" in
    0) verdict=pass ;;
    77) verdict=skip ;;
    124) verdict=fail; echo "vm test $name: timed out after $TEST_TIMEOUT s" ;;
    *) verdict=fail ;;
    esac
    [ "$verdict" = fail ] && failed=1
    echo "result $name $verdict $rc $secs" >>"$TBVM_RUN/results"
    echo "==== vm test $name: $verdict (status $rc, $secs s)"
    for ((i = 1; i <= TBVM_VMS; i++)); do
        tbvm_restore "vm$i" || echo "vm test $name: could not restore vm$i's network"
    done
done
exit "$failed"
