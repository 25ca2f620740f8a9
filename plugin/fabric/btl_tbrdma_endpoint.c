/*
 * tbrdma endpoints (see btl_tbrdma_endpoint.h): creation and lookup, then the data path's
 * per-peer setup: two UC queue pairs on the cable's device (1-frame channel, bulk channel), every
 * receive posted before the peer can send, the connection entry the peer reads through PMIx,
 * and the RTR/RTS connection to the peer's entry.
 */
#include "fabric/btl_tbrdma_endpoint.h"
#include "base/btl_tbrdma_output.h"
#include "core/tbrdma_mutate.h"
#include "fabric/btl_tbrdma_device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void endpoint_construct(mca_btl_tbrdma_endpoint_t *ep)
{
    memset((char *) ep + sizeof(ep->super), 0, sizeof(*ep) - sizeof(ep->super));
    ep->local_port = -1;
    ep->peer_port = -1;
    ep->state = TBRDMA_EP_NEW;
    ep->primary = ep;
    ep->stripes[0] = ep;
    ep->nstripes = 1;
}

static void endpoint_destruct(mca_btl_tbrdma_endpoint_t *ep)
{
    free(ep->train);
}

OBJ_CLASS_INSTANCE(mca_btl_tbrdma_endpoint_t, opal_list_item_t, endpoint_construct,
                   endpoint_destruct);

mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_create(opal_proc_t *proc, const char *peer_host,
                                                          int local_port, int peer_port,
                                                          const tbrdma_modex_port_t *peer)
{
    mca_btl_tbrdma_endpoint_t *ep = OBJ_NEW(mca_btl_tbrdma_endpoint_t);

    if (NULL == ep) {
        return NULL;
    }
    ep->proc = proc;
    snprintf(ep->peer_host, sizeof(ep->peer_host), "%s", peer_host);
    ep->local_port = local_port;
    ep->peer_port = peer_port;
    ep->peer = *peer;
    return ep;
}

mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_find(mca_btl_tbrdma_module_t *module,
                                                        const opal_proc_t *proc)
{
    mca_btl_tbrdma_endpoint_t *ep;

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        if (ep->primary == ep && 0 == opal_compare_proc(ep->proc->proc_name, proc->proc_name)) {
            return ep;
        }
    }
    return NULL;
}

/* A 32-bit value no other connection of this job is likely to use (never 0). */
static uint32_t endpoint_random32(const mca_btl_tbrdma_endpoint_t *ep)
{
    static uint64_t counter;
    struct timespec ts;
    uint64_t x;

    clock_gettime(CLOCK_REALTIME, &ts);
    x = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 30) ^ ((uint64_t) getpid() << 40)
        ^ (uintptr_t) ep ^ (++counter * 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (0 != (uint32_t) x) ? (uint32_t) x : 1;
}

/* Posts every receive of channel c (each frame's wr_id is the frame itself). */
static int endpoint_post_all(mca_btl_tbrdma_endpoint_t *ep, int c, char *err, size_t errlen)
{
    mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

    for (int i = 0; i < ch->depth; i++) {
        mca_btl_tbrdma_frag_t *f = &ch->recv[i];
        int rc;

        f->ep = ep;
        rc = tbrdma_verbs_post_recv(ch->qp, (uintptr_t) f, f->buf, ch->frames * TBRDMA_FRAME_BYTES,
                                    ep->dev->mr.lkey);
        if (0 != rc) {
            snprintf(err, errlen, "device %s: posting receive %d of %d failed: %s", ep->peer.device,
                     i + 1, ch->depth, strerror(rc));
            return -rc;
        }
        f->flags = TBRDMA_FF_POSTED;
    }
    return 0;
}

/* Queue pair, receive frames and posted receives of channel c. */
static int endpoint_setup_chan(mca_btl_tbrdma_endpoint_t *ep, int c, char *err, size_t errlen)
{
    const mca_btl_tbrdma_component_t *comp = &mca_btl_tbrdma_component;
    mca_btl_tbrdma_chan_t *ch = &ep->chan[c];
    int rc;

    ch->frames = (TBRDMA_CHAN_EAGER == c) ? 1 : (uint32_t) comp->bulk_frames;
    ch->depth = (TBRDMA_CHAN_EAGER == c) ? comp->eager_depth : comp->bulk_depth;
    ch->recv = mca_btl_tbrdma_device_take_recv(ep->dev, ch->depth, (uint8_t) c);
    if (NULL == ch->recv) {
        snprintf(err, errlen, "internal error: no receive frames left on the device");
        return -ENOMEM;
    }
    rc = tbrdma_verbs_qp_create(ep->dev->vdev, TBRDMA_WR_MAX, (uint32_t) ch->depth, &ch->qp,
                                &ch->qpn, err, errlen);
    if (0 != rc) {
        return rc;
    }
    rc = tbrdma_verbs_qp_route(ch->qp, ep->conn_local, (uint8_t) c, &ch->qpn, &ep->psn);
    if (0 != rc) {
        snprintf(err, errlen, "device %s: cannot route channel %d's queue pair: %s",
                 ep->peer.device, c, strerror(-rc));
        return rc;
    }
    return endpoint_post_all(ep, c, err, errlen);
}

int mca_btl_tbrdma_endpoint_setup(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_device_t *dev,
                                  tbrdma_conn_entry_t *entry, char *err, size_t errlen)
{
    int rc;

    ep->dev = dev;
    ep->conn_local = tbrdma_verbs_conn_id(endpoint_random32(ep));
    ep->psn = endpoint_random32(ep) & 0xffffff; /* agent mode: the agent's (qp_route) */
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        rc = endpoint_setup_chan(ep, c, err, errlen);
        if (0 != rc) {
            mca_btl_tbrdma_endpoint_release(ep);
            return rc;
        }
    }
    entry->conn_id = ep->conn_local;
    entry->psn = ep->psn;
    entry->bulk_frames = (uint16_t) ep->chan[TBRDMA_CHAN_BULK].frames;
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        entry->qpn[c] = ep->chan[c].qpn;
        entry->depth[c] = (uint16_t) ep->chan[c].depth;
    }
    ep->state = TBRDMA_EP_READY;
    return 0;
}

/* The peer's entry must describe channels this side can talk to. */
static int endpoint_check_peer(const mca_btl_tbrdma_endpoint_t *ep, const tbrdma_conn_entry_t *peer,
                               char *err, size_t errlen)
{
    if (peer->bulk_frames != ep->chan[TBRDMA_CHAN_BULK].frames
        || TBRDMA_CTRL_RESERVE + 1 > peer->depth[0] || 1 > peer->depth[1]
        || TBRDMA_WR_MAX < peer->depth[0] || TBRDMA_WR_MAX < peer->depth[1]) {
        snprintf(err, errlen,
                 "the peer uses %u-frame bulk messages and receive depths %u/%u, this process "
                 "%u-frame bulk messages: every process of a job needs the same "
                 "btl_tbrdma_bulk_frames, and depths of %d..%d",
                 peer->bulk_frames, peer->depth[0], peer->depth[1],
                 ep->chan[TBRDMA_CHAN_BULK].frames, TBRDMA_CTRL_RESERVE + 1, TBRDMA_WR_MAX);
        return -EPROTO;
    }
    return 0;
}

int mca_btl_tbrdma_endpoint_qp_connect(const mca_btl_tbrdma_module_t *module,
                                       const mca_btl_tbrdma_endpoint_t *ep, tbrdma_vqp_t *qp,
                                       uint32_t peer_qpn, uint32_t peer_psn, uint32_t psn,
                                       char *err, size_t errlen)
{
    const tbrdma_modex_port_t *local = &module->local.ports[ep->local_port];
    tbrdma_vpeer_t vp;

    memset(&vp, 0, sizeof(vp));
    memcpy(vp.gid, ep->peer.gid.raw, sizeof(vp.gid));
    vp.qpn = peer_qpn;
    vp.psn = peer_psn;
    vp.mtu = (local->active_mtu < ep->peer.active_mtu) ? local->active_mtu : ep->peer.active_mtu;
    return tbrdma_verbs_qp_connect(qp, local->gid_index, psn, &vp, err, errlen);
}

int mca_btl_tbrdma_endpoint_connect(const mca_btl_tbrdma_module_t *module,
                                    mca_btl_tbrdma_endpoint_t *ep, const tbrdma_conn_entry_t *peer,
                                    uint8_t peer_flags, uint64_t now, char *err, size_t errlen)
{
    int rc = endpoint_check_peer(ep, peer, err, errlen);

    if (0 != rc) {
        return rc;
    }
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        rc = mca_btl_tbrdma_endpoint_qp_connect(module, ep, ep->chan[c].qp, peer->qpn[c], peer->psn,
                                                ep->psn, err, errlen);
        if (0 != rc) {
            return rc;
        }
        tbrdma_rel_tx_init(&ep->chan[c].tx, peer->depth[c],
                           TBRDMA_CHAN_EAGER == c ? TBRDMA_CTRL_RESERVE : 0,
                           module->timing.rto_min_ns);
        tbrdma_rel_rx_init(&ep->chan[c].rx, (uint16_t) ep->chan[c].depth,
                           TBRDMA_CHAN_EAGER == c ? TBRDMA_CTRL_RESERVE : 0);
    }
    ep->conn_remote = peer->conn_id;
    ep->csum = mca_btl_tbrdma_component.checksum || 0 != (peer_flags & TBRDMA_CONN_FLAG_CSUM);
    tbrdma_live_start(&ep->live, now);
    ep->state = TBRDMA_EP_CONNECTED;
    return 0;
}

void mca_btl_tbrdma_endpoint_release(mca_btl_tbrdma_endpoint_t *ep)
{
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        tbrdma_vqp_t *qp = ep->chan[c].qp;

        ep->chan[c].qp = NULL; /* first: a release interrupted here is not done twice */
        tbrdma_verbs_qp_destroy(qp);
    }
}

/* The pool of a payload of size bytes, or -1 when ep takes no send frame of that size. */
static int endpoint_pool(const mca_btl_tbrdma_endpoint_t *ep, size_t size)
{
    if (NULL == ep || TBRDMA_EP_CONNECTED != ep->state || size > tbrdma_bulk_payload()) {
        return -1;
    }
    return (size <= tbrdma_eager_payload()) ? TBRDMA_POOL_EAGER : TBRDMA_POOL_BULK;
}

/* A frame just taken, made the descriptor of a send to ep of size bytes. */
static mca_btl_tbrdma_frag_t *endpoint_frag_init(mca_btl_tbrdma_frag_t *frag,
                                                 mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                 uint32_t flags)
{
    frag->ep = ep;
    frag->base.des_flags = flags;
    frag->segment.seg_addr.pval = frag->buf + TBRDMA_HDR_BYTES;
    frag->segment.seg_len = size;
    frag->base.des_segments = &frag->segment;
    frag->base.des_segment_count = 1;
    return frag;
}

/* A send frame for ep of size bytes from its pool; when the pool is empty and lend is true, one
 * lent from the heap. */
static mca_btl_tbrdma_frag_t *endpoint_frag_take(mca_btl_tbrdma_module_t *module,
                                                 mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                 uint32_t flags, bool lend)
{
    int pool = endpoint_pool(ep, size);
    mca_btl_tbrdma_frag_t *frag;

    if (0 > pool) {
        return NULL;
    }
    frag = mca_btl_tbrdma_frag_get(&ep->dev->pools, pool);
    if (NULL == frag) {
        module->stats.no_frame++;
        if (!lend || TBRDMA_MUTANT(HEAP_FRAMES_OFF)
            || NULL == (frag = mca_btl_tbrdma_frag_lend(&ep->dev->pools, pool))) {
            return NULL; /* ob1 retries from the callbacks of the frames in flight */
        }
        module->stats.heap_lent++;
    }
    return endpoint_frag_init(frag, ep, size, flags);
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_endpoint_frag(mca_btl_tbrdma_module_t *module,
                                                    mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                    uint32_t flags)
{
    return endpoint_frag_take(module, ep, size, flags, false);
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_endpoint_frag_any(mca_btl_tbrdma_module_t *module,
                                                        mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                        uint32_t flags)
{
    return endpoint_frag_take(module, ep, size, flags, true);
}

void mca_btl_tbrdma_endpoint_describe(const mca_btl_tbrdma_module_t *module,
                                      const mca_btl_tbrdma_endpoint_t *ep, char *buf, size_t len)
{
    const tbrdma_port_info_t *lp = &module->ports[ep->local_port];
    char which[32] = "";

    if (0 < ep->stripe || 1 < ep->primary->nstripes) {
        snprintf(which, sizeof(which), ", striped cable %d", ep->stripe + 1);
    }
    snprintf(buf, len,
             "peer %s on host %s, over the cable %s %s (interface %s) <-> %s %s (qp 0x%x/0x%x%s)",
             OPAL_NAME_PRINT(ep->proc->proc_name), ep->peer_host, module->local.host, lp->device,
             '\0' != lp->ifname[0] ? lp->ifname : "?", ep->peer_host, ep->peer.device,
             ep->chan[0].qpn, ep->chan[1].qpn, which);
}

void mca_btl_tbrdma_ep_fail(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            const char *reason)
{
    if (TBRDMA_EP_CONNECTED != ep->state) {
        return;
    }
    ep->state = TBRDMA_EP_FAILED;
    snprintf(ep->fail_reason, sizeof(ep->fail_reason), "%s", reason);
    module->failure_pending = true;
}
