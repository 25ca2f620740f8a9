#!/usr/bin/env bash
# bench/overlap.sh [options] [NAME=ARGS...]: how much of a large exchange keeps moving while the
# ranks compute (tb_overlap: both ranks post MPI_Isend and MPI_Irecv, compute as long as the
# exchange alone takes, then wait; overlap 1 = hidden entirely, 0 = it moves only inside the
# wait). 2 simulated Macs, one rank each (or N: --per-mac), one cable, Open MPI 4.1. Settings as
# in ab.sh: ARGS are mpirun arguments added to the shipped defaults over tbrdma alone; a setting
# with its own --mca btl replaces tbrdma's. Default settings: tbrdma= and tcp='--mca btl
# self,tcp' (self,vader,tcp above 1 per Mac: Open MPI's TCP on the same cable, whose kernel moves
# data while a rank computes).
# The settings take turns, round after round; per size the best times over the rounds and the
# overlap they give. The baseline for docs/design.md's requirement on many ranks per Mac: "a large
# message keeps moving while its rank computes", against one rank per Mac today.
#   --link SPEC    the simulator's link model (apple: Apple's 75 Gbit/s; default: memcpy cable)
#   --per-mac N    N ranks per Mac (default 1), N pairs exchanging across the cable at once,
#                  btl self,vader,tbrdma: above 2 per Mac tbrdma goes through the per-Mac agents
#                  (btl_tbrdma_agent auto); times are the slowest rank's
#   --rounds N     rounds (default 3)   --iters N   runs per size and round (default 5)
#   --min B --max B --factor F   sizes (default 64 KiB to 16 MiB, factor 4)
#   --csv FILE     default build/bench/overlap.csv: setting,round,bytes,comm_us,comp_us,both_us
# Needs root and ./build.sh done. No pass/fail on times (timing never decides a test).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
rounds=3 iters=5 per_mac=1 min=$((64 << 10)) max=$((16 << 20)) factor=4 link=() csv=$repo/build/bench/overlap.csv
names=() args=()
while [ $# -gt 0 ]; do
    case $1 in
    --link) link=(--link "$2") && shift 2 ;;
    --rounds) rounds=$2 && shift 2 ;;
    --per-mac) per_mac=$2 && shift 2 ;;
    --iters) iters=$2 && shift 2 ;;
    --min) min=$2 && shift 2 ;;
    --max) max=$2 && shift 2 ;;
    --factor) factor=$2 && shift 2 ;;
    --csv) csv=$2 && shift 2 ;;
    -h | --help) sed -n '2,22s/^# \{0,1\}//p' "$0" && exit 0 ;;
    -*) echo "overlap.sh: unknown option $1" >&2 && exit 2 ;;
    *=*) names+=("${1%%=*}") args+=("${1#*=}") && shift ;;
    *) echo "overlap.sh: $1 is not NAME=ARGS" >&2 && exit 2 ;;
    esac
done
CHECK_NAME=overlap
export MT_TIMEOUT=${MT_TIMEOUT:-1800}
# shellcheck source=../test/mpi/lib.sh
. "$repo/test/mpi/lib.sh"
mt_flavour 4.1
mt_require
if [ ${#names[@]} -eq 0 ]; then
    names=(tbrdma tcp) args=("" "--mca btl $(mt_btl "$per_mac" | sed 's/tbrdma$/tcp/')")
fi
bin=$repo/build/bench/overlap/tb_overlap
mkdir -p "$(dirname "$bin")" "$(dirname "$csv")"
mpicc -O2 -o "$bin" "$here/tb_overlap.c" || fatal "tb_overlap.c does not build"
mt_cluster p2p --hosts 2 "${link[@]}"
# busy-polling ranks, as between 2 Macs, while the job's ranks fit this host's cores; yielding
# above that, as ab.sh decides
export MT_YIELD=${MT_YIELD:-$((2 * per_mac > $(nproc)))}

echo "setting,round,bytes,comm_us,comp_us,both_us" >"$csv"
for r in $(seq "$rounds"); do
    for i in "${!names[@]}"; do
        n=${names[$i]} out=$TC_TMP/${names[$i]}.$r
        read -ra a <<<"${args[$i]}"
        btl=(--mca btl "$(mt_btl "$per_mac")")
        [[ " ${args[$i]} " == *" --mca btl "* ]] && btl=()
        mt_launch $((2 * per_mac)) "$per_mac" --map-by node --mca pml ob1 "${btl[@]}" \
            --mca opal_mca_base_component_path "$MT_COMPONENTS" \
            --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_peer_timeout_ms 60000 \
            "${a[@]}" "$bin" --impl "$n" --min "$min" --max "$max" --factor "$factor" \
            --iters "$iters" >"$out" 2>&1
        grep -q '^tboverlap end ok=yes' "$out" || { tail -20 "$out" >&2; fatal "setting $n, round $r: the run failed or a byte was wrong (above)"; }
        sed -n 's/^tboverlap result .* bytes=\([0-9]*\) comm_us=\([0-9.]*\) comp_us=\([0-9.]*\) both_us=\([0-9.]*\) .*ok=yes.*/\1 \2 \3 \4/p' \
            "$out" | awk -v n="$n" -v r="$r" -v OFS=, '{print n, r, $1, $2, $3, $4}' >>"$csv"
    done
done

echo "overlap of $per_mac pair(s)' exchanges with computation, 2 simulated Macs, $per_mac rank(s) each, link ${link[1]:-off (memcpy cable)}, $rounds rounds x $iters runs taking turns, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "(per setting: the exchange alone in us, and overlap = (comm + comp - both) / comm from the best times: 1 hidden, 0 not)"
awk -F, -v list="${names[*]}" 'NR > 1 {
        k = $1 SUBSEP $3
        if (!(k in c) || $4 + 0 < c[k] + 0) c[k] = $4
        if (!(k in p) || $5 + 0 < p[k] + 0) p[k] = $5
        if (!(k in b) || $6 + 0 < b[k] + 0) b[k] = $6
        sizes[$3] = 1
    }
    END {
        n = split(list, v, " ")
        printf "%10s", "bytes"
        for (i = 1; i <= n; i++) printf "  %22s", v[i] " comm, overlap"
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
                k = v[i] SUBSEP s
                if (!(k in c)) { printf "  %22s", "-"; continue }
                printf "  %22s", sprintf("%.1f, %.2f", c[k], (c[k] + p[k] - b[k]) / c[k])
            }
            print ""
        }
    }' "$csv"
echo "CSV: $csv"
