/*
 * Multi-cable striping (docs/design.md, "Multi-cable striping"). When several cables join two
 * Macs, every peer process on the other Mac gets one endpoint per cable, in the order the mesh
 * solver gives both ends alike (docs/mesh.md): cable 0's endpoint, the primary, is the one Open
 * MPI knows; the others, its stripes, are whole tbrdma connections on their own cable (two
 * queue pairs on that cable's device, their own sequence numbers, credits, acknowledgements
 * and liveness) that ob1 never sees. Eager-sized messages and every message smaller than
 * btl_tbrdma_stripe_min_size stay on cable 0, in order; the bulk fragments of larger messages
 * go to the least loaded cable (core/tbrdma_stripe.h). A frame belongs to one device's memory
 * region, so the cable is chosen when ob1 asks for the descriptor (prepare_src), and the frame
 * comes from that cable's pool. What arrives on a stripe is handed to ob1 as coming from the
 * primary (mca_btl_tbrdma_endpoint_owner). A stripe lost during the job is a lost peer: the
 * job ends with the cable named, as for a single cable.
 */
#include "proto/btl_tbrdma_stripe.h"
#include "base/btl_tbrdma_output.h"

#include "core/tbrdma_stripe.h"

int mca_btl_tbrdma_stripe_add(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *primary,
                              const tbrdma_mesh_link_t *link, const tbrdma_modex_t *peer_host)
{
    if (!mca_btl_tbrdma_component.stripe) {
        return OPAL_SUCCESS;
    }
    for (int k = 1; k < link->nstripes; k++) {
        const tbrdma_modex_port_t *peer = &peer_host->ports[link->peer_ports[k]];
        mca_btl_tbrdma_endpoint_t *ep = mca_btl_tbrdma_endpoint_create(
            primary->proc, primary->peer_host, link->ports[k], link->peer_ports[k], peer);

        if (NULL == ep) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        ep->stripe = k;
        ep->primary = primary;
        ep->nstripes = 0;
        opal_list_append(&module->endpoints, &ep->super);
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_PEER, "%s: peer %s on host %s: striped cable %d: %s <-> %s",
                       OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), OPAL_NAME_PRINT(ep->proc->proc_name),
                       ep->peer_host, k + 1, module->local.ports[ep->local_port].device,
                       ep->peer.device);
    }
    return OPAL_SUCCESS;
}

static bool stripe_usable(const mca_btl_tbrdma_endpoint_t *ep)
{
    return TBRDMA_EP_CONNECTED == ep->state && ep->heard;
}

void mca_btl_tbrdma_stripe_ready(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_endpoint_t *ep;

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        mca_btl_tbrdma_endpoint_t *primary = ep->primary;

        if (primary == ep || TBRDMA_EP_CONNECTED != ep->state) {
            continue; /* a primary, or a stripe that could not connect (reported) */
        }
        if (stripe_usable(primary) && stripe_usable(ep)) {
            primary->stripes[primary->nstripes++] = ep; /* the list is in cable order */
            continue;
        }
        /* no use without its primary: closed, so that its silence is never a lost peer */
        ep->state = TBRDMA_EP_CLOSED;
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "%s: striped cable %d to peer %s on host %s not used: the pair's first "
                       "cable is not connected",
                       OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), ep->stripe + 1,
                       OPAL_NAME_PRINT(ep->proc->proc_name), ep->peer_host);
    }
}

/* Frames queued and not yet acknowledged on ep's bulk channel; full when ep cannot send. */
static uint32_t stripe_load(const mca_btl_tbrdma_endpoint_t *ep)
{
    const tbrdma_rel_tx_t *tx = &ep->chan[TBRDMA_CHAN_BULK].tx;

    return (TBRDMA_EP_CONNECTED == ep->state) ? tx->next_seq - tx->una : TBRDMA_STRIPE_FULL;
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_stripe_frag(mca_btl_tbrdma_module_t *module,
                                                  mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                  size_t msg_bytes, uint32_t flags)
{
    uint32_t load[TBRDMA_MESH_MAX_STRIPES];
    int n = ep->nstripes;

    if (!tbrdma_stripe_wanted(size, msg_bytes, tbrdma_eager_payload(),
                              (size_t) mca_btl_tbrdma_component.stripe_min_size, n)) {
        return mca_btl_tbrdma_endpoint_frag_any(module, ep, size, flags);
    }
    for (int k = 0; k < n; k++) {
        load[k] = stripe_load(ep->stripes[k]);
    }
    for (int tries = 0; tries < n; tries++) {
        int k = tbrdma_stripe_pick(load, n, &ep->stripe_next);
        mca_btl_tbrdma_frag_t *frag;

        if (0 > k) {
            break;
        }
        frag = mca_btl_tbrdma_endpoint_frag(module, ep->stripes[k], size, flags);
        if (NULL != frag) {
            return frag;
        }
        load[k] = TBRDMA_STRIPE_FULL; /* no free frame on that cable's device: the next one */
    }
    return mca_btl_tbrdma_endpoint_frag_any(module, ep, size, flags); /* none: from the heap */
}
