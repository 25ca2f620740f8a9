#!/usr/bin/env bash
# liveness.sh FLAVOUR: a job over tbrdma on 4 simulated Macs (tb_ring, one rank per Mac) meets
# each way a peer can vanish, one job per case:
#   cable   the cable between mac-a and mac-b pulled (its link taken down) mid-run
#   stop    mac-c's rank stopped (SIGSTOP: alive, silent, what a hung Mac looks like)
#   kill    mac-c's rank killed (SIGKILL)
#   zcopy   the cable pulled again, while 4 MiB messages travel zero-copy
#   compute (no fault) the last rank computes outside MPI for 7 s, longer than the peer timeout,
#           while its peers wait for it in MPI: its liveness thread answers for it, and the job
#           completes, every result right
#   overlap (no fault) every rank computes 30 ms between posting each exchange and waiting for it
#           (the liveness thread's queued callbacks and held frames, handed over in order)
#   pause   (no fault) mac-c's first rank stopped for 4 s, 80 % of the peer timeout, then
#           continued, with 2 ranks per Mac (7 peers each): the job must complete, every result
#           right (a stall that short must never end a job: docs/design.md, "Liveness")
# Each fault case: every rank must end and mpirun exit non-zero within 15 s of the fault, with a message
# naming the lost peer's host and the cable (host, device, interface): tbrdma's own for the cable
# and the stopped rank (Apple's device reports neither), tbrdma's or Open MPI's for the killed one
# (its launcher sees the death first). Afterwards the simulator holds no queue pair or memory
# region, except those of a process that was killed or stopped, which `tbsimctl reclaim` frees.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: liveness.sh 4.1|5.0}"
mt_require
mt_build
mt_cluster p2p

stop_job()
{
    mt_job_stop
    pkill -KILL -f "$MT_BIN/tb_ring" 2>/dev/null
}
MT_JOB_STOP=stop_job
TC_BEFORE_DOWN=stop_job

# rank_pid HOST: the pid of the tb_ring process on a simulated Mac.
rank_pid()
{
    mt_pid_on "$1" "$MT_BIN/tb_ring"
}

# held_only CASE PID: the simulator holds nothing, or only slots of PID (gone), which reclaim frees.
held_only()
{
    local out others
    out=$("$TBSIMCTL" held)
    others=$(echo "$out" | grep '^held' | grep -v " pid ${2:-none}\b")
    check "$1: nothing held but the slots of the process that died (${2:-none})" test -z "$others" \
        || echo "$out" | sed 's/^/    | /'
    mt_reclaim
    mt_nothing_held "$1, after tbsimctl reclaim"
}

cable_regex='lost peer .* on host mac-[ab], over the cable mac-[ab] rdma_en[0-9]+ \(interface en[0-9]+\) <-> mac-[ab] rdma_en'

# cable: the cable of mac-a's en2 pulled.
if mt_ring_start cable 4 120; then
    t0=$(date +%s.%N)
    "$MT_TBCLUSTER" fault mac-a:en2 down || fail "cable: tbcluster fault down failed"
    mt_await_end cable "$t0" "$cable_regex"
    "$MT_TBCLUSTER" fault mac-a:en2 up
    held_only cable
fi

# zcopy: the same cable pulled while messages of 4 MiB are in flight as zero-copy gets (chunks
# granted into user buffers): the gets end with an error, nothing waits for them, and the user
# buffers' memory regions are released with everything else.
if mt_ring_start zcopy 4 120 $((4 << 20)); then
    t0=$(date +%s.%N)
    "$MT_TBCLUSTER" fault mac-a:en2 down || fail "zcopy: tbcluster fault down failed"
    mt_await_end zcopy "$t0" "$cable_regex"
    "$MT_TBCLUSTER" fault mac-a:en2 up
    held_only zcopy
fi

# compute: a rank busy outside MPI for longer than the peer timeout is not lost.
mt_run compute 4 1 -- tb_ring 3 65536 7
# overlap: every rank computes 30 ms between posting each exchange and waiting for it: the
# liveness thread acknowledges, queues send callbacks and holds the peers' frames meanwhile, and
# the application thread runs the callbacks before it hands over a peer's held frames. The
# messages are above ob1's eager limit (69,592 B), so that every exchange has a rendezvous whose
# fragments' send callbacks wait while frames of the same peer are held.
mt_run overlap 4 1 -- tb_ring 2 131072 0 0.03

# pause: a stall shorter than 80 % of the peer timeout ends nothing.
if mt_job_start pause 8 2 "tbtest ring: running" -- tb_ring 10; then
    pid=$(rank_pid mac-c) || fatal "pause: no rank on mac-c"
    sleep 1
    kill -STOP "$pid"
    sleep 4
    kill -CONT "$pid"
    for _ in $(seq 400); do
        kill -0 "$MT_JOB_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$MT_JOB_PID" 2>/dev/null; then
        fail "pause: the job still runs 40 s after the stall ended"
        stop_job
    else
        wait "$MT_JOB_PID"
        rc=$?
        MT_JOB_PID=
        check "pause: mpirun exit status $rc (0) after a 4 s stall of one rank" test "$rc" -eq 0 \
            || grep -E "lost|FAIL|rror" "$MT_OUT" | head -10 | sed 's/^/    | /'
        expect "pause: every rank's verdict" 8 "$(grep -c "^tbtest ring: rank [0-9]* of 8 OK" "$MT_OUT")"
        mt_frames_back pause 8 && pass "pause: every rank got every frame back"
    fi
    mt_nothing_held "pause"
fi

# stop: mac-c's rank stopped.
if mt_ring_start stop 4 120; then
    pid=$(rank_pid mac-c) || fatal "stop: no rank on mac-c"
    t0=$(date +%s.%N)
    kill -STOP "$pid"
    mt_await_end stop "$t0" "lost peer .* on host mac-c, over the cable mac-[abd] rdma_en[0-9]+ \(interface en[0-9]+\)"
    kill -KILL "$pid" 2>/dev/null
    sleep 0.5
    held_only stop "$pid"
fi

# kill: mac-c's rank killed.
if mt_ring_start kill 4 120; then
    pid=$(rank_pid mac-c) || fatal "kill: no rank on mac-c"
    t0=$(date +%s.%N)
    kill -KILL "$pid"
    mt_await_end kill "$t0" "lost peer .* on host mac-c, over the cable|(process|rank) .*(mac-c|killed|signal 9)"
    held_only kill "$pid"
fi
finish
