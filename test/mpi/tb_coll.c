/*
 * tb_coll: every MPI collective over MPI_COMM_WORLD, each result checked against a value
 * computed locally: barrier, bcast, reduce, allreduce, allgather(v), alltoall(v/w), gather(v),
 * scatter(v), reduce_scatter(_block), scan, exscan; for MPI_INT, MPI_DOUBLE, MPI_CHAR and a
 * derived non-contiguous type (every other int, MPI_Type_vector; moved by bcast and allgather,
 * since MPI's predefined reductions take predefined types only), at several counts (1, 1000,
 * and 40000 elements: eager, pipelined and multi-fragment messages), and with MPI_IN_PLACE where
 * MPI allows it. Values are small integers, so double sums are exact.
 */
#include "tb_common.h"

/* The value rank r contributes at element i. */
static int tb_val(int r, int i)
{
    return (r + 1) * 3 + (i % 97);
}

/* ---- int buffers ------------------------------------------------------------------------ */

static void tb_coll_bcast(int n)
{
    int *buf = tb_malloc((size_t) n * sizeof(int)), root = tb_size - 1, bad = 0;

    for (int i = 0; i < n; i++) {
        buf[i] = (tb_rank == root) ? tb_val(root, i) : -1;
    }
    MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        bad += buf[i] != tb_val(root, i);
    }
    tb_check(0 == bad, "bcast of %d ints: %d wrong", n, bad);
    free(buf);
}

/* reduce, allreduce and scan/exscan of ints (sum), out of place and in place. */
static void tb_coll_reductions(int n)
{
    int *in = tb_malloc((size_t) n * sizeof(int)), *out = tb_malloc((size_t) n * sizeof(int));
    int bad[6] = {0};

    for (int i = 0; i < n; i++) {
        in[i] = tb_val(tb_rank, i);
    }
    MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    for (int i = 0; 0 == tb_rank && i < n; i++) {
        int want = 0;
        for (int r = 0; r < tb_size; r++) {
            want += tb_val(r, i);
        }
        bad[0] += out[i] != want;
    }
    MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    memcpy(in, out, (size_t) n * sizeof(int));
    MPI_Allreduce(MPI_IN_PLACE, in, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* idempotent */
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r < tb_size; r++) {
            want += tb_val(r, i);
        }
        bad[1] += out[i] != want;
        bad[2] += in[i] != want;
    }
    for (int i = 0; i < n; i++) {
        in[i] = tb_val(tb_rank, i);
    }
    MPI_Scan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r <= tb_rank; r++) {
            want += tb_val(r, i);
        }
        bad[3] += out[i] != want;
    }
    MPI_Exscan(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; tb_rank > 0 && i < n; i++) {
        int want = 0;
        for (int r = 0; r < tb_rank; r++) {
            want += tb_val(r, i);
        }
        bad[4] += out[i] != want;
    }
    if (0 == tb_rank) {
        for (int i = 0; i < n; i++) {
            out[i] = tb_val(0, i);
        }
        MPI_Reduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            int want = 0;
            for (int r = 0; r < tb_size; r++) {
                want += tb_val(r, i);
            }
            bad[5] += out[i] != want;
        }
    } else {
        MPI_Reduce(in, NULL, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    tb_check(0 == bad[0], "reduce of %d ints: %d wrong", n, bad[0]);
    tb_check(0 == bad[1], "allreduce of %d ints: %d wrong", n, bad[1]);
    tb_check(0 == bad[2], "allreduce in place of %d ints: %d wrong", n, bad[2]);
    tb_check(0 == bad[3], "scan of %d ints: %d wrong", n, bad[3]);
    tb_check(0 == bad[4], "exscan of %d ints: %d wrong", n, bad[4]);
    tb_check(0 == bad[5], "reduce in place of %d ints: %d wrong", n, bad[5]);
    free(in);
    free(out);
}

/* allgather, gather, scatter (and their in-place forms) and alltoall of n ints per rank. */
static void tb_coll_gathers(int n)
{
    size_t all = (size_t) n * (size_t) tb_size;
    int *mine = tb_malloc((size_t) n * sizeof(int)), *buf = tb_malloc(all * sizeof(int));
    int bad[6] = {0};

    for (int i = 0; i < n; i++) {
        mine[i] = tb_val(tb_rank, i);
    }
    MPI_Allgather(mine, n, MPI_INT, buf, n, MPI_INT, MPI_COMM_WORLD);
    for (size_t k = 0; k < all; k++) {
        bad[0] += buf[k] != tb_val((int) (k / (size_t) n), (int) (k % (size_t) n));
    }
    memset(buf, 0xff, all * sizeof(int));
    memcpy(buf + (size_t) tb_rank * n, mine, (size_t) n * sizeof(int));
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, n, MPI_INT, MPI_COMM_WORLD);
    for (size_t k = 0; k < all; k++) {
        bad[1] += buf[k] != tb_val((int) (k / (size_t) n), (int) (k % (size_t) n));
    }
    memset(buf, 0xff, all * sizeof(int));
    MPI_Gather(mine, n, MPI_INT, buf, n, MPI_INT, 1 % tb_size, MPI_COMM_WORLD);
    for (size_t k = 0; tb_rank == 1 % tb_size && k < all; k++) {
        bad[2] += buf[k] != tb_val((int) (k / (size_t) n), (int) (k % (size_t) n));
    }
    for (size_t k = 0; k < all; k++) { /* root scatters: element k goes to rank k/n */
        buf[k] = tb_val((int) (k / (size_t) n) + 50, (int) (k % (size_t) n));
    }
    memset(mine, 0, (size_t) n * sizeof(int));
    MPI_Scatter(buf, n, MPI_INT, mine, n, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        bad[3] += mine[i] != tb_val(tb_rank + 50, i);
    }
    for (size_t k = 0; k < all; k++) { /* alltoall: block j goes to rank j */
        buf[k] = tb_val(tb_rank * 100 + (int) (k / (size_t) n), (int) (k % (size_t) n));
    }
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, n, MPI_INT, MPI_COMM_WORLD);
    for (size_t k = 0; k < all; k++) { /* block j came from rank j */
        bad[4] += buf[k] != tb_val((int) (k / (size_t) n) * 100 + tb_rank, (int) (k % (size_t) n));
    }
    tb_check(0 == bad[0], "allgather of %d ints: %d wrong", n, bad[0]);
    tb_check(0 == bad[1], "allgather in place of %d ints: %d wrong", n, bad[1]);
    tb_check(0 == bad[2], "gather of %d ints: %d wrong", n, bad[2]);
    tb_check(0 == bad[3], "scatter of %d ints: %d wrong", n, bad[3]);
    tb_check(0 == bad[4], "alltoall in place of %d ints: %d wrong", n, bad[4]);
    free(mine);
    free(buf);
}

/* The v-variants and alltoallw: rank r contributes (r + 1) * n / size + 1 elements. */
static int tb_vcount(int r, int n)
{
    return (r + 1) * n / tb_size + 1;
}

static void tb_coll_vectors(int n)
{
    int *counts = tb_malloc((size_t) tb_size * sizeof(int)),
        *displs = tb_malloc((size_t) tb_size * sizeof(int));
    int total = 0, bad[5] = {0}, mine_n = tb_vcount(tb_rank, n);
    int *mine, *buf;

    for (int r = 0; r < tb_size; r++) {
        counts[r] = tb_vcount(r, n);
        displs[r] = total;
        total += counts[r];
    }
    mine = tb_malloc((size_t) mine_n * sizeof(int));
    buf = tb_malloc((size_t) total * sizeof(int));
    for (int i = 0; i < mine_n; i++) {
        mine[i] = tb_val(tb_rank, i);
    }
    MPI_Allgatherv(mine, mine_n, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < tb_size; r++) {
        for (int i = 0; i < counts[r]; i++) {
            bad[0] += buf[displs[r] + i] != tb_val(r, i);
        }
    }
    memset(buf, 0, (size_t) total * sizeof(int));
    MPI_Gatherv(mine, mine_n, MPI_INT, buf, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; 0 == tb_rank && r < tb_size; r++) {
        for (int i = 0; i < counts[r]; i++) {
            bad[1] += buf[displs[r] + i] != tb_val(r, i);
        }
    }
    for (int r = 0; r < tb_size; r++) {
        for (int i = 0; i < counts[r]; i++) {
            buf[displs[r] + i] = tb_val(r + 7, i);
        }
    }
    MPI_Scatterv(buf, counts, displs, MPI_INT, mine, mine_n, MPI_INT, tb_size - 1, MPI_COMM_WORLD);
    for (int i = 0; i < mine_n; i++) {
        bad[2] += mine[i] != tb_val(tb_rank + 7, i);
    }
    {
        /* reduce_scatter: everyone contributes total ints; rank r gets the sums of its block */
        int *in = tb_malloc((size_t) total * sizeof(int)),
            *out = tb_malloc((size_t) mine_n * sizeof(int));
        for (int k = 0; k < total; k++) {
            in[k] = tb_val(tb_rank, k);
        }
        MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < mine_n; i++) {
            int want = 0;
            for (int r = 0; r < tb_size; r++) {
                want += tb_val(r, displs[tb_rank] + i);
            }
            bad[3] += out[i] != want;
        }
        free(in);
        free(out);
    }
    tb_check(0 == bad[0], "allgatherv (~%d ints): %d wrong", n, bad[0]);
    tb_check(0 == bad[1], "gatherv (~%d ints): %d wrong", n, bad[1]);
    tb_check(0 == bad[2], "scatterv (~%d ints): %d wrong", n, bad[2]);
    tb_check(0 == bad[3], "reduce_scatter (~%d ints): %d wrong", n, bad[3]);
    free(counts);
    free(displs);
    free(mine);
    free(buf);
}

static void tb_coll_reduce_scatter_block(int n)
{
    size_t all = (size_t) n * (size_t) tb_size;
    int *buf = tb_malloc(all * sizeof(int)), bad = 0;

    for (size_t k = 0; k < all; k++) {
        buf[k] = tb_val(tb_rank, (int) k);
    }
    MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r < tb_size; r++) {
            want += tb_val(r, tb_rank * n + i);
        }
        bad += buf[i] != want;
    }
    tb_check(0 == bad, "reduce_scatter_block in place of %d ints: %d wrong", n, bad);
    free(buf);
}

/* alltoallv and alltoallw: rank s sends (s + d) % 5 + k elements to rank d. */
static int tb_a2a_count(int s, int d, int k)
{
    return (s + d) % 5 + k;
}

static void tb_coll_alltoallvw(int k)
{
    int sc[64], sd[64], rc[64], rd[64], stot = 0, rtot = 0, bad[2] = {0};
    int *sbuf, *rbuf;
    MPI_Datatype types[64];

    for (int p = 0; p < tb_size; p++) {
        sc[p] = tb_a2a_count(tb_rank, p, k);
        sd[p] = stot;
        stot += sc[p];
        rc[p] = tb_a2a_count(p, tb_rank, k);
        rd[p] = rtot;
        rtot += rc[p];
        types[p] = MPI_INT;
    }
    sbuf = tb_malloc((size_t) stot * sizeof(int));
    rbuf = tb_malloc((size_t) rtot * sizeof(int));
    for (int p = 0; p < tb_size; p++) {
        for (int i = 0; i < sc[p]; i++) {
            sbuf[sd[p] + i] = tb_val(tb_rank * 64 + p, i);
        }
    }
    MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < tb_size; p++) {
        for (int i = 0; i < rc[p]; i++) {
            bad[0] += rbuf[rd[p] + i] != tb_val(p * 64 + tb_rank, i);
        }
    }
    for (int p = 0; p < tb_size; p++) { /* alltoallw takes byte displacements */
        sd[p] *= (int) sizeof(int);
        rd[p] *= (int) sizeof(int);
    }
    memset(rbuf, 0, (size_t) rtot * sizeof(int));
    MPI_Alltoallw(sbuf, sc, sd, types, rbuf, rc, rd, types, MPI_COMM_WORLD);
    for (int p = 0; p < tb_size; p++) {
        for (int i = 0; i < rc[p]; i++) {
            bad[1] += rbuf[rd[p] / (int) sizeof(int) + i] != tb_val(p * 64 + tb_rank, i);
        }
    }
    tb_check(0 == bad[0], "alltoallv (+%d ints): %d wrong", k, bad[0]);
    tb_check(0 == bad[1], "alltoallw (+%d ints): %d wrong", k, bad[1]);
    free(sbuf);
    free(rbuf);
}

/* ---- other datatypes -------------------------------------------------------------------- */

static void tb_coll_double_char(int n)
{
    double *d = tb_malloc((size_t) n * sizeof(double));
    char *c = tb_malloc((size_t) n);
    int bad[2] = {0};

    for (int i = 0; i < n; i++) {
        d[i] = tb_val(tb_rank, i) * 0.5;
        c[i] = (char) (tb_rank == 0 ? 'a' + i % 26 : 0);
    }
    MPI_Allreduce(MPI_IN_PLACE, d, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(c, n, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        double want = 0;
        for (int r = 0; r < tb_size; r++) {
            want += tb_val(r, i) * 0.5;
        }
        bad[0] += d[i] != want;
        bad[1] += c[i] != (char) ('a' + i % 26);
    }
    tb_check(0 == bad[0], "allreduce of %d doubles: %d wrong", n, bad[0]);
    tb_check(0 == bad[1], "bcast of %d chars: %d wrong", n, bad[1]);
    free(d);
    free(c);
}

/* A vector type taking every other int: odd slots must come back untouched (-7). */
static void tb_coll_derived(int n)
{
    MPI_Datatype every_other;
    int *buf = tb_malloc((size_t) 2 * n * sizeof(int)), *all;
    int bad[2] = {0};

    MPI_Type_vector(n, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < 2 * n; i++) {
        buf[i] = (i % 2) ? -7 : (0 == tb_rank ? tb_val(99, i / 2) : 0);
    }
    MPI_Bcast(buf, 1, every_other, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 2 * n; i++) {
        bad[0] += buf[i] != ((i % 2) ? -7 : tb_val(99, i / 2));
    }
    all = tb_malloc((size_t) 2 * n * tb_size * sizeof(int));
    for (int i = 0; i < 2 * n; i++) {
        buf[i] = (i % 2) ? -7 : tb_val(tb_rank, i / 2);
    }
    MPI_Allgather(buf, 1, every_other, all, n, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < tb_size; r++) {
        for (int i = 0; i < n; i++) {
            bad[1] += all[(size_t) r * n + i] != tb_val(r, i);
        }
    }
    tb_check(0 == bad[0], "bcast of a strided vector of %d ints: %d wrong", n, bad[0]);
    tb_check(0 == bad[1], "allgather of a strided vector of %d ints: %d wrong", n, bad[1]);
    MPI_Type_free(&every_other);
    free(buf);
    free(all);
}

int main(int argc, char **argv)
{
    static const int counts[] = {1, 1000, 40000};

    tb_init(&argc, &argv, "coll");
    if (tb_size > 64) {
        fprintf(stderr, "tb_coll: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int n = counts[c];

        MPI_Barrier(MPI_COMM_WORLD);
        tb_coll_bcast(n);
        tb_coll_reductions(n);
        tb_coll_gathers(n);
        tb_coll_vectors(n);
        tb_coll_reduce_scatter_block(n);
        tb_coll_alltoallvw(n / 10);
        tb_coll_double_char(n);
        tb_coll_derived(n);
    }
    return tb_finish();
}
