/*
 * tb_meshcoll: the collectives of coll/tbrdma (MPI_Allreduce, MPI_Allgather,
 * MPI_Reduce_scatter_block, MPI_Reduce_scatter) as it takes them and leaves them, every result
 * checked. MPI_Allreduce:
 * counts that cut into blocks evenly and not (1 to 262,147 items, fewer items than ranks too),
 * MPI_DOUBLE sums of values whose sum depends on the order (every rank must get the same bits,
 * and they must be within rounding of the exact sum), MPI_INT sums and maxima, MPI_FLOAT,
 * MPI_IN_PLACE, a user-defined commutative op, a non-commutative one (left to the component
 * below: the result must be rank order's), a datatype with gaps (MPI_DOUBLE_INT, MINLOC), and
 * communicators of every size from the world's down to 2 (ranks dropped from the top), so
 * coll/tbrdma's uneven blocks of 3 processes run too. MPI_Allgather of ints, in place, and
 * into a receive type with gaps (ints 8 bytes apart); MPI_Reduce_scatter_block of ints and
 * doubles, in place, and with a non-commutative op; MPI_Reduce_scatter with uneven receive
 * counts, some of them 0, in place and not.
 */
#include "tb_common.h"

#include <math.h>

static const int tb_counts[] = {1, 2, 3, 7, 255, 256, 1000, 1001, 40000, 65537, 262147};
#define TB_NCOUNTS ((int) (sizeof(tb_counts) / sizeof(tb_counts[0])))

/* Rank r's double at i: spread over 40 binary orders, so the sum's rounding depends on order. */
static double tb_dval(int r, int i)
{
    unsigned long long k = (unsigned long long) r * 7919u + (unsigned long long) i * 104729u;

    return ldexp(1.0 + (double) (k % 1000u) / 997.0, (int) ((k / 1000u) % 41u) - 20);
}

/* Every rank holds the same bits in buf as rank 0. */
static int tb_same_everywhere(const void *buf, size_t bytes, MPI_Comm comm)
{
    unsigned char *root = tb_malloc(bytes);
    int rank, diff, any;

    MPI_Comm_rank(comm, &rank);
    if (0 == rank) {
        memcpy(root, buf, bytes);
    }
    MPI_Bcast(root, (int) bytes, MPI_BYTE, 0, comm);
    diff = 0 != memcmp(root, buf, bytes);
    MPI_Allreduce(&diff, &any, 1, MPI_INT, MPI_LOR, comm);
    free(root);
    return !any;
}

static void tb_doubles(int n, int inplace, MPI_Comm comm)
{
    double *in = tb_malloc((size_t) n * sizeof(double)),
           *out = tb_malloc((size_t) n * sizeof(double));
    int p, me, bad = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int i = 0; i < n; i++) {
        in[i] = tb_dval(me, i);
        out[i] = inplace ? in[i] : -1.0;
    }
    MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < n; i++) {
        double exact = 0.0;

        for (int r = 0; r < p; r++) {
            exact += tb_dval(r, i);
        }
        bad += fabs(out[i] - exact) > 1e-12 * fabs(exact);
    }
    tb_check(0 == bad, "%d ranks: sum of %d doubles%s: %d wrong", p, n, inplace ? " in place" : "",
             bad);
    tb_check(tb_same_everywhere(out, (size_t) n * sizeof(double), comm),
             "%d ranks: sum of %d doubles%s: every rank has the same bits", p, n,
             inplace ? " in place" : "");
    free(in);
    free(out);
}

/* Sums and maxima of ints, out of place and in place. */
static void tb_ints(int n, MPI_Comm comm)
{
    int *in = tb_malloc((size_t) n * sizeof(int)), *out = tb_malloc((size_t) n * sizeof(int));
    int p, me, bad = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int i = 0; i < n; i++) {
        in[i] = (me + 1) * (i % 1013) - me;
    }
    MPI_Allreduce(in, out, n, MPI_INT, MPI_MAX, comm);
    for (int i = 0; i < n; i++) {
        bad += out[i] != (i % 1013 ? p * (i % 1013) - (p - 1) : 0);
        out[i] = i + me;
    }
    MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < n; i++) {
        bad += out[i] != p * i + p * (p - 1) / 2;
    }
    tb_check(0 == bad, "%d ranks: max and in-place sum of %d ints: %d wrong", p, n, bad);
    free(in);
    free(out);
}

static void tb_floats(int n, MPI_Comm comm)
{
    float *in = tb_malloc((size_t) n * sizeof(float)), *out = tb_malloc((size_t) n * sizeof(float));
    int p, me, bad = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int i = 0; i < n; i++) {
        in[i] = (float) (me + i % 50);
    }
    MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, comm);
    for (int i = 0; i < n; i++) {
        bad += out[i] != (float) (p * (i % 50) + p * (p - 1) / 2);
    }
    tb_check(0 == bad, "%d ranks: sum of %d floats: %d wrong", p, n, bad);
    free(in);
    free(out);
}

/* A user-defined op: commutative (bitwise xor), and a non-commutative one on 2x2 integer
 * matrices (product mod 2^31-1), whose result tells the order the ranks were combined in. */
static void tb_xor(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void) type;
    for (int i = 0; i < *len; i++) {
        ((unsigned *) inout)[i] ^= ((unsigned *) in)[i];
    }
}

static void tb_matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const long long m = 2147483647;

    (void) type;
    for (int k = 0; k < *len; k++) {
        long long *a = (long long *) in + 4 * k, *b = (long long *) inout + 4 * k, c[4];

        c[0] = (a[0] * b[0] + a[1] * b[2]) % m;
        c[1] = (a[0] * b[1] + a[1] * b[3]) % m;
        c[2] = (a[2] * b[0] + a[3] * b[2]) % m;
        c[3] = (a[2] * b[1] + a[3] * b[3]) % m;
        memcpy(b, c, sizeof(c));
    }
}

/* Rank r's matrix [[r+1, 1], [0, 1]] into m, and the product of p of them in rank order,
 * M0 M1 ... Mp-1, into want: what a non-commutative reduction must give. */
static void tb_mat_of(int r, long long m[4])
{
    m[0] = r + 1, m[1] = 1, m[2] = 0, m[3] = 1;
}

static void tb_mat_chain(int p, long long want[4])
{
    int one = 1;

    tb_mat_of(0, want);
    for (int r = 1; r < p; r++) {
        long long m[4];

        tb_mat_of(r, m);
        tb_matmul(want, m, &one, NULL); /* m = want * m */
        memcpy(want, m, sizeof(m));
    }
}

static void tb_user_ops(int n, MPI_Comm comm)
{
    unsigned *x = tb_malloc((size_t) n * sizeof(unsigned)),
             *y = tb_malloc((size_t) n * sizeof(unsigned));
    long long mat[4], res[4], want[4];
    MPI_Op xor_op, mat_op;
    MPI_Datatype mat_type;
    int p, me, bad = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    MPI_Op_create(tb_xor, 1, &xor_op);
    MPI_Op_create(tb_matmul, 0, &mat_op);
    MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type);
    MPI_Type_commit(&mat_type);
    for (int i = 0; i < n; i++) {
        x[i] = (unsigned) (me * 2654435761u + (unsigned) i);
    }
    MPI_Allreduce(x, y, n, MPI_UNSIGNED, xor_op, comm);
    for (int i = 0; i < n; i++) {
        unsigned want_x = 0;

        for (int r = 0; r < p; r++) {
            want_x ^= (unsigned) (r * 2654435761u + (unsigned) i);
        }
        bad += y[i] != want_x;
    }
    tb_mat_of(me, mat);
    MPI_Allreduce(mat, res, 1, mat_type, mat_op, comm);
    tb_mat_chain(p, want);
    bad += 0 != memcmp(res, want, sizeof(want));
    tb_check(0 == bad, "%d ranks: user ops (xor of %d, non-commutative matrix product): %d wrong",
             p, n, bad);
    MPI_Type_free(&mat_type);
    MPI_Op_free(&xor_op);
    MPI_Op_free(&mat_op);
    free(x);
    free(y);
}

/* MINLOC over MPI_DOUBLE_INT: a datatype with a gap (12 bytes in a 16-byte extent). */
static void tb_minloc(int n, MPI_Comm comm)
{
    struct {
        double v;
        int at;
    } *in = tb_malloc((size_t) n * sizeof(*in)), *out = tb_malloc((size_t) n * sizeof(*out));
    int p, me, bad = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int i = 0; i < n; i++) {
        in[i].v = (double) ((me + i) % p);
        in[i].at = me;
    }
    MPI_Allreduce(in, out, n, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    for (int i = 0; i < n; i++) {
        bad += out[i].v != 0.0 || out[i].at != (p - i % p) % p;
    }
    tb_check(0 == bad, "%d ranks: minloc of %d double-int pairs: %d wrong", p, n, bad);
    free(in);
    free(out);
}

/* Rank r's int at i of a gathered or scattered vector. */
static int tb_ival(int r, int i)
{
    return r * 100003 + i % 99991;
}

static void tb_allgather(int n, MPI_Comm comm)
{
    int p, me, bad = 0, *in, *out, *wide;
    MPI_Datatype gappy;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    in = tb_malloc((size_t) n * sizeof(int));
    out = tb_malloc((size_t) n * (size_t) p * sizeof(int));
    wide = tb_malloc((size_t) n * (size_t) p * 2 * sizeof(int));
    for (int i = 0; i < n; i++) {
        in[i] = tb_ival(me, i);
        out[(size_t) me * (size_t) n + (size_t) i] = tb_ival(me, i);
    }
    MPI_Allgather(in, n, MPI_INT, wide, n, MPI_INT, comm); /* wide as a plain buffer first */
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, n, MPI_INT, comm);
    for (size_t k = 0; k < (size_t) n * (size_t) p; k++) {
        int want = tb_ival((int) (k / (size_t) n), (int) (k % (size_t) n));

        bad += (wide[k] != want) + (out[k] != want);
    }
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &gappy); /* an int every 8 bytes */
    MPI_Type_commit(&gappy);
    memset(wide, 0xff, (size_t) n * (size_t) p * 2 * sizeof(int));
    MPI_Allgather(in, n, MPI_INT, wide, n, gappy, comm);
    for (size_t k = 0; k < (size_t) n * (size_t) p; k++) {
        bad += wide[2 * k] != tb_ival((int) (k / (size_t) n), (int) (k % (size_t) n));
        bad += wide[2 * k + 1] != -1; /* the gaps untouched */
    }
    tb_check(0 == bad, "%d ranks: allgather of %d ints (plain, in place, gappy type): %d wrong", p,
             n, bad);
    MPI_Type_free(&gappy);
    free(in);
    free(out);
    free(wide);
}

/* Reduce-scatter with counts[j] items to rank j (uneven when vary), of ints (sum) in place
 * and not, and of doubles (sum); block by block against the exact sums. */
static void tb_reduce_scatter(int n, int vary, MPI_Comm comm)
{
    int p, me, bad = 0, *counts, *iin, *iout;
    size_t total = 0, first = 0;
    double *din, *dout;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    counts = tb_malloc((size_t) p * sizeof(int));
    for (int j = 0; j < p; j++) {
        counts[j] = vary ? (n * (j + 1) / 3) * ((j + n) % 3 != 0) : n; /* some 0 */
        first += j < me ? (size_t) counts[j] : 0;
        total += (size_t) counts[j];
    }
    iin = tb_malloc(total * sizeof(int) + 1);
    iout = tb_malloc(total * sizeof(int) + 1);
    din = tb_malloc(total * sizeof(double) + 1);
    dout = tb_malloc(total * sizeof(double) + 1);
    for (size_t i = 0; i < total; i++) {
        iin[i] = iout[i] = tb_ival(me, (int) i);
        din[i] = tb_dval(me, (int) i);
    }
    if (vary) {
        MPI_Reduce_scatter(iin, iout, counts, MPI_INT, MPI_SUM, comm);
        MPI_Reduce_scatter(MPI_IN_PLACE, iin, counts, MPI_INT, MPI_SUM, comm);
        MPI_Reduce_scatter(din, dout, counts, MPI_DOUBLE, MPI_SUM, comm);
    } else {
        MPI_Reduce_scatter_block(iin, iout, n, MPI_INT, MPI_SUM, comm);
        MPI_Reduce_scatter_block(MPI_IN_PLACE, iin, n, MPI_INT, MPI_SUM, comm);
        MPI_Reduce_scatter_block(din, dout, n, MPI_DOUBLE, MPI_SUM, comm);
    }
    for (int i = 0; i < counts[me]; i++) {
        int want = 0;
        double dwant = 0.0;

        for (int r = 0; r < p; r++) {
            want += tb_ival(r, (int) first + i);
            dwant += tb_dval(r, (int) first + i);
        }
        bad += (iout[i] != want) + (iin[i] != want);
        bad += fabs(dout[i] - dwant) > 1e-12 * fabs(dwant);
    }
    tb_check(0 == bad,
             "%d ranks: reduce_scatter%s of %zu items (ints, in place, doubles): %d wrong", p,
             vary ? " (uneven counts)" : "_block", total, bad);
    free(counts);
    free(iin);
    free(iout);
    free(din);
    free(dout);
}

/* A non-commutative op through reduce_scatter_block (the component below takes it): rank r
 * holds [[r+1, 1], [0, 1]] in every block; every rank must get M0 M1 ... Mp-1. */
static void tb_reduce_scatter_ordered(MPI_Comm comm)
{
    long long *mat, res[4], want[4];
    MPI_Datatype mat_type;
    MPI_Op mat_op;
    int p, me;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    mat = tb_malloc((size_t) p * sizeof(want));
    for (int j = 0; j < p; j++) {
        tb_mat_of(me, mat + 4 * j);
    }
    MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op_create(tb_matmul, 0, &mat_op);
    MPI_Reduce_scatter_block(mat, res, 1, mat_type, mat_op, comm);
    tb_mat_chain(p, want);
    tb_check(0 == memcmp(res, want, sizeof(want)),
             "%d ranks: reduce_scatter_block with a non-commutative op in rank order", p);
    MPI_Op_free(&mat_op);
    MPI_Type_free(&mat_type);
    free(mat);
}

static void tb_all(MPI_Comm comm)
{
    tb_reduce_scatter_ordered(comm);
    for (int c = 0; c < TB_NCOUNTS; c++) {
        tb_allgather(tb_counts[c], comm);
        tb_reduce_scatter(tb_counts[c], 0, comm);
        tb_reduce_scatter(tb_counts[c], 1, comm);
        tb_doubles(tb_counts[c], 0, comm);
        tb_doubles(tb_counts[c], 1, comm);
        tb_ints(tb_counts[c], comm);
        tb_floats(tb_counts[c], comm);
        tb_user_ops(tb_counts[c], comm);
        tb_minloc(tb_counts[c], comm);
    }
}

int main(int argc, char **argv)
{
    tb_init(&argc, &argv, "meshcoll");
    tb_all(MPI_COMM_WORLD);
    for (int keep = tb_size - 1; keep >= 2; keep--) {
        MPI_Comm sub;

        MPI_Comm_split(MPI_COMM_WORLD, tb_rank < keep ? 0 : MPI_UNDEFINED, tb_rank, &sub);
        if (MPI_COMM_NULL != sub) {
            tb_all(sub);
            MPI_Comm_free(&sub);
        }
    }
    return tb_finish();
}
