/*
 * A tbrdma endpoint: one peer process on another host, with the cable the mesh chose to reach
 * it (the local port, the peer's port and the peer port's GID). This issue has no data path:
 * endpoints are kept in the module's list for the queue pairs to come and are not handed to
 * Open MPI (add_procs marks no peer reachable).
 */
#ifndef BTL_TBRDMA_ENDPOINT_H
#define BTL_TBRDMA_ENDPOINT_H

#include "btl_tbrdma.h"

#include "opal/class/opal_list.h"

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    opal_proc_t *proc; /* the peer (not retained: Open MPI owns procs) */
    char peer_host[TBRDMA_HOST_MAX];
    int local_port;           /* index in module->local.ports */
    int peer_port;            /* index in the peer host's published ports */
    tbrdma_modex_port_t peer; /* the peer's port: device, GID and its index, MTU */
};
typedef struct mca_btl_base_endpoint_t mca_btl_tbrdma_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_tbrdma_endpoint_t);

/* A new endpoint for proc on peer_host, reached from local_port to peer->(peer_port). */
mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_create(opal_proc_t *proc, const char *peer_host,
                                                          int local_port, int peer_port,
                                                          const tbrdma_modex_port_t *peer);

/* The module's endpoint for proc, NULL when it has none. Caller holds module->lock. */
mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_find(mca_btl_tbrdma_module_t *module,
                                                        const opal_proc_t *proc);

#endif /* BTL_TBRDMA_ENDPOINT_H */
