#!/usr/bin/env bash
# bench/jaccl_sim.sh --mlx-src DIR [--rounds N] [--max BYTES] [--out DIR]: tbrdma against MLX's
# JACCL itself, on the same simulated cable, taking turns.
#
# JACCL is MLX's standalone library (DIR/mlx/distributed/jaccl/lib, from an MLX checkout the
# user supplies) and its own benchmark, examples/allreduce_bench.cpp. It is built here for
# Linux: g++ -std=c++20 -include cstring, with its one `__builtin_available(macOS 26.3, ...)`
# taken as true and nlohmann's json.hpp from Debian (nlohmann-json3-dev). It loads
# `librdma.dylib` by name: a symlink to the simulator's libtbsim.so, found through
# LD_LIBRARY_PATH. Nothing of MLX is copied into this repository: the sources are copied into
# build/bench/jaccl/ and compiled there. This is the one bench script that builds a fetched
# project, and it never runs in CI (CI cannot fetch MLX).
#
# On 2 simulated Macs joined by one cable, every power of two from 8 B to MAX (default 16 MiB)
# per rank, float32 sum:
#   jaccl    allreduce_bench -d float32 -c (its correctness check on: every size must say OK)
#   tbrdma   bench/tb_coll_bench.c, MPI_Allreduce over `--mca pml ob1 --mca btl self,tbrdma`
#            and nothing else: the defaults a user gets (every result checked by the program)
# on two cables: "memcpy" (no link model: the simulator's copies, what software costs) and
# "apple" (the link model at the rate measured between Macs, `tbsimctl link all apple`: 75 Gbit/s,
# 3 us, interleave=1). Each round runs both, cable after cable; N rounds (default 3). Each
# figure is the least time of every run: JACCL's is its average over 20 calls, tbrdma's the
# best of 5 repetitions, each an average over many calls.
#
# Writes OUT (default build/bench/jaccl_sim): results.csv (cable,bytes,tbrdma_us,jaccl_us,
# ratio), table.md (the ratio table: above 0.8 misses issue 26's aim), plot.png (gnuplot, when
# installed), samples.csv (every run) and versions.txt (MLX's commit, the compilers). bench/run's
# report includes table.md when it exists. Timing never decides anything: it describes this
# machine (2 shared cores).
#
# Without --mlx-src: says so and exits 0. Needs root and network namespaces, ./build.sh, g++,
# and the MLX checkout.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mlx='' rounds=3 max=16777216 out=$repo/build/bench/jaccl_sim
while [ $# -gt 0 ]; do
    case $1 in
    --mlx-src) mlx=${2:?--mlx-src needs a directory}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --max) max=${2:?--max needs a size in bytes}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "jaccl_sim: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$mlx" ]; then
    echo "jaccl_sim: no MLX checkout given (--mlx-src DIR): JACCL cannot be built, nothing measured"
    exit 0
fi
jsrc=$mlx/mlx/distributed/jaccl/lib
[ -f "$jsrc/jaccl/rdma.cpp" ] && [ -f "$jsrc/examples/allreduce_bench.cpp" ] \
    || { echo "jaccl_sim: $mlx holds no JACCL (mlx/distributed/jaccl/lib)" >&2; exit 1; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "jaccl_sim: --rounds $rounds is not a count" >&2; exit 2; }
[[ "$max" =~ ^[0-9]+$ ]] && [ "$max" -ge 8 ] || { echo "jaccl_sim: --max $max: at least 8" >&2; exit 2; }

csv=$out/results.csv
CHECK_NAME=jaccl_sim
# shellcheck source=../test/mpi/lib.sh
. "$repo/test/mpi/lib.sh"
mt_flavour 4.1
mt_require
jdir=$repo/build/bench/jaccl
mkdir -p "$out" "$jdir/src"

# build_jaccl: the library and allreduce_bench as one program, $jdir/allreduce_bench.
build_jaccl()
{
    local json=/usr/include/nlohmann/json.hpp stamp
    if [ ! -f "$json" ]; then
        echo "jaccl_sim: installing nlohmann-json3-dev (JACCL's json.hpp)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nlohmann-json3-dev >/dev/null \
            || fatal "nlohmann-json3-dev cannot be installed: JACCL needs json.hpp"
    fi
    command -v g++ >/dev/null || fatal "g++ is not installed"
    stamp=$(cat "$jsrc"/jaccl/*.h "$jsrc"/jaccl/*.cpp "$jsrc/examples/allreduce_bench.cpp" | sha256sum)
    if [ -x "$jdir/allreduce_bench" ] && [ "$stamp" = "$(cat "$jdir/stamp" 2>/dev/null)" ]; then
        ln -sf "$MT_SIMLIB" "$jdir/librdma.dylib"
        echo "jaccl_sim: $jdir/allreduce_bench is built from these sources already"
        return
    fi
    rm -rf "$jdir/src" && mkdir -p "$jdir/src/jaccl"
    cp "$jsrc"/jaccl/*.h "$jsrc"/jaccl/*.cpp "$jdir/src/jaccl/" && cp "$jsrc/examples/allreduce_bench.cpp" "$jdir/src/" \
        || fatal "cannot copy JACCL's sources"
    # the one macOS-only construct: an availability check, true on the Macs it targets
    sed -i 's/__builtin_available([^)]*)/(1)/' "$jdir"/src/jaccl/*.h "$jdir"/src/jaccl/*.cpp
    ! grep -q '__builtin_available' "$jdir"/src/jaccl/* || fatal "JACCL has another __builtin_available"
    g++ -std=c++20 -O2 -include cstring -I"$jdir/src" -I/usr/include/nlohmann -o "$jdir/allreduce_bench" \
        "$jdir/src/allreduce_bench.cpp" "$jdir"/src/jaccl/*.cpp -ldl -lpthread >"$jdir/build.log" 2>&1 \
        || { tail -20 "$jdir/build.log" >&2; fatal "JACCL does not build (log: $jdir/build.log)"; }
    echo "$stamp" >"$jdir/stamp"
    ln -sf "$MT_SIMLIB" "$jdir/librdma.dylib"
    echo "jaccl_sim: built $jdir/allreduce_bench from $jsrc"
}

build_jaccl
mpicc -O2 -o "$jdir/tb_coll_bench" "$here/tb_coll_bench.c" -lm || fatal "tb_coll_bench.c does not build"
{
    echo "mlx: $(git -C "$mlx" log -1 --format='%H %cs' 2>/dev/null || echo "(not a git checkout)")"
    echo "g++: $(g++ --version | head -1)"
    echo "mpicc: $(mpicc --version | head -1); Open MPI $(ompi_info --version 2>/dev/null | sed -n 's/.*v\([0-9.]*\).*/\1/p' | head -1)"
    echo "tbrdma: $(git -C "$repo" log -1 --format='%h %cs')"
    echo "machine: $(nproc) CPUs, $(uname -r)"
} >"$out/versions.txt"

mt_cluster p2p --hosts 2
export MT_YIELD=0 # 2 ranks on 2 cores, busy-polling as on a Mac; JACCL polls too
read -r _ ha ia hb ib < <(sed -n 's/^cable //p' "$TBSIM_DIR/topology" | head -1)
printf '[[null, "rdma_%s"], ["rdma_%s", null]]\n' "$ia" "$ib" >"$jdir/devices.json"
coord_ip=$("$MT_TBCLUSTER" exec "$ha" -- ip -4 -o addr show dev mgmt0 | awk '{print $4}' | cut -d/ -f1)
[ -n "$coord_ip" ] || fatal "no management address on $ha (the JACCL coordinator)"
echo "round,cable,impl,bytes,usec" >"$out/samples.csv"

# jaccl_run ROUND CABLE: allreduce_bench on both Macs; rows appended to samples.csv.
jaccl_run()
{
    local o=$TC_TMP/jaccl.$1.$2 port=$((29000 + RANDOM % 1000)) rank host pid
    local envs=(env LD_LIBRARY_PATH="$jdir" JACCL_IBV_DEVICES="$jdir/devices.json"
        JACCL_COORDINATOR="$coord_ip:$port")
    local args=(-b 8 -e "$max" -f 2 -d float32 -c)
    "$MT_TBCLUSTER" exec "$hb" -- timeout 300 "${envs[@]}" JACCL_RANK=1 "$jdir/allreduce_bench" \
        "${args[@]}" >"$o.1" 2>&1 &
    pid=$!
    timeout 300 "$MT_TBCLUSTER" exec "$ha" -- "${envs[@]}" JACCL_RANK=0 "$jdir/allreduce_bench" \
        "${args[@]}" >"$o.0" 2>&1
    rank=$?
    wait "$pid"
    host=$?
    if [ "$rank" != 0 ] || [ "$host" != 0 ] || ! grep -q '^# Done' "$o.0"; then
        tail -20 "$o.0" "$o.1" >&2
        fatal "JACCL failed on cable $2 (rank 0: exit $rank, rank 1: exit $host)"
    fi
    awk '$1 ~ /^[0-9]+$/ && $NF != "OK" { bad++ } END { exit bad > 0 }' "$o.0" \
        || fatal "JACCL's own check failed on cable $2 ($o.0)"
    awk -v r="$1" -v c="$2" '$1 ~ /^[0-9]+$/ { print r "," c ",jaccl," $1 "," $4 }' "$o.0" \
        >>"$out/samples.csv"
}

# tbrdma_run ROUND CABLE: tb_coll_bench over tbrdma alone, defaults; rows to samples.csv.
tbrdma_run()
{
    local o=$TC_TMP/tbrdma.$1.$2
    mt_launch 2 1 --map-by node --mca pml ob1 --mca btl self,tbrdma \
        --mca opal_mca_base_component_path "$MT_COMPONENTS" --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" \
        "$jdir/tb_coll_bench" --impl mpi-tbrdma --min 8 --max "$max" --factor 2 \
        --ops all_sum --dtypes float32 >"$o" 2>&1 \
        || { tail -20 "$o" >&2; fatal "tbrdma's run failed on cable $2 ($o)"; }
    grep -q '^tbbench 1 end ' "$o" || fatal "tb_coll_bench did not finish on cable $2 ($o)"
    sed -n 's/^tbbench 1 result .* bytes=\([0-9]*\) .* best_us=\([0-9.]*\) .* verified=yes.*/\1 \2/p' "$o" \
        | awk -v r="$1" -v c="$2" '{ print r "," c ",tbrdma," $1 "," $2 }' >>"$out/samples.csv"
}

for round in $(seq "$rounds"); do
    for cable in memcpy apple; do
        if [ memcpy = "$cable" ]; then "$MT_TBCLUSTER" link all off interleave=0; else "$MT_TBCLUSTER" link all apple; fi \
            || fatal "tbcluster link failed"
        echo "jaccl_sim: round $round of $rounds, cable $cable"
        jaccl_run "$round" "$cable"
        tbrdma_run "$round" "$cable"
    done
done
mt_nothing_held "after the runs"

# The least time per cable, implementation and size; then the ratio tbrdma / JACCL.
awk -F, 'NR > 1 { k = $2 "," $4; if (!(k SUBSEP $3 in best) || $5 < best[k SUBSEP $3]) best[k SUBSEP $3] = $5; keys[k] = 1 }
    END { print "cable,bytes,tbrdma_us,jaccl_us,ratio"
          for (k in keys) { t = best[k SUBSEP "tbrdma"]; j = best[k SUBSEP "jaccl"]
              if (t != "" && j != "") printf "%s,%s,%s,%.3f\n", k, t, j, t / j } }' "$out/samples.csv" \
    | { read -r h; echo "$h"; sort -t, -k1,1 -k2,2n; } >"$csv"
{
    echo "| bytes | memcpy cable: tbrdma / JACCL (us) | ratio | apple (75 Gbit/s, 3 us): tbrdma / JACCL (us) | ratio |"
    echo "|---:|---:|---:|---:|---:|"
    awk -F, 'NR > 1 { v[$1, $2] = $3 " / " $4; r[$1, $2] = $5; s[$2] = 1 }
        END { for (b in s) printf "%d | %s | %s | %s | %s\n", b, v["memcpy", b], r["memcpy", b], v["apple", b], r["apple", b] }' "$csv" \
        | sort -n | sed 's/^/| /; s/$/ |/'
    echo
    echo "2 simulated Macs, one cable, $rounds rounds; float32 sum, tbrdma's defaults (btl self,tbrdma);"
    echo "least time of every run. Ratio: tbrdma's time over JACCL's (issue 26 aims at 0.8 or less)."
} >"$out/table.md"
if command -v gnuplot >/dev/null; then
    for c in memcpy apple; do
        for i in tbrdma jaccl; do
            awk -F, -v c="$c" -v i="$i" 'NR > 1 && $1 == c { print $2, (i == "tbrdma") ? $3 : $4 }' "$csv" >"$TC_TMP/$c.$i"
        done
    done
    gnuplot <<EOF
set terminal pngcairo size 1000,650 font "sans,11" noenhanced
set output "$out/plot.png"
set title "MPI_Allreduce over tbrdma against JACCL's all_sum, float32, 2 simulated Macs"
set logscale xy
set xlabel "bytes per rank"
set ylabel "usec"
set grid
set key left top
plot "$TC_TMP/memcpy.tbrdma" w lp lw 2 lc rgb "#0060c0" t "tbrdma, memcpy cable", \
     "$TC_TMP/memcpy.jaccl" w lp lw 2 lc rgb "#209040" t "JACCL, memcpy cable", \
     "$TC_TMP/apple.tbrdma" w lp lw 2 dt 2 lc rgb "#0060c0" t "tbrdma, apple", \
     "$TC_TMP/apple.jaccl" w lp lw 2 dt 2 lc rgb "#209040" t "JACCL, apple"
EOF
fi
cat "$out/table.md"
echo "jaccl_sim: $csv, $out/table.md${out:+, $out/plot.png}"
finish
