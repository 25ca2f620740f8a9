#!/usr/bin/env bash
# sim_linkdown: a pulled cable (tbcluster takes one veth end down, the carrier drops on both)
# turns the ports of both ends DOWN and ibv_alloc_pd fails there; plugging it back makes them
# ACTIVE. Sends on a QP whose port went DOWN mid-stream still complete with success (Apple: no
# error, no ack) but their data never arrives.
set -uo pipefail
source "$(dirname "$0")/sim_lib.sh"
sim_init sim_linkdown

sim_up --hosts 2 --addressing p2p
out=$SIM_TMP/devinfo.out

echo "== cable c1 pulled"
"$TBCLUSTER" fault c1 down
for h in mac-a mac-b; do
    sim_devinfo "$h"
    sim_grep "$h: port DOWN with the cable pulled" "$out" 'state PORT_DOWN \(1\)'
    sim_grep "$h: alloc_pd fails (ENXIO)" "$out" 'alloc_pd: failed: .*\(errno 6\)'
done
echo "== cable c1 plugged back"
"$TBCLUSTER" fault c1 up
for h in mac-a mac-b; do
    sim_devinfo "$h"
    sim_grep "$h: port ACTIVE again" "$out" 'state PORT_ACTIVE \(4\)'
done

echo "== cable pulled half-way through a stream of 200 messages"
fifo=$SIM_TMP/pause.fifo
mkfifo "$fifo"
sim_on mac-b uc_pingpong >"$SIM_TMP/server.out" 2>&1 &
srv=$!
sim_on mac-a uc_pingpong -m stream -s 4096 -n 200 -P mac-b <"$fifo" >"$SIM_TMP/client.out" 2>&1 &
cli=$!
exec 9>"$fifo"
for _ in $(seq 300); do
    grep -q 'paused after' "$SIM_TMP/client.out" && break
    sleep 0.1
done
sim_grep "the client paused after 100 messages" "$SIM_TMP/client.out" 'paused after 100 messages'
"$TBCLUSTER" fault c1 down
echo go >&9
exec 9>&-
wait "$cli"
cli_rc=$?
wait "$srv"
srv_rc=$?
sed 's/^/  client| /' "$SIM_TMP/client.out"
sed 's/^/  server| /' "$SIM_TMP/server.out"
sim_expect "client exit status" 0 "$cli_rc"
sim_expect "server exit status" 0 "$srv_rc"
sim_grep "all 200 sends complete with success, none with an error" "$SIM_TMP/client.out" \
    'sent 200, send completions 200 success 0 error'
sim_grep "only the 100 sent before the pull arrive, with no error completion" \
    "$SIM_TMP/server.out" 'received 100 of 200, corrupted 0, error completions 0'
"$TBCLUSTER" fault c1 up

sim_finish
