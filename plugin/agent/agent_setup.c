/*
 * The agent's cables: per cable one device (context, protection domain, completion queue), the
 * slab registered once as one memory region, two UC queue pairs (channel 0: 1-frame slots,
 * channel 1: bulk slots) with a random send PSN, and their receives. Receive slots belong to no
 * cable: a slot that comes back is posted again on its cable and channel while that queue pair
 * is below its target, else it waits in its channel's spare pool, from which every queue pair is
 * topped up.
 */
#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

uint8_t agent_rx_chan(const agent_t *a, uint32_t slot)
{
    return (slot >= tbrdma_agentseg_rx_slot(&a->plan, 1, 0)) ? TBRDMA_CHAN_BULK : TBRDMA_CHAN_EAGER;
}

int agent_rx_post(agent_t *a, uint32_t k, uint8_t chan, uint32_t slot)
{
    agent_cable_t *c = &a->cables[k];
    int rc = tbrdma_verbs_post_recv(c->qp[chan].qp, slot,
                                    a->base + tbrdma_agentseg_slot_off(&a->plan, slot),
                                    tbrdma_agentseg_slot_bytes(&a->plan, slot), c->mr.lkey);

    if (0 != rc) {
        return rc;
    }
    a->slots[slot] = (agent_slot_t){
        .holder = -1, .cable = (uint16_t) k, .chan = chan, .where = AGENT_SLOT_POSTED};
    c->qp[chan].posted++;
    return 0;
}

void agent_rx_home(agent_t *a, uint32_t k, uint8_t chan, uint32_t slot)
{
    agent_qp_t *q = &a->cables[k].qp[chan];

    if (q->posted < q->target && 0 == agent_rx_post(a, k, chan, slot)) {
        return;
    }
    a->slots[slot] = (agent_slot_t){.holder = -1, .where = AGENT_SLOT_IDLE};
    a->spare[chan][a->nspare[chan]++] = slot;
}

/* Tops every queue pair up to its target from the spare pools. 0, or the first post's errno. */
static int rx_topup(agent_t *a)
{
    for (uint32_t k = 0; k < a->plan.g.ncables; k++) {
        for (uint8_t ch = 0; ch < TBRDMA_NCHAN; ch++) {
            agent_qp_t *q = &a->cables[k].qp[ch];

            while (q->posted < q->target && a->nspare[ch] > 0) {
                uint32_t slot = a->spare[ch][--a->nspare[ch]];
                int rc = agent_rx_post(a, k, ch, slot);

                if (0 != rc) {
                    a->spare[ch][a->nspare[ch]++] = slot;
                    return rc;
                }
            }
        }
    }
    return 0;
}

void agent_rx_topup(agent_t *a)
{
    int rc;

    if (0 == a->nspare[0] && 0 == a->nspare[1]) {
        return;
    }
    rc = rx_topup(a);
    if (0 != rc) {
        a->c.rx_errors++; /* retried next pass; posting fails only on a queue pair gone bad */
    }
}

/* Every receive slot into the spare pools, then as many posted as the targets ask. */
static int rx_start(agent_t *a, char *err, size_t errlen)
{
    uint32_t n[TBRDMA_NCHAN] = {a->plan.g.rx_eager, a->plan.g.rx_bulk};
    int rc;

    for (uint8_t ch = 0; ch < TBRDMA_NCHAN; ch++) {
        for (uint32_t i = n[ch]; i > 0; i--) { /* lowest slots on top: posted first */
            a->spare[ch][a->nspare[ch]++] = tbrdma_agentseg_rx_slot(&a->plan, ch, i - 1);
        }
    }
    rc = rx_topup(a);
    if (0 != rc) {
        snprintf(err, errlen, "posting the first receives failed: %s", strerror(rc));
        return -1;
    }
    return 0;
}

/* The shared device name, bounded (the creator wrote it; it may lack its NUL). */
static void cable_device(const agent_t *a, uint32_t k, char *name, size_t len)
{
    const char *dev = a->hdr->cables[k].device;

    snprintf(name, len, "%.*s", (int) sizeof(a->hdr->cables[k].device), dev);
}

/* Queue pair ch of cable k, to INIT. 0 or -1 with err. */
static int cable_qp(agent_t *a, uint32_t k, uint8_t ch, char *err, size_t errlen)
{
    agent_qp_t *q = &a->cables[k].qp[ch];
    uint32_t max_recv = (q->target > 0) ? q->target : 1;

    return (0
            == tbrdma_verbs_qp_create(a->cables[k].dev, AGENT_WR_MAX, max_recv, &q->qp, &q->qpn,
                                      err, errlen))
               ? 0
               : -1;
}

/* Opens cable k: device, memory region, both queue pairs, send PSN. 0 or -1 with err (then
 * nothing of cable k is left open). */
static int cable_open(agent_t *a, uint32_t k, char *err, size_t errlen)
{
    agent_cable_t *c = &a->cables[k];
    uint32_t eager = a->plan.g.rx_eager / a->plan.g.ncables;
    uint32_t bulk = a->plan.g.rx_bulk / a->plan.g.ncables;
    char name[64];
    int cqe;

    c->qp[0].target = (eager < AGENT_RX_EAGER_MAX) ? eager : AGENT_RX_EAGER_MAX;
    c->qp[1].target = (bulk < AGENT_RX_BULK_MAX) ? bulk : AGENT_RX_BULK_MAX;
    /* every completion the queue pairs can owe at once, so the queue never overflows */
    cqe = (int) (2 * AGENT_WR_MAX + c->qp[0].target + c->qp[1].target);
    cable_device(a, k, name, sizeof(name));
    if (0
        != tbrdma_verbs_dev_open(name, (int) a->hdr->cables[k].port_num, cqe, &c->dev, err,
                                 errlen)) {
        return -1;
    }
    if (0
        != tbrdma_verbs_mr_reg(c->dev, a->base + a->plan.slab_off, a->plan.total - a->plan.slab_off,
                               &c->mr, err, errlen)) {
        goto err_close_dev;
    }
    if (0 != cable_qp(a, k, TBRDMA_CHAN_EAGER, err, errlen)) {
        goto err_dereg;
    }
    if (0 != cable_qp(a, k, TBRDMA_CHAN_BULK, err, errlen)) {
        goto err_destroy_eager;
    }
    if (0 != getentropy(&c->psn, sizeof(c->psn))) {
        snprintf(err, errlen, "device %s: getentropy for the send PSN failed: %s", name,
                 strerror(errno));
        goto err_destroy_bulk;
    }
    c->psn &= 0xffffffu; /* a PSN has 24 bits */
    return 0;

err_destroy_bulk:
    tbrdma_verbs_qp_destroy(c->qp[1].qp);
err_destroy_eager:
    tbrdma_verbs_qp_destroy(c->qp[0].qp);
err_dereg:
    tbrdma_verbs_mr_dereg(&c->mr);
err_close_dev:
    tbrdma_verbs_dev_close(c->dev);
    memset(c, 0, sizeof(*c));
    return -1;
}

int agent_cables_open(agent_t *a, char *err, size_t errlen)
{
    uint32_t k;

    for (k = 0; k < a->plan.g.ncables; k++) {
        if (0 != cable_open(a, k, err, errlen)) {
            goto err_close_cables;
        }
    }
    if (0 != rx_start(a, err, errlen)) {
        goto err_close_cables;
    }
    for (k = 0; k < a->plan.g.ncables; k++) {
        tbrdma_agentseg_cable_t *sc = &a->hdr->cables[k];

        sc->qpn[0] = a->cables[k].qp[0].qpn;
        sc->qpn[1] = a->cables[k].qp[1].qpn;
        sc->psn = a->cables[k].psn;
    }
    return 0;

err_close_cables:
    agent_cables_close(a);
    return -1;
}

void agent_cables_close(agent_t *a)
{
    for (uint32_t k = 0; k < TBRDMA_MAX_PORTS; k++) {
        agent_cable_t *c = &a->cables[k];

        if (NULL == c->dev) {
            continue;
        }
        tbrdma_verbs_qp_destroy(c->qp[1].qp);
        tbrdma_verbs_qp_destroy(c->qp[0].qp);
        tbrdma_verbs_mr_dereg(&c->mr);
        tbrdma_verbs_dev_close(c->dev);
        memset(c, 0, sizeof(*c));
    }
}

int agent_cable_connect(agent_t *a, uint32_t k, char *err, size_t errlen)
{
    const tbrdma_agentseg_cable_t *sc = &a->hdr->cables[k];
    agent_cable_t *c = &a->cables[k];

    for (uint8_t ch = 0; ch < TBRDMA_NCHAN; ch++) {
        tbrdma_vpeer_t peer = {.qpn = sc->peer_qpn[ch], .psn = sc->peer_psn, .mtu = sc->mtu};

        memcpy(peer.gid, sc->peer_gid, sizeof(peer.gid));
        if (0
            != tbrdma_verbs_qp_connect(c->qp[ch].qp, sc->sgid_index, c->psn, &peer, err, errlen)) {
            return -1;
        }
    }
    c->connected = 1;
    return 0;
}
