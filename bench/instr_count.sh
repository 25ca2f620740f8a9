#!/usr/bin/env bash
# bench/instr_count.sh [N1 N2 [RUNS]]: CPU instructions per 8-byte round trip, counted by valgrind's
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
# one poll (a poll: the simulator's tbsim_poll_cq for the raw side, tbrdma's progress call for
# MPI; its inclusive count over its calls). That column is the one to compare, in the least
# disturbed of RUNS runs (default 3).
# Prints the counts, the ratios and the functions that cost tbrdma's round trip most; CSV in
# build/bench/instr_count.csv.
# Needs root and network namespaces, a build (./build.sh) and valgrind.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
n1=${1:-2000}
n2=${2:-12000}
reps=${3:-3}
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

# polls FILE FN: how many times FN was called.
polls()
{
    awk -v fn="$2" '$0 ~ "^cfn=.*" fn "$" {getline; sub(/^calls=/, "", $1); s += $1} END {print s + 0}' "$1"
}

# poll_cost FILE FN: the instructions spent in FN and below it.
poll_cost()
{
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk -v fn="$2" \
        '$0 ~ ":" fn "( |$)" && $1 ~ /^[0-9,]+$/ {gsub(/,/, "", $1); if ($1 > m) m = $1} END {print m + 0}'
}

# work FILE ROUND_TRIPS FN: the file's instructions without its empty polls: every call of the
# polling function FN beyond 2 per round trip (a send and a receive completion) is taken away
# at the run's average cost of one call (FN's inclusive count over its calls; as that average
# includes the calls that found something, this takes away slightly too much).
work()
{
    awk -v t="$(total "$1")" -v p="$(polls "$1" "$3")" -v c="$(poll_cost "$1" "$3")" -v n="$2" 'BEGIN {
        e = (p > 0) ? c / p : 0; extra = p - 2 * n
        printf "%.0f\n", t - (extra > 0 ? extra : 0) * e
    }'
}

# per_rt NAME REP FN: "instructions per round trip, polls per round trip, instructions per
# poll, the same without empty polls", from NAME.N1.REP and NAME.N2.REP in $TC_TMP (their
# difference: set-up and the first rounds cancel out).
per_rt()
{
    local a=$TC_TMP/$1.$n1.$2 b=$TC_TMP/$1.$n2.$2 fn=$3
    awk -v t1="$(total "$a")" -v t2="$(total "$b")" -v p1="$(polls "$a" "$fn")" \
        -v p2="$(polls "$b" "$fn")" -v c2="$(poll_cost "$b" "$fn")" -v w1="$(work "$a" "$n1" "$fn")" \
        -v w2="$(work "$b" "$n2" "$fn")" -v n="$((n2 - n1))" 'BEGIN {
        printf "%d %.1f %.0f %d\n", (t2 - t1) / n, (p2 - p1) / n, (p2 > 0) ? c2 / p2 : 0, (w2 - w1) / n
    }'
}

# raw N REP: callgrind's count inside pingpong_round for N round trips, in $TC_TMP/raw.N.REP.
raw()
{
    local n=$1 out=$TC_TMP/raw.$1.$2
    "$MT_TBCLUSTER" exec mac-b -- "${rt[@]}" env LD_PRELOAD="$MT_SIMLIB" "$uc" >/dev/null 2>&1 &
    sleep 0.3
    "$MT_TBCLUSTER" exec mac-a -- env LD_PRELOAD="$MT_SIMLIB" "${cg[@]}" \
        --toggle-collect=pingpong_round --callgrind-out-file="$out" \
        "$uc" -m pingpong -s 8 -n "$n" -x mac-b >"$out.log" 2>&1
    wait
    grep -q "^uc_pingpong: $n iters of 8 B" "$out.log" || { cat "$out.log"; fatal "uc_pingpong failed"; }
}

# mpi N REP: the count inside tb_rtt_loop of rank 0 for N round trips (its warm-up runs in another
# function), in
# $TC_TMP/mpi.N.
mpi()
{
    local n=$1 out=$TC_TMP/mpi.$1.$2
    mt_launch 2 1 --map-by node --mca pml ob1 --mca btl self,tbrdma \
        --mca opal_mca_base_component_path "$MT_COMPONENTS" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_peer_timeout_ms 60000 \
        -np 1 "${cg[@]}" --toggle-collect=tb_rtt_loop --callgrind-out-file="$out" "$bin" "$n" : \
        -np 1 "${rt[@]}" "$bin" "$n" >"$out.log" 2>&1
    grep -q "^tb_rtt: $n round trips of 8 B, answers checked" "$out.log" \
        || { cat "$out.log"; fatal "tb_rtt over tbrdma failed"; }
}

csv=$repo/build/bench/instr_count.csv
echo "transport,run,round_trips,instructions_per_round_trip,polls_per_round_trip,instructions_per_poll,without_empty_polls" >"$csv"
for rep in $(seq "$reps"); do
    raw "$n1" "$rep"; raw "$n2" "$rep"
    mpi "$n1" "$rep"; mpi "$n2" "$rep"
    echo "raw_uc,$rep,$((n2 - n1)),$(per_rt raw "$rep" tbsim_poll_cq | tr ' ' ,)" >>"$csv"
    echo "tbrdma_mpi,$rep,$((n2 - n1)),$(per_rt mpi "$rep" mca_btl_tbrdma_component_progress | tr ' ' ,)" >>"$csv"
done
# best NAME: the run of NAME with the fewest instructions without empty polls (least disturbed).
best()
{
    awk -F, -v t="$1" '$1 == t && (b == "" || $7 + 0 < b + 0) {b = $7; l = $0} END {print l}' "$csv"
}
raw_best=$(best raw_uc)
mpi_best=$(best tbrdma_mpi)
echo "instructions per 8-byte round trip (callgrind, difference of $n1 and $n2 round trips; $reps runs):"
printf '  %-40s %4s %10s %8s %10s %14s\n' "" run all polls "per poll" "without empty"
awk -F, '$1 != "transport" {printf "  %-40s %4s %10s %8s %10s %14s\n",
    ($1 == "raw_uc") ? "raw UC ping-pong over the simulator" : "MPI over tbrdma (ob1, btl self,tbrdma)",
    $2, $4, $5, $6, $7}' "$csv"
echo "  ratio tbrdma/raw, least disturbed runs: $(awk -v a="${mpi_best##*,}" -v b="${raw_best##*,}" \
    'BEGIN {printf "%.2f", a / b}') without empty polls ($(echo "$mpi_best" | cut -d, -f7) against $(echo "$raw_best" | cut -d, -f7))"
echo "where tbrdma's round trips go (inclusive, run $(echo "$mpi_best" | cut -d, -f2), $n2 round trips):"
callgrind_annotate --inclusive=yes "$TC_TMP/mpi.$n2.$(echo "$mpi_best" | cut -d, -f2)" 2>/dev/null \
    | awk '/^-+$/ {s++; next} s >= 3 && NF >= 2' \
    | grep -v -E 'PROGRAM TOTALS|file:function|libc-start|below main|:main|0x0000|tb_rtt_loop' \
    | head -14 | sed 's/^/  /'
echo "CSV: $csv"
