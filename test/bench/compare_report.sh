#!/usr/bin/env bash
# compare-jaccl --report on the samples of test/samples/compare-jaccl (README there): the runs
# of MLX over JACCL (2 rounds) and over MPI (constructed in the documented format: made-up
# numbers) with tbrdma's MPI run recorded on the simulated Macs. Checked: one block per op and
# dtype, every size; the best of the runs and "vs JACCL" recomputed from the samples for every
# row; the CSV; the plot with gnuplot, and without it the table and CSV alone with a message.
# Then each malformed sample is refused, naming its file, its line and what is wrong, and so is
# a malformed MLX hostfile (tbrdma's parser, through tbrdma-doctor). No root.
source "$(dirname "$0")/lib.sh"
s=$samples
bench_tmp
need python3 gnuplot

good=("$s/mlx-jaccl-round1.log" "$s/mlx-jaccl-round2.log" "$s/mpi-tbrdma-sim-4.1.log" "$s/mlx-mpi-round1.log")
out=$("$compare" --report --out "$tmp/r" "${good[@]}" 2>&1)
rc=$?
echo "$out" | sed 's/^/    | /'
expect "--report on the 4 good samples exits 0" 0 "$rc"
for op in all_sum all_gather; do
    for dt in float32 bfloat16; do
        expect "$op, $dt: a block with the 3 implementations and 8 sizes" 8 \
            "$(sed -n "/^$op, $dt (4 ranks)\$/,/^\$/p" "$tmp/r/table.txt" \
                | grep -cE '^ +[0-9]+ (B|KiB) +([0-9.]+ +[0-9.e+-]+ +){2}[0-9.]+x +[0-9.]+ +[0-9.e+-]+ +[0-9.]+x$')"
    done
done
check_grep "the header names the implementations in order" "$tmp/r/table.txt" \
    '^ +size +mlx-jaccl us +GB/s +mpi-tbrdma us +GB/s +vs JACCL +mlx-mpi us +GB/s +vs JACCL$'
check_grep "the legend says what vs JACCL is" "$tmp/r/table.txt" "^vs JACCL: JACCL's time / this time \\(above 1: faster than JACCL\\)$"

# From the samples, per (op, dtype, bytes): JACCL's best over its 2 runs and the median of its
# runs' medians, and each other run's best; then vs JACCL = JACCL's best / the other's.
awk '$1 == "tbbench" && $3 == "result" {
        for (i = 4; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        k = f["op"] "," f["dtype"] "," f["bytes"] "," f["impl"]
        if (!(k in best) || f["best_us"] + 0 < best[k] + 0) best[k] = f["best_us"]
        seen = (k in n); med[k] = seen ? (med[k] + f["median_us"]) / 2 : f["median_us"]; n[k]++
    }
    END {
        for (k in best) {
            split(k, p, ","); j = p[1] "," p[2] "," p[3] ",mlx-jaccl"
            printf "%s,%d,%.3f,%.3f,%s\n", k, n[k], best[k], med[k],
                (p[4] == "mlx-jaccl") ? "" : sprintf("%.4f", best[j] / best[k])
        }
    }' "${good[@]}" | sort >"$tmp/want"
cut -d, -f1-4,6,9,10,12 "$tmp/r/results.csv" | tail -n +2 | sort >"$tmp/got"
expect "results.csv: 96 rows (32 sizes x 3 implementations)" 96 "$(wc -l <"$tmp/got")"
check "results.csv: runs, best of the runs, median of the medians and vs JACCL of every row as recomputed from the samples" \
    diff "$tmp/want" "$tmp/got"
expect "the table shows JACCL's best of 2 runs for all_sum float32 8 B" \
    "$(grep '^all_sum,float32,8,mlx-jaccl,' "$tmp/want" | cut -d, -f6 | xargs printf '%.2f')" \
    "$(sed -n '/^all_sum, float32/,/^$/p' "$tmp/r/table.txt" | awk '$1 == 8 && $2 == "B" { print $3 }')"
expect "plot.png is a PNG" "89504e47" "$(head -c 4 "$tmp/r/plot.png" | od -An -tx1 | tr -d ' \n')"

# Without gnuplot: the table and the CSV, and a message saying there is no plot.
mkdir -p "$tmp/bin"
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$tmp/bin/python3" # the interpreter, not a shim
out=$(PATH="$tmp/bin" "$compare" --report --out "$tmp/n" "${good[@]}" 2>&1)
rc=$?
expect "without gnuplot: exit 0" 0 "$rc"
check "without gnuplot: the message" grep -q '^compare-jaccl: gnuplot not found: no plot .*the table and the CSV are written$' <<<"$out"
check "without gnuplot: the same CSV, no plot" bash -c "cmp -s '$tmp/r/results.csv' '$tmp/n/results.csv' && [ ! -e '$tmp/n/plot.png' ]"

# The script's own output (run under the test's stand-in for MLX) reads back.
out=$("$compare" --report --out "$tmp/f" "$s/mlx-stand-in.log" 2>&1)
expect "mlx_collectives.py's recorded output reads back (6 sizes, 1 rank)" "0 6" \
    "$? $(grep -cE '^ +[0-9]+ (B|KiB) +[0-9.]+ +[0-9.e+-]+$' "$tmp/f/table.txt")"

# Each malformed sample is refused: exit 1, FILE:LINE and what is wrong.
while read -r file want; do
    out=$("$compare" --report --out "$tmp/b" "$s/$file" 2>&1)
    rc=$?
    if [ "$rc" -eq 1 ] && grep -qE -- "^compare-jaccl: $s/$want" <<<"$out"; then
        pass "$file refused: ${out#"compare-jaccl: $s/"}"
    else
        fail "$file: exit $rc, '$out', expected a refusal matching '$want'"
    fi
done <<'EOF'
bad-no-end.log bad-no-end\.log:8: no end record after this line: the run stopped early$
bad-unverified.log bad-unverified\.log:6: verified=no: expected yes \(a result that was not verified is no result\)$
bad-missing-field.log bad-missing-field\.log:7: no best_us= in the result record$
bad-number.log bad-number\.log:5: best_us=fast: expected a positive number$
bad-version.log bad-version\.log:3: format version 2; this compare-jaccl reads version 1$
bad-duplicate.log bad-duplicate\.log:6: all_sum float32 32 bytes measured twice$
bad-count.log bad-count\.log:4: bytes=8 is not count=4 float32 elements of 4 bytes$
bad-end-count.log bad-end-count\.log:12: the end record says mlx-jaccl ran 9 results, but mlx-jaccl printed 8$
bad-median.log bad-median\.log:8: median_us=1 is below best_us=6\.256$
bad-order.log bad-order\.log:3: a result record before the begin record$
bad-kind.log bad-kind\.log:10: unknown record kind resultat$
bad-impl.log bad-impl\.log:9: impl=mlx-mpi in a run of mlx-jaccl$
bad-no-records.log bad-no-records\.log: no tbbench records: the run printed none \(see the log\)$
EOF
out=$("$compare" --report --out "$tmp/b" "$s/mlx-jaccl-round1.log" "$s/bad-ranks-2.log" 2>&1)
rc=$?
expect "runs on 2 and 4 ranks together are refused" \
    "1 compare-jaccl: $s/bad-ranks-2.log ran mlx-jaccl on 2 ranks, but $s/mlx-jaccl-round1.log ran mlx-jaccl on 4: not comparable" \
    "$rc $out"
bad=("$s"/bad-*.log)
expect "every bad-*.log sample is exercised here" 14 "${#bad[@]}"

# A malformed MLX hostfile: tbrdma's parser (through tbrdma-doctor) refuses it, naming why,
# before any host is reached.
if [ -x "$top/build/tools/tbrdma-doctor" ]; then
    echo '{"hosts": [{"ssh": "mac-a", "rdma": [null, "rdma_en2"]}, {"ssh": "mac-b", "rdma": [null, null]}]}' >"$tmp/h.json"
    out=$("$compare" --mpi-only --check-only "$tmp/h.json" 2>&1)
    expect "a malformed MLX hostfile is refused by tbrdma's parser" \
        "1 host mac-a lists 1 device(s) for host mac-b but host mac-b lists 0 for host mac-a; fix: correct the hostfile" \
        "$? $(sed -n 's/^tbrdma-doctor could not check the cluster (exit 2): .*: hostfile: //p' <<<"$out" | sed 's/ (MLX.*//')"
else
    fail "no $top/build/tools/tbrdma-doctor (build first: ./build.sh)"
fi
finish
