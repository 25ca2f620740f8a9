/*
 * libtbsim data path: ibv_post_send, ibv_post_recv and ibv_poll_cq (reached through
 * ctx->ops), and the progress engine behind them.
 *
 * Model (see test/sim/README.md): each QP owns a receive file in shared memory. post_recv
 * writes a descriptor (frame count, length) and bumps rq_posted: that is the hardware credit.
 * A queued send leaves only when the connected peer has an unclaimed credit; the sending
 * process then applies the cable's faults, checks the frame rule against that receive,
 * copies the payload into the receive's slot and publishes the outcome (release store of the
 * slot's seq). The receiving process completes a receive once its slot is published and its
 * delivery time has come: the link model's arrival (tbsim_link.c; off by default) plus the
 * delay fault. Progress runs inside post_send, post_recv and poll_cq of the process that owns
 * the queue: a send moves when its sender calls one of them, a receive completes when its
 * receiver does.
 *
 * Hot path: no system call and no lock (C11 atomics, vDSO clock). The only system calls are
 * the port-state check every TBSIM_LINK_RECHECK_NS (env TBSIM_LINK_RECHECK_MS overrides it, so
 * that sim_nosyscall.sh can count the hot path's system calls alone): one non-blocking read of
 * the interface's change feed, and a re-read of the interface only when that feed reports a
 * change (the re-read takes the kernel's rtnl lock, which a loaded host can hold for seconds);
 * and the one-time mapping of a peer's receive file at connection.
 */
#include "tbsim_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned g_mutant_polls; /* poll_cq calls, counted by the SYSCALL_IN_POLL mutant */

enum send_step {
    SEND_BLOCKED, /* no connected peer or no credit: stays queued */
    SEND_LEFT,    /* transmitted, dropped or lost on a DOWN port: completes success */
};

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint32_t frames_of(uint32_t len)
{
    return (0 == len) ? 1 : (len + TBSIM_FRAME - 1) / TBSIM_FRAME;
}

static uint8_t *rxq_data(struct tbsim_rxq *rxq, uint32_t region)
{
    return (uint8_t *) rxq + TBSIM_RXQ_HDR + (size_t) region * TBSIM_MSG_MAX;
}

/* The lowest data region of a receive file that holds no message, TBSIM_RING when none. */
static uint32_t region_free(struct tbsim_rxq *rxq)
{
    uint64_t busy = atomic_load_explicit(&rxq->region_busy, memory_order_acquire);

    return (UINT64_MAX == busy) ? TBSIM_RING : (uint32_t) __builtin_ctzll(~busy);
}

/* ---- completion queue ------------------------------------------------------------------- */

/*
 * Queues a completion. A send's completion is held back for 1 to TBSIM_SEND_CQE_HOLD_MAX
 * poll_cq calls (pseudo-random, deterministic per CQ), so a receive that arrives meanwhile is
 * reported first: one CQ serving both queues gives no order between them (rxe reports the next
 * round's receive before this round's send; Apple documents no order), and code that assumes
 * one must fail here too. Send completions stay in order among themselves.
 */
static void cq_push(struct ibv_cq *ibcq, const struct ibv_wc *wc, int hold)
{
    struct tbsim_cq *cq = to_tcq(ibcq);

    if (cq->count + cq->nheld == cq->size) {
        cq->overflow = 1;
        return;
    }
    if (hold && !TBSIM_MUTANT(SEND_CQE_IMMEDIATE)) {
        cq->held_polls[cq->nheld] = (uint8_t) (1 + mix64(++cq->held_seq) % TBSIM_SEND_CQE_HOLD_MAX);
        cq->held[cq->nheld++] = *wc;
        return;
    }
    cq->ring[(cq->head + cq->count) % cq->size] = *wc;
    cq->count++;
}

/* End of a poll_cq call: every held send completion waits one poll less; the oldest ones
 * whose wait is over become visible, in order. */
static void cq_release_held(struct tbsim_cq *cq)
{
    uint32_t i, n = 0;

    for (i = 0; i < cq->nheld; i++) {
        cq->held_polls[i] -= (0 < cq->held_polls[i]) ? 1 : 0;
    }
    while (n < cq->nheld && 0 == cq->held_polls[n]) {
        cq->ring[(cq->head + cq->count) % cq->size] = cq->held[n];
        cq->count++;
        n++;
    }
    if (0 < n) {
        memmove(cq->held, cq->held + n, (cq->nheld - n) * sizeof(*cq->held));
        memmove(cq->held_polls, cq->held_polls + n, cq->nheld - n);
        cq->nheld -= n;
    }
}

static void wc_fill(struct ibv_wc *wc, struct tbsim_qp *qp, uint64_t wr_id,
                    enum ibv_wc_status status, enum ibv_wc_opcode opcode, uint32_t len)
{
    memset(wc, 0, sizeof(*wc));
    wc->wr_id = wr_id;
    wc->status = status;
    wc->opcode = opcode;
    wc->byte_len = len;
    wc->qp_num = qp->ibv.qp_num;
}

/* ---- connection to the peer QP ---------------------------------------------------------- */

void tbsim_qp_unlink_peer(struct tbsim_qp *qp)
{
    if (NULL != qp->peer) {
        munmap(qp->peer, TBSIM_RXQ_SIZE);
        qp->peer = NULL;
    }
}

static struct tbsim_rxq *peer_map(struct tbsim_fabric *fab, int dev, int slot, uint32_t gen)
{
    struct tbsim_rxq *rxq;
    char path[4096];
    int fd;

    tbsim_rxq_path(fab, dev, slot, path, sizeof(path));
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    rxq = mmap(NULL, TBSIM_RXQ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == rxq) {
        return NULL;
    }
    if (TBSIM_RXQ_MAGIC != rxq->magic || gen != rxq->gen) {
        munmap(rxq, TBSIM_RXQ_SIZE);
        return NULL;
    }
    return rxq;
}

static int peer_entry_matches(struct tbsim_dev *pd, int slot, struct tbsim_qp *qp)
{
    struct tbsim_qp_entry *e = &pd->qp[slot];
    uint32_t state = atomic_load_explicit(&e->state, memory_order_acquire);

    return 0 != atomic_load_explicit(&pd->qp_owner[slot], memory_order_relaxed)
           && qp->dest_qpn == atomic_load_explicit(&e->qpn, memory_order_relaxed)
           && (IBV_QPS_RTR == state || IBV_QPS_RTS == state)
           && qp->ibv.qp_num == atomic_load_explicit(&e->dest_qpn, memory_order_relaxed);
}

/* The FAULT_LATCHED mutant: a copy of the cable's faults at connection. */
static void fault_latch(struct tbsim_fault *to, struct tbsim_fault *from)
{
    atomic_store(&to->drop_ppm, atomic_load(&from->drop_ppm));
    atomic_store(&to->corrupt_ppm, atomic_load(&from->corrupt_ppm));
    atomic_store(&to->delay_us, atomic_load(&from->delay_us));
    atomic_store(&to->drop_min, atomic_load(&from->drop_min));
    atomic_store(&to->seed, atomic_load(&from->seed));
}

/* The peer is connected when its QP is RTR/RTS with our QPN as destination, and we with its. */
static int qp_peer_ready(struct tbsim_context *ctx, struct tbsim_qp *qp)
{
    int pdev = tbsim_dev_peer(qp->dev);
    struct tbsim_dev *pd = &ctx->fab->devs[pdev];

    if (NULL != qp->peer) {
        struct tbsim_qp_entry *e = &pd->qp[qp->peer_slot];

        if (peer_entry_matches(pd, qp->peer_slot, qp) && qp->peer_gen == atomic_load(&e->gen)) {
            return 1;
        }
        tbsim_qp_unlink_peer(qp); /* the peer QP went away: a dead peer, sends wait */
    }
    for (int s = 0; s < TBSIM_QP_SLOTS; s++) {
        if (peer_entry_matches(pd, s, qp)) {
            qp->peer_gen = atomic_load(&pd->qp[s].gen);
            qp->peer_slot = s;
            qp->peer = peer_map(ctx->fab, pdev, s, qp->peer_gen);
            if (TBSIM_MUTANT(FAULT_LATCHED)) {
                fault_latch(&qp->fault_at_connect, &ctx->fab->cables[pd->cable].fault);
            }
            if (TBSIM_MUTANT(LINK_LATCHED)) {
                tbsim_link_latch(&qp->link_at_connect, &ctx->fab->cables[pd->cable].model);
            }
            return NULL != qp->peer;
        }
    }
    return 0;
}

/* ---- sending ---------------------------------------------------------------------------- */

static void corrupt(uint8_t *buf, uint32_t len, uint64_t r)
{
    if (0 < len) {
        buf[(r >> 8) % len] ^= (uint8_t) (1u << (r & 7));
    }
}

static void count(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/*
 * Apple's frame rule: the send and the receive span the same number of 4 KiB frames. The
 * message must also fit the receive buffer (the harsher reading, README choice 6).
 */
static int frame_rule_ok(const struct tbsim_rq_desc *desc, const struct tbsim_swr *wr)
{
    if (TBSIM_MUTANT(FRAME_RULE_OFF)) {
        return wr->len <= desc->len;
    }
    if (TBSIM_MUTANT(FRAME_RULE_STRICT)) {
        return wr->len == desc->len;
    }
    if (TBSIM_MUTANT(FRAME_LEN_OVER)) {
        return desc->frames == wr->frames;
    }
    return desc->frames == wr->frames && wr->len <= desc->len;
}

/*
 * When the receive of this send may complete: the link model's arrival (now when it is off),
 * plus the delay fault. Reserves the send's time on the wire, also for a send that is dropped.
 */
static uint64_t deliver_at(struct tbsim_context *ctx, struct tbsim_qp *qp, struct tbsim_fault *f,
                           const struct tbsim_swr *wr, const struct tbsim_rq_desc *desc,
                           uint64_t now)
{
    struct tbsim_fabric *fab = ctx->fab;
    struct tbsim_linkmodel *link = &fab->cables[fab->devs[qp->dev].cable].model;
    struct tbsim_link_frame fr = {
        .send_ns = wr->post_ns, .credit_ns = desc->post_ns, .len = wr->len};
    uint64_t at;

    if (TBSIM_MUTANT(LINK_LATCHED)) {
        link = &qp->link_at_connect;
    }
    at = tbsim_link_arrival(fab, qp->dev, link, &fr, now);
    if (TBSIM_MUTANT(DELAY_IGNORED)) {
        return at;
    }
    return at + 1000ull * atomic_load_explicit(&f->delay_us, memory_order_relaxed);
}

static void transmit(struct tbsim_context *ctx, struct tbsim_qp *qp, struct tbsim_fault *f,
                     struct tbsim_swr *wr, uint64_t claim, uint64_t deliver_ns)
{
    struct tbsim_counters *cnt = &ctx->fab->devs[qp->dev].cnt;
    struct tbsim_rxq *peer = qp->peer;
    struct tbsim_rq_desc desc = peer->desc[claim % TBSIM_RING];
    struct tbsim_rx_slot *s = &peer->slot[claim % TBSIM_RING];
    uint64_t r = mix64(atomic_load_explicit(&f->seed, memory_order_relaxed) ^ (qp->sq_sent << 1)
                       ^ ((uint64_t) qp->dev << 56) ^ 1);

    if (frame_rule_ok(&desc, wr)) {
        uint32_t region = region_free(peer);
        uint8_t *data = rxq_data(peer, region);
        uint32_t copy = (TBSIM_MUTANT(COPY_4K) && TBSIM_FRAME < wr->len) ? TBSIM_FRAME : wr->len;

        memcpy(data, (const void *) (uintptr_t) wr->addr, copy);
        tbsim_pin_send(tbsim_pin_of(ctx, wr->lkey), wr->addr, data, copy);
        if ((r % TBSIM_PPM) < atomic_load_explicit(&f->corrupt_ppm, memory_order_relaxed)
            && !TBSIM_MUTANT(CORRUPT_IGNORED)) {
            corrupt(data, wr->len, mix64(r));
            count(&cnt->corrupted, 1);
        }
        atomic_fetch_or_explicit(&peer->region_busy, 1ull << region, memory_order_relaxed);
        s->region = region;
        s->status = TBSIM_SLOT_OK;
        s->byte_len = wr->len;
    } else {
        s->status = TBSIM_SLOT_LEN_ERR; /* the frame rule: nothing is delivered */
        s->byte_len = 0;
    }
    count(&cnt->tx_msgs, 1);
    count(&cnt->tx_bytes, wr->len);
    s->deliver_ns = deliver_ns;
    atomic_store_explicit(&s->seq, claim + 1, memory_order_release);
    atomic_store_explicit(&peer->tx_claimed, claim + 1, memory_order_release);
}

static enum send_step send_one(struct tbsim_context *ctx, struct tbsim_qp *qp, struct tbsim_swr *wr,
                               uint64_t now)
{
    struct tbsim_fault *f;
    uint64_t claim;
    uint64_t deliver_ns;
    uint64_t r;

    if (!ctx->port_active && !TBSIM_MUTANT(DOWN_DELIVERS)) {
        count(&ctx->fab->devs[qp->dev].cnt.lost, 1);
        return SEND_LEFT; /* Apple: no error for a pulled cable, the data is simply lost */
    }
    if (!qp_peer_ready(ctx, qp)) {
        return SEND_BLOCKED;
    }
    claim = atomic_load_explicit(&qp->peer->tx_claimed, memory_order_relaxed);
    if (claim >= atomic_load_explicit(&qp->peer->rq_posted, memory_order_acquire)
                     + TBSIM_MUTANT(CREDITS_PLUS1)
        && !TBSIM_MUTANT(CREDITS_OFF)) {
        return SEND_BLOCKED; /* hardware credit flow control: wait for a posted receive */
    }
    if (TBSIM_RING == region_free(qp->peer)) {
        return SEND_BLOCKED; /* the simulator's own limit, unreachable within the credits */
    }
    f = &ctx->fab->cables[ctx->fab->devs[qp->dev].cable].fault;
    if (TBSIM_MUTANT(FAULT_LATCHED)) {
        f = &qp->fault_at_connect;
    }
    deliver_ns = deliver_at(ctx, qp, f, wr, &qp->peer->desc[claim % TBSIM_RING], now);
    r = mix64(atomic_load_explicit(&f->seed, memory_order_relaxed) ^ (qp->sq_sent << 1)
              ^ ((uint64_t) qp->dev << 56) ^ (TBSIM_MUTANT(DROP_UNSEEDED) ? now : 0));
    if ((r % TBSIM_PPM) < atomic_load_explicit(&f->drop_ppm, memory_order_relaxed)
        && wr->len >= atomic_load_explicit(&f->drop_min, memory_order_relaxed)) {
        count(&ctx->fab->devs[qp->dev].cnt.lost, 1);
        wr->dropped = 1;
        return SEND_LEFT; /* dropped on the wire: the credit stays for the next send */
    }
    transmit(ctx, qp, f, wr, claim, deliver_ns);
    return SEND_LEFT;
}

static void send_complete(struct tbsim_qp *qp, struct tbsim_swr *wr, enum ibv_wc_status st)
{
    struct ibv_wc wc;

    qp->sq_sent++;
    if (TBSIM_MUTANT(DROP_ERROR) && wr->dropped) {
        st = IBV_WC_RETRY_EXC_ERR; /* as if an ack were missing: Apple's UC has none */
    }
    if (wr->signaled || IBV_WC_SUCCESS != st || TBSIM_MUTANT(UNSIGNALED_COMPLETE)) {
        wc_fill(&wc, qp, wr->wr_id, st, IBV_WC_SEND, wr->len);
        cq_push(qp->ibv.send_cq, &wc, 1);
        qp->sq_retired = qp->sq_sent; /* frees this WR and the unsignaled ones before it */
    }
}

static void progress_send(struct tbsim_context *ctx, struct tbsim_qp *qp, uint64_t now)
{
    while (qp->sq_sent < qp->sq_posted) {
        struct tbsim_swr *wr = &qp->sq[qp->sq_sent % TBSIM_RING];

        if (IBV_QPS_ERR == qp->ibv.state) {
            send_complete(qp, wr, IBV_WC_WR_FLUSH_ERR);
            continue;
        }
        if (SEND_BLOCKED == send_one(ctx, qp, wr, now)) {
            return;
        }
        send_complete(qp, wr, IBV_WC_SUCCESS);
    }
}

/* ---- receiving -------------------------------------------------------------------------- */

/*
 * Copies the head receive's published message into the user's buffer, once: at its delivery,
 * or earlier while it waits for its delivery time (hardware writes a posted receive's buffer
 * before the completion too), so that the copy hides in the link model's wire time.
 */
static void recv_fill(const struct tbsim_context *ctx, struct tbsim_qp *qp,
                      const struct tbsim_rwr *wr, const struct tbsim_rx_slot *s)
{
    if (qp->rq_copied <= qp->rq_done && TBSIM_SLOT_OK == s->status) {
        tbsim_pin_recv(tbsim_pin_of(ctx, wr->lkey), wr->addr, rxq_data(qp->rxq, s->region),
                       s->byte_len);
        atomic_fetch_and_explicit(&qp->rxq->region_busy, ~(1ull << s->region),
                                  memory_order_release);
        qp->rq_copied = qp->rq_done + 1;
    }
}

static void progress_recv(struct tbsim_context *ctx, struct tbsim_qp *qp, uint64_t now)
{
    struct tbsim_counters *cnt = &ctx->fab->devs[qp->dev].cnt;

    while (qp->rq_done < qp->rq_posted) {
        struct tbsim_rwr *wr = &qp->rq[qp->rq_done % TBSIM_RING];
        struct tbsim_rx_slot *s = &qp->rxq->slot[qp->rq_done % TBSIM_RING];
        struct ibv_wc wc;

        if (IBV_QPS_ERR == qp->ibv.state) {
            wc_fill(&wc, qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
        } else if (qp->rq_done + 1 != atomic_load_explicit(&s->seq, memory_order_acquire)) {
            return;
        } else if (now < s->deliver_ns) {
            recv_fill(ctx, qp, wr, s);
            return;
        } else if (TBSIM_SLOT_OK == s->status) {
            recv_fill(ctx, qp, wr, s);
            wc_fill(&wc, qp, wr->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV,
                    TBSIM_MUTANT(WC_BYTE_LEN) ? wr->len : s->byte_len);
            count(&cnt->rx_msgs, 1);
            count(&cnt->rx_bytes, TBSIM_MUTANT(COUNTERS_RX_BYTES) ? 0 : s->byte_len);
        } else {
            wc_fill(&wc, qp, wr->wr_id, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0);
            count(&cnt->len_err, 1);
        }
        cq_push(qp->ibv.recv_cq, &wc, 0);
        qp->rq_done++;
    }
}

/* One clock read per verbs call (the caller's, also stamped on what it posts). */
static void progress(struct tbsim_context *ctx, uint64_t now)
{
    if (now - ctx->link_checked_ns > ctx->link_recheck_ns || 0 == ctx->link_checked_ns) {
        ctx->port_active = tbsim_port_eval(ctx->fab, ctx->dev, NULL, NULL);
        ctx->link_checked_ns = now;
    }
    for (int i = 0; i < TBSIM_CTX_QP_MAX; i++) {
        struct tbsim_qp *qp = ctx->qps[i];

        if (NULL != qp) {
            progress_send(ctx, qp, now);
            progress_recv(ctx, qp, now);
        }
    }
}

/* ---- posting ---------------------------------------------------------------------------- */

/* The largest message: 4095 frames (16,773,120 B). */
static uint32_t msg_max(void)
{
    if (TBSIM_MUTANT(MSG_MAX_2MIB)) {
        return 2u << 20;
    }
    return TBSIM_MSG_MAX + TBSIM_MUTANT(MSG_MAX_PLUS1);
}

/* One SGE at most, inside a registered MR of this context. Returns 0 or EINVAL. */
static int sge_check(struct tbsim_context *ctx, const struct ibv_sge *sg, int num_sge,
                     uint64_t *addr, uint32_t *len)
{
    const struct tbsim_mr *mr;

    *addr = 0;
    *len = 0;
    if (num_sge < 0 || (1 < num_sge && !TBSIM_MUTANT(SGE_MULTI))) {
        return EINVAL; /* one SGE per WR */
    }
    if (0 == num_sge) {
        return 0;
    }
    if (sg->lkey < 1 || TBSIM_MR_SLOTS < sg->lkey || msg_max() < sg->length) {
        return EINVAL;
    }
    mr = ctx->mrs[sg->lkey - 1];
    if (NULL == mr || sg->addr < (uintptr_t) mr->ibv.addr
        || sg->addr + sg->length > (uintptr_t) mr->ibv.addr + mr->ibv.length) {
        return EINVAL;
    }
    *addr = sg->addr;
    *len = sg->length;
    return 0;
}

static int send_check(struct tbsim_context *ctx, struct tbsim_qp *qp, const struct ibv_send_wr *wr,
                      struct tbsim_swr *out, uint64_t now)
{
    if (IBV_QPS_RTS != qp->ibv.state || (IBV_WR_SEND != wr->opcode && !TBSIM_MUTANT(OPCODE_ANY))
        || 0 != (wr->send_flags & IBV_SEND_INLINE)) {
        return EINVAL; /* SEND only; no inline data */
    }
    if (0 != sge_check(ctx, wr->sg_list, wr->num_sge, &out->addr, &out->len)) {
        return EINVAL;
    }
    if (qp->send_cap <= qp->sq_posted - qp->sq_retired) {
        return ENOMEM; /* Apple: the 64th outstanding WR fails with ENOMEM */
    }
    out->wr_id = wr->wr_id;
    out->lkey = (0 < wr->num_sge) ? wr->sg_list->lkey : 0;
    out->dropped = 0;
    out->frames = frames_of(out->len);
    out->signaled = qp->sig_all || 0 != (wr->send_flags & IBV_SEND_SIGNALED);
    out->post_ns = now;
    return 0;
}

int tbsim_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    struct tbsim_context *ctx = to_tctx(ibqp->context);
    struct tbsim_qp *qp = to_tqp(ibqp);
    uint64_t now = tbsim_now_ns();
    int rc = 0;

    for (; NULL != wr; wr = wr->next) {
        struct tbsim_swr swr;

        rc = send_check(ctx, qp, wr, &swr, now);
        if (0 != rc) {
            *bad_wr = wr;
            errno = rc;
            break;
        }
        qp->sq[qp->sq_posted % TBSIM_RING] = swr;
        qp->sq_posted++;
    }
    progress(ctx, now);
    return rc;
}

static int recv_check(struct tbsim_context *ctx, struct tbsim_qp *qp, const struct ibv_recv_wr *wr,
                      struct tbsim_rwr *out)
{
    if (IBV_QPS_RESET == qp->ibv.state || IBV_QPS_ERR == qp->ibv.state) {
        return EINVAL;
    }
    if (0 != sge_check(ctx, wr->sg_list, wr->num_sge, &out->addr, &out->len)) {
        return EINVAL;
    }
    if (qp->recv_cap <= qp->rq_posted - qp->rq_done) {
        return ENOMEM;
    }
    out->wr_id = wr->wr_id;
    out->lkey = (0 < wr->num_sge) ? wr->sg_list->lkey : 0;
    return 0;
}

int tbsim_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
    struct tbsim_context *ctx = to_tctx(ibqp->context);
    struct tbsim_qp *qp = to_tqp(ibqp);
    uint64_t now = tbsim_now_ns();
    int rc = 0;

    for (; NULL != wr; wr = wr->next) {
        struct tbsim_rwr rwr;
        struct tbsim_rq_desc *d;

        rc = recv_check(ctx, qp, wr, &rwr);
        if (0 != rc) {
            *bad_wr = wr;
            errno = rc;
            break;
        }
        qp->rq[qp->rq_posted % TBSIM_RING] = rwr;
        d = &qp->rxq->desc[qp->rq_posted % TBSIM_RING];
        d->frames = frames_of(rwr.len);
        d->len = rwr.len;
        d->post_ns = now;
        qp->rq_posted++;
        atomic_store_explicit(&qp->rxq->rq_posted, qp->rq_posted, memory_order_release);
    }
    progress(ctx, now);
    return rc;
}

int tbsim_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
    struct tbsim_cq *cq = to_tcq(ibcq);
    int n = 0;

    progress(to_tctx(ibcq->context), tbsim_now_ns());
    if (TBSIM_MUTANT(SYSCALL_IN_POLL) && 0 == ++g_mutant_polls % 1024) {
        (void) getppid(); /* one system call every 1024 polls */
    }
    if (cq->overflow) {
        return -EOVERFLOW; /* a completion was lost: the CQ is unusable, as after an overrun */
    }
    while (n < num && 0 < cq->count) {
        wc[n++] = cq->ring[cq->head];
        cq->head = (cq->head + 1) % cq->size;
        cq->count--;
    }
    cq_release_held(cq);
    return n;
}
