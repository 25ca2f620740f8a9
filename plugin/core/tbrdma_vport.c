/*
 * A rank's side of the per-Mac agent (tbrdma_vport.h).
 */
#include "tbrdma_vport.h"

#include "tbrdma_mutate.h"

#include "tbrdma_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The rank's first send slot, and how many it has. */
static uint32_t vport_first(const tbrdma_vport_t *vp)
{
    return tbrdma_agentseg_tx_slot(&vp->plan, vp->rank, 0, 0);
}

static uint32_t vport_nslots(const tbrdma_vport_t *vp)
{
    return vp->plan.g.tx_eager + vp->plan.g.tx_bulk;
}

static int vport_rings(tbrdma_vport_t *vp)
{
    uint8_t *b = vp->base;
    const tbrdma_agentseg_plan_t *p = &vp->plan;
    int w[3] = {TBRDMA_AGENTSEG_TO_AGENT, TBRDMA_AGENTSEG_FROM_AGENT, TBRDMA_AGENTSEG_DONE};
    tbrdma_ring_t *r[3] = {&vp->to, &vp->from, &vp->done};

    for (int i = 0; i < 3; i++) {
        int rc = tbrdma_ring_attach(r[i], b + tbrdma_agentseg_ring_off(p, vp->rank, w[i]),
                                    tbrdma_agentseg_ring_bytes(p, w[i]), 0 == i);

        if (0 != rc) {
            return rc;
        }
    }
    return 0;
}

int tbrdma_vport_open(tbrdma_vport_t *vp, void *base, size_t bytes, uint32_t rank, uint32_t maxqps)
{
    int rc;

    memset(vp, 0, sizeof(*vp));
    vp->base = base;
    rc = tbrdma_agentseg_read(base, bytes, &vp->plan);
    if (0 != rc) {
        return rc;
    }
    if (rank >= vp->plan.g.nranks || 0 == maxqps) {
        return -EINVAL;
    }
    vp->rank = rank;
    rc = vport_rings(vp);
    if (0 != rc) {
        return rc;
    }
    vp->free_slot[0] = calloc(vp->plan.g.tx_eager, sizeof(uint32_t));
    vp->free_slot[1] = calloc(vp->plan.g.tx_bulk + 1, sizeof(uint32_t));
    vp->tx_wr = calloc(vport_nslots(vp), sizeof(uint64_t));
    vp->tx_vqp = calloc(vport_nslots(vp), sizeof(uint32_t));
    vp->qps = calloc(maxqps, sizeof(*vp->qps));
    if (!vp->free_slot[0] || !vp->free_slot[1] || !vp->tx_wr || !vp->tx_vqp || !vp->qps) {
        tbrdma_vport_close(vp);
        return -ENOMEM;
    }
    vp->maxqps = maxqps;
    for (uint32_t i = 0; i < vp->plan.g.tx_eager; i++) {
        vp->free_slot[0][vp->nfree[0]++] = tbrdma_agentseg_tx_slot(&vp->plan, rank, 0, i);
    }
    for (uint32_t i = 0; i < vp->plan.g.tx_bulk; i++) {
        vp->free_slot[1][vp->nfree[1]++] = tbrdma_agentseg_tx_slot(&vp->plan, rank, 1, i);
    }
    return 0;
}

void tbrdma_vport_close(tbrdma_vport_t *vp)
{
    for (uint32_t i = 0; NULL != vp->qps && i < vp->nqps; i++) {
        tbrdma_vuc_fini(&vp->qps[i].rq);
    }
    free(vp->free_slot[0]);
    free(vp->free_slot[1]);
    free(vp->tx_wr);
    free(vp->tx_vqp);
    free(vp->qps);
    memset(vp, 0, sizeof(*vp));
}

/* The virtual queue pair of (conn, chan), or -1. */
static int vport_find(const tbrdma_vport_t *vp, uint32_t conn, uint8_t chan)
{
    for (uint32_t i = 0; i < vp->nqps; i++) {
        if (vp->qps[i].conn == conn && vp->qps[i].chan == chan && 0 != vp->qps[i].rq.cap) {
            return (int) i;
        }
    }
    return -1;
}

int tbrdma_vport_qp_create(tbrdma_vport_t *vp, uint32_t conn, uint8_t chan, uint16_t cable,
                           uint32_t max_recv)
{
    tbrdma_vport_qp_t *q;
    int rc;

    if (chan >= TBRDMA_NCHAN || cable >= vp->plan.g.ncables) {
        return -EINVAL;
    }
    if (0 <= vport_find(vp, conn, chan)) {
        return -EEXIST;
    }
    if (vp->nqps == vp->maxqps) {
        return -ENOSPC;
    }
    q = &vp->qps[vp->nqps];
    rc = tbrdma_vuc_init(&q->rq, max_recv);
    if (0 != rc) {
        return rc;
    }
    q->conn = conn;
    q->chan = chan;
    q->cable = cable;
    return (int) vp->nqps++;
}

int tbrdma_vport_qp_destroy(tbrdma_vport_t *vp, uint32_t q)
{
    if (q >= vp->nqps || 0 == vp->qps[q].rq.cap) {
        return -EINVAL;
    }
    tbrdma_vuc_fini(&vp->qps[q].rq); /* cap 0: vport_find skips it */
    return 0;
}

int tbrdma_vport_post_recv(tbrdma_vport_t *vp, uint32_t q, uint64_t wr_id, void *addr, uint32_t len)
{
    if (q >= vp->nqps) {
        return -EINVAL;
    }
    return tbrdma_vuc_post_buf(&vp->qps[q].rq, wr_id, addr, len);
}

uint32_t tbrdma_vport_ctrl_reserve(const tbrdma_vport_t *vp, uint8_t chan)
{
    if (TBRDMA_MUTANT(VPORT_CTRL_RESERVE_OFF)) {
        return 0;
    }
    return ((TBRDMA_CHAN_EAGER == chan) ? vp->plan.g.tx_eager : vp->plan.g.tx_bulk) / 8;
}

int tbrdma_vport_post_send(tbrdma_vport_t *vp, uint32_t q, uint64_t wr_id, const void *buf,
                           uint32_t len)
{
    tbrdma_agentseg_desc_t *desc;
    uint32_t slot, i;
    uint8_t chan;

    if (q >= vp->nqps || 0 == vp->qps[q].rq.cap) {
        return -EINVAL; /* no such queue pair, or destroyed */
    }
    chan = vp->qps[q].chan;
    if (len > ((TBRDMA_CHAN_EAGER == chan) ? 1 : vp->plan.g.bulk_frames) * TBRDMA_FRAME_BYTES) {
        return -EMSGSIZE; /* longer than the channel's slots, free or not */
    }
    if (0 == vp->nfree[chan]
        || (vp->nfree[chan] <= tbrdma_vport_ctrl_reserve(vp, chan)
            && TBRDMA_MSG_DATA == tbrdma_wire_peek_type(buf, len))) {
        return -EAGAIN;
    }
    slot = vp->free_slot[chan][--vp->nfree[chan]];
    memcpy(vp->base + tbrdma_agentseg_slot_off(&vp->plan, slot), buf, len);
    desc = (tbrdma_agentseg_desc_t *) (vp->base + vp->plan.desc_off) + slot;
    *desc = (tbrdma_agentseg_desc_t){.len = len, .cable = vp->qps[q].cable, .chan = chan};
    i = slot - vport_first(vp);
    vp->tx_wr[i] = wr_id;
    vp->tx_vqp[i] = q;
    return tbrdma_ring_push(&vp->to, slot); /* never full: sized for every slot (agentseg.h) */
}

/* A send the agent finished: its completion, and the slot free again. */
static int vport_sent(tbrdma_vport_t *vp, uint32_t slot, tbrdma_vport_wc_t *wc)
{
    const tbrdma_agentseg_desc_t *desc =
        (const tbrdma_agentseg_desc_t *) (vp->base + vp->plan.desc_off) + slot;
    uint32_t i = slot - vport_first(vp);
    uint8_t chan;

    if (slot < vport_first(vp) || i >= vport_nslots(vp)) {
        return -EPIPE; /* not one of ours: the agent is broken */
    }
    chan = (i < vp->plan.g.tx_eager) ? TBRDMA_CHAN_EAGER : TBRDMA_CHAN_BULK;
    vp->free_slot[chan][vp->nfree[chan]++] = slot;
    *wc = (tbrdma_vport_wc_t){
        .wr_id = vp->tx_wr[i], .status = desc->status, .byte_len = desc->len, .vqp = vp->tx_vqp[i]};
    return 1;
}

/* A frame the agent handed over: at most one completion; the slot goes back to the agent. */
static int vport_arrived(tbrdma_vport_t *vp, uint32_t slot, tbrdma_vport_wc_t *wc)
{
    const tbrdma_agentseg_desc_t *desc;
    const uint8_t *frame;
    tbrdma_vuc_recv_t rcv;
    uint32_t conn = 0, len;
    int q, n = 0;

    if (-1 != tbrdma_agentseg_slot_owner(&vp->plan, slot)) {
        return -EPIPE; /* not a receive slot: the agent is broken */
    }
    desc = (const tbrdma_agentseg_desc_t *) (vp->base + vp->plan.desc_off) + slot;
    frame = vp->base + tbrdma_agentseg_slot_off(&vp->plan, slot);
    len = (desc->len <= tbrdma_agentseg_slot_bytes(&vp->plan, slot)) ? desc->len : 0;
    if (TBRDMA_FRAME_OK != tbrdma_wire_peek_conn(frame, len, desc->chan, &conn)) {
        vp->dropped_bad++;
    } else if (0 > (q = vport_find(vp, conn, desc->chan))) {
        vp->dropped_conn++;
    } else {
        switch (tbrdma_vuc_arrive(&vp->qps[q].rq, len, &rcv)) {
        case TBRDMA_VUC_DELIVER:
            memcpy(rcv.addr, frame, len);
            *wc = (tbrdma_vport_wc_t){rcv.wr_id, TBRDMA_VPORT_OK, 1, len, (uint32_t) q};
            n = 1;
            break;
        case TBRDMA_VUC_LEN_ERR:
            *wc = (tbrdma_vport_wc_t){rcv.wr_id, TBRDMA_VPORT_LEN_ERR, 1, 0, (uint32_t) q};
            n = 1;
            break;
        default:
            break; /* no receive posted: dropped, as UC does */
        }
    }
    return (0 == tbrdma_ring_push(&vp->to, slot)) ? n : -EPIPE;
}

/* Takes entries of ring into completions wc[n..max) with take. The new count, or -EPIPE. */
static int vport_drain(tbrdma_vport_t *vp, tbrdma_ring_t *ring,
                       int (*take)(tbrdma_vport_t *, uint32_t, tbrdma_vport_wc_t *),
                       tbrdma_vport_wc_t *wc, int n, int max)
{
    uint32_t slot;
    int rc = 0;

    while (n < max && 0 == (rc = tbrdma_ring_pop(ring, &slot))) {
        rc = take(vp, slot, &wc[n]);
        if (rc < 0) {
            return rc;
        }
        n += rc;
    }
    return (-EPIPE == rc) ? rc : n;
}

int tbrdma_vport_poll(tbrdma_vport_t *vp, tbrdma_vport_wc_t *wc, int max)
{
    int n = vport_drain(vp, &vp->done, vport_sent, wc, 0, max);

    return (n < 0) ? n : vport_drain(vp, &vp->from, vport_arrived, wc, n, max);
}
