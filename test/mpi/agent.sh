#!/usr/bin/env bash
# agent.sh FLAVOUR: the per-Mac agent (btl_tbrdma_agent; docs/design.md, "Many ranks per Mac: a
# per-Mac agent") on 4 simulated Macs, 4 ranks per Mac (btl self,vader|sm,tbrdma; the ranks' own
# queue pairs would need 4 x 4 x 2 = 32 per device, so the default "auto" takes the agents):
#   qps       while tb_ring runs, every device holds 2 queue pairs and 1 memory region, all its
#             Mac's agent's; the job ends right; afterwards no agent, segment or slot is left
#   kill9     SIGKILL of a rank of mac-b: the job ends within 15 s, naming the rank and mac-b;
#             its agent frees what the rank used and ends with the job: nothing held, no segment
#             left, and the next job runs at once
#   abort     a rank calls MPI_Abort: the same
#   agent9    SIGKILL of mac-b's agent: every rank ends within 15 s, the message naming the
#             agent; the dead agent's 2 queue pairs per device stay held (Apple's device frees
#             nothing for a dead process), the next job still runs beside them, and
#             tbsimctl reclaim (a restart) frees them
#   yield     4 ranks and the agent on a Mac of this host's cores (2): with mpi_yield_when_idle
#             unset, tbrdma makes every rank's idle waits yield the core (busy-polling ranks take
#             the agent's turns); set by the user, it is left as set; at 1 rank per Mac through
#             the agent (2 processes, 2 cores) the ranks keep busy-polling
#   together  two jobs at once on the same Macs, payloads naming their job: both right, each
#             through its own agents (4 queue pairs per device while both run)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: agent.sh 4.1|5.0}"
mt_require
mt_build
mt_cluster p2p
# shellcheck disable=SC2034 # read by lib.sh and cluster.sh
MT_LIMIT=15
AGENT=$MT_BUILD/plugin/tbrdma-agent
[ -x "$AGENT" ] || fatal "missing $AGENT (build first)"

stop_job()
{
    mt_job_stop
    pkill -KILL -f "$MT_BIN/tb_ring" 2>/dev/null && sleep 0.5
}
# shellcheck disable=SC2034 # read by lib.sh and cluster.sh
MT_JOB_STOP=stop_job TC_BEFORE_DOWN=stop_job

# device_use: "DEVICE QPS MRS" per device of the cluster now (tbsimctl show).
device_use()
{
    "$TBSIMCTL" show | awk '$1 == "device" {split($4, q, "/"); split($6, m, "/"); print $2, q[1], m[1]}'
}

# agents_of: the pids of the tbrdma-agent processes running on this test's Macs, one a line.
agents_of()
{
    local p
    for p in $(pgrep -f "tbrdma-agent --segment"); do
        case "$(ip netns identify "$p" 2>/dev/null)" in "$TC_PREFIX"*) echo "$p" ;; esac
    done
}

# segments: the agent segments in /dev/shm now, one a line (names /tbr.*).
segments()
{
    local f
    for f in /dev/shm/tbr.*; do
        [ -e "$f" ] && echo "${f##*/}"
    done
}
SEGMENTS_BEFORE=$(segments) # another test's, or a crashed run's: not this test's to judge

# nothing_left NAME: no agent runs, no segment of a job is left, nothing is held.
nothing_left()
{
    local new
    for _ in $(seq 50); do
        [ -z "$(agents_of)" ] && break
        sleep 0.1
    done
    check "$1: no tbrdma agent left running" test -z "$(agents_of)"
    new=$(comm -13 <(sort <<<"$SEGMENTS_BEFORE") <(segments | sort) | tr '\n' ' ')
    check "$1: no agent segment left in /dev/shm (${new:-none})" test -z "$new"
    mt_nothing_held "$1"
}

# qps: 2 queue pairs and 1 memory region per device, the agents'.
if mt_job_start qps 16 4 "tbtest ring: running" --mca btl_tbrdma_verbose 1 -- tb_ring 5; then
    use=$(device_use)
    echo "$use" | sed 's/^/    | /'
    expect "qps: devices with exactly 2 queue pairs and 1 memory region while 16 ranks run" 12 \
        "$(awk '$2 == 2 && $3 == 1' <<<"$use" | wc -l)"
    owners=$("$TBSIMCTL" held | grep -o 'pid [0-9]*' | sort -u | cut -d' ' -f2 | sort)
    expect "qps: every slot is held by one of the 4 agents" "$(agents_of | sort | tr '\n' ' ')" \
        "$(tr '\n' ' ' <<<"$owners")"
    expect "qps: agents running, one per Mac" 4 "$(wc -w <<<"$owners")"
    for _ in $(seq 600); do kill -0 "$MT_JOB_PID" 2>/dev/null || break; sleep 0.1; done
    wait "$MT_JOB_PID"
    check "qps: the job ends right (mpirun exit $?)" test "$(grep -c 'tbtest ring: rank .* of 16 OK' "$MT_OUT")" -eq 16
    check_grep "qps: the ranks said the agent holds the cables (btl_tbrdma_verbose 1)" "$MT_OUT" \
        "the cables' queue pairs are the tbrdma agent's"
    MT_JOB_PID=
    nothing_left "qps: after the job"
fi

# yield_case NAME NP SLOTS MT_YIELD WANT [MPIRUN-ARGS...]: tb_ring at SLOTS ranks per Mac with
# mpi_yield_when_idle given as MT_YIELD (none: not given); WANT ranks report idle waits that yield.
yield_case()
{
    local name=$1 np=$2 slots=$3 yield=$4 want=$5
    shift 5
    MT_YIELD=$yield TBTEST_SHOW_YIELD=1 mt_run "$name" "$np" "$slots" -x TBTEST_SHOW_YIELD \
        --mca btl_tbrdma_verbose 1 "$@" -- tb_ring 1
    expect "$name: ranks whose idle waits yield the core" "$want" \
        "$(grep -c '^tbtest ring: rank [0-9]* yield_when_idle 1$' "$MT_OUT")"
}
cores=$(nproc) # every simulated Mac sees this host's cores
yield_case yield-crowded 16 4 none $((4 + 1 > cores ? 16 : 0))
[ $((4 + 1)) -le "$cores" ] || check_grep "yield-crowded: the ranks say why (btl_tbrdma_verbose 1)" \
    "$MT_OUT" "4 ranks and the agent on $cores cores: idle ranks yield the core"
yield_case yield-user-set 16 4 0 0
check_grep "yield-user-set: the ranks say it is left as set" "$MT_OUT" \
    "mpi_yield_when_idle left as set .false."
yield_case yield-room 4 1 none $((1 + 1 > cores ? 4 : 0)) --mca btl_tbrdma_agent on
check_grep "yield-room: the agent was used at 1 rank per Mac" "$MT_OUT" \
    "the cables' queue pairs are the tbrdma agent's"

# one_dies NAME HOW: a rank of mac-b dies (HOW: kill9 or abort) while tb_ring runs.
one_dies()
{
    local name=$1 pid t0
    if [ abort = "$2" ]; then
        export TBTEST_ABORT_RANK=5 # mac-b's second rank (--map-by node)
        mt_job_start "$name" 16 4 "tbtest ring: running" -x TBTEST_ABORT_RANK -- tb_ring 30 || return
        unset TBTEST_ABORT_RANK
        for _ in $(seq 100); do grep -q "calls MPI_Abort" "$MT_OUT" && break; sleep 0.1; done
        t0=$(date +%s.%N)
        mt_await_end "$name" "$t0" "MPI_ABORT was invoked on rank 5 " "the rank that aborted"
    else
        mt_job_start "$name" 16 4 "tbtest ring: running" -- tb_ring 30 || return
        pid=$(mt_pid_on mac-b "$MT_BIN/tb_ring") || fatal "$name: no rank on mac-b"
        t0=$(date +%s.%N)
        kill -KILL "$pid"
        mt_await_end "$name" "$t0" "noticed that process rank [0-9]+ with PID $pid on node mac-b" \
            "the killed rank and its Mac"
    fi
    nothing_left "$name: after the job"
    mt_run "$name-next" 16 4 -- tb_ring 1
}
one_dies kill9 kill9
one_dies abort abort

# agent9: the agent is killed; the ranks name it; its slots stay held until a restart.
if mt_job_start agent9 16 4 "tbtest ring: running" --mca btl_tbrdma_verbose 1 -- tb_ring 30; then
    apid=$(mt_pid_on mac-b "tbrdma-agent --segment") || fatal "agent9: no agent on mac-b"
    t0=$(date +%s.%N)
    kill -KILL "$apid"
    mt_await_end agent9 "$t0" "host mac-b \\(\\[\\[[0-9]+,[0-9]+\\],[0-9]+\\]\\): the tbrdma agent of this Mac \\(pid $apid\\) has died" \
        "the dead agent and its Mac"
    stop_job
    held=$("$TBSIMCTL" held | grep -c " qp .* pid ${apid}[ ,]")
    expect "agent9: queue pairs the dead agent holds (2 per cable of mac-b)" 6 "$held"
    # its slot ledger record names them: tbrdma-info on mac-b says so for each device
    info=$("$MT_TBCLUSTER" exec mac-b -- "$MT_REPO/build/tools/tbrdma-info" --parsable \
        --verbs-lib "$MT_REPO/build/test/sim/.libs/libtbsim.so" --ledger-dir "$(mt_ledger_dir)")
    expect "agent9: tbrdma-info on mac-b: devices with 2 queue pairs held by the dead agent" 3 \
        "$(grep -c '^held host=mac-b device=rdma_en[0-9]* port=1 qps=2 ' <<<"$info")"
    mt_run agent9-next 16 4 -- tb_ring 1
    mt_reclaim
    nothing_left "agent9: after tbsimctl reclaim"
fi

# together: two jobs at once, each with its own agents.
pids=()
for j in A B; do
    (
        [ 4.1 != "$MT_FLAVOUR" ] || export OMPI_MCA_orte_tmpdir_base=$TC_TMP/tmp.$j
        mkdir -p "$TC_TMP/tmp.$j"
        TBTEST_JOB=$j mt_launch_btl 16 4 -x TBTEST_JOB "$MT_BIN/tb_ring" 3 262144
    ) >"$TC_TMP/together.$j" 2>&1 &
    pids+=($!)
done
most=0
while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null; do
    now=$(device_use | awk '$2 > m {m = $2} END {print m + 0}')
    [ "$now" -gt "$most" ] && most=$now
    sleep 0.2
done
check "together: 4 queue pairs at most on a device while both jobs ran, 2 per job's agent ($most)" \
    test "$most" -eq 4
for i in 0 1; do
    wait "${pids[$i]}"
    rc=$?
    j=$([ "$i" = 0 ] && echo A || echo B)
    check "together: job $j completes (mpirun exit $rc)" test "$rc" -eq 0
    expect "together: job $j, every rank right" 16 \
        "$(grep -c 'tbtest ring: rank .* of 16 OK' "$TC_TMP/together.$j")"
    check_nogrep "together: job $j, no wrong byte" "$TC_TMP/together.$j" "tbtest ring: rank .*: FAIL"
done
nothing_left "together: after both jobs"
finish
