/*
 * The endpoints' timers (engine layer, btl_tbrdma_timers.c).
 */
#ifndef BTL_TBRDMA_TIMERS_H
#define BTL_TBRDMA_TIMERS_H

#include "fabric/btl_tbrdma_endpoint.h"

/*
 * ep's timers at now (token): a retransmission timeout sends its channels back to the first
 * unacknowledged frame (and asks for a grant when there is no credit); frames unacknowledged
 * for the whole peer timeout, a silent peer or a DOWN port fail ep.
 */
void mca_btl_tbrdma_timers(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                           uint64_t now);

/*
 * This process did not run for stall ns (stopped, swapped out, paused): its peers' silence and
 * its channels' timers count only the time it listened (token).
 */
void mca_btl_tbrdma_timers_forgive(mca_btl_tbrdma_module_t *module, uint64_t stall);

#endif /* BTL_TBRDMA_TIMERS_H */
