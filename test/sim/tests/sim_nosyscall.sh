#!/bin/bash
# sim_nosyscall.sh: Apple's ibv_post_send/ibv_post_recv/ibv_poll_cq make no system call, and
# neither may libtbsim's, or CPU-cost comparisons on the simulator would mean nothing. The
# client of a UC ping-pong is run under strace twice, for 100 and for 20000 round trips; the
# set-up is the same, so every system call of the extra 19900 round trips (39800 posts and at
# least as many polls) would show in the difference. The side channel's connect retries make
# the set-up vary by a few dozen calls, hence the margin. The periodic port-state re-read is
# stretched past the run (TBSIM_LINK_RECHECK_MS) so that only the hot path is counted.
# Counts, not time, decide the verdict.

. "$(dirname "$0")/sim_lib.sh"

sim_init sim_nosyscall
command -v strace >/dev/null || skip "strace is not installed"
sim_up --hosts 2 --addressing p2p

# Usage: counted N : total system calls of a client doing N round trips.
counted()
{
    local n=$1 pid
    sim_on mac-a uc_pingpong -n "$n" >"$TC_TMP/server.$n.out" 2>&1 &
    pid=$!
    # The client starts once the server listens: no connect retries in the count.
    sim_listening mac-a "$SIM_PORT"
    timeout "$SIM_TIMEOUT" "$TBCLUSTER" exec mac-b -- env TBSIM_LINK_RECHECK_MS=3600000 \
        strace -f -qq -c -o "$TC_TMP/strace.$n" \
        env LD_PRELOAD="$SIM_LIB" "$SIM_BUILD/uc_pingpong" -n "$n" mac-a \
        >"$TC_TMP/client.$n.out" 2>&1
    wait "$pid"
    sed "s/^/  client($n)| /" "$TC_TMP/client.$n.out" >&2
    awk '$NF == "total" { print $4 }' "$TC_TMP/strace.$n"
}

few=$(counted 100)
check_grep "100 round trips ran" "$TC_TMP/client.100.out" "^uc_pingpong: 100 iters"
many=$(counted 20000)
check_grep "20000 round trips ran" "$TC_TMP/client.20000.out" "^uc_pingpong: 20000 iters"
echo "system calls: $few for 100 round trips, $many for 20000"
grep -v '^ *$' "$TC_TMP/strace.20000" | sed 's/^/  strace(20000)| /'
check "counted system calls for both runs" test -n "$few" -a -n "$many"
extra=$((many - few))
# Measured: exactly 0. One system call per 2000 extra round trips would already fail.
check "19900 extra round trips add $extra system calls (at most 10)" test "$extra" -le 10
finish
