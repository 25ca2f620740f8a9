#!/usr/bin/env bash
# The same setup on both stand-ins gives the same outcome: one cable, the IPv4 address removed
# from one end's interface (macOS 26.2's default), JACCL's source GID index 1 on both ends.
#   - VM tier (real kernel verbs, rxe): read from its log (the "vm:" lines of
#     test/vm/tests/no-ipv4.sh, case one-end: vm1 lost its IPv4 and is the client);
#   - simulator: run here, mac-b lost its IPv4 and is the client.
# Both must agree: tbrdma-info diagnoses the port as no-ipv4 (not a raw errno); the raw UC
# ping-pong never runs; the end that kept its IPv4 fails at RTR with EINVAL (22). The end without
# IPv4 fails at RTR too: EINVAL on the simulator (Apple's field errno), ENODATA (61) on rxe,
# whose GID table is sparse (the documented difference, test/sim/README.md).
# Needs the log of the VM tier of the same run, TBRDMA_VM_TIER_LOG: run-tests.sh sets it when its
# vm stage ran in this run (empty otherwise), and that log must carry this run's id
# ("vm tier: run $TBRDMA_RUN_ID"); a log an earlier run left is never used (77, with why).
# By hand: TBRDMA_VM_TIER_LOG=build/test-logs/vm/run-tier.log, without TBRDMA_RUN_ID.
source "$(dirname "$0")/../sim/lib.sh"

vmlog=${TBRDMA_VM_TIER_LOG:-}
[ -n "$vmlog" ] || skip "the VM tier did not run in this run (no TBRDMA_VM_TIER_LOG)"
[ -f "$vmlog" ] || skip "no VM tier log at $vmlog (the VM tier did not run)"
if [ -n "${TBRDMA_RUN_ID:-}" ] && ! grep -qxF "vm tier: run $TBRDMA_RUN_ID" "$vmlog"; then
    skip "the VM tier log $vmlog is not from this run ($TBRDMA_RUN_ID)"
fi
grep -q '^vm tier: passed\|^vm tier: failed\|^vm tier: skipped (not a pass' "$vmlog" \
    || skip "the VM tier did not run: $(grep '^vm tier:' "$vmlog" | tail -1)"
! grep -q '^  no-ipv4 skip ' "$vmlog" || skip "the VM tier's no-ipv4 test did not run (skipped)"
require_env
pp="$build/test/sim/uc_pingpong"
[ -x "$pp" ] || fatal "missing $pp (build first: ./build.sh)"

# errno of the RTR failure of one side in the VM log ("" when that side did not fail at RTR).
vm_errno()
{
    sed -n "s/^.*vm: rtr-without-ipv4 case=one-end side=$1 errno=\([0-9]*\)$/\1/p" "$vmlog" | tail -1
}

# errno of "modify_qp RTR failed: ... (errno N)" in a uc_pingpong output.
rtr_errno()
{
    sed -n 's/^modify_qp RTR failed: .*(errno \([0-9]*\))$/\1/p' "$1" | head -1
}

echo "== VM tier (rxe), from $vmlog"
grep 'vm: no-ipv4\|vm: rtr-without-ipv4 case=one-end' "$vmlog" | sed 's/^/  /'
vm_diag=$(sed -n 's/^.*vm: no-ipv4 diag=\([a-z0-9-]*\)$/\1/p' "$vmlog" | tail -1)
vm_server=$(vm_errno server)
vm_client=$(vm_errno client)
[ -n "$vm_diag$vm_server$vm_client" ] || fatal "the VM tier log holds no no-ipv4 results"

echo "== simulator: mac-b's en2 loses its IPv4; mac-a keeps it"
cluster_up --hosts 2 --addressing p2p
on mac-b ip -4 addr flush dev en2 || fatal "cannot remove mac-b's IPv4"
sim_diag=$(info_on mac-b --parsable | sed -n 's/^port .*device=rdma_en2 .*diag=\([a-z0-9-]*\) .*$/\1/p')
tmp=$(mktemp -d)
on mac-a env LD_PRELOAD="$simlib" timeout 60 "$pp" -g 1 >"$tmp/server" 2>&1 &
srv=$!
on mac-b env LD_PRELOAD="$simlib" timeout 60 "$pp" -g 1 -n 10 mac-a >"$tmp/client" 2>&1
wait "$srv"
sed 's/^/  server| /' "$tmp/server"
sed 's/^/  client| /' "$tmp/client"
sim_server=$(rtr_errno "$tmp/server")
sim_client=$(rtr_errno "$tmp/client")
echo "sim: no-ipv4 diag=$sim_diag"
echo "sim: rtr-without-ipv4 case=one-end side=server errno=$sim_server"
echo "sim: rtr-without-ipv4 case=one-end side=client errno=$sim_client"

expect "diagnosis of the port without IPv4, VM tier" no-ipv4 "$vm_diag"
expect "diagnosis of the port without IPv4, simulator" no-ipv4 "$sim_diag"
check_not "the ping-pong never ran on the simulator" grep -q 'iters of' "$tmp/client"
expect "RTR errno of the end that kept its IPv4, VM tier" 22 "$vm_server"
expect "RTR errno of the end that kept its IPv4, simulator" 22 "$sim_server"
expect "RTR errno of the end without IPv4, simulator (the field's errno)" 22 "$sim_client"
check "RTR errno of the end without IPv4, VM tier: 61 (rxe's sparse table) or 22 (got '$vm_client')" \
    test "$vm_client" = 61 -o "$vm_client" = 22
rm -rf "$tmp"
finish
