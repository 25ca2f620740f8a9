#!/bin/bash
# tbvm-vms: 3
# VM tier: an MPI job over ob1 with btl self,tcp,tbrdma across 3 VMs (a full mesh of cables,
# one rxe device per cable end). At verbosity 1 the plugin prints "tbrdma mesh: vmA rxeX <->
# vmB rxeY" for every pair; every cable of the plan must be named with the right devices at
# both ends, no pair may be named with other devices, no pair may be reported missing, and the
# job must finish with correct results ("mpi_ring: ok").
. "$TBVM_REPO/test/vm/guest/lib.sh"
tbvm_mesh_require

out=/tmp/tbvm-mesh.out
before=$(tbvm_rxe_counters sent_pkts)
tbvm_mesh_mpirun "$out"
rc=$?
cat "$out"
echo "rxe sent_pkts on vm1 before: $before after: $(tbvm_rxe_counters sent_pkts)"
tbvm_expect "mpirun status" "$rc" 0
tbvm_expect "mpi_ring result" "$(grep -c '^mpi_ring: ok ' "$out")" 1
expected=$(tbvm_mesh_expected)
named=$(tbvm_mesh_named "$out")
while read -r a da b db; do
    tbvm_expect "cable $a-$b named as" "$(awk -v a="$a" -v b="$b" '$1 == a && $3 == b' <<<"$named" |
        tr '\n' ';')" "$a $da $b $db;"
done <<<"$expected"
tbvm_expect "pairs reported without a cable" "$(grep -c 'no cable between' "$out")" 0
echo "vm: mesh pairs named: $(tr '\n' ';' <<<"$named")"
[ "$TBVM_FAILS" = 0 ]
