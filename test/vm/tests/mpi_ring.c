/*
 * The MPI program of the VM tier's mesh tests: every rank says where it runs, a token goes once
 * around the ring (each rank adds its rank), every pair exchanges a 64 KiB message both ways,
 * and an allreduce sums the ranks. Prints "mpi_ring: ok ranks=N" on rank 0 when every result
 * is right; exits 1 otherwise. Built on the host by test/vm/run-tier.sh (mpicc).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_TAG   1
#define PAIR_TAG   2
#define PAIR_BYTES (64 * 1024)

static int ring_pass(int rank, int size)
{
    int token = 0;

    if (0 == rank) {
        MPI_Send(&token, 1, MPI_INT, 1 % size, RING_TAG, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, size - 1, RING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return (size * (size - 1) / 2 == token) ? 0 : 1;
    }
    MPI_Recv(&token, 1, MPI_INT, rank - 1, RING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    token += rank;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, RING_TAG, MPI_COMM_WORLD);
    return 0;
}

/* Every pair swaps a buffer filled with the sender's rank; returns the number of bad bytes. */
static int pair_exchange(int rank, int size, unsigned char *out, unsigned char *in)
{
    int peer, i, bad = 0;

    memset(out, rank, PAIR_BYTES);
    for (peer = 0; peer < size; peer++) {
        if (peer == rank) {
            continue;
        }
        MPI_Sendrecv(out, PAIR_BYTES, MPI_BYTE, peer, PAIR_TAG, in, PAIR_BYTES, MPI_BYTE, peer,
                     PAIR_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (i = 0; i < PAIR_BYTES; i++) {
            if (in[i] != (unsigned char) peer) {
                bad++;
            }
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    unsigned char *out, *in;
    int rank, size, len, errors = 0, total = 0, sum = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    printf("mpi_ring: rank %d/%d on %s\n", rank, size, host);
    out = malloc(PAIR_BYTES);
    in = malloc(PAIR_BYTES);
    if (NULL == out || NULL == in) {
        fprintf(stderr, "mpi_ring: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (size > 1) {
        errors += ring_pass(rank, size);
    }
    errors += pair_exchange(rank, size, out, in);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    errors += (size * (size - 1) / 2 == sum) ? 0 : 1;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == rank) {
        printf("mpi_ring: %s ranks=%d errors=%d\n", (0 == total) ? "ok" : "FAILED", size, total);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return (0 == total) ? 0 : 1;
}
