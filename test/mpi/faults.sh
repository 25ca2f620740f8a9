#!/usr/bin/env bash
# faults.sh FLAVOUR: tbrdma's MPI test programs on 4 simulated Macs whose every cable loses 1 %
# of its messages and corrupts 0.1 % (tbsimctl fault drop=0.01 corrupt=0.001, checksums on):
# every program must still be correct, and the run must show that the faults happened (the
# simulator's lost and corrupted counters), that tbrdma repaired them (retransmissions, frames
# refused for a bad checksum) and that nothing was left held.
set -uo pipefail
MT_VARIANT="1 % loss, 0.1 % corruption"
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: faults.sh 4.1|5.0}"
mt_require
mt_build
mt_cluster p2p
cables=$(sed -n 's/^cable \([^ ]*\) .*/\1/p' "$TBSIM_DIR/topology")
seed=7
for c in $cables; do
    "$MT_TBCLUSTER" fault "$c" drop=0.01 corrupt=0.001 seed=$((seed++)) \
        || fatal "tbcluster fault $c failed"
done
before=$TC_TMP/before
mt_counters "$before"
retrans=0 badsum=0
for prog in tb_pingpong tb_coll tb_p2p tb_rma tb_thread "tb_ring 3"; do
    set -- $prog
    mt_run "${1#tb_}" 4 1 --mca btl_tbrdma_checksum 1 -- "$@"
    retrans=$((retrans + $(mt_stat retransmitted)))
    badsum=$((badsum + $(mt_stat "bad checksum")))
done
mt_counters "$TC_TMP/after"
lost=$(mt_counter_sum lost "$TC_TMP/after")
corrupted=$(mt_counter_sum corrupted "$TC_TMP/after")
check "the simulator lost messages ($lost) and corrupted some ($corrupted)" \
    test "$lost" -gt 0 -a "$corrupted" -gt 0
check "tbrdma retransmitted ($retrans frames) and refused corrupted frames ($badsum)" \
    test "$retrans" -gt 0 -a "$badsum" -gt 0
mt_counters_moved "the faulty run" "$before" "$TC_TMP/after" 100000
mt_nothing_held "after the faulty run"
finish
