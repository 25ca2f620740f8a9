/*
 * tbrdma endpoints (see btl_tbrdma_endpoint.h): creation and lookup. Endpoints live in the
 * module's list; del_procs and finalize release them.
 */
#include "btl_tbrdma_endpoint.h"

#include <stdio.h>
#include <string.h>

static void endpoint_construct(mca_btl_tbrdma_endpoint_t *ep)
{
    ep->proc = NULL;
    ep->peer_host[0] = '\0';
    ep->local_port = -1;
    ep->peer_port = -1;
    memset(&ep->peer, 0, sizeof(ep->peer));
}

OBJ_CLASS_INSTANCE(mca_btl_tbrdma_endpoint_t, opal_list_item_t, endpoint_construct, NULL);

mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_create(opal_proc_t *proc, const char *peer_host,
                                                          int local_port, int peer_port,
                                                          const tbrdma_modex_port_t *peer)
{
    mca_btl_tbrdma_endpoint_t *ep = OBJ_NEW(mca_btl_tbrdma_endpoint_t);

    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    snprintf(ep->peer_host, sizeof(ep->peer_host), "%s", peer_host);
    ep->local_port = local_port;
    ep->peer_port = peer_port;
    ep->peer = *peer;
    return ep;
}

mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_find(mca_btl_tbrdma_module_t *module,
                                                        const opal_proc_t *proc)
{
    mca_btl_tbrdma_endpoint_t *ep;

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        if (0 == opal_compare_proc(ep->proc->proc_name, proc->proc_name)) {
            return ep;
        }
    }
    return NULL;
}
