/*
 * tbrdma frames and devices. A frame (mca_btl_tbrdma_frag_t) is one registered buffer of a
 * device: a 40-byte header followed by payload. Send frames double as ob1 descriptors (the
 * descriptor is their first member); receive frames sit posted on a channel's queue pair.
 *
 * A device (mca_btl_tbrdma_device_t) is one cable end this process uses: the verbs device, one
 * slab of page-aligned memory registered as ONE memory region (Apple allows about 100 per
 * device, shared by every process of the Mac), carved into
 *   - per endpoint: eager_depth 1-frame receives and bulk_depth bulk receives,
 *   - send_frames 1-frame send frames and bulk_send_frames bulk send frames (shared pools),
 *   - control frames (header only), and one bulk-sized control frame per endpoint for the bulk
 *     channel's credit probes (core/tbrdma_rel.h: a header padded to the bulk frame count).
 *
 * Lifetime of a frame: taken from its pool with one reference (ob1's for alloc/prepare_src,
 * the transport's for sendi and control frames); send adds the transport's reference; the
 * transport drops it when the frame is acknowledged and no work request on it is outstanding;
 * ob1 drops its own with btl_free (or tbrdma does, after the callback, for BTL-owned
 * descriptors). The last reference returns it to its pool (an application thread) or to the
 * module's deferred list (the liveness thread, which never touches the pools).
 */
#ifndef BTL_TBRDMA_FRAG_H
#define BTL_TBRDMA_FRAG_H

#include "btl_tbrdma.h"
#include "btl_tbrdma_verbs.h"

/* Kinds of frames. */
#define TBRDMA_FRAG_SEND 1 /* a data frame: sequenced, retransmitted until acknowledged */
#define TBRDMA_FRAG_CTRL 2 /* a control frame: sent once */
#define TBRDMA_FRAG_RECV 3 /* a receive buffer */

/* Frame flags (changed by the token holder only). */
#define TBRDMA_FF_POSTED 0x01 /* a work request on the frame is outstanding */
#define TBRDMA_FF_QUEUED 0x02 /* in a channel's send list (unacknowledged or waiting) */
#define TBRDMA_FF_CB     0x04 /* ob1 waits for the completion callback */
#define TBRDMA_FF_HELD   0x08 /* received in order, delivery left to an application thread */
#define TBRDMA_FF_SENT   0x10 /* transmitted at least once (a later transmission is a retry) */
#define TBRDMA_FF_ACKED  0x20 /* acknowledged, its callback waits for the send completion */
#define TBRDMA_FF_MORE   0x40 /* a piece of a train that the next frame of the channel continues */
#define TBRDMA_FF_BEYOND 0x80 /* a control frame posted beyond the peer's grant */

typedef struct mca_btl_tbrdma_frag_t {
    mca_btl_base_descriptor_t base;        /* first: ob1 sees the descriptor */
    mca_btl_base_segment_t segment;        /* the payload, after the header */
    struct mca_btl_tbrdma_frag_t *next;    /* pool, send list, held list, deferred list */
    struct mca_btl_tbrdma_frag_t *cb_next; /* module's list of callbacks to run */
    struct mca_btl_tbrdma_frag_t *train;   /* a train's last piece: the message it carries */
    struct mca_btl_tbrdma_device_t *dev;
    struct mca_btl_base_endpoint_t *ep; /* send: destination; receive: the sending peer */
    uint8_t *buf;                       /* the frame: header, then payload */
    uint32_t cap;                       /* payload bytes the frame holds */
    uint8_t kind;                       /* TBRDMA_FRAG_* */
    uint8_t chan;                       /* TBRDMA_CHAN_EAGER or TBRDMA_CHAN_BULK */
    uint8_t flags;                      /* TBRDMA_FF_* */
    uint8_t tag;                        /* the BTL tag of a data frame */
    _Atomic int refs;
    uint32_t seq;      /* data frame: sequence number on its channel */
    uint32_t len;      /* payload bytes */
    uint32_t pcrc;     /* payload CRC32C (checksummed connections) */
    uint32_t byte_len; /* receive: bytes that arrived */
} mca_btl_tbrdma_frag_t;

typedef struct mca_btl_tbrdma_device_t {
    int port;            /* index in module->local.ports */
    tbrdma_vdev_t *vdev; /* NULL once released */
    tbrdma_vmr_t mr;     /* the one memory region of the slab */
    uint8_t *slab;
    size_t slab_bytes;
    mca_btl_tbrdma_frag_t *frags; /* every frame of the device */
    int nfrags;
    mca_btl_tbrdma_frag_t *recv_next; /* receive frames not yet given to an endpoint */
    mca_btl_tbrdma_frag_t *pool[4];   /* free send frames: eager, bulk, control, probe */
    opal_mutex_t pool_lock;           /* application threads (MPI_THREAD_MULTIPLE) */
    int neps;                         /* endpoints on this device */
    uint64_t port_checked_ns;         /* last look at the port state (failure diagnosis) */
    int cq_backlog; /* the last poll filled its batch: completions may still wait */
    struct mca_btl_tbrdma_rcache_t *zc; /* registrations of user memory (zero-copy), or NULL */
} mca_btl_tbrdma_device_t;

#define TBRDMA_POOL_EAGER 0
#define TBRDMA_POOL_BULK  1
#define TBRDMA_POOL_CTRL  2
#define TBRDMA_POOL_PROBE 3 /* bulk-sized control frames: the bulk channel's credit probes */
#define TBRDMA_POOLS      4

/* Payload bytes of a 1-frame message and of a bulk message. */
static inline uint32_t tbrdma_eager_payload(void)
{
    return TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES;
}

static inline uint32_t tbrdma_bulk_payload(void)
{
    return (uint32_t) mca_btl_tbrdma_component.bulk_frames * TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES;
}

/* Payload bytes of the longest train (btl_tbrdma_train_frames, at most a bulk message's frames
 * of 1-frame payload); 0 when trains are off. */
static inline uint32_t tbrdma_train_payload(void)
{
    int n = mca_btl_tbrdma_component.train_frames;

    if (n > mca_btl_tbrdma_component.bulk_frames) {
        n = mca_btl_tbrdma_component.bulk_frames;
    }
    return (n > 1) ? (uint32_t) n * tbrdma_eager_payload() : 0;
}

/* ob1's eager limit by default: the longest train, or one frame with trains off. */
static inline uint32_t tbrdma_eager_limit(void)
{
    return (0 < tbrdma_train_payload()) ? tbrdma_train_payload() : tbrdma_eager_payload();
}

/*
 * Opens local port `port` for neps endpoints: the verbs device, its completion queue, the slab,
 * its memory region and every frame. Returns the device, or NULL with err set.
 */
mca_btl_tbrdma_device_t *mca_btl_tbrdma_device_create(mca_btl_tbrdma_module_t *module, int port,
                                                      int neps, char *err, size_t errlen);

/* Deregisters the slab and closes the verbs device (queue pairs must be gone). Idempotent. */
void mca_btl_tbrdma_device_release(mca_btl_tbrdma_device_t *dev);

/* Frees what release left: the slab and the frames. */
void mca_btl_tbrdma_device_free(mca_btl_tbrdma_device_t *dev);

/* Takes count consecutive receive frames of the device for one channel. */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_device_take_recv(mca_btl_tbrdma_device_t *dev, int count,
                                                       uint8_t chan);

/*
 * A send frame towards a connected ep for size payload bytes (the smallest class that holds
 * it), with one reference and its segment set; NULL when none is free or size is too large.
 */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_for(struct mca_btl_base_endpoint_t *ep, size_t size,
                                               uint32_t flags);

/* A free frame of pool (TBRDMA_POOL_*) with one reference, or NULL when the pool is empty. */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get(mca_btl_tbrdma_device_t *dev, int pool);

/*
 * Drops one reference; the last one returns the frame to its pool (or the deferred list).
 * Control frames never reach this: their pool is the token holder's (btl_tbrdma_send.c).
 */
void mca_btl_tbrdma_frag_put(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag);

/* Send and control frames of dev not in their pools (finalize: a leak when not 0). */
int mca_btl_tbrdma_device_frames_out(mca_btl_tbrdma_device_t *dev);

/* Returns the frames the liveness thread left in module->deferred to their pools. */
void mca_btl_tbrdma_frag_undefer(mca_btl_tbrdma_module_t *module);

/* ob1's entry points (btl.h): alloc, free, prepare_src. */
mca_btl_base_descriptor_t *mca_btl_tbrdma_alloc(struct mca_btl_base_module_t *btl,
                                                struct mca_btl_base_endpoint_t *endpoint,
                                                uint8_t order, size_t size, uint32_t flags);
int mca_btl_tbrdma_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
mca_btl_base_descriptor_t *mca_btl_tbrdma_prepare_src(struct mca_btl_base_module_t *btl,
                                                      struct mca_btl_base_endpoint_t *endpoint,
                                                      struct opal_convertor_t *convertor,
                                                      uint8_t order, size_t reserve, size_t *size,
                                                      uint32_t flags);

#endif /* BTL_TBRDMA_FRAG_H */
