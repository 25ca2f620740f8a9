#!/usr/bin/env bash
# outage.sh FLAVOUR SLOTS: the cable between two simulated Macs goes silent (it loses every
# frame: tbsimctl fault drop=1) while tb_outage keeps every class of tbrdma's traffic in flight
# over it (1-frame messages, a train, 1 MiB bulk, 4 MiB zero-copy where the budget allows, and an
# MPI_Allreduce), with SLOTS ranks per Mac (btl self,tbrdma, or self,vader|sm,tbrdma):
#   short  outages of 10 ms, 100 ms, 0.5 s and 2 s, 1.5 s apart, all shorter than the peer
#          timeout (btl_tbrdma_peer_timeout_ms, 5 s): the job must go on after each one, end
#          when told to, with every result right, and every frame back
#   long   an outage longer than the peer timeout: every rank must end, mpirun non-zero, within
#          15 s of the outage's start, with tbrdma's message naming the lost peer and the cable
#   starve the cable loses only messages of 8 KiB and more (bulk frames and probes, zero-copy
#          chunks: drop_min=8192) from then on, while 1-frame messages still pass both ways, so
#          the peer keeps answering probes: the job must end within 15 s all the same, with the
#          message naming the bulk channel that no longer carries data
#   repro  (one rank per Mac) issue 24's reproduction: 1 MiB messages one way, each answered
#          with 1 byte, and eight outages of 0.4 s, 1.5 s apart (it hung in 5 of 6 trials): the
#          job must go on after each and end when told to, every byte right
#   small  (one rank per Mac) two 2 s outages under 1-frame messages only: nothing on the bulk
#          channel can carry the 1-frame channel's grants, so its recovery rests on its own control
#          reserve and forced acknowledgements
#   start  the cable loses everything from before the job starts: the connection handshake
#          gives up after the peer timeout (its own limit, or liveness, whichever comes first),
#          and the job ends within 30 s naming the cable
# Never a hang: each job has its own bound (MT_TIMEOUT, and tb_outage's own), and a job still
# running at its bound fails the test. Afterwards nothing is held in the simulator.
set -uo pipefail
MT_VARIANT="$2 per Mac"
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: outage.sh 4.1|5.0 SLOTS}"
slots=${2:?usage: outage.sh 4.1|5.0 SLOTS}
mt_require
mt_build tb_outage
mt_cluster p2p --hosts 2
np=$((2 * slots))
cable=c1
OUTAGES=${OUTAGES:-0.01 0.1 0.5 2}
MT_TIMEOUT=90

# The stop files: in /dev/shm, which every simulated Mac and Open MPI 5.0's chroot share.
STOP_DIR=/dev/shm/tb_outage.$$
mkdir -p "$STOP_DIR"

# stop_job: kills the job (a hang) and frees the slots its killed ranks held.
stop_job()
{
    mt_job_stop
    pkill -KILL -f "$MT_BIN/tb_outage" 2>/dev/null
    for _ in $(seq 50); do
        pgrep -f "$MT_BIN/tb_outage" >/dev/null || break
        sleep 0.1
    done
    mt_reclaim
}

# ranks_gone NAME: every rank of the ended job exits within 15 s (mpirun's kills reach them
# asynchronously); then the slots of the dead are reclaimed. A rank alive after that fails.
ranks_gone()
{
    for _ in $(seq 150); do
        pgrep -f "$MT_BIN/tb_outage" >/dev/null || break
        sleep 0.1
    done
    check_not "$1: every rank exited within 15 s of the job's end" pgrep -f "$MT_BIN/tb_outage"
    stop_job
}

cleanup()
{
    stop_job
    rm -rf "$STOP_DIR"
}
MT_JOB_STOP=stop_job
TC_BEFORE_DOWN=cleanup

# lost_now: frames the simulator lost on the cable's devices so far.
lost_now()
{
    mt_counters "$TC_TMP/c"
    mt_counter_sum lost "$TC_TMP/c"
}

# outage SECONDS: the cable loses every frame for SECONDS.
outage()
{
    "$TBSIMCTL" fault "$cable" drop=1 >/dev/null || fatal "tbsimctl fault $cable drop=1 failed"
    sleep "$1"
    "$TBSIMCTL" fault "$cable" drop=0 >/dev/null || fatal "tbsimctl fault $cable drop=0 failed"
}

# await_job NAME SECONDS: the background job ends within SECONDS; its exit status in JOB_RC
# (none: it was still running, stopped, and the test failed).
await_job()
{
    JOB_RC=
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$MT_JOB_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$MT_JOB_PID" 2>/dev/null; then
        fail "$1: the job still ran $2 s later (a hang): stopped"
        grep -aE "tbtest|tbrdma" "$MT_OUT" | tail -20 | sed 's/^/    | /'
        stop_job
        return 1
    fi
    wait "$MT_JOB_PID"
    JOB_RC=$?
    MT_JOB_PID=
}

# short [repro|small]: every outage shorter than the peer timeout is survived (repro: issue 24's
# reproduction, eight outages of 0.4 s under 1 MiB messages answered with 1 byte; small: two of
# 2 s under 1-frame messages only).
short()
{
    local name=${1:-short} stop=$STOP_DIR/${1:-short} before after d try rounds done_rounds
    local outages=$OUTAGES args=()
    case "${1:-}" in
    repro) outages="0.4 0.4 0.4 0.4 0.4 0.4 0.4 0.4" args=(1 repro) ;;
    small) outages="2 2" args=(1 small) ;;
    esac
    rm -f "$stop"
    mt_job_start "$name" "$np" "$slots" "tbtest outage: running" -- tb_outage "$stop" 80 "${args[@]}" \
        || return
    sleep 1
    # An outage counts once it met frames in flight (a short one on a loaded machine may fall
    # between two rounds): up to 5 tries, 1.5 s apart.
    for d in $outages; do
        for try in 1 2 3 4 5; do
            before=$(lost_now)
            outage "$d"
            after=$(lost_now)
            sleep 1.5
            [ "$after" -gt "$before" ] && break
        done
        check "$name: a ${d} s outage lost frames in flight ($((after - before)), try $try)" \
            test "$after" -gt "$before"
    done
    rounds=$(sed -n 's/^tbtest outage: round \([0-9]*\)$/\1/p' "$MT_OUT" | tail -1)
    touch "$stop"
    await_job "$name" 30 || return
    check "$name: mpirun exit status 0" test "$JOB_RC" -eq 0 \
        || grep -aE "FAIL|tbrdma|rror|abort" "$MT_OUT" | head -20 | sed 's/^/    | /'
    expect "$name: every rank's verdict" "$np" "$(grep -ac "^tbtest outage: rank [0-9]* of $np OK" "$MT_OUT")"
    done_rounds=$(sed -n 's/^tbtest outage: \([0-9]*\) rounds in .*/\1/p' "$MT_OUT")
    check "$name: the job went on after the last outage (round ${rounds:-none} then, ${done_rounds:-no} rounds in all)" \
        test "${done_rounds:-0}" -gt "${rounds:-0}"
    mt_frames_back "$name" "$np" && pass "$name: every rank ran tbrdma and got every frame back"
    echo "    | $(mt_stat timeouts) retransmission timeouts, $(mt_stat retransmitted) frames retransmitted," \
        "$(mt_stat "credit probes") credit probes"
}

# long: an outage longer than the peer timeout ends the job with a named error.
long()
{
    local name=long stop=$STOP_DIR/long t0 secs
    rm -f "$stop"
    mt_job_start long "$np" "$slots" "tbtest outage: running" -- tb_outage "$stop" 80 || return
    sleep 1
    t0=$(date +%s.%N)
    "$TBSIMCTL" fault "$cable" drop=1 >/dev/null || fatal "tbsimctl fault $cable drop=1 failed"
    await_job long 25
    "$TBSIMCTL" fault "$cable" drop=0 >/dev/null
    [ -n "$JOB_RC" ] || return
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    check "long: mpirun ended with exit $JOB_RC (non-zero) ${secs} s after the outage began (limit 15 s)" \
        awk -v s="$secs" -v r="$JOB_RC" 'BEGIN {exit !(r != 0 && s <= 15)}'
    if ! check_grep "long: the message names the lost peer and the cable" "$MT_OUT" \
        'lost peer .* on host mac-[ab], over the cable mac-[ab] rdma_en[0-9]+ \(interface en[0-9]+\) <-> mac-[ab] rdma_en'; then
        grep -avE "^\s*$" "$MT_OUT" | head -30 | sed 's/^/    | /'
    fi
    ranks_gone "$name"
}

# starve: large messages lost for good, small ones not: only the unacknowledged-frames watchdog
# can end the wait (the peer is heard all along).
starve()
{
    local name=starve stop=$STOP_DIR/starve t0 secs
    rm -f "$stop"
    mt_job_start starve "$np" "$slots" "tbtest outage: running" -- tb_outage "$stop" 80 || return
    sleep 1
    t0=$(date +%s.%N)
    "$TBSIMCTL" fault "$cable" drop=1 drop_min=8192 >/dev/null || fatal "tbsimctl fault failed"
    await_job starve 25
    "$TBSIMCTL" fault "$cable" drop=0 drop_min=0 >/dev/null
    [ -n "$JOB_RC" ] || return
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    check "starve: mpirun ended with exit $JOB_RC (non-zero) ${secs} s after large messages stopped passing (limit 15 s)" \
        awk -v s="$secs" -v r="$JOB_RC" 'BEGIN {exit !(r != 0 && s <= 15)}'
    if ! check_grep "starve: the message names the peer and its bulk channel" "$MT_OUT" \
        'lost peer .* on host mac-[ab], over the cable .*: its bulk channel acknowledged none of frames'; then
        grep -avE "^\s*$" "$MT_OUT" | head -30 | sed 's/^/    | /'
    fi
    ranks_gone "$name"
}

# start: a cable silent from the start: the handshake's wait is bounded by the peer timeout.
start()
{
    local name=start stop=$STOP_DIR/start t0 secs
    rm -f "$stop"
    "$TBSIMCTL" fault "$cable" drop=1 >/dev/null || fatal "tbsimctl fault $cable drop=1 failed"
    t0=$(date +%s.%N)
    MT_OUT=$TC_TMP/start.out
    mt_launch_btl "$np" "$slots" "$MT_BIN/tb_outage" "$stop" 20 >"$MT_OUT" 2>&1 &
    MT_JOB_PID=$!
    await_job start 45
    "$TBSIMCTL" fault "$cable" drop=0 >/dev/null
    [ -n "$JOB_RC" ] || return
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    check "start: mpirun ended with exit $JOB_RC (non-zero) after ${secs} s (limit 30 s)" \
        awk -v s="$secs" -v r="$JOB_RC" 'BEGIN {exit !(r != 0 && s <= 30)}'
    # the handshake's own limit and the liveness rule both end it at the peer timeout: either says so
    if ! check_grep "start: the message names the cable it could not connect over, and why" "$MT_OUT" \
        'cannot connect to peer .* over the cable mac-[ab] rdma_en[0-9]+ \(interface en[0-9]+\) <-> mac-[ab] rdma_en.*(no answer within [0-9]+ ms .* to the connection handshake|no frame from it for [0-9.]+ s)'; then
        grep -avE "^\s*$" "$MT_OUT" | head -30 | sed 's/^/    | /'
    fi
    ranks_gone "$name"
}

short
mt_nothing_held "after the short outages"
if [ "$slots" = 1 ]; then
    short repro
    mt_nothing_held "after the reproduction"
    short small
    mt_nothing_held "after the outages under small messages"
fi
start
mt_nothing_held "after the silent start (dead processes' slots reclaimed)"
starve
mt_nothing_held "after the large messages starved (dead processes' slots reclaimed)"
long
mt_nothing_held "after the long outage (dead processes' slots reclaimed)"
finish
