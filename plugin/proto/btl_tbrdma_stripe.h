/*
 * Multi-cable striping in the plugin (btl_tbrdma_stripe.c; the decisions are in
 * core/tbrdma_stripe.h): one endpoint per cable and peer process, the primary's list of its
 * usable cables, and the cable (frame) for each fragment.
 */
#ifndef BTL_TBRDMA_STRIPE_H
#define BTL_TBRDMA_STRIPE_H

#include "fabric/btl_tbrdma_endpoint.h"

/*
 * add_procs: with btl_tbrdma_stripe, an endpoint for each further cable of link (the cables
 * from this host to primary's host) towards primary's process, appended to the module's list.
 */
int mca_btl_tbrdma_stripe_add(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *primary,
                              const tbrdma_mesh_link_t *link, const tbrdma_modex_t *peer_host);

/*
 * After the connection handshake: every primary lists its stripes that connected and answered
 * (cable order); a stripe whose primary is not usable is closed quietly.
 */
void mca_btl_tbrdma_stripe_ready(mca_btl_tbrdma_module_t *module);

/*
 * The frame for a fragment of size bytes to ep's peer, part of a message of msg_bytes (0 when
 * unknown): from cable 0 unless the fragment is striped (core/tbrdma_stripe.h), else from the
 * least loaded cable with a free frame. frag->ep is the endpoint it travels on. When no cable's
 * pool has one, a frame lent from the heap for cable 0 (NULL only when that too is refused).
 */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_stripe_frag(mca_btl_tbrdma_module_t *module,
                                                  mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                  size_t msg_bytes, uint32_t flags);

#endif /* BTL_TBRDMA_STRIPE_H */
