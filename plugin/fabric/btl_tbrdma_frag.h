/*
 * tbrdma frames and their pools. A frame (mca_btl_tbrdma_frag_t) is one registered buffer of a
 * device (btl_tbrdma_device.h): a 40-byte header followed by payload. Send frames double as ob1
 * descriptors (the descriptor is their first member); receive frames sit posted on a channel's
 * queue pair.
 *
 * Lifetime of a frame: taken from its pool with one reference (ob1's for alloc/prepare_src,
 * the transport's for sendi and control frames); send adds the transport's reference; the
 * transport drops it when the frame is acknowledged and no work request on it is outstanding;
 * ob1 drops its own with btl_free (or tbrdma does, after the callback, for BTL-owned
 * descriptors). The last reference returns it to its pool (an application thread) or to the
 * module's deferred list (the liveness thread, which never touches the pools).
 *
 * Heap frames. ob1 retries a refused packet (an acknowledgement, a FIN, a PUT) only from the
 * completion callback of a later send on the same BTL; a BTL that refuses a descriptor when no
 * send of its own is left to complete stops that rank's traffic for good (seen: Open MPI 5.0's
 * tb_p2p at 8 ranks per Mac, and at 1 per Mac with 16 send frames, with no message). So alloc
 * and prepare_src never refuse for want of a registered frame: when the pool is empty they lend a
 * frame of the same size from the heap (TBRDMA_FRAG_HEAP, the same header room before its
 * payload), up to TBRDMA_HEAP_BYTES_MAX per device. The channel swaps it for a pool frame when
 * its turn to be transmitted comes (channel/btl_tbrdma_chan.c): the pool frame carries it as a
 * train's last piece carries its message, and ob1 hears of the heap frame's completion when the
 * carrier is finished. sendi, which ob1 follows with alloc when it fails, takes pool frames only.
 * The last frames of each data pool (its reserve, 1/16 of it and at least 1) go to carriers only:
 * a carrier is taken when it can be posted at once and comes back with its acknowledgement, while
 * a frame ob1 took may wait in a channel behind a heap frame; without the reserve, ob1's frames
 * queued behind heap frames could hold the whole pool, and the heap frames would wait for ever.
 */
#ifndef BTL_TBRDMA_FRAG_H
#define BTL_TBRDMA_FRAG_H

#include "btl_tbrdma.h"

/* Kinds of frames. */
#define TBRDMA_FRAG_SEND 1 /* a data frame: sequenced, retransmitted until acknowledged */
#define TBRDMA_FRAG_CTRL 2 /* a control frame: sent once */
#define TBRDMA_FRAG_RECV 3 /* a receive buffer */
#define TBRDMA_FRAG_HEAP \
    4 /* a send frame lent from the heap: never posted, a pool frame carries it */

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
    struct mca_btl_tbrdma_pools_t *pools;  /* its device's pools, where it returns */
    struct mca_btl_base_endpoint_t *ep;    /* send: destination; receive: the sending peer */
    uint8_t *buf;                          /* the frame: header, then payload */
    uint32_t cap;                          /* payload bytes the frame holds */
    uint8_t kind;                          /* TBRDMA_FRAG_* */
    uint8_t chan;                          /* TBRDMA_CHAN_EAGER or TBRDMA_CHAN_BULK */
    uint8_t flags;                         /* TBRDMA_FF_* */
    uint8_t tag;                           /* the BTL tag of a data frame */
    _Atomic int refs;
    uint32_t seq;      /* data frame: sequence number on its channel */
    uint32_t len;      /* payload bytes */
    uint32_t pcrc;     /* payload CRC32C (checksummed connections) */
    uint32_t byte_len; /* receive: bytes that arrived */
} mca_btl_tbrdma_frag_t;

#define TBRDMA_POOL_EAGER 0
#define TBRDMA_POOL_BULK  1
#define TBRDMA_POOL_CTRL  2
#define TBRDMA_POOL_PROBE 3 /* bulk-sized control frames: the bulk channel's credit probes */
#define TBRDMA_POOLS      4

/*
 * A device's free send and control frames, by class. The data pools (eager, bulk) are taken by
 * application threads under lock (a no-op unless Open MPI runs with threads); the control pools
 * (control, probe) belong to the token holder and need none.
 */
typedef struct mca_btl_tbrdma_pools_t {
    mca_btl_tbrdma_frag_t *free[TBRDMA_POOLS];
    int nfree[TBRDMA_POOLS];        /* frames in free[] (data pools) */
    int reserve[TBRDMA_POOLS];      /* the last free frames of a data pool, for carriers only */
    mca_btl_tbrdma_frag_t *heap[2]; /* returned heap frames, eager and bulk (kept for reuse) */
    size_t heap_bytes;              /* bytes of heap frames allocated (in use or kept) */
    int heap_frames, heap_kept;     /* heap frames allocated, and of them kept in heap[] */
    opal_mutex_t lock;
} mca_btl_tbrdma_pools_t;

/* Heap frames a device lends at most, in bytes (64 MiB: 16,384 1-frame messages, 940 bulk ones
 * of 68 KiB); past it alloc and prepare_src refuse, and ob1 retries from the callbacks of the
 * heap frames in flight. */
#define TBRDMA_HEAP_BYTES_MAX (64u << 20)

/* Payload bytes of a 1-frame message and of a bulk message. */
static inline uint32_t tbrdma_eager_payload(void)
{
    return TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES;
}

static inline uint32_t tbrdma_bulk_payload(void)
{
    return (uint32_t) mca_btl_tbrdma_component.bulk_frames * TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES;
}

/* btl_tbrdma_train_frames' default: trains of up to 8 pieces (32,448 bytes); a 32 KiB message
 * with ob1's header (9 pieces) goes as one bulk message (docs/design.md, "Trains"). */
#define TBRDMA_TRAIN_FRAMES_DEFAULT 8

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

/* A free frame of pool (TBRDMA_POOL_EAGER or _BULK) with one reference, or NULL when the pool is
 * down to its reserve. */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get(mca_btl_tbrdma_pools_t *pools, int pool);

/* The same for a heap frame's carrier, which may take the reserve: NULL when the pool is empty. */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_get_carrier(mca_btl_tbrdma_pools_t *pools, int pool);

/* Puts a new frame of a data pool in it (device set-up); the pool's reserve follows its size. */
void mca_btl_tbrdma_frag_pool_add(mca_btl_tbrdma_pools_t *pools, int pool,
                                  mca_btl_tbrdma_frag_t *frag);

/*
 * A frame of pool's size (TBRDMA_POOL_EAGER or _BULK) lent from the heap, with one reference, when
 * the pool is empty; NULL when the device lent TBRDMA_HEAP_BYTES_MAX already or malloc failed.
 */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_frag_lend(mca_btl_tbrdma_pools_t *pools, int pool);

/* Frees the heap frames kept in pools; returns how many of those it lent are still out. */
int mca_btl_tbrdma_frag_heap_free(mca_btl_tbrdma_pools_t *pools);

/*
 * Drops one reference; the last one returns the frame to its pool (or the deferred list).
 * Control frames never reach this: their pools are the token holder's (below).
 */
void mca_btl_tbrdma_frag_put(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag);

/* Returns the frames the liveness thread left in module->deferred to their pools. */
void mca_btl_tbrdma_frag_undefer(mca_btl_tbrdma_module_t *module);

/*
 * Control frames (token): header only for the 1-frame channel, bulk-sized for the bulk channel's
 * credit probes. A free one for chan, or NULL when none is left.
 */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_ctrl_get(mca_btl_tbrdma_pools_t *pools, uint8_t chan);

/* Returns a control frame to its pool (token), once completed or never posted. */
void mca_btl_tbrdma_ctrl_return(mca_btl_tbrdma_frag_t *frag);

#endif /* BTL_TBRDMA_FRAG_H */
