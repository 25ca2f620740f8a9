/*
 * coll/tbrdma's MPI_Reduce_scatter_block and MPI_Reduce_scatter over a full mesh
 * (docs/collectives.md, "The coll component"): one step, block j of every process to process j
 * at once over every cable, which reduces the p copies of its block in rank order. Sizes are
 * the whole input vector's (the sum of the receive counts, as coll/tuned counts them), within
 * coll_tbrdma_reduce_scatter_min..max; the rest, and vectors that cannot be cut (an op that
 * is not commutative, a datatype with gaps), go to the component below.
 */
#include "coll_tbrdma.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"

#include <limits.h>

#define REDUCE_SCATTER_TAG MCA_COLL_BASE_TAG_REDUCE_SCATTER

/* Whether this component takes a reduce-scatter of total items of size bytes, and its scratch
 * (p slots of the largest block); NULL: the component below takes it. */
static char *reduce_scatter_take(mca_coll_tbrdma_module_t *m, const size_t *items, size_t total,
                                 size_t size, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                 struct ompi_communicator_t *comm, size_t *slot)
{
    const mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;
    int p = ompi_comm_size(comm);

    *slot = 0;
    for (int j = 0; j < p; j++) {
        *slot = items[j] > *slot ? items[j] : *slot;
    }
    if (total > INT_MAX
        || !tbrdma_coll_in_window(total * size, p, (size_t) c->reduce_scatter_min,
                                  (size_t) c->reduce_scatter_max, c->min_procs)
        || !mca_coll_tbrdma_cuttable((int) total, dtype, op)) {
        return NULL;
    }
    return mca_coll_tbrdma_scratch(m, (size_t) p * *slot * size);
}

/* The step, once the blocks are known, into *rc; logs the way the call went. false: the
 * component below takes the call. */
static bool reduce_scatter_run(const char *name, const void *sbuf, void *rbuf, const size_t *first,
                               const size_t *items, size_t total, struct ompi_datatype_t *dtype,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm,
                               mca_coll_tbrdma_module_t *m, int *rc)
{
    mca_coll_tbrdma_cut_t cut = {
        MPI_IN_PLACE == sbuf ? rbuf : sbuf, rbuf, first, items, 0, REDUCE_SCATTER_TAG};
    size_t slot;
    char *scratch;

    ompi_datatype_type_size(dtype, &cut.size);
    scratch = reduce_scatter_take(m, items, total, cut.size, dtype, op, comm, &slot);

    COLL_TBRDMA_CALL(name, total * cut.size, ompi_comm_size(comm),
                     NULL == scratch ? "deferred" : "one-step reduce-scatter");
    if (NULL == scratch) {
        return false;
    }
    *rc = mca_coll_tbrdma_rs_step(&cut, dtype, op, comm, scratch, slot);
    return true;
}

int mca_coll_tbrdma_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                         struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                         struct ompi_communicator_t *comm,
                                         mca_coll_base_module_t *module)
{
    mca_coll_tbrdma_module_t *m = (mca_coll_tbrdma_module_t *) module;
    int p = ompi_comm_size(comm), rc;
    size_t first[p], items[p];

    for (int j = 0; j < p; j++) {
        first[j] = (size_t) j * (size_t) rcount;
        items[j] = (size_t) rcount;
    }
    if (reduce_scatter_run("reduce_scatter_block", sbuf, rbuf, first, items,
                           (size_t) p * (size_t) rcount, dtype, op, comm, m, &rc)) {
        return rc;
    }
    return m->next.coll_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm,
                                             m->next.coll_reduce_scatter_block_module);
}

int mca_coll_tbrdma_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                   struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                   struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_tbrdma_module_t *m = (mca_coll_tbrdma_module_t *) module;
    int p = ompi_comm_size(comm), rc;
    size_t first[p], items[p], total = 0;

    for (int j = 0; j < p; j++) {
        first[j] = total;
        items[j] = (size_t) rcounts[j];
        total += items[j];
    }
    if (reduce_scatter_run("reduce_scatter", sbuf, rbuf, first, items, total, dtype, op, comm, m,
                           &rc)) {
        return rc;
    }
    return m->next.coll_reduce_scatter(sbuf, rbuf, rcounts, dtype, op, comm,
                                       m->next.coll_reduce_scatter_module);
}
