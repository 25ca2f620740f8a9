#!/usr/bin/env bash
# sim_faults: per-cable faults of libtbsim, set with tbcluster fault (tbsimctl fault), applied by
# the sender: drops lose messages with no error completion on either side (the send completes
# with success: UC has no acks), deterministically for a given seed; a drop rate changed while a
# job runs takes effect at once; corruption delivers changed bytes with a success status; an
# added delay holds each delivery back (a round trip can never be shorter than twice the delay:
# a bound the simulator guarantees, not a timing measurement).
set -uo pipefail
source "$(dirname "$0")/sim_lib.sh"
sim_init sim_faults

sim_up --hosts 2 --addressing p2p
cli=$TC_TMP/client.out
srv=$TC_TMP/server.out

# Usage: received : the server's count of intact arrivals.
received()
{
    sed -n 's/.*stream: received \([0-9]*\) of.*/\1/p' "$srv"
}

echo "== drop=0.3 seed=42, 300 messages"
"$TBCLUSTER" fault c1 drop=0.3 seed=42
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 4096 -n 300"
expect "stream exit status" "0 0" "$SIM_CLI_RC $SIM_SRV_RC"
check_grep "every send completes with success" "$cli" 'sent 300, send completions 300 success 0 error'
check_grep "no error completion at the receiver, nothing corrupted" "$srv" \
    'corrupted 0, error completions 0'
first=$(received)
if [ -n "$first" ] && [ "$first" -gt 0 ] && [ "$first" -lt 300 ]; then
    pass "some messages were lost silently ($first of 300 arrived)"
else
    fail "drop=0.3 should lose some but not all of 300 messages, ${first:-?} arrived"
fi
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 4096 -n 300"
expect "the same seed loses the same messages" "$first" "$(received)"

echo "== drop rate changed while the job runs: 0 for 100 messages, then 1"
"$TBCLUSTER" fault c1 drop=0
sim_stream_pause
"$TBCLUSTER" fault c1 drop=1
sim_stream_resume
expect "client exit status" 0 "$SIM_CLI_RC"
check_grep "all 200 sends complete with success" "$cli" 'send completions 200 success 0 error'
expect "exactly the 100 messages sent before the change arrived" 100 "$(received)"

echo "== corrupt=1: every payload is changed, every status is success"
"$TBCLUSTER" fault c1 drop=0 corrupt=1
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 1000 -n 100"
check_grep "all 100 sends succeed" "$cli" 'send completions 100 success 0 error'
check_grep "all 100 arrive with success status and changed bytes" "$srv" \
    'received 100 of 100, corrupted 100, error completions 0'

echo "== delay_us=5000"
"$TBCLUSTER" fault c1 corrupt=0 delay_us=5000
"$TBSIMCTL" show | grep '^cable' | sed 's/^/  show| /'
sim_pair mac-b mac-a uc_pingpong "" "-s 64 -n 10"
expect "ping-pong exit status with a delay" "0 0" "$SIM_CLI_RC $SIM_SRV_RC"
rtt=$(sed -n 's/.*rtt \([0-9]*\)\..* us,.*/\1/p' "$cli")
if [ -n "$rtt" ] && [ "$rtt" -ge 10000 ]; then
    pass "no round trip shorter than 2 x 5000 us (rtt $rtt us)"
else
    fail "round trip of ${rtt:-?} us is shorter than the 10000 us the delay imposes"
fi

finish
