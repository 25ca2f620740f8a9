#!/usr/bin/env bash
# coll_mesh_bench.sh [--coll C] [--rounds N] [--sizes LIST] [--scale S] [--link on|off]
#                    [--mesh-args ARGS]:
# one collective C of tb_bench (allreduce: doubles, sum, the default; allgather: SIZE bytes
# per rank; reduce_scatter: MPI_Reduce_scatter_block of SIZE bytes of doubles) on 4 simulated
# Macs, one rank each, btl self,tbrdma, in three settings taking turns in one run, so that the
# machine's load falls on all three alike:
#   default  Open MPI's own choice of algorithm (coll/tuned's compiled-in tables)
#   rules    tbrdma's coll/tuned rules (share/coll/ompi-4.1.rules), coll/tbrdma off
#   mesh     the rules and coll/tbrdma, as the installed coll-tuned.conf turns them on
# Per size, the best (least) microseconds per call over the rounds (tb_bench's allreduce: each
# row already the best of its repeats) and the ratios default/mesh and rules/mesh (> 1: the
# mesh setting is faster). Output: build/bench/coll_mesh-C.csv and coll_mesh-C.md. Open MPI
# 4.1.
# --mesh-args: more MCA arguments of the mesh setting (a word list, e.g. "--mca
# coll_tbrdma_allreduce_rsag_min 65536" to measure below the default limits).
# The link model is on by default (8 Gbit/s, 4 us per cable and direction: docs/benchmarks.md).
# Timing is never judged (bench/).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
coll=allreduce rounds=3 sizes=8,64,512,2048,8192,32768,131072,524288,2097152,8388608 scale=0.3 link=on mesh_args=
while [ $# -gt 0 ]; do
    case $1 in
    --coll) coll=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --sizes) sizes=${2:?}; shift 2 ;;
    --scale) scale=${2:?}; shift 2 ;;
    --link) link=${2:?}; shift 2 ;;
    --mesh-args) mesh_args=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--coll allreduce|allgather|reduce_scatter] [--rounds N] [--sizes LIST] [--scale S] [--link on|off] [--mesh-args ARGS]" >&2; exit 2 ;;
    esac
done
CHECK_NAME=coll_mesh_bench
case $coll in
allreduce | allgather | reduce_scatter) ;;
*) echo "coll_mesh_bench: --coll must be allreduce, allgather or reduce_scatter" >&2; exit 2 ;;
esac
csv=$top/build/bench/coll_mesh-$coll.csv
# shellcheck source=lib.sh
. "$top/bench/lib.sh"
[ -e "$MT_BUILD/plugin/coll/.libs/mca_coll_tbrdma.so" ] || fatal "coll/tbrdma not built"
work=$top/build/bench/coll_mesh-$coll
rm -rf "$work" && mkdir -p "$work"
link_args=()
[ on = "$link" ] && link_args=(--link on)
mt_cluster p2p "${link_args[@]}"
rules=(--mca coll_tuned_use_dynamic_rules 1
    --mca coll_tuned_dynamic_rules_filename "$MT_REPO/share/coll/ompi-4.1.rules")

# setting_args NAME: the MCA arguments of a setting.
setting_args()
{
    case $1 in
    default) echo "--mca coll_tbrdma_priority 0" ;;
    rules) echo "${rules[*]} --mca coll_tbrdma_priority 0" ;;
    mesh) echo "${rules[*]} --mca coll_tbrdma_priority 90 $mesh_args" ;;
    esac
}

max=$(tr , '\n' <<<"$sizes" | sort -n | tail -1)
echo "setting,round,bytes,usec" >"$csv"
for r in $(seq 1 "$rounds"); do
    for s in default rules mesh; do
        log=$work/$s.$r.log
        # shellcheck disable=SC2046 # setting_args prints a word list
        mt_launch 4 1 --map-by node --mca pml ob1 --mca btl self,tbrdma $(setting_args "$s") \
            --mca opal_mca_base_component_path "$MT_COMPONENTS" \
            --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_peer_timeout_ms 60000 \
            "$BENCH_BIN" -t "$coll" -s "$sizes" -r 3 "$max" "$scale" >"$log" 2>&1 \
            || { echo "$CHECK_NAME: $s, round $r failed ($log):" >&2; tail -5 "$log" >&2; exit 1; }
        grep "^$coll," "$log" | awk -F, -v s="$s" -v r="$r" '{print s "," r "," $2 "," $4}' >>"$csv"
        echo "coll_mesh_bench: round $r of $rounds, $s done" >&2
    done
done
awk -F, 'NR > 1 { k = $1 SUBSEP $3; if (!(k in best) || $4 < best[k]) best[k] = $4; sz[$3] }
    END {
        print "| bytes | default us | rules us | mesh us | default/mesh | rules/mesh |"
        print "|---|---|---|---|---|---|"
        n = 0; for (b in sz) list[++n] = b + 0
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (list[j] < list[i]) { t = list[i]; list[i] = list[j]; list[j] = t }
        for (i = 1; i <= n; i++) {
            b = list[i]; d = best["default" SUBSEP b]; r = best["rules" SUBSEP b]; m = best["mesh" SUBSEP b]
            printf "| %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", b, d, r, m, d / m, r / m
        }
    }' "$csv" | tee "${csv%.csv}.md"
