#!/usr/bin/env bash
# bench/mlx_collectives.py, the MLX half of compare-jaccl, as far as this machine allows: MLX
# cannot be installed here, so the script runs on a stand-in for MLX that exists only in this
# test (test/bench/fake-mlx: the few mlx.core calls the script makes, on Python lists, for a
# group of one process). That runs the script's control flow, its verification and its records,
# not MLX, JACCL or any timing. Checked: every Python file of compare-jaccl compiles; the
# script's records read back through compare-jaccl --report, for both backends, with the sizes,
# counts, iterations and repetitions of tb_coll_bench.c (run as one process); a collective that
# returns a wrong value ends the run (exit 1, no record for it, the report refuses the run); a
# backend that does not start, MLX missing and a bad size are refused. No root.
source "$(dirname "$0")/lib.sh"
script="$top/bench/mlx_collectives.py"
bench_tmp
need python3 mpicc
export PYTHONPYCACHEPREFIX=$tmp/pycache # no __pycache__ in the tree

for f in "$script" "$compare" "$top"/bench/compare_jaccl/*.py; do
    check "$(basename "$f") compiles (python3 -m py_compile)" python3 -m py_compile "$f"
done

# mlx PYTHONPATH-VALUE ARGS...: the script on the stand-in, stdout in $tmp/out, stderr in
# $tmp/err, exit status in $rc.
mlx()
{
    local path=$1
    shift
    env PYTHONPATH="$path" python3 "$script" --max 4096 --reps 2 --scale 0.0001 "$@" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

for backend in jaccl mpi; do
    FAKE_MLX_VERSION=0.32.1 mlx "$top/test/bench/fake-mlx" --backend "$backend"
    expect "backend $backend: exit 0" 0 "$rc"
    check_grep "backend $backend: the begin record names mlx-$backend, the MLX version, the backend" "$tmp/out" \
        "^tbbench 1 begin impl=mlx-$backend ranks=1 reps=2 warmup=2 scale=0\\.0001 lib=mlx-0\\.32\\.1 backend=$backend\$"
    expect "backend $backend: 24 verified results (2 ops x 2 dtypes x 8 B..4 KiB)" 24 \
        "$(grep -c "^tbbench 1 result impl=mlx-$backend .* verified=yes\$" "$tmp/out")"
    check "backend $backend: compare-jaccl --report reads the records" \
        "$compare" --report --out "$tmp/r-$backend" "$tmp/out"
done
# The same sizes, counts, iterations and repetitions as tb_coll_bench.c (run as one process),
# on sizes and a scale where the iteration formula's every term shows (12 B to 1000 B, x2).
mpicc -O2 -o "$tmp/tb_coll_bench" "$top/bench/tb_coll_bench.c" || fatal "tb_coll_bench.c does not build"
same=(--min 12 --max 1000 --factor 2 --scale 0.0013 --reps 1 --warmup 0 --dtypes bfloat16)
"$tmp/tb_coll_bench" "${same[@]}" >"$tmp/c.out" 2>&1 || fatal "tb_coll_bench failed: $(cat "$tmp/c.out")"
mlx "$top/test/bench/fake-mlx" --backend jaccl "${same[@]}"
shape()
{
    sed -n 's/^tbbench 1 result impl=[^ ]* \(op=.* reps=[0-9]*\) best_us=.*/\1/p' "$1"
}
expect "the same 16 sizes, counts, iterations and repetitions as tb_coll_bench.c, in its order" \
    "16 $(shape "$tmp/c.out" | md5sum)" "$(shape "$tmp/out" | wc -l) $(shape "$tmp/out" | md5sum)"
expect "... with the iteration counts of the formula (12 B: 63, 1000 B: 51)" "63 51" \
    "$(sed -n 's/.*op=all_sum .* bytes=12 count=6 iters=\([0-9]*\) .*/\1/p' "$tmp/out") $(sed -n 's/.*op=all_sum .* bytes=1000 count=500 iters=\([0-9]*\) .*/\1/p' "$tmp/out")"

# A wrong value: the first all_gather of the stand-in returns a wrong element.
FAKE_MLX_CORRUPT=all_gather mlx "$top/test/bench/fake-mlx" --backend jaccl
expect "a wrong all_gather: exit 1" 1 "$rc"
check_grep "a wrong all_gather: named on stderr" "$tmp/err" '^mlx_collectives: rank 0: all_gather float32 8 B: wrong result$'
expect "a wrong all_gather: the all_sum records only, no end record" "12 0 0" \
    "$(grep -c 'op=all_sum' "$tmp/out") $(grep -c 'op=all_gather' "$tmp/out") $(grep -c '^tbbench 1 end' "$tmp/out")"
out=$("$compare" --report --out "$tmp/r-bad" "$tmp/out" 2>&1)
expect "a wrong all_gather: compare-jaccl --report refuses the run (it stopped early)" "1 1" \
    "$? $(grep -c 'no end record after this line: the run stopped early$' <<<"$out")"
FAKE_MLX_CORRUPT=all_sum mlx "$top/test/bench/fake-mlx" --backend jaccl --dtypes bfloat16
expect "a wrong bfloat16 all_sum: exit 1, no result" "1 0" "$rc $(grep -c '^tbbench 1 result' "$tmp/out")"

# A backend that does not start, MLX missing, a bad size.
FAKE_MLX_INIT_FAIL=1 mlx "$top/test/bench/fake-mlx" --backend jaccl
expect "a backend that does not start: exit 2 and MLX's error" \
    "2 mlx_collectives: mx.distributed.init(backend='jaccl') failed: [jaccl] Couldn't initialize (fake)" \
    "$rc $(cat "$tmp/err")"
mlx "$tmp/nothing-here" --backend jaccl
expect "MLX missing: exit 2" 2 "$rc"
check_grep "MLX missing: says so, with the fix" "$tmp/err" '^mlx_collectives: MLX is not installed for .*: pip install mlx$'
mlx "$top/test/bench/fake-mlx" --backend jaccl --max 6
expect "a size that is not a multiple of 4: usage error" 2 "$rc"
finish
