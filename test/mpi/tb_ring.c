/*
 * tb_ring: a long-running job for the fault tests. Every round, each rank exchanges a patterned
 * message with every other rank (MPI_Sendrecv at each distance), checks every byte and the
 * count, then all ranks agree on a checksum of the round (MPI_Allreduce). Rank 0 prints
 * "tbtest ring: running" after the first round, so a test knows when to break something, and
 * decides when to stop (MPI_Bcast), so every rank runs the same rounds.
 * Usage: tb_ring [seconds] [bytes] [compute] [overlap] (default 20 s, 65536 B, 0 s, 0 s): with
 * compute > 0 the last rank computes outside MPI for that many seconds once, after the first
 * round, while the others wait for it inside MPI (its liveness thread must keep answering their
 * probes); with overlap > 0 every rank computes that long between posting each exchange and
 * waiting for it. With TBTEST_ABORT_RANK=r in the environment, rank r calls MPI_Abort (code 3)
 * after its tenth round. With TBTEST_SHOW_YIELD set, each rank prints whether its idle waits yield
 * the core ("tbtest ring: rank R yield_when_idle V", Open MPI's opal_progress_yield_when_idle,
 * found at run time: no Open MPI header needed).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include "tb_common.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <time.h>

static double tb_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Busy outside MPI for s seconds: no progress call, only the liveness thread answers. */
static void tb_compute(double s)
{
    double until = tb_now() + s;

    while (tb_now() < until) {
    }
}

/*
 * One round: an exchange at every distance, every byte checked; returns the bytes received.
 * overlap > 0: the send and the receive are posted and progressed for 2 ms (a rendezvous's
 * fragments go out), then the rank computes that long and waits, so the liveness thread takes the
 * acknowledgements (their callbacks queued) and the peers' frames (held) meanwhile, for the
 * application thread to hand over in order.
 */
static long tb_round(unsigned char *out, unsigned char *in, size_t len, int round, double overlap)
{
    char what[96];
    MPI_Status st;
    long got = 0;
    int count;

    for (int d = 1; d < tb_size; d++) {
        int to = (tb_rank + d) % tb_size, from = (tb_rank - d + tb_size) % tb_size;
        MPI_Request req[2];
        MPI_Status sts[2];

        tb_fill(out, len, ((uint64_t) round << 16) ^ ((uint64_t) tb_rank << 4) ^ (uint64_t) d);
        memset(in, 0, len);
        if (overlap > 0) {
            double until = tb_now() + 0.002;
            int done = 0;

            MPI_Irecv(in, (int) len, MPI_BYTE, from, d, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(out, (int) len, MPI_BYTE, to, d, MPI_COMM_WORLD, &req[1]);
            while (!done && tb_now() < until) { /* progress a moment: the fragments go out */
                MPI_Testall(2, req, &done, sts);
            }
            tb_compute(overlap);
            if (!done) {
                MPI_Waitall(2, req, sts);
            }
            st = sts[0];
        } else {
            MPI_Sendrecv(out, (int) len, MPI_BYTE, to, d, in, (int) len, MPI_BYTE, from, d,
                         MPI_COMM_WORLD, &st);
        }
        MPI_Get_count(&st, MPI_BYTE, &count);
        snprintf(what, sizeof(what), "round %d: %zu bytes from rank %d", round, len, from);
        tb_check((size_t) count == len, "%s: received count %d", what, count);
        tb_verify(in, len, ((uint64_t) round << 16) ^ ((uint64_t) from << 4) ^ (uint64_t) d, what);
        got += count;
    }
    return got;
}

/* With TBTEST_SHOW_YIELD: whether this rank's idle waits yield the core, after MPI_Init. */
static void tb_show_yield(void)
{
    const bool *yield = dlsym(RTLD_DEFAULT, "opal_progress_yield_when_idle");

    if (NULL == getenv("TBTEST_SHOW_YIELD")) {
        return;
    }
    if (NULL == yield) {
        tb_check(0, "opal_progress_yield_when_idle not found: %s", dlerror());
        return;
    }
    printf("tbtest ring: rank %d yield_when_idle %d\n", tb_rank, *yield ? 1 : 0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    double seconds = (argc > 1) ? atof(argv[1]) : 20.0, start;
    size_t len = (argc > 2) ? strtoul(argv[2], NULL, 0) : 65536;
    double compute = (argc > 3) ? atof(argv[3]) : 0.0;
    double overlap = (argc > 4) ? atof(argv[4]) : 0.0;
    const char *abort_rank = getenv("TBTEST_ABORT_RANK");
    unsigned char *out, *in;
    int round = 0, more = 1;

    tb_init(&argc, &argv, "ring");
    tb_show_yield();
    out = tb_malloc(len);
    in = tb_malloc(len);
    start = tb_now();
    while (more) {
        long got = tb_round(out, in, len, round, overlap), sum = 0;

        MPI_Allreduce(&got, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        tb_check(sum == (long) len * tb_size * (tb_size - 1), "round %d: %ld bytes in all", round,
                 sum);
        if (0 == tb_rank && 0 == round) {
            printf("tbtest ring: running\n");
            fflush(stdout);
        }
        if (10 == round && NULL != abort_rank && atoi(abort_rank) == tb_rank) {
            printf("tbtest ring: rank %d calls MPI_Abort\n", tb_rank);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (0 == round && compute > 0 && tb_size - 1 == tb_rank) {
            tb_compute(compute);
        }
        more = (0 == tb_rank) ? tb_now() - start < seconds : 0;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        round++;
    }
    free(out);
    free(in);
    return tb_finish();
}
