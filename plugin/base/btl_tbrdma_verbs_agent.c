/*
 * The verbs backend in agent mode (btl_tbrdma_verbs_agent.h). The vport gives the completions of
 * every cable at once; each goes to its cable's queue here, and a device's poll takes its own.
 */
#include "base/btl_tbrdma_verbs_agent.h"
#include "base/btl_tbrdma_agentlink.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VAGENT_BATCH 32

struct tbrdma_adev {
    int cable;
    uint32_t qpn[2]; /* the agent's queue pair per channel: what completions name */
    tbrdma_awc_t *q; /* completions of this cable not yet polled: a ring */
    uint32_t cap, head, count;
    uint32_t peer_qpn[2], peer_psn; /* the peer agent, as the channels' connects gave it */
    unsigned peer_known;            /* bit c: channel c's peer queue pair recorded */
};

struct tbrdma_aqp {
    tbrdma_adev_t *dev;
    uint32_t max_recv;
    int vqp; /* the vport's queue pair, -1 until routed */
    uint8_t chan;
};

static tbrdma_adev_t *vagent_devs[TBRDMA_MAX_PORTS];
static char vagent_err[256];

int tbrdma_vagent_dev_open(const char *name, tbrdma_adev_t **dev_p, char *err, size_t errlen)
{
    int k = tbrdma_agentlink_cable(name);
    tbrdma_adev_t *dev;
    uint32_t psn;

    if (0 > k) {
        snprintf(err, errlen, "device %s: not one of the tbrdma agent's cables", name);
        return -ENODEV;
    }
    dev = calloc(1, sizeof(*dev));
    if (NULL == dev) {
        snprintf(err, errlen, "device %s: out of memory", name);
        return -ENOMEM;
    }
    dev->cable = k;
    tbrdma_agentlink_cable_qps(k, dev->qpn, &psn);
    vagent_devs[k] = dev;
    *dev_p = dev;
    return 0;
}

void tbrdma_vagent_dev_close(tbrdma_adev_t *dev)
{
    if (NULL == dev) {
        return;
    }
    if (vagent_devs[dev->cable] == dev) {
        vagent_devs[dev->cable] = NULL;
    }
    free(dev->q);
    free(dev);
}

int tbrdma_vagent_qp_create(tbrdma_adev_t *dev, uint32_t max_recv, tbrdma_aqp_t **qp_p)
{
    tbrdma_aqp_t *qp = calloc(1, sizeof(*qp));

    if (NULL == qp) {
        return -ENOMEM;
    }
    qp->dev = dev;
    qp->max_recv = max_recv;
    qp->vqp = -1;
    *qp_p = qp;
    return 0;
}

int tbrdma_vagent_qp_route(tbrdma_aqp_t *qp, uint32_t conn, uint8_t chan, uint32_t *qpn_p,
                           uint32_t *psn_p)
{
    tbrdma_vport_t *vp = tbrdma_agentlink_vport();
    uint32_t qpn[2], psn;
    int q;

    if (NULL == vp || 0 <= qp->vqp) {
        return -EINVAL;
    }
    q = tbrdma_vport_qp_create(vp, conn, chan, (uint16_t) qp->dev->cable, qp->max_recv);
    if (q < 0) {
        return q;
    }
    qp->vqp = q;
    qp->chan = chan;
    tbrdma_agentlink_cable_qps(qp->dev->cable, qpn, &psn);
    *qpn_p = qpn[chan];
    *psn_p = psn;
    return 0;
}

void tbrdma_vagent_qp_destroy(tbrdma_aqp_t *qp)
{
    tbrdma_vport_t *vp = tbrdma_agentlink_vport();

    if (NULL == qp) {
        return;
    }
    if (NULL != vp && 0 <= qp->vqp) {
        (void) tbrdma_vport_qp_destroy(vp, (uint32_t) qp->vqp);
    }
    free(qp);
}

int tbrdma_vagent_qp_connect(tbrdma_aqp_t *qp, int sgid_index, uint32_t peer_qpn, uint32_t peer_psn,
                             const uint8_t gid[16], int mtu, char *err, size_t errlen)
{
    tbrdma_adev_t *dev = qp->dev;
    tbrdma_agentlink_peer_t peer;

    dev->peer_qpn[qp->chan] = peer_qpn;
    dev->peer_psn = peer_psn;
    dev->peer_known |= 1u << qp->chan;
    if (3u != dev->peer_known) {
        return 0; /* the other channel's connect follows */
    }
    dev->peer_known = 0;
    memset(&peer, 0, sizeof(peer));
    peer.qpn[0] = dev->peer_qpn[0];
    peer.qpn[1] = dev->peer_qpn[1];
    peer.psn = dev->peer_psn;
    memcpy(peer.gid, gid, sizeof(peer.gid));
    peer.sgid_index = sgid_index;
    peer.mtu = mtu;
    return tbrdma_agentlink_connect(dev->cable, &peer, err, errlen);
}

/* Appends a completion to its cable's queue (grows it). 0 or -ENOMEM. */
static int vagent_queue(tbrdma_adev_t *dev, const tbrdma_awc_t *wc)
{
    if (dev->count == dev->cap) {
        uint32_t cap = dev->cap ? 2 * dev->cap : 64;
        tbrdma_awc_t *q = malloc(cap * sizeof(*q));

        if (NULL == q) {
            return -ENOMEM;
        }
        for (uint32_t i = 0; i < dev->count; i++) {
            q[i] = dev->q[(dev->head + i) % dev->cap];
        }
        free(dev->q);
        dev->q = q;
        dev->cap = cap;
        dev->head = 0;
    }
    dev->q[(dev->head + dev->count++) % dev->cap] = *wc;
    return 0;
}

/* Takes what the vport has into the cables' queues. How many, or a negative errno. */
static int vagent_reap(void)
{
    tbrdma_vport_t *vp = tbrdma_agentlink_vport();
    tbrdma_vport_wc_t wc[VAGENT_BATCH];
    int n;

    if (NULL == vp) {
        return -EPIPE;
    }
    n = tbrdma_vport_poll(vp, wc, VAGENT_BATCH);
    for (int i = 0; i < n; i++) {
        const tbrdma_vport_qp_t *q = &vp->qps[wc[i].vqp];
        tbrdma_adev_t *dev = vagent_devs[q->cable];
        tbrdma_awc_t a;

        if (NULL == dev) {
            continue; /* its device is closed: nobody waits for it */
        }
        a = (tbrdma_awc_t){wc[i].wr_id, wc[i].status, wc[i].is_recv, wc[i].byte_len,
                           dev->qpn[q->chan]};
        if (0 != vagent_queue(dev, &a)) {
            return -ENOMEM;
        }
    }
    return n;
}

/* Whether the agent still runs: 0, or -EPIPE with its reason kept for tbrdma_vagent_error. */
static int vagent_alive(void)
{
    return (0
            == tbrdma_agentlink_check(tbrdma_agentlink_stale_ms(), vagent_err, sizeof(vagent_err)))
               ? 0
               : -EPIPE;
}

int tbrdma_vagent_post_send(tbrdma_aqp_t *qp, uint64_t wr_id, const void *addr, uint32_t len)
{
    tbrdma_vport_t *vp = tbrdma_agentlink_vport();
    int rc;

    if (NULL == vp || 0 > qp->vqp) {
        return EINVAL;
    }
    /* a send slot frees when the agent's real SEND completes: wait for one, keeping every
     * completion that arrives meanwhile for its cable's poll */
    while (-EAGAIN == (rc = tbrdma_vport_post_send(vp, (uint32_t) qp->vqp, wr_id, addr, len))) {
        int n = vagent_reap();

        if (n < 0 || 0 != vagent_alive()) {
            return EPIPE;
        }
        if (0 == n) {
            sched_yield();
        }
    }
    return -rc;
}

int tbrdma_vagent_post_recv(tbrdma_aqp_t *qp, uint64_t wr_id, void *addr, uint32_t len)
{
    tbrdma_vport_t *vp = tbrdma_agentlink_vport();

    if (NULL == vp || 0 > qp->vqp) {
        return EINVAL;
    }
    return -tbrdma_vport_post_recv(vp, (uint32_t) qp->vqp, wr_id, addr, len);
}

int tbrdma_vagent_poll(tbrdma_adev_t *dev, tbrdma_awc_t *wc, int max)
{
    int n = 0;

    if (0 == dev->count) {
        int rc = vagent_reap();

        if (rc < 0 || 0 != vagent_alive()) {
            if (-EPIPE != rc && rc < 0) {
                snprintf(vagent_err, sizeof(vagent_err), "the tbrdma agent's rings: %s",
                         strerror(-rc));
            }
            return -EPIPE;
        }
    }
    while (n < max && 0 < dev->count) {
        wc[n++] = dev->q[dev->head];
        dev->head = (dev->head + 1) % dev->cap;
        dev->count--;
    }
    return n;
}

int tbrdma_vagent_port_active(const tbrdma_adev_t *dev)
{
    return tbrdma_agentlink_port_active(dev->cable);
}

const char *tbrdma_vagent_error(void)
{
    return vagent_err;
}
