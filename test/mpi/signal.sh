#!/usr/bin/env bash
# signal.sh FLAVOUR: what tbrdma does when a rank gets SIGTERM, SIGHUP or SIGINT
# (btl_tbrdma_release_on_signal), on 4 simulated Macs with only tbrdma between them:
#   own      an application that handles SIGTERM itself and ignores SIGHUP (set before
#            MPI_Init: tb_signal) gets both mid-run: tbrdma leaves them to it, so the transport
#            stays and the job goes on, every result right, and ends cleanly
#   default  tb_ring with the default dispositions: SIGTERM on mac-b's rank mid-traffic ends the
#            job, and every queue pair and memory region is released (the signalled rank
#            released its own before the signal took effect; mpirun ends the others with SIGTERM)
# Nothing is left held afterwards.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: signal.sh 4.1|5.0}"
mt_require
mt_build tb_signal
mt_cluster p2p

stop_job()
{
    mt_job_stop
    pkill -KILL -f "$MT_BIN/tb_(signal|ring)" 2>/dev/null && sleep 0.5
}
MT_JOB_STOP=stop_job
TC_BEFORE_DOWN=stop_job

# rank_pid HOST PROGRAM: the pid of PROGRAM's process on a simulated Mac.
rank_pid()
{
    local p
    for p in $(pgrep -f "$MT_BIN/$2"); do
        if [ "$(ip netns identify "$p" 2>/dev/null)" = "$TC_PREFIX$1" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# await_job NAME SECONDS: the background job ends within SECONDS (exit status in JOB_RC).
await_job()
{
    JOB_RC=
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$MT_JOB_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$MT_JOB_PID" 2>/dev/null; then
        fail "$1: the job still ran $2 s after the signal"
        stop_job
        return 1
    fi
    wait "$MT_JOB_PID"
    JOB_RC=$?
    MT_JOB_PID=
}

# own: the application's own handler and SIG_IGN are left alone.
if mt_job_start own 4 1 "tbtest signal: running" -- tb_signal; then
    pid=$(rank_pid mac-b tb_signal) || fatal "own: no rank on mac-b"
    kill -HUP "$pid"
    sleep 0.5
    kill -TERM "$pid"
    if await_job own 60; then
        check "own: mpirun exit status $JOB_RC (0): the transport outlived SIGHUP and SIGTERM" \
            test "$JOB_RC" -eq 0 || grep -E "FAIL|tbrdma|rror" "$MT_OUT" | head -10 | sed 's/^/    | /'
        expect "own: every rank's verdict" 4 "$(grep -c "^tbtest signal: rank [0-9]* of 4 OK" "$MT_OUT")"
        check_grep "own: 50 rounds after the signal" "$MT_OUT" "^tbtest signal: [0-9]+ rounds, 50 after"
        mt_frames_back own 4 && pass "own: every rank got every frame back"
    fi
    mt_nothing_held "own"
fi

# default: the signal ends the rank, after tbrdma released what it held.
if mt_ring_start default 4 60; then
    pid=$(rank_pid mac-b tb_ring) || fatal "default: no rank on mac-b"
    sleep 1
    kill -TERM "$pid"
    if await_job default 20; then
        check "default: mpirun exit status $JOB_RC (non-zero)" test "$JOB_RC" -ne 0
    fi
    check_nogrep "default: no tbrdma invariant failed (checking builds)" "$MT_OUT" \
        "tbrdma: internal check failed"
    sleep 1
    mt_nothing_held "default: after SIGTERM"
fi
finish
