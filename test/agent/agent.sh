#!/usr/bin/env bash
# agent.sh: tbrdma-agent (plugin/agent), the per-Mac agent of a job, on 2 simulated Macs joined
# by one cable. On each Mac tb_agent_pair (this directory's C driver) plays the job's ranks: it
# creates the job's segment, starts the agent, has it open its queue pairs (GO, READY), swaps its
# queue pair numbers with the other Mac's agent through files in the test's directory, asks for
# the link (REQUESTED, CONNECTED), then forks local ranks 0 and 1. Rank r of each Mac exchanges
# 1-frame and 17-frame tbrdma frames with rank r of the other, through its vport
# (core/tbrdma_vport.h) and both agents; every payload names its host, rank, channel and
# sequence, and each receiver checks every byte and the order.
#
#   stream      3000 1-frame and 300 bulk frames each way per rank: all arrive whole and in
#               order; the agents switched every frame and dropped none, every receive slot is
#               back home, they exit by themselves once the ranks are done, hold nothing in the
#               simulator and leave no segment in /dev/shm.
#   rank-kill   mac-a's rank 1 is SIGKILLed after 500 frames: mac-a's agent sees it gone and lives
#               on; rank 0 of both Macs completes; mac-b's rank 1 ends early with what it got
#               intact; the dead rank's receive slots come home; nothing held or left after.
#   agent-kill  mac-a's agent is SIGKILLed mid-stream: mac-a's ranks see its heartbeat stop and
#               end; mac-b's ranks are told to stop and its agent exits by itself. The killed
#               agent's 2 queue pairs and its memory region stay held: that is Apple's device,
#               which frees nothing of a process that died without destroying them (and the
#               simulator does the same: test/sim/README.md, "Crash"); the held slots are exactly
#               the dead agent's, and `tbsimctl reclaim` frees them.
#
# Root and network namespaces (77 otherwise). AGENT_BUILD_DIR: another build (default build/);
# AGENT_BIN: another tbrdma-agent; AGENT_SANITIZE=1: the agent built once more with
# AddressSanitizer and UndefinedBehaviorSanitizer, and no report of theirs allowed.
set -uo pipefail
# shellcheck disable=SC2034 # read by check.sh and cluster.sh
CHECK_NAME=agent${AGENT_SANITIZE:+ (sanitized)}
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# shellcheck source=../lib/cluster.sh
. "$(dirname "$0")/../lib/cluster.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${AGENT_BUILD_DIR:-$REPO/build}
export TBSIMCTL=$BUILD/test/sim/tbsimctl
AGENT=${AGENT_BIN:-$BUILD/plugin/tbrdma-agent}
SIMLIB=$BUILD/test/sim/.libs/libtbsim.so
DRIVER=$BUILD/test/agent/tb_agent_pair
TBCLUSTER=$REPO/test/sim/tbcluster
PAIR_TIMEOUT=120

skip_unless_netns
for f in "$AGENT" "$SIMLIB" "$TBSIMCTL" "$BUILD/plugin/.libs/libtbrdma_sys.a" \
    "$BUILD/plugin/core/.libs/libtbrdma_core.a"; do
    [ -e "$f" ] || fatal "missing $f (build first: ./build.sh)"
done

# The driver, again when its source or a library changed.
build_driver()
{
    local src=$REPO/test/agent/tb_agent_pair.c f
    local libs=("$BUILD/plugin/.libs/libtbrdma_sys.a" "$BUILD/plugin/core/.libs/libtbrdma_core.a")
    mkdir -p "$(dirname "$DRIVER")"
    for f in "$src" "${libs[@]}"; do
        if [ ! -x "$DRIVER" ] || [ "$f" -nt "$DRIVER" ]; then
            gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$REPO/plugin" -o "$DRIVER" "$src" \
                "${libs[@]}" -ldl || fatal "tb_agent_pair.c does not build"
            return
        fi
    done
}
build_driver

# The agent with the sanitizers (its own sources instrumented; the libraries as built).
build_sanitized_agent()
{
    local out=$BUILD/test/agent/asan/tbrdma-agent
    mkdir -p "$(dirname "$out")"
    gcc -std=gnu99 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
        -fno-sanitize-recover=all -Wall -Wextra -Werror -I"$REPO/plugin" -o "$out" \
        "$REPO"/plugin/agent/*.c "$BUILD/plugin/.libs/libtbrdma_sys.a" \
        "$BUILD/plugin/core/.libs/libtbrdma_core.a" -ldl || skip "no sanitizer runtimes here"
    AGENT=$out
    export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
}
[ -z "${AGENT_SANITIZE:-}" ] || build_sanitized_agent

# On the way out, whatever a failed case left running: its drivers' agents, its segments.
leftovers()
{
    local f pid s
    for f in "$TC_TMP"/*/mac-?.agent.pid; do
        pid=$(cat "$f" 2>/dev/null) && [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    done
    for s in $(sed -n 's/.*READY, segment \/\(tbr\.[^,]*\),.*/\1/p' "$TC_TMP"/*/mac-?.out 2>/dev/null); do
        rm -f "/dev/shm/$s"
    done
}
# shellcheck disable=SC2034 # read by cluster.sh
TC_BEFORE_DOWN=leftovers
tc_init ag 10.96
tc_up --hosts 2 --addressing p2p >/dev/null || fatal "tbcluster up failed"

# pair CASE ARGS-A -- ARGS-B: both drivers at once (mac-a with ARGS-A, mac-b with ARGS-B), in
# CASE's own directory ($dir); their output in $dir/mac-X.out, exit codes in rc_a and rc_b.
pair()
{
    local case=$1 a=() pid
    shift
    while [ "$1" != -- ]; do
        a+=("$1")
        shift
    done
    shift
    dir=$TC_TMP/$case
    mkdir -p "$dir"
    run_one mac-a mac-b "${a[@]}" &
    pid=$!
    run_one mac-b mac-a "$@"
    rc_b=$?
    wait "$pid"
    rc_a=$?
}

# run_one HOST PEER ARGS...: one driver on HOST.
run_one()
{
    local host=$1 peer=$2
    shift 2
    timeout "$PAIR_TIMEOUT" "$TBCLUSTER" exec "$host" -- "$DRIVER" --host "$host" --peer "$peer" \
        --dir "$dir" --agent "$AGENT" --verbs-lib "$SIMLIB" "$@" >"$dir/$host.out" 2>&1
}

# gone PID: the process has exited (a zombie nobody reaped yet counts as exited).
gone()
{
    [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# agents_exit CASE HOST...: each HOST's agent exits by itself within 10 s of its driver.
agents_exit()
{
    local case=$1 host pid
    shift
    for host in "$@"; do
        pid=$(cat "$dir/$host.agent.pid" 2>/dev/null)
        for _ in $(seq 100); do
            gone "${pid:-0}" && break
            sleep 0.1
        done
        check "$case: $host's agent (pid ${pid:-?}) exited by itself" gone "${pid:-0}"
    done
}

# nothing_left CASE: the simulator holds no slot, and no segment of the case is left in /dev/shm.
nothing_left()
{
    local out segs s left=
    out=$("$TBSIMCTL" held)
    check "$1: no queue pair or memory region held" test $? -eq 0 \
        || echo "$out" | sed 's/^/    | /'
    segs=$(sed -n 's/.*READY, segment \/\(tbr\.[^,]*\),.*/\1/p' "$dir"/mac-?.out)
    for s in $segs; do
        [ -e "/dev/shm/$s" ] && left="$left $s"
    done
    check "$1: no segment left in /dev/shm (${segs//$'\n'/ })${left:+, left:$left}" \
        test -n "$segs" -a -z "$left"
}

# complete CASE HOST RANK: the rank completed its whole exchange, every frame intact and in order.
complete()
{
    check_grep "$1: $2 rank $3 completed, $FRAMES+$BULK each way, all intact and in order" \
        "$dir/$2.out" "rank $3: complete: sent $FRAMES\+$BULK \(done $FRAMES\+$BULK\), received $FRAMES\+$BULK frames, all intact"
}

# ---- stream -------------------------------------------------------------------------------------
FRAMES=3000
BULK=300
pair stream --frames $FRAMES --bulk $BULK -- --frames $FRAMES --bulk $BULK
expect "stream: both drivers succeeded" "0 0" "$rc_a $rc_b"
agents_exit stream mac-a mac-b # they say their counters as they exit
for h in mac-a mac-b; do
    complete stream $h 0
    complete stream $h 1
    check_grep "stream: $h's agent switched every frame and dropped none" "$dir/$h.out" \
        "switched $((2 * (FRAMES + BULK))) frames; dropped short 0, bad header 0, no rank 0, agent's 0; receive errors 0; sends $((2 * (FRAMES + BULK))) \(failed 0, refused 0"
    check_grep "stream: $h's agent saw both ranks come and go, and has every receive slot back" \
        "$dir/$h.out" "ranks attached 2, left 2, broken 0; receive slots home 128 of 128"
done
nothing_left stream

# ---- rank-kill ----------------------------------------------------------------------------------
FRAMES=4000
BULK=400
pair rank-kill --frames $FRAMES --bulk $BULK --kill-rank 1 --kill-after 500 -- \
    --frames $FRAMES --bulk $BULK --stop-file "$TC_TMP/rank-kill/mac-a.r1.killed" --stop-ranks 2
expect "rank-kill: both drivers succeeded" "0 0" "$rc_a $rc_b"
agents_exit rank-kill mac-a mac-b
check_grep "rank-kill: mac-a's rank 1 was SIGKILLed mid-stream" "$dir/mac-a.out" \
    "rank 1: killed \(SIGKILL\) after [0-9]+ frames"
check_grep "rank-kill: mac-a's agent saw it gone" "$dir/mac-a.out" \
    "tbrdma-agent mac-a: local rank 1 \(pid [0-9]+\) left: its process is gone"
complete rank-kill mac-a 0
complete rank-kill mac-b 0
check_grep "rank-kill: mac-b's rank 1 stopped early with every frame it got intact" \
    "$dir/mac-b.out" "rank 1: stopped early: .* all intact and in order"
check_grep "rank-kill: mac-a's agent took back the dead rank's receive slots" "$dir/mac-a.out" \
    "ranks attached 2, left 2, broken 0; receive slots home 128 of 128"
nothing_left rank-kill

# ---- agent-kill ---------------------------------------------------------------------------------
dir=$TC_TMP/agent-kill
stop=$dir/agent.killed
pair agent-kill --frames 10000000 --bulk 100000 --stop-file "$stop" --stop-ranks 3 -- \
    --frames 10000000 --bulk 100000 --stop-file "$stop" --stop-ranks 3 &
pair_pid=$!
for _ in $(seq 300); do # both Macs' ranks exchanging
    [ -e "$dir/mac-a.r1.conn" ] && [ -e "$dir/mac-b.r1.conn" ] && break
    sleep 0.1
done
sleep 0.5
apid=$(cat "$dir/mac-a.agent.pid" 2>/dev/null)
check "agent-kill: mac-a's agent (pid ${apid:-?}) killed mid-stream" kill -KILL "${apid:-0}"
sleep 3 # longer than a rank waits for a heartbeat (2 s)
touch "$stop"
wait "$pair_pid"
check_grep "agent-kill: mac-a's ranks saw their agent die" "$dir/mac-a.out" \
    "rank [01]: the agent died: .* all intact and in order"
check_grep "agent-kill: mac-b's ranks stopped with every frame they got intact" "$dir/mac-b.out" \
    "rank [01]: stopped early: .* all intact and in order"
check_nogrep "agent-kill: no rank of mac-a failed" "$dir/mac-a.out" "FAILED"
check_nogrep "agent-kill: no rank of mac-b failed" "$dir/mac-b.out" "FAILED"
agents_exit agent-kill mac-b
held=$("$TBSIMCTL" held | grep '^held')
expect "agent-kill: the dead agent's 2 queue pairs and 1 memory region stay held, and only they" \
    "2 1 3" "$(echo "$held" | grep -c "^held mac-a:rdma_en2 qp .* pid $apid (dead)") $(echo "$held" \
    | grep -c "^held mac-a:rdma_en2 mr .* pid $apid (dead)") $(echo "$held" | grep -c .)"
"$TBSIMCTL" reclaim >/dev/null
nothing_left "agent-kill, after tbsimctl reclaim"

if [ -n "${AGENT_SANITIZE:-}" ]; then
    reports=$(grep -lE 'AddressSanitizer|LeakSanitizer|runtime error' "$TC_TMP"/*/mac-?.out)
    check "no sanitizer report from the agents${reports:+: see $reports}" test -z "$reports"
fi
finish
