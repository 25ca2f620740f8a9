/*
 * tbrdma's reliable channels, sending half (channel layer, btl_tbrdma_chan.c): per peer and
 * channel, the send list in sequence order, transmissions within the peer's credits and the
 * send queue, control frames. The receiving half is in btl_tbrdma_completion.c.
 */
#ifndef BTL_TBRDMA_CHAN_H
#define BTL_TBRDMA_CHAN_H

#include "fabric/btl_tbrdma_endpoint.h"

/* Queues a data frame on its channel (token): sequence number, send list. */
void mca_btl_tbrdma_ep_enqueue(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_frag_t *frag);

/* Transmits what credits and send queues allow on both channels (token). */
void mca_btl_tbrdma_ep_push(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint64_t now);

/* Sends a control frame of type (ACK or CLOSE) if one is owed or forced (token). */
void mca_btl_tbrdma_ep_ctrl(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint8_t type, bool force);

/* Sends an acknowledgement when one is owed: threshold, NACK, request, or delay (token). */
void mca_btl_tbrdma_ep_flush_owed(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  uint64_t now);

/* Returns a control frame to its device's pool (token); one posted beyond the peer's grant
 * no longer holds its channel back. */
void mca_btl_tbrdma_ctrl_put(mca_btl_tbrdma_frag_t *frag);

#endif /* BTL_TBRDMA_CHAN_H */
