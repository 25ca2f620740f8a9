# shellcheck shell=bash
# suite_raw.sh: the raw verbs limit for bench/run (sourced after test/mpi/lib.sh): UC SEND/RECV
# with neither MPI nor tbrdma, between mac-a (client) and mac-b (server) of the simulated
# cluster, through libtbsim, on cable rdma_en2 (and rdma_en3 for two cables):
#   latency    uc_pingpong -m pingpong -x: the mean half round trip
#   bandwidth  uc_stream: one way, 32 messages in flight per cable; usec per message
#   msgrate    the same stream: between one pair of Macs the message rate is the stream's
#   bibw       uc_stream -b: both ways at once, one process per Mac (as MPI's ranks)
# Bandwidth on two cables is uc_stream on both at once. uc_stream, not uc_pingpong's stream,
# gives every bandwidth: one program for one way, both ways and two cables, and the higher limit
# (it takes up to 16 completions per poll). uc_pingpong -x and uc_stream check every byte_len,
# not the payload: the transport alone. Each run starts with RAW_WARM untimed messages
# (uc_pingpong -w, uc_stream -w): the simulator's receive file is sparse shared memory, and the
# first message into each of its data regions (as many as messages in flight) pays its page
# faults (at 4 MiB they made a stream 9 times slower). Both programs run under BENCH_RT (chrt -r 1 when bench/run
# measures at real-time priority, as tb_bench -R does for MPI ranks). A run that failed is run
# once more (another session's real-time spinners can hold a side off the CPU for a while). Messages above RAW_MAX
# (Apple's largest: 4095 frames) are measured at RAW_MAX, in the row of the size asked for; none
# above 16 MiB.
# raw_measure appends rows "test,bytes,usec,MB/s" to a file; a failure is said on stderr and
# leaves no row.

RAW_MAX=16773120
RAW_WARM=64 # untimed messages first: one into each slot of the simulator's receive ring
RAW_UC=$MT_REPO/build/test/sim/uc_pingpong
RAW_STREAM=$MT_REPO/build/bench/uc_stream

# raw_on HOST PROGRAM ARGS...: a raw verbs program on a simulated Mac, over libtbsim.
raw_on()
{
    local host=$1
    shift
    "$MT_TBCLUSTER" exec "$host" -- "${BENCH_RT[@]}" env LD_PRELOAD="$MT_SIMLIB" "$@"
}

# raw_pair LOG PROGRAM ARGS...: the server on mac-b, the client on mac-a (both with ARGS but
# uc_pingpong's -w, the client's); the client's output in LOG, the server's in LOG.server.
# Fails when either side failed.
raw_pair()
{
    local log=$1 pid rc
    shift
    if [ "$1" = "$RAW_UC" ]; then
        raw_on mac-b "$1" -d rdma_en2 >"$log.server" 2>&1 &
    else
        raw_on mac-b "$@" >"$log.server" 2>&1 &
    fi
    pid=$!
    raw_on mac-a "$@" mac-b >"$log" 2>&1
    rc=$?
    wait "$pid" || rc=1
    return "$rc"
}

# bench_iters BYTES: iterations for that many bytes per iteration (tb_bench's iters_for).
bench_iters()
{
    awk -v b="$1" -v s="$BENCH_SCALE" 'BEGIN {
        n = 2e8 / (b + 2000) * s; print (n < 2 ? 2 : (n > 20000 ? 20000 : int(n))) }'
}

# bench_window BYTES: messages per window (tb_bench's window_for).
bench_window()
{
    awk -v b="$1" 'BEGIN { w = int(16777216 / b); print (w > 32 ? 32 : (w < 2 ? 2 : w)) }'
}

# bench_messages BYTES: messages of a stream of that size (tb_bench's iterations x window).
bench_messages()
{
    local w
    w=$(bench_window "$1")
    echo $(($(bench_iters $(($1 * w))) * w))
}

# raw_run TEST MSG CABLES LOG: one raw run of TEST with MSG-byte messages; prints usec per message
# (of one direction for bibw, over every cable for two cables).
raw_run()
{
    local test=$1 m=$2 devs=rdma_en2 log=$4 mbs
    [ "$3" = 2 ] && devs=rdma_en2,rdma_en3
    case $test in
    latency)
        raw_pair "$log" "$RAW_UC" -d rdma_en2 -m pingpong -s "$m" -n "$(bench_iters "$m")" -x \
            -w "$RAW_WARM" || return 1
        sed -n 's/^uc_pingpong: .* iters of .* latency \([0-9.]*\) us.*/\1/p' "$log"
        return
        ;;
    bandwidth | msgrate)
        raw_pair "$log" "$RAW_STREAM" -d "$devs" -s "$m" -n "$(bench_messages "$m")" -w "$RAW_WARM"
        ;;
    bibw)
        raw_pair "$log" "$RAW_STREAM" -d "$devs" -s "$m" -n "$(bench_messages "$m")" -w "$RAW_WARM" -b
        ;;
    esac || return 1
    mbs=$(sed -n 's/^uc_stream: .*: \([0-9.]*\) MB\/s$/\1/p' "$log")
    awk -v m="$m" -v r="$mbs" -v k="$([ "$test" = bibw ] && echo 2 || echo 1)" \
        'BEGIN { if (r > 0) printf "%.3f\n", k * m / r }'
}

# raw_measure TEST BYTES CABLES OUT: one raw row "TEST,BYTES,usec,MB/s" appended to OUT.
raw_measure()
{
    local test=$1 bytes=$2 cables=$3 out=$4 m us log=$BENCH_WORK/raw.$1.$2.$3.log
    [ "$bytes" -le $((16 << 20)) ] || return 0
    m=$((bytes < RAW_MAX ? bytes : RAW_MAX))
    us=$(raw_run "$test" "$m" "$cables" "$log") || us=$(raw_run "$test" "$m" "$cables" "$log")
    if [ -z "$us" ]; then
        echo "bench: raw $test of $m B on $cables cable(s) failed twice:" >&2
        tail -n 5 "$log" "$log.server" >&2
        return 1
    fi
    awk -v t="$test" -v b="$bytes" -v m="$m" -v u="$us" -v k="$([ "$test" = bibw ] && echo 2 || echo 1)" \
        'BEGIN { printf "%s,%s,%s,%.6g\n", t, b, u, k * m / u }' >>"$out"
}
