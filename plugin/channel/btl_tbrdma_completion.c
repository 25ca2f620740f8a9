/*
 * tbrdma's completions (channel layer: the receiving half of the reliable channels, and the
 * end of every send). Every completion's status is checked; nothing a peer sent is trusted
 * before tbrdma_wire_check() accepted it (magic, version, type, channel, header CRC, length,
 * connection id, payload CRC when checksums are on) and its frame count matched the channel's.
 * A refused frame is counted by verdict and dropped: its receive is posted again and the sender's
 * retransmission repairs the loss.
 *
 * An accepted frame first updates the sending half of its endpoint (acks free frames, grants
 * raise credits, NACKs send the channel back), then, if it carries data, is delivered to ob1's
 * callback for its tag when it is the next in order; a duplicate is acknowledged again, a frame
 * after a gap is dropped and the gap NACKed once (go-back-N). On the liveness thread, in-order
 * frames are held instead (acknowledged, receive not reposted, so credits shrink) and delivered
 * by the next application thread's progress, in order.
 *
 * Causal order: ob1 hears of a send's completion (its callback, which needs both the peer's
 * acknowledgement and the send's own completion) before it sees any frame the peer sent after
 * receiving that send. One CQ gives no order between a send's completion and a later receive
 * (the simulator holds send completions back; Apple documents no order), so while an
 * acknowledged frame to a peer still waits for its completion, data frames received from that
 * peer (on any of its cables) are held like the liveness thread's; other peers' are not. Without
 * it, Open MPI 5.0's osc/rdma saw the answer to an emulated put, freed its window and the
 * active-message module with it, and the put's callback then ran on freed memory (tb_rma and
 * NWChem: SIGSEGV in send_finished, about 1 run in 20). Hot path: mca_btl_tbrdma_poll_device,
 * recv_complete, recv_deliver.
 */
#include "channel/btl_tbrdma_completion.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "channel/btl_tbrdma_chan.h"
#include "core/tbrdma_mutate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- sends ------------------------------------------------------------------------------ */

/* The transport is done with a send frame (acknowledged, no work request outstanding). */
static void send_done(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag)
{
    mca_btl_tbrdma_frag_put(module, frag); /* the transport's reference */
}

/*
 * A send frame is finished when the peer acknowledged it and no work request on it is
 * outstanding: only then may ob1 reuse the descriptor (it may rewrite and send it again from
 * the callback, as the active-message RDMA emulation of Open MPI 5.0 does), so only then does
 * ob1 hear of its completion. The transport's reference goes last.
 */
static void send_finished(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag)
{
    uint32_t des_flags;

    if (frag->flags & TBRDMA_FF_ACKED) {
        frag->flags &= ~TBRDMA_FF_ACKED;
        frag->ep->primary->acked_waiting--;
    }
    if (NULL != frag->train) { /* a train's last piece, a heap frame's carrier: the message too */
        mca_btl_tbrdma_frag_t *msg = frag->train;

        frag->train = NULL;
        frag->flags &= ~TBRDMA_FF_CB;
        send_done(module, frag);
        frag = msg;
    }
    des_flags = frag->base.des_flags;
    if (0 == (frag->flags & TBRDMA_FF_CB) || module->finalizing) {
        /*
         * No callback; or finalize, which runs after every user of the BTL closed (ob1's code
         * is even unloaded): no one can take the descriptor back, so its reference goes too.
         */
        bool owner_gone = module->finalizing && (frag->flags & TBRDMA_FF_CB);

        frag->flags &= ~TBRDMA_FF_CB;
        if ((des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) || owner_gone) {
            mca_btl_tbrdma_frag_put(module, frag); /* the owner's reference, on its behalf */
        }
        send_done(module, frag);
        return;
    }
    if (module->async_pass) { /* the liveness thread: an application thread calls ob1 */
        frag->cb_next = NULL;
        if (NULL == module->cb_tail) {
            module->cb_head = frag;
        } else {
            module->cb_tail->cb_next = frag;
        }
        module->cb_tail = frag;
        return;
    }
    frag->flags &= ~TBRDMA_FF_CB;
    TBRDMA_ASSERT(!mca_btl_tbrdma_in_signal, "no ob1 callback runs in a signal handler");
    frag->base.des_cbfunc(&module->super, mca_btl_tbrdma_endpoint_owner(frag->ep), &frag->base,
                          OPAL_SUCCESS);
    if (des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_tbrdma_frag_put(module, frag); /* ob1's reference, dropped on its behalf */
    }
    send_done(module, frag);
}

int mca_btl_tbrdma_run_callbacks(mca_btl_tbrdma_module_t *module)
{
    int n = 0;

    while (NULL != module->cb_head) {
        mca_btl_tbrdma_frag_t *frag = module->cb_head;

        module->cb_head = frag->cb_next;
        if (NULL == module->cb_head) {
            module->cb_tail = NULL;
        }
        send_finished(module, frag);
        n++;
    }
    return n;
}

static void send_complete(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag,
                          const tbrdma_vwc_t *wc)
{
    mca_btl_tbrdma_endpoint_t *ep = frag->ep;
    char why[160];

    frag->flags &= ~TBRDMA_FF_POSTED;
    ep->chan[frag->chan].sq_posted--;
    if (0 != wc->status) {
        /* the frame is retransmitted like a lost one; a flushed queue pair is dead */
        module->stats.tx_wc_err++;
        if (TBRDMA_EP_CONNECTED == ep->state && tbrdma_verbs_wc_flushed(wc->status)) {
            snprintf(why, sizeof(why), "its queue pair 0x%x went to the error state (%s)",
                     wc->qp_num, tbrdma_verbs_wc_status_str(wc->status));
            mca_btl_tbrdma_ep_fail(module, ep, why);
        }
    }
    if (TBRDMA_FRAG_CTRL == frag->kind) {
        mca_btl_tbrdma_ctrl_put(frag);
        return;
    }
    if (0 == (frag->flags & TBRDMA_FF_QUEUED)) {
        send_finished(module, frag); /* acknowledged before its completion came */
    }
}

void mca_btl_tbrdma_reclaim_posted(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev)
{
    TBRDMA_ASSERT(!mca_btl_tbrdma_in_signal, "no frame is finished in a signal handler");
    for (int i = 0; NULL != dev && i < dev->nfrags; i++) {
        mca_btl_tbrdma_frag_t *frag = &dev->frags[i];

        if (TBRDMA_FRAG_RECV == frag->kind || 0 == (frag->flags & TBRDMA_FF_POSTED)) {
            continue;
        }
        /* its queue pair is gone: the completion will never come */
        frag->flags &= ~TBRDMA_FF_POSTED;
        frag->ep->chan[frag->chan].sq_posted--;
        if (TBRDMA_FRAG_CTRL == frag->kind) {
            mca_btl_tbrdma_ctrl_put(frag);
        } else if (0 == (frag->flags & TBRDMA_FF_QUEUED)) {
            send_finished(module, frag); /* acknowledged: ob1 hears of its success */
        }
    }
}

/*
 * Finalize, after the queue pairs are gone: frames the peer never acknowledged (it closed, or
 * fell silent, before its ack of them came) never will be. They leave the channels and are
 * finished without ob1, which has closed. Returns how many.
 */
int mca_btl_tbrdma_abandon_unacked(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    int n = 0;

    TBRDMA_ASSERT(module->finalizing && !module->verbs_live,
                  "frames are abandoned only at finalize, once no queue pair is left");
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

        while (NULL != ch->head) {
            mca_btl_tbrdma_frag_t *frag = ch->head;

            ch->head = frag->next;
            frag->next = NULL;
            frag->flags &= ~TBRDMA_FF_QUEUED;
            send_finished(module, frag);
            n++;
        }
        ch->tail = ch->snd = NULL;
    }
    return n;
}

/* ---- acknowledgements and grants from the peer ------------------------------------------ */

/*
 * A cumulative ack for channel c: frees the acknowledged frames of its send list. They leave the
 * list, and the next frame to transmit moves past them, before any of ob1's callbacks runs: a
 * callback may send on this channel at once, and the list must then agree with the channel's
 * counters (after a go-back, the ack may cover frames the counters no longer count as
 * transmitted: the transmit pointer moves to the first frame left, as tbrdma_rel_tx_ack moved
 * snd_nxt; had it stayed, the callback's push would retransmit acknowledged frames and run the
 * counters ahead of the list, which later looked like frames never acknowledged).
 */
static void recv_chan_ack(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep, int c,
                          uint32_t ack, uint64_t now)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[c];
    int n = tbrdma_rel_tx_ack(&ch->tx, ack, now, &module->timing);
    mca_btl_tbrdma_frag_t *done = ch->head, *frag;

    if (n < 0) {
        module->stats.bogus_acks++;
        return;
    }
    if (0 == n) {
        return;
    }
    for (int i = 0; i < n; i++) {
        frag = ch->head;
        ch->snd = (ch->snd == frag) ? frag->next : ch->snd;
        ch->head = frag->next;
        frag->flags &= ~TBRDMA_FF_QUEUED;
        if (i == n - 1) {
            frag->next = NULL; /* ends the list of the acknowledged */
        }
    }
    ch->tail = (NULL == ch->head) ? NULL : ch->tail;
    TBRDMA_ASSERT(NULL == ch->snd || ch->snd->seq == ch->tx.snd_nxt,
                  "the transmit pointer agrees with snd_nxt after an ack");
    while (NULL != done) {
        frag = done;
        done = frag->next;
        if (0 == (frag->flags & TBRDMA_FF_POSTED)) {
            send_finished(module, frag);
        } else if (frag->flags & TBRDMA_FF_CB) {
            frag->flags |= TBRDMA_FF_ACKED; /* received frames wait for its callback */
            ep->primary->acked_waiting++;
        }
    }
}

static void recv_apply_peer(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            const tbrdma_hdr_t *h, uint64_t now)
{
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

        tbrdma_rel_tx_limit(&ch->tx, h->lim[c]);
        recv_chan_ack(module, ep, c, h->ack[c], now);
        if (h->flags & (TBRDMA_HF_NACK0 << c)) {
            module->stats.nacks_rcvd++;
            if (tbrdma_rel_tx_nack(&ch->tx, h->ack[c])) {
                ch->snd = ch->head; /* go back to the first unacknowledged frame */
            }
        }
    }
    if (h->flags & TBRDMA_HF_AREQ) {
        ep->ack_now = 1;
    }
}

/* ---- receives --------------------------------------------------------------------------- */

static void recv_repost(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                        mca_btl_tbrdma_frag_t *frag)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[frag->chan];
    char why[160];
    int rc;

    if (TBRDMA_EP_CONNECTED != ep->state || NULL == ch->qp) {
        return;
    }
    rc = tbrdma_verbs_post_recv(ch->qp, (uintptr_t) frag, frag->buf,
                                ch->frames * TBRDMA_FRAME_BYTES, ep->dev->mr.lkey);
    if (0 != rc) {
        snprintf(why, sizeof(why), "posting a receive again failed: %s", strerror(rc));
        mca_btl_tbrdma_ep_fail(module, ep, why);
        return;
    }
    frag->flags = TBRDMA_FF_POSTED;
    tbrdma_rel_rx_reposted(&ch->rx);
}

/*
 * A piece of a train (proto/btl_tbrdma_send.c) in order on the 1-frame channel: appended to the
 * endpoint's train. True when it was the last one: seg is then the whole message.
 */
static bool recv_train(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                       const mca_btl_tbrdma_frag_t *frag, mca_btl_base_segment_t *seg)
{
    uint32_t cap = tbrdma_bulk_payload(); /* a train is never longer than a bulk message */
    char why[192];

    if (NULL == ep->train && NULL == (ep->train = malloc(cap))) {
        snprintf(why, sizeof(why),
                 "no memory for a train of up to %u bytes (this Mac is out of memory)", cap);
        mca_btl_tbrdma_ep_fail(module, ep, why);
        return false;
    }
    if (frag->len > cap - ep->train_len) {
        snprintf(why, sizeof(why),
                 "it sent a train longer than a bulk message (%u bytes): its tbrdma is not this "
                 "Mac's; install the same tbrdma on every Mac",
                 cap);
        mca_btl_tbrdma_ep_fail(module, ep, why);
        ep->train_len = 0;
        return false;
    }
    memcpy(ep->train + ep->train_len, frag->buf + TBRDMA_HDR_BYTES, frag->len);
    ep->train_len += frag->len;
    if (frag->flags & TBRDMA_FF_MORE) {
        return false;
    }
    seg->seg_addr.pval = ep->train;
    seg->seg_len = ep->train_len;
    ep->train_len = 0;
    module->stats.rx_trains++;
    return true;
}

#ifdef TBRDMA_DEBUG
/* 1 when a callback of a send to peer (a primary endpoint) waits in the module's queue. */
static int recv_cb_queued(const mca_btl_tbrdma_module_t *module,
                          const mca_btl_tbrdma_endpoint_t *peer)
{
    for (const mca_btl_tbrdma_frag_t *f = module->cb_head; NULL != f; f = f->cb_next) {
        if (f->ep->primary == peer) {
            return 1;
        }
    }
    return 0;
}
#endif

/* Hands one in-order data frame (or the train it ends) to ob1's callback for its tag. */
static void recv_deliver(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                         mca_btl_tbrdma_frag_t *frag)
{
    mca_btl_base_segment_t seg;

    TBRDMA_ASSERT(0 == ep->primary->acked_waiting,
                  "causal order: no frame of a peer is delivered while a send to it waits for "
                  "its completion");
#ifdef TBRDMA_DEBUG
    TBRDMA_ASSERT(!recv_cb_queued(module, ep->primary),
                  "causal order: no frame of a peer is delivered before the queued callbacks of "
                  "sends to it");
#endif

    module->stats.rx_data++;
    module->stats.rx_bytes += frag->len;
    seg.seg_addr.pval = frag->buf + TBRDMA_HDR_BYTES;
    seg.seg_len = frag->len;
    if (TBRDMA_CHAN_EAGER == frag->chan && ((frag->flags & TBRDMA_FF_MORE) || 0 < ep->train_len)
        && !recv_train(module, ep, frag, &seg)) {
        return;
    }
    if (module->up.tag == frag->tag) { /* tbrdma's own: zero-copy control */
        module->up.msg(module, ep, seg.seg_addr.pval, (uint32_t) seg.seg_len);
        return;
    }
    if (NULL == mca_btl_base_active_message_trigger[frag->tag].cbfunc) {
        module->stats.rx_unknown_tag++; /* nobody registered the tag: counted, dropped */
        return;
    }
    tbrdma_compat_deliver(&module->super, mca_btl_tbrdma_endpoint_owner(ep), frag->tag, &seg, 1);
}

static void recv_hold(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_chan_t *ch,
                      mca_btl_tbrdma_frag_t *frag)
{
    frag->flags |= TBRDMA_FF_HELD;
    frag->next = NULL;
    if (NULL == ch->held_tail) {
        ch->held_head = frag;
    } else {
        ch->held_tail->next = frag;
    }
    ch->held_tail = frag;
    module->stats.held++;
}

int mca_btl_tbrdma_deliver_held(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    int n = 0;

    if (0 < ep->primary->acked_waiting) {
        return 0; /* causal order: the callbacks of sends to this peer come first */
    }
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

        while (NULL != ch->held_head) {
            mca_btl_tbrdma_frag_t *frag = ch->held_head;

            ch->held_head = frag->next;
            if (NULL == ch->held_head) {
                ch->held_tail = NULL;
            }
            frag->flags &= ~TBRDMA_FF_HELD;
            recv_deliver(module, ep, frag);
            recv_repost(module, ep, frag);
            n++;
        }
    }
    return n;
}

/* A data frame that passed the checks. */
static void recv_data(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                      mca_btl_tbrdma_frag_t *frag, const tbrdma_hdr_t *h)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[frag->chan];

    switch (tbrdma_rel_rx_data(&ch->rx, h->seq)) {
    case TBRDMA_REL_DELIVER:
        tbrdma_rel_rx_delivered(&ch->rx);
        frag->tag = h->tag;
        frag->len = h->len;
        frag->flags |= (h->flags & TBRDMA_HF_MORE) ? TBRDMA_FF_MORE : 0;
        if (module->async_pass || NULL != ch->held_head
            || (0 < ep->primary->acked_waiting && !TBRDMA_MUTANT(CAUSAL_HOLD_SKIPPED))) {
            module->stats.held_other +=
                (!module->async_pass && NULL == ch->held_head && 0 == ep->primary->acked_waiting);
            recv_hold(module, ch, frag);
            return;
        }
        recv_deliver(module, ep, frag);
        break;
    case TBRDMA_REL_DUPLICATE:
        module->stats.rx_dup++;
        ep->ack_now = 1; /* the sender retransmits: our acknowledgement did not reach it */
        break;
    case TBRDMA_REL_GAP:
        module->stats.rx_gap++;
        ch->nack |= tbrdma_rel_rx_nack_due(&ch->rx);
        break;
    }
    recv_repost(module, ep, frag);
}

/* Checks a received frame; TBRDMA_FRAME_OK fills h. */
static tbrdma_frame_verdict_t recv_check(const mca_btl_tbrdma_endpoint_t *ep,
                                         const mca_btl_tbrdma_frag_t *frag, const tbrdma_vwc_t *wc,
                                         tbrdma_hdr_t *h)
{
    tbrdma_frame_verdict_t v = tbrdma_wire_check_frames(wc->byte_len, ep->chan[frag->chan].frames);

    if (TBRDMA_FRAME_OK != v) {
        return v; /* not this channel's frame count */
    }
    return tbrdma_wire_check(frag->buf, wc->byte_len, frag->chan, ep->conn_local, ep->csum, h);
}

static void recv_complete(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag,
                          const tbrdma_vwc_t *wc, uint64_t now)
{
    mca_btl_tbrdma_endpoint_t *ep = frag->ep;
    mca_btl_tbrdma_chan_t *ch = &ep->chan[frag->chan];
    tbrdma_frame_verdict_t v;
    tbrdma_hdr_t h;

    frag->flags &= ~TBRDMA_FF_POSTED;
    if (0 != wc->status) {
        module->stats.rx_wc_err++;
        tbrdma_rel_rx_consumed(&ch->rx);
        recv_repost(module, ep, frag);
        return;
    }
    v = recv_check(ep, frag, wc, &h);
    if (TBRDMA_FRAME_OK != v) {
        module->stats.rx_bad[v]++;
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_FRAME, "refused a %u-byte frame on qp 0x%x: %s", wc->byte_len,
                       wc->qp_num, tbrdma_wire_verdict_name(v));
        tbrdma_rel_rx_consumed(&ch->rx);
        recv_repost(module, ep, frag);
        return;
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_WIRE,
                   "%.6f recv from %s chan %d type %d seq %u tx %u len %u ack %u/%u lim %u/%u "
                   "flags 0x%x",
                   now / 1e9, ep->peer_host, frag->chan, h.type, h.seq, h.tx, h.len, h.ack[0],
                   h.ack[1], h.lim[0], h.lim[1], h.flags);
    tbrdma_rel_rx_arrived(&ch->rx, h.tx);
    tbrdma_live_heard(&ep->live, now);
    ep->heard = 1;
    ep->rx_pass = 1;
    recv_apply_peer(module, ep, &h, now);
    if (TBRDMA_MSG_DATA == h.type) {
        recv_data(module, ep, frag, &h);
        return;
    }
    module->stats.rx_ctrl++;
    recv_repost(module, ep, frag);
    if (TBRDMA_MSG_CLOSE == h.type && TBRDMA_EP_CONNECTED == ep->state) {
        ep->state = TBRDMA_EP_CLOSED; /* the peer finalized: no liveness checks from now on */
    }
}

/* A completion queue that fails (overrun) loses completions: every endpoint on it is lost. */
static void recv_cq_failed(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev, int rc)
{
    const char *more = tbrdma_verbs_dev_error(dev->vdev);
    char why[320];

    if ('\0' != more[0]) { /* agent mode: what became of the agent */
        snprintf(why, sizeof(why), "%s", more);
        module->agent_lost = true;
    } else {
        snprintf(why, sizeof(why), "the completion queue of device %s failed: %s",
                 module->local.ports[dev->port].device, strerror(-rc));
    }
    for (int i = 0; i < module->neps; i++) {
        if (module->eps[i]->dev == dev && TBRDMA_EP_CONNECTED == module->eps[i]->state) {
            mca_btl_tbrdma_ep_fail(module, module->eps[i], why);
        }
    }
}

int mca_btl_tbrdma_poll_device(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev,
                               uint64_t now)
{
    tbrdma_vwc_t wc[TBRDMA_POLL_BATCH];
    int n = tbrdma_verbs_poll(dev->vdev, wc, TBRDMA_POLL_BATCH);

    dev->cq_backlog = (TBRDMA_POLL_BATCH == n); /* more may wait: no peer is judged silent */
    if (n < 0) {
        recv_cq_failed(module, dev, n);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        mca_btl_tbrdma_frag_t *frag = (mca_btl_tbrdma_frag_t *) (uintptr_t) wc[i].wr_id;

        if (tbrdma_zc_wrid_is_zc(wc[i].wr_id)) { /* user memory, not a frame */
            module->up.wc(module, &wc[i]);
            continue;
        }
        /* the frame's kind, not the opcode: an error completion's opcode is undefined */
        if (TBRDMA_FRAG_RECV == frag->kind) {
            recv_complete(module, frag, &wc[i], now);
        } else {
            send_complete(module, frag, &wc[i]);
        }
    }
    return n;
}
