/*
 * Releasing the verbs resources of a module (btl_tbrdma_teardown.h): at finalize, when a peer
 * is lost, when add_procs cannot connect, and from the signal handler.
 */
#include "engine/btl_tbrdma_teardown.h"
#include "base/btl_tbrdma_agentlink.h"
#include "base/btl_tbrdma_ledger.h"
#include "channel/btl_tbrdma_completion.h"
#include "fabric/btl_tbrdma_rcache.h"
#include "proto/zcopy/btl_tbrdma_zcopy.h"

void mca_btl_tbrdma_release_verbs_only(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_endpoint_t *ep;

    /* no early return when verbs_live is already false: each step skips what is gone, so a
     * signal that interrupted a release on this thread finishes it */
    module->verbs_live = false;
    /* every endpoint, not only the connected ones (module->eps): a job refused at start-up, or a
     * signal in its connection fence, finds queue pairs on endpoints not connected yet */
    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        mca_btl_tbrdma_endpoint_release(ep);
        mca_btl_tbrdma_zc_release(ep);
        if (TBRDMA_EP_CONNECTED == ep->state) {
            ep->state = TBRDMA_EP_CLOSED;
        }
    }
    for (int p = 0; p < TBRDMA_MAX_PORTS; p++) {
        mca_btl_tbrdma_rcache_release(module->devices[p]); /* user memory first: then the PD */
        mca_btl_tbrdma_device_release(module->devices[p]);
    }
    tbrdma_ledger_file_remove(); /* no queue pair left to account for */
    tbrdma_agentlink_leave();    /* agent mode: the agent frees what this rank used */
}

void mca_btl_tbrdma_release_verbs(mca_btl_tbrdma_module_t *module)
{
    if (!module->verbs_live) {
        return;
    }
    mca_btl_tbrdma_release_verbs_only(module);
    for (int p = 0; p < TBRDMA_MAX_PORTS; p++) {
        mca_btl_tbrdma_reclaim_posted(module, module->devices[p]); /* their QPs are gone */
    }
}
