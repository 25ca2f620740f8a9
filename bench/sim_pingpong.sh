#!/usr/bin/env bash
# bench/sim_pingpong.sh [-q] [--link SPEC]: raw UC verbs over the fabric simulator (libtbsim)
# between two simulated Macs joined by two cables (tbcluster, p2p addressing), with uc_pingpong
# (-x: the transport alone, no payload check): the raw verbs limit that tbrdma is compared with.
# Prints a table:
#   pingpong  the mean round trip (rtt_us) and half round trip (lat_us), the bandwidth
#             2 * size * iters / time (MB/s), and the median half round trip (med_us);
#   stream    one-way, up to 32 sends in flight: the receive rate, from the first arrival to the
#             last (what the cable carried; the sender's own rate also counts what is in flight);
#   stream2   a stream on each cable at once, both paused half-way and resumed together: the sum
#             of their receive rates over the second halves (two cables against one).
# --link SPEC gives the cables the link model (tbcluster up --link: "on" = 8 Gbit/s and 4 us
# per direction, or rate_gbps=G,latency_us=U; test/sim/README.md, "Link model"); without it
# the cables are as fast as the machine copies, and the numbers describe this machine's memory
# copies and scheduler, not Thunderbolt (Apple: ~4.2 us one-way at 64 B, ~9.4 GB/s at 64 KiB).
# 16773120 B is the largest message (4095 frames, about 16 MiB); its rows need about 2.5 GB of
# memory (uc_pingpong's buffers and the receive files). No pass/fail on timing.
# Needs root and network namespaces (exit 77 otherwise) and a build (./build.sh).
# Options: -q  fewer iterations (a quick look).
set -uo pipefail
source "$(cd "$(dirname "$0")" && pwd)/../test/sim/tests/sim_lib.sh"
sim_init sim_pingpong_bench

scale=1
link=()
while [ $# -gt 0 ]; do
    case $1 in
    -q) scale=10; shift ;;
    --link) link=(--link "${2:?--link needs SPEC}"); shift 2 ;;
    *) echo "usage: bench/sim_pingpong.sh [-q] [--link SPEC]" >&2; exit 2 ;;
    esac
done

sim_up --hosts 2 --topology double:a-b --addressing p2p "${link[@]}" >/dev/null

# Usage: row MODE SIZE ITERS RTT LAT MBPS MED : one table row (the columns bench/baselines.sh
# reads first).
row()
{
    printf '%-9s %9s %6s %10s %10s %10s %10s\n' "$@"
}

# Usage: measure MODE SIZE ITERS : one table row (pingpong or stream, on c1).
measure()
{
    local mode=$1 size=$2 iters=$(($3 / scale)) out=$TC_TMP/client.out rtt lat bw med
    [ "$iters" -ge 2 ] || iters=2
    sim_pair mac-b mac-a uc_pingpong "-d rdma_en2" "-d rdma_en2 -m $mode -s $size -n $iters -x" \
        >/dev/null
    if [ "$SIM_CLI_RC" != 0 ] || [ "$SIM_SRV_RC" != 0 ]; then
        row "$mode" "$size" "$iters" failed - - -
        cat "$out" "$TC_TMP/server.out"
        return
    fi
    if [ "$mode" = pingpong ]; then
        read -r rtt lat bw < <(sed -n 's/.*rtt \([0-9.]*\) us, latency \([0-9.]*\) us, bandwidth \([0-9.]*\) MB\/s/\1 \2 \3/p' "$out")
        med=$(sed -n 's/^uc_pingpong: half round trip min .* us, median \([0-9.]*\) us$/\1/p' "$out")
        row "$mode" "$size" "$iters" "$rtt" "$lat" "$bw" "$med"
    else
        bw=$(sed -n 's/^uc_pingpong: stream: \([0-9.]*\) MB\/s received .*/\1/p' "$out")
        row "$mode" "$size" "$iters" - - "$bw" -
    fi
}

# Usage: measure2 SIZE ITERS : one stream per cable at once (c1 and c2), the sum of their rates
# over the second halves.
measure2()
{
    local size=$1 iters=$(($2 / scale))
    [ "$iters" -ge 4 ] || iters=4
    SIM_STREAM_PAUSE=1 sim_streams "mac-b mac-a rdma_en2 $size $iters" \
        "mac-b mac-a rdma_en3 $size $iters" >"$TC_TMP/streams.out"
    if [ -z "${SIM_RX2[0]}" ] || [ -z "${SIM_RX2[1]}" ]; then
        row stream2 "$size" "$iters" failed - - -
        cat "$TC_TMP/streams.out"
        return
    fi
    row stream2 "$size" "$iters" - - "$(awk -v a="${SIM_RX2[0]}" -v b="${SIM_RX2[1]}" \
        'BEGIN { printf "%.2f", a + b }')" -
}

echo "libtbsim UC ping-pong, 2 simulated hosts, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^cable' <("$TBSIMCTL" show) | sed 's/ drop=.* rate_gbps=/ rate_gbps=/'
row mode bytes iters rtt_us lat_us MB/s med_us
measure pingpong 8 20000
measure pingpong 64 20000
measure pingpong 4096 10000
measure pingpong 65536 2000
measure pingpong 1048576 200
measure pingpong 4194304 50
measure pingpong 16773120 10
measure stream 4096 20000
measure stream 65536 5000
measure stream 1048576 500
measure stream 4194304 100
measure stream 16773120 16
measure2 4194304 100
measure2 16773120 16
exit 0
