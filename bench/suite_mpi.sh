# shellcheck shell=bash
# suite_mpi.sh: MPI's side of bench/run (sourced after test/mpi/lib.sh): bench/tb_bench over one
# transport on the simulated cluster, one rank per Mac (--map-by node), ob1:
#   tbrdma  --mca btl self,tbrdma (libtbsim underneath)
#   nocsum  the same with the payload CRC32C off (btl_tbrdma_checksum 0)
#   tcp     --mca btl self,tcp over the cables' own IP interfaces (btl_tcp_if_include)
# With two cables between 2 Macs, one cable is rdma_en2 / en2 (btl_tbrdma_if_include,
# btl_tcp_if_include) and two cables leave tbrdma both.
# tbrdma's liveness timeout is 60 s here (btl_tbrdma_peer_timeout_ms, 5 s by default): on a
# machine loaded by other sessions a rank can be held off the CPU for seconds, and liveness is
# not what is measured. tb_bench checks every size of every test before timing it: a run whose
# mpirun failed, or in which a rank did not print its OK line, is run once more, and then gives
# no row (said on stderr).

# mpi_build: tb_bench for the flavour, into BENCH_BIN (bench/run sets it).
mpi_build()
{
    "${MT_MPICC[@]}" -O2 -Wall -o "$BENCH_BIN" "$MT_REPO/bench/tb_bench.c" -lpthread \
        || fatal "bench/tb_bench.c does not build with the $MT_FLAVOUR mpicc"
}

# mpi_btl TRANSPORT MACS CABLES: the BTL arguments of a transport.
mpi_btl()
{
    local ifs=en2 devs=rdma_en2
    if [ "$2" -gt 2 ]; then
        ifs=$(seq 2 "$2" | sed 's/^/en/' | paste -sd,) # a full mesh: en2 .. en(MACS)
    fi
    [ "$2" -gt 2 ] || [ "$3" -gt 1 ] && devs= # one cable only when 2 Macs have two
    case $1 in
    tbrdma) echo "--mca btl self,tbrdma${devs:+ --mca btl_tbrdma_if_include $devs}" ;;
    nocsum) echo "--mca btl self,tbrdma --mca btl_tbrdma_checksum 0${devs:+ --mca btl_tbrdma_if_include $devs}" ;;
    tcp) echo "--mca btl self,tcp --mca btl_tcp_if_include $ifs" ;;
    *) fatal "unknown transport $1 (tbrdma, nocsum, tcp)" ;;
    esac
}

# mpi_run TRANSPORT MACS CABLES TESTS SIZES LOG: one tb_bench run, its output and mpirun's exit
# status in LOG; fails unless mpirun succeeded and every rank printed its OK line.
mpi_run()
{
    local max rc
    max=$(tr , '\n' <<<"$5" | sort -n | tail -1)
    # shellcheck disable=SC2046 # mpi_btl prints a word list
    mt_launch "$2" 1 --map-by node --mca pml ob1 $(mpi_btl "$1" "$2" "$3") \
        --mca opal_mca_base_component_path "$MT_COMPONENTS" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_peer_timeout_ms 60000 \
        "$BENCH_BIN" -t "$4" -s "$5" -r "$BENCH_REPEATS" "${BENCH_RT_FLAG[@]}" "$max" \
        "$BENCH_SCALE" >"$6" 2>&1
    rc=$?
    echo "bench: mpirun exit $rc" >>"$6"
    [ "$rc" -eq 0 ] && [ "$(grep -c "^tbtest tb_bench: rank [0-9]* of $2 OK" "$6")" -eq "$2" ]
}

# mpi_measure TRANSPORT MACS CABLES TESTS SIZES OUT: tb_bench's rows "test,bytes,usec,MB/s"
# appended to OUT (its output in a log of its own under BENCH_WORK).
mpi_measure()
{
    local n=1 log
    while [ -e "$BENCH_WORK/mpi.$1.$2.$3.$n.log" ]; do n=$((n + 1)); done
    log=$BENCH_WORK/mpi.$1.$2.$3.$n.log
    if ! mpi_run "${@:1:5}" "$log"; then
        echo "bench: $1 on $2 Macs, $3 cable(s) failed, once more ($log):" >&2
        grep -v '^[a-z]*,[0-9]' "$log" | tail -n 5 >&2
        log=$log.again
        if ! mpi_run "${@:1:5}" "$log"; then
            echo "bench: $1 on $2 Macs, $3 cable(s) failed twice ($log):" >&2
            grep -v '^[a-z]*,[0-9]' "$log" | tail -n 15 >&2
            return 1
        fi
    fi
    grep -E '^[a-z]+,[0-9]+,' "$log" | awk -F, -v OFS=, '{ print $1, $2, $4, $5 }' >>"$6"
}
