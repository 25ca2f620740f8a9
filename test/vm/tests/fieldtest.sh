#!/bin/bash
# tbvm-vms: 2
# VM tier: tbrdma-fieldtest (the field self-test) against real kernel verbs (rxe) on the vm1-vm2
# cable: server on vm2, client on vm1 with --link-down (root here; the link is restored). The
# cable gets jumbo frames (MTU 9000) for the run, so that rxe can carry path MTU 4096 (with
# 1500 the mtu-4096 probe declines: rxe's sends would never complete); 1500 again at the end,
# where a second, short run checks that the probe does decline.
# Every probe must report, and the probes whose verdict is "differs" must be exactly those the
# table "Differences from Soft-RoCE (rxe)" of test/sim/README.md names in its column
# "tbrdma-fieldtest": any other probe must be "same" (none "could not test"). Prints each probe's
# line "vm: probe NAME VERDICT: OBSERVED" so that the closing note can show rxe's report.
. "$TBVM_REPO/test/vm/guest/lib.sh"

bin="${TBRDMA_FIELDTEST:-$(tbvm_project_build)/tools/tbrdma-fieldtest}"
readme="$TBVM_REPO/test/sim/README.md"
out=/tmp/tbvm-fieldtest.json
if [ ! -x "$bin" ]; then
    echo "SKIP: tbrdma-fieldtest not built ($bin missing)"
    exit 77
fi
read -r if1 dev1 _ < <(tbvm_cable vm1 vm2)
read -r if2 dev2 _ < <(tbvm_cable vm2 vm1)

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup()
{
    ip link set dev "$if1" mtu 1500 2>/dev/null
    tbvm_on vm2 "ip link set dev $if2 mtu 1500" 2>/dev/null
}
trap cleanup EXIT
ip link set dev "$if1" mtu 9000 && tbvm_on vm2 "ip link set dev $if2 mtu 9000" ||
    echo "FAIL: could not set MTU 9000 on the vm1-vm2 cable"

# The probes the README lists as differing on rxe (backquoted names in the table's last column).
# shellcheck disable=SC2016 # backquotes of Markdown, not a command
expected_differs()
{
    awk '/^## Differences from Soft-RoCE/ { on = 1; next } /^## / { on = 0 }
         on && /^\|/ && !/^\|---/ { n = split($0, c, "|"); print c[n - 1] }' "$readme" |
        grep -o '`[a-z0-9-]*`' | tr -d '`' | sort -u
}

tbvm_on vm2 "timeout -k 5 200 $bin --server --device $dev2 --timeout 180 >/tmp/tbvm-fieldtest.server 2>&1" &
spid=$!
timeout -k 5 200 "$bin" --client vm2 --device "$dev1" --peer-device "$dev2" --link-down \
    --timeout 180 --json >"$out" 2>/tmp/tbvm-fieldtest.client
rc=$?
wait "$spid"
src=$?
tbvm_on vm2 "cat /tmp/tbvm-fieldtest.server" | sed 's/^/  server| /'
sed 's/^/  client| /' /tmp/tbvm-fieldtest.client
sed -n 's/^  {"name": "\([^"]*\)".*"verdict": "\([^"]*\)".*"observed": "\(.*\)", "why": "\(.*\)", "seconds.*/vm: probe \1 \2: \3 \4/p' "$out"
echo "vm: probe client status $rc, server status $src"

# words: the lines of stdin on one line, separated by single spaces.
words()
{
    tr '\n' ' ' | sed 's/ *$//'
}

tbvm_expect "probe client status (1: some verdict differs)" "$rc" 1
tbvm_expect "probe server status" "$src" 0
listed=$("$bin" --list | awk '/^[a-z]/ { print $1 }' | sort | words)
reported=$(sed -n 's/^  {"name": "\([^"]*\)".*/\1/p' "$out" | sort | words)
tbvm_expect "every probe reported" "$reported" "$listed"
differs=$(grep '"verdict": "differs"' "$out" | sed 's/^  {"name": "\([^"]*\)".*/\1/' | sort | words)
tbvm_expect "probes that differ = the README's rxe differences" "$differs" \
    "$(expected_differs | words)"
tbvm_expect "probes that could not test" "$(grep -c '"could not test"' "$out")" 0
tbvm_expect "$if1 is up again after port-down" \
    "$(ip -o link show "$if1" | grep -c '[<,]UP[,>]')" 1

echo "== mtu-4096 at MTU 1500: the probe declines instead of wedging rxe"
cleanup
tbvm_on vm2 "timeout -k 5 60 $bin --server --device $dev2 --timeout 50 >/dev/null 2>&1" &
spid=$!
timeout -k 5 60 "$bin" --client vm2 --device "$dev1" --peer-device "$dev2" --only mtu-4096 \
    --timeout 50 --json >"$out" 2>&1
wait "$spid"
sed 's/^/  mtu1500| /' "$out"
tbvm_expect "mtu-4096 at MTU 1500" "$(sed -n 's/.*"name": "mtu-4096".*"verdict": "\([^"]*\)".*/\1/p' "$out")" \
    "could not test"
tbvm_expect "... because of the interface's MTU" "$(grep -c "interface $if1 has MTU 1500" "$out")" 1
exit $((TBVM_FAILS > 0))
