#!/usr/bin/env bash
# ./run-demo.sh: installs what tbrdma needs, builds it, and runs the main job on a simulated
# cluster of four Macs cabled as a Thunderbolt 5 full mesh (network namespaces, veth cables,
# the libtbsim fabric simulator with Apple's semantics):
#   1. every Mac's RDMA ports, their GID tables and tbrdma's diagnosis (tbrdma-info);
#   2. an MPI job across the four Macs in which tbrdma resolves the cable of every pair;
#   3. what a misconfigured Mac looks like: a port without IPv4 (macOS 26.2's default), a pulled
#      cable, and what tbrdma says about each.
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
export TBSIM_DIR=/run/tbsim-demo
export TBSIMCTL="$build/test/sim/tbsimctl"
hosts=(mac-a mac-b mac-c mac-d)

"$tbc" down --prefix "$prefix" >/dev/null 2>&1 || true
trap '"$tbc" down --prefix "$prefix" >/dev/null 2>&1' EXIT

banner()
{
    printf '\n==== %s\n' "$*"
}

banner "a simulated cluster of 4 Macs, Thunderbolt full mesh, one /30 per cable"
"$tbc" up --prefix "$prefix" --hosts 4 --addressing p2p
"$tbc" status

for h in "${hosts[@]}"; do
    banner "$h: tbrdma-info"
    "$tbc" exec "$h" -- "$info" --verbs-lib "$simlib" || true
done

banner "mpirun across the 4 Macs: tbrdma publishes its ports and resolves every cable"
mkdir -p "$build/demo"
mpicc -O2 -o "$build/demo/hello" test/integration/ompi/hello.c
"$tbc" mpirun --np 4 -- \
    --mca pml ob1 --mca btl self,tcp,tbrdma \
    --mca opal_mca_base_component_path "SYS_DEFAULT:$build/plugin/.libs" \
    --mca btl_tbrdma_verbs_lib "$simlib" --mca btl_tbrdma_verbose 1 \
    "$build/demo/hello" 2>&1 | grep -E 'tbrdma mesh:|hello' | sort -u

banner "mac-b's en2 loses its IPv4 address (what macOS 26.2 does by default)"
"$tbc" exec mac-b -- ip -4 addr flush dev en2
"$tbc" exec mac-b -- "$info" --verbs-lib "$simlib" --device rdma_en2 || true

banner "the cable between mac-c and mac-d is pulled"
cable=$(awk '$1=="cable" && (($3=="mac-c"&&$5=="mac-d")||($3=="mac-d"&&$5=="mac-c")) {print $2}' \
    "$TBSIM_DIR/topology")
"$tbc" fault "$cable" down
"$tbc" exec mac-c -- "$info" --verbs-lib "$simlib" || true

banner "done; tearing the cluster down"
