#!/usr/bin/env bash
# A mesh with a missing cable: tbrdma names the missing pair and declines (so the job runs on
# tcp); with btl_tbrdma_allow_partial_mesh the cabled pairs stay resolved.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 4 --addressing p2p --topology missing:b-d
mpirun_hello 4 # a missing cable must not kill the job
echo "$out" | grep -q "no cable between host mac-b and host mac-d" || fatal "missing pair not named"
[ "$(echo "$out" | grep -o 'no cable between host [a-z-]* and host [a-z-]*' | sort -u | wc -l)" -eq 1 ] \
    || fatal "more than the one missing pair named"
pass "missing cable mac-b/mac-d named, job completed"

mpirun_hello 4 --tag-output --mca btl_tbrdma_allow_partial_mesh 1
check_mesh_by_rank "$out" 4 "tbrdma mesh: mac-b -/- mac-d: no cable"
pass "partial mesh allowed: 5 pairs resolved, mac-b/mac-d unreachable, by every process"
finish
