#!/usr/bin/env bash
# bench/instr_count.sh [N1 N2]: CPU instructions per 8-byte round trip, counted by valgrind's
# callgrind (instructions, not seconds: the same on a busy or an idle machine), for
#   raw     the simulator's UC ping-pong (uc_pingpong -x: post, poll, repost; no MPI), counted
#           inside pingpong_round (one round: post, wait, check, re-post; with its 2 clock reads)
#   tbrdma  MPI_Send/MPI_Recv of 8 B over ob1 and tbrdma alone (`btl self,tbrdma`), counted
#           inside tb_rtt_loop (bench/tb_rtt.c)
# on 2 simulated Macs, one cable. Only the measuring side runs under callgrind; its peer runs
# natively at real-time priority (chrt -f 1) so that other load cannot delay its answers. Each
# count is taken at N1 and N2 round trips and the difference divided by N2 - N1 (set-up and the
# first rounds cancel out).
# Waiting is not work: the measuring side polls an empty queue until the answer is there, and
# how often depends on timing (uc_pingpong, which does little per round trip, polled 35 to 72
# times per round trip in runs here; MPI over tbrdma, slower under callgrind, 0.5 to 1.3). So
# the script also gives each count without its empty polls: every poll beyond the 2 a round trip
# needs (a send and a receive completion) is taken away, per run, at that run's average cost of
# one poll (tbsim_poll_cq's inclusive count over its calls). That column is the one to compare.
# Prints the counts, the ratios and the functions that cost tbrdma's round trip most; CSV in
# build/bench/instr_count.csv.
# Needs root and network namespaces, a build (./build.sh) and valgrind.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
n1=${1:-2000}
n2=${2:-12000}
CHECK_NAME=instr_count
. "$repo/test/mpi/lib.sh"
mt_flavour 4.1
mt_require
command -v valgrind >/dev/null || fatal "valgrind is not installed"
mkdir -p "$repo/build/bench"
bin=$repo/build/bench/tb_rtt
mpicc -O2 -g -Wall -o "$bin" "$here/tb_rtt.c" || fatal "tb_rtt.c does not build"
mt_cluster p2p --hosts 2
export MT_YIELD=0 # the peer busy-polls, as uc_pingpong's does
rt=(chrt -f 1)
"${rt[@]}" true 2>/dev/null || { echo "instr_count: chrt -f 1 not allowed here; the peer runs at normal priority (counts include its scheduling delays)"; rt=(); }
uc=$repo/build/test/sim/uc_pingpong
cg=(valgrind --tool=callgrind --dump-instr=no --compress-strings=no)

# total FILE: the instruction total of one callgrind output file.
total()
{
    awk '/^(summary|totals):/ {print $2; exit}' "$1"
}

# polls FILE: how many times tbsim_poll_cq (the simulator's ibv_poll_cq) was called.
polls()
{
    awk '/^cfn=.*tbsim_poll_cq/ {getline; sub(/^calls=/, "", $1); s += $1} END {print s + 0}' "$1"
}

# poll_cost FILE: the instructions spent in tbsim_poll_cq and below it.
poll_cost()
{
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
        | awk '/tbsim_poll_cq/ && $1 ~ /^[0-9,]+$/ {gsub(/,/, "", $1); if ($1 > m) m = $1} END {print m + 0}'
}

# work FILE ROUND_TRIPS: the file's instructions without its empty polls: every poll beyond 2
# per round trip (a send and a receive completion) is taken away at the run's average cost of
# one poll (tbsim_poll_cq's inclusive count over its calls).
work()
{
    awk -v t="$(total "$1")" -v p="$(polls "$1")" -v c="$(poll_cost "$1")" -v n="$2" 'BEGIN {
        e = (p > 0) ? c / p : 0; extra = p - 2 * n
        printf "%.0f\n", t - (extra > 0 ? extra : 0) * e
    }'
}

# per_rt NAME: "instructions per round trip, polls per round trip, instructions per poll, the
# same without empty polls", from NAME.N1 and NAME.N2 in $TC_TMP (differences: set-up and the
# first rounds cancel out).
per_rt()
{
    local a=$TC_TMP/$1.$n1 b=$TC_TMP/$1.$n2
    awk -v t1="$(total "$a")" -v t2="$(total "$b")" -v p1="$(polls "$a")" -v p2="$(polls "$b")" \
        -v c2="$(poll_cost "$b")" -v w1="$(work "$a" "$n1")" -v w2="$(work "$b" "$n2")" \
        -v n="$((n2 - n1))" 'BEGIN {
        printf "%d %.1f %.0f %d\n", (t2 - t1) / n, (p2 - p1) / n, (p2 > 0) ? c2 / p2 : 0, (w2 - w1) / n
    }'
}

# raw N: callgrind's count inside pingpong_round for N round trips, in $TC_TMP/raw.N.
raw()
{
    local n=$1 out=$TC_TMP/raw.$1
    "$MT_TBCLUSTER" exec mac-b -- "${rt[@]}" env LD_PRELOAD="$MT_SIMLIB" "$uc" >/dev/null 2>&1 &
    sleep 0.3
    "$MT_TBCLUSTER" exec mac-a -- env LD_PRELOAD="$MT_SIMLIB" "${cg[@]}" \
        --toggle-collect=pingpong_round --callgrind-out-file="$out" \
        "$uc" -m pingpong -s 8 -n "$n" -x mac-b >"$out.log" 2>&1
    wait
    grep -q "^uc_pingpong: $n iters of 8 B" "$out.log" || { cat "$out.log"; fatal "uc_pingpong failed"; }
}

# mpi N: the count inside tb_rtt_loop of rank 0 for N round trips (its warm-up runs in another
# function), in
# $TC_TMP/mpi.N.
mpi()
{
    local n=$1 out=$TC_TMP/mpi.$1
    mt_launch 2 1 --map-by node --mca pml ob1 --mca btl self,tbrdma \
        --mca opal_mca_base_component_path "SYS_DEFAULT:$MT_PLUGIN" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_peer_timeout_ms 60000 \
        -np 1 "${cg[@]}" --toggle-collect=tb_rtt_loop --callgrind-out-file="$out" "$bin" "$n" : \
        -np 1 "${rt[@]}" "$bin" "$n" >"$out.log" 2>&1
    grep -q "^tb_rtt: $n round trips of 8 B, answers checked" "$out.log" \
        || { cat "$out.log"; fatal "tb_rtt over tbrdma failed"; }
}

raw "$n1" >/dev/null; raw "$n2" >/dev/null
mpi "$n1" >/dev/null; mpi "$n2" >/dev/null
read -r raw_rt raw_polls raw_e raw_work <<<"$(per_rt raw)"
read -r mpi_rt mpi_polls mpi_e mpi_work <<<"$(per_rt mpi)"
csv=$repo/build/bench/instr_count.csv
{
    echo "transport,round_trips,instructions_per_round_trip,polls_per_round_trip,instructions_per_poll,without_empty_polls"
    echo "raw_uc,$((n2 - n1)),$raw_rt,$raw_polls,$raw_e,$raw_work"
    echo "tbrdma_mpi,$((n2 - n1)),$mpi_rt,$mpi_polls,$mpi_e,$mpi_work"
} >"$csv"
echo "instructions per 8-byte round trip (callgrind, difference of $n1 and $n2 round trips):"
printf '  %-40s %10s %8s %12s %14s\n' "" all polls "per poll" "without empty" \
    "raw UC ping-pong over the simulator" "$raw_rt" "$raw_polls" "$raw_e" "$raw_work" \
    "MPI over tbrdma (ob1, btl self,tbrdma)" "$mpi_rt" "$mpi_polls" "$mpi_e" "$mpi_work"
echo "  ratio tbrdma/raw: $(awk -v a="$mpi_work" -v b="$raw_work" 'BEGIN {printf "%.2f", a / b}') without empty polls" \
    "($(awk -v a="$mpi_rt" -v b="$raw_rt" 'BEGIN {printf "%.2f", a / b}') counting them)"
echo "where tbrdma's round trips go (inclusive, $n2 round trips):"
callgrind_annotate --inclusive=yes "$TC_TMP/mpi.$n2" 2>/dev/null \
    | awk '/^-+$/ {s++; next} s >= 3 && NF >= 2' | head -14 | sed 's/^/  /'
echo "CSV: $csv"
