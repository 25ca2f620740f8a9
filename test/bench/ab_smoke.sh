#!/usr/bin/env bash
# bench/ab.sh (settings against each other on a pair's all-reduce) in its quickest form: two
# settings (the second at 2 ranks per Mac, --per-mac), one round, two sizes. Never a timing
# verdict. Checked:
#   - it exits 0, its title names each setting's ranks per Mac, and its CSV has a row per setting and size, each a positive time of a result
#     tb_coll_bench verified;
#   - the table has a row per size, the first setting's ratio to itself 1.00 and the second's a
#     number;
#   - a setting whose run fails (an unknown pml) ends it nonzero, naming the setting;
#   - an argument that is not NAME=ARGS is refused.
set -uo pipefail
CHECK_NAME=bench-ab
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
skip_unless_netns
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-bench-ab.XXXXXX") || fatal "mktemp -d failed"
trap 'rm -rf "$tmp"' EXIT

"$top/bench/ab.sh" --rounds 1 --min 65536 --max 131072 --factor 2 --csv "$tmp/ab.csv" \
    --per-mac two=2 default= two= >"$tmp/out" 2>&1
rc=$?
sed 's/^/    | /' "$tmp/out"
expect "bench/ab.sh exits 0" 0 "$rc"
check_grep "the title: default at 1 rank per Mac, two at 2" "$tmp/out" "(default 1/Mac two 2/Mac)"
for s in default two; do
    for b in 65536 131072; do
        check "CSV: $s at $b B, a positive time" \
            awk -F, -v s="$s" -v b="$b" '$1 == s && $3 == b && $4 > 0 {f = 1} END {exit !f}' "$tmp/ab.csv"
    done
done
expect "CSV: 4 rows and its header" 5 "$(wc -l <"$tmp/ab.csv")"
check "table: a row per size, the first setting 1.00 against itself, the second a ratio" \
    test "$(grep -cE '^ *(65536|131072) +[0-9.]+ \(1\.00\) +[0-9.]+ \([0-9]+\.[0-9]+\)$' "$tmp/out")" -eq 2

"$top/bench/ab.sh" --rounds 1 --min 65536 --max 65536 --csv "$tmp/bad.csv" \
    broken='--mca pml nosuch' >"$tmp/bad" 2>&1
rc=$?
check "a setting whose run fails: nonzero (exit $rc)" test "$rc" -ne 0
check_grep "... naming the setting" "$tmp/bad" "setting broken, round 1: the run failed"
"$top/bench/ab.sh" nonsense >"$tmp/usage" 2>&1
expect "an argument that is not NAME=ARGS: refused (exit 2)" 2 "$?"
finish
