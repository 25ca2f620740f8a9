/*
 * A tbrdma endpoint: one peer process on another host, the cable the mesh chose to reach it
 * (the local port, the peer's port and the peer port's GID), and the two channels of the data
 * path over that cable: a UC queue pair each, with the sending and receiving halves of tbrdma's
 * reliability (core/tbrdma_rel.h) and the frames in flight.
 *
 * Several cables to the peer's host (striping, btl_tbrdma_stripe.c): one endpoint per cable,
 * each a whole connection; the endpoint of the pair's first cable (the primary) is the one Open
 * MPI knows, and lists the others (its stripes).
 *
 * States: NEW (mesh resolved) -> READY (queue pairs created, receives posted, published) ->
 * CONNECTED (RTR/RTS done; handed to Open MPI once the peer answered the handshake) ->
 * FAILED (declared lost) or CLOSED (the peer finalized). Everything but creation and lookup is
 * done by the token holder.
 */
#ifndef BTL_TBRDMA_ENDPOINT_H
#define BTL_TBRDMA_ENDPOINT_H

#include "btl_tbrdma.h"
#include "fabric/btl_tbrdma_device.h"
#include "fabric/btl_tbrdma_frag.h"

#include "opal/class/opal_list.h"

#include "core/tbrdma_conn.h"

enum mca_btl_tbrdma_ep_state {
    TBRDMA_EP_NEW = 0,
    TBRDMA_EP_READY,
    TBRDMA_EP_CONNECTED,
    TBRDMA_EP_FAILED,
    TBRDMA_EP_CLOSED,
};

/* One channel of an endpoint: a UC queue pair and the frames on it. */
typedef struct mca_btl_tbrdma_chan_t {
    tbrdma_vqp_t *qp;
    uint32_t qpn;
    uint32_t frames; /* frames per message on this channel (Apple's frame rule) */
    int depth;       /* receives posted at start */
    tbrdma_rel_tx_t tx;
    tbrdma_rel_rx_t rx;
    mca_btl_tbrdma_frag_t *head, *tail; /* send list in sequence order: [una, next_seq) */
    mca_btl_tbrdma_frag_t *snd;         /* the frame at tx.snd_nxt, NULL when none */
    int sq_posted;                      /* send work requests outstanding (<= TBRDMA_WR_MAX) */
    mca_btl_tbrdma_frag_t *recv;        /* its depth receive frames */
    mca_btl_tbrdma_frag_t *held_head, *held_tail; /* in order, awaiting delivery */
    int nack;                                     /* a NACK is owed for this channel */
    int stalled;                                  /* waiting for credits (counted once) */
    int beyond; /* control frames posted beyond the peer's grant, not completed yet */
} mca_btl_tbrdma_chan_t;

struct mca_btl_base_endpoint_t {
    opal_list_item_t super;
    opal_proc_t *proc; /* the peer (not retained: Open MPI owns procs) */
    char peer_host[TBRDMA_HOST_MAX];
    int local_port;           /* index in module->local.ports */
    int peer_port;            /* index in the peer host's published ports */
    tbrdma_modex_port_t peer; /* the peer's port: device, GID and its index, MTU */

    /* The data path. */
    int state;                           /* enum mca_btl_tbrdma_ep_state */
    struct mca_btl_tbrdma_device_t *dev; /* the local port's device */
    mca_btl_tbrdma_chan_t chan[TBRDMA_NCHAN];
    uint32_t conn_local;  /* stamped by the peer on frames to us */
    uint32_t conn_remote; /* stamped by us on frames to the peer */
    uint32_t psn;
    int csum;            /* payloads carry CRC32C (either side asked for it) */
    tbrdma_live_t live;  /* when the peer was last heard and may next be probed */
    uint64_t owed_since; /* ns: since when an acknowledgement is owed (0: none) */
    int ack_now;         /* acknowledge at once (duplicate seen, or asked) */
    int probe;           /* ask the peer to answer at once (TBRDMA_HF_AREQ) */
    int heard;           /* a valid frame came since connection (the handshake) */
    int rx_pass;         /* a valid frame came in the current progress pass */
    /*
     * Primary only: frames to this peer acknowledged whose callback still waits for their send
     * completion (a CQ gives no order between a send's completion and a receive's). While there
     * is one, data frames from this peer are held, so ob1 hears of a send's completion before
     * any frame the peer sent after receiving it (channel/btl_tbrdma_completion.c, "causal order").
     */
    int acked_waiting;
    int fail_reported;
    char fail_reason[512];
    uint8_t *train;     /* a train's pieces received so far (1-frame channel), NULL until one */
    uint32_t train_len; /* bytes in train */

    /* Striping (btl_tbrdma_stripe.c). */
    int stripe;                              /* this endpoint's cable in the pair's order */
    struct mca_btl_base_endpoint_t *primary; /* cable 0's endpoint; itself on cable 0 */
    struct mca_btl_base_endpoint_t *stripes[TBRDMA_MESH_MAX_STRIPES]; /* primary: usable cables */
    int nstripes;         /* primary: entries of stripes[] (>= 1) */
    unsigned stripe_next; /* primary: turn among equally loaded cables */
    /* Zero-copy large messages (proto/zcopy/), NULL when off. */
    bool zc_planned; /* the queue pair budget leaves room for its zero-copy queue pair */
    struct mca_btl_tbrdma_zc_t *zc;
};
typedef struct mca_btl_base_endpoint_t mca_btl_tbrdma_endpoint_t;
OBJ_CLASS_DECLARATION(mca_btl_tbrdma_endpoint_t);

/* A new endpoint for proc on peer_host, reached from local_port to peer->(peer_port). */
mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_create(opal_proc_t *proc, const char *peer_host,
                                                          int local_port, int peer_port,
                                                          const tbrdma_modex_port_t *peer);

/* The endpoint Open MPI knows for ep's peer: ep itself, or the primary of a stripe. */
static inline struct mca_btl_base_endpoint_t *
mca_btl_tbrdma_endpoint_owner(struct mca_btl_base_endpoint_t *ep)
{
    return ep->primary;
}

/* The module's primary endpoint for proc, NULL when it has none. Caller holds module->lock. */
mca_btl_tbrdma_endpoint_t *mca_btl_tbrdma_endpoint_find(mca_btl_tbrdma_module_t *module,
                                                        const opal_proc_t *proc);

/*
 * Creates the endpoint's two queue pairs on dev, posts every receive and fills the connection
 * entry the peer will read (entry->peer_* are the caller's). READY on success; 0 or a negative
 * errno with err set.
 */
int mca_btl_tbrdma_endpoint_setup(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_device_t *dev,
                                  tbrdma_conn_entry_t *entry, char *err, size_t errlen);

/*
 * Connects a READY endpoint of module to the peer's entry: RTR/RTS of both queue pairs, credits
 * from the peer's receive depths, checksums when either side wants them (peer_flags). CONNECTED
 * on success; 0 or a negative errno with err set.
 */
int mca_btl_tbrdma_endpoint_connect(const mca_btl_tbrdma_module_t *module,
                                    mca_btl_tbrdma_endpoint_t *ep, const tbrdma_conn_entry_t *peer,
                                    uint8_t peer_flags, uint64_t now, char *err, size_t errlen);

/*
 * Connects queue pair qp of ep (an endpoint of module), in INIT, to the peer's queue pair
 * peer_qpn (send PSN peer_psn) over the endpoint's cable, sending from PSN psn. 0 or a negative
 * errno with err set.
 */
int mca_btl_tbrdma_endpoint_qp_connect(const mca_btl_tbrdma_module_t *module,
                                       const mca_btl_tbrdma_endpoint_t *ep, tbrdma_vqp_t *qp,
                                       uint32_t peer_qpn, uint32_t peer_psn, uint32_t psn,
                                       char *err, size_t errlen);

/* Declares ep lost with reason (token). Reported to ob1 by an application thread. */
void mca_btl_tbrdma_ep_fail(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            const char *reason);

/*
 * A send frame of module towards a connected ep for size payload bytes (the smallest class that
 * holds it), with one reference and its segment set; NULL when none is free (counted) or size is
 * too large.
 */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_endpoint_frag(mca_btl_tbrdma_module_t *module,
                                                    mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                    uint32_t flags);

/*
 * The same, for ob1's alloc and prepare_src: when the pool is empty, a frame lent from the heap
 * (fabric/btl_tbrdma_frag.h: ob1 would retry a refusal only from a later send's callback). NULL
 * only when ep is not connected, size is too large, or the device lent all it may.
 */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_endpoint_frag_any(mca_btl_tbrdma_module_t *module,
                                                        mca_btl_tbrdma_endpoint_t *ep, size_t size,
                                                        uint32_t flags);

/* Destroys the endpoint's queue pairs (its frames belong to the device). Idempotent. */
void mca_btl_tbrdma_endpoint_release(mca_btl_tbrdma_endpoint_t *ep);

/* "peer 3 on host mac-c (cable mac-a rdma_en3 (en3) <-> mac-c rdma_en2)": for messages. */
void mca_btl_tbrdma_endpoint_describe(const mca_btl_tbrdma_module_t *module,
                                      const mca_btl_tbrdma_endpoint_t *ep, char *buf, size_t len);

#endif /* BTL_TBRDMA_ENDPOINT_H */
