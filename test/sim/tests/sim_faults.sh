#!/usr/bin/env bash
# sim_faults: per-cable faults of libtbsim, set with tbcluster fault (tbsimctl fault), applied by
# the sender: drops lose messages with no error completion on either side (the send completes
# with success: UC has no acks), deterministically for a given seed (the same messages, by
# sequence number, are lost again; another seed loses others); a drop rate changed while a
# job runs takes effect at once; drop_min limits drops to messages of at least that size; corruption delivers changed bytes with a success status; an
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

# Usage: lost : the sequence numbers the server never got, as it lists them.
lost()
{
    sed -n 's/^uc_pingpong: stream: lost seq: \(.*\) ([0-9]*)$/\1/p' "$srv"
}

echo "== drop=0.3 seed=42, 300 messages"
"$TBCLUSTER" fault c1 drop=0.3 seed=42
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 4096 -n 300"
expect "stream exit status" "0 0" "$SIM_CLI_RC $SIM_SRV_RC"
check_grep "every send completes with success" "$cli" 'sent 300, send completions 300 success 0 error'
check_grep "no error completion at the receiver, nothing corrupted" "$srv" \
    'corrupted 0, error completions 0'
first=$(received)
check "some messages were lost silently (${first:-?} of 300 arrived)" \
    test -n "$first" -a "${first:-0}" -gt 0 -a "${first:-300}" -lt 300
first_lost=$(lost)
expect "the server lists as lost exactly the ones that did not arrive" $((300 - ${first:-0})) \
    "$(echo "$first_lost" | wc -w)"
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 4096 -n 300"
expect "the same seed loses the same messages (by sequence number)" "$first_lost" "$(lost)"
"$TBCLUSTER" fault c1 seed=43
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 4096 -n 300"
other_lost=$(lost)
check "another seed loses other messages (${other_lost:0:40}...)" \
    test -n "$other_lost" -a "$other_lost" != "$first_lost" -a "$other_lost" != none
"$TBCLUSTER" fault c1 seed=42

echo "== drop rate changed while the job runs: 0 for 100 messages, then 1"
"$TBCLUSTER" fault c1 drop=0
sim_stream_pause
"$TBCLUSTER" fault c1 drop=1
sim_stream_resume
expect "client exit status" 0 "$SIM_CLI_RC"
check_grep "all 200 sends complete with success" "$cli" 'send completions 200 success 0 error'
expect "exactly the 100 messages sent before the change arrived" 100 "$(received)"

echo "== drop=1 drop_min=8192: only messages of at least 8192 bytes are lost"
"$TBCLUSTER" fault c1 drop=1 drop_min=8192
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 4096 -n 100"
expect "4096-byte messages all arrive" 100 "$(received)"
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 8192 -n 100"
check_grep "8192-byte messages: every send completes with success" "$cli" \
    'sent 100, send completions 100 success 0 error'
expect "8192-byte messages: none arrives" 0 "$(received)"
"$TBCLUSTER" fault c1 drop=0 drop_min=0

echo "== corrupt=1: every payload is changed, every status is success"
"$TBCLUSTER" fault c1 drop=0 corrupt=1
sim_pair mac-b mac-a uc_pingpong "" "-m stream -s 1000 -n 100"
check_grep "all 100 sends succeed" "$cli" 'send completions 100 success 0 error'
check_grep "all 100 arrive with success status and changed bytes" "$srv" \
    'received 100 of 100, corrupted 100, error completions 0'

# The delay is large (0.3 s) so that a simulator ignoring it is caught on a loaded machine too:
# there an undelayed round trip of busy-polling processes was seen taking 16 ms.
echo "== delay_us=300000"
"$TBCLUSTER" fault c1 corrupt=0 delay_us=300000
"$TBSIMCTL" show | grep '^cable' | sed 's/^/  show| /'
sim_pair mac-b mac-a uc_pingpong "" "-s 64 -n 3"
expect "ping-pong exit status with a delay" "0 0" "$SIM_CLI_RC $SIM_SRV_RC"
rtt=$(sed -n 's/.*rtt \([0-9]*\)\..* us,.*/\1/p' "$cli")
check "no round trip shorter than 2 x 300000 us (rtt ${rtt:-?} us)" test "${rtt:-0}" -ge 600000

finish
