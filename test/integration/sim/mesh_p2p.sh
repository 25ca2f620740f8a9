#!/usr/bin/env bash
# Four simulated Macs, one /30 per cable (MLX's plan): every process resolves the cable of every
# pair to the right devices, and the job itself completes over the other BTLs.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 4 --addressing p2p
mpirun_hello 4
mesh=$(echo "$out" | grep -o 'tbrdma mesh: .*' | sort -u)
while read -r id ha ia hb ib; do
    want="tbrdma mesh: $ha rdma_$ia <-> $hb rdma_$ib"
    echo "$mesh" | grep -qxF "$want" || fatal "cable $id not resolved: expected '$want'"
    pass "$want"
done < <(cables)
[ "$(echo "$mesh" | grep -c '<->')" -eq 6 ] || fatal "expected exactly 6 resolved pairs"
echo "$out" | grep -q 'no cable' && fatal "a full mesh reported a missing cable"
pass "all 6 pairs resolved identically by every process"
finish
