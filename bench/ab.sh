#!/usr/bin/env bash
# bench/ab.sh [options] NAME=ARGS [NAME=ARGS...]: settings against each other on a pair's
# MPI_Allreduce (float32 sum, tb_coll_bench, every result checked), 2 simulated Macs joined by a
# cable, one rank each (--hosts, --per-mac), Open MPI 4.1, over tbrdma alone (self,vader,tbrdma
# at more than one rank per Mac). Each NAME is a setting: ARGS are mpirun arguments (MCA
# settings) added to the shipped defaults; NAME= with nothing is the defaults.
# A setting with its own --mca btl replaces tbrdma's (tcp='--mca btl self,tcp': Open MPI's TCP
# over the same simulated cable, the interfaces the cable joins).
# The settings take turns, round after round, in one cluster: a shared machine's load drifts,
# and every setting sees it alike. Prints per size the best time of each setting over the rounds
# (us) and its ratio to the first setting's (< 1: faster than the first); writes CSV.
#   --link SPEC    the simulator's link model (apple: Apple's 75 Gbit/s; default: the memcpy cable)
#   --rounds N     rounds (default 3)
#   --min B --max B --factor F   sizes, bytes per rank (default 4096 to 16 MiB, factor 4)
#   --csv FILE     default build/bench/ab.csv: setting,round,bytes,best_us
#   --hosts H      simulated Macs, every pair cabled (default 2)
#   --per-mac NAME=N   a setting's ranks per Mac (default 1); above 2 tbrdma goes through the
#                  per-Mac agents (btl_tbrdma_agent auto); the time is the slowest rank's, for
#                  the same bytes per rank. Ranks busy-poll while the job's ranks fit this
#                  host's cores and yield when idle above that (MT_YIELD overrides)
#   --scale S      tb_coll_bench's iteration scale (default 1)
#   --components NAME=PATH   a setting's component path (another build's plugin/.libs:coll/.libs),
#                  to compare builds (default: this checkout's build)
# Example: bench/ab.sh --link apple default= w2='--mca btl_tbrdma_zcopy_window 2'
# How the data path's defaults were chosen (docs/design.md). Needs root and ./build.sh done.
# No pass/fail on times: they describe this machine (timing never decides a test).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=3 hosts=2 scale=1 min=4096 max=$((16 << 20)) factor=4 link=() csv=$repo/build/bench/ab.csv
declare -A comp=() per_mac=()
names=() args=()
while [ $# -gt 0 ]; do
    case $1 in
    --link) link=(--link "$2") && shift 2 ;;
    --rounds) rounds=$2 && shift 2 ;;
    --min) min=$2 && shift 2 ;;
    --max) max=$2 && shift 2 ;;
    --factor) factor=$2 && shift 2 ;;
    --csv) csv=$2 && shift 2 ;;
    --components) comp[${2%%=*}]=${2#*=} && shift 2 ;;
    --hosts) hosts=$2 && shift 2 ;;
    --per-mac) per_mac[${2%%=*}]=${2#*=} && shift 2 ;;
    --scale) scale=$2 && shift 2 ;;
    -*) echo "ab.sh: unknown option $1" >&2 && exit 2 ;;
    *=*) names+=("${1%%=*}") args+=("${1#*=}") && shift ;;
    *) echo "ab.sh: $1 is not NAME=ARGS" >&2 && exit 2 ;;
    esac
done
[ ${#names[@]} -ge 1 ] || { sed -n '2,27s/^# \{0,1\}//p' "$0" >&2; exit 2; }
CHECK_NAME=ab
export MT_TIMEOUT=${MT_TIMEOUT:-1800}
# shellcheck source=../test/mpi/lib.sh
. "$repo/test/mpi/lib.sh"
mt_flavour 4.1
mt_require
bin=$repo/build/bench/ab/tb_coll_bench
mkdir -p "$(dirname "$bin")" "$(dirname "$csv")"
mpicc -O2 -o "$bin" "$here/tb_coll_bench.c" -lm || fatal "tb_coll_bench.c does not build"
mt_cluster p2p --hosts "$hosts" "${link[@]}"

echo "setting,round,bytes,best_us" >"$csv"
for r in $(seq "$rounds"); do
    for i in "${!names[@]}"; do
        n=${names[$i]} out=$TC_TMP/${names[$i]}.$r pm=${per_mac[${names[$i]}]:-1}
        read -ra a <<<"${args[$i]}"
        btl=(--mca btl "$(mt_btl "$pm")")
        [[ " ${args[$i]} " == *" --mca btl "* ]] && btl=() # the setting names its own transports
        # busy-polling ranks, as on a Mac, while they fit this host's cores; yielding above that
        MT_YIELD=${MT_YIELD:-$((pm * hosts > $(nproc)))} mt_launch $((hosts * pm)) "$pm" \
            --map-by node --mca pml ob1 "${btl[@]}" \
            --mca opal_mca_base_component_path "${comp[$n]:-$MT_COMPONENTS}" \
            --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_peer_timeout_ms 60000 \
            "${a[@]}" "$bin" --impl "$n" --min "$min" --max "$max" --factor "$factor" \
            --scale "$scale" --ops all_sum --dtypes float32 >"$out" 2>&1
        grep -q '^tbbench 1 end ' "$out" || { tail -20 "$out" >&2; fatal "setting $n, round $r: the run failed (above)"; }
        sed -n 's/^tbbench 1 result .* bytes=\([0-9]*\) .* best_us=\([0-9.]*\) .*verified=yes.*/\1 \2/p' \
            "$out" | awk -v n="$n" -v r="$r" -v OFS=, '{print n, r, $1, $2}' >>"$csv"
    done
done

echo "all-reduce, float32 sum, $hosts simulated Macs ($(for n in "${names[@]}"; do printf '%s %s/Mac ' "$n" "${per_mac[$n]:-1}"; done| sed 's/ $//')), link ${link[1]:-off (memcpy cable)}, $rounds rounds taking turns, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(best time in us; in brackets the ratio to ${names[0]}: < 1 is faster)"
awk -F, -v list="${names[*]}" 'NR > 1 {
        k = $1 SUBSEP $3
        if (!(k in b) || $4 + 0 < b[k] + 0) b[k] = $4
        sizes[$3] = 1
    }
    END {
        n = split(list, v, " ")
        printf "%10s", "bytes"
        for (i = 1; i <= n; i++) printf "  %18s", v[i]
        print ""
        m = 0
        for (s in sizes) order[++m] = s + 0
        for (i = 2; i <= m; i++) for (j = i; j > 1 && order[j - 1] > order[j]; j--) {
            t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
        }
        for (j = 1; j <= m; j++) {
            s = order[j]
            printf "%10d", s
            for (i = 1; i <= n; i++) {
                if (!((v[i] SUBSEP s) in b)) { printf "  %18s", "-"; continue }
                r = ((v[1] SUBSEP s) in b) ? sprintf(" (%.2f)", b[v[i], s] / b[v[1], s]) : ""
                printf "  %18s", sprintf("%.1f%s", b[v[i], s], r)
            }
            print ""
        }
    }' "$csv"
echo "CSV: $csv"
