/*
 * tb_signal: an application that handles signals itself, for test/mpi/signal.sh. Before MPI_Init
 * it installs its own SIGTERM handler (which only counts the signal) and ignores SIGHUP, as a
 * long-running code that checkpoints on SIGTERM, or one started under nohup, does. Then it runs
 * rounds of an exchange with every other rank (MPI_Sendrecv at every distance, every byte
 * checked). Rank 0 prints "tbtest signal: running" after the first round. Once any rank has seen
 * a SIGTERM (an MPI_Allreduce of the counts every round), every rank runs 50 more rounds, so the
 * transport must still work after the signal, then the program ends. A rank that never sees one
 * stops after 60 s (a failure: the test sends it).
 */
#include "tb_common.h"

#include <signal.h>
#include <time.h>

static volatile sig_atomic_t sig_terms;

static void sig_on_term(int sig)
{
    (void) sig;
    sig_terms++;
}

static double sig_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* One round: an exchange at every distance, every byte checked. */
static void sig_round(unsigned char *out, unsigned char *in, size_t len, int round)
{
    char what[96];

    for (int d = 1; d < tb_size; d++) {
        int to = (tb_rank + d) % tb_size, from = (tb_rank - d + tb_size) % tb_size;

        tb_fill(out, len, ((uint64_t) round << 16) ^ ((uint64_t) tb_rank << 4) ^ (uint64_t) d);
        memset(in, 0, len);
        MPI_Sendrecv(out, (int) len, MPI_BYTE, to, d, in, (int) len, MPI_BYTE, from, d,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        snprintf(what, sizeof(what), "round %d: %zu bytes from rank %d", round, len, from);
        tb_verify(in, len, ((uint64_t) round << 16) ^ ((uint64_t) from << 4) ^ (uint64_t) d, what);
    }
}

int main(int argc, char **argv)
{
    const size_t len = 65536;
    struct sigaction sa;
    unsigned char *out, *in;
    int round = 0, after = -1, seen[2] = {0, 0};
    double start;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sig_on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGHUP, SIG_IGN);
    tb_init(&argc, &argv, "signal");
    out = tb_malloc(len);
    in = tb_malloc(len);
    start = sig_now();
    while (after < 50 && 0 == seen[1]) {
        /* a SIGTERM seen here; rank 0's clock says when to give up (every rank agrees) */
        int mine[2] = {(int) sig_terms, 0 == tb_rank && sig_now() - start > 60.0};

        sig_round(out, in, len, round);
        MPI_Allreduce(mine, seen, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (0 == round && 0 == tb_rank) {
            printf("tbtest signal: running\n");
            fflush(stdout);
        }
        after += (seen[0] > 0 || after >= 0) ? 1 : 0;
        round++;
    }
    tb_check(seen[0] > 0, "no rank saw a SIGTERM within 60 s");
    if (0 == tb_rank) {
        printf("tbtest signal: %d rounds, %d after the first SIGTERM\n", round, after);
    }
    free(out);
    free(in);
    return tb_finish();
}
