/*
 * tb_coll_bench: MPI_Allreduce (sum) and MPI_Allgather over float32 and bfloat16, 8 B to MAX,
 * every result checked, printed as the records of bench/README.md ("tbbench 1 ..."), the same
 * records bench/mlx_collectives.py prints for MLX, so that bench/compare-jaccl reads both.
 *
 * Sizes: MIN, MIN * FACTOR, ... and MAX (each rank's input, in bytes; the output of an all-gather
 * is RANKS times larger). Per size: WARMUP untimed calls, then REPS repetitions of ITERS calls;
 * a repetition's time per call is the slowest rank's; "best" is the least repetition and
 * "median" the median one. ITERS = clamp(SCALE * 2e8 / (bytes + 4096), 1, 1000), the formula
 * of mlx_collectives.py, so both run the same counts.
 *
 * bfloat16 has no MPI datatype: it is a contiguous type of 2 bytes with a user-defined,
 * commutative sum (each pair widened to float, added, rounded to nearest even), as MLX's own
 * mpi backend does it. The conversions are checked against known encodings at start-up.
 *
 * Every repetition is verified: the output is poisoned before it and compared after it with
 * the exact expected values (small integers, exact in bfloat16 whatever the reduction order).
 * A wrong value ends the program (exit 1, no record for that size): a fast wrong transport is
 * no result. Timing is never a verdict (bench/ only describes the machine it ran on).
 *
 * Usage: tb_coll_bench [--impl NAME] [--min B] [--max B] [--factor F] [--reps R] [--warmup W]
 *                      [--scale S] [--ops all_sum,all_gather] [--dtypes float32,bfloat16]
 */
#include <ctype.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_VERSION 1
#define REPS_MAX       100
#define ITERS_MAX      1000
#define POISON         0xA5 /* byte pattern of an output not yet written */
#define PERIOD_F32     1021 /* the input values repeat with these periods */
#define PERIOD_BF16    16
#define BF16_RANKS_MAX 16 /* 16 ranks of values up to 16: sums up to 256, exact in bfloat16 */

typedef enum { OP_ALL_SUM, OP_ALL_GATHER, OP_COUNT } op_t;
typedef enum { DT_FLOAT32, DT_BFLOAT16, DT_COUNT } dtype_t;

static const char *const op_names[OP_COUNT] = {"all_sum", "all_gather"};
static const char *const dtype_names[DT_COUNT] = {"float32", "bfloat16"};
static const size_t dtype_size[DT_COUNT] = {4, 2};

typedef struct opts {
    const char *impl;
    size_t min, max;
    int factor, reps, warmup;
    double scale;
    int ops[OP_COUNT], dtypes[DT_COUNT]; /* 1 = wanted */
} opts_t;

typedef struct bench {
    int rank, nranks;
    MPI_Datatype type[DT_COUNT];
    MPI_Op sum[DT_COUNT];
    unsigned char *in, *out;
} bench_t;

/* ------------------------------------------------------------------------------------------ */
/* bfloat16                                                                                   */

static float bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t) b << 16;
    float f;

    memcpy(&f, &u, sizeof(f));
    return f;
}

/* Round to nearest, ties to even; NaN stays a (quiet) NaN. */
static uint16_t bf16_from_float(float f)
{
    uint32_t u;

    memcpy(&u, &f, sizeof(u));
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t) ((u >> 16) | 0x40);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t) (u >> 16);
}

static void bf16_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const uint16_t *a = in;
    uint16_t *b = inout;

    (void) type;
    for (int i = 0; i < *len; i++) {
        b[i] = bf16_from_float(bf16_to_float(a[i]) + bf16_to_float(b[i]));
    }
}

/* Known encodings: 0 when the conversions and the sum agree with them. */
static int bf16_selftest(void)
{
    static const struct {
        float f;
        uint16_t b;
    } known[] = {
        {1.0f, 0x3f80},        {-2.5f, 0xc020},
        {65280.0f, 0x477f},    {1.00390625f, 0x3f80}, /* 1 + 2^-8: a tie, to even (down) */
        {1.01171875f, 0x3f82},                        /* 1 + 3 * 2^-8: a tie, to even (up) */
        {257.0f, 0x4380},                             /* not representable: 256 */
    };
    uint16_t a = 0x3fc0 /* 1.5 */, b = 0x4010 /* 2.25 */;
    MPI_Datatype dt = MPI_DATATYPE_NULL;
    int len = 1, bad = 0;

    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        bad += bf16_from_float(known[i].f) != known[i].b;
    }
    bad += bf16_to_float(0x3f80) != 1.0f;
    bf16_sum(&a, &b, &len, &dt);
    bad += b != 0x4070; /* 3.75 */
    return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* Values and checks                                                                          */

/*
 * Rank r's element i: a small integer, so every partial sum is exact in both types whatever
 * the reduction order. It depends on i modulo the type's period only.
 */
static int value_of(dtype_t dt, int r, size_t i)
{
    return (DT_FLOAT32 == dt) ? (int) ((i * 13 + (size_t) r * 7) % PERIOD_F32) + 1
                              : (int) ((i * 7 + (size_t) r * 3) % PERIOD_BF16) + 1;
}

static void store(dtype_t dt, unsigned char *buf, size_t i, int v)
{
    float f = (float) v;
    uint16_t b;

    if (DT_FLOAT32 == dt) {
        memcpy(buf + i * 4, &f, 4);
    } else {
        b = bf16_from_float(f);
        memcpy(buf + i * 2, &b, 2);
    }
}

static float load(dtype_t dt, const unsigned char *buf, size_t i)
{
    float f;
    uint16_t b;

    if (DT_FLOAT32 == dt) {
        memcpy(&f, buf + i * 4, 4);
        return f;
    }
    memcpy(&b, buf + i * 2, 2);
    return bf16_to_float(b);
}

static void fill_input(const bench_t *b, dtype_t dt, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        store(dt, b->in, i, value_of(dt, b->rank, i));
    }
}

/* Wrong output elements on this rank (the first one is reported). */
static size_t verify(const bench_t *b, op_t op, dtype_t dt, size_t count)
{
    size_t period = (DT_FLOAT32 == dt) ? PERIOD_F32 : PERIOD_BF16, bad = 0, n = count;
    float sums[PERIOD_F32], want, got;

    for (size_t p = 0; p < period; p++) {
        sums[p] = 0;
        for (int r = 0; r < b->nranks; r++) {
            sums[p] += (float) value_of(dt, r, p);
        }
    }
    n *= (OP_ALL_GATHER == op) ? (size_t) b->nranks : 1;
    for (size_t k = 0; k < n; k++) {
        want = (OP_ALL_GATHER == op) ? (float) value_of(dt, (int) (k / count), k % count)
                                     : sums[k % period];
        got = load(dt, b->out, k);
        if (got != want && 0 == bad++) {
            fprintf(stderr, "tb_coll_bench: rank %d: %s %s %zu B: element %zu is %g, expected %g\n",
                    b->rank, op_names[op], dtype_names[dt], count * dtype_size[dt], k, got, want);
        }
    }
    return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* Timing                                                                                     */

static int iters_for(size_t bytes, double scale)
{
    double n = scale * 2e8 / (double) (bytes + 4096);

    return n < 1 ? 1 : (n > ITERS_MAX ? ITERS_MAX : (int) n);
}

static void call(const bench_t *b, op_t op, dtype_t dt, size_t count)
{
    if (OP_ALL_SUM == op) {
        MPI_Allreduce(b->in, b->out, (int) count, b->type[dt], b->sum[dt], MPI_COMM_WORLD);
    } else {
        MPI_Allgather(b->in, (int) count, b->type[dt], b->out, (int) count, b->type[dt],
                      MPI_COMM_WORLD);
    }
}

/* One verified repetition: the slowest rank's time per call (usec), or -1 on a wrong value. */
static double repetition(const bench_t *b, op_t op, dtype_t dt, size_t count, int iters)
{
    size_t out_bytes = count * dtype_size[dt] * (OP_ALL_GATHER == op ? (size_t) b->nranks : 1);
    unsigned long long bad, all = 0;
    double t0, us, slowest;

    memset(b->out, POISON, out_bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        call(b, op, dt, count);
    }
    us = (MPI_Wtime() - t0) * 1e6 / iters;
    bad = verify(b, op, dt, count);
    MPI_Allreduce(&bad, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return (0 == all) ? slowest : -1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *) x, c = *(const double *) y;

    return (a > c) - (a < c);
}

/* Warm-up, repetitions, one record. Returns 0, or -1 after a wrong value. */
static int measure(const bench_t *b, const opts_t *o, op_t op, dtype_t dt, size_t bytes)
{
    size_t count = bytes / dtype_size[dt];
    int iters = iters_for(bytes, o->scale);
    double t[REPS_MAX], median;

    fill_input(b, dt, count);
    for (int i = 0; i < o->warmup; i++) {
        call(b, op, dt, count);
    }
    for (int r = 0; r < o->reps; r++) {
        t[r] = repetition(b, op, dt, count, iters);
        if (0 > t[r]) {
            return -1;
        }
    }
    qsort(t, (size_t) o->reps, sizeof(t[0]), cmp_double);
    median = (o->reps % 2) ? t[o->reps / 2] : (t[o->reps / 2 - 1] + t[o->reps / 2]) / 2;
    if (0 == b->rank) {
        printf("tbbench %d result impl=%s op=%s dtype=%s bytes=%zu count=%zu iters=%d reps=%d "
               "best_us=%.3f median_us=%.3f verified=yes\n",
               FORMAT_VERSION, o->impl, op_names[op], dtype_names[dt], bytes, count, iters, o->reps,
               t[0], median);
        fflush(stdout);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Options and main                                                                           */

static int parse_list(const char *arg, const char *const *names, int n, int *wanted)
{
    char buf[256], *tok, *save = NULL;
    int k, found;

    memset(wanted, 0, sizeof(int) * (size_t) n);
    snprintf(buf, sizeof(buf), "%s", arg);
    for (tok = strtok_r(buf, ",", &save); NULL != tok; tok = strtok_r(NULL, ",", &save)) {
        for (k = 0, found = 0; k < n; k++) {
            if (0 == strcmp(tok, names[k])) {
                wanted[k] = found = 1;
            }
        }
        if (!found) {
            fprintf(stderr, "tb_coll_bench: unknown name %s\n", tok);
            return -1;
        }
    }
    return 0;
}

/* One option and its value; -1 when unknown or out of range. */
static int parse_opt(opts_t *o, const char *name, const char *val)
{
    if (0 == strcmp(name, "--impl")) {
        o->impl = val;
    } else if (0 == strcmp(name, "--min")) {
        o->min = strtoull(val, NULL, 0);
    } else if (0 == strcmp(name, "--max")) {
        o->max = strtoull(val, NULL, 0);
    } else if (0 == strcmp(name, "--factor")) {
        o->factor = atoi(val);
    } else if (0 == strcmp(name, "--reps")) {
        o->reps = atoi(val);
    } else if (0 == strcmp(name, "--warmup")) {
        o->warmup = atoi(val);
    } else if (0 == strcmp(name, "--scale")) {
        o->scale = atof(val);
    } else if (0 == strcmp(name, "--ops")) {
        return parse_list(val, op_names, OP_COUNT, o->ops);
    } else if (0 == strcmp(name, "--dtypes")) {
        return parse_list(val, dtype_names, DT_COUNT, o->dtypes);
    } else {
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){"mpi", 8, 256u << 20, 4, 5, 2, 1.0, {1, 1}, {1, 1}};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || 0 != parse_opt(o, argv[i], argv[i + 1])) {
            fprintf(stderr, "tb_coll_bench: bad option %s (see the header of tb_coll_bench.c)\n",
                    argv[i]);
            return -1;
        }
    }
    if (o->min < 4 || o->min % 4 || o->max < o->min || o->max % 4 || o->max > (1u << 30)
        || o->factor < 2 || o->reps < 1 || o->reps > REPS_MAX || o->warmup < 0 || !(o->scale > 0)) {
        fprintf(stderr,
                "tb_coll_bench: sizes must be multiples of 4 from 4 B to 1 GiB, "
                "factor >= 2, 1 to %d repetitions, scale > 0\n",
                REPS_MAX);
        return -1;
    }
    return 0;
}

/* The MPI library's version as one word of [A-Za-z0-9_.+-] ("Open MPI v4.1.4, ..." ->
 * Open_MPI_v4.1.4). */
static void library_word(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;

    MPI_Get_library_version(v, &n);
    v[strcspn(v, ",\n")] = '\0';
    for (char *p = v; '\0' != *p; p++) {
        *p = (isalnum((unsigned char) *p) || NULL != strchr("_.+-", *p)) ? *p : '_';
    }
    snprintf(buf, len, "%s", v);
}

static int setup(bench_t *b, const opts_t *o)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->nranks);
    b->type[DT_FLOAT32] = MPI_FLOAT;
    b->sum[DT_FLOAT32] = MPI_SUM;
    MPI_Type_contiguous(2, MPI_BYTE, &b->type[DT_BFLOAT16]);
    MPI_Type_commit(&b->type[DT_BFLOAT16]);
    MPI_Op_create(bf16_sum, 1, &b->sum[DT_BFLOAT16]);
    b->in = malloc(o->max);
    b->out = malloc(o->max * (size_t) b->nranks);
    if (NULL == b->in || NULL == b->out) {
        fprintf(stderr, "tb_coll_bench: rank %d: cannot allocate %zu bytes\n", b->rank,
                o->max * (size_t) (b->nranks + 1));
        return -1;
    }
    if (o->dtypes[DT_BFLOAT16] && BF16_RANKS_MAX < b->nranks) {
        fprintf(stderr, "tb_coll_bench: bfloat16 sums are exact up to %d ranks, not %d\n",
                BF16_RANKS_MAX, b->nranks);
        return -1;
    }
    if (0 != bf16_selftest()) {
        fprintf(stderr, "tb_coll_bench: the bfloat16 conversions disagree with known values\n");
        return -1;
    }
    return 0;
}

/* The size after s: times the factor, the last one MAX. */
static size_t next_size(const opts_t *o, size_t s)
{
    return (s < o->max && s * (size_t) o->factor > o->max) ? o->max : s * (size_t) o->factor;
}

/* Every wanted size, op and dtype, in the order of mlx_collectives.py. */
static int sweep(const bench_t *b, const opts_t *o)
{
    int results = 0;

    for (int op = 0; op < OP_COUNT; op++) {
        for (int dt = 0; dt < DT_COUNT; dt++) {
            if (!o->ops[op] || !o->dtypes[dt]) {
                continue;
            }
            for (size_t s = o->min; s <= o->max; s = next_size(o, s)) {
                if (0 != measure(b, o, (op_t) op, (dtype_t) dt, s)) {
                    return -1;
                }
                results++;
            }
        }
    }
    return results;
}

int main(int argc, char **argv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    bench_t b;
    opts_t o;
    int ok, n;

    MPI_Init(&argc, &argv);
    memset(&b, 0, sizeof(b));
    ok = (0 == parse_args(argc, argv, &o)) && (0 == setup(&b, &o));
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        MPI_Finalize();
        return 2;
    }
    library_word(lib, sizeof(lib));
    if (0 == b.rank) {
        printf("tbbench %d begin impl=%s ranks=%d reps=%d warmup=%d scale=%g lib=%s\n",
               FORMAT_VERSION, o.impl, b.nranks, o.reps, o.warmup, o.scale, lib);
    }
    n = sweep(&b, &o);
    if (0 == b.rank && 0 <= n) {
        printf("tbbench %d end impl=%s results=%d\n", FORMAT_VERSION, o.impl, n);
    }
    free(b.in);
    free(b.out);
    MPI_Op_free(&b.sum[DT_BFLOAT16]);
    MPI_Type_free(&b.type[DT_BFLOAT16]);
    MPI_Finalize();
    return (0 <= n) ? 0 : 1;
}
