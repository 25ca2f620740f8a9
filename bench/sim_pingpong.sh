#!/usr/bin/env bash
# bench/sim_pingpong.sh: raw UC verbs over the fabric simulator (libtbsim) between two simulated
# Macs (tbcluster, p2p addressing): round-trip latency of small messages and bandwidth of large
# ones, with uc_pingpong (ping-pong: rtt and 2*size*iters/time; stream: one-way, 32 sends in
# flight; -x: the transport alone, no payload check). Prints a table. No pass/fail on timing: the numbers describe this machine's memory
# copies and scheduler, not Thunderbolt (Apple: ~4.2 us one-way at 64 B, ~9.4 GB/s at 64 KiB).
# Needs root and network namespaces (exit 77 otherwise) and a build (./build.sh).
# Options: -q  fewer iterations (a quick look).
set -uo pipefail
source "$(cd "$(dirname "$0")" && pwd)/../test/sim/tests/sim_lib.sh"
sim_init sim_pingpong_bench

scale=1
if [ "${1:-}" = -q ]; then
    scale=10
fi

sim_up --hosts 2 --addressing p2p >/dev/null

# Usage: measure MODE SIZE ITERS : prints one table row.
measure()
{
    local mode=$1 size=$2 iters=$(($3 / scale)) line xflag=-x
    sim_pair mac-b mac-a uc_pingpong "" "-m $mode -s $size -n $iters $xflag" >/dev/null
    if [ "$SIM_CLI_RC" != 0 ] || [ "$SIM_SRV_RC" != 0 ]; then
        printf '%-9s %9s %7s  failed (see below)\n' "$mode" "$size" "$iters"
        cat "$TC_TMP/client.out" "$TC_TMP/server.out"
        return
    fi
    line=$(grep -E '^uc_pingpong: .*(iters of .* us|MB/s sent$)' "$TC_TMP/client.out" | tail -1)
    if [ "$mode" = pingpong ]; then
        echo "$line" | sed -n 's/.*rtt \([0-9.]*\) us, latency \([0-9.]*\) us, bandwidth \([0-9.]*\) MB\/s/\1 \2 \3/p' |
            while read -r rtt lat bw; do
                printf '%-9s %9s %7s %10s %10s %10s\n' "$mode" "$size" "$iters" "$rtt" "$lat" "$bw"
            done
    else
        echo "$line" | sed -n 's/.*; \([0-9.]*\) MB\/s sent$/\1/p' |
            while read -r bw; do
                printf '%-9s %9s %7s %10s %10s %10s\n' "$mode" "$size" "$iters" - - "$bw"
            done
    fi
}

echo "libtbsim UC ping-pong, 2 simulated hosts, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %9s %7s %10s %10s %10s\n' mode bytes iters rtt_us lat_us MB/s
measure pingpong 8 20000
measure pingpong 64 20000
measure pingpong 4096 10000
measure pingpong 65536 2000
measure pingpong 1048576 200
measure stream 4096 20000
measure stream 65536 5000
measure stream 1048576 500
exit 0
