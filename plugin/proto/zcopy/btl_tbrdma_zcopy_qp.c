/*
 * The zero-copy queue pair of an endpoint (proto layer, the bottom of zero-copy;
 * btl_tbrdma_zcopy_qp.h): its state, creation and destruction, and the control messages (HELLO,
 * GRANT, DONE: DATA frames of tag TBRDMA_TAG_ZCOPY on the reliable eager channel) that the
 * receiver (btl_tbrdma_zcopy_get.c), the owner (btl_tbrdma_zcopy_send.c) and the epochs
 * (btl_tbrdma_zcopy.c) send.
 */
#include "proto/zcopy/btl_tbrdma_zcopy_qp.h"
#include "base/btl_tbrdma_output.h"
#include "channel/btl_tbrdma_chan.h"

#include <stdlib.h>
#include <string.h>

/* A new queue pair for the current epoch (INIT). 0, or -1 (said at verbosity 1 when say). */
int mca_btl_tbrdma_zc_qp_new(mca_btl_tbrdma_endpoint_t *ep, bool say)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    char err[TBRDMA_MSG_MAX / 4];
    uint32_t qpn;

    if (0
        != tbrdma_verbs_qp_create(ep->dev->vdev, TBRDMA_ZC_GRANTS, TBRDMA_ZC_WINDOW_MAX, &zc->qp,
                                  &qpn, err, sizeof(err))) {
        if (say) {
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                           "zero-copy off towards host %s: %s; large messages are copied",
                           ep->peer_host, err);
        }
        zc->qp = NULL;
        return -1;
    }
    zc->qpn = qpn;
    zc->psn = (ep->psn + zc->epoch * 0x9e3779b1u) & 0xffffffu;
    return 0;
}

void mca_btl_tbrdma_zc_setup(mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_zc_t *zc;

    if (!mca_btl_tbrdma_component.zcopy || NULL == ep->dev->zc || NULL != ep->zc
        || ep->primary != ep) {
        return; /* off, set up already, or a striped cable's endpoint: ob1 never gets there */
    }
    zc = calloc(1, sizeof(*zc));
    if (NULL == zc) {
        return;
    }
    pthread_mutex_init(&zc->ops_lock, NULL);
    zc->index = TBRDMA_ZC_INDEX_NONE;
    zc->epoch = 1;
    tbrdma_zc_pace_init(&zc->pace);
    zc->hello_owed = true; /* with queue pair 0 when we have none, so the peer drops its own */
    ep->zc = zc;
    if (ep->zc_planned) {
        zc->state =
            (0 == mca_btl_tbrdma_zc_qp_new(ep, true)) ? TBRDMA_ZC_QP_WAIT : TBRDMA_ZC_QP_OFF;
    }
}

void mca_btl_tbrdma_zc_qp_destroy(mca_btl_tbrdma_zc_t *zc)
{
    tbrdma_vqp_t *qp = zc->qp;

    zc->qp = NULL; /* first: a release interrupted here is not done twice */
    tbrdma_verbs_qp_destroy(qp);
    zc->qpn = 0;
    zc->grant_head = 0;
    zc->ngrants = 0;
    zc->sq_posted = 0;
}

void mca_btl_tbrdma_zc_release(mca_btl_tbrdma_endpoint_t *ep)
{
    if (NULL == ep->zc) {
        return;
    }
    mca_btl_tbrdma_zc_qp_destroy(ep->zc);
    ep->zc->peer_ok = false;
    if (TBRDMA_ZC_QP_NONE != ep->zc->state) {
        ep->zc->state = TBRDMA_ZC_QP_OFF;
    }
}

void mca_btl_tbrdma_zc_free(mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    if (NULL == zc) {
        return;
    }
    mca_btl_tbrdma_zc_release(ep);
    while (NULL != zc->ops_head) { /* none after finalize's drain; nothing to tell ob1 */
        mca_btl_tbrdma_zc_op_t *op = zc->ops_head;

        zc->ops_head = op->next;
        free(op);
    }
    pthread_mutex_destroy(&zc->ops_lock);
    free(zc);
    ep->zc = NULL;
}

int mca_btl_tbrdma_zc_cqe(int neps)
{
    /* the current queue pairs' work requests and those of the one an epoch change destroyed */
    return mca_btl_tbrdma_component.zcopy ? 2 * neps * (TBRDMA_ZC_GRANTS + TBRDMA_ZC_WINDOW_MAX)
                                          : 0;
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_zc_msg_frag(mca_btl_tbrdma_module_t *module,
                                                  mca_btl_tbrdma_endpoint_t *ep)
{
    return mca_btl_tbrdma_endpoint_frag(module, ep, TBRDMA_ZC_MSG_BYTES, 0);
}

void mca_btl_tbrdma_zc_msg_queue(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_frag_t *frag,
                                 const tbrdma_zc_msg_t *m)
{
    tbrdma_zc_encode(m, frag->buf + TBRDMA_HDR_BYTES);
    frag->tag = TBRDMA_TAG_ZCOPY;
    frag->len = TBRDMA_ZC_MSG_BYTES;
    mca_btl_tbrdma_ep_enqueue(ep, frag); /* the frame's one reference is the transport's */
}

/* Queues a control message to ep; -1 when no frame is free (try again later; token). */
static int zc_send_msg(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                       const tbrdma_zc_msg_t *m)
{
    mca_btl_tbrdma_frag_t *frag = mca_btl_tbrdma_zc_msg_frag(module, ep);

    if (NULL == frag) {
        return -1;
    }
    mca_btl_tbrdma_zc_msg_queue(ep, frag, m);
    return 0;
}

void mca_btl_tbrdma_zc_send_hello(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    tbrdma_zc_msg_t m;

    memset(&m, 0, sizeof(m));
    m.type = TBRDMA_ZC_HELLO;
    m.epoch = zc->epoch;
    m.qpn = (NULL != zc->qp) ? zc->qpn : 0;
    m.psn = (NULL != zc->qp) ? zc->psn : 0;
    if (0 == zc_send_msg(module, ep, &m)) {
        zc->hello_owed = false;
    }
}
