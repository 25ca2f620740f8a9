/*
 * The data owner's side of zero-copy (proto layer, btl_tbrdma_zcopy_send.c).
 */
#ifndef BTL_TBRDMA_ZCOPY_SEND_H
#define BTL_TBRDMA_ZCOPY_SEND_H

#include "proto/zcopy/btl_tbrdma_zcopy_qp.h"

/* A GRANT from the receiver: queued for the owner's progress (token). */
void mca_btl_tbrdma_zc_send_grant(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  const tbrdma_zc_msg_t *m);

/* Serves queued grants: the chunk from user memory, then DONE (token). */
void mca_btl_tbrdma_zc_send_progress(mca_btl_tbrdma_module_t *module,
                                     mca_btl_tbrdma_endpoint_t *ep);

#endif /* BTL_TBRDMA_ZCOPY_SEND_H */
