/*
 * ob1's entry points of the data path (proto layer): alloc, free and prepare_src (descriptors
 * are send frames, from the cable striping chooses, or lent from the heap when its pool is empty:
 * fabric/btl_tbrdma_frag.h), send and sendi (sendi takes pool frames only: ob1 falls back to
 * alloc), queued on their channel (btl_tbrdma_chan.c) at once when the token is free, else handed
 * to its holder, and trains.
 * Hot path: mca_btl_tbrdma_sendi.
 */
#include "proto/btl_tbrdma_send.h"
#include "base/btl_tbrdma_token.h"
#include "channel/btl_tbrdma_chan.h"
#include "core/tbrdma_mutate.h"
#include "proto/btl_tbrdma_stripe.h"

#include "opal/datatype/opal_convertor.h"

#include <string.h>

mca_btl_base_descriptor_t *mca_btl_tbrdma_alloc(struct mca_btl_base_module_t *btl,
                                                struct mca_btl_base_endpoint_t *endpoint,
                                                uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_tbrdma_frag_t *frag =
        mca_btl_tbrdma_endpoint_frag_any((mca_btl_tbrdma_module_t *) btl, endpoint, size, flags);

    (void) order;
    return (NULL != frag) ? &frag->base : NULL;
}

int mca_btl_tbrdma_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    mca_btl_tbrdma_frag_put((mca_btl_tbrdma_module_t *) btl, (mca_btl_tbrdma_frag_t *) des);
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_tbrdma_prepare_src(struct mca_btl_base_module_t *btl,
                                                      struct mca_btl_base_endpoint_t *endpoint,
                                                      struct opal_convertor_t *convertor,
                                                      uint8_t order, size_t reserve, size_t *size,
                                                      uint32_t flags)
{
    size_t max = tbrdma_bulk_payload(), msg_bytes = 0;
    mca_btl_tbrdma_frag_t *frag;
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data;

    (void) order;
    if (reserve > max) {
        return NULL;
    }
    max_data = (reserve + *size > max) ? max - reserve : *size;
    opal_convertor_get_packed_size(convertor, &msg_bytes); /* the whole message: may it stripe? */
    frag = mca_btl_tbrdma_stripe_frag((mca_btl_tbrdma_module_t *) btl, endpoint, reserve + max_data,
                                      msg_bytes, flags);
    if (NULL == frag) {
        return NULL;
    }
    iov.iov_base = frag->buf + TBRDMA_HDR_BYTES + reserve;
    iov.iov_len = max_data;
    if (0 > opal_convertor_pack(convertor, &iov, &iov_count, &max_data)) {
        mca_btl_tbrdma_frag_put((mca_btl_tbrdma_module_t *) btl, frag);
        return NULL;
    }
    *size = max_data;
    frag->segment.seg_len = reserve + max_data;
    return &frag->base;
}

/*
 * Trains. A bulk message of up to btl_tbrdma_train_frames frames of payload goes as that many
 * 1-frame messages (pieces) on the 1-frame channel: a bulk message crosses the cable as a whole
 * one (Apple's frame rule), a train only as the frames it fills. Each piece is an ordinary data
 * frame (sequenced, acknowledged, retransmitted); every piece but the last says MORE, and the
 * receiver hands the pieces to ob1 as one message once the last came (in order: the channel
 * delivers in order and nothing else is queued between them). The message's own frame is never
 * sent: the last piece carries it, and ob1 hears of the message's completion when that piece
 * finished (acknowledged cumulatively, so every piece before it too).
 */

/* Takes n 1-frame send frames of dev into pieces[]; false (and none taken) when short of them. */
static bool send_train_take(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev,
                            mca_btl_tbrdma_frag_t **pieces, int n)
{
    for (int i = 0; i < n; i++) {
        pieces[i] = mca_btl_tbrdma_frag_get(&dev->pools, TBRDMA_POOL_EAGER);
        if (NULL == pieces[i]) {
            while (i-- > 0) {
                mca_btl_tbrdma_frag_put(module, pieces[i]);
            }
            return false;
        }
    }
    return true;
}

/* Queues msg (a bulk frame) as a train on ep's 1-frame channel; false: send it whole. */
static bool send_train(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                       mca_btl_tbrdma_frag_t *msg)
{
    uint32_t piece = tbrdma_eager_payload(), off = 0;
    mca_btl_tbrdma_frag_t *pieces[256];
    int n;

    /* the liveness thread (draining submitted sends) never touches the pools */
    if (TBRDMA_CHAN_BULK != msg->chan || msg->len <= piece || msg->len > tbrdma_train_payload()
        || mca_btl_tbrdma_on_liveness_thread()) {
        return false;
    }
    n = (int) ((msg->len + piece - 1) / piece);
    if (!send_train_take(module, ep->dev, pieces, n)) {
        return false;
    }
    for (int i = 0; i < n; i++, off += piece) {
        mca_btl_tbrdma_frag_t *p = pieces[i]; /* its one reference is the transport's */

        p->ep = ep;
        p->tag = msg->tag;
        p->len = (msg->len - off < piece) ? msg->len - off : piece;
        memcpy(p->buf + TBRDMA_HDR_BYTES, msg->buf + TBRDMA_HDR_BYTES + off, p->len);
        p->flags = (i + 1 < n && !(TBRDMA_MUTANT(TRAIN_SPLIT) && i + 2 == n))
                       ? TBRDMA_FF_MORE
                       : (msg->flags & TBRDMA_FF_CB);
        p->train = (i + 1 < n) ? NULL : msg;
        mca_btl_tbrdma_ep_enqueue(ep, p);
    }
    module->stats.tx_trains++;
    return true;
}

/* Queues and transmits a data frame (token). */
static void send_start(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                       mca_btl_tbrdma_frag_t *frag)
{
    if (!send_train(module, ep, frag)) {
        mca_btl_tbrdma_ep_enqueue(ep, frag);
    }
    /* untimed: the last pass's clock may be as old as the application's last computation */
    mca_btl_tbrdma_ep_push(module, ep, TBRDMA_REL_UNTIMED);
}

/* Another thread holds the token: the holder (or the next progress) queues the frame. */
static void send_submit(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag)
{
    pthread_mutex_lock(&module->submit_lock);
    frag->next = NULL;
    if (NULL == module->submit_tail) {
        module->submit_head = frag;
    } else {
        module->submit_tail->next = frag;
    }
    module->submit_tail = frag;
    atomic_fetch_add(&module->submit_count, 1);
    pthread_mutex_unlock(&module->submit_lock);
}

void mca_btl_tbrdma_submit_drain(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_frag_t *frag;

    if (0 == atomic_load_explicit(&module->submit_count, memory_order_relaxed)) {
        return;
    }
    pthread_mutex_lock(&module->submit_lock);
    frag = module->submit_head;
    module->submit_head = module->submit_tail = NULL;
    atomic_store(&module->submit_count, 0);
    pthread_mutex_unlock(&module->submit_lock);
    while (NULL != frag) {
        mca_btl_tbrdma_frag_t *next = frag->next;

        send_start(module, frag->ep, frag);
        frag = next;
    }
}

int mca_btl_tbrdma_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;
    mca_btl_tbrdma_frag_t *frag = (mca_btl_tbrdma_frag_t *) descriptor;

    /* frag->ep: endpoint, or the striped cable its frame was taken for (prepare_src) */
    if (TBRDMA_EP_CONNECTED != endpoint->state || TBRDMA_EP_CONNECTED != frag->ep->state
        || !module->verbs_live) {
        return OPAL_ERR_UNREACH;
    }
    frag->tag = tag;
    frag->len = (uint32_t) frag->segment.seg_len;
    /* completion is always reported from progress, never from here (as btl/vader; ob1 #3845) */
    frag->base.des_flags |= MCA_BTL_DES_SEND_ALWAYS_CALLBACK;
    frag->flags |= (NULL != frag->base.des_cbfunc) ? TBRDMA_FF_CB : 0;
    atomic_fetch_add(&frag->refs, 1); /* the transport's reference */
    if (!mca_btl_tbrdma_token_try(module)) {
        send_submit(module, frag);
        return OPAL_SUCCESS;
    }
    mca_btl_tbrdma_submit_drain(module);
    send_start(module, frag->ep, frag);
    mca_btl_tbrdma_token_release(module);
    return OPAL_SUCCESS;
}

/* Copies header and payload into frag; 0, or -1 when the convertor fails. */
static int sendi_fill(mca_btl_tbrdma_frag_t *frag, struct opal_convertor_t *convertor,
                      const void *header, size_t header_size, size_t payload_size)
{
    struct iovec iov;
    uint32_t iov_count = 1;
    size_t max_data = payload_size;

    memcpy(frag->buf + TBRDMA_HDR_BYTES, header, header_size);
    if (0 == payload_size) {
        return 0;
    }
    iov.iov_base = frag->buf + TBRDMA_HDR_BYTES + header_size;
    iov.iov_len = payload_size;
    if (0 > opal_convertor_pack(convertor, &iov, &iov_count, &max_data)
        || max_data != payload_size) {
        return -1;
    }
    return 0;
}

int mca_btl_tbrdma_sendi(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint,
                         struct opal_convertor_t *convertor, void *header, size_t header_size,
                         size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t **descriptor)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;
    mca_btl_tbrdma_frag_t *frag;

    (void) order;
    if (NULL != descriptor) {
        *descriptor = NULL;
    }
    if (TBRDMA_EP_CONNECTED != endpoint->state || !module->verbs_live) {
        return OPAL_ERR_UNREACH;
    }
    if (!mca_btl_tbrdma_token_try(module)) {
        return OPAL_ERR_RESOURCE_BUSY;
    }
    frag = mca_btl_tbrdma_endpoint_frag(module, endpoint, header_size + payload_size, flags);
    if (NULL == frag) {
        mca_btl_tbrdma_token_release(module);
        return OPAL_ERR_RESOURCE_BUSY;
    }
    if (0 != sendi_fill(frag, convertor, header, header_size, payload_size)) {
        mca_btl_tbrdma_frag_put(module, frag);
        mca_btl_tbrdma_token_release(module);
        return OPAL_ERROR;
    }
    frag->tag = tag;
    frag->len = (uint32_t) (header_size + payload_size);
    /*
     * No descriptor goes back to ob1: its one reference is the transport's, whatever ob1's flags
     * say (ob1 passes BTL_OWNERSHIP, which would make send_finished drop an owner's reference
     * too: one release too many, and under MPI_THREAD_MULTIPLE another thread's alloc could
     * take the frame between the two).
     */
    if (!TBRDMA_MUTANT(SENDI_DOUBLE_RELEASE)) {
        frag->base.des_flags &= ~MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    }
    mca_btl_tbrdma_submit_drain(module);
    send_start(module, endpoint, frag);
    mca_btl_tbrdma_token_release(module);
    return OPAL_SUCCESS;
}
