/*
 * The timers of every connected endpoint, run by each progress pass (engine layer,
 * btl_tbrdma_timers.h): retransmission timeouts, the watchdog of frames never acknowledged,
 * and the peers' liveness.
 *
 * Liveness (docs/design.md, "Liveness"): UC gives no error for a dead peer or a pulled cable,
 * so every endpoint tracks when it last heard a valid frame. A peer silent for a quarter of
 * btl_tbrdma_peer_timeout_ms is asked to answer (a control frame with TBRDMA_HF_AREQ); a peer
 * silent for the whole timeout is lost. While probes go unanswered the port state is read (at
 * most every 200 ms): a DOWN port fails its endpoints at once, with that reason.
 */
#include "engine/btl_tbrdma_timers.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "core/tbrdma_mutate.h"

#include <stdio.h>

#define TIMERS_PORT_CHECK_NS 200000000ull /* at most one port query per device per 200 ms */

/* Probes went unanswered: a DOWN port explains it (at most one query per device per 200 ms). */
static void timers_check_port(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                              uint64_t now)
{
    const tbrdma_port_info_t *p = &module->ports[ep->local_port];
    char why[320];

    if (mca_btl_tbrdma_elapsed(now, ep->dev->port_checked_ns) < TIMERS_PORT_CHECK_NS) {
        return;
    }
    ep->dev->port_checked_ns = now;
    if (tbrdma_verbs_port_active(ep->dev->vdev)) {
        return;
    }
    snprintf(why, sizeof(why),
             "port %s (interface %s) is DOWN: the Thunderbolt cable was unplugged, or RDMA was "
             "disabled (rdma_ctl) on one of the two Macs",
             p->device, '\0' != p->ifname[0] ? p->ifname : "?");
    for (int i = 0; i < module->neps; i++) {
        if (module->eps[i]->dev == ep->dev) {
            mca_btl_tbrdma_ep_fail(module, module->eps[i], why);
        }
    }
}

static void timers_liveness(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint64_t now)
{
    int v = tbrdma_live_judge(&ep->live, now, !ep->dev->cq_backlog, &module->live);
    uint64_t silent = tbrdma_live_silent(&ep->live, now);
    char why[320];

    if (v & TBRDMA_LIVE_PROBE) {
        ep->probe = 1; /* answer at once, please */
    }
    if (v & TBRDMA_LIVE_PORT) {
        timers_check_port(module, ep, now);
    }
    if (TBRDMA_EP_CONNECTED == ep->state && (v & TBRDMA_LIVE_LOST)) {
        snprintf(why, sizeof(why),
                 "no frame from it for %.1f s (btl_tbrdma_peer_timeout_ms = %d): the peer process "
                 "died or hangs, its Mac went away, or the cable is broken",
                 (double) silent / 1e9, mca_btl_tbrdma_component.peer_timeout_ms);
        mca_btl_tbrdma_ep_fail(module, ep, why);
    }
}

/* The channel's first unacknowledged frame has not left this Mac: its send has not completed. */
static int timers_head_queued(const mca_btl_tbrdma_chan_t *ch)
{
    return NULL != ch->head && (ch->head->flags & TBRDMA_FF_POSTED);
}

/*
 * A channel whose transmitted frames stay unacknowledged for the whole peer timeout carries no
 * data any more, even if the peer still answers probes on the other channel: the peer is lost
 * (a wait that never ends would be a silent hang).
 */
static void timers_unacked(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep, int c,
                           uint64_t now)
{
    const mca_btl_tbrdma_chan_t *ch = &ep->chan[c];
    uint64_t waited = tbrdma_rel_tx_unacked_for(&ch->tx, now);
    char why[320];

    if (waited < module->peer_timeout_ns || TBRDMA_EP_CONNECTED != ep->state
        || TBRDMA_MUTANT(WATCHDOG_OFF)) {
        return;
    }
    snprintf(why, sizeof(why),
             "its %s channel acknowledged none of frames %u..%u for %.1f s "
             "(btl_tbrdma_peer_timeout_ms = %d), although the peer still answers: the cable "
             "loses every %s message, or the peer's tbrdma is stuck%s",
             TBRDMA_CHAN_EAGER == c ? "1-frame" : "bulk", ch->tx.una, ch->tx.sent_hi - 1,
             (double) waited / 1e9, mca_btl_tbrdma_component.peer_timeout_ms,
             TBRDMA_CHAN_EAGER == c ? "small" : "large",
             timers_head_queued(ch)
                 ? " (the first of them has not left this Mac: its send never completed)"
                 : "");
    mca_btl_tbrdma_ep_fail(module, ep, why);
}

void mca_btl_tbrdma_timers(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                           uint64_t now)
{
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

        tbrdma_rel_tx_clock(&ch->tx, now);
        if (timers_head_queued(ch)) {
            tbrdma_rel_tx_queued(&ch->tx, now); /* still in this Mac's send queue: not lost */
        }
        if (tbrdma_rel_tx_timeout(&ch->tx, now, &module->timing)) {
            module->stats.timeouts++;
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_FRAME,
                           "channel %d to %s: retransmission timeout, frames %u..%u unacked "
                           "(%u sent), next timeout in %u us, credit up to tx %u (next tx %u)",
                           c, ep->peer_host, ch->tx.una, ch->tx.next_seq - 1, ch->tx.sent_hi,
                           ch->tx.rto_ns / 1000, ch->tx.limit, ch->tx.tx_next);
            ch->snd = ch->head; /* go back to the first unacknowledged frame */
            if (!tbrdma_rel_tx_credit(&ch->tx, 0)) {
                ep->probe = 1; /* the grant that would let it retransmit may have been lost */
            }
        }
        timers_unacked(module, ep, c, now);
    }
    timers_liveness(module, ep, now);
}

void mca_btl_tbrdma_timers_forgive(mca_btl_tbrdma_module_t *module, uint64_t stall)
{
    for (int i = 0; i < module->neps; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        tbrdma_live_forgive(&ep->live, stall);
        for (int c = 0; c < TBRDMA_NCHAN; c++) {
            tbrdma_rel_tx_forgive(&ep->chan[c].tx, stall);
        }
    }
}
