/*
 * coll/tbrdma's module: one per communicator that takes it. The query says which
 * communicators (intra-communicators of at least coll_tbrdma_min_procs processes, one per Mac,
 * over ob1 and btl/tbrdma, when the priority is set); enable keeps the collectives of the
 * components below, which get the calls this one leaves.
 */
#include "coll_tbrdma.h"

#include "ompi/mca/pml/base/base.h"
#include "ompi/proc/proc.h"
#include "opal/mca/btl/base/base.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

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

/* Whether the point-to-point layer under this component is tbrdma's: ob1 over btl/tbrdma. */
static bool module_tbrdma_below(void)
{
    mca_btl_base_selected_module_t *sm;

    if (0 != strcmp(mca_pml_base_selected_component.pmlm_version.mca_component_name, "ob1")) {
        return false;
    }
    OPAL_LIST_FOREACH (sm, &mca_btl_base_modules_initialized, mca_btl_base_selected_module_t) {
        if (0 == strcmp(sm->btl_component->btl_version.mca_component_name, "tbrdma")) {
            return true;
        }
    }
    return false;
}

/* The host of process i of comm as a string of our own (free it): Open MPI 5.0 hands out a
 * copy, 4.1 its own. NULL when it is not known. */
static char *module_host(struct ompi_communicator_t *comm, int i)
{
    const opal_proc_t *proc = &ompi_comm_peer_lookup(comm, i)->super;
#if OMPI_MAJOR_VERSION >= 5
    char *host = opal_get_proc_hostname(proc);
#else
    char *host = strdup(opal_get_proc_hostname(proc));
#endif

    if (NULL != host && 0 == strcmp(host, "unknown")) {
        free(host);
        host = NULL;
    }
    return host;
}

/* Why the processes of comm are not each on a Mac of their own, or NULL when they are: its
 * algorithms send to every other process at once, which is right when each is on a Mac of its own,
 * a cable away, and tbrdma carries the traffic (a Mac's own processes meet through shared memory,
 * where Open MPI's own algorithms are better). Every process of the communicator must come to the
 * same answer, or some would call coll/tbrdma's collectives and others Open MPI's, and wait
 * for each other forever: so it compares the host names of all of them, which every process
 * knows alike, not only who shares its own Mac. */
static const char *module_hosts_apart(struct ompi_communicator_t *comm)
{
    int p = ompi_comm_size(comm), n = 0;
    const char *why = NULL;
    char **host;

    host = calloc((size_t) p, sizeof(*host));
    if (NULL == host) {
        return "no memory to compare its processes' hosts";
    }
    for (; n < p && NULL == why; n++) {
        host[n] = module_host(comm, n);
        why = NULL == host[n] ? "the host of one of its processes is not known" : NULL;
        for (int j = 0; j < n && NULL == why; j++) {
            why = 0 == strcmp(host[n], host[j]) ? "more than one of its processes on a Mac" : NULL;
        }
    }
    while (n-- > 0) {
        free(host[n]);
    }
    free(host);
    return why;
}

/* Only in jobs of one process per Mac, judged on MPI_COMM_WORLD once: Open MPI 5.0's coll/han
 * builds communicators of one process per Mac inside jobs with more, and calls their
 * collectives in ways coll/tbrdma's all-gather got wrong (test/mpi/coll_mesh.sh, 2 per Mac). */
static const char *module_misfit(struct ompi_communicator_t *comm)
{
    static bool judged = false;
    static const char *world_why = NULL;

    if (!module_tbrdma_below()) {
        return "its messages would not go over tbrdma (pml ob1 with btl tbrdma)";
    }
    if (!judged) {
        world_why = module_hosts_apart(&ompi_mpi_comm_world.comm);
        world_why = NULL == world_why ? NULL : "the job has more than one process on a Mac";
        judged = true;
    }
    return NULL != world_why ? world_why : module_hosts_apart(comm);
}

mca_coll_base_module_t *mca_coll_tbrdma_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    const mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;
    mca_coll_tbrdma_module_t *m;
    const char *misfit;

    if (c->priority <= 0 || OMPI_COMM_IS_INTER(comm) || ompi_comm_size(comm) < c->min_procs) {
        return NULL;
    }
    misfit = module_misfit(comm);
    if (NULL != misfit) {
        COLL_TBRDMA_VERBOSE(COLL_TBRDMA_VERBOSE_COMM,
                            "communicator %s (%d processes): not taken, %s", module_comm_name(comm),
                            ompi_comm_size(comm), misfit);
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
