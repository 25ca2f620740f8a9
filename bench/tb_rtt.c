/*
 * tb_rtt: ranks 0 and 1 exchange an 8-byte message ITERS times (a ping-pong), nothing else in
 * the loop, so that an instruction counter (bench/instr_count.sh: callgrind restricted to
 * tb_rtt_loop, after a warm-up in another function) sees only the cost of round trips through
 * MPI and the transport. The payload
 * changes every round and rank 0 checks the last answer once, after the loop.
 * Usage: tb_rtt ITERS
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ITERS round trips: rank 0 sends i and expects i + 1 back; rank 1 answers. */
static inline uint64_t tb_rtt_rounds(int rank, long iters)
{
    uint64_t v = 0;

    for (long i = 0; i < iters; i++) {
        if (0 == rank) {
            v = (uint64_t) i;
            MPI_Send(&v, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_UINT64_T, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&v, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v++;
            MPI_Send(&v, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
        }
    }
    return v;
}

/* Two copies of the loop, so that a counter restricted to the measured one (tb_rtt_loop) sees
 * neither the warm-up's first messages nor its waits. */
__attribute__((noinline)) static uint64_t tb_rtt_warmup(int rank, long iters)
{
    return tb_rtt_rounds(rank, iters);
}

__attribute__((noinline)) static uint64_t tb_rtt_loop(int rank, long iters)
{
    return tb_rtt_rounds(rank, iters);
}

int main(int argc, char **argv)
{
    long iters = (argc > 1) ? strtol(argv[1], NULL, 0) : 1000;
    int rank, size, bad = 0;
    uint64_t last;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (2 != size || iters < 1) {
        if (0 == rank) {
            fprintf(stderr, "tb_rtt: needs 2 ranks and ITERS >= 1\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tb_rtt_warmup(rank, 100); /* connections, free lists, caches */
    MPI_Barrier(MPI_COMM_WORLD);
    last = tb_rtt_loop(rank, iters);
    if (0 == rank && last != (uint64_t) iters) {
        fprintf(stderr, "tb_rtt: last answer %llu, expected %ld\n", (unsigned long long) last,
                iters);
        bad = 1;
    }
    if (0 == rank && !bad) {
        printf("tb_rtt: %ld round trips of 8 B, answers checked\n", iters);
    }
    MPI_Finalize();
    return bad;
}
