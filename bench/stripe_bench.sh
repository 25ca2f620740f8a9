#!/usr/bin/env bash
# bench/stripe_bench.sh [-q] [SIZE] [CSV]: one cable against two, side by side in one run, on 2
# simulated Macs joined by two cables (one rank each, Open MPI 4.1). tb_bench (bench/tb_bench.c)
# measures SIZE (default 16 MiB) messages: ping-pong (latency: half the round trip), a stream of
# 32 in flight (bandwidth) and MPI_Allreduce; "one" runs with btl_tbrdma_stripe 0 (the pair's
# first cable only), "two" with striping (every fragment of a message of SIZE may take either
# cable). The runs alternate (one, two, one, two) and each row keeps its best (of 2 runs x 5
# repeats; -q: x 2, and fewer iterations); printed: MB/s of each and the ratio two/one (1.8 at
# 16 MiB is issue 8's target on a link model). A run may take MT_TIMEOUT s (default here 1200).
#
# Without a link model the simulator's "cable" is a memcpy by the sending process, so a second
# cable adds no bandwidth: both ranks share this machine's 2 cores, and the ratio shows only
# what striping costs. With the link model (docs/design.md, "Multi-cable striping") each cable
# has its own rate and the ratio is the one that matters: STRIPE_BENCH_LINK is passed to
# `tbcluster up --link` (e.g. "on", or "rate_gbps=8,latency_us=4"), extra mpirun arguments come
# from STRIPE_BENCH_ARGS, STRIPE_BENCH_REPEATS overrides the repeats. No pass/fail: timings
# describe this machine.
# Needs root and network namespaces, and ./build.sh done.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
scale=1 repeats=5
if [ "${1:-}" = -q ]; then
    scale=0.25 repeats=2
    shift
fi
repeats=${STRIPE_BENCH_REPEATS:-$repeats}
size=${1:-16777216}
csv=${2:-$repo/build/bench/stripe_bench.csv}
CHECK_NAME=stripe_bench
# shellcheck source=lib.sh
. "$here/lib.sh"
mt_cluster p2p --hosts 2 --topology double:a-b ${STRIPE_BENCH_LINK:+--link "$STRIPE_BENCH_LINK"}
export MT_YIELD=0 # 2 ranks on 2 cores, busy-polling as on a Mac
export MT_TIMEOUT=${MT_TIMEOUT:-1200}
res=$TC_TMP/res
mkdir -p "$res"
read -ra extra <<<"${STRIPE_BENCH_ARGS:-}"

# run NAME STRIPE: tb_bench at SIZE over tbrdma, CSV rows appended to $res/NAME.
run()
{
    local out=$TC_TMP/$1.out
    bench_tb "$out" --mca btl self,tbrdma --mca btl_tbrdma_stripe "$2" --mca btl_tbrdma_stats 1 \
        "${extra[@]}" -- "$size" "$scale" "$size" "$repeats"
    grep -E '^(latency|bandwidth|allreduce),' "$out" >>"$res/$1"
    MT_OUT=$out
    echo "$1: $(mt_stat "on striped cables") data frames on the second cable, $(mt_stat retransmitted) retransmitted, $(mt_stat timeouts) timeouts (both ranks)"
}

for _ in 1 2; do
    run one 0
    run two 1
done
echo "test,bytes,one_us,two_us,one_MBps,two_MBps,two_over_one" >"$csv"
awk -F, -v OFS=, '
    FNR == 1 { f++ }
    { k = $1 "," $2; if (!((f, k) in b) || $4 + 0 < b[f, k] + 0) b[f, k] = $4; keys[k] = 1 }
    END {
        for (k in keys) {
            split(k, kb, ","); o = b[1, k]; t = b[2, k]
            print k, o, t, sprintf("%.1f", kb[2] / o), sprintf("%.1f", kb[2] / t), sprintf("%.2f", o / t)
        }
    }' "$res/one" "$res/two" | sort >>"$csv"
echo "one cable vs two (striped), 2 simulated Macs, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)${STRIPE_BENCH_ARGS:+, $STRIPE_BENCH_ARGS}"
echo "(usec per message: latency = half round trip, bandwidth = in a stream of 32, allreduce = per call; best of 2 runs x $repeats)"
column -s, -t "$csv"
echo "CSV: $csv"
