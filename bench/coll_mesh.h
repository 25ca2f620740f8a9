/*
 * coll_mesh.h: collectives written for a full mesh at the MPI level (point-to-point over the
 * same pml as Open MPI's own), to compare with Open MPI's algorithms in bench/coll_tune.c: each
 * step exchanges with every other rank at once, so every cable of the mesh works at the same
 * time, and the fewest steps are taken. None of them is in coll/tuned:
 *   mesh  allreduce       every rank sends its whole vector to every other and sums what it
 *                         receives in rank order (one step: JACCL's small all-reduce)
 *         allgather       every rank sends its block to every other (one step)
 *         reduce_scatter  block j of every rank goes to rank j, which sums them (one step)
 *   mesh2 allreduce       that reduce-scatter, then every rank sends its summed block to every
 *                         other (two steps: JACCL's large all-reduce)
 * Reductions sum doubles (MPI_SUM, rank order), as tb_collcall.h's calls do; blocks are n/p
 * items, the last one takes the rest. Include after tb_collcall.h.
 */
#ifndef COLL_MESH_H
#define COLL_MESH_H

#define MESH_TAG 7717

/* A scratch buffer of at least BYTES, kept between calls; NULL when out of memory. */
static void *mesh_scratch(size_t bytes)
{
    static void *buf;
    static size_t size;

    if (bytes > size) {
        free(buf);
        buf = malloc(bytes);
        size = buf ? bytes : 0;
    }
    return buf;
}

/* One step: sends SCOUNT[j] items of TYPE at S[j] to every rank j but this one and receives
 * RCOUNT[j] from j into R[j], all at once. */
static int mesh_step(void *s[], const int scount[], void *r[], const int rcount[],
                     MPI_Datatype type, MPI_Comm comm)
{
    MPI_Request req[2 * TB_COLL_MAX_RANKS];
    int p, me, n = 0;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int k = 1; k < p; k++) {
        int from = (me + p - k) % p, to = (me + k) % p;

        MPI_Irecv(r[from], rcount[from], type, from, MESH_TAG, comm, &req[n++]);
        MPI_Isend(s[to], scount[to], type, to, MESH_TAG, comm, &req[n++]);
    }
    return MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

/* OUT = the sum of the P vectors X[0..P) of N doubles, in rank order. */
static void mesh_sum(double *out, double *const x[], int p, int n)
{
    memcpy(out, x[0], sizeof(double) * (size_t) n);
    for (int r = 1; r < p; r++) {
        MPI_Reduce_local(x[r], out, n, MPI_DOUBLE, MPI_SUM);
    }
}

/* The one-step reduce-scatter of the N doubles at IN: this rank's block (of BLOCK[me] items at
 * offset OFF[me]) summed into OUT. */
static int mesh_reduce_scatter_blocks(const double *in, double *out, const int block[],
                                      const int off[], MPI_Comm comm)
{
    void *s[TB_COLL_MAX_RANKS], *r[TB_COLL_MAX_RANKS];
    int p, me, rcount[TB_COLL_MAX_RANKS], rc;
    double *scratch, *x[TB_COLL_MAX_RANKS];

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    scratch = mesh_scratch(sizeof(double) * (size_t) block[me] * (size_t) p);
    if (NULL == scratch) {
        return MPI_ERR_NO_MEM;
    }
    for (int j = 0; j < p; j++) {
        s[j] = (void *) (in + off[j]);
        x[j] = (j == me) ? (double *) in + off[me] : scratch + (size_t) j * (size_t) block[me];
        r[j] = x[j];
        rcount[j] = block[me];
    }
    rc = mesh_step(s, block, r, rcount, MPI_DOUBLE, comm);
    mesh_sum(out, x, p, block[me]);
    return rc;
}

/* Blocks of N items over P ranks: N/P each, the last one the rest. */
static void mesh_blocks(int n, int p, int block[], int off[])
{
    for (int j = 0; j < p; j++) {
        block[j] = n / p + (j == p - 1 ? n % p : 0);
        off[j] = j * (n / p);
    }
}

static int mesh_allreduce(const double *in, double *out, int n, MPI_Comm comm)
{
    void *s[TB_COLL_MAX_RANKS], *r[TB_COLL_MAX_RANKS];
    int p, me, count[TB_COLL_MAX_RANKS], rc;
    double *scratch, *x[TB_COLL_MAX_RANKS];

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    scratch = mesh_scratch(sizeof(double) * (size_t) n * (size_t) p);
    if (NULL == scratch) {
        return MPI_ERR_NO_MEM;
    }
    for (int j = 0; j < p; j++) {
        s[j] = (void *) in;
        x[j] = (j == me) ? (double *) in : scratch + (size_t) j * (size_t) n;
        r[j] = x[j];
        count[j] = n;
    }
    rc = mesh_step(s, count, r, count, MPI_DOUBLE, comm);
    mesh_sum(out, x, p, n);
    return rc;
}

static int mesh_allreduce_rsag(const double *in, double *out, int n, MPI_Comm comm)
{
    void *s[TB_COLL_MAX_RANKS], *r[TB_COLL_MAX_RANKS];
    int p, me, block[TB_COLL_MAX_RANKS], off[TB_COLL_MAX_RANKS], scount[TB_COLL_MAX_RANKS], rc;

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    mesh_blocks(n, p, block, off);
    rc = mesh_reduce_scatter_blocks(in, out + off[me], block, off, comm);
    for (int j = 0; j < p && MPI_SUCCESS == rc; j++) {
        s[j] = out + off[me];
        scount[j] = block[me];
        r[j] = out + off[j];
    }
    return MPI_SUCCESS == rc ? mesh_step(s, scount, r, block, MPI_DOUBLE, comm) : rc;
}

static int mesh_allgather(const unsigned char *in, unsigned char *out, int per, MPI_Comm comm)
{
    void *s[TB_COLL_MAX_RANKS], *r[TB_COLL_MAX_RANKS];
    int p, me, count[TB_COLL_MAX_RANKS];

    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    for (int j = 0; j < p; j++) {
        s[j] = (void *) in;
        r[j] = out + (size_t) j * (size_t) per;
        count[j] = per;
    }
    memcpy(out + (size_t) me * (size_t) per, in, (size_t) per);
    return mesh_step(s, count, r, count, MPI_BYTE, comm);
}

/* One call of COLL of BYTES by mesh algorithm KIND (1: mesh, 2: mesh2) on COMM, on
 * tb_collcall.h's buffers; MPI_ERR_OTHER when there is no such algorithm. */
static int mesh_call(int kind, int coll, size_t bytes, MPI_Comm comm)
{
    int p, block[TB_COLL_MAX_RANKS], off[TB_COLL_MAX_RANKS], n = (int) (bytes / sizeof(double));

    MPI_Comm_size(comm, &p);
    if (TB_ALLREDUCE == coll) {
        return (1 == kind) ? mesh_allreduce(tb_cb.dbl_in, tb_cb.dbl_out, n, comm)
                           : mesh_allreduce_rsag(tb_cb.dbl_in, tb_cb.dbl_out, n, comm);
    }
    if (1 == kind && TB_ALLGATHER == coll) {
        return mesh_allgather(tb_cb.byte_in, tb_cb.byte_out, (int) (bytes / (size_t) p), comm);
    }
    if (1 == kind && TB_REDUCE_SCATTER == coll) {
        mesh_blocks(n, p, block, off);
        return mesh_reduce_scatter_blocks(tb_cb.dbl_in, tb_cb.dbl_out, block, off, comm);
    }
    return MPI_ERR_OTHER;
}

#endif /* COLL_MESH_H */
