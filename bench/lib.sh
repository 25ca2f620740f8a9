# shellcheck shell=bash
# bench/lib.sh: what bench/stripe_bench.sh shares with bench/run, sourced once CHECK_NAME and csv
# (the output file) are set: test/mpi/lib.sh on Open MPI 4.1 (its cluster and launch helpers),
# tb_bench built from bench/tb_bench.c by suite_mpi.sh's mpi_build into $BENCH_BIN (the binary
# bench/run uses), and bench_tb to run it on 2 simulated Macs.

# shellcheck source=../test/mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../test/mpi/lib.sh"
# shellcheck source=suite_mpi.sh
. "$(dirname "${BASH_SOURCE[0]}")/suite_mpi.sh"
mt_flavour 4.1
mt_require
mkdir -p "$MT_REPO/build/bench" "$(dirname "$csv")"
BENCH_BIN=$MT_REPO/build/bench/tb_bench-4.1
mpi_build

# bench_tb OUT MPIRUN-ARGS... -- TB_BENCH-ARGS...: tb_bench on mac-a and mac-b (one rank each,
# pml ob1, tbrdma over libtbsim available), its output in OUT; a failed run ends the benchmark.
bench_tb()
{
    local out=$1 args=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        args+=("$1")
        shift
    done
    shift
    mt_launch 2 1 --map-by node --mca pml ob1 "${args[@]}" \
        --mca opal_mca_base_component_path "$MT_COMPONENTS" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" "$BENCH_BIN" "$@" >"$out" 2>&1 \
        || { echo "$CHECK_NAME: run failed ($out):" >&2; tail -20 "$out" >&2; exit 1; }
}
