/*
 * tbrdma frame pools and ob1's descriptor entry points (alloc, free, prepare_src). The pools are
 * per device and touched by application threads only, under pool_lock (a no-op unless Open MPI
 * runs with threads); the liveness thread puts the frames it finishes on module->deferred and an
 * application thread returns them. See btl_tbrdma_frag.h for the reference rules.
 */
#include "btl_tbrdma_frag.h"
#include "btl_tbrdma_endpoint.h"
#include "btl_tbrdma_output.h"
#include "btl_tbrdma_progress.h"
#include "btl_tbrdma_stripe.h"

#include "opal/datatype/opal_convertor.h"

#include <string.h>

static void frag_pool_push(mca_btl_tbrdma_device_t *dev, int pool, mca_btl_tbrdma_frag_t *frag)
{
    TBRDMA_ASSERT(!mca_btl_tbrdma_in_signal, "no frame goes back to a pool in a signal handler");
    OPAL_THREAD_LOCK(&dev->pool_lock);
    frag->next = dev->pool[pool];
    dev->pool[pool] = frag;
    OPAL_THREAD_UNLOCK(&dev->pool_lock);
}

static int frag_pool_of(const mca_btl_tbrdma_frag_t *frag)
{
    if (TBRDMA_FRAG_CTRL == frag->kind) {
        return TBRDMA_POOL_CTRL;
    }
    return (TBRDMA_CHAN_BULK == frag->chan) ? TBRDMA_POOL_BULK : TBRDMA_POOL_EAGER;
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get(mca_btl_tbrdma_device_t *dev, int pool)
{
    mca_btl_tbrdma_frag_t *frag;

    OPAL_THREAD_LOCK(&dev->pool_lock);
    frag = dev->pool[pool];
    if (NULL != frag) {
        dev->pool[pool] = frag->next;
    }
    OPAL_THREAD_UNLOCK(&dev->pool_lock);
    if (NULL == frag) {
        return NULL;
    }
    frag->next = NULL;
    frag->flags = 0;
    frag->len = 0;
    frag->ep = NULL;
    frag->train = NULL;
    frag->base.des_cbfunc = NULL;
    frag->base.des_cbdata = NULL;
    frag->base.des_context = NULL;
    frag->base.des_flags = 0;
    frag->base.order = MCA_BTL_NO_ORDER;
    TBRDMA_ASSERT(0 == atomic_load_explicit(&frag->refs, memory_order_relaxed),
                  "a frame in its pool is held by no one");
    atomic_store_explicit(&frag->refs, 1, memory_order_relaxed);
    return frag;
}

void mca_btl_tbrdma_frag_put(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag)
{
    int held = atomic_fetch_sub_explicit(&frag->refs, 1, memory_order_acq_rel);

    TBRDMA_ASSERT(1 <= held, "a frame is released at most as often as it was taken");
    if (1 != held) {
        return;
    }
    if (mca_btl_tbrdma_on_liveness_thread()) {
        /* the liveness thread never touches the pools (it holds the token here) */
        frag->next = module->deferred;
        module->deferred = frag;
        return;
    }
    frag_pool_push(frag->dev, frag_pool_of(frag), frag);
}

void mca_btl_tbrdma_frag_undefer(mca_btl_tbrdma_module_t *module)
{
    while (NULL != module->deferred) {
        mca_btl_tbrdma_frag_t *frag = module->deferred;

        module->deferred = frag->next;
        frag_pool_push(frag->dev, frag_pool_of(frag), frag);
    }
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_for(struct mca_btl_base_endpoint_t *ep, size_t size,
                                               uint32_t flags)
{
    mca_btl_tbrdma_frag_t *frag;
    int pool;

    if (NULL == ep || TBRDMA_EP_CONNECTED != ep->state || size > tbrdma_bulk_payload()) {
        return NULL;
    }
    pool = (size <= tbrdma_eager_payload()) ? TBRDMA_POOL_EAGER : TBRDMA_POOL_BULK;
    frag = mca_btl_tbrdma_frag_get(ep->dev, pool);
    if (NULL == frag) {
        mca_btl_tbrdma_component.module->stats.no_frame++; /* ob1 retries later */
        return NULL;
    }
    frag->ep = ep;
    frag->base.des_flags = flags;
    frag->segment.seg_addr.pval = frag->buf + TBRDMA_HDR_BYTES;
    frag->segment.seg_len = size;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    return frag;
}

mca_btl_base_descriptor_t *mca_btl_tbrdma_alloc(struct mca_btl_base_module_t *btl,
                                                struct mca_btl_base_endpoint_t *endpoint,
                                                uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_tbrdma_frag_t *frag = mca_btl_tbrdma_frag_for(endpoint, size, flags);

    (void) btl;
    (void) order;
    return (NULL != frag) ? &frag->base : NULL;
}

int mca_btl_tbrdma_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_tbrdma_frag_put((mca_btl_tbrdma_module_t *) btl, (mca_btl_tbrdma_frag_t *) des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_tbrdma_prepare_src(struct mca_btl_base_module_t *btl,
                                                      struct mca_btl_base_endpoint_t *endpoint,
                                                      struct opal_convertor_t *convertor,
                                                      uint8_t order, size_t reserve, size_t *size,
                                                      uint32_t flags)
{
    size_t max = tbrdma_bulk_payload(), msg_bytes = 0;
    mca_btl_tbrdma_frag_t *frag;
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data;

    (void) btl;
    (void) order;
    if (reserve > max) {
        return NULL;
    }
    max_data = (reserve + *size > max) ? max - reserve : *size;
    opal_convertor_get_packed_size(convertor, &msg_bytes); /* the whole message: may it stripe? */
    frag = mca_btl_tbrdma_stripe_frag(endpoint, reserve + max_data, msg_bytes, flags);
    if (NULL == frag) {
        return NULL;
    }
    iov.iov_base = frag->buf + TBRDMA_HDR_BYTES + reserve;
    iov.iov_len = max_data;
    if (0 > opal_convertor_pack(convertor, &iov, &iov_count, &max_data)) {
        mca_btl_tbrdma_frag_put((mca_btl_tbrdma_module_t *) btl, frag);
        return NULL;
    }
    *size = max_data;
    frag->segment.seg_len = reserve + max_data;
    return &frag->base;
}
