#!/usr/bin/env bash
# ./run-demo.sh: installs what tbrdma needs, builds it, and runs the main job on a simulated
# cluster of four Macs cabled as a Thunderbolt 5 full mesh (network namespaces, veth cables,
# the libtbsim fabric simulator with Apple's semantics):
#   1. the cluster and one Mac's RDMA ports as tbrdma sees them (tbrdma-info);
#   2. an MPI job across the four Macs over tbrdma alone (pml ob1, btl self,tbrdma): every
#      collective checked, and the simulator's per-cable counters proving tbrdma carried it;
#   3. a short latency / bandwidth table, tbrdma against tcp over the same cable;
#   4. a cable pulled in the middle of a job: the job ends with tbrdma's message naming the peer
#      and the cable, instead of hanging;
#   5. what a misconfigured Mac looks like: a port without IPv4 (macOS 26.2's default).
# Root only. Everything it creates is removed on exit.
set -euo pipefail

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
test/install-deps.sh
echo "== building"
./build.sh >build-demo.log 2>&1 || {
    tail -n 30 build-demo.log
    echo "run-demo: build failed (log: build-demo.log)" >&2
    exit 1
}
rm -f build-demo.log

build="$top/build"
simlib="$build/test/sim/.libs/libtbsim.so"
info="$build/tools/tbrdma-info"
tbc="$top/test/sim/tbcluster"
prefix=tbdemo
demo="$build/demo"
export TBSIM_DIR=/run/tbsim-demo
export TBSIMCTL="$build/test/sim/tbsimctl"

"$tbc" down --prefix "$prefix" >/dev/null 2>&1 || true
trap '"$tbc" down --prefix "$prefix" >/dev/null 2>&1' EXIT

banner()
{
    printf '\n==== %s\n' "$*"
}

# over_tbrdma NP ARGS...: mpirun across the Macs with tbrdma alone between them.
over_tbrdma()
{
    local np=$1
    shift
    "$tbc" mpirun --np "$np" -- --bind-to none --map-by node --mca mpi_yield_when_idle 1 \
        --mca pml ob1 --mca btl self,tbrdma \
        --mca opal_mca_base_component_path "SYS_DEFAULT:$build/plugin/.libs" \
        --mca btl_tbrdma_verbs_lib "$simlib" "$@"
}

# cable_traffic BEFORE AFTER: messages and bytes each cable end sent between two snapshots.
cable_traffic()
{
    join <(awk '{print $2, $4, $6}' "$1" | sort) <(awk '{print $2, $4, $6}' "$2" | sort) \
        | awk '{printf "  %-16s sent %7d messages, %11d bytes\n", $1, $4 - $2, $5 - $3}'
}

mkdir -p "$demo"
for p in tb_coll tb_ring; do
    mpicc -O2 -o "$demo/$p" "test/mpi/$p.c"
done
mpicc -O2 -o "$demo/tb_bench" bench/tb_bench.c

banner "a simulated cluster of 4 Macs, Thunderbolt full mesh, one /30 per cable"
"$tbc" up --prefix "$prefix" --hosts 4 --addressing p2p
"$tbc" status
banner "mac-a: its RDMA ports as tbrdma sees them (tbrdma-info)"
"$tbc" exec mac-a -- "$info" --verbs-lib "$simlib" || true

banner "MPI across the 4 Macs over tbrdma alone: every collective, results checked"
"$TBSIMCTL" counters >"$demo/before"
over_tbrdma 4 --mca btl_tbrdma_stats 1 "$demo/tb_coll" 2>&1 \
    | grep -E '^tbtest|^tbrdma stats' | sed 's/; received.*//' | sort
"$TBSIMCTL" counters >"$demo/after"
echo "what each cable end carried (the simulator's counters: tbrdma moved these bytes):"
cable_traffic "$demo/before" "$demo/after"

banner "mac-a <-> mac-b, same cable: tbrdma against tcp (best of 5; a shared machine, not a Mac)"
for t in tbrdma tcp; do
    btl=(--mca btl self,tbrdma)
    [ "$t" = tcp ] && btl=(--mca btl self,tcp --mca btl_tcp_if_include en2)
    "$tbc" mpirun --np 2 -- --bind-to none --map-by node --mca pml ob1 "${btl[@]}" \
        --mca opal_mca_base_component_path "SYS_DEFAULT:$build/plugin/.libs" \
        --mca btl_tbrdma_verbs_lib "$simlib" "$demo/tb_bench" 1048576 0.01 >"$demo/$t.csv"
done
printf '  %-10s %9s %14s %14s %8s\n' test bytes tbrdma_us tcp_us tcp/tbrdma
join -t, <(awk -F, '{print $1 ":" $2 "," $4}' "$demo/tbrdma.csv" | sort) \
    <(awk -F, '{print $1 ":" $2 "," $4}' "$demo/tcp.csv" | sort) | tr ':' , \
    | awk -F, '$1 != "allreduce" && ($2 == 8 || $2 == 2048 || $2 == 32768 || $2 == 1048576) {
        printf "  %-10s %9s %14.2f %14.2f %7.1fx\n", $1, $2, $3, $4, $4 / $3 }' | sort -k1,1 -k2,2n

banner "a job runs; the cable between mac-c and mac-d is pulled in the middle"
over_tbrdma 4 "$demo/tb_ring" 60 >"$demo/ring.out" 2>&1 &
job=$!
for _ in $(seq 300); do
    grep -q "tbtest ring: running" "$demo/ring.out" && break
    sleep 0.1
done
echo "  the job runs (tb_ring: every rank exchanges with every other, checked); pulling mac-c:en4 at $(date +%T)"
t0=$(date +%s)
"$tbc" fault mac-c:en4 down
rc=0
wait "$job" || rc=$?
echo "  mpirun ended $(($(date +%s) - t0)) s later with exit status $rc; what it said:"
grep -E "lost peer|exited on signal|noticed" "$demo/ring.out" | sed 's/^/  | /' | head -6
"$tbc" fault mac-c:en4 up

banner "mac-b's en2 loses its IPv4 address (what macOS 26.2 does by default)"
"$tbc" exec mac-b -- ip -4 addr flush dev en2
"$tbc" exec mac-b -- "$info" --verbs-lib "$simlib" --device rdma_en2 || true

banner "done; tearing the cluster down"
