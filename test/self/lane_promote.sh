#!/usr/bin/env bash
# lane_promote: at bg_join, run-tests.sh moves the background lane, and every process it started,
# out of the idle scheduling class: on a machine whose cores other work keeps busy, an idle-class
# lane gets no core, and the join would wait for ever. A tree of three processes (a subshell in
# the idle class, its child and grandchild, one of them with a second thread) goes through
# run-tests.sh's own bg_promote: each of their threads must then be SCHED_OTHER.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
self_init lane_promote

# bg_promote, as run-tests.sh defines it
eval "$(sed -n '/^bg_promote()$/,/^}$/p' "$top/run-tests.sh")"
declare -F bg_promote >/dev/null || fatal "run-tests.sh defines no bg_promote"
check "bg_join calls bg_promote before it waits" \
    bash -c "sed -n '/^bg_join()\$/,/^}\$/p' '$top/run-tests.sh' | sed -n '/^ *bg_promote\$/,\$p' | grep -q 'wait \"\\\$bg_pid\"'"

(
    chrt --idle -p 0 "$BASHPID" || exit 1
    bash -c 'sleep 30 & python3 -c "import threading, time; threading.Thread(target=time.sleep, args=(30,)).start(); time.sleep(30)" & wait' &
    wait
) &
bg_pid=$!
sleep 2 # python started its second thread
tids=()
todo=("$bg_pid")
while [ "${#todo[@]}" -gt 0 ]; do
    p=${todo[0]}
    todo=("${todo[@]:1}")
    mapfile -t -O "${#tids[@]}" tids < <(ls "/proc/$p/task" 2>/dev/null)
    mapfile -t -O "${#todo[@]}" todo < <(pgrep -P "$p")
done
check "threads in the lane's tree: at least the subshell, bash -c, sleep and python's two (${#tids[@]})" \
    test "${#tids[@]}" -ge 5
idle=0
for t in "${tids[@]}"; do
    chrt -p "$t" | grep -q SCHED_IDLE && idle=$((idle + 1))
done
expect "threads in the idle class before the join" "${#tids[@]}" "$idle"
bg_promote
other=0
for t in "${tids[@]}"; do
    chrt -p "$t" | grep -q SCHED_OTHER && other=$((other + 1))
done
expect "threads in the normal class after bg_promote" "${#tids[@]}" "$other"
pkill -P "$bg_pid" 2>/dev/null
pkill -f 'threading.Thread(target=time.sleep' 2>/dev/null
pkill -f 'sleep 30' 2>/dev/null
kill "$bg_pid" 2>/dev/null
finish
