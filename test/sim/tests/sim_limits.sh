#!/usr/bin/env bash
# sim_limits: Apple's limits enforced by libtbsim, through the test program tbsim_limits (one host
# with one cable, the peer on the other end), each on both sides (the largest accepted, the
# smallest refused): EOPNOTSUPP for RC/UD, EINVAL for inline/2 SGEs/non-SEND/16,773,121 B/caps of
# 4096/RTR without the IPv4-mapped GIDs/RTS before RTR, EBUSY for the 11th QP, ENOMEM for the
# 101st MR and for the WR after max_send_wr/max_recv_wr (at most 63), the frame rule both ways
# (IBV_WC_LOC_LEN_ERR with nothing delivered; a shorter send of the same frame count and a
# 16,773,120 B message arrive whole), credit flow control. Then the per-device limits are
# host-wide (QPs held by another process count), and the QPs of a killed process stay held, and
# keep counting against the 10, until `tbsimctl reclaim` (see README: crash leaks, as on Apple).
set -uo pipefail
source "$(dirname "$0")/sim_lib.sh"
sim_init sim_limits

sim_up --hosts 2 --addressing p2p

echo "== tbsim_limits, peer on mac-b (pinned pages modelled: TBSIM_PIN=1)"
export TBSIM_PIN=1
sim_pair mac-b mac-a tbsim_limits "" ""
unset TBSIM_PIN
expect "tbsim_limits client exit status" 0 "$SIM_CLI_RC"
expect "tbsim_limits peer exit status" 0 "$SIM_SRV_RC"
check_nogrep "no FAIL line" "$TC_TMP/client.out" '^FAIL'
for what in "the 11th QP fails with EBUSY" "the 101st MR fails with ENOMEM" \
    "the 64th posted receive fails with ENOMEM" "the 64th outstanding send fails with ENOMEM" \
    "the 17th posted receive fails with ENOMEM \\(max_recv_wr honoured\\)" \
    "the 33rd outstanding send fails with ENOMEM \\(max_send_wr honoured\\)" \
    "max_send_wr 4096 fails create_qp with EINVAL" "create_qp accepts caps of 4095 WRs" \
    "RC QP fails with EOPNOTSUPP" "RDMA WRITE opcode fails post_send with EINVAL" \
    "a 1-frame send into a 2-frame receive fails the receive with IBV_WC_LOC_LEN_ERR" \
    "a 2-frame send into a 1-frame receive fails the receive with IBV_WC_LOC_LEN_ERR" \
    "a 100 B send into a 4096 B receive \(1 frame each\) arrives whole \(IBV_WC_RECV, byte_len 100\)" \
    "a 16,773,120 B send \(4095 frames\) into as much arrives whole \(IBV_WC_RECV, byte_len 16773120\)" \
    "a send of 16,773,121 B \(inside its MR\) fails with EINVAL" \
    "no send completes while the peer posts no receive" \
    "a send from a range mapped again after its registration carries the old pages \(TBSIM_PIN\)"; do
    check_grep "${what//\\/}" "$TC_TMP/client.out" "^PASS: $what\$"
done

echo "== the QP limit counts every process of the host"
fifo=$TC_TMP/hold.fifo
mkfifo "$fifo"
sim_on mac-a tbsim_limits -k 4 <"$fifo" >"$TC_TMP/hold.out" 2>&1 &
holder=$!
SIM_PIDS+=("$holder")
exec 9>"$fifo" # keeps the holder's stdin open
for _ in $(seq 100); do
    grep -q 'holding 4 QPs' "$TC_TMP/hold.out" && break
    sleep 0.1
done
check_grep "a holder process keeps 4 QPs of mac-a:rdma_en2" "$TC_TMP/hold.out" 'holding 4 QPs'
"$TBSIMCTL" show | tee "$TC_TMP/show.out" | sed 's/^/  show| /'
check_grep "tbsimctl show counts them" "$TC_TMP/show.out" '^device mac-a:rdma_en2 qps 4/10'
sim_pair mac-b mac-a tbsim_limits "" "-o 4"
expect "tbsim_limits -o 4 exit status" 0 "$SIM_CLI_RC"
check_grep "only 6 more QPs, then EBUSY" "$TC_TMP/client.out" \
    '^PASS: the QPs other processes of this host hold count against the 10$'
check_grep "... and the 7th fails with EBUSY" "$TC_TMP/client.out" '^PASS: the 11th QP fails with EBUSY$'

echo "== a killed process leaks its QPs until tbsimctl reclaim"
# the holder's own pid (the background job is the wrapper chain around it), from the registry
hpid=$(awk '/^  qp / {print $4; exit}' "$TC_TMP/show.out")
check "the registry names the holder's pid ($hpid)" kill -0 "$hpid"
kill -KILL "$hpid"
for _ in $(seq 100); do
    kill -0 "$hpid" 2>/dev/null || break
    sleep 0.1
done
exec 9>&-
wait "$holder" 2>/dev/null
"$TBSIMCTL" show >"$TC_TMP/show.out"
check_grep "after SIGKILL the 4 QPs are still held" "$TC_TMP/show.out" '^device mac-a:rdma_en2 qps 4/10'
sim_pair mac-b mac-a tbsim_limits "" "-o 4"
expect "tbsim_limits -o 4 after the SIGKILL: exit status" 0 "$SIM_CLI_RC"
check_grep "the dead process's 4 QPs still count: only 6 more QPs" "$TC_TMP/client.out" \
    '^PASS: the QPs other processes of this host hold count against the 10$'
check_grep "the dead process's 4 QPs still count: the 7th QP fails with EBUSY" \
    "$TC_TMP/client.out" '^PASS: the 11th QP fails with EBUSY$'
"$TBSIMCTL" reclaim | tee "$TC_TMP/reclaim.out"
check_grep "reclaim frees them" "$TC_TMP/reclaim.out" '^reclaimed 4 QP slots'
"$TBSIMCTL" show >"$TC_TMP/show.out"
check_grep "the device is free again" "$TC_TMP/show.out" '^device mac-a:rdma_en2 qps 0/10'

finish
