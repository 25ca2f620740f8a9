/*
 * tbrdma frame pools (fabric layer). The data pools are per device and touched by application
 * threads only, under the pools' lock (a no-op unless Open MPI runs with threads); the liveness
 * thread puts the frames it finishes on module->deferred and an application thread returns them.
 * The control pools belong to the token holder. See btl_tbrdma_frag.h for the reference rules.
 */
#include "fabric/btl_tbrdma_frag.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"

static void frag_pool_push(mca_btl_tbrdma_pools_t *pools, int pool, mca_btl_tbrdma_frag_t *frag)
{
    TBRDMA_ASSERT(!mca_btl_tbrdma_in_signal, "no frame goes back to a pool in a signal handler");
    OPAL_THREAD_LOCK(&pools->lock);
    frag->next = pools->free[pool];
    pools->free[pool] = frag;
    OPAL_THREAD_UNLOCK(&pools->lock);
}

static int frag_pool_of(const mca_btl_tbrdma_frag_t *frag)
{
    if (TBRDMA_FRAG_CTRL == frag->kind) {
        return TBRDMA_POOL_CTRL;
    }
    return (TBRDMA_CHAN_BULK == frag->chan) ? TBRDMA_POOL_BULK : TBRDMA_POOL_EAGER;
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get(mca_btl_tbrdma_pools_t *pools, int pool)
{
    mca_btl_tbrdma_frag_t *frag;

    OPAL_THREAD_LOCK(&pools->lock);
    frag = pools->free[pool];
    if (NULL != frag) {
        pools->free[pool] = frag->next;
    }
    OPAL_THREAD_UNLOCK(&pools->lock);
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
    frag_pool_push(frag->pools, frag_pool_of(frag), frag);
}

void mca_btl_tbrdma_frag_undefer(mca_btl_tbrdma_module_t *module)
{
    while (NULL != module->deferred) {
        mca_btl_tbrdma_frag_t *frag = module->deferred;

        module->deferred = frag->next;
        frag_pool_push(frag->pools, frag_pool_of(frag), frag);
    }
}

/* The control pool of a channel's control frames. */
static int frag_ctrl_pool(uint8_t chan)
{
    return (TBRDMA_CHAN_BULK == chan) ? TBRDMA_POOL_PROBE : TBRDMA_POOL_CTRL;
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_ctrl_get(mca_btl_tbrdma_pools_t *pools, uint8_t chan)
{
    int pool = frag_ctrl_pool(chan);
    mca_btl_tbrdma_frag_t *frag = pools->free[pool];

    if (NULL != frag) {
        pools->free[pool] = frag->next;
        frag->next = NULL;
        frag->flags = 0;
    }
    return frag;
}

void mca_btl_tbrdma_ctrl_return(mca_btl_tbrdma_frag_t *frag)
{
    int pool = frag_ctrl_pool(frag->chan);

    frag->next = frag->pools->free[pool];
    frag->pools->free[pool] = frag;
}
