/*
 * coll/tbrdma's MPI_Allgather over a full mesh (docs/collectives.md, "The coll component"):
 * one step, every process sends its block to every other at once over every cable and
 * receives every other's into its place (its own goes through the pml to itself, so any
 * datatypes work). Sizes are the whole gathered vector's (as coll/tuned counts them), within
 * coll_tbrdma_allgather_min..max; the rest goes to the component below.
 */
#include "coll_tbrdma.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/base/coll_tags.h"

#define ALLGATHER_TAG MCA_COLL_BASE_TAG_ALLGATHER

/* Posts the step: block (sbuf, scount, sdtype), or with MPI_IN_PLACE our block of rbuf, to
 * every process; every process's block into rbuf (rcount of rdtype, rext bytes apart). */
static int allgather_post(mca_coll_tbrdma_step_t *s, const void *sbuf, int scount,
                          struct ompi_datatype_t *sdtype, char *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, size_t stride,
                          struct ompi_communicator_t *comm)
{
    int p = ompi_comm_size(comm), me = ompi_comm_rank(comm), rc = OMPI_SUCCESS;
    char *mine = rbuf + (size_t) me * stride;

    if (MPI_IN_PLACE == sbuf) {
        sbuf = mine, scount = rcount, sdtype = rdtype;
    } else {
        rc = mca_coll_tbrdma_recv(s, mine, (size_t) rcount, rdtype, me, ALLGATHER_TAG, comm);
        if (OMPI_SUCCESS == rc) {
            rc = mca_coll_tbrdma_send(s, sbuf, (size_t) scount, sdtype, me, ALLGATHER_TAG, comm);
        }
    }
    for (int k = 1; k < p && OMPI_SUCCESS == rc; k++) {
        int from = (me + p - k) % p, to = (me + k) % p;

        rc = mca_coll_tbrdma_recv(s, rbuf + (size_t) from * stride, (size_t) rcount, rdtype, from,
                                  ALLGATHER_TAG, comm);
        if (OMPI_SUCCESS == rc) {
            rc = mca_coll_tbrdma_send(s, sbuf, (size_t) scount, sdtype, to, ALLGATHER_TAG, comm);
        }
    }
    return rc;
}

int mca_coll_tbrdma_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                              struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_tbrdma_module_t *m = (mca_coll_tbrdma_module_t *) module;
    const mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;
    int p = ompi_comm_size(comm), rc;
    ompi_request_t *req[2 * p];
    mca_coll_tbrdma_step_t s = {req, 0};
    ptrdiff_t lb, rext;
    size_t rsize, bytes;
    bool take;

    ompi_datatype_type_size(rdtype, &rsize);
    ompi_datatype_get_extent(rdtype, &lb, &rext);
    bytes = (size_t) rcount * rsize * (size_t) p;
    /* 0 bytes is below every window. */
    take = tbrdma_coll_in_window(bytes, p, (size_t) c->allgather_min, (size_t) c->allgather_max,
                                 c->min_procs);
    COLL_TBRDMA_CALL("allgather", bytes, p, take ? "one-step all-gather" : "deferred");
    if (!take) {
        return m->next.coll_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                      m->next.coll_allgather_module);
    }
    rc = allgather_post(&s, sbuf, scount, sdtype, rbuf, rcount, rdtype,
                        (size_t) rcount * (size_t) rext, comm);
    return mca_coll_tbrdma_finish(&s, rc);
}
