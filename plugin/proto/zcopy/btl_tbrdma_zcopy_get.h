/*
 * The receiving side of zero-copy, ob1's get (proto layer, btl_tbrdma_zcopy_get.c).
 */
#ifndef BTL_TBRDMA_ZCOPY_GET_H
#define BTL_TBRDMA_ZCOPY_GET_H

#include "proto/zcopy/btl_tbrdma_zcopy_qp.h"

/* ob1's get. */
int mca_btl_tbrdma_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata);

/* The receiver's work: verdicts on outstanding chunks, then new grants (token). 1 when a chunk
 * was not accepted, or its receive could not be posted: the caller starts a new epoch. */
int mca_btl_tbrdma_zc_get_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                   uint64_t now);

/* A receive completion of chunk slot (token). */
void mca_btl_tbrdma_zc_get_recv(mca_btl_tbrdma_endpoint_t *ep, uint32_t slot, uint32_t gen,
                                const tbrdma_vwc_t *wc, uint64_t now);

/* A DONE from the owner (token). */
void mca_btl_tbrdma_zc_get_done(mca_btl_tbrdma_endpoint_t *ep, const tbrdma_zc_msg_t *m,
                                uint64_t now);

/* Outstanding chunks are given up (new epoch): their bytes are granted again later. */
void mca_btl_tbrdma_zc_get_rewind(mca_btl_tbrdma_endpoint_t *ep);

/* Completes (status OPAL_SUCCESS or an error) and frees every finished operation (token). */
void mca_btl_tbrdma_zc_get_finish(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  bool fail_all, int status);

#endif /* BTL_TBRDMA_ZCOPY_GET_H */
