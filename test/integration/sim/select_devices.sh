#!/usr/bin/env bash
# Device selection end to end: btl_tbrdma_if_exclude / btl_tbrdma_if_include (device or interface
# names, globs) decide which ports tbrdma publishes, so the mesh loses exactly the cables of the
# ports left out; setting both lists is refused with a message (the include list wins).
# Three Macs, p2p addressing: every host has en2 and en3; the a-b cable is en2 on both ends, a-c
# is a:en3-c:en2, b-c is en3 on both ends.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 3 --addressing p2p

# expect_mesh: the a-b cable resolved, a-c and b-c named missing, nothing else.
expect_mesh()
{
    local what=$1 pairs missing
    pairs=$(echo "$out" | grep -o 'tbrdma mesh: .*<->.*' | sort -u)
    missing=$(echo "$out" | grep -o 'no cable between host [a-z-]* and host [a-z-]*' | sort -u)
    expect "$what: resolved pairs" "tbrdma mesh: mac-a rdma_en2 <-> mac-b rdma_en2" "$pairs"
    expect "$what: missing pairs" "no cable between host mac-a and host mac-c
no cable between host mac-b and host mac-c" "$missing"
}

mpirun_hello 3 --mca btl_tbrdma_allow_partial_mesh 1 --mca btl_tbrdma_if_exclude rdma_en3
expect_mesh "exclude rdma_en3"
check_not "mac-a does not use rdma_en3" grep -q 'using: host mac-a: device rdma_en3' <<<"$out"

mpirun_hello 3 --mca btl_tbrdma_allow_partial_mesh 1 --mca btl_tbrdma_if_include 'en2'
expect_mesh "include interface en2"

mpirun_hello 3 --mca btl_tbrdma_allow_partial_mesh 1 --mca btl_tbrdma_if_include 'rdma_en[2]' \
    --mca btl_tbrdma_if_exclude rdma_en2
expect_mesh "include glob rdma_en[2] with an exclude list too"
check "both lists set: a message says the exclude list is ignored" \
    grep -qi 'if_exclude.*ignored\|ignor.*if_exclude' <<<"$out"
# mac-c's rank ran with no cable to use: it held no queue pair, so it left no slot ledger record
expect "slot ledger records left after the jobs" 0 "$(cat "$TBSIM_DIR"/ledger/* 2>/dev/null | grep -c .)"
finish
