/*
 * tb_outage: a job for the outage tests (test/mpi/outage.sh). Each rank has a partner on another
 * Mac (rank ^ 1, with --map-by node) and, every round, exchanges with it at once, non-blocking,
 * one message of every class tbrdma carries, so that any outage of the cable meets all of them in
 * flight:
 *   1-frame    8 B and 4000 B (one frame each),
 *   train      20,000 B (5 one-frame pieces),
 *   bulk       1 MiB (ob1's rendezvous, 68 KiB bulk fragments),
 *   zero-copy  4 MiB (a get emulated over SEND where the queue pair budget allows; copied else),
 * then every rank takes part in an MPI_Allreduce of 64 Ki doubles. Every byte and every sum is
 * checked against values derived from the round. Rank 0 prints "tbtest outage: running" after the
 * first round, and "tbtest outage: round N" every 20 rounds; it stops when the file named by the
 * first argument exists (checked every round, the decision broadcast), so the driver chooses when
 * the job ends, after its last outage, and every rank runs the same rounds.
 * Usage: tb_outage STOP-FILE [max-seconds [divisor [repro]]] (default 120 s: a job that does not
 * stop is a failure of its own; every size divided by divisor, default 1, for slow stand-ins
 * such as the VM tier's Soft-RoCE under qemu). With an odd number of ranks the last one has no
 * partner and takes part in the collective only. "repro" runs issue 24's reproduction instead of
 * the classes: each even rank sends 1 MiB to its partner, which answers with 1 byte, every byte
 * checked. "small" keeps only the 1-frame classes (8 B, 4000 B) and no collective: only the
 * 1-frame channel carries anything, so nothing on the bulk channel can help it recover.
 */
#include "tb_common.h"

#include <time.h>
#include <unistd.h>

#define OUT_CLASSES 5
#define OUT_REDUCE  65536

static size_t out_len[OUT_CLASSES] = {8, 4000, 20000, 1 << 20, 4 << 20};
static int out_reduce = OUT_REDUCE;

static double out_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static uint64_t out_seed(int round, int from, int k)
{
    return ((uint64_t) round << 20) ^ ((uint64_t) from << 8) ^ (uint64_t) k;
}

/* The exchange with the partner: every class at once, every byte checked. */
static int out_classes = OUT_CLASSES;

static void out_exchange(unsigned char **sbuf, unsigned char **rbuf, int partner, int round)
{
    MPI_Request req[2 * OUT_CLASSES];
    MPI_Status st[2 * OUT_CLASSES];
    char what[96];
    int count;

    for (int k = 0; k < out_classes; k++) {
        tb_fill(sbuf[k], out_len[k], out_seed(round, tb_rank, k));
        memset(rbuf[k], 0, out_len[k]);
        MPI_Irecv(rbuf[k], (int) out_len[k], MPI_BYTE, partner, k, MPI_COMM_WORLD, &req[k]);
    }
    for (int k = 0; k < out_classes; k++) {
        MPI_Isend(sbuf[k], (int) out_len[k], MPI_BYTE, partner, k, MPI_COMM_WORLD,
                  &req[out_classes + k]);
    }
    MPI_Waitall(2 * out_classes, req, st);
    for (int k = 0; k < out_classes; k++) {
        MPI_Get_count(&st[k], MPI_BYTE, &count);
        snprintf(what, sizeof(what), "round %d: %zu bytes from rank %d", round, out_len[k],
                 partner);
        tb_check((size_t) count == out_len[k], "%s: received count %d", what, count);
        tb_verify(rbuf[k], out_len[k], out_seed(round, partner, k), what);
    }
}

/* Issue 24's reproduction: 1 MiB one way, answered with 1 byte. */
static void out_repro(unsigned char *big, unsigned char *one, int partner, int round)
{
    char what[96];

    snprintf(what, sizeof(what), "round %d: 1 MiB from rank %d", round, partner);
    if (0 == tb_rank % 2) {
        tb_fill(big, 1 << 20, out_seed(round, tb_rank, 9));
        MPI_Send(big, 1 << 20, MPI_BYTE, partner, 9, MPI_COMM_WORLD);
        MPI_Recv(one, 1, MPI_BYTE, partner, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        tb_check(one[0] == (unsigned char) round, "round %d: the answer is %u", round, one[0]);
        return;
    }
    memset(big, 0, 1 << 20);
    MPI_Recv(big, 1 << 20, MPI_BYTE, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    tb_verify(big, 1 << 20, out_seed(round, partner, 9), what);
    one[0] = (unsigned char) round;
    MPI_Send(one, 1, MPI_BYTE, partner, 10, MPI_COMM_WORLD);
}

/* The collective: element i of rank r is r + i + round; the sum is known in closed form. */
static void out_allreduce(double *in, double *out, int round)
{
    long bad = 0;

    for (int i = 0; i < out_reduce; i++) {
        in[i] = (double) (tb_rank + i + round);
    }
    MPI_Allreduce(in, out, out_reduce, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < out_reduce; i++) {
        double want = (double) tb_size * (i + round) + (double) tb_size * (tb_size - 1) / 2;

        bad += (out[i] != want);
    }
    tb_check(0 == bad, "round %d: allreduce of %d doubles: %ld wrong", round, out_reduce, bad);
}

int main(int argc, char **argv)
{
    const char *stop = (argc > 1) ? argv[1] : "/nonexistent";
    double limit = (argc > 2) ? atof(argv[2]) : 120.0, start;
    int div = (argc > 3) ? atoi(argv[3]) : 1;
    int repro = (argc > 4) && 0 == strcmp(argv[4], "repro");
    int small = (argc > 4) && 0 == strcmp(argv[4], "small");
    unsigned char *sbuf[OUT_CLASSES], *rbuf[OUT_CLASSES];
    double *rin, *rout;
    int round = 0, more = 1, partner;

    tb_init(&argc, &argv, "outage");
    partner = ((tb_rank ^ 1) < tb_size) ? tb_rank ^ 1 : -1;
    for (int k = 0; k < OUT_CLASSES && div > 1; k++) {
        out_len[k] = (out_len[k] / (size_t) div > 8) ? out_len[k] / (size_t) div : 8;
    }
    out_reduce = (div > 1) ? OUT_REDUCE / div : OUT_REDUCE;
    out_classes = small ? 2 : OUT_CLASSES;
    for (int k = 0; k < OUT_CLASSES; k++) {
        sbuf[k] = tb_malloc(out_len[k]);
        rbuf[k] = tb_malloc(out_len[k]);
    }
    rin = tb_malloc((size_t) out_reduce * sizeof(double));
    rout = tb_malloc((size_t) out_reduce * sizeof(double));
    start = out_now();
    while (more) {
        if (0 <= partner && repro) {
            out_repro(sbuf[OUT_CLASSES - 1], rbuf[0], partner, round);
        } else if (0 <= partner) {
            out_exchange(sbuf, rbuf, partner, round);
        }
        if (!repro && !small) {
            out_allreduce(rin, rout, round); /* every rank, a partner or not */
        }
        if (0 == tb_rank) {
            if (0 == round || 0 == round % 20) {
                printf(0 == round ? "tbtest outage: running\n" : "tbtest outage: round %d\n",
                       round);
                fflush(stdout);
            }
            more = (0 != access(stop, F_OK));
            if (out_now() - start > limit) {
                tb_check(0, "still running after %.0f s: stopped", limit);
                more = 0;
            }
        }
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        round++;
    }
    if (0 == tb_rank) {
        printf("tbtest outage: %d rounds in %.1f s\n", round, out_now() - start);
    }
    for (int k = 0; k < OUT_CLASSES; k++) {
        free(sbuf[k]);
        free(rbuf[k]);
    }
    free(rin);
    free(rout);
    return tb_finish();
}
