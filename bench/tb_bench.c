/*
 * tb_bench: MPI timings between ranks 0 and 1, printed as CSV rows "test,bytes,iters,usec,MB/s":
 *   latency    ping-pong; usec = half the round trip, MB/s = bytes / usec
 *   bandwidth  rank 0 streams a window of 32 non-blocking sends per iteration to rank 1, which
 *              answers each window with 1 byte; usec per message, MB/s one direction
 *   allreduce  MPI_Allreduce of bytes/8 doubles (sum) over MPI_COMM_WORLD; usec per call
 * Each row is the best of REPEATS runs (default 5; the machine is shared: the least disturbed run).
 * Sizes MIN (default 8 B) to MAX (default 4 MiB) in powers of 4 plus MAX; iterations shrink with
 * size so a size takes about the same time. The first results are checked once (a wrong sum or a
 * wrong byte ends the program with exit 1: a fast wrong transport is no result). Timing is never a
 * verdict: bench/ only describes this machine.
 * Usage: tb_bench [max_bytes] [time_scale] [min_bytes] [repeats] (time_scale < 1 for a quick
 * look; min_bytes = max_bytes measures that one size).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW  32
#define REPEATS 5

static int repeats = REPEATS;
static int rank, nranks;
static double *ar_in, *ar_out;

static int iters_for(size_t bytes, double scale)
{
    double n = 2e8 / (double) (bytes + 2000) * scale;

    return n < 4 ? 4 : (n > 20000 ? 20000 : (int) n);
}

static void row(const char *test, size_t bytes, int iters, double usec, double mbs)
{
    if (0 == rank) {
        printf("%s,%zu,%d,%.3f,%.1f\n", test, bytes, iters, usec, mbs);
        fflush(stdout);
    }
}

static double latency(char *buf, size_t bytes, int iters)
{
    double t0 = 0;

    for (int i = -2; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (0 == rank) {
            MPI_Send(buf, (int) bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int) bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (1 == rank) {
            MPI_Recv(buf, (int) bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int) bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters / 2;
}

static double bandwidth(char *buf, size_t bytes, int iters)
{
    MPI_Request req[WINDOW];
    double t0 = 0;
    char ack = 0;

    for (int i = -1; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        for (int w = 0; w < WINDOW && rank < 2; w++) {
            if (0 == rank) {
                MPI_Isend(buf, (int) bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[w]);
            } else {
                MPI_Irecv(buf, (int) bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[w]);
            }
        }
        if (rank < 2) {
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        }
        if (0 == rank) {
            MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (1 == rank) {
            MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters / WINDOW;
}

static double allreduce(char *buf, size_t bytes, int iters)
{
    int n = (int) (bytes / sizeof(double));
    double t0 = 0;

    for (int i = -2; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        MPI_Allreduce(ar_in, ar_out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    (void) buf;
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

/* A test over every size, each the best (least time) of `repeats` runs. */
static void sweep(const char *test, double (*fn)(char *, size_t, int), char *buf, size_t min,
                  size_t max, int per, double scale)
{
    for (size_t b = min; b <= max; b = (b * 4 > max && b < max) ? max : b * 4) {
        int iters = iters_for(b * (size_t) per, scale);
        double best = 1e30;

        for (int r = 0; r < repeats; r++) {
            double us = fn(buf, b, iters);

            MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            best = us < best ? us : best;
        }
        row(test, b, iters, best, (double) b / best);
    }
}

/* One check before timing: a sum and a message must be right. */
static int verify(double *in, double *out, char *buf, size_t max)
{
    int n = (int) (max / sizeof(double)), bad = 0, all = 0;

    for (int i = 0; i < n; i++) {
        in[i] = (double) (rank + 1) * (double) (i % 1000);
    }
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        bad += out[i] != (double) nranks * (nranks + 1) / 2 * (double) (i % 1000);
    }
    for (size_t i = 0; i < max; i++) {
        buf[i] = (char) (0 == rank ? i * 7 : 0);
    }
    if (0 == rank) {
        MPI_Send(buf, (int) max, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    } else if (1 == rank) {
        MPI_Recv(buf, (int) max, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < max; i++) {
            bad += buf[i] != (char) (i * 7);
        }
    }
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all && 0 == rank) {
        fprintf(stderr, "tb_bench: %d wrong values before timing: no result\n", all);
    }
    return all;
}

int main(int argc, char **argv)
{
    size_t max = (argc > 1) ? strtoul(argv[1], NULL, 0) : (4u << 20);
    double scale = (argc > 2) ? atof(argv[2]) : 1.0;
    size_t min = (argc > 3) ? strtoul(argv[3], NULL, 0) : 8;
    char *buf;
    double *in, *out;

    repeats = (argc > 4) ? atoi(argv[4]) : REPEATS;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    buf = calloc(max, 1);
    in = calloc(max / sizeof(double) + 1, sizeof(double));
    out = calloc(max / sizeof(double) + 1, sizeof(double));
    if (NULL == buf || NULL == in || NULL == out || nranks < 2 || min < 8 || min > max
        || repeats < 1) {
        fprintf(stderr,
                "tb_bench: needs 2 ranks, %zu bytes, 8 <= min_bytes <= max_bytes, repeats >= 1\n",
                max);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (verify(in, out, buf, max)) {
        MPI_Finalize();
        return 1;
    }
    ar_in = in;
    ar_out = out;
    sweep("latency", latency, buf, min, max, 1, scale);
    sweep("bandwidth", bandwidth, buf, min, max, WINDOW, scale);
    sweep("allreduce", allreduce, buf, min, max, 1, scale);
    free(buf);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
