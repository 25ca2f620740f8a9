# shellcheck shell=bash
# lib.sh: shared part of the MPI tests of tbrdma's data path on the simulated Macs (sourced).
#
# A test picks an Open MPI flavour (mt_flavour 4.1|5.0), builds the MPI programs of this
# directory for it (mt_build), brings up its own cluster of simulated Macs (mt_cluster), runs
# programs with only tbrdma between Macs (mt_run), and proves tbrdma carried the traffic: the
# simulator's per-device counters moved on every cable of the job (mt_counters_moved), and no
# queue pair or memory region is left held (mt_nothing_held). Verdicts: test/lib/check.sh.
#
#   4.1  the host's Open MPI 4.1.4: programs built with mpicc, launched by `tbcluster mpirun`,
#        shared memory BTL vader, one-sided through osc/pt2pt
#   5.0  Open MPI 5.0.7 in the Debian 13 chroot (test/ompi5): programs built with its mpicc,
#        launched by test/ompi5/cluster-mpirun.sh, shared memory BTL sm, one-sided through
#        osc/rdma's active-message emulation over tbrdma

# shellcheck source=../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"
# shellcheck source=../lib/cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

MT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MT_REPO=$(cd "$MT_DIR/../.." && pwd)
MT_TBCLUSTER=$MT_REPO/test/sim/tbcluster
export TBSIMCTL=$MT_REPO/build/test/sim/tbsimctl
MT_PROGRAMS="tb_pingpong tb_coll tb_p2p tb_rma tb_thread tb_ring"
MT_TIMEOUT=${MT_TIMEOUT:-300}
MT_OUT=
MT_MESH_ARGS=()
MT_WRAP=() # a command each rank runs its program under (valgrind)
MT_BTL=${MT_BTL:-} # another BTL list than tbrdma's (a reference run), see mt_btl
MT_BTL_ARGS=() # that transport's parameters

# mt_flavour 4.1|5.0: sets MT_FLAVOUR, MT_BUILD (the plugin's build), MT_BIN (programs),
# MT_SM (shared memory BTL), MT_OSC (one-sided arguments), MT_MPICC (word list).
mt_flavour()
{
    MT_FLAVOUR=$1
    case "$MT_FLAVOUR" in
    4.1)
        MT_BUILD=$MT_REPO/build
        MT_MPICC=(mpicc)
        MT_SM=vader
        MT_OSC=(--mca osc pt2pt)
        ;;
    5.0)
        MT_BUILD=$MT_REPO/build/ompi5/obj
        MT_MPICC=("$MT_REPO/test/ompi5/in-chroot.sh" mpicc)
        MT_SM=sm
        MT_OSC=(--mca osc rdma)
        ;;
    *) fatal "unknown Open MPI flavour '$MT_FLAVOUR' (4.1 or 5.0)" ;;
    esac
    MT_BUILD=${MT_BUILD_DIR:-$MT_BUILD} # another build of the plugin (e.g. with AddressSanitizer)
    MT_BIN=$MT_REPO/build/test/mpi/$MT_FLAVOUR
    MT_PLUGIN=$MT_BUILD/plugin/.libs
    # Open MPI's components, then tbrdma's BTL and its coll component (off unless its priority is set).
    MT_COMPONENTS=SYS_DEFAULT:$MT_PLUGIN:$MT_BUILD/plugin/coll/.libs
    MT_SIMLIB=$MT_BUILD/test/sim/.libs/libtbsim.so
    CHECK_NAME="$(basename "$0" .sh) ($MT_FLAVOUR${MT_VARIANT:+, $MT_VARIANT})"
}

# mt_require: root, namespaces, the flavour's plugin and simulator built.
mt_require()
{
    skip_unless_netns
    local f
    for f in "$MT_PLUGIN/mca_btl_tbrdma.so" "$MT_SIMLIB" "$TBSIMCTL"; do
        [ -e "$f" ] || fatal "missing $f (build first: ./build.sh, test/ompi5/build.sh)"
    done
    if [ 5.0 = "$MT_FLAVOUR" ] && [ ! -x "$MT_REPO/test/ompi5/in-chroot.sh" ]; then
        fatal "no Open MPI 5.0 chroot helper"
    fi
}

# mt_build [PROGRAM...]: the MPI programs of test/mpi for the flavour (MT_PROGRAMS and these),
# into MT_BIN (again when a source or header changed). Programs named in MT_INTERPOSE export
# their functions (-rdynamic): tb_collalg.h's stand-ins for Open MPI's algorithms.
mt_build()
{
    local p h flags stale
    mkdir -p "$MT_BIN"
    for p in $MT_PROGRAMS "$@"; do
        stale=0
        [ ! -x "$MT_BIN/$p" ] || [ "$MT_DIR/$p.c" -nt "$MT_BIN/$p" ] && stale=1
        for h in "$MT_DIR"/*.h; do
            [ "$h" -nt "$MT_BIN/$p" ] && stale=1
        done
        flags=()
        [[ " ${MT_INTERPOSE:-} " == *" $p "* ]] && flags=(-rdynamic -ldl)
        if [ "$stale" = 1 ]; then
            "${MT_MPICC[@]}" -O2 -Wall -o "$MT_BIN/$p" "$MT_DIR/$p.c" -lpthread -lm "${flags[@]}" \
                || fatal "$p.c does not build with the $MT_FLAVOUR mpicc"
        fi
    done
}

# mt_cluster ADDRESSING [TBCLUSTER-UP-ARGS...]: 4 simulated Macs (or --hosts N), private to
# this test; link-local addressing gets a mesh file naming the cables (MT_MESH_ARGS).
mt_cluster()
{
    local addressing=$1 mesh
    shift
    tc_init m 10.95
    tc_up --hosts 4 --addressing "$addressing" "$@" || fatal "tbcluster up failed"
    # every rank, however launched, keeps its slot ledger records in the cluster's own directory
    export OMPI_MCA_btl_tbrdma_ledger_dir
    OMPI_MCA_btl_tbrdma_ledger_dir=$(mt_ledger_dir)
    MT_MESH_ARGS=()
    if [ linklocal = "$addressing" ]; then
        mesh=$TBSIM_DIR/mesh.txt
        sed -n 's/^cable //p' "$TBSIM_DIR/topology" \
            | while read -r _ ha ia hb ib; do echo "$ha:rdma_$ia $hb:rdma_$ib"; done >"$mesh"
        MT_MESH_ARGS=(--mca btl_tbrdma_mesh_file "$mesh")
    fi
}

# mt_launch NP SLOTS MPIRUN-ARGS...: mpirun on the cluster for the flavour. Processes are not
# bound to cores: every simulated Mac would bind its first rank to core 0 of this one machine,
# and two busy-polling ranks sharing a core take turns of a scheduler tick (4 ms) each. The
# simulated Macs hold more ranks than this machine has cores, which Open MPI cannot see (each
# Mac has its own slots), so idle ranks are told to yield the core (mpi_yield_when_idle, what
# Open MPI sets by itself on an oversubscribed node; MT_YIELD=0 turns it off, MT_YIELD=none
# leaves it unset: Open MPI's and tbrdma's own choice).
mt_launch()
{
    local np=$1 slots=$2 dog rc
    shift 2
    set -- --bind-to none "$@"
    [ none = "${MT_YIELD:-1}" ] || set -- --mca mpi_yield_when_idle "${MT_YIELD:-1}" "$@"
    # a mutant of the mutable build (test/mutate/plugin.sh) is chosen in every rank
    [ -z "${TBRDMA_MUTANT:-}" ] || set -- -x TBRDMA_MUTANT "$@"
    # a job about to be stopped for its time says what its processes wait in, first (the
    # watchdog's own stderr is quiet: bash would print "Terminated" when its sleep is stopped)
    (
        exec 3>&2 2>/dev/null
        sleep $((MT_TIMEOUT > 4 ? MT_TIMEOUT - 2 : 2)) && mt_hang_report 2>&3
    ) &
    dog=$!
    if [ 5.0 = "$MT_FLAVOUR" ]; then
        timeout -k 10 "$MT_TIMEOUT" "$MT_REPO/test/ompi5/cluster-mpirun.sh" --np "$np" \
            --slots "$slots" -- "$@"
    else
        timeout -k 10 "$MT_TIMEOUT" "$MT_TBCLUSTER" mpirun --np "$np" --slots "$slots" -- "$@"
    fi
    rc=$?
    pkill -P "$dog" 2>/dev/null
    kill "$dog" 2>/dev/null
    wait "$dog" 2>/dev/null
    return $rc
}

# mt_hang_report: to stderr, the job's processes (launcher and ranks) and what each thread of a
# rank waits in (wchan), for a job that runs out of its time (MT_TIMEOUT).
mt_hang_report()
{
    local p t
    echo "tbtest: the job still runs near its limit of ${MT_TIMEOUT} s; its processes:"
    ps -eo pid,ppid,stat,wchan:28,etime,args | grep -E "tb_|mpirun|prterun|prted|orted" \
        | grep -v grep | cut -c1-200
    for p in $(pgrep -f "$MT_BIN/tb_"); do
        for t in /proc/"$p"/task/*; do
            echo "  pid $p thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)): waits in $(cat "$t/wchan" 2>/dev/null)"
        done
    done
} >&2

# mt_split WORDS... -- COMMAND...: MT_ARGS gets the words before --, MT_CMD the command after it.
mt_split()
{
    MT_ARGS=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        MT_ARGS+=("$1")
        shift
    done
    shift
    MT_CMD=("$@")
}

# mt_launch_btl NP SLOTS MPIRUN-ARGS...: mt_launch with pml ob1 and only tbrdma between Macs
# (mt_btl; MT_BTL and MT_BTL_ARGS make it a reference run over another transport), tbrdma against
# the simulator, printing its counters at finalize.
mt_launch_btl()
{
    local np=$1 slots=$2
    shift 2
    mt_launch "$np" "$slots" --map-by node --mca pml ob1 --mca btl "$(mt_btl "$slots")" \
        "${MT_BTL_ARGS[@]}" --mca opal_mca_base_component_path "$MT_COMPONENTS" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_stats 1 \
        --mca btl_tbrdma_ledger_dir "$(mt_ledger_dir)" "${MT_MESH_ARGS[@]}" "${MT_OSC[@]}" "$@"
}

# mt_ledger_dir: the cluster's own slot ledger (btl_tbrdma_ledger_dir), in its state directory.
mt_ledger_dir()
{
    echo "$TBSIM_DIR/ledger"
}

# mt_ledger_records: the slot ledger's records now, one a line.
mt_ledger_records()
{
    cat "$(mt_ledger_dir)"/* 2>/dev/null
}

# mt_app NAME NP SLOTS DIR [MPIRUN-ARGS...] -- PROGRAM [ARGS...]: an unmodified MPI program (a
# third-party code) run by mt_launch_btl in directory DIR, output in $MT_OUT, seconds in
# MT_SECS. Checks mpirun's exit status and, over tbrdma, that every rank ran tbrdma and got
# every frame back.
mt_app()
{
    local name=$1 np=$2 slots=$3 dir=$4 t0=$SECONDS rc
    mt_split "${@:5}"
    MT_OUT=$TC_TMP/${name//[^A-Za-z0-9_.-]/_}.out
    (cd "$dir" && mt_launch_btl "$np" "$slots" --wdir "$dir" "${MT_ARGS[@]}" "${MT_CMD[@]}") \
        >"$MT_OUT" 2>&1
    rc=$?
    MT_SECS=$((SECONDS - t0))
    if ! check "$name: mpirun exit status 0 ($MT_SECS s)" test "$rc" -eq 0; then
        tail -20 "$MT_OUT" | sed 's/^/    | /'
        return 1
    fi
    [ -z "${MT_BTL:-}" ] || return 0
    mt_frames_back "$name" "$np" && pass "$name: tbrdma ran in all $np ranks and got every frame back"
}

# mt_hpcc_verdicts NAME FILE [RA-FRACTION]: HPCC's own checks in its output FILE (hpccoutf.txt):
# HPL's residual check passed and none failed, nothing FAILED, STREAM validated, RandomAccess
# without errors (or, given RA-FRACTION, MPIRandomAccess' wrong locations at most that fraction:
# HPCC allows 0.01, and with 8 ranks its count varies from run to run over vader alone), PTRANS
# passed, and the summary says Success=1.
mt_hpcc_verdicts()
{
    local name=$1 out=$2
    if [ ! -f "$out" ]; then
        fail "$name: no $(basename "$out") was written"
        return 1
    fi
    check_grep "$name: HPL passed its residual check" "$out" "^\|\|Ax-b\|\|.* PASSED"
    check_grep "$name: no HPL run failed its residual check" "$out" \
        "^ +0 tests completed and failed residual checks"
    check_nogrep "$name: no check FAILED" "$out" "FAILED"
    check_grep "$name: STREAM validated" "$out" "^Solution Validates"
    if [ -n "${3:-}" ]; then
        check "$name: $(grep '^MPIRandomAccess_ErrorsFraction=' "$out") (at most $3)" \
            awk -F= -v max="$3" '$1 == "MPIRandomAccess_ErrorsFraction" {f = 1; bad = $2 > max}
                END {exit !(f && !bad)}' "$out"
    else
        expect "$name: RandomAccess errors" "MPIRandomAccess_Errors=0" \
            "$(grep '^MPIRandomAccess_Errors=' "$out")"
    fi
    check_grep "$name: PTRANS passed" "$out" "^WALL .* PASSED"
    expect "$name: the summary's verdict" "Success=1" "$(grep '^Success=' "$out")"
}

# mt_btl SLOTS: the BTL list that leaves Macs to tbrdma alone (MT_BTL overrides it: a reference
# run over another transport).
mt_btl()
{
    if [ -n "${MT_BTL:-}" ]; then
        echo "$MT_BTL"
        return
    fi
    if [ "$1" -gt 1 ]; then
        echo "self,$MT_SM,tbrdma"
    else
        echo "self,tbrdma"
    fi
}

# The start-up lines btl_tbrdma_verbose 1 prints for every device and rank (left out of a
# failure's summary, which they would fill).
MT_VERBOSE_INFO="^tbrdma: using: |^tbrdma mesh: |the cables' queue pairs are the tbrdma agent's|"
MT_VERBOSE_INFO+="idle ranks yield the core|mpi_yield_when_idle left as set"

# mt_run NAME NP SLOTS [MPIRUN-ARGS...] -- PROGRAM [ARGS...]: PROGRAM (under MT_WRAP) over tbrdma (pml ob1,
# tbrdma and self/sm only, against the simulator), output kept in $MT_OUT; checks mpirun's
# exit status and that every rank printed its OK line.
mt_run()
{
    local name=$1 np=$2 slots=$3 rc n t0 secs
    mt_split "${@:4}"
    MT_OUT=$TC_TMP/$name.out
    t0=$(date +%s.%N)
    mt_launch_btl "$np" "$slots" "${MT_ARGS[@]}" "${MT_WRAP[@]}" "$MT_BIN/${MT_CMD[0]}" \
        "${MT_CMD[@]:1}" >"$MT_OUT" 2>&1
    rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    n=$(grep -c "^tbtest .*: rank [0-9]* of $np OK" "$MT_OUT")
    if [ "$rc" -eq 0 ] && [ "$n" -eq "$np" ] && mt_frames_back "$name" "$np"; then
        pass "$name: $np ranks OK over tbrdma ($(grep -o '[0-9]* checks' "$MT_OUT" | head -1), $secs s)"
        return 0
    fi
    fail "$name: mpirun exit $rc after $secs s, $n of $np ranks OK"
    # what went wrong, not what btl_tbrdma_verbose says of every device and rank at start-up
    grep -aE "FAIL|tbrdma|rror|abort" "$MT_OUT" | grep -Ev "$MT_VERBOSE_INFO" | head -30 \
        | sed 's/^/    | /'
    return 1
}

# mt_frames_back NAME NP: every rank printed its tbrdma counters at finalize (tbrdma ran in it)
# and returned every send frame to its pools (no frame leaked).
mt_frames_back()
{
    local stats leaked
    stats=$(grep -c "^tbrdma stats: " "$MT_OUT")
    leaked=$(mt_stat "frames not returned")
    [ "$stats" -eq "$2" ] && [ "$leaked" -eq 0 ] && return 0
    echo "    | $1: $stats of $2 ranks printed tbrdma stats, $leaked frames not returned"
    return 1
}

# mt_counters FILE: the simulator's per-device counters now.
mt_counters()
{
    "$TBSIMCTL" counters >"$1"
}

# mt_counter_sum NAME FILE: the sum over every device of counter NAME in a counters snapshot.
mt_counter_sum()
{
    awk -v k="$1" '{for (i = 3; i < NF; i += 2) if ($i == k) s += $(i + 1)} END {printf "%.0f\n", s}' "$2"
}

# mt_counters_moved WHAT BEFORE AFTER MIN_BYTES: every device of the cluster sent at least
# MIN_BYTES between the two snapshots (tbrdma carried the traffic on every cable).
mt_counters_moved()
{
    local what=$1 idle
    idle=$(join <(awk '{print $2, $6}' "$2" | sort) <(awk '{print $2, $6}' "$3" | sort) \
        | awk -v min="$4" '$3 - $2 < min {print $1 " sent " $3 - $2 " bytes"}')
    if [ -z "$idle" ] && [ -s "$3" ]; then
        pass "$what: every cable carried at least $4 bytes each way (simulator counters)"
        return 0
    fi
    fail "$what: devices below $4 bytes: $(echo "$idle" | tr '\n' ';')"
    return 1
}

# mt_counters_total WHAT BEFORE AFTER MIN_BYTES: the devices of the cluster sent at least
# MIN_BYTES in all between the two snapshots.
mt_counters_total()
{
    local sent
    sent=$(($(mt_counter_sum tx_bytes "$3") - $(mt_counter_sum tx_bytes "$2")))
    check "$1: the cables carried $sent bytes in all (at least $4)" test "$sent" -ge "$4"
}

# mt_nothing_held WHAT: no queue pair or memory region of the simulator is held.
# mt_owners_gone [SECONDS]: waits (10 s unless told) until no process that holds a simulator slot
# is still alive: a rank that mpirun killed or that ends on an error may still be releasing its
# queue pairs, or tearing down its memory, when mpirun has returned and pgrep no longer shows it.
mt_owners_gone()
{
    local pids p alive
    for _ in $(seq $((${1:-10} * 10))); do
        pids=$("$TBSIMCTL" held 2>/dev/null | grep -o 'pid [0-9]*' | sort -u | cut -d' ' -f2)
        alive=
        for p in $pids; do
            kill -0 "$p" 2>/dev/null && alive=1
        done
        [ -n "$alive" ] || return 0
        sleep 0.1
    done
    return 1
}

# mt_reclaim: frees the simulator slots of the processes that are gone, and their slot ledger
# records, once every owner has finished exiting (the simulator frees a slot only when its
# owner no longer exists, as a Mac's kernel does at the process's end).
mt_reclaim()
{
    local f pid
    mt_owners_gone
    "$TBSIMCTL" reclaim >/dev/null 2>&1
    # the slots came back: the ledger's records of the dead go too, as at a Mac's restart
    for f in "$(mt_ledger_dir)"/*; do
        pid=${f##*.}
        [ -f "$f" ] && ! kill -0 "$pid" 2>/dev/null && rm -f "$f"
    done
    return 0
}

# mt_nothing_held NAME: the simulator holds no queue pair or memory region, and the slot ledger
# has no record left.
mt_nothing_held()
{
    local out records
    out=$("$TBSIMCTL" held)
    if [ $? -ne 0 ]; then
        fail "$1: $(echo "$out" | tr '\n' ';')"
        return 1
    fi
    # what no process holds, no slot ledger record may claim (a record outlives only the dead,
    # whose slots are then still held)
    records=$(mt_ledger_records)
    if [ -n "$records" ]; then
        fail "$1: nothing held, but slot ledger records are left: $(echo "$records" | tr '\n' ';')"
        return 1
    fi
    pass "$1: no queue pair or memory region left held, no slot ledger record"
}

# mt_stat FIELD: the sum over every rank's final "tbrdma stats:" and "tbrdma zcopy:" lines (not
# the "... after N s:" ones of btl_tbrdma_stats_interval_s) of the number before FIELD
# ("retransmitted", "bad checksum", ...) in the last run's output.
mt_stat()
{
    grep -E '^tbrdma (stats|zcopy): ' "$MT_OUT" | grep -o "[0-9]* $1" | awk '{s += $1} END {print s + 0}'
}

# ---- a long job to break: tb_ring in the background (liveness.sh, stripe.sh) -------------------
MT_JOB_PID=
MT_LIMIT=15 # seconds from a fault to the end of the job

# mt_job_stop: kills the background job (its launcher; tbcluster down ends what is left).
mt_job_stop()
{
    [ -n "$MT_JOB_PID" ] && kill -KILL "$MT_JOB_PID" 2>/dev/null
    MT_JOB_PID=
}

# mt_job_start NAME NP SLOTS READY [MPIRUN-ARGS...] -- PROGRAM [ARGS...]: PROGRAM over tbrdma
# (mt_launch_btl: pml ob1, only tbrdma between Macs, its counters at finalize) in the background
# (MT_JOB_PID, output in $MT_OUT); waits until the output has a line matching READY.
mt_job_start()
{
    local name=$1 np=$2 slots=$3 ready=$4
    mt_split "${@:5}"
    MT_OUT=$TC_TMP/$name.out
    : >"$MT_OUT"
    mt_launch_btl "$np" "$slots" "${MT_ARGS[@]}" "$MT_BIN/${MT_CMD[0]}" "${MT_CMD[@]:1}" \
        >"$MT_OUT" 2>&1 &
    MT_JOB_PID=$!
    for _ in $(seq 600); do
        grep -qE "$ready" "$MT_OUT" && return 0
        kill -0 "$MT_JOB_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$MT_JOB_PID" 2>/dev/null; then
        fail "$name: the job did not start within 60 s (no line matching '$ready')"
    else
        wait "$MT_JOB_PID"
        fail "$name: the job ended (exit $?) before it started"
    fi
    sed 's/^/    | /' "$MT_OUT" | head -20
    return 1
}

# mt_pid_on HOST PATTERN: the pid of a process of a simulated Mac whose command line matches
# PATTERN (pgrep -f), the first one found.
mt_pid_on()
{
    local p
    for p in $(pgrep -f "$2"); do
        if [ "$(ip netns identify "$p" 2>/dev/null)" = "$TC_PREFIX$1" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

# mt_ring_start NAME NP [TB_RING-ARGS...]: tb_ring over tbrdma (btl self,tbrdma, one rank per
# Mac) in the background (mt_job_start).
mt_ring_start()
{
    mt_job_start "$1" "$2" 1 "tbtest ring: running" -- tb_ring "${@:3}"
}

# mt_await_end CASE T0 REGEX [WHAT]: the background job ends non-zero within MT_LIMIT s of T0
# (the fault), its output matching REGEX (WHAT it says, by default the lost peer and the cable);
# else it is stopped (MT_JOB_STOP, default mt_job_stop).
mt_await_end()
{
    local name=$1 t0=$2 rc secs
    for _ in $(seq $((MT_LIMIT * 10 + 100))); do
        kill -0 "$MT_JOB_PID" 2>/dev/null || break
        sleep 0.1
    done
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
    if kill -0 "$MT_JOB_PID" 2>/dev/null; then
        fail "$name: the job still runs ${secs} s after the fault"
        "${MT_JOB_STOP:-mt_job_stop}"
        return 1
    fi
    wait "$MT_JOB_PID"
    rc=$?
    MT_JOB_PID=
    check "$name: mpirun ended with exit $rc (non-zero) ${secs} s after the fault (limit $MT_LIMIT s)" \
        awk -v s="$secs" -v r="$rc" -v l="$MT_LIMIT" 'BEGIN {exit !(r != 0 && s <= l)}'
    if ! check_grep "$name: the message names ${4:-the lost peer and the cable}" "$MT_OUT" "$3"; then
        grep -vE "^\s*$" "$MT_OUT" | head -30 | sed 's/^/    | /'
    fi
    sleep 1 # the launcher's last kills
    mt_owners_gone 15
}
