#!/bin/bash
# tbvm-vms: 3
# VM tier: outages on real kernel verbs. tb_outage (test/mpi; sizes divided by 8 for TCG: 8 B to
# 512 KiB, the 128 KiB ones on the bulk channel) runs over pml ob1 and btl self,tbrdma with one
# rank per VM (vm1 and vm2 are partners, vm3 takes part in the allreduce), while vm1's cable to
# vm2 loses every packet vm1 sends (netem loss 100 % on its interface: a one-way outage) for
# 0.5 s and then 2 s, 4 s apart. rxe under qemu also drops whole messages in bursts of its own.
# The job must go on after each outage, end when told to, every result right, every frame back.
# (Without the bulk channel's credit probe, docs/design.md "Credits", this job stopped for good
# after an outage: what the VM tier's unexplained 150 s overruns were.)
. "$TBVM_REPO/test/vm/guest/mpi.sh"

libs="$(tbvm_project_build)/plugin/.libs"
if [ ! -e "$libs/mca_btl_tbrdma.so" ]; then
    echo "SKIP: plugin not built ($libs/mca_btl_tbrdma.so missing)"
    exit 77
fi
tbvm_mpi_require_programs tb_outage
if ! modprobe sch_netem 2>/dev/null || ! command -v tc >/dev/null; then
    echo "SKIP: no netem (sch_netem module and tc) in the guest to make the cable silent"
    exit 77
fi
read -r ifname dev _ _ < <(tbvm_cable vm1 vm2)
stop=/tmp/tbvm-outage.stop
out=/tmp/tbvm-outage.out
rm -f "$stop"
trap 'tc qdisc del dev "$ifname" root 2>/dev/null' EXIT
TBVM_MPI_JOB_TIMEOUT=200
# shellcheck disable=SC2046 # one word per argument
tbvm_mpi_job "$out" "tb_outage $stop 180 8" $(tbvm_mpi_tbrdma_args) &
job=$!
for _ in $(seq 600); do
    grep -q "tbtest outage: running" "$out" 2>/dev/null && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
done
tbvm_expect "outage: the job started" "$(grep -c 'tbtest outage: running' "$out")" 1
for d in 0.5 2; do
    sleep 2
    echo "vm: outage: $ifname ($dev, vm1 -> vm2) loses everything for $d s, at round" \
        "$(grep -o 'round [0-9]*' "$out" | tail -1)"
    tc qdisc add dev "$ifname" root netem loss 100% || echo "vm: FAIL: tc netem on $ifname"
    sleep "$d"
    tc qdisc del dev "$ifname" root
done
sleep 4
touch "$stop"
wait "$job"
rc=$?
tbvm_mpi_ranks_ok "outage tb_outage" tb_outage "$out" "$rc"
tbvm_mpi_tbrdma_check "outage tb_outage" "$out"
grep -h "^tbtest outage: [0-9]* rounds" "$out" | sed 's/^/vm: outage: /'
grep -ho "[0-9]* credit probes" "$out" | awk '{ s += $1 } END { print "vm: outage: credit probes " s + 0 }'
[ "$TBVM_FAILS" = 0 ]
