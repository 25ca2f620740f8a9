#!/usr/bin/env bash
# A mesh with a missing cable: tbrdma names the missing pair and declines (so the job runs on
# tcp); with btl_tbrdma_allow_partial_mesh the cabled pairs stay resolved.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 4 --addressing p2p --topology missing:b-d
hello=$(hello_bin)
out=$(tb_mpirun 4 -- "$hello" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "mpirun exit $rc: a missing cable must not kill the job"
check_hello "$out" 4
echo "$out" | grep -q "no cable between host mac-b and host mac-d" || fail "missing pair not named"
[ "$(echo "$out" | grep -o 'no cable between host [a-z-]* and host [a-z-]*' | sort -u | wc -l)" -eq 1 ] \
    || fail "more than the one missing pair named"
ok "missing cable mac-b/mac-d named, job completed"

out=$(tb_mpirun 4 --mca btl_tbrdma_allow_partial_mesh 1 -- "$hello" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "partial mesh: mpirun exit $rc"
check_hello "$out" 4
[ "$(echo "$out" | grep -o 'tbrdma mesh: .*<->.*' | sort -u | wc -l)" -eq 5 ] \
    || fail "partial mesh: expected the 5 cabled pairs resolved"
echo "$out" | grep -o 'tbrdma mesh: .*' | grep -q 'mac-b -/- mac-d' || fail "partial mesh: b/d not reported unreachable"
ok "partial mesh allowed: 5 pairs resolved, mac-b/mac-d unreachable"
