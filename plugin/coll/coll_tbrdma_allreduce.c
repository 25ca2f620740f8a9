/*
 * coll/tbrdma's MPI_Allreduce over a full mesh (docs/collectives.md, "The coll component").
 *
 * reduce-scatter + all-gather: the vector cut into one block per process; block j of every
 *   process goes to process j at once (one step), which reduces the p copies; then every
 *   process sends its reduced block to every other at once (a second step).
 * one-step exchange: every process sends its whole vector to every other at once and reduces
 *   the p vectors it then holds.
 * Everything else goes to the component below. Received blocks go to the module's scratch
 * buffer; without memory for it the call goes to the component below, never fails.
 */
#include "coll_tbrdma.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"

#include <string.h>

#define ALLREDUCE_TAG MCA_COLL_BASE_TAG_ALLREDUCE

/* The one-step exchange: every other vector into its slot of scratch while ours goes to every
 * other from where it is, then the reduction into rbuf. Under MPI_IN_PLACE our vector is rbuf,
 * which the reduction overwrites, so it is copied into its own slot first. */
static int allreduce_onestep(const char *src, char *rbuf, size_t count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                             struct ompi_communicator_t *comm, char *scratch, size_t size)
{
    int p = ompi_comm_size(comm), me = ompi_comm_rank(comm), rc = OMPI_SUCCESS;
    ompi_request_t *req[2 * p];
    mca_coll_tbrdma_step_t s = {req, 0};
    char *x[p];

    for (int j = 0; j < p; j++) {
        x[j] = scratch + (size_t) j * count * size;
    }
    if (src == rbuf) {
        src = memcpy(x[me], src, count * size);
    }
    for (int k = 1; k < p && OMPI_SUCCESS == rc; k++) {
        int from = (me + p - k) % p, to = (me + k) % p;

        rc = mca_coll_tbrdma_recv(&s, x[from], count, dtype, from, ALLREDUCE_TAG, comm);
        if (OMPI_SUCCESS == rc) {
            rc = mca_coll_tbrdma_send(&s, src, count, dtype, to, ALLREDUCE_TAG, comm);
        }
    }
    rc = mca_coll_tbrdma_finish(&s, rc);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    x[me] = (char *) src;
    mca_coll_tbrdma_reduce(rbuf, x, p, count, dtype, op, size);
    return OMPI_SUCCESS;
}

static int allreduce_rsag(const char *src, char *rbuf, size_t count, struct ompi_datatype_t *dtype,
                          struct ompi_op_t *op, struct ompi_communicator_t *comm, char *scratch,
                          size_t size)
{
    int p = ompi_comm_size(comm), me = ompi_comm_rank(comm), rc;
    size_t first[p], items[p];
    mca_coll_tbrdma_cut_t cut = {src, NULL, first, items, size, ALLREDUCE_TAG};

    for (int j = 0; j < p; j++) {
        tbrdma_coll_block(count, p, j, &first[j], &items[j]);
    }
    cut.out = rbuf + first[me] * size;
    rc = mca_coll_tbrdma_rs_step(&cut, dtype, op, comm, scratch, items[0]);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    return mca_coll_tbrdma_ag_step(rbuf, first, items, dtype, size, ALLREDUCE_TAG, comm);
}

/* Scratch bytes: one vector (the pair), p vectors (one-step), or p of the largest block
 * (block 0). */
static size_t allreduce_scratch_bytes(tbrdma_coll_alg_t alg, bool pair, size_t count, int p,
                                      size_t size)
{
    size_t first, slot;

    if (TBRDMA_COLL_ONESTEP == alg && pair) {
        return count * size;
    }
    if (TBRDMA_COLL_ONESTEP == alg) {
        return (size_t) p * count * size;
    }
    tbrdma_coll_block(count, p, 0, &first, &slot);
    return (size_t) p * slot * size;
}

int mca_coll_tbrdma_allreduce(const void *sbuf, void *rbuf, int count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                              struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_tbrdma_module_t *m = (mca_coll_tbrdma_module_t *) module;
    tbrdma_coll_limits_t lim = mca_coll_tbrdma_limits();
    int p = ompi_comm_size(comm);
    const char *src = (MPI_IN_PLACE == sbuf) ? rbuf : sbuf;
    tbrdma_coll_alg_t alg;
    bool pair;
    size_t size;
    char *scratch = NULL;

    ompi_datatype_type_size(dtype, &size);
    alg = tbrdma_coll_allreduce_alg(&lim, (size_t) count * size, p); /* 0 bytes: defer */
    pair = 2 == p && mca_coll_tbrdma_swappable(dtype, op);
    if (TBRDMA_COLL_DEFER != alg && mca_coll_tbrdma_cuttable(count, dtype, op)) {
        scratch =
            mca_coll_tbrdma_scratch(m, allreduce_scratch_bytes(alg, pair, (size_t) count, p, size));
    }
    alg = NULL == scratch ? TBRDMA_COLL_DEFER : alg;
    pair = pair && TBRDMA_COLL_ONESTEP == alg;
    COLL_TBRDMA_CALL("allreduce", (size_t) count * size, p,
                     pair ? "one-step exchange of a pair" : tbrdma_coll_alg_name(alg));
    if (pair) { /* the peer's vector into rbuf (into scratch in place, where rbuf is ours) */
        return mca_coll_tbrdma_pair_step(src, (size_t) count, src == rbuf ? scratch : rbuf,
                                         (size_t) count, src, rbuf, dtype, op, ALLREDUCE_TAG, comm);
    }
    if (TBRDMA_COLL_ONESTEP == alg) {
        return allreduce_onestep(src, rbuf, (size_t) count, dtype, op, comm, scratch, size);
    }
    if (TBRDMA_COLL_RSAG == alg) {
        return allreduce_rsag(src, rbuf, (size_t) count, dtype, op, comm, scratch, size);
    }
    return m->next.coll_allreduce(sbuf, rbuf, count, dtype, op, comm,
                                  m->next.coll_allreduce_module);
}
