#!/usr/bin/env bash
# Four simulated Macs, one /30 per cable (MLX's plan): every process resolves the cable of every
# pair to the right devices (each rank's own lines, through mpirun --tag-output: a process that
# printed nothing or another mesh fails), and the job itself completes over the other BTLs.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 4 --addressing p2p
mpirun_hello 4 --tag-output
check_mesh_by_rank "$out" 4
echo "$out" | grep -q 'no cable' && fatal "a full mesh reported a missing cable"
pass "all 6 pairs resolved identically by every process"
finish
