/*
 * ob1's entry points of the data path (proto layer, btl_tbrdma_send.c).
 */
#ifndef BTL_TBRDMA_SEND_H
#define BTL_TBRDMA_SEND_H

#include "fabric/btl_tbrdma_endpoint.h"

/* ob1's entry points (btl.h): alloc, free, prepare_src, send, sendi. */
mca_btl_base_descriptor_t *mca_btl_tbrdma_alloc(struct mca_btl_base_module_t *btl,
                                                struct mca_btl_base_endpoint_t *endpoint,
                                                uint8_t order, size_t size, uint32_t flags);
int mca_btl_tbrdma_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_tbrdma_prepare_src(struct mca_btl_base_module_t *btl,
                                                      struct mca_btl_base_endpoint_t *endpoint,
                                                      struct opal_convertor_t *convertor,
                                                      uint8_t order, size_t reserve, size_t *size,
                                                      uint32_t flags);
int mca_btl_tbrdma_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_tbrdma_sendi(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint,
                         struct opal_convertor_t *convertor, void *header, size_t header_size,
                         size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t **descriptor);

/* Queues the fragments ob1 handed over while the token was busy (token). */
void mca_btl_tbrdma_submit_drain(mca_btl_tbrdma_module_t *module);

#endif /* BTL_TBRDMA_SEND_H */
