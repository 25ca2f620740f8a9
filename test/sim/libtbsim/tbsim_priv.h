/*
 * libtbsim private objects: the process-local halves of the verbs objects (the ibv_* struct
 * is always the first member, so the library converts with a cast) and the functions the
 * control path (tbsim_verbs.c) and the data path (tbsim_data.c) share.
 *
 * Threading: a context and everything created from it must be used by one thread at a time
 * (the tbrdma BTL progresses from one thread); nothing here takes a lock.
 */
#ifndef TBSIM_PRIV_H
#define TBSIM_PRIV_H

#include <infiniband/verbs.h>
#include <stdint.h>

#include "tbsim_mutate.h"
#include "tbsim_net.h"
#include "tbsim_shm.h"

#define TBSIM_LINK_RECHECK_NS   10000000ull /* data path re-reads the port state every 10 ms */
#define TBSIM_SEND_CQE_HOLD_MAX 64 /* a send completion waits 1..64 poll_cq calls (see cq_push) */
#define TBSIM_CTX_QP_MAX        (2 * TBSIM_QP_MAX)
#define TBSIM_CQE_MAX           65536
#define TBSIM_LINK_LAYER        100 /* Apple's IBV_LINK_LAYER_THUNDERBOLT */
#define TBSIM_ERRNO_PORT_DOWN   ENXIO

struct tbsim_device {
    struct ibv_device ibv;
    int dev;
};

struct tbsim_mr {
    struct ibv_mr ibv;
    int slot;
    struct tbsim_pin *pin; /* the pages it pins (TBSIM_PIN=1), else NULL: tbsim_pin.c */
};

struct tbsim_cq {
    struct ibv_cq ibv;
    struct ibv_wc *ring;
    uint32_t size;
    uint32_t head;
    uint32_t count;
    struct ibv_wc *held; /* send completions not yet visible (see cq_push), FIFO */
    uint8_t *held_polls; /* per held completion: poll_cq calls it still waits */
    uint32_t nheld;
    uint64_t held_seq; /* completions held so far: seeds the wait */
    int overflow;      /* a completion found the ring full: the CQ is dead (see README) */
};

struct tbsim_swr {
    uint64_t wr_id;
    uint64_t addr;
    uint32_t len;
    uint32_t lkey;
    uint32_t frames;
    int signaled;
    int dropped;      /* lost on the wire (read by the DROP_ERROR mutant only) */
    uint64_t post_ns; /* CLOCK_MONOTONIC time of the post (the link model's ready time) */
};

struct tbsim_rwr {
    uint64_t wr_id;
    uint64_t addr;
    uint32_t len;
    uint32_t lkey;
};

struct tbsim_qp {
    struct ibv_qp ibv;
    int dev;
    int slot;
    uint32_t gen;
    int sig_all;
    uint32_t send_cap;      /* outstanding sends accepted: max_send_wr, at most TBSIM_WR_MAX */
    uint32_t recv_cap;      /* outstanding receives accepted: max_recv_wr, at most TBSIM_WR_MAX */
    struct tbsim_rxq *rxq;  /* this QP's receive file (mapped whole) */
    struct tbsim_rxq *peer; /* the connected peer's receive file, NULL until connected */
    int peer_slot;
    uint32_t peer_gen;
    uint32_t dest_qpn;
    struct tbsim_fault fault_at_connect;    /* the FAULT_LATCHED mutant's copy */
    struct tbsim_linkmodel link_at_connect; /* the LINK_LATCHED mutant's copy */
    struct tbsim_swr sq[TBSIM_RING];
    uint64_t sq_posted;
    uint64_t sq_sent;    /* transmitted (or lost): left the send queue */
    uint64_t sq_retired; /* slots free again: up to the last signaled completion */
    struct tbsim_rwr rq[TBSIM_RING];
    uint64_t rq_posted;
    uint64_t rq_done;
    uint64_t rq_copied; /* receives whose data is already in the user's buffer (see recv_fill) */
};

struct tbsim_context {
    struct ibv_context ibv;
    struct tbsim_fabric *fab;
    int dev;
    struct tbsim_qp *qps[TBSIM_CTX_QP_MAX];
    struct tbsim_mr *mrs[TBSIM_MR_SLOTS]; /* by MR slot; lkey == slot + 1 */
    uint64_t link_checked_ns;
    uint64_t link_recheck_ns; /* TBSIM_LINK_RECHECK_NS, or env TBSIM_LINK_RECHECK_MS */
    int port_active;          /* cached for the data path */
};

static inline struct tbsim_context *to_tctx(struct ibv_context *ctx)
{
    return (struct tbsim_context *) ctx;
}

static inline struct tbsim_qp *to_tqp(struct ibv_qp *qp)
{
    return (struct tbsim_qp *) qp;
}

static inline struct tbsim_cq *to_tcq(struct ibv_cq *cq)
{
    return (struct tbsim_cq *) cq;
}

/* CLOCK_MONOTONIC in ns (vDSO: no system call). */
uint64_t tbsim_now_ns(void);

/*
 * Port state of device dev: the interface is up with carrier and not enslaved (read through
 * rtnetlink, again only when the namespace's change feed says it may have changed), and RDMA is
 * enabled on both hosts of the cable. Fills link and addrs when not NULL. Publishes the
 * interface's IPv4 to the fabric as a side effect. Returns 1 (ACTIVE) or 0 (DOWN).
 */
int tbsim_port_eval(struct tbsim_fabric *fab, int dev, struct tbsim_link *link,
                    struct tbsim_addrs *addrs);

/* The data-path entry points installed in ctx->ops. */
int tbsim_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int tbsim_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int tbsim_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);

/* A frame as the link model sees it: its length and when its send and its credit were posted. */
struct tbsim_link_frame {
    uint64_t send_ns;   /* the post of the send */
    uint64_t credit_ns; /* the post of the receive it consumes */
    uint32_t len;
};

/*
 * When a frame sent on device dev at time now arrives at the other end, under the cable's link
 * model link (tbsim_link.c): now when the model is off. Reserves the frame's time on the wire.
 */
uint64_t tbsim_link_arrival(struct tbsim_fabric *fab, int dev, struct tbsim_linkmodel *link,
                            const struct tbsim_link_frame *fr, uint64_t now);

/* The LINK_LATCHED mutant: a copy of the cable's link model at connection. */
void tbsim_link_latch(struct tbsim_linkmodel *to, struct tbsim_linkmodel *from);

/* Drops a QP's mapping of its peer (destroy, reset). */
void tbsim_qp_unlink_peer(struct tbsim_qp *qp);

/* tbsim_pin.c: pinned pages, modelled when TBSIM_PIN=1 (else every call is a no-op). */
int tbsim_pin_on(void);
struct tbsim_pin *tbsim_pin_take(void *addr, size_t len);
void tbsim_pin_drop(struct tbsim_pin *p);
/* A send's data was copied from src to data: the bytes of pages no longer pinned are lost. */
void tbsim_pin_send(const struct tbsim_pin *p, uint64_t src, uint8_t *data, uint32_t len);
/* A receive's data to dst: pages no longer pinned do not get it. */
void tbsim_pin_recv(const struct tbsim_pin *p, uint64_t dst, const uint8_t *src, uint32_t len);

/* The pinning record of memory region key lkey of ctx, NULL when none. */
static inline const struct tbsim_pin *tbsim_pin_of(const struct tbsim_context *ctx, uint32_t lkey)
{
    return (0 < lkey && lkey <= TBSIM_MR_SLOTS && NULL != ctx->mrs[lkey - 1])
               ? ctx->mrs[lkey - 1]->pin
               : NULL;
}

#endif /* TBSIM_PRIV_H */
