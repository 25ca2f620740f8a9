/*
 * tbrdma frame pools (fabric layer). The data pools are per device and touched by application
 * threads only, under the pools' lock (a no-op unless Open MPI runs with threads); the liveness
 * thread puts the frames it finishes on module->deferred and an application thread returns them.
 * The control pools belong to the token holder. See btl_tbrdma_frag.h for the reference rules.
 */
#include "fabric/btl_tbrdma_frag.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "core/tbrdma_mutate.h"

#include <stdlib.h>

static void frag_pool_push(mca_btl_tbrdma_pools_t *pools, int pool, mca_btl_tbrdma_frag_t *frag)
{
    TBRDMA_ASSERT(!mca_btl_tbrdma_in_signal, "no frame goes back to a pool in a signal handler");
    OPAL_THREAD_LOCK(&pools->lock);
    frag->next = pools->free[pool];
    pools->free[pool] = frag;
    pools->nfree[pool]++;
    OPAL_THREAD_UNLOCK(&pools->lock);
}

void mca_btl_tbrdma_frag_pool_add(mca_btl_tbrdma_pools_t *pools, int pool,
                                  mca_btl_tbrdma_frag_t *frag)
{
    int total;

    frag->next = pools->free[pool];
    pools->free[pool] = frag;
    if (TBRDMA_POOL_EAGER != pool && TBRDMA_POOL_BULK != pool) {
        return; /* a control pool: the token holder's, neither counted nor reserved */
    }
    total = ++pools->nfree[pool];
    pools->reserve[pool] = (total / 16 > 1) ? total / 16 : 1;
}

static int frag_pool_of(const mca_btl_tbrdma_frag_t *frag)
{
    if (TBRDMA_FRAG_CTRL == frag->kind) {
        return TBRDMA_POOL_CTRL;
    }
    return (TBRDMA_CHAN_BULK == frag->chan) ? TBRDMA_POOL_BULK : TBRDMA_POOL_EAGER;
}

/* A frame leaving its pool (or the heap) with one reference: nothing of its last use left. */
static mca_btl_tbrdma_frag_t *frag_take(mca_btl_tbrdma_frag_t *frag)
{
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

/* A frame of pool when more than keep are free, else NULL. */
static mca_btl_tbrdma_frag_t *frag_pool_pop(mca_btl_tbrdma_pools_t *pools, int pool, int keep)
{
    mca_btl_tbrdma_frag_t *frag = NULL;

    OPAL_THREAD_LOCK(&pools->lock);
    if (pools->nfree[pool] > keep) {
        frag = pools->free[pool];
        pools->free[pool] = frag->next;
        pools->nfree[pool]--;
    }
    OPAL_THREAD_UNLOCK(&pools->lock);
    return (NULL != frag) ? frag_take(frag) : NULL;
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get(mca_btl_tbrdma_pools_t *pools, int pool)
{
    return frag_pool_pop(pools, pool,
                         TBRDMA_MUTANT(CARRIER_RESERVE_OFF) ? 0 : pools->reserve[pool]);
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get_carrier(mca_btl_tbrdma_pools_t *pools, int pool)
{
    return frag_pool_pop(pools, pool, 0);
}

/* ---- heap frames (btl_tbrdma_frag.h) ---------------------------------------------------- */

#define HEAP_KEEP  128 /* returned heap frames kept for reuse (both sizes); the rest are freed */
#define HEAP_ALIGN 64

static size_t heap_frame_bytes(int pool)
{
    return TBRDMA_HDR_BYTES
           + ((TBRDMA_POOL_BULK == pool) ? tbrdma_bulk_payload() : tbrdma_eager_payload());
}

/* A new heap frame of pool's size (pools' lock held, its bytes counted), or NULL. */
static mca_btl_tbrdma_frag_t *heap_new(mca_btl_tbrdma_pools_t *pools, int pool)
{
    mca_btl_tbrdma_frag_t *frag = calloc(1, sizeof(*frag));
    void *buf = NULL;

    if (NULL == frag || 0 != posix_memalign(&buf, HEAP_ALIGN, heap_frame_bytes(pool))) {
        free(frag);
        return NULL;
    }
    OBJ_CONSTRUCT(&frag->base, mca_btl_base_descriptor_t);
    frag->pools = pools;
    frag->buf = buf;
    frag->cap = (uint32_t) (heap_frame_bytes(pool) - TBRDMA_HDR_BYTES);
    frag->kind = TBRDMA_FRAG_HEAP;
    frag->chan = (TBRDMA_POOL_BULK == pool) ? TBRDMA_CHAN_BULK : TBRDMA_CHAN_EAGER;
    atomic_init(&frag->refs, 0);
    pools->heap_bytes += heap_frame_bytes(pool);
    pools->heap_frames++;
    return frag;
}

static void heap_delete(mca_btl_tbrdma_pools_t *pools, mca_btl_tbrdma_frag_t *frag)
{
    pools->heap_bytes -= frag->cap + TBRDMA_HDR_BYTES;
    pools->heap_frames--;
    OBJ_DESTRUCT(&frag->base);
    free(frag->buf);
    free(frag);
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_lend(mca_btl_tbrdma_pools_t *pools, int pool)
{
    int which = (TBRDMA_POOL_BULK == pool) ? 1 : 0;
    mca_btl_tbrdma_frag_t *frag;

    OPAL_THREAD_LOCK(&pools->lock);
    frag = pools->heap[which];
    if (NULL != frag) {
        pools->heap[which] = frag->next;
        pools->heap_kept--;
    } else if (pools->heap_bytes + heap_frame_bytes(pool) <= TBRDMA_HEAP_BYTES_MAX) {
        frag = heap_new(pools, pool);
    }
    OPAL_THREAD_UNLOCK(&pools->lock);
    return (NULL != frag) ? frag_take(frag) : NULL;
}

/* A heap frame back from its last user: kept for the next loan, or freed. */
static void heap_return(mca_btl_tbrdma_pools_t *pools, mca_btl_tbrdma_frag_t *frag)
{
    int which = (TBRDMA_CHAN_BULK == frag->chan) ? 1 : 0;

    TBRDMA_ASSERT(!mca_btl_tbrdma_in_signal, "no frame goes back to the heap in a signal handler");
    OPAL_THREAD_LOCK(&pools->lock);
    if (pools->heap_kept < HEAP_KEEP) {
        frag->next = pools->heap[which];
        pools->heap[which] = frag;
        pools->heap_kept++;
        frag = NULL;
    }
    if (NULL != frag) {
        heap_delete(pools, frag);
    }
    OPAL_THREAD_UNLOCK(&pools->lock);
}

int mca_btl_tbrdma_frag_heap_free(mca_btl_tbrdma_pools_t *pools)
{
    for (int which = 0; which < 2; which++) {
        while (NULL != pools->heap[which]) {
            mca_btl_tbrdma_frag_t *frag = pools->heap[which];

            pools->heap[which] = frag->next;
            pools->heap_kept--;
            heap_delete(pools, frag);
        }
    }
    return pools->heap_frames;
}

/* A frame nobody holds any more, back where it came from. */
static void frag_return(mca_btl_tbrdma_frag_t *frag)
{
    if (TBRDMA_FRAG_HEAP == frag->kind) {
        heap_return(frag->pools, frag);
    } else {
        frag_pool_push(frag->pools, frag_pool_of(frag), frag);
    }
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
    frag_return(frag);
}

void mca_btl_tbrdma_frag_undefer(mca_btl_tbrdma_module_t *module)
{
    while (NULL != module->deferred) {
        mca_btl_tbrdma_frag_t *frag = module->deferred;

        module->deferred = frag->next;
        frag_return(frag);
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
