/*
 * Zero-copy large messages: the pure logic (docs/design.md, "Zero-copy large messages").
 * Apple has no RDMA READ or WRITE, so tbrdma emulates ob1's get over SEND on a third UC queue
 * pair per peer: the receiver (the get's initiator) posts a receive straight into the user's
 * buffer for one chunk and grants it over the reliable eager channel; the data owner sends the
 * chunk from its user buffer, then DONE(chunk, length, CRC32C) on the eager channel. A chunk
 * carries no header (one SGE per work request), so everything that identifies it comes from the
 * control messages and from these rules:
 *   - chunks outstanding at once on a queue pair span pairwise different numbers of 4 KiB
 *     frames (tbrdma_zc_chunk_len), so a chunk that lands in another chunk's receive (an earlier
 *     one was lost) fails Apple's frame rule instead of passing for it;
 *   - a chunk is accepted only when its receive completed with its exact length and its DONE
 *     agrees (length, CRC32C when checksums are on) (tbrdma_zc_judge);
 *   - anything else (a lost chunk, an error completion, a bad length or checksum) starts a new
 *     epoch: both ends destroy their zero-copy queue pairs, create new ones and exchange HELLO
 *     (tbrdma_zc_on_hello), and the receiver grants its unaccepted chunks again, so nothing
 *     stale can land anywhere.
 * Opal-free and verbs-free; test/unit/test_zc.c drives it.
 */
#ifndef TBRDMA_ZC_H
#define TBRDMA_ZC_H

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_ZC_MSG_BYTES  40 /* every control message: header 8, body 32 */
#define TBRDMA_ZC_WINDOW_MAX 8  /* chunks in flight per queue pair and direction */
#define TBRDMA_ZC_WRID_TAG   1u /* bit 0 of a work request id: a zero-copy work request */

/* Control message types. */
enum tbrdma_zc_type {
    TBRDMA_ZC_HELLO = 1, /* the sender's zero-copy queue pair for an epoch (0: it has none) */
    TBRDMA_ZC_GRANT = 2, /* receiver to owner: a receive is posted, send this chunk */
    TBRDMA_ZC_DONE = 3,  /* owner to receiver: the chunk was sent (or why not) */
};

/* DONE status. */
#define TBRDMA_ZC_ST_SENT    0 /* sent */
#define TBRDMA_ZC_ST_NOREG   1 /* the range is not (or no longer) registered by the owner */
#define TBRDMA_ZC_ST_POSTERR 2 /* the owner could not post the send */

typedef struct tbrdma_zc_msg {
    uint8_t type;    /* enum tbrdma_zc_type */
    uint32_t epoch;  /* the epoch the message belongs to */
    uint32_t qpn;    /* HELLO: the sender's zero-copy queue pair, 0 = none */
    uint32_t psn;    /* HELLO: its send PSN */
    uint32_t id;     /* GRANT, DONE: the chunk (chosen by the receiver, never 0) */
    uint32_t len;    /* GRANT, DONE: its bytes */
    uint64_t addr;   /* GRANT: where it starts in the owner's memory */
    uint64_t key;    /* GRANT: the owner's registration (the cookie of its handle) */
    uint32_t crc;    /* DONE: CRC32C of the bytes sent (0 without checksums) */
    uint32_t status; /* DONE: TBRDMA_ZC_ST_* */
} tbrdma_zc_msg_t;

/* Encodes m into buf (TBRDMA_ZC_MSG_BYTES bytes). */
void tbrdma_zc_encode(const tbrdma_zc_msg_t *m, uint8_t *buf);

/* Decodes len bytes; 0, or -EBADMSG (short, unknown type, reserved bits, impossible fields). */
int tbrdma_zc_decode(const uint8_t *buf, size_t len, tbrdma_zc_msg_t *m);

/* ---- chunks ---------------------------------------------------------------------------- */

/*
 * The length of the next chunk of an operation with remaining bytes: at most max_len (a
 * multiple of 4 KiB), shortened to whole frames until it spans a number of frames that no
 * outstanding chunk spans (busy[0..nbusy)). 0 when none fits (wait for a chunk to finish).
 */
uint32_t tbrdma_zc_chunk_len(uint64_t remaining, uint32_t max_len, const uint32_t *busy, int nbusy);

/* What the receiver knows of one outstanding chunk. */
typedef struct tbrdma_zc_chunk_state {
    uint32_t len;         /* granted bytes */
    int recv_done;        /* its receive completed */
    int recv_status;      /* the completion's status (0 = success) */
    uint32_t recv_len;    /* the completion's byte_len */
    int done_in;          /* its DONE came */
    uint32_t done_len;    /* DONE's length */
    uint32_t done_status; /* DONE's status */
    int crc_bad;          /* both came and the data's CRC32C differs from DONE's */
    uint64_t deadline;    /* DONE came and the data had until then to arrive (ns) */
} tbrdma_zc_chunk_state_t;

typedef enum tbrdma_zc_verdict {
    TBRDMA_ZC_WAIT,    /* not decided yet */
    TBRDMA_ZC_ACCEPT,  /* the chunk is in the user's buffer, whole and right */
    TBRDMA_ZC_RESYNC,  /* start a new epoch and grant it again (see reason) */
    TBRDMA_ZC_REFUSED, /* the owner cannot send it: new epoch, and the operation fails */
} tbrdma_zc_verdict_t;

/* Why a chunk was not accepted (counters). */
typedef enum tbrdma_zc_reason {
    TBRDMA_ZC_WHY_NONE,
    TBRDMA_ZC_WHY_LOST,    /* DONE came, the data did not in time */
    TBRDMA_ZC_WHY_STATUS,  /* the receive completed with an error (frame rule, flush) */
    TBRDMA_ZC_WHY_LEN,     /* a length that is not the chunk's */
    TBRDMA_ZC_WHY_CRC,     /* the data's CRC32C is not DONE's */
    TBRDMA_ZC_WHY_REFUSED, /* the owner did not send it */
    TBRDMA_ZC_REASONS
} tbrdma_zc_reason_t;

/* The verdict on a chunk at time now; *why_p says why when it is not WAIT or ACCEPT. */
tbrdma_zc_verdict_t tbrdma_zc_judge(const tbrdma_zc_chunk_state_t *c, uint64_t now,
                                    tbrdma_zc_reason_t *why_p);

/* "lost", "bad completion", ...: a reason's name, for messages. */
const char *tbrdma_zc_reason_name(tbrdma_zc_reason_t why);

/* ---- pace: how long a chunk's data may take after its DONE ------------------------------ */

/*
 * A chunk whose DONE came is declared lost when its data has not arrived within two
 * retransmission timeouts of the reliable channel plus its length at the connection's pace,
 * counted from when the wire could be this chunk's: its DONE, or the previous chunk's arrival,
 * whichever was later (the owner sends chunks in order on one queue pair, so a chunk's data
 * waits behind the data of the chunks before it, while its DONE may pass them).
 * The pace is learnt: it starts at 1 ns a byte (1 GB/s: the link model's rate; Apple's cable
 * carries about 9 GB/s), rises at once to twice the time a byte of an accepted chunk took on
 * the wire (a slower or shared link), decays by an eighth a chunk towards it, and doubles at
 * each chunk declared lost, up to 1 us a byte (1 MB/s). A fixed 1 GB/s declared chunks still on
 * a slower wire lost again and again (Soft-RoCE under qemu: 20-50 ms a 1 MiB chunk), each time
 * throwing away the queue pair and the bytes on their way.
 */
typedef struct tbrdma_zc_pace {
    uint32_t ps_per_byte;     /* picoseconds a byte may take (1000: 1 GB/s) */
    uint64_t last_arrival_ns; /* when the last accepted chunk's data arrived */
} tbrdma_zc_pace_t;

#define TBRDMA_ZC_PACE_START 1000u    /* 1 ns a byte: the start and the floor */
#define TBRDMA_ZC_PACE_MAX   1000000u /* 1 us a byte: the most a pace backs off to */

void tbrdma_zc_pace_init(tbrdma_zc_pace_t *p);

/* A chunk of len bytes was accepted; its data took took_ns on the wire (from when the owner
 * could start it: its grant, or the previous chunk's arrival, whichever was later). */
void tbrdma_zc_pace_arrived(tbrdma_zc_pace_t *p, uint32_t len, uint64_t took_ns);

/* A chunk of len bytes granted at granted_ns was accepted, its data arrived at arrived_ns: the
 * owner serves grants in order, so the wire was this chunk's from its grant or the previous
 * chunk's arrival, whichever came later (tbrdma_zc_pace_arrived with that time). */
void tbrdma_zc_pace_chunk(tbrdma_zc_pace_t *p, uint32_t len, uint64_t granted_ns,
                          uint64_t arrived_ns);

/* A chunk was declared lost: the next ones are given twice as long. */
void tbrdma_zc_pace_lost(tbrdma_zc_pace_t *p);

/* When the data of a chunk of len bytes whose DONE came at done_ns is declared lost: from the
 * later of done_ns and the previous chunk's arrival, two rto_ns plus its length at the pace. */
uint64_t tbrdma_zc_deadline(const tbrdma_zc_pace_t *p, uint64_t done_ns, uint32_t len,
                            uint32_t rto_ns);

/* ---- epochs ---------------------------------------------------------------------------- */

typedef enum tbrdma_zc_state {
    TBRDMA_ZC_QP_NONE,  /* no zero-copy queue pair on this connection */
    TBRDMA_ZC_QP_WAIT,  /* a queue pair for the epoch exists, the peer's HELLO has not come */
    TBRDMA_ZC_QP_READY, /* connected to the peer's queue pair of the epoch */
    TBRDMA_ZC_QP_OFF,   /* given up (the peer has none, or a queue pair could not be made) */
} tbrdma_zc_state_t;

typedef enum tbrdma_zc_hello_action {
    TBRDMA_ZC_HELLO_IGNORE,  /* stale or duplicate */
    TBRDMA_ZC_HELLO_CONNECT, /* connect our queue pair of this epoch to the peer's: READY */
    TBRDMA_ZC_HELLO_ADOPT,   /* the peer started a later epoch: make a new queue pair, connect
                                it, send our HELLO for that epoch, grant again */
    TBRDMA_ZC_HELLO_OFF,     /* the peer has no queue pair: destroy ours, zero-copy is off */
} tbrdma_zc_hello_action_t;

/* What a HELLO (peer_epoch, peer_qpn) means in state st at epoch my_epoch. */
tbrdma_zc_hello_action_t tbrdma_zc_on_hello(tbrdma_zc_state_t st, uint32_t my_epoch,
                                            uint32_t peer_epoch, uint32_t peer_qpn);

/* ---- work request ids ------------------------------------------------------------------ */

/*
 * A zero-copy work request's id: bit 0 set (frames' ids are aligned pointers, bit 0 clear),
 * bit 1 send, bits 2..7 the chunk slot, bits 8..31 a generation (24 bits, never 0 for a
 * receive), bits 32..63 the endpoint's index.
 */
static inline uint64_t tbrdma_zc_wrid(uint32_t ep_index, int send, uint32_t slot, uint32_t gen)
{
    return ((uint64_t) ep_index << 32) | ((uint64_t) (gen & 0xffffffu) << 8)
           | ((uint64_t) (slot & 0x3fu) << 2) | (send ? 2u : 0u) | TBRDMA_ZC_WRID_TAG;
}

static inline int tbrdma_zc_wrid_is_zc(uint64_t wr_id)
{
    return 0 != (wr_id & TBRDMA_ZC_WRID_TAG);
}

static inline uint32_t tbrdma_zc_wrid_ep(uint64_t wr_id)
{
    return (uint32_t) (wr_id >> 32);
}

static inline int tbrdma_zc_wrid_send(uint64_t wr_id)
{
    return 0 != (wr_id & 2u);
}

static inline uint32_t tbrdma_zc_wrid_slot(uint64_t wr_id)
{
    return (uint32_t) (wr_id >> 2) & 0x3fu;
}

static inline uint32_t tbrdma_zc_wrid_gen(uint64_t wr_id)
{
    return (uint32_t) (wr_id >> 8) & 0xffffffu;
}

/* The generation after gen (24 bits, skipping 0). */
static inline uint32_t tbrdma_zc_gen_next(uint32_t gen)
{
    gen = (gen + 1) & 0xffffffu;
    return (0 == gen) ? 1 : gen;
}

#endif /* TBRDMA_ZC_H */
