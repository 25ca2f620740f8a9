/*
 * tb_overlap: how much of a large exchange keeps moving while the ranks compute. An even number
 * of ranks in pairs (rank r with rank r ^ 1: with --map-by node on 2 hosts, a pair spans the
 * cable, and at N ranks per Mac N pairs share it at once); per size, the best of --iters runs
 * (each the slowest rank's time) of each of:
 *   comm   both post MPI_Irecv and MPI_Isend of the size, then MPI_Waitall (nothing else)
 *   comp   a computation calibrated to take as long as comm, no MPI call
 *   both   post the exchange, run the same computation, then MPI_Waitall
 * and prints overlap = (comm + comp - both) / comm: 1 when the exchange is hidden entirely behind
 * the computation, 0 when it only moves inside MPI_Waitall. Every received buffer is checked.
 * A measurement, never a verdict (bench/README.md). Usage:
 *   tb_overlap [--min BYTES] [--max BYTES] [--factor F] [--iters N] [--impl NAME]
 * Output: "tboverlap result impl=NAME bytes=B comm_us=.. comp_us=.. both_us=.. overlap=.. ok=yes".
 */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* The computation: n steps of dependent floating-point work (no memory traffic). */
static void compute(long n)
{
    double x = 1.0;

    for (long i = 0; i < n; i++) {
        x = x * 1.0000001 + 1e-9;
    }
    sink = x;
}

/* Steps of compute() per microsecond on this rank, from a run of about 20 ms. */
static double steps_per_us(void)
{
    long n = 1000;
    double t;

    for (;;) {
        t = MPI_Wtime();
        compute(n);
        t = MPI_Wtime() - t;
        if (t > 0.02) {
            return (double) n / (t * 1e6);
        }
        n *= 2;
    }
}

static void fill(uint8_t *b, size_t n, int rank, int iter)
{
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t) (i * 7 + rank * 31 + iter);
    }
}

static int check(const uint8_t *b, size_t n, int rank, int iter)
{
    for (size_t i = 0; i < n; i += 509) {
        if (b[i] != (uint8_t) (i * 7 + rank * 31 + iter)) {
            return 0;
        }
    }
    return n == 0 || b[n - 1] == (uint8_t) ((n - 1) * 7 + rank * 31 + iter);
}

/* One run: the exchange of n bytes with peer, with steps of computation between post and wait
 * (0: none, -1: the computation alone). Returns its time in us; *ok cleared on a wrong byte. */
static double run(uint8_t *sb, uint8_t *rb, size_t n, int me, int peer, long steps, int iter,
                  int *ok)
{
    MPI_Request rq[2];
    double t;

    fill(sb, n, me, iter);
    memset(rb, 0, n);
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    if (steps < 0) {
        compute(-steps);
        return (MPI_Wtime() - t) * 1e6;
    }
    MPI_Irecv(rb, (int) n, MPI_BYTE, peer, iter, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(sb, (int) n, MPI_BYTE, peer, iter, MPI_COMM_WORLD, &rq[1]);
    compute(steps);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    t = (MPI_Wtime() - t) * 1e6;
    *ok &= check(rb, n, peer, iter);
    return t;
}

/* The slower rank's time (both must be done for the exchange to be). */
static double slowest(double t)
{
    double m;

    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv)
{
    size_t min = 64 << 10, max = 16 << 20, factor = 4;
    int iters = 10, me, np, peer, ok = 1;
    const char *impl = "tbrdma";
    double rate;
    uint8_t *sb, *rb;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "--min")) {
            min = strtoul(argv[i + 1], NULL, 0);
        } else if (0 == strcmp(argv[i], "--max")) {
            max = strtoul(argv[i + 1], NULL, 0);
        } else if (0 == strcmp(argv[i], "--factor")) {
            factor = strtoul(argv[i + 1], NULL, 0);
        } else if (0 == strcmp(argv[i], "--iters")) {
            iters = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "--impl")) {
            impl = argv[i + 1];
        }
    }
    if (np < 2 || np % 2 || min < 1 || factor < 2 || iters < 1) {
        if (0 == me) {
            fprintf(stderr, "tb_overlap: an even number of ranks, --min >= 1, --factor >= 2, "
                            "--iters >= 1\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = me ^ 1;
    sb = malloc(max);
    rb = malloc(max);
    if (NULL == sb || NULL == rb) {
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    rate = steps_per_us();
    MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    for (size_t n = min; n <= max; n *= factor) {
        double comm = 1e30, comp = 1e30, both = 1e30;
        long steps;
        int it = 0;

        for (int i = 0; i < iters; i++, it++) {
            double t = slowest(run(sb, rb, n, me, peer, 0, it, &ok));
            comm = (t < comm) ? t : comm;
        }
        steps = (long) (comm * rate) + 1;
        for (int i = 0; i < iters; i++, it++) {
            double t = slowest(run(sb, rb, n, me, peer, -steps, it, &ok));
            comp = (t < comp) ? t : comp;
        }
        for (int i = 0; i < iters; i++, it++) {
            double t = slowest(run(sb, rb, n, me, peer, steps, it, &ok));
            both = (t < both) ? t : both;
        }
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (0 == me) {
            printf("tboverlap result impl=%s bytes=%zu comm_us=%.1f comp_us=%.1f both_us=%.1f "
                   "overlap=%.2f ranks=%d ok=%s\n",
                   impl, n, comm, comp, both, (comm + comp - both) / comm, np, ok ? "yes" : "no");
            fflush(stdout);
        }
    }
    if (0 == me) {
        printf("tboverlap end ok=%s\n", ok ? "yes" : "no");
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return ok ? 0 : 1;
}
