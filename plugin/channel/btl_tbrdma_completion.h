/*
 * tbrdma's completions (channel layer, btl_tbrdma_completion.c): receives checked, applied to
 * the channels and delivered to ob1 in order; sends finished once acknowledged and completed.
 * What is not a frame (a completion of user memory, a message of tbrdma's own tag) goes up
 * through the module's table of upcalls (btl_tbrdma.h).
 */
#ifndef BTL_TBRDMA_COMPLETION_H
#define BTL_TBRDMA_COMPLETION_H

#include "fabric/btl_tbrdma_endpoint.h"

/* Polls one device's completions and handles them (token). Returns how many. */
int mca_btl_tbrdma_poll_device(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev,
                               uint64_t now);

/* Delivers the frames the liveness thread held, in order (token, application thread). */
int mca_btl_tbrdma_deliver_held(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep);

/*
 * After the queue pairs of dev's endpoints were destroyed: the frames whose send completion
 * will never come are finished as if it had (token).
 */
void mca_btl_tbrdma_reclaim_posted(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev);

/*
 * Finalize, once the queue pairs are gone: finishes, without ob1, the frames still on ep's
 * channels that the peer never acknowledged (token). Returns how many.
 */
int mca_btl_tbrdma_abandon_unacked(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep);

/* Calls ob1's completion callbacks the liveness thread left (token, application thread). */
int mca_btl_tbrdma_run_callbacks(mca_btl_tbrdma_module_t *module);

#endif /* BTL_TBRDMA_COMPLETION_H */
