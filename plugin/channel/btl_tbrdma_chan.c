/*
 * tbrdma's reliable channels, sending half (channel layer): the channels' send lists and
 * transmissions, and control frames (acknowledgements, grants, probes, close). ob1's send and
 * sendi (proto/btl_tbrdma_send.c) queue their frames here.
 *
 * A data frame gets its channel's next sequence number when queued and stays in the channel's
 * send list until acknowledged; the list is transmitted from tx.snd_nxt as far as the peer's
 * credits (core/tbrdma_rel.h) and the send queue (63 work requests) allow, every frame padded to
 * its channel's frame count (Apple's frame rule). Every frame carries, for both channels, the
 * cumulative ack and the credit grant of the reverse direction, so data traffic acknowledges
 * itself; a control frame goes out only when an acknowledgement is owed and no data frame
 * carried it (btl_tbrdma_ack_delay_us), answered a request, or announced a gap.
 * Hot path: mca_btl_tbrdma_sendi and chan_post_data.
 */
#include "channel/btl_tbrdma_chan.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "core/tbrdma_mutate.h"

#include <string.h>

/* Header fields every frame to ep carries: acks, grants, NACKs, answer request. */
static void chan_header(const mca_btl_tbrdma_endpoint_t *ep, tbrdma_hdr_t *h, uint8_t type,
                        uint8_t chan)
{
    memset(h, 0, sizeof(*h));
    h->type = type;
    h->chan = chan;
    h->conn = ep->conn_remote;
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        h->ack[c] = ep->chan[c].rx.expected;
        h->lim[c] = tbrdma_rel_rx_limit(&ep->chan[c].rx);
        h->flags |= ep->chan[c].nack ? (TBRDMA_HF_NACK0 << c) : 0;
    }
    h->flags |= ep->probe ? TBRDMA_HF_AREQ : 0;
    h->flags |= ep->csum ? TBRDMA_HF_CSUM : 0; /* pcrc 0: the CRC32C of an empty payload */
}

/* The frame just posted carried everything owed to the peer. */
static void chan_advertised(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        module->stats.nacks_sent += ep->chan[c].nack ? 1 : 0;
        tbrdma_rel_rx_sent(&ep->chan[c].rx);
        ep->chan[c].nack = 0;
    }
    ep->owed_since = 0;
    ep->ack_now = 0;
    ep->probe = 0;
}

/* Posts one sealed frame; a refused post (never expected: the queue depth is tracked) fails ep. */
static int chan_post(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                     mca_btl_tbrdma_chan_t *ch, mca_btl_tbrdma_frag_t *frag, uint32_t post_len)
{
    char why[256];
    int rc;

    TBRDMA_ASSERT(tbrdma_wire_frames(post_len) == ch->frames,
                  "a send of its channel's frame count");
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_WIRE,
                   "%.6f send to %s chan %d type %d seq %u tx %u len %u ack %u/%u lim %u/%u flags "
                   "0x%x",
                   mca_btl_tbrdma_now() / 1e9, ep->peer_host, (int) (ch - ep->chan),
                   frag->buf[1] & 15, frag->buf[8] | frag->buf[9] << 8 | frag->buf[10] << 16,
                   frag->buf[28] | frag->buf[29] << 8, post_len, ep->chan[0].rx.expected,
                   ep->chan[1].rx.expected, tbrdma_rel_rx_limit(&ep->chan[0].rx),
                   tbrdma_rel_rx_limit(&ep->chan[1].rx), frag->buf[3]);
    rc = tbrdma_verbs_post_send(ch->qp, (uintptr_t) frag, frag->buf, post_len, ep->dev->mr.lkey);
    if (0 != rc) {
        snprintf(why, sizeof(why), "posting a send of %u bytes failed: %s", post_len, strerror(rc));
        mca_btl_tbrdma_ep_fail(module, ep, why);
        return rc;
    }
    frag->flags |= TBRDMA_FF_POSTED;
    ch->sq_posted++;
    chan_advertised(module, ep);
    return 0;
}

static int chan_post_data(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                          mca_btl_tbrdma_chan_t *ch, mca_btl_tbrdma_frag_t *frag)
{
    uint32_t post_len = TBRDMA_MUTANT(BULK_UNPADDED)
                            ? TBRDMA_HDR_BYTES + frag->len
                            : tbrdma_wire_post_len(TBRDMA_HDR_BYTES + frag->len, ch->frames);
    tbrdma_hdr_t h;

    chan_header(ep, &h, TBRDMA_MSG_DATA, frag->chan);
    h.tag = frag->tag;
    h.seq = frag->seq;
    h.len = frag->len;
    h.tx = tbrdma_rel_tx_take(&ch->tx);
    h.pcrc = frag->pcrc;
    h.flags |= (frag->flags & TBRDMA_FF_MORE) ? TBRDMA_HF_MORE : 0;
    tbrdma_wire_seal(frag->buf, &h);
    if (0 != chan_post(module, ep, ch, frag, post_len)) {
        return -1;
    }
    module->stats.retransmits += (frag->flags & TBRDMA_FF_SENT) ? 1 : 0;
    module->stats.tx_data++;
    module->stats.tx_bytes += frag->len;
    module->stats.tx_striped += (0 < ep->stripe) ? 1 : 0;
    frag->flags |= TBRDMA_FF_SENT;
    return 0;
}

static void chan_credit_probe(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                              mca_btl_tbrdma_chan_t *ch);

/*
 * A heap frame's turn to be transmitted (fabric/btl_tbrdma_frag.h): a frame of its device's pool
 * takes its place in the channel's send list, with its sequence number, payload and CRC, and
 * carries it as a train's last piece carries its message. NULL when no pool frame is free, or on
 * the liveness thread, which never touches the pools: a later pass tries again.
 */
static mca_btl_tbrdma_frag_t *chan_carry(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_chan_t *ch,
                                         mca_btl_tbrdma_frag_t *heap)
{
    int pool = (TBRDMA_CHAN_BULK == heap->chan) ? TBRDMA_POOL_BULK : TBRDMA_POOL_EAGER;
    mca_btl_tbrdma_frag_t *carrier = NULL, **link = &ch->head;

    if (!mca_btl_tbrdma_on_liveness_thread()) {
        carrier = mca_btl_tbrdma_frag_get_carrier(heap->pools, pool);
    }
    if (NULL == carrier) {
        module->stats.heap_waits++;
        return NULL;
    }
    carrier->ep = heap->ep;
    carrier->tag = heap->tag;
    carrier->len = heap->len;
    carrier->seq = heap->seq;
    carrier->pcrc = heap->pcrc;
    carrier->flags = heap->flags & (TBRDMA_FF_CB | TBRDMA_FF_QUEUED);
    carrier->train = heap;
    memcpy(carrier->buf + TBRDMA_HDR_BYTES, heap->buf + TBRDMA_HDR_BYTES, heap->len);
    while (*link != heap) {
        link = &(*link)->next;
    }
    *link = carrier;
    carrier->next = heap->next;
    ch->tail = (ch->tail == heap) ? carrier : ch->tail;
    ch->snd = carrier;
    heap->next = NULL;
    heap->flags &= ~TBRDMA_FF_QUEUED;
    return carrier;
}

/*
 * Transmits channel c's frames from snd_nxt on. Never behind a control frame posted beyond the
 * peer's grant (a forced acknowledgement, a credit probe): Apple's hardware holds such a send until
 * the peer posts a receive, and a data frame queued behind it would wait as long. If the peer had
 * meanwhile acknowledged an earlier transmission of that frame, its callback, which needs both,
 * would wait too, and the causal hold would keep the peer's frames in their receives: with the
 * peer in the same state, neither side would free a receive again (seen after outages: a job
 * stopped with nothing unacknowledged, so no timer and no message).
 */
static void chan_push_one(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep, int c,
                          uint64_t now)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

    while (NULL != ch->snd && TBRDMA_EP_CONNECTED == ep->state) {
        mca_btl_tbrdma_frag_t *frag = ch->snd;

        if ((frag->flags & TBRDMA_FF_POSTED) || TBRDMA_WR_MAX <= ch->sq_posted) {
            return; /* its last transmission is still in the send queue, or the queue is full */
        }
        if (0 < ch->beyond) {
            return; /* a frame beyond the grant waits for a receive: nothing behind it (above) */
        }
        TBRDMA_ASSERT(frag->seq == ch->tx.snd_nxt, "the frame to transmit is the one at snd_nxt");
        if (!tbrdma_rel_tx_credit(&ch->tx, 0)) {
            module->stats.credit_stalls += ch->stalled ? 0 : 1;
            ch->stalled = 1;
            tbrdma_rel_tx_stall(&ch->tx, now); /* a timeout must follow if no grant comes */
            if (tbrdma_rel_tx_probe_due(&ch->tx)) {
                chan_credit_probe(module, ep, ch);
            }
            return;
        }
        if (TBRDMA_FRAG_HEAP == frag->kind && NULL == (frag = chan_carry(module, ch, frag))) {
            return; /* no pool frame to carry it yet: the next pass tries again */
        }
        if (0 != chan_post_data(module, ep, ch, frag)) {
            return;
        }
        ch->stalled = 0;
        tbrdma_rel_tx_sent(&ch->tx, now);
        ch->snd = frag->next;
    }
}

void mca_btl_tbrdma_ep_push(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint64_t now)
{
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        chan_push_one(module, ep, c, now);
    }
}

void mca_btl_tbrdma_ep_enqueue(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_frag_t *frag)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[frag->chan];

    frag->seq = tbrdma_rel_tx_new_seq(&ch->tx);
    frag->pcrc = ep->csum ? tbrdma_wire_payload_crc(frag->buf, frag->len) : 0;
    frag->flags = (frag->flags & (TBRDMA_FF_CB | TBRDMA_FF_MORE)) | TBRDMA_FF_QUEUED;
    frag->next = NULL;
    if (NULL == ch->tail) {
        ch->head = frag;
    } else {
        ch->tail->next = frag;
    }
    ch->tail = frag;
    if (NULL == ch->snd) {
        ch->snd = frag;
    }
}

/* A control frame posted beyond the peer's grant: nothing goes behind it (chan_push_one). */
static void chan_mark_beyond(mca_btl_tbrdma_chan_t *ch, mca_btl_tbrdma_frag_t *frag)
{
    frag->flags |= TBRDMA_FF_BEYOND;
    ch->beyond++;
}

/* Back to its pool, once completed or never posted; a frame beyond the grant no longer is. */
void mca_btl_tbrdma_ctrl_put(mca_btl_tbrdma_frag_t *frag)
{
    if (frag->flags & TBRDMA_FF_BEYOND) {
        frag->ep->chan[frag->chan].beyond--;
    }
    mca_btl_tbrdma_ctrl_return(frag);
}

/*
 * The bulk channel's credit probe (core/tbrdma_rel.h): a header, posted at the channel's frame
 * count beyond the credit limit, asking for an answer. No data: nothing waits for it.
 */
static void chan_credit_probe(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                              mca_btl_tbrdma_chan_t *ch)
{
    mca_btl_tbrdma_frag_t *frag = mca_btl_tbrdma_ctrl_get(&ep->dev->pools, TBRDMA_CHAN_BULK);
    tbrdma_hdr_t h;

    if (NULL == frag) {
        return; /* every probe frame waits in a send queue: the next timeout tries again */
    }
    frag->ep = ep;
    chan_header(ep, &h, TBRDMA_MSG_PING, TBRDMA_CHAN_BULK);
    h.flags |= TBRDMA_HF_AREQ;
    h.tx = tbrdma_rel_tx_take(&ch->tx);
    tbrdma_wire_seal(frag->buf, &h);
    if (0 != chan_post(module, ep, ch, frag, tbrdma_wire_post_len(TBRDMA_HDR_BYTES, ch->frames))) {
        mca_btl_tbrdma_ctrl_put(frag);
        return;
    }
    chan_mark_beyond(ch, frag); /* always beyond the limit */
    module->stats.tx_ctrl++;
    module->stats.credit_probes++;
}

void mca_btl_tbrdma_ep_ctrl(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint8_t type, bool force)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[TBRDMA_CHAN_EAGER];
    bool credit = tbrdma_rel_tx_credit(&ch->tx, 1);
    mca_btl_tbrdma_frag_t *frag;
    tbrdma_hdr_t h;

    if (TBRDMA_WR_MAX <= ch->sq_posted || (!credit && !force)) {
        return;
    }
    frag = mca_btl_tbrdma_ctrl_get(&ep->dev->pools, TBRDMA_CHAN_EAGER);
    if (NULL == frag) {
        return;
    }
    frag->ep = ep;
    chan_header(ep, &h, type, TBRDMA_CHAN_EAGER);
    h.tx = tbrdma_rel_tx_take(&ch->tx);
    tbrdma_wire_seal(frag->buf, &h);
    if (0 != chan_post(module, ep, ch, frag, TBRDMA_HDR_BYTES)) {
        mca_btl_tbrdma_ctrl_put(frag);
        return;
    }
    if (!credit) {
        chan_mark_beyond(ch, frag);
    }
    module->stats.tx_ctrl++;
    module->stats.tx_forced += credit ? 0 : 1;
}

/* Threshold of owed frames that sends an acknowledgement at once: a quarter of the window. */
static uint32_t chan_ack_threshold(const mca_btl_tbrdma_chan_t *ch)
{
    return (ch->depth >= 8) ? (uint32_t) ch->depth / 4 : 1;
}

void mca_btl_tbrdma_ep_flush_owed(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  uint64_t now)
{
    bool urgent = ep->ack_now || ep->probe || ep->chan[0].nack || ep->chan[1].nack;
    bool any = urgent;
    bool force;

    /* data owes an acknowledgement; a grant alone only from a quarter of the window on */
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        any = any || 0 < tbrdma_rel_rx_ack_owed(&ep->chan[c].rx);
        urgent = urgent || tbrdma_rel_rx_owed(&ep->chan[c].rx, chan_ack_threshold(&ep->chan[c]));
    }
    any = any || urgent;
    if (!any) {
        return;
    }
    if (0 == ep->owed_since) {
        ep->owed_since = now;
    }
    /* frames came in this pass: a reply may carry the ack; else (the burst ended) ack now */
    if (!urgent && ep->rx_pass
        && mca_btl_tbrdma_elapsed(now, ep->owed_since) < module->ack_delay_ns) {
        ep->rx_pass = 0;
        return;
    }
    ep->rx_pass = 0;
    force = mca_btl_tbrdma_elapsed(now, ep->owed_since) >= module->force_ns;
    mca_btl_tbrdma_ep_ctrl(module, ep, TBRDMA_MSG_ACK, force);
}
