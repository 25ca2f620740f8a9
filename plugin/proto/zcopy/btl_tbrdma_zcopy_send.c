/*
 * The data owner's side of zero-copy: it keeps no state per get. A GRANT names a range of its
 * memory and the registration ob1 handed out for it (the cookie in the handle); the owner checks
 * the range against its own list of registrations (btl_tbrdma_rcache.c), sends exactly the
 * granted bytes from the user's buffer on the zero-copy queue pair (one SGE, no header: Apple's
 * frame rule holds because the receiver posted the same length), then DONE with the chunk's
 * length and CRC32C (when checksums are on) on the reliable eager channel. A grant it cannot
 * serve gets DONE with the reason, and the receiver gives that get up to ob1's copy path.
 * Grants are served in order; the receiver's window bounds how many wait here.
 */
#include "proto/zcopy/btl_tbrdma_zcopy_send.h"
#include "base/btl_tbrdma_output.h"
#include "core/tbrdma_mutate.h"

#include "core/tbrdma_crc32c.h"

void mca_btl_tbrdma_zc_send_grant(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  const tbrdma_zc_msg_t *m)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    mca_btl_tbrdma_zc_grant_t *g;

    if (TBRDMA_ZC_GRANTS == zc->ngrants) {
        module->stats.zc_bad_msg++; /* more than a window: not from a tbrdma peer */
        return;
    }
    g = &zc->grant[(zc->grant_head + zc->ngrants) % TBRDMA_ZC_GRANTS];
    *g = (mca_btl_tbrdma_zc_grant_t){
        .epoch = m->epoch, .id = m->id, .len = m->len, .addr = m->addr, .key = m->key};
    zc->ngrants++;
}

/* Sends the granted chunk (or not: the status says why) and queues its DONE in frag. */
static void send_serve(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                       const mca_btl_tbrdma_zc_grant_t *g, mca_btl_tbrdma_frag_t *frag)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    const void *src = (const void *) (uintptr_t) g->addr;
    tbrdma_zc_msg_t m = {.type = TBRDMA_ZC_DONE, .epoch = g->epoch, .id = g->id, .len = g->len};
    uint32_t lkey;

    if (0 != mca_btl_tbrdma_rcache_lookup(ep->dev, g->key, g->addr, g->len, &lkey)) {
        m.status = TBRDMA_ZC_ST_NOREG;
        module->stats.zc_noreg++;
    } else if (0
               != tbrdma_verbs_post_send(zc->qp, tbrdma_zc_wrid(zc->index, 1, 0, zc->epoch), src,
                                         g->len, lkey)) {
        m.status = TBRDMA_ZC_ST_POSTERR;
        module->stats.zc_post_err++;
    } else {
        /* the checksum after the post: it reads what the device reads, while the chunk is on
         * the wire (before it, a 4 MiB chunk waited about 0.4 ms for its CRC32C) */
        m.crc = ep->csum ? tbrdma_crc32c(src, g->len) : 0;
        zc->sq_posted++;
        module->stats.zc_tx_chunks++;
        module->stats.zc_tx_bytes += g->len;
    }
    mca_btl_tbrdma_zc_msg_queue(ep, frag, &m);
}

void mca_btl_tbrdma_zc_send_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    while (0 < zc->ngrants && zc->sq_posted < TBRDMA_ZC_GRANTS) {
        const mca_btl_tbrdma_zc_grant_t *g = &zc->grant[zc->grant_head];
        /* every grant queued is of this epoch: zc_recv drops older ones, and an epoch change
           empties the queue (zc_renew) */
        mca_btl_tbrdma_frag_t *frag = mca_btl_tbrdma_zc_msg_frag(module, ep);

        if (NULL == frag) {
            return; /* DONE needs a frame: the grant waits for the next pass */
        }
        send_serve(module, ep, g, frag);
        zc->grant_head = (zc->grant_head + 1) % TBRDMA_ZC_GRANTS;
        zc->ngrants--;
    }
}
