#!/usr/bin/env bash
# Four simulated Macs, one /30 per cable (MLX's plan): every process resolves the cable of every
# pair to the right devices, and the job itself completes over the other BTLs.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 4 --addressing p2p
hello=$(hello_bin)
out=$(tb_mpirun 4 -- "$hello" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "mpirun exit $rc"
check_hello "$out" 4
mesh=$(echo "$out" | grep -o 'tbrdma mesh: .*' | sort -u)
while read -r id ha ia hb ib; do
    want="tbrdma mesh: $ha rdma_$ia <-> $hb rdma_$ib"
    echo "$mesh" | grep -qxF "$want" || fail "cable $id not resolved: expected '$want'"
    ok "$want"
done < <(cables)
[ "$(echo "$mesh" | grep -c '<->')" -eq 6 ] || fail "expected exactly 6 resolved pairs"
echo "$out" | grep -q 'no cable' && fail "a full mesh reported a missing cable"
ok "all 6 pairs resolved identically by every process"
