/*
 * coll_tune: times Open MPI's collective algorithms side by side in one job, for
 * bench/coll_tune.sh, which turns the times into coll/tuned dynamic rules.
 *
 * Usage: coll_tune [-n MIN] [-m MAX] [-r ROUNDS] [-R ROUNDS] [-t MS] COLL[,COLL...] CHOICE...
 *   COLL    allreduce, bcast, allgather, alltoall, reduce_scatter
 *   CHOICE  default    nothing forced: what the job's settings pick (coll/tuned's compiled-in
 *                      rules, or the dynamic rules file the job was started with)
 *           ALG[:SEG]  algorithm ALG of coll/tuned, segments of SEG bytes (0: none); the job
 *                      must be started with coll_tuned_use_dynamic_rules 1
 *           mesh       coll_mesh.h's one-step algorithm (allreduce, allgather, reduce_scatter)
 *           mesh2      coll_mesh.h's reduce-scatter then all-gather (allreduce): not Open MPI's,
 *                      what a coll component of tbrdma's could do
 *   -m MAX     the largest size, bytes (default 64 MiB); sizes are 8 B and up in powers of 4,
 *              then MAX
 *   -n MIN     leave out the sizes below MIN bytes (default 8: none)
 *   -r ROUNDS  times of each size and choice; the best is printed (default 5)
 *   -R ROUNDS  the same from 1 MiB up, where one call takes long (default: as -r)
 *   -t MS      time of one timing, in ms (default 20); the call count is set in the first round
 *
 * A size is the message size coll/tuned's rules use: the whole vector for allreduce and bcast,
 * the whole gathered vector for allgather, one rank's whole send buffer for alltoall, and the
 * sum of the receive counts for reduce_scatter. Reductions sum doubles; the others move bytes.
 * Each choice has its own duplicate of MPI_COMM_WORLD made with its coll/tuned variables set
 * through MPI_T (test/mpi/tb_collalg.h); the choices of one size take turns in every round, so a
 * busy machine slows them alike. Every choice's result is checked at every size before it is
 * timed and after: a wrong value is a failure (exit 1), never a time. An algorithm that refuses
 * (two_proc on more than 2 ranks, mesh where there is none) is reported once as refused.
 *
 * Output (rank 0), one CSV row per collective, size and choice:
 *   coll,ranks,bytes,choice,ran,calls,best_us,median_us
 * ran: the algorithm that ran (for default, the one the rules picked; mesh and mesh2 for those);
 * "refused" when the algorithm returned an error. best_us and median_us: per call, the slowest
 * rank, over rounds.
 */
#include "../test/mpi/tb_collcall.h"

#include "coll_mesh.h"

#include <unistd.h>

#define MAX_CHOICES 32
#define MAX_ROUNDS  64

struct choice {
    const char *text;
    MPI_Comm comm;
    int mesh; /* 1 or 2: coll_mesh.h's algorithm, not Open MPI's */
    int refused, calls;
    double us[MAX_ROUNDS];
};

static int rank, nranks, failures;

/* One call of COLL of BYTES by choice C; MPI's return code. */
static int call(int coll, size_t bytes, const struct choice *c)
{
    return c->mesh ? mesh_call(c->mesh, coll, bytes, c->comm) : tb_coll_call(coll, bytes, c->comm);
}

/* Per-call time of CALLS calls of COLL by C, the slowest rank, in us. */
static double timing(int coll, size_t bytes, const struct choice *c, int calls)
{
    double t, slowest;

    MPI_Barrier(c->comm);
    t = MPI_Wtime();
    for (int i = 0; i < calls; i++) {
        call(coll, bytes, c);
    }
    t = (MPI_Wtime() - t) * 1e6 / calls;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Calls of COLL by C in one timing of MS (the same on every rank): 1, 2, 4... calls until
 * they take a quarter of it, then scaled. */
static int calibrate(int coll, size_t bytes, const struct choice *c, double ms)
{
    double us = 0, n;
    int calls = 1;

    for (; calls < 20000; calls *= 2) {
        us = timing(coll, bytes, c, calls);
        if (us * calls >= ms * 250) {
            break;
        }
    }
    n = ms * 1e3 / (us > 0.01 ? us : 0.01);
    return n < 1 ? 1 : (n > 20000 ? 20000 : (int) n);
}

/* A checked call of COLL by choice C for BYTES with SALT; the algorithm that ran into *RAN.
 * Returns 0, or 1 when the algorithm refused on some rank (C is then refused). */
static int checked_call(int coll, size_t bytes, struct choice *c, int salt, int *ran)
{
    int rc, refused, bad_any;
    size_t bad;

    tb_coll_fill(coll, bytes, salt);
    tb_alg_reset();
    rc = call(coll, bytes, c);
    *ran = (tb_alg_coll == coll) ? tb_alg_id : 0;
    MPI_Allreduce(&rc, &refused, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (MPI_SUCCESS != refused) {
        c->refused = 1;
        return 1;
    }
    bad = tb_coll_wrong(coll, bytes, salt);
    rc = bad > 0;
    MPI_Allreduce(&rc, &bad_any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) {
        fprintf(stderr, "coll_tune: FAIL %s of %zu B by %s on %d ranks: rank %d has %zu wrong\n",
                tb_coll_names[coll], bytes, c->text, nranks, rank, bad);
    }
    failures += bad_any;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}

/* One CSV row of choice C. */
static void report(int coll, size_t bytes, struct choice *c, int ran, int rounds)
{
    double sorted[MAX_ROUNDS];

    if (rank != 0) {
        return;
    }
    if (c->refused) {
        printf("%s,%d,%zu,%s,refused,0,-,-\n", tb_coll_names[coll], nranks, bytes, c->text);
    } else {
        memcpy(sorted, c->us, sizeof(double) * (size_t) rounds);
        qsort(sorted, (size_t) rounds, sizeof(double), cmp_double);
        printf("%s,%d,%zu,%s,%s,%d,%.3f,%.3f\n", tb_coll_names[coll], nranks, bytes, c->text,
               c->mesh ? c->text : tb_alg_name(coll, ran), c->calls, sorted[0], sorted[rounds / 2]);
    }
    fflush(stdout);
}

/* Every choice of COLL at BYTES, ROUNDS rounds taking turns; a row each. */
static void size_sweep(int coll, size_t bytes, struct choice *ch, int nch, int rounds, double ms)
{
    int ran[MAX_CHOICES] = {0};

    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < nch; k++) {
            struct choice *c = &ch[(k + r) % nch]; /* a new order each round */
            int salt = r * 13 + k, alg;

            if (c->refused || checked_call(coll, bytes, c, salt, &alg)) {
                continue;
            }
            ran[c - ch] = alg;
            if (0 == r) {
                c->calls = calibrate(coll, bytes, c, ms);
            }
            c->us[r] = timing(coll, bytes, c, c->calls);
            failures += tb_coll_wrong(coll, bytes, salt) > 0; /* the timed calls' result too */
        }
    }
    for (int k = 0; k < nch; k++) {
        report(coll, bytes, &ch[k], ran[k], rounds);
        ch[k].refused = 0;
    }
}

/* The choices' communicators for COLL; 0 on success. */
static int make_comms(int coll, struct choice *ch, int nch)
{
    for (int k = 0; k < nch; k++) {
        const char *t = ch[k].text;
        int alg = 0, seg = 0;

        ch[k].mesh = (0 == strcmp(t, "mesh")) ? 1 : (0 == strcmp(t, "mesh2")) ? 2 : 0;
        if (0 != strcmp(t, "default") && !ch[k].mesh
            && (sscanf(t, "%d:%d", &alg, &seg) < 1 || alg < 1)) {
            fprintf(stderr, "coll_tune: choice '%s' is not default, ALG[:SEG], mesh or mesh2\n", t);
            return -1;
        }
        ch[k].comm = tb_alg_comm(coll, alg, seg);
        if (MPI_COMM_NULL == ch[k].comm) {
            return -1;
        }
    }
    return 0;
}

/* The command line: 0, or 2 after a usage message. */
struct options {
    size_t min, max;
    int rounds[2]; /* below 1 MiB, from 1 MiB up */
    double ms;
};

static int options(int argc, char **argv, struct options *o)
{
    int opt;

    *o = (struct options){.min = 8, .max = 64u << 20, .rounds = {5, 0}, .ms = 20};
    while ((opt = getopt(argc, argv, "n:m:r:R:t:")) != -1) {
        if ('n' == opt) {
            o->min = strtoul(optarg, NULL, 0);
        } else if ('m' == opt) {
            o->max = strtoul(optarg, NULL, 0);
        } else if ('r' == opt || 'R' == opt) {
            o->rounds['R' == opt] = atoi(optarg);
        } else if ('t' == opt) {
            o->ms = atof(optarg);
        } else {
            return 2;
        }
    }
    o->rounds[1] = o->rounds[1] ? o->rounds[1] : o->rounds[0];
    for (int i = 0; i < 2; i++) {
        if (o->rounds[i] < 1 || o->rounds[i] > MAX_ROUNDS) {
            argc = 0; /* a usage error */
        }
    }
    if (o->min > o->max) {
        argc = 0;
    }
    if (argc - optind < 2 || argc - optind - 1 > MAX_CHOICES) {
        fprintf(stderr, "usage: coll_tune [-n MIN] [-m MAX] [-r ROUNDS] [-R ROUNDS] [-t MS] "
                        "COLL[,COLL...] CHOICE...\n");
        return 2;
    }
    return 0;
}

/* Every size of collective COLL: 8 B to MAX in powers of 4, then MAX; none below MIN. */
static int coll_sweep(int coll, struct choice *ch, int nch, const struct options *o)
{
    size_t unit = tb_coll_unit(coll);

    if (make_comms(coll, ch, nch)) {
        return -1;
    }
    for (size_t b = 8; b <= o->max; b = (b * 4 > o->max && b < o->max) ? o->max : b * 4) {
        if (0 == b % unit && b >= o->min) {
            size_sweep(coll, b, ch, nch, o->rounds[b >= (1u << 20)], o->ms);
        }
    }
    for (int k = 0; k < nch; k++) {
        MPI_Comm_free(&ch[k].comm);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;
    struct choice ch[MAX_CHOICES];
    int provided, nch = 0, rc = 0;

    if (options(argc, argv, &o)) {
        return 2;
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (tb_coll_init(o.max)) {
        fprintf(stderr, "coll_tune: needs 4 x %zu bytes and at most %d ranks\n", o.max,
                TB_COLL_MAX_RANKS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int k = optind + 1; k < argc; k++) {
        memset(&ch[nch], 0, sizeof(ch[nch]));
        ch[nch++].text = argv[k];
    }
    if (0 == rank) {
        printf("coll,ranks,bytes,choice,ran,calls,best_us,median_us\n");
    }
    for (char *c = strtok(argv[optind], ","); c && 0 == rc; c = strtok(NULL, ",")) {
        int coll = tb_coll_index(c);

        rc = (coll < 0) ? -1 : coll_sweep(coll, ch, nch, &o);
        if (coll < 0 && 0 == rank) {
            fprintf(stderr, "coll_tune: unknown collective '%s'\n", c);
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failures && 0 == rank) {
        fprintf(stderr, "coll_tune: %d wrong results: these times are no result\n", failures);
    }
    MPI_T_finalize(); /* before MPI_Finalize: else the transports stay open (queue pairs held) */
    MPI_Finalize();
    return rc ? 2 : (failures ? 1 : 0);
}
