# shellcheck shell=bash
# sim_lib.sh: helpers sourced by the sim_*.sh tests of libtbsim (the simulated Thunderbolt RDMA
# provider). Not a test: run directly, it says so and exits 77.
#
# sim_init gives each test its own tbcluster prefix, management /24 and TBSIM_DIR, skips (77)
# without root or namespaces, fails when the simulator is not built, and takes the cluster down
# on exit. Programs run on a host with LD_PRELOAD=libtbsim.so in front of libibverbs.
# The verdict helpers (check, check_grep, finish, ...) come from test/lib/check.sh.

# shellcheck disable=SC2034 # (SIM_CLI_RC, SIM_SRV_RC: read by the tests that source this file)
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "sim_lib.sh is sourced by the sim_*.sh tests; it is not a test itself"
    exit 77
fi

# shellcheck source=../../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/check.sh"
# shellcheck source=../../lib/cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/cluster.sh"

SIM_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIM_TOP=$(cd "$SIM_TESTS_DIR/../../.." && pwd)
SIM_BUILD=${TBRDMA_BUILD:-$SIM_TOP/build}/test/sim
SIM_LIB=$SIM_BUILD/.libs/libtbsim.so
TBCLUSTER=$SIM_TESTS_DIR/../tbcluster
TBSIMCTL=$SIM_BUILD/tbsimctl
export TBSIMCTL
SIM_TIMEOUT=120 # hang guard per program: a UC peer that is gone never completes
# The TCP port of uc_pingpong's side channel.
SIM_PORT=$(sed -n 's/^#define EX_TCP_PORT *\([0-9]*\).*/\1/p' \
    "$SIM_TESTS_DIR/../examples/ex_common.h")
SIM_PIDS=()

# Usage: sim_init NAME
sim_init()
{
    SIM_NAME=$1
    CHECK_NAME=$SIM_NAME
    skip_unless_netns
    local f
    for f in "$SIM_LIB" "$TBSIMCTL" "$SIM_BUILD/tbsim_devinfo" "$SIM_BUILD/uc_pingpong" \
        "$SIM_BUILD/tbsim_limits"; do
        if [ ! -e "$f" ]; then
            fatal "$f is not built (run ./build.sh)"
        fi
    done
    TC_BEFORE_DOWN=sim_stop_programs
    tc_init s 10.98
}

# Before the cluster goes down: the background programs a test started (SIM_PIDS).
sim_stop_programs()
{
    local pid
    for pid in "${SIM_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
}

# Usage: sim_up TBCLUSTER-UP-ARGS...
sim_up()
{
    echo "+ tbcluster up $*"
    if ! tc_up "$@"; then
        fatal "tbcluster up $*"
    fi
}

sim_down()
{
    "$TBCLUSTER" down --prefix "$TC_PREFIX" >/dev/null 2>&1 || true
}

# Usage: sim_on HOST PROGRAM ARGS... : runs a simulator program (from the build dir) on HOST.
sim_on()
{
    local host=$1 prog=$2
    shift 2
    timeout "$SIM_TIMEOUT" "$TBCLUSTER" exec "$host" -- env LD_PRELOAD="$SIM_LIB" \
        "$SIM_BUILD/$prog" "$@"
}

# Usage: sim_sh HOST COMMAND... : runs a plain command on HOST.
sim_sh()
{
    local host=$1
    shift
    "$TBCLUSTER" exec "$host" -- "$@"
}

# Usage: sim_pair SERVER_HOST CLIENT_HOST PROGRAM "SERVER_ARGS" "CLIENT_ARGS"
# Runs the server in the background and the client in front; output in $TC_TMP/server.out and
# $TC_TMP/client.out, exit codes in SIM_SRV_RC and SIM_CLI_RC.
sim_pair()
{
    local srv=$1 cli=$2 prog=$3 sargs=$4 cargs=$5 pid
    # shellcheck disable=SC2086 # the argument strings are word lists
    sim_on "$srv" "$prog" $sargs >"$TC_TMP/server.out" 2>&1 &
    pid=$!
    # shellcheck disable=SC2086
    sim_on "$cli" "$prog" $cargs "$srv" >"$TC_TMP/client.out" 2>&1
    SIM_CLI_RC=$?
    wait "$pid"
    SIM_SRV_RC=$?
    sed 's/^/  client| /' "$TC_TMP/client.out"
    sed 's/^/  server| /' "$TC_TMP/server.out"
}

# Usage: sim_stream_pause : starts a stream of 200 messages of 4 KiB from mac-a to mac-b
# (uc_pingpong -m stream -P) and returns once the client has paused after 100 of them, so the
# caller can change the fabric half-way. Output in $TC_TMP/server.out and $TC_TMP/client.out.
sim_stream_pause()
{
    local fifo=$TC_TMP/pause.fifo _
    rm -f "$fifo"
    mkfifo "$fifo"
    sim_on mac-b uc_pingpong >"$TC_TMP/server.out" 2>&1 &
    SIM_SRV_PID=$!
    sim_on mac-a uc_pingpong -m stream -s 4096 -n 200 -P mac-b <"$fifo" \
        >"$TC_TMP/client.out" 2>&1 &
    SIM_CLI_PID=$!
    exec 9>"$fifo"
    # Waits for the client's word, not for a time: the loop only bounds a client that died.
    for _ in $(seq 300); do
        grep -q 'paused after' "$TC_TMP/client.out" && break
        sleep 0.1
    done
}

# Usage: sim_stream_resume : lets the paused client send the rest and waits for both sides;
# exit codes in SIM_CLI_RC and SIM_SRV_RC, outputs shown as sim_pair shows them.
sim_stream_resume()
{
    echo go >&9
    exec 9>&-
    wait "$SIM_CLI_PID"
    SIM_CLI_RC=$?
    wait "$SIM_SRV_PID"
    SIM_SRV_RC=$?
    sed 's/^/  client| /' "$TC_TMP/client.out"
    sed 's/^/  server| /' "$TC_TMP/server.out"
}

# Usage: sim_listening HOST PORT : waits (at most 10 s) until a server listens on HOST:PORT.
sim_listening()
{
    local _
    for _ in $(seq 100); do
        sim_sh "$1" ss -Hltn "sport = :$2" | grep -q LISTEN && return 0
        sleep 0.1
    done
    return 1
}

# Usage: sim_streams_release N : once the N paused clients all say so (at most 30 s), runs
# $SIM_STREAM_AT_PAUSE (if set) and lets them all go on at the same moment.
sim_streams_release()
{
    local k fd _
    for _ in $(seq 300); do
        [ "$(cat "$TC_TMP"/cli.*.out | grep -c 'paused after')" -ge "$1" ] && break
        sleep 0.1
    done
    [ -z "${SIM_STREAM_AT_PAUSE:-}" ] || "$SIM_STREAM_AT_PAUSE"
    for k in $(seq 0 $(($1 - 1))); do
        fd=${SIM_GO_FDS[k]}
        echo go >&"$fd"
        exec {fd}>&-
    done
}

# Usage: sim_streams "SERVER CLIENT DEVICE SIZE COUNT"... : one uc_pingpong stream per argument,
# all at once (the clients start together once every server listens; stream k uses TCP port
# SIM_PORT + k on its server). With SIM_STREAM_PAUSE set, each client pauses after half of its
# messages and all go on together (sim_streams_release), so their second halves run truly at
# once whatever the start-up of each took. SIM_RATE[k] is the receive rate (MB/s, first to last
# arrival) of stream k, empty when it failed; SIM_RX2[k] the same over the second half of its
# arrivals. Outputs in $TC_TMP/{cli,srv}.k.out.
sim_streams()
{
    local k srv cli dev size n pids=() pid rc=0 in fd
    SIM_GO_FDS=()
    SIM_RATE=()
    SIM_RX2=()
    rm -f "$TC_TMP"/cli.*.out "$TC_TMP"/go.*
    for k in $(seq 0 $(($# - 1))); do
        read -r srv cli dev size n <<<"${*:k+1:1}"
        sim_on "$srv" uc_pingpong -d "$dev" -p $((SIM_PORT + k)) >"$TC_TMP/srv.$k.out" 2>&1 &
        pids+=($!)
        sim_listening "$srv" $((SIM_PORT + k)) || echo "  the server of stream $k does not listen"
    done
    for k in $(seq 0 $(($# - 1))); do
        read -r srv cli dev size n <<<"${*:k+1:1}"
        in=/dev/null
        if [ -n "${SIM_STREAM_PAUSE:-}" ]; then
            in=$TC_TMP/go.$k
            mkfifo "$in"
            exec {fd}<>"$in" # held open: the client's open does not wait for a writer
            SIM_GO_FDS[k]=$fd
        fi
        sim_on "$cli" uc_pingpong -d "$dev" -p $((SIM_PORT + k)) -x -m stream -s "$size" -n "$n" \
            ${SIM_STREAM_PAUSE:+-P} "$srv" <"$in" >"$TC_TMP/cli.$k.out" 2>&1 &
        pids+=($!)
    done
    [ -z "${SIM_STREAM_PAUSE:-}" ] || sim_streams_release $#
    for pid in "${pids[@]}"; do
        wait "$pid" || rc=1
    done
    for k in $(seq 0 $(($# - 1))); do
        SIM_RATE[k]=$(sed -n 's/^uc_pingpong: stream: \([0-9.]*\) MB\/s received .*/\1/p' \
            "$TC_TMP/cli.$k.out")
        SIM_RX2[k]=$(sed -n 's/.* MB\/s received .*, \([0-9.]*\) MB\/s over the second half$/\1/p' \
            "$TC_TMP/cli.$k.out")
        if [ "$rc" != 0 ] || [ -z "${SIM_RATE[k]}" ]; then
            sed "s/^/  stream $k client| /" "$TC_TMP/cli.$k.out"
            sed "s/^/  stream $k server| /" "$TC_TMP/srv.$k.out"
            SIM_RATE[k]=
        fi
        echo "  stream $k (${*:k+1:1}): ${SIM_RATE[k]:-?} MB/s received," \
            "${SIM_RX2[k]:-?} MB/s over the second half"
    done
}

# Usage: sim_devinfo HOST [ARGS...] : tbsim_devinfo output in $TC_TMP/devinfo.out (also shown).
sim_devinfo()
{
    local host=$1
    shift
    sim_on "$host" tbsim_devinfo "$@" >"$TC_TMP/devinfo.out" 2>&1
    sed "s/^/  $host| /" "$TC_TMP/devinfo.out"
}

# First IPv4 (without prefix) of interface $2 on host $1.
sim_ipv4()
{
    sim_sh "$1" ip -4 -o addr show dev "$2" | awk '{print $4}' | head -1 | cut -d/ -f1
}
