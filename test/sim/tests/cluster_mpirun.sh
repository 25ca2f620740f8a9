#!/bin/bash
# cluster_mpirun.sh: Open MPI's mpirun across 3 simulated hosts through tbcluster mpirun.
# Builds cluster_mpi_hello.c with mpicc into a temp dir and runs it with ob1 and the TCP BTL,
# first over the management network (tbcluster's default btl_tcp_if_include), then over the
# Thunderbolt /30s (the test's own btl_tcp_if_include, needing --peer-routes). Checks each run:
# exit status 0, one rank on each of mac-a, mac-b, mac-c, and the allreduce result. Then 2
# slots per host (--slots 2) with 6 ranks.
set -uo pipefail
. "$(dirname "$0")/cluster_lib.sh"
cl_init cluster_mpirun
for tool in mpicc mpirun; do
    command -v "$tool" >/dev/null || skip "cluster_mpirun needs $tool (libopenmpi-dev)"
done

# Usage: check_run LABEL MPIRUN-ARGS... : runs the program on 3 ranks, one per host.
check_run()
{
    local label=$1 out rc
    shift
    out=$("$TBCLUSTER" mpirun --np 3 -- --map-by node --mca pml ob1 --mca btl self,tcp "$@" \
        "$TC_TMP/hello" 2>&1)
    rc=$?
    echo "$out" | while IFS= read -r line; do echo "  [$label] $line"; done
    expect "$label: mpirun exit status" 0 "$rc"
    expect "$label: processor names of ranks 0..2" "mac-a mac-b mac-c" \
        "$(echo "$out" | sed -n 's/^rank [0-9]*\/3 on //p' | xargs)"
    expect "$label: distinct hosts" "distinct hosts: 3" "$(echo "$out" | grep '^distinct')"
    expect "$label: allreduce" "allreduce sum=6 expected=6" \
        "$(echo "$out" | grep '^allreduce')"
}

# Hostfile slots: 2 per host, 6 ranks mapped by slot fill each host in turn.
check_slots()
{
    local out
    out=$("$TBCLUSTER" mpirun --slots 2 -- --map-by slot --mca pml ob1 --mca btl self,vader,tcp \
        "$TC_TMP/hello" 2>&1)
    expect "--slots 2: exit status" 0 "$?"
    expect "--slots 2: processor names of ranks 0..5" "mac-a mac-a mac-b mac-b mac-c mac-c" \
        "$(echo "$out" | sed -n 's/^rank [0-9]*\/6 on //p' | xargs)"
    expect "--slots 2: allreduce" "allreduce sum=21 expected=21" \
        "$(echo "$out" | grep '^allreduce')"
}

if ! mpicc -o "$TC_TMP/hello" "$CL_TESTS_DIR/cluster_mpi_hello.c"; then
    fail "mpicc cluster_mpi_hello.c"
    finish
fi
pass "mpicc cluster_mpi_hello.c"
if ! cl_up --hosts 3 --peer-routes >/dev/null 2>&1; then
    fail "tbcluster up --hosts 3 --peer-routes"
    finish
fi
pass "tbcluster up --hosts 3 --peer-routes"

check_run "btl tcp over mgmt0"
check_run "btl tcp over Thunderbolt /30s" --mca btl_tcp_if_include 192.168.0.0/16
check_slots

check "tbcluster down" "$TBCLUSTER" down
cl_check_nothing_left "after down"
finish
