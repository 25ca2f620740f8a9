/*
 * tb_bench: MPI timings, printed by rank 0 as CSV rows "test,bytes,iters,usec,MB/s":
 *   latency    ranks 0 and 1 ping-pong; usec = half the round trip, MB/s = bytes / usec
 *   bandwidth  rank 0 streams a window of non-blocking sends per iteration to rank 1, which
 *              answers each window with 1 byte; usec per message, MB/s one direction
 *   bibw       ranks 0 and 1 stream windows to each other at once; usec per message of one
 *              direction, MB/s both directions together
 *   msgrate    every pair (0-1, 2-3, ...) streams windows, the even rank to the odd one, at once;
 *              usec per message over all pairs (1e6 / usec messages per second), MB/s in all
 *   allreduce  MPI_Allreduce of bytes/8 doubles (sum) over MPI_COMM_WORLD; usec per call, MB/s =
 *              bytes / usec (the "algorithm bandwidth" MLX quotes)
 *   allgather  MPI_Allgather of bytes per rank; usec per call, MB/s = what each rank receives
 *              (bytes * (ranks - 1)) / usec
 *   alltoall   MPI_Alltoall of bytes per pair of ranks; usec per call, MB/s = bytes * (ranks -
 *              1) / usec (what each rank receives)
 *   reduce_scatter  MPI_Reduce_scatter_block of bytes (doubles, sum): each rank's input is
 *              bytes, its result bytes / ranks (rounded down to doubles); usec per call, MB/s =
 *              bytes / usec
 * A window is 32 messages, fewer above 512 KiB (16 MiB in flight at most, 2 messages at least).
 * Iterations shrink with size so that a size takes about the same time; each row is the best
 * (least time) of REPEATS runs (the machine is shared: the least disturbed run).
 * Every size of every test is checked once before it is timed: each message carries a pattern
 * named by its sender, receiver and size, the receive buffers are cleared, and every byte (every
 * sum) that arrives is compared with what was sent. A wrong value ends the program with exit 1
 * and no row for that size: a fast wrong transport is no result. Each rank then prints
 * "tbtest tb_bench: rank R of N OK (C checks)". Timing is never a verdict here.
 * Usage: tb_bench [-t TESTS] [-s SIZES] [-r REPEATS] [-R] [max_bytes] [time_scale]
 *   -t  comma-separated tests (default latency,bandwidth,allreduce)
 *   -s  comma-separated sizes in bytes (default 8 B to max_bytes in powers of 4, and max_bytes)
 *   -r  runs per size, the best kept (default 5)
 *   -R  time each size at real-time priority (SCHED_RR 1, the measuring thread only, back to
 *       normal between sizes): other load on the machine cannot delay a rank that spins on its
 *       peer. bench/run gives raw verbs the same (chrt -r 1). Round-robin, so that another
 *       real-time spinner on the machine takes turns with it instead of starving. Refused
 *       without CAP_SYS_NICE: then said once on stderr, and the sizes run at normal priority.
 *   max_bytes   the largest size (default 4 MiB, or the largest of -s; not below it)
 *   time_scale  < 1 for a quick look (fewer iterations), default 1
 */
#include "../test/mpi/tb_common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#define WINDOW_MAX 32
#define IN_FLIGHT  (16u << 20)
#define MAX_SIZES  64

enum {
    T_LATENCY,
    T_BANDWIDTH,
    T_BIBW,
    T_MSGRATE,
    T_ALLREDUCE,
    T_ALLGATHER,
    T_ALLTOALL,
    T_REDUCE_SCATTER,
    T_COUNT
};

struct test {
    const char *name;
    double (*run)(size_t bytes, int window, int iters); /* usec per message or call */
    size_t (*check)(size_t bytes, int window);          /* wrong values */
    int windowed;                                       /* a window of messages per iteration */
};

static unsigned char *sbuf, *rbuf; /* ranks * max bytes each: block j is for (from) rank j */
static const struct test tests[T_COUNT];

static int window_for(size_t bytes)
{
    size_t w = IN_FLIGHT / (bytes ? bytes : 1);

    return w > WINDOW_MAX ? WINDOW_MAX : (w < 2 ? 2 : (int) w);
}

static int iters_for(size_t bytes, double scale)
{
    double n = 2e8 / (double) (bytes + 2000) * scale;

    return n < 2 ? 2 : (n > 20000 ? 20000 : (int) n);
}

/* The pattern of a message from src to dst of a size, so that a misrouted or stale one shows. */
static uint64_t seed_of(int src, int dst, size_t bytes)
{
    return ((uint64_t) src << 48) ^ ((uint64_t) dst << 40) ^ (uint64_t) bytes;
}

/* Fills block j of the send buffer with the pattern for rank j; clears the receive buffer. */
static void patterns_set(size_t bytes)
{
    for (int j = 0; j < tb_size; j++) {
        tb_fill(sbuf + (size_t) j * bytes, bytes, seed_of(tb_rank, j, bytes));
    }
    memset(rbuf, 0, (size_t) tb_size * bytes);
}

/* Wrong bytes of the receive buffer's block at, which src sent to this rank. */
static size_t block_check(const char *test, size_t bytes, int at, int src)
{
    char what[96];

    snprintf(what, sizeof(what), "%s of %zu B from rank %d", test, bytes, src);
    return tb_verify(rbuf + (size_t) at * bytes, bytes, seed_of(src, tb_rank, bytes), what);
}

/* The partner of this rank in the pairs 0-1, 2-3, ... (-1: none). */
static int partner(void)
{
    int p = tb_rank ^ 1;

    return p < tb_size ? p : -1;
}

static double latency(size_t bytes, int window, int iters)
{
    int peer = 1 - tb_rank, n = (int) bytes;
    double t0 = 0;

    (void) window;
    for (int i = -2; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (0 == tb_rank) {
            MPI_Send(sbuf + bytes, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (1 == tb_rank) {
            MPI_Recv(rbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters / 2;
}

/* One window: sends to `to` unless it is -1, receives from `from` unless it is -1. */
static void window_move(size_t bytes, int window, int to, int from)
{
    MPI_Request req[2 * WINDOW_MAX];
    int n = 0;

    for (int w = 0; w < window && from >= 0; w++) {
        MPI_Irecv(rbuf, (int) bytes, MPI_BYTE, from, 2, MPI_COMM_WORLD, &req[n++]);
    }
    for (int w = 0; w < window && to >= 0; w++) {
        MPI_Isend(sbuf + (size_t) to * bytes, (int) bytes, MPI_BYTE, to, 2, MPI_COMM_WORLD,
                  &req[n++]);
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

/* Windows from each sender to its receiver, each answered with 1 byte. */
static double stream(size_t bytes, int window, int iters, int sender, int receiver)
{
    double t0 = 0;
    char ack = 0;

    for (int i = -1; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (tb_rank == sender) {
            window_move(bytes, window, receiver, -1);
            MPI_Recv(&ack, 1, MPI_BYTE, receiver, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (tb_rank == receiver) {
            window_move(bytes, window, -1, sender);
            MPI_Send(&ack, 1, MPI_BYTE, sender, 3, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters / window;
}

static double bandwidth(size_t bytes, int window, int iters)
{
    return stream(bytes, window, iters, 0, 1);
}

static double msgrate(size_t bytes, int window, int iters)
{
    int p = partner(), pairs = tb_size / 2;

    if (p < 0) {
        return stream(bytes, window, iters, -1, -1) / pairs;
    }
    return stream(bytes, window, iters, tb_rank & ~1, tb_rank | 1) / pairs;
}

static double bibw(size_t bytes, int window, int iters)
{
    int peer = tb_rank < 2 ? 1 - tb_rank : -1;
    double t0 = 0;

    for (int i = -1; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (peer >= 0) {
            window_move(bytes, window, peer, peer);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters / window;
}

/* A collective ITERS times after 2 untimed calls; usec per call. */
static double coll_time(int test, size_t bytes, int iters)
{
    double t0 = 0;
    int n = (int) bytes;

    for (int i = -2; i < iters; i++) {
        if (0 == i) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (T_ALLREDUCE == test) {
            MPI_Allreduce(sbuf, rbuf, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        } else if (T_ALLGATHER == test) {
            MPI_Allgather(sbuf + (size_t) tb_rank * bytes, n, MPI_BYTE, rbuf, n, MPI_BYTE,
                          MPI_COMM_WORLD);
        } else if (T_ALLTOALL == test) {
            MPI_Alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD);
        } else {
            MPI_Reduce_scatter_block(sbuf, rbuf, n / 8 / tb_size, MPI_DOUBLE, MPI_SUM,
                                     MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / iters;
}

static double allreduce(size_t bytes, int window, int iters)
{
    (void) window;
    return coll_time(T_ALLREDUCE, bytes, iters);
}

static double allgather(size_t bytes, int window, int iters)
{
    (void) window;
    return coll_time(T_ALLGATHER, bytes, iters);
}

static double alltoall(size_t bytes, int window, int iters)
{
    (void) window;
    return coll_time(T_ALLTOALL, bytes, iters);
}

static double reduce_scatter(size_t bytes, int window, int iters)
{
    (void) window;
    return coll_time(T_REDUCE_SCATTER, bytes, iters);
}

static size_t latency_check(size_t bytes, int window)
{
    latency(bytes, window, 1);
    return tb_rank < 2 ? block_check("latency", bytes, 0, 1 - tb_rank) : 0;
}

static size_t bandwidth_check(size_t bytes, int window)
{
    bandwidth(bytes, window, 1);
    return 1 == tb_rank ? block_check("bandwidth", bytes, 0, 0) : 0;
}

static size_t bibw_check(size_t bytes, int window)
{
    bibw(bytes, window, 1);
    return tb_rank < 2 ? block_check("bibw", bytes, 0, 1 - tb_rank) : 0;
}

static size_t msgrate_check(size_t bytes, int window)
{
    msgrate(bytes, window, 1);
    return (tb_rank & 1) ? block_check("msgrate", bytes, 0, tb_rank - 1) : 0;
}

/* A sum of doubles over the ranks, run by RUN on IN_ITEMS items: each rank adds (rank + 1) *
 * v(i), so the sum is ranks * (ranks + 1) / 2 * v(i), exactly. This rank's result is the sum's
 * OUT_ITEMS items from item FIRST. */
static size_t sum_check(const char *name, double (*run)(size_t, int, int), size_t bytes, int window,
                        size_t in_items, size_t first, size_t out_items)
{
    double *in = (double *) sbuf, *out = (double *) rbuf;
    size_t bad = 0;

    for (size_t i = 0; i < in_items; i++) {
        in[i] = (double) (tb_rank + 1) * (double) ((i + bytes) % 1000);
    }
    run(bytes, window, 1);
    for (size_t i = 0; i < out_items; i++) {
        double want = (double) tb_size * (tb_size + 1) / 2 * (double) ((first + i + bytes) % 1000);

        if (out[i] != want && 0 == bad++) {
            tb_check(0, "%s of %zu B: element %zu is %g, expected %g", name, bytes, i, out[i],
                     want);
        }
    }
    tb_check(0 == bad, "%s of %zu B", name, bytes);
    return bad;
}

static size_t allreduce_check(size_t bytes, int window)
{
    return sum_check("allreduce", allreduce, bytes, window, bytes / 8, 0, bytes / 8);
}

/* Rank j contributes block j of its send buffer: the pattern from j for j. */
static size_t allgather_check(size_t bytes, int window)
{
    size_t bad = 0;

    allgather(bytes, window, 1);
    for (int j = 0; j < tb_size; j++) {
        bad += tb_verify(rbuf + (size_t) j * bytes, bytes, seed_of(j, j, bytes), "allgather");
    }
    return bad;
}

static size_t alltoall_check(size_t bytes, int window)
{
    size_t bad = 0;

    alltoall(bytes, window, 1);
    for (int j = 0; j < tb_size; j++) {
        bad += block_check("alltoall", bytes, j, j);
    }
    return bad;
}

/* Rank r gets block r of the sum. */
static size_t reduce_scatter_check(size_t bytes, int window)
{
    size_t blk = bytes / 8 / (size_t) tb_size;

    return sum_check("reduce_scatter", reduce_scatter, bytes, window, blk * (size_t) tb_size,
                     (size_t) tb_rank * blk, blk);
}

static const struct test tests[T_COUNT] = {
    {"latency", latency, latency_check, 0},
    {"bandwidth", bandwidth, bandwidth_check, 1},
    {"bibw", bibw, bibw_check, 1},
    {"msgrate", msgrate, msgrate_check, 1},
    {"allreduce", allreduce, allreduce_check, 0},
    {"allgather", allgather, allgather_check, 0},
    {"alltoall", alltoall, alltoall_check, 0},
    {"reduce_scatter", reduce_scatter, reduce_scatter_check, 0},
};

struct opts {
    unsigned tests; /* bit per test */
    size_t sizes[MAX_SIZES];
    int nsizes;
    int repeats;
    int rt;
    size_t max;
    double scale;
};

/* The measuring thread at real-time priority (on) or back to normal (off); 0 if refused. */
static int rt_set(int on)
{
    struct sched_param p = {.sched_priority = on ? 1 : 0};
    int rc = pthread_setschedparam(pthread_self(), on ? SCHED_RR : SCHED_OTHER, &p);

    if (0 != rc && 0 == tb_rank) {
        fprintf(stderr, "tb_bench: real-time priority refused (%s): timing at normal priority\n",
                strerror(rc));
    }
    return 0 == rc;
}

/* One size of one test: checked, then timed REPEATS times; the row. 0, or wrong values. */
static size_t measure(const struct test *t, size_t bytes, struct opts *o)
{
    int window = t->windowed ? window_for(bytes) : 1;
    int iters = iters_for(bytes * (size_t) window, o->scale);
    size_t bad = 0, all = 0;
    double best = 1e30;

    patterns_set(bytes);
    bad = t->check(bytes, window);
    MPI_Allreduce(&bad, &all, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 != all) {
        return all;
    }
    o->rt = o->rt && rt_set(1);
    for (int r = 0; r < o->repeats; r++) {
        double us = t->run(bytes, window, iters);

        MPI_Bcast(&us, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        best = us < best ? us : best;
    }
    if (o->rt) {
        rt_set(0);
    }
    if (0 == tb_rank) {
        double moved = (double) bytes * (T_BIBW == t - tests ? 2 : 1)
                       * (T_ALLGATHER == t - tests || T_ALLTOALL == t - tests ? tb_size - 1 : 1);

        printf("%s,%zu,%d,%.3f,%.6g\n", t->name, bytes, iters, best, moved / best);
        fflush(stdout);
    }
    return 0;
}

/* A comma-separated list of test names into a bit set; 0 on an unknown name. */
static unsigned tests_parse(char *list)
{
    unsigned set = 0;

    for (char *name = strtok(list, ","); NULL != name; name = strtok(NULL, ",")) {
        int t = 0;

        while (t < T_COUNT && 0 != strcmp(name, tests[t].name)) {
            t++;
        }
        if (T_COUNT == t) {
            fprintf(stderr, "tb_bench: unknown test %s\n", name);
            return 0;
        }
        set |= 1u << t;
    }
    return set;
}

static int sizes_parse(char *list, struct opts *o)
{
    for (char *s = strtok(list, ","); NULL != s; s = strtok(NULL, ",")) {
        size_t b = strtoul(s, NULL, 0);

        if (MAX_SIZES == o->nsizes || b < 8 || b % 8 || b > INT32_MAX) {
            fprintf(stderr, "tb_bench: size %s: 8 to 2^31-1, a multiple of 8, at most %d\n", s,
                    MAX_SIZES);
            return -1;
        }
        o->sizes[o->nsizes++] = b;
        o->max = b > o->max ? b : o->max;
    }
    return 0;
}

static int opts_parse(int argc, char **argv, struct opts *o)
{
    size_t largest;
    int ch;

    *o = (struct opts){.tests = (1u << T_LATENCY) | (1u << T_BANDWIDTH) | (1u << T_ALLREDUCE),
                       .repeats = 5,
                       .scale = 1.0};
    while (-1 != (ch = getopt(argc, argv, "t:s:r:R"))) {
        if ('t' == ch && 0 == (o->tests = tests_parse(optarg))) {
            return -1;
        } else if ('s' == ch && 0 != sizes_parse(optarg, o)) {
            return -1;
        } else if ('r' == ch) {
            o->repeats = atoi(optarg) > 0 ? atoi(optarg) : 1;
        } else if ('R' == ch) {
            o->rt = 1;
        } else if ('?' == ch) {
            return -1;
        }
    }
    largest = o->max;
    o->max = (optind < argc) ? strtoul(argv[optind], NULL, 0) : (largest ? largest : 4u << 20);
    o->scale = (optind + 1 < argc) ? atof(argv[optind + 1]) : 1.0;
    for (size_t b = 8; 0 == largest && b <= o->max && o->nsizes < MAX_SIZES - 1; b *= 4) {
        o->sizes[o->nsizes++] = b;
        if (b * 4 > o->max && b < o->max) {
            o->sizes[o->nsizes++] = o->max;
        }
    }
    return (o->max < 8 || largest > o->max) ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    size_t bad = 0;

    tb_init(&argc, &argv, "tb_bench");
    if (0 != opts_parse(argc, argv, &o) || tb_size < 2) {
        if (0 == tb_rank) {
            fprintf(stderr, "usage: tb_bench [-t TESTS] [-s SIZES] [-r REPEATS] [-R] "
                            "[max_bytes] [time_scale] (2 ranks or more)\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sbuf = tb_malloc((size_t) tb_size * o.max);
    rbuf = tb_malloc((size_t) tb_size * o.max);
    for (int t = 0; t < T_COUNT && 0 == bad; t++) {
        for (int s = 0; (o.tests & (1u << t)) && s < o.nsizes && 0 == bad; s++) {
            bad = measure(&tests[t], o.sizes[s], &o);
        }
    }
    if (bad && 0 == tb_rank) {
        fprintf(stderr, "tb_bench: %zu wrong values: no result for this size and after\n", bad);
    }
    free(sbuf);
    free(rbuf);
    return tb_finish();
}
