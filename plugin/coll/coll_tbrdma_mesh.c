/*
 * coll/tbrdma's building blocks: one step over every cable (every process posts a receive
 * from and a send to every other at once, then waits for all of them), the reduction of p
 * blocks in rank order, the module's scratch buffer, and which vectors can be cut into blocks.
 * The collectives (coll_tbrdma_allreduce.c, _reduce_scatter.c, _allgather.c) are made of them.
 */
#include "coll_tbrdma.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/request/request.h"

#include <stdlib.h>
#include <string.h>

char *mca_coll_tbrdma_scratch(mca_coll_tbrdma_module_t *m, size_t bytes)
{
    void *p;

    if (bytes <= m->scratch_bytes) {
        return m->scratch;
    }
    p = realloc(m->scratch, bytes);
    if (NULL == p) {
        return NULL;
    }
    m->scratch = p;
    m->scratch_bytes = bytes;
    return p;
}

bool mca_coll_tbrdma_cuttable(int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    ptrdiff_t lb, extent, true_lb, true_extent;
    size_t size;
    int commute = 0;

    ompi_datatype_type_size(dtype, &size);
    ompi_datatype_get_extent(dtype, &lb, &extent);
    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    PMPI_Op_commutative(op, &commute);
    return commute && ompi_datatype_is_contiguous_memory_layout(dtype, count) && 0 == lb
           && 0 == true_lb && (ptrdiff_t) size == extent && extent == true_extent;
}

int mca_coll_tbrdma_recv(mca_coll_tbrdma_step_t *s, void *buf, size_t count,
                         struct ompi_datatype_t *dtype, int from, int tag,
                         struct ompi_communicator_t *comm)
{
    return MCA_PML_CALL(irecv(buf, count, dtype, from, tag, comm, &s->req[s->n++]));
}

int mca_coll_tbrdma_send(mca_coll_tbrdma_step_t *s, const void *buf, size_t count,
                         struct ompi_datatype_t *dtype, int to, int tag,
                         struct ompi_communicator_t *comm)
{
    return MCA_PML_CALL(isend((void *) buf, count, dtype, to, tag, MCA_PML_BASE_SEND_STANDARD, comm,
                              &s->req[s->n++]));
}

int mca_coll_tbrdma_finish(mca_coll_tbrdma_step_t *s, int rc)
{
    int wrc = ompi_request_wait_all((size_t) s->n, s->req, MPI_STATUSES_IGNORE);

    s->n = 0;
    return OMPI_SUCCESS != rc ? rc : wrc;
}

void mca_coll_tbrdma_reduce(char *out, char *const *x, int p, size_t items,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op, size_t size)
{
    memcpy(out, x[p - 1], items * size);
    for (int r = p - 2; r >= 0; r--) {
        PMPI_Reduce_local(x[r], out, (int) items, dtype, op);
    }
}

bool mca_coll_tbrdma_swappable(struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    const MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_BAND, MPI_BOR,
                          MPI_BXOR, MPI_LAND, MPI_LOR,  MPI_LXOR};

    if (!ompi_datatype_is_predefined(dtype)) {
        return false;
    }
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (ops[i] == op) {
            return true;
        }
    }
    return false;
}

bool mca_coll_tbrdma_overlap(const char *a, size_t a_bytes, const char *b, size_t b_bytes)
{
    return a < b + b_bytes && b < a + a_bytes;
}

/* Between 2 processes with an op whose operands may swap, the peer's copy of our block can be
 * reduced with ours in one pass, no copy: received straight into out when out shares no byte
 * with our input vector (which the same step is sending), or into scratch when out is our own
 * block (MPI_IN_PLACE). Returns where it is received, or NULL for the general way. */
static char *rs_pair_landing(const mca_coll_tbrdma_cut_t *cut, int me, char *scratch,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    const char *own = cut->src + cut->first[me] * cut->size;
    size_t vector = (cut->first[1] + cut->items[1]) * cut->size;
    size_t bytes = cut->items[me] * cut->size;

    if (!mca_coll_tbrdma_swappable(dtype, op) || 0 == bytes) {
        return NULL;
    }
    if (!mca_coll_tbrdma_overlap(cut->src, vector, cut->out, bytes)) {
        return cut->out;
    }
    return own == cut->out ? scratch : NULL;
}

int mca_coll_tbrdma_pair_step(const char *send, size_t send_items, char *in, size_t in_items,
                              const char *own, char *out, struct ompi_datatype_t *dtype,
                              struct ompi_op_t *op, int tag, struct ompi_communicator_t *comm)
{
    int peer = 1 - ompi_comm_rank(comm), rc;
    ompi_request_t *req[2];
    mca_coll_tbrdma_step_t s = {req, 0};

    rc = mca_coll_tbrdma_recv(&s, in, in_items, dtype, peer, tag, comm);
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_tbrdma_send(&s, send, send_items, dtype, peer, tag, comm);
    }
    rc = mca_coll_tbrdma_finish(&s, rc);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    PMPI_Reduce_local(in == out ? own : in, out, (int) in_items, dtype, op);
    return OMPI_SUCCESS;
}

int mca_coll_tbrdma_rs_step(const mca_coll_tbrdma_cut_t *cut, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, struct ompi_communicator_t *comm, char *scratch,
                            size_t slot)
{
    int p = ompi_comm_size(comm), me = ompi_comm_rank(comm), rc = OMPI_SUCCESS;
    size_t size = cut->size, mine = cut->items[me];
    ompi_request_t *req[2 * p];
    mca_coll_tbrdma_step_t s = {req, 0};
    char *x[p], *in = 2 == p ? rs_pair_landing(cut, me, scratch, dtype, op) : NULL;

    if (NULL != in) {
        return mca_coll_tbrdma_pair_step(cut->src + cut->first[1 - me] * size, cut->items[1 - me],
                                         in, mine, cut->src + cut->first[me] * size, cut->out,
                                         dtype, op, cut->tag, comm);
    }
    for (int k = 1; k < p && OMPI_SUCCESS == rc; k++) {
        int from = (me + p - k) % p, to = (me + k) % p;

        x[from] = scratch + (size_t) from * slot * size;
        rc = mca_coll_tbrdma_recv(&s, x[from], mine, dtype, from, cut->tag, comm);
        if (OMPI_SUCCESS == rc) {
            rc = mca_coll_tbrdma_send(&s, cut->src + cut->first[to] * size, cut->items[to], dtype,
                                      to, cut->tag, comm);
        }
    }
    rc = mca_coll_tbrdma_finish(&s, rc);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    /* Our own block is read where it is, unless out overlaps it (MPI_IN_PLACE, wholly or in
     * part): then it is copied aside first, as the reduction writes out as it goes. */
    x[me] = (char *) cut->src + cut->first[me] * size;
    if (mca_coll_tbrdma_overlap(x[me], mine * size, cut->out, mine * size)) {
        x[me] = memcpy(scratch + (size_t) me * slot * size, x[me], mine * size);
    }
    mca_coll_tbrdma_reduce(cut->out, x, p, mine, dtype, op, size);
    return OMPI_SUCCESS;
}

int mca_coll_tbrdma_ag_step(char *buf, const size_t *first, const size_t *items,
                            struct ompi_datatype_t *dtype, size_t size, int tag,
                            struct ompi_communicator_t *comm)
{
    int p = ompi_comm_size(comm), me = ompi_comm_rank(comm), rc = OMPI_SUCCESS;
    ompi_request_t *req[2 * p];
    mca_coll_tbrdma_step_t s = {req, 0};

    for (int k = 1; k < p && OMPI_SUCCESS == rc; k++) {
        int from = (me + p - k) % p, to = (me + k) % p;

        rc =
            mca_coll_tbrdma_recv(&s, buf + first[from] * size, items[from], dtype, from, tag, comm);
        if (OMPI_SUCCESS == rc) {
            rc = mca_coll_tbrdma_send(&s, buf + first[me] * size, items[me], dtype, to, tag, comm);
        }
    }
    return mca_coll_tbrdma_finish(&s, rc);
}
