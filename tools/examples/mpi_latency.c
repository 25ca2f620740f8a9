/*
 * mpi_latency: the latency check of docs/quickstart-macos.md. Ranks 0 and 1 exchange a small
 * message back and forth and rank 0 prints the one-way latency (half the mean round trip); any
 * other ranks wait at the final barrier. Build with `mpicc -O2 -o mpi_latency mpi_latency.c`;
 * run with two ranks on two Macs:
 *
 *   mpirun -np 2 --host mac-a,mac-b --mca pml ob1 --mca btl self,tbrdma ./mpi_latency
 *
 * Options: [BYTES [ITERATIONS]] (default 8 bytes, 10000 round trips after 100 warm-up ones).
 * The payload is checked on every round trip; a mismatch ends the job with exit status 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAT_WARMUP 100
#define LAT_TAG    7

/* One round trip from rank 0 (send then receive) or rank 1 (receive then send back). */
static int lat_round_trip(int rank, unsigned char *buf, int bytes, int iter)
{
    MPI_Status st;
    int i;

    if (0 == rank) {
        memset(buf, iter & 0xff, (size_t) bytes);
        MPI_Send(buf, bytes, MPI_BYTE, 1, LAT_TAG, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, 1, LAT_TAG, MPI_COMM_WORLD, &st);
        for (i = 0; i < bytes; i++) {
            if (buf[i] != (unsigned char) (iter & 0xff)) {
                return -1;
            }
        }
        return 0;
    }
    MPI_Recv(buf, bytes, MPI_BYTE, 0, LAT_TAG, MPI_COMM_WORLD, &st);
    MPI_Send(buf, bytes, MPI_BYTE, 0, LAT_TAG, MPI_COMM_WORLD);
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size, bytes = (1 < argc) ? atoi(argv[1]) : 8;
    int iters = (2 < argc) ? atoi(argv[2]) : 10000, i, bad = 0;
    char host0[MPI_MAX_PROCESSOR_NAME] = "", host1[MPI_MAX_PROCESSOR_NAME] = "";
    unsigned char *buf;
    double t0 = 0.0, t1;
    int len;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = malloc((size_t) (0 < bytes ? bytes : 1));
    if (2 > size || 0 > bytes || 1 > iters || NULL == buf) {
        if (0 == rank) {
            fprintf(stderr, "mpi_latency: needs 2 ranks, BYTES >= 0 and ITERATIONS >= 1\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Get_processor_name(0 == rank ? host0 : host1, &len);
    if (1 == rank) {
        MPI_Send(host1, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, LAT_TAG, MPI_COMM_WORLD);
    } else if (0 == rank) {
        MPI_Recv(host1, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, LAT_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    }
    for (i = 0; rank < 2 && i < LAT_WARMUP + iters && 0 == bad; i++) {
        if (LAT_WARMUP == i) {
            t0 = MPI_Wtime();
        }
        bad = lat_round_trip(rank, buf, bytes, i);
    }
    t1 = MPI_Wtime();
    if (0 == rank) {
        if (bad) {
            fprintf(stderr, "mpi_latency: the payload came back changed\n");
        } else {
            printf("mpi_latency: %d B between %s and %s: %.2f us one-way (%d round trips)\n", bytes,
                   host0, host1, (t1 - t0) * 1e6 / (2.0 * iters), iters);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    MPI_Finalize();
    return bad ? 1 : 0;
}
