/*
 * coll/tbrdma's module: one per communicator that takes it. The query says which
 * communicators (intra-communicators of at least coll_tbrdma_min_procs processes, when the
 * priority is set); enable keeps the collectives of the components below, which get the calls
 * this one leaves.
 */
#include "coll_tbrdma.h"

#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

static void module_construct(mca_coll_tbrdma_module_t *m)
{
    memset(&m->next, 0, sizeof(m->next));
    m->scratch = NULL;
    m->scratch_bytes = 0;
}

/* The collectives this component offers: their functions and modules below it are kept. */
#define MODULE_FOR_EACH(do_) \
    do_(allreduce) do_(allgather) do_(reduce_scatter) do_(reduce_scatter_block)

static void module_destruct(mca_coll_tbrdma_module_t *m)
{
#define MODULE_RELEASE(name)                       \
    if (NULL != m->next.coll_##name##_module) {    \
        OBJ_RELEASE(m->next.coll_##name##_module); \
    }
    MODULE_FOR_EACH(MODULE_RELEASE)
#undef MODULE_RELEASE
    free(m->scratch);
}

OBJ_CLASS_INSTANCE(mca_coll_tbrdma_module_t, mca_coll_base_module_t, module_construct,
                   module_destruct);

/* The communicator's name for messages (5.0 may have none). */
static const char *module_comm_name(const struct ompi_communicator_t *comm)
{
#if OMPI_MAJOR_VERSION >= 5
    return (NULL != comm->c_name && '\0' != comm->c_name[0]) ? comm->c_name : "(unnamed)";
#else
    return '\0' != comm->c_name[0] ? comm->c_name : "(unnamed)";
#endif
}

static int module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_tbrdma_module_t *m = (mca_coll_tbrdma_module_t *) module;
    const char *missing = NULL;

    /* Every collective it offers needs one below it to defer to. */
#define MODULE_CHECK(name)                                                                      \
    if (NULL == missing                                                                         \
        && (NULL == comm->c_coll->coll_##name || NULL == comm->c_coll->coll_##name##_module)) { \
        missing = #name;                                                                        \
    }
    MODULE_FOR_EACH(MODULE_CHECK)
#undef MODULE_CHECK
    if (NULL != missing) {
        opal_output(0,
                    "coll tbrdma: communicator %s: no other component offers MPI_%s to fall "
                    "back on; coll/tbrdma steps aside",
                    module_comm_name(comm), missing);
        return OMPI_ERR_NOT_FOUND;
    }
#define MODULE_KEEP(name)                                              \
    m->next.coll_##name = comm->c_coll->coll_##name;                   \
    m->next.coll_##name##_module = comm->c_coll->coll_##name##_module; \
    OBJ_RETAIN(m->next.coll_##name##_module);
    MODULE_FOR_EACH(MODULE_KEEP)
#undef MODULE_KEEP
    COLL_TBRDMA_VERBOSE(COLL_TBRDMA_VERBOSE_COMM,
                        "communicator %s (%d processes): MPI_Allreduce, MPI_Allgather, "
                        "MPI_Reduce_scatter(_block) by coll/tbrdma",
                        module_comm_name(comm), ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_tbrdma_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    const mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;
    mca_coll_tbrdma_module_t *m;

    if (c->priority <= 0 || OMPI_COMM_IS_INTER(comm) || ompi_comm_size(comm) < c->min_procs) {
        return NULL;
    }
    m = OBJ_NEW(mca_coll_tbrdma_module_t);
    if (NULL == m) {
        return NULL;
    }
    m->super.coll_module_enable = module_enable;
    m->super.coll_allreduce = mca_coll_tbrdma_allreduce;
    m->super.coll_allgather = mca_coll_tbrdma_allgather;
    m->super.coll_reduce_scatter = mca_coll_tbrdma_reduce_scatter;
    m->super.coll_reduce_scatter_block = mca_coll_tbrdma_reduce_scatter_block;
    *priority = c->priority;
    return &m->super;
}
