/*
 * The receiving side of zero-copy (ob1's get): ob1 asks for [remote, remote+size) of the peer's
 * registered memory into its own registered buffer. The get is cut into chunks of at most
 * btl_tbrdma_zcopy_chunk bytes, btl_tbrdma_zcopy_window of them outstanding at once; for each,
 * a receive of exactly its length is posted straight into the user's buffer on the zero-copy
 * queue pair, then a GRANT goes to the owner over the eager channel. A chunk is accepted when
 * its receive completed with its length and the owner's DONE agrees (length, CRC32C when
 * checksums are on); anything else makes btl_tbrdma_zcopy.c start a new epoch, which grants the
 * unaccepted chunks again. Chunks are accepted in grant order (UC and the eager channel both
 * keep order), so only the oldest is judged. ob1 hears of the get once every chunk is in,
 * with OPAL_SUCCESS; a get that cannot be done (no zero-copy with the peer any more, the owner
 * refused, the peer is lost) completes with an error and ob1 copies that part instead.
 * Hot path: mca_btl_tbrdma_zc_get_progress.
 */
#include "proto/zcopy/btl_tbrdma_zcopy_get.h"
#include "base/btl_tbrdma_output.h"
#include "core/tbrdma_mutate.h"

#include "core/tbrdma_crc32c.h"

#include <stdlib.h>
#include <string.h>

/* The registration behind ob1's local handle. */
static const mca_btl_tbrdma_reg_t *get_reg(const mca_btl_base_registration_handle_t *handle)
{
    return (const mca_btl_tbrdma_reg_t *) ((const char *) handle
                                           - offsetof(mca_btl_tbrdma_reg_t, handle));
}

/* [addr, addr+size) lies inside the registered range of handle. */
static bool get_inside(const mca_btl_base_registration_handle_t *handle, uint64_t addr, size_t size)
{
    return handle->base <= addr && addr + size - 1 <= handle->bound && addr + size > addr;
}

/* The get can go zero-copy: *lkey_p is the local buffer's key. */
static bool get_usable(const mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_endpoint_t *ep,
                       void *local, uint64_t remote, mca_btl_base_registration_handle_t *lh,
                       const mca_btl_base_registration_handle_t *rh, size_t size, uint32_t *lkey_p)
{
    const mca_btl_tbrdma_reg_t *reg;

    if (!module->verbs_live || NULL == ep || NULL == ep->zc || !ep->zc->peer_ok || NULL == lh
        || NULL == rh || 0 == size) {
        return false;
    }
    reg = get_reg(lh);
    if (reg->dev != ep->dev || NULL == reg->mr.handle
        || !get_inside(lh, (uint64_t) (uintptr_t) local, size) || !get_inside(rh, remote, size)) {
        return false;
    }
    *lkey_p = reg->mr.lkey;
    return true;
}

int mca_btl_tbrdma_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;
    mca_btl_tbrdma_zc_op_t *op = NULL;
    uint32_t lkey;

    (void) flags;
    (void) order;
    if (get_usable(module, ep, local_address, remote_address, local_handle, remote_handle, size,
                   &lkey)) {
        op = calloc(1, sizeof(*op));
    }
    if (NULL == op) {
        __atomic_fetch_add(&module->stats.zc_refused, 1, __ATOMIC_RELAXED);
        /* ob1 copies this part; never OPAL_ERR_NOT_AVAILABLE, which makes ob1 try a put */
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    *op = (mca_btl_tbrdma_zc_op_t){.local = local_address,
                                   .remote = remote_address,
                                   .len = size,
                                   .lkey = lkey,
                                   .key = remote_handle->cookie,
                                   .local_handle = local_handle,
                                   .cbfunc = cbfunc,
                                   .cbcontext = cbcontext,
                                   .cbdata = cbdata};
    pthread_mutex_lock(&ep->zc->ops_lock);
    if (NULL == ep->zc->ops_tail) {
        __atomic_store_n(&ep->zc->ops_head, op, __ATOMIC_RELEASE); /* progress looks unlocked */
    } else {
        ep->zc->ops_tail->next = op;
    }
    ep->zc->ops_tail = op;
    pthread_mutex_unlock(&ep->zc->ops_lock);
    __atomic_fetch_add(&module->stats.zc_gets, 1, __ATOMIC_RELAXED);
    return OPAL_SUCCESS; /* the token holder's progress grants it */
}

/* ---- completions and DONE -------------------------------------------------------------- */

void mca_btl_tbrdma_zc_get_recv(mca_btl_tbrdma_endpoint_t *ep, uint32_t slot, uint32_t gen,
                                const tbrdma_vwc_t *wc, uint64_t now)
{
    mca_btl_tbrdma_zc_chunk_t *c = &ep->zc->chunk[slot % TBRDMA_ZC_WINDOW_MAX];

    if (NULL == c->op || c->gen != gen || c->st.recv_done) {
        return; /* a receive of a queue pair an epoch change destroyed */
    }
    c->st.recv_done = 1;
    c->st.recv_status = wc->status;
    c->st.recv_len = wc->byte_len;
    c->arrived_ns = now;
}

void mca_btl_tbrdma_zc_get_done(mca_btl_tbrdma_endpoint_t *ep, const tbrdma_zc_msg_t *m,
                                uint64_t now)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    for (int i = 0; i < zc->nchunks; i++) {
        mca_btl_tbrdma_zc_chunk_t *c = &zc->chunk[(zc->chead + i) % TBRDMA_ZC_WINDOW_MAX];

        if (c->gen != m->id || c->st.done_in) {
            continue;
        }
        c->st.done_in = 1;
        c->st.done_len = m->len;
        c->st.done_status = m->status;
        c->done_crc = m->crc;
        c->done_ns = now; /* its deadline is set when it is the oldest (get_judge) */
        return;
    }
}

/* ---- verdicts -------------------------------------------------------------------------- */

/* Both halves came: with checksums, the data in the user's buffer must have DONE's CRC32C. */
static void get_check_crc(const mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_zc_chunk_t *c)
{
    const tbrdma_zc_chunk_state_t *st = &c->st;

    if (!ep->csum || c->crc_checked || !st->recv_done || !st->done_in || 0 != st->recv_status
        || st->recv_len != st->len) {
        return;
    }
    c->st.crc_bad = tbrdma_crc32c(c->op->local + c->off, st->len) != c->done_crc;
    c->crc_checked = true;
}

static void get_accept(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_zc_t *zc,
                       mca_btl_tbrdma_zc_chunk_t *c)
{
    tbrdma_zc_pace_chunk(&zc->pace, c->st.len, c->granted_ns, c->arrived_ns);
    c->op->inflight--;
    c->op->retries = 0;
    module->stats.zc_rx_chunks++;
    module->stats.zc_rx_bytes += c->st.len;
    c->op = NULL;
    zc->chead = (zc->chead + 1) % TBRDMA_ZC_WINDOW_MAX;
    zc->nchunks--;
}

/* Judges the oldest chunks; -1 when one was not accepted (a new epoch is due). */
static int get_judge(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep, uint64_t now)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    uint32_t rto = tbrdma_rel_tx_rto_base(&ep->chan[TBRDMA_CHAN_EAGER].tx, &module->timing);
    tbrdma_zc_reason_t why;

    while (0 < zc->nchunks) {
        mca_btl_tbrdma_zc_chunk_t *c = &zc->chunk[zc->chead];
        tbrdma_zc_verdict_t v;

        if (c->st.done_in) { /* only now: its data waited on the wire for the chunks before it */
            c->st.deadline = tbrdma_zc_deadline(&zc->pace, c->done_ns, c->st.len, rto);
        }
        get_check_crc(ep, c);
        v = tbrdma_zc_judge(&c->st, now, &why);
        if (TBRDMA_ZC_WAIT == v) {
            return 0;
        }
        if (TBRDMA_ZC_ACCEPT == v) {
            get_accept(module, zc, c);
            continue;
        }
        module->stats.zc_why[why]++;
        if (TBRDMA_ZC_WHY_LOST == why) {
            tbrdma_zc_pace_lost(&zc->pace); /* or still on a slower wire: give the next longer */
        }
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_FRAME,
                       "zero-copy chunk %u (%u bytes) from %s: %s; new epoch %u", c->gen, c->st.len,
                       ep->peer_host, tbrdma_zc_reason_name(why), zc->epoch + 1);
        if (TBRDMA_ZC_REFUSED == v
            || ++c->op->retries > (TBRDMA_MUTANT(ZC_RETRIES_1000) ? 1000 : TBRDMA_ZC_RETRIES)) {
            c->op->status = OPAL_ERROR; /* ob1 copies it */
        }
        return -1;
    }
    return 0;
}

/* ---- grants ---------------------------------------------------------------------------- */

/* The oldest get with bytes not granted yet, NULL when none. */
static mca_btl_tbrdma_zc_op_t *get_next_op(mca_btl_tbrdma_zc_t *zc)
{
    mca_btl_tbrdma_zc_op_t *op;

    pthread_mutex_lock(&zc->ops_lock);
    for (op = zc->ops_head; NULL != op; op = op->next) {
        if (OPAL_SUCCESS == op->status && op->next_off < op->len) {
            break;
        }
    }
    pthread_mutex_unlock(&zc->ops_lock);
    return op;
}

/* The next chunk's length: whole frames no outstanding chunk spans (core/tbrdma_zc.h). */
static uint32_t get_chunk_len(const mca_btl_tbrdma_zc_t *zc, const mca_btl_tbrdma_zc_op_t *op)
{
    uint32_t busy[TBRDMA_ZC_WINDOW_MAX];

    for (int i = 0; i < zc->nchunks; i++) {
        busy[i] = zc->chunk[(zc->chead + i) % TBRDMA_ZC_WINDOW_MAX].frames;
    }
    return tbrdma_zc_chunk_len(op->len - op->next_off,
                               (uint32_t) mca_btl_tbrdma_component.zcopy_chunk, busy, zc->nchunks);
}

/* Posts the receive of op's next chunk of len bytes into the user's buffer, then its GRANT.
 * 0, -1 (no frame for the GRANT yet) or 1 (the receive was refused: a new epoch is due). */
static int get_grant(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                     mca_btl_tbrdma_zc_op_t *op, uint32_t len)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    int slot = (zc->chead + zc->nchunks) % TBRDMA_ZC_WINDOW_MAX;
    mca_btl_tbrdma_zc_chunk_t *c = &zc->chunk[slot];
    mca_btl_tbrdma_frag_t *frag = mca_btl_tbrdma_zc_msg_frag(module, ep);
    uint32_t gen = tbrdma_zc_gen_next(zc->gen);
    tbrdma_zc_msg_t m;

    if (NULL == frag) {
        return -1;
    }
    if (0
        != tbrdma_verbs_post_recv(zc->qp, tbrdma_zc_wrid(zc->index, 0, (uint32_t) slot, gen),
                                  op->local + op->next_off, len, op->lkey)) {
        mca_btl_tbrdma_frag_put(module, frag);
        module->stats.zc_post_err++;
        return 1;
    }
    zc->gen = gen;
    *c = (mca_btl_tbrdma_zc_chunk_t){.op = op,
                                     .off = op->next_off,
                                     .frames = tbrdma_wire_frames(len),
                                     .gen = gen,
                                     .granted_ns = module->clock_ns,
                                     .st = {.len = len}};
    m = (tbrdma_zc_msg_t){.type = TBRDMA_ZC_GRANT,
                          .epoch = zc->epoch,
                          .id = gen,
                          .len = len,
                          .addr = op->remote + op->next_off,
                          .key = op->key};
    mca_btl_tbrdma_zc_msg_queue(ep, frag, &m);
    op->next_off += len;
    op->inflight++;
    zc->nchunks++;
    return 0;
}

int mca_btl_tbrdma_zc_get_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                   uint64_t now)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    if (0 != get_judge(module, ep, now)) {
        return 1;
    }
    while (zc->nchunks < mca_btl_tbrdma_component.zcopy_window) {
        mca_btl_tbrdma_zc_op_t *op = get_next_op(zc);
        uint32_t len = (NULL != op) ? get_chunk_len(zc, op) : 0;
        int rc = (0 < len) ? get_grant(module, ep, op, len) : -1;

        if (0 != rc) {
            return 1 == rc;
        }
    }
    return 0;
}

/* ---- rewind and completion ------------------------------------------------------------- */

void mca_btl_tbrdma_zc_get_rewind(mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    for (int i = 0; i < zc->nchunks; i++) {
        mca_btl_tbrdma_zc_chunk_t *c = &zc->chunk[(zc->chead + i) % TBRDMA_ZC_WINDOW_MAX];

        if (c->off < c->op->next_off) {
            c->op->next_off = c->off; /* granted again: accepted later chunks are rewritten */
        }
        c->op->inflight--;
        c->op = NULL;
    }
    zc->chead = 0;
    zc->nchunks = 0;
}

/* Takes the finished gets off the list (in order), failing every other one when fail_all. */
static mca_btl_tbrdma_zc_op_t *get_take_finished(mca_btl_tbrdma_zc_t *zc, bool fail_all, int status)
{
    mca_btl_tbrdma_zc_op_t *done = NULL, **tail = &done, **pp = &zc->ops_head;

    pthread_mutex_lock(&zc->ops_lock);
    zc->ops_tail = NULL;
    while (NULL != *pp) {
        mca_btl_tbrdma_zc_op_t *op = *pp;

        if (fail_all && OPAL_SUCCESS == op->status) {
            op->status = status;
        }
        if (0 < op->inflight || (OPAL_SUCCESS == op->status && op->next_off < op->len)) {
            zc->ops_tail = op;
            pp = &op->next;
            continue;
        }
        *pp = op->next;
        op->next = NULL;
        *tail = op;
        tail = &op->next;
    }
    pthread_mutex_unlock(&zc->ops_lock);
    return done;
}

void mca_btl_tbrdma_zc_get_finish(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  bool fail_all, int status)
{
    mca_btl_tbrdma_zc_op_t *op = get_take_finished(ep->zc, fail_all, status);

    while (NULL != op) {
        mca_btl_tbrdma_zc_op_t *next = op->next;

        module->stats.zc_failed += (OPAL_SUCCESS != op->status) ? 1 : 0;
        if (!module->finalizing) { /* ob1 is gone at finalize */
            op->cbfunc(&module->super, ep, op->local, op->local_handle, op->cbcontext, op->cbdata,
                       op->status);
        }
        free(op);
        op = next;
    }
}
