#!/usr/bin/env bash
# bench/compare-jaccl's MPI half end to end on 4 simulated Macs (Open MPI 4.1, or 5.0 when
# given: compare_jaccl_sim.sh 5.0), from MLX's hostfile as tbrdma-doctor writes it: the checks
# pass, tb_coll_bench runs over tbrdma alone (btl self,tbrdma; every rank prints tbrdma's
# counters) for every size, op and dtype, every result verified, 2 rounds; then the table, the
# CSV, the PNG plot, versions.txt and cables.txt. The simulator's per-cable counters prove
# tbrdma carried the traffic on every cable, and nothing is left held. MLX cannot run here:
# the runs are --mpi-only (the MLX half is tested on the stand-in, mlx_script.sh). Timing is
# never judged.
source "$(dirname "$0")/lib.sh"
require_env
cj_flavour "${1:-4.1}"
tools_cluster_up 4 --addressing p2p
cj_hostfile "$TC_TMP/mlx-hostfile.json"
outdir=$top/build/test/bench/compare-$CJ_FLAVOUR-$$ # inside the repository: the 5.0 chroot sees it
rm -rf "$outdir"
trap '[ -n "${SIM_KEEP:-}" ] || rm -rf "$outdir"; tc_cleanup' EXIT
rounds=$([ 5.0 = "$CJ_FLAVOUR" ] && echo 1 || echo 2)

mt_counters "$TC_TMP/before"
t0=$(date +%s)
run_compare --mpi-only --rounds "$rounds" --mca btl_tbrdma_stats 1 --out "$outdir" \
    --remote-dir "$outdir/remote" "$TC_TMP/mlx-hostfile.json"
echo "    (compare-jaccl wall time: $(($(date +%s) - t0)) s)"
mt_counters "$TC_TMP/after"
expect "compare-jaccl --mpi-only exits 0" 0 "$rc"

# Every run: 4 ranks over tbrdma alone, every size of every op and dtype, verified.
sizes=8 # 8 B to 32 KiB, x4, and 64 KiB
want=$((2 * 2 * sizes))
for ((r = 1; r <= rounds; r++)); do
    log=$outdir/runs/round$r-mpi-tbrdma.log
    check_grep "round $r: mpirun with only self,tbrdma between the Macs" "$log" \
        "^\\$ .* --mca btl self,tbrdma --mca btl_tbrdma_mesh_file $outdir/remote/hostfile.json .*/tb_coll_bench"
    expect "round $r: $want verified results (2 ops x 2 dtypes x $sizes sizes)" "$want" \
        "$(grep -c '^tbbench 1 result impl=mpi-tbrdma .* verified=yes$' "$log")"
    expect "round $r: every rank printed tbrdma's counters" 4 "$(grep -c '^tbrdma stats: ' "$log")"
    expect "round $r: frames not returned" 0 "$(grep -o '[0-9]* frames not returned' "$log" \
        | awk '{ s += $1 } END { print s + 0 }')"
    check_grep "round $r: 4 ranks of Open MPI $CJ_FLAVOUR" "$log" \
        "^tbbench 1 begin impl=mpi-tbrdma ranks=4 .* lib=Open_MPI_v$CJ_FLAVOUR"
done
mt_counters_moved "compare-jaccl's MPI runs" "$TC_TMP/before" "$TC_TMP/after" 4096
mt_nothing_held "after compare-jaccl"

# The report: the table on stdout and in table.txt, the CSV, the plot.
for op in all_sum all_gather; do
    for dt in float32 bfloat16; do
        check_grep "table: a block for $op, $dt on 4 ranks" "$outdir/table.txt" "^$op, $dt \\(4 ranks\\)$"
    done
done
expect "table: $want size rows (8 B to 64 KiB)" "$want" \
    "$(grep -cE '^ +([0-9]+ (B|KiB)) +[0-9.]+ +[0-9.e+-]+ *$' "$outdir/table.txt")"
check_grep "table: vs JACCL says JACCL did not run" "$outdir/table.txt" '^vs JACCL: - \(JACCL did not run\)'
check "the table printed is table.txt" grep -qF "$(sed -n '/^all_gather, bfloat16/,$p' "$outdir/table.txt" | tail -1)" <<<"$out"
expect "results.csv: header and $want rows" "op,dtype,bytes,impl,ranks,runs,reps,iters,best_us,median_us,GBps,speedup_vs_jaccl $want" \
    "$(head -1 "$outdir/results.csv") $(grep -c ",mpi-tbrdma,4,$rounds,$((2 * rounds)),[0-9]*,[0-9.]*,[0-9.]*,[0-9.e+-]*,$" "$outdir/results.csv")"
check_grep "table: names tbrdma's settings, the defaults and the --mca given" "$outdir/table.txt" \
    "^tbrdma's settings: pml ob1, btl self,tbrdma, btl_tbrdma_mesh_file the MLX hostfile; --mca btl_tbrdma_stats 1; plus each host's mca-params.conf"
expect "plot.png is a PNG" "89504e47" "$(head -c 4 "$outdir/plot.png" | od -An -tx1 | tr -d ' \n')"

# What the comparison ran on: versions and the cable map.
expect "versions.txt: one line per host, Linux, no macOS, MLX not installed, Open MPI and tbrdma" 4 \
    "$(grep -cE '^mac-[a-d]: Linux, macOS none, MLX not installed \(JACCL -\), Open MPI [0-9.]+, tbrdma 0\.1\.0\+src\.[0-9a-f]{8}$' "$outdir/versions.txt")"
expect "cables.txt: the cluster's 6 cables" \
    "$(cables | awk '{ print $2 ":rdma_" $3, $4 ":rdma_" $5 }' | sort | tr '\n' ';')" \
    "$(grep -v '^#' "$outdir/cables.txt" | sed 's/ #.*//' | sort | tr '\n' ';')"
check_grep "the table's header names the hosts and the cables" "$outdir/table.txt" \
    '^compare-jaccl: .*4 hosts \(mac-a, mac-b, mac-c, mac-d\), one rank each'
finish
