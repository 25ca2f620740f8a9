#!/usr/bin/env bash
# bench/zcopy_bench.sh [-q] [--link SPEC] [--max BYTES] [CSV]: where zero-copy pays. 2 simulated
# Macs, one rank each, one cable, Open MPI 4.1, checksums on (the default): tb_bench's ping-pong
# (half round trip) and stream (32 in flight, 16 MiB at most: 4 at 4 MiB, 1 at 16 MiB) of the
# rendezvous sizes 96 KiB, 128 KiB, 512 KiB, 1, 2, 4, 8 and 16 MiB up to BYTES (default 4 MiB; smaller
# messages go eager, one way, whatever zero-copy's settings), over
#   copy   btl_tbrdma_zcopy 0: every message copied through tbrdma's frames
#   zc     btl_tbrdma_zcopy 1, btl_tbrdma_zcopy_min 4057: every rendezvous message zero-copy,
#          with the default chunks and window (btl_tbrdma_zcopy_chunk, _window)
#   zc1m   the same with 1 MiB chunks, 2 in flight (the defaults before 512 KiB chunks, 4 in flight)
#   zcw2   zc with 2 chunks in flight (btl_tbrdma_zcopy_window 2): less of a chunk's checksum
#          overlaps the next chunks' wire time
# in one cluster, the four alternated 5 times (-q: 3 times, a tenth of the iterations; tb_bench
# itself keeps the best of 5 runs of each size). Prints per size the best time of each and the
# ratios copy_over_zc, copy_over_zc1m and copy_over_zcw2, the median over the rounds of the ratio measured in the
# same round (paired: a shared machine's load drifts between rounds; > 1: zero-copy is faster),
# and the switch point: the smallest size from which zero-copy is at least as fast as the copy
# path at every larger size, in both tests; that is how btl_tbrdma_zcopy_min's default was chosen
# (docs/design.md). Writes CSV (default build/bench/zcopy_bench.csv). No pass/fail: the numbers
# describe this shared machine and the simulator's memcpy "cable", or with --link the
# simulator's link model (tbcluster up --link SPEC: "on" = 8 Gbit/s and 4 us per direction).
# Needs root and network namespaces, and ./build.sh done.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
scale=1
rounds=5
link=()
max=$((4 << 20))
while [ $# -gt 0 ]; do
    case $1 in
    -q) scale=0.1 rounds=3 && shift ;;
    --link) link=(--link "$2") && shift 2 ;;
    --max) max=$2 && shift 2 ;;
    *) break ;;
    esac
done
csv=${1:-$repo/build/bench/zcopy_bench.csv}
CHECK_NAME=zcopy_bench
export MT_TIMEOUT=${MT_TIMEOUT:-1800} # a run on a loaded machine takes minutes
# shellcheck source=../test/mpi/lib.sh
. "$repo/test/mpi/lib.sh"
mt_flavour 4.1
mt_require
mkdir -p "$repo/build/bench" "$(dirname "$csv")"
# shellcheck source=suite_mpi.sh
. "$here/suite_mpi.sh"
BENCH_BIN=$repo/build/bench/tb_bench-4.1
bin=$BENCH_BIN
mpi_build
mt_cluster p2p --hosts 2 "${link[@]}"
# Busy-polling ranks (MT_YIELD=0, as bench/run between 2 Macs) when the machine is otherwise
# idle; on a shared, oversubscribed machine (load above the core count) they idle-yield instead
# (MT_YIELD=1, Open MPI's own choice when oversubscribed): a spinning rank would hold the core
# its peer needs. The header line says which.
export MT_YIELD=${MT_YIELD:-$(awk -v n="$(nproc)" '{print ($1 > n) ? 1 : 0}' /proc/loadavg)}
res=$TC_TMP/res
mkdir -p "$res"

sizes=$(for b in 98304 131072 524288 1048576 2097152 4194304 8388608 16777216; do
    [ "$b" -gt "$max" ] || printf '%s,' "$b"
done)
sizes=${sizes%,}

# run NAME ARGS...: tb_bench over tbrdma with ARGS (latency and bandwidth of $sizes), CSV rows
# into $res/NAME.N. A peer timeout of a minute: at a load of
# 40 on 2 cores a rank was once silent for 5 s (the default) and the run ended.
run()
{
    local name=$1 n=1
    shift
    while [ -e "$res/$name.$n" ]; do n=$((n + 1)); done
    mt_launch 2 1 --map-by node --mca pml ob1 --mca btl self,tbrdma "$@" \
        --mca btl_tbrdma_peer_timeout_ms 60000 \
        --mca opal_mca_base_component_path "$MT_COMPONENTS" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" \
        "$bin" -t latency,bandwidth -s "$sizes" "$max" "$scale" >"$res/$name.$n" 2>&1 \
        || { echo "zcopy_bench: $name run failed:" >&2; tail -20 "$res/$name.$n" >&2; exit 1; }
}

for _ in $(seq "$rounds"); do
    run copy --mca btl_tbrdma_zcopy 0
    run zc --mca btl_tbrdma_zcopy 1 --mca btl_tbrdma_zcopy_min 4057
    run zc1m --mca btl_tbrdma_zcopy 1 --mca btl_tbrdma_zcopy_min 4057 \
        --mca btl_tbrdma_zcopy_chunk 1048576 --mca btl_tbrdma_zcopy_window 2
    run zcw2 --mca btl_tbrdma_zcopy 1 --mca btl_tbrdma_zcopy_min 4057 --mca btl_tbrdma_zcopy_window 2
done

# rows "variant round test bytes usec" of every run
for f in "$res"/*.*; do
    v=$(basename "$f")
    awk -F, -v v="${v%.*}" -v r="${v##*.}" '($1 == "latency" || $1 == "bandwidth") \
        && $2 ~ /^[0-9]+$/ {print v, r, $1, $2, $4}' "$f"
done >"$TC_TMP/rows"
# per test and size: the best of each variant, and the median over the rounds of copy / zc,
# copy / zc1m and copy / zcw2 measured in the same round (paired: both saw the machine of that
# moment)
awk -v OFS=, '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $3 "," $4; us[$1, $2, k] = $5; keys[k] = 1; rounds[$2] = 1
      if (!(($1, k) in best) || $5 + 0 < best[$1, k] + 0) best[$1, k] = $5 }
    END {
        for (k in keys) {
            pz = ""; pm = ""; pw = ""
            for (r in rounds) {
                if ((("copy", r, k) in us) && (("zc", r, k) in us))
                    pz = pz " " us["copy", r, k] / us["zc", r, k]
                if ((("copy", r, k) in us) && (("zc1m", r, k) in us))
                    pm = pm " " us["copy", r, k] / us["zc1m", r, k]
                if ((("copy", r, k) in us) && (("zcw2", r, k) in us))
                    pw = pw " " us["copy", r, k] / us["zcw2", r, k]
            }
            split(k, kb, ",")
            print k, best["copy", k], best["zc", k], best["zc1m", k], best["zcw2", k],
                sprintf("%.2f", median(pz)), sprintf("%.2f", median(pm)), sprintf("%.2f", median(pw)),
                sprintf("%.2f", best["copy", k] / best["zc", k]),
                sprintf("%.1f", kb[2] / best["copy", k]), sprintf("%.1f", kb[2] / best["zc", k])
        }
    }' "$TC_TMP/rows" | sort -t, -k1,1 -k2,2n >"$TC_TMP/table"
{
    echo "test,bytes,copy_us,zc_us,zc1m_us,zcw2_us,copy_over_zc,copy_over_zc1m,copy_over_zcw2,best_copy_over_best_zc,copy_MBps,zc_MBps"
    cat "$TC_TMP/table"
} >"$csv"
# switch COLUMN: the smallest size from which the ratio in COLUMN (median paired copy / zero-copy)
# is at least 1 at every larger size, in both tests
switch()
{
    awk -F, -v c="$1" 'NR > 1 {b[$2] = b[$2] || ($c < 1)} END {for (k in b) print k, b[k]}' "$csv" \
        | sort -k1,1nr | awk 'BEGIN {best = "none"} $2 == 1 {exit} {best = $1} END {print best}'
}
echo "zero-copy vs copy path over tbrdma, 2 simulated Macs, one cable, checksums on, link model ${link[1]:-off}, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), mpi_yield_when_idle $MT_YIELD"
echo "(usec, best of each: latency = half round trip, bandwidth = per message in a stream;"
echo " copy_over_zc*: median of paired ratios, > 1: zero-copy faster; zc: default chunks"
echo " (btl_tbrdma_zcopy_chunk) and window, zc1m: 1 MiB chunks 2 in flight, zcw2: window 2; $rounds rounds)"
column -s, -t "$csv"
echo "switch point (zero-copy at least as fast from here on, both tests): $(switch 7) bytes with the"
echo "default window and chunks, $(switch 8) bytes with 1 MiB chunks 2 in flight, $(switch 9) bytes with"
echo "a window of 2"
echo "CSV: $csv"
