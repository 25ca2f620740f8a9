/*
 * The layout of a job's shared segment on one Mac (docs/design.md, "The job's segment"): what the
 * per-Mac agent and the job's local ranks share, and where each piece lives.
 *
 *   header      constants (magic, version, the geometry), the agent's pid, heartbeat and state,
 *               and per cable the agent's real queue pair numbers and send PSN
 *   per rank    a control line (the rank's pid and state) and three hand-off rings
 *               (core/tbrdma_ring.h): to the agent (the rank's send slots filled, and the
 *               agent's receive slots it has emptied: an index says which), from the agent
 *               (receive slots for this rank), done (send slots whose SEND completed)
 *   descriptors one per frame slot: length, cable, channel, status
 *   slab        the frame slots, 16 KiB aligned (an Apple silicon page), registered once by the
 *               agent as one memory region: per rank its own send slots, 1-frame and bulk; the
 *               agent's receive slots, 1-frame and bulk
 *
 * A ring entry is a slot's index. Each ring has room for every slot its producer can own at once,
 * so no push can ever find it full. Everything the plan computes comes from the geometry in the
 * header, so an attacher re-plans from what the creator wrote and checks it against the segment's
 * size before it reads anything else. Opal-free, verbs-free.
 */
#ifndef TBRDMA_AGENTSEG_H
#define TBRDMA_AGENTSEG_H

#include "tbrdma_ring.h"
#include "tbrdma_types.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TBRDMA_AGENTSEG_MAGIC     0x74626167u /* "tbag" */
#define TBRDMA_AGENTSEG_VERSION   2u          /* 2: cables carry their device, peer and link */
#define TBRDMA_AGENTSEG_PAGE      16384u      /* slab alignment: an Apple silicon page */
#define TBRDMA_AGENTSEG_SLOTS_MAX (1u << 20)
#define TBRDMA_AGENTSEG_ERR_BYTES 256

/* The sizes a segment is made of (all counts; per rank means for each local rank). */
typedef struct tbrdma_agentseg_geom {
    uint32_t nranks;      /* local ranks, 1..255 */
    uint32_t ncables;     /* cables of this Mac in the job, 1..TBRDMA_MAX_PORTS */
    uint32_t bulk_frames; /* K: frames of a bulk slot, 2..4095 */
    uint32_t tx_eager;    /* per rank: 1-frame send slots */
    uint32_t tx_bulk;     /* per rank: bulk send slots */
    uint32_t rx_eager;    /* the agent's 1-frame receive slots */
    uint32_t rx_bulk;     /* the agent's bulk receive slots */
} tbrdma_agentseg_geom_t;

/* Where everything is (byte offsets from the segment's start). */
typedef struct tbrdma_agentseg_plan {
    tbrdma_agentseg_geom_t g;
    uint32_t to_ring_cap;   /* to the agent: >= every send slot of the rank + every receive slot */
    uint32_t from_ring_cap; /* from the agent: >= rx_eager + rx_bulk */
    uint32_t done_ring_cap; /* done: >= tx_eager + tx_bulk */
    size_t to_ring_bytes, from_ring_bytes, done_ring_bytes; /* whole cache lines each */
    size_t rank_off, rank_stride; /* rank r's control line at rank_off + r * rank_stride */
    size_t desc_off;              /* the descriptors, one per slot */
    size_t slab_off;              /* the frame slots */
    uint32_t nslots;              /* every slot: the ranks' send slots, then the agent's */
    size_t total;                 /* bytes the segment needs */
} tbrdma_agentseg_plan_t;

/* One slot's descriptor (written by the slot's producer before it pushes the index). */
typedef struct tbrdma_agentseg_desc {
    uint32_t len;   /* bytes of the message in the slot */
    uint16_t cable; /* the cable (index into the header's cables) it goes out or came in on */
    uint8_t chan;   /* TBRDMA_CHAN_EAGER or TBRDMA_CHAN_BULK */
    uint8_t status; /* done ring: 0, or the send's error */
} tbrdma_agentseg_desc_t;

/* The agent's state, in the header. */
enum tbrdma_agentseg_state {
    TBRDMA_AGENTSEG_STARTING = 0,
    TBRDMA_AGENTSEG_READY = 1,  /* the agent's queue pairs exist: cables[] is valid */
    TBRDMA_AGENTSEG_FAILED = 2, /* it could not set up: error[] says why */
    TBRDMA_AGENTSEG_GONE = 3    /* it ended */
};

/* A cable's link between this Mac's agent and the peer Mac's (header's cables[k].link). */
enum tbrdma_agentseg_link {
    TBRDMA_AGENTSEG_LINK_NONE = 0,      /* no peer given yet */
    TBRDMA_AGENTSEG_LINK_CLAIMED = 1,   /* a rank is writing the peer's fields */
    TBRDMA_AGENTSEG_LINK_REQUESTED = 2, /* the peer's fields are written: the agent connects */
    TBRDMA_AGENTSEG_LINK_CONNECTED = 3, /* RTR/RTS done: frames may flow */
    TBRDMA_AGENTSEG_LINK_FAILED = 4     /* the connection failed: the header's error says why */
};

typedef struct tbrdma_agentseg_cable {
    /* written by the creator, before the agent starts */
    char device[32]; /* the verbs device (rdma_enX) */
    uint32_t port_num;
    /* written by the agent before READY */
    uint32_t qpn[2]; /* the agent's real queue pair per channel */
    uint32_t psn;    /* their send PSN */
    /* the peer, written by the rank that claimed the link (CLAIMED), read by the agent once
     * REQUESTED: the peer agent's queue pairs of this cable, its send PSN, its port's GID,
     * and this port's source GID index and the path MTU (ibv_mtu: 1..5) */
    uint32_t peer_qpn[2];
    uint32_t peer_psn;
    int32_t sgid_index;
    int32_t mtu;
    uint8_t peer_gid[16];
    _Atomic uint32_t link;   /* enum tbrdma_agentseg_link */
    _Atomic uint32_t active; /* the agent: 1 while the port is ACTIVE (looked at every 100 ms) */
} tbrdma_agentseg_cable_t;

/* What the ranks ask of the agent (header's request). */
enum tbrdma_agentseg_request {
    TBRDMA_AGENTSEG_REQ_WAIT = 0, /* started: wait (no queue pair yet) */
    TBRDMA_AGENTSEG_REQ_GO = 1,   /* the job uses the agent: open the cables, then READY */
    TBRDMA_AGENTSEG_REQ_QUIT = 2  /* the job does not use it (or ends): leave at once */
};

typedef struct tbrdma_agentseg_hdr {
    _Alignas(TBRDMA_RING_LINE) uint32_t magic;
    uint32_t version;
    tbrdma_agentseg_geom_t geom;
    uint32_t creator_pid; /* the rank that made the segment and started the agent */
    uint32_t agent_pid;
    _Alignas(TBRDMA_RING_LINE) _Atomic uint64_t heartbeat; /* the agent adds 1 per beat */
    _Atomic uint32_t state;                                /* enum tbrdma_agentseg_state */
    _Atomic uint32_t request;                              /* enum tbrdma_agentseg_request */
    char error[TBRDMA_AGENTSEG_ERR_BYTES];                 /* FAILED: one line, the agent's */
    tbrdma_agentseg_cable_t cables[TBRDMA_MAX_PORTS];
} tbrdma_agentseg_hdr_t;

/* A rank's control line. */
enum tbrdma_agentseg_rank_state {
    TBRDMA_AGENTSEG_RANK_FREE = 0,
    TBRDMA_AGENTSEG_RANK_ATTACHED = 1,
    TBRDMA_AGENTSEG_RANK_DETACHED = 2 /* it finalized */
};

typedef struct tbrdma_agentseg_rank {
    _Alignas(TBRDMA_RING_LINE) _Atomic uint32_t pid;
    _Atomic uint32_t state; /* enum tbrdma_agentseg_rank_state */
} tbrdma_agentseg_rank_t;

/* Plans a segment of geometry g. 0, or -EINVAL naming nothing (a count out of its range, or
 * more slots than TBRDMA_AGENTSEG_SLOTS_MAX). */
int tbrdma_agentseg_plan(const tbrdma_agentseg_geom_t *g, tbrdma_agentseg_plan_t *p);

/* Lays out a new segment in base (bytes long, zeroed, TBRDMA_AGENTSEG_PAGE aligned): the header
 * (state STARTING), every rank's control line and rings. 0, -EINVAL or -ENOSPC. */
int tbrdma_agentseg_init(void *base, size_t bytes, const tbrdma_agentseg_plan_t *p);

/* Reads the plan of an existing segment from its header: 0, or -EPROTO (not a segment of this
 * version, or a geometry out of range) / -ENOSPC (the plan does not fit bytes). */
int tbrdma_agentseg_read(const void *base, size_t bytes, tbrdma_agentseg_plan_t *p);

/* Slot indices: rank r's send slot i (bulk or not), the agent's receive slot i. UINT32_MAX when
 * out of range. */
uint32_t tbrdma_agentseg_tx_slot(const tbrdma_agentseg_plan_t *p, uint32_t r, int bulk, uint32_t i);
uint32_t tbrdma_agentseg_rx_slot(const tbrdma_agentseg_plan_t *p, int bulk, uint32_t i);

/* A slot's bytes (4096 or K x 4096), its offset in the segment, and its owner: the local rank
 * whose send slot it is, or -1 for the agent's receive slots. A slot out of range: 0 bytes,
 * offset 0, owner -2. */
uint32_t tbrdma_agentseg_slot_bytes(const tbrdma_agentseg_plan_t *p, uint32_t slot);
size_t tbrdma_agentseg_slot_off(const tbrdma_agentseg_plan_t *p, uint32_t slot);
int tbrdma_agentseg_slot_owner(const tbrdma_agentseg_plan_t *p, uint32_t slot);

/* Rank r's three rings (to the agent, from the agent, done): offset, capacity and bytes. */
size_t tbrdma_agentseg_ring_off(const tbrdma_agentseg_plan_t *p, uint32_t r, int which);
uint32_t tbrdma_agentseg_ring_cap(const tbrdma_agentseg_plan_t *p, int which);
size_t tbrdma_agentseg_ring_bytes(const tbrdma_agentseg_plan_t *p, int which);
#define TBRDMA_AGENTSEG_TO_AGENT   0
#define TBRDMA_AGENTSEG_FROM_AGENT 1
#define TBRDMA_AGENTSEG_DONE       2

#endif /* TBRDMA_AGENTSEG_H */
