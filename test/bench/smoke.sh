#!/usr/bin/env bash
# smoke: the benchmark suite (bench/run) in its quickest mode writes every file with the rows it
# should. Never a timing verdict (timing belongs in bench/): only that each number is there.
# Checks, in a temporary output folder:
#   - bench/run --smoke exits 0: every run worked and tb_bench found every MPI result right;
#   - results.csv: a row with a positive time and MB/s for every setting the suite measures, at
#     every size of the run (meta.txt), which holds the three sizes of the goal ratios:
#       2 Macs, one cable: raw latency, bandwidth, bibw, msgrate (up to 16 MiB); tbrdma and tcp
#       latency, bandwidth, bibw, msgrate, allreduce, allgather, alltoall;
#       2 Macs, two cables: raw and tbrdma bandwidth at 16 MiB;
#       4 Macs: tbrdma and tcp msgrate, allreduce, allgather, alltoall;
#     for the link model off, and on when this build has the link model (else the report says
#     "link model not available in this build" and there is no "on" row);
#   - a PNG per test (PNG signature, not empty);
#   - report.md: the three goal ratios, each a number; a ratio table per test and setting with
#     a row per size; the projection with its measured, published, assumed and projected rows;
#   - projection.csv: the projected quantities.
set -uo pipefail
CHECK_NAME=bench-smoke
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
skip_unless_netns
out=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-bench-smoke.XXXXXX") || fatal "mktemp -d failed"
trap 'rm -rf "$out"' EXIT

# On the link model when this build has it (the goal ratios are taken there), else without it
# (and bench/run must say it is not available).
links=off ask=both
if [[ "$("$top/test/sim/tbcluster" --help 2>&1)" == *--link* ]]; then
    links=on ask=on
fi
"$top/bench/run" --smoke --link "$ask" --out "$out" >"$out/run.log" 2>&1
rc=$?
sed 's/^/  run| /' "$out/run.log" | grep -v '^  run| *|'
expect "bench/run --smoke exit status" 0 "$rc"
sizes=$(sed -n 's/^sizes=//p' "$out/meta.txt" | tr , ' ')
for s in 8 4194304 16777216; do
    check "the run's sizes hold $s B (an issue ratio's size)" grep -qw "$s" <<<"$sizes"
done

# rows LINK MACS CABLES TRANSPORT TESTS SIZES: every row is in results.csv with positive numbers.
rows()
{
    local want=0 missing=() t s
    for t in $5; do
        for s in $6; do
            want=$((want + 1))
            awk -F, -v k="$1,$2,$3,$4,$t,$s" '$1 "," $2 "," $3 "," $4 "," $5 "," $6 == k \
                && $7 > 0 && $8 > 0 { f = 1 } END { exit !f }' "$out/results.csv" \
                || missing+=("$t/$s")
        done
    done
    expect "link $1, $2 Macs, $3 cable(s), $4: rows of $want (test, size) present" "" "${missing[*]}"
}

if [ "$links" = off ]; then
    check_grep "the report says the link model is not available" "$out/report.md" \
        'link model not available in this build'
    check_nogrep "no row with the link model" "$out/results.csv" '^on,'
else
    check_nogrep "no row without the link model (asked for on only)" "$out/results.csv" '^off,'
    check_grep "the report gives the link model's settings" "$out/report.md" '^Link model: .*rate_gbps='
    check_grep "the goal ratios are on the link model" "$out/report.md" \
        "^## The three goal ratios \(link model on"
fi
small=$(for s in $sizes; do [ "$s" -le 16777216 ] && echo "$s"; done)
for link in $links; do
    rows "$link" 2 1 raw "latency bandwidth bibw msgrate" "$small"
    for t in tbrdma tcp; do
        rows "$link" 2 1 "$t" "latency bandwidth bibw msgrate allreduce allgather alltoall" "$sizes"
        rows "$link" 4 1 "$t" "msgrate allreduce allgather alltoall" "$sizes"
    done
    rows "$link" 2 2 raw bandwidth 16777216
    rows "$link" 2 2 tbrdma bandwidth 16777216
done

for t in latency bandwidth bibw msgrate allreduce allgather alltoall; do
    check "$t.png is a PNG image" cmp -s -n 8 "$out/$t.png" <(printf '\211PNG\r\n\032\n')
done

for r in '8 B latency, tbrdma / raw' '4 MiB bandwidth, tbrdma / raw' \
    '16 MiB bandwidth, tbrdma on two cables / on one'; do
    check_grep "report: the ratio '$r' with a value" "$out/report.md" "^\| ${r}[^|]*\| [0-9]+\.[0-9]+ \|"
done
nsizes=$(wc -w <<<"$sizes")
for link in $links; do
    for t in latency bandwidth bibw msgrate allreduce allgather alltoall; do
        n=$(awk -v h="### Link model $link, 2 Macs" -v t="#### $t" '
            $0 ~ /^### / { in_s = ($0 == h) } in_s && /^#### / { in_t = ($0 == t) }
            in_s && in_t && /^\| [0-9]+ \|/ { n++ } END { print n + 0 }' "$out/report.md")
        expect "report: link $link, 2 Macs, $t table has a row per size" "$nsizes" "$n"
    done
done
for kind in measured published assumed projected; do
    check_grep "report: the projection has $kind inputs or results" "$out/report.md" \
        "^\| [^|]+ \| [^|]+ \| $kind \|"
done
for q in 'tbrdma 8 B latency on Macs' 'tbrdma 4 MiB bandwidth on Macs, one cable' \
    '4-Mac 8 B allreduce' '4-Mac 256 MB allreduce, one peer per step'; do
    check_grep "projection.csv: $q" "$out/projection.csv" "^\"$q\",\"[0-9]"
done
finish
