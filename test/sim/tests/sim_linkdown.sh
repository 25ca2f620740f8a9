#!/usr/bin/env bash
# sim_linkdown: a pulled cable (tbcluster takes one veth end down, the carrier drops on both)
# turns the ports of both ends DOWN and ibv_alloc_pd fails there; plugging it back makes them
# ACTIVE. Sends on a QP whose port went DOWN mid-stream still complete with success (Apple: no
# error, no ack) but their data never arrives.
set -uo pipefail
source "$(dirname "$0")/sim_lib.sh"
sim_init sim_linkdown

sim_up --hosts 2 --addressing p2p
out=$TC_TMP/devinfo.out

echo "== cable c1 pulled"
"$TBCLUSTER" fault c1 down
for h in mac-a mac-b; do
    sim_devinfo "$h"
    check_grep "$h: port DOWN with the cable pulled" "$out" 'state PORT_DOWN \(1\)'
    check_grep "$h: alloc_pd fails (ENXIO)" "$out" 'alloc_pd: failed: .*\(errno 6\)'
done
echo "== cable c1 plugged back"
"$TBCLUSTER" fault c1 up
for h in mac-a mac-b; do
    sim_devinfo "$h"
    check_grep "$h: port ACTIVE again" "$out" 'state PORT_ACTIVE \(4\)'
done

echo "== cable pulled half-way through a stream of 200 messages"
sim_stream_pause
check_grep "the client paused after 100 messages" "$TC_TMP/client.out" 'paused after 100 messages'
"$TBCLUSTER" fault c1 down
sim_stream_resume
expect "client exit status" 0 "$SIM_CLI_RC"
expect "server exit status" 0 "$SIM_SRV_RC"
check_grep "all 200 sends complete with success, none with an error" "$TC_TMP/client.out" \
    'sent 200, send completions 200 success 0 error'
check_grep "only the 100 sent before the pull arrive, with no error completion" \
    "$TC_TMP/server.out" 'received 100 of 200, corrupted 0, error completions 0'
"$TBCLUSTER" fault c1 up

finish
