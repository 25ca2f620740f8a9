/*
 * The reliability and flow-control arithmetic of one tbrdma channel (one UC queue pair of a
 * connection), in both directions: sequence numbers, cumulative acknowledgements, go-back-N
 * retransmission, and credits that stay exact when UC drops messages. Pure state machines with
 * the clock passed in: the data path (plugin/btl_tbrdma_*.c) owns the frames and the queue
 * pairs and asks these functions what to do. docs/design.md ("Credits", "Reliability") explains
 * the rules; test/unit/test_rel.c drives two channels through a lossy, corrupting wire.
 *
 * Credits. Every frame carries a transmission index tx (16 bits, +1 per frame posted on the
 * queue pair, retransmissions included). A UC queue pair delivers in order and drops without
 * trace, so the receiver knows that every frame still to come has tx >= seen (1 + the last tx it
 * saw), and that each of them needs one posted receive. It therefore grants
 *     limit = seen + posted - reserve
 * and the sender posts a data frame only when tx < limit, a control frame only when
 * tx < limit + reserve. A dropped frame costs no receive and its credit comes back by itself
 * with the next frame's tx; a receive the receiver keeps (not yet reposted) shrinks the grant.
 *
 * Credit probe. That "next frame" must exist. A channel with a control reserve always has one
 * (acknowledgements and probes go within the reserve, or forced). A channel without one (the
 * bulk channel: no control frames) that spent its whole grant on frames an outage lost would
 * wait forever: the receiver's grant moves only when a frame arrives on that queue pair. So a
 * retransmission timeout that finds no credit left on such a channel makes a credit probe due:
 * one control frame (header only, padded to the channel's frame count, asking for an answer)
 * beyond the limit, TCP's zero-window probe. If the receiver has a free receive (the frames were
 * lost), it arrives and the answer's grant covers what was lost; if not (its receives are really
 * in use), Apple's hardware holds the send until one is posted and rxe drops it, both harmless:
 * it carries no data, so nothing waits for it (a data frame beyond the limit could be
 * acknowledged through an earlier transmission while this one still waits in the send queue,
 * and its completion callback, which needs both, would then wait as long as the receiver holds
 * its receives).
 *
 * The probe's timer. A channel can spend its grant on frames that were all acknowledged since:
 * an outage lost the retransmissions and probes of frames whose first transmission had arrived.
 * Its new frames then wait for credit with nothing transmitted unacknowledged, so no frame would
 * time out and no probe become due (seen after outages at two ranks per Mac: a bulk channel
 * stalled for good with the receiver idle). So the timer also runs while a frame waits for credit
 * (tbrdma_rel_tx_stall), and its expiry makes the probe due as above.
 */
#ifndef TBRDMA_REL_H
#define TBRDMA_REL_H

#include <stdint.h>

/* Serial-number comparisons (RFC 1982 style), for 32-bit sequences and 16-bit indices. */
static inline int tbrdma_seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t) (a - b) < 0;
}

static inline int tbrdma_tx_lt(uint16_t a, uint16_t b)
{
    return (int16_t) (a - b) < 0;
}

/* The sending half of a channel. */
typedef struct tbrdma_rel_tx {
    uint32_t next_seq;   /* sequence number the next new DATA frame gets */
    uint32_t una;        /* oldest unacknowledged sequence number (== next_seq: none) */
    uint32_t snd_nxt;    /* next sequence number to (re)transmit; una <= snd_nxt <= next_seq */
    uint16_t tx_next;    /* transmission index of the next frame posted on the queue pair */
    uint16_t limit;      /* credit limit granted by the peer */
    uint16_t reserve;    /* frames beyond limit that control messages may use */
    uint32_t rto_ns;     /* current retransmission timeout (doubles per timeout, capped) */
    uint64_t rto_at;     /* when the oldest transmitted unacked frame times out (0: not armed;
                            TBRDMA_REL_UNTIMED: armed at the next tbrdma_rel_tx_clock) */
    uint32_t goback_una; /* una at the last go-back (a NACK for it is not acted on twice) */
    int goback_done;     /* a go-back for goback_una already happened */
    uint32_t sent_hi;    /* 1 + the highest sequence number transmitted so far */
    uint32_t timed_seq;  /* the frame whose round trip is being timed (first transmissions) */
    uint64_t timed_at;   /* when it was transmitted */
    int timing;          /* a round trip is being timed (Karn: never across a go-back) */
    int backed_off;      /* a timeout doubled rto_ns: it stays so until a new round-trip sample
                            (Karn: acknowledgements of frames sent again do not reset it) */
    uint32_t srtt_ns;    /* smoothed round trip (0: no sample yet) */
    uint32_t rttvar_ns;  /* its mean deviation */
    int credit_probe;    /* a timeout found no credit left: a probe may go beyond the limit */
    uint32_t watch_una;  /* una when watch_at was taken */
    uint64_t watch_at;   /* since when transmitted frames wait with una unchanged (0: none) */
} tbrdma_rel_tx_t;

/* The receiving half of a channel. */
typedef struct tbrdma_rel_rx {
    uint32_t expected;   /* next in-order sequence number */
    uint16_t seen;       /* 1 + the last transmission index seen on the queue pair */
    uint16_t posted;     /* receives posted and not completed */
    uint16_t reserve;    /* receives kept for control messages */
    uint16_t advertised; /* the limit last sent to the peer */
    uint32_t acked;      /* the ack value last sent to the peer */
    uint32_t nacked;     /* expected value of the last NACK sent */
    int nack_sent;       /* a NACK was sent for nacked */
} tbrdma_rel_rx_t;

/*
 * Retransmission timing of a channel. The timeout after an acknowledgement is the smoothed round
 * trip plus four mean deviations (RFC 6298, one frame timed per round trip, never a
 * retransmitted one), at least rto_min: the round trip includes the receiver's delay before it
 * acknowledges, which grows when its application computes outside MPI and only the liveness
 * thread answers, and a timeout shorter than that only sends duplicates.
 */
typedef struct tbrdma_rel_timing {
    uint32_t rto_min_ns; /* least timeout after an acknowledgement */
    uint32_t rto_max_ns; /* cap of the exponential backoff from a short round trip */
    uint32_t rtt_max_ns; /* cap of the timeout a long measured round trip sets (>= rto_max):
                            a round trip longer than rto_max (frames queued behind others in a
                            busy agent) must not be retransmitted before its acknowledgement */
} tbrdma_rel_timing_t;

/* What a receiver does with a DATA frame. */
typedef enum tbrdma_rel_verdict {
    TBRDMA_REL_DELIVER,   /* the next in-order frame: deliver it, then tbrdma_rel_rx_delivered */
    TBRDMA_REL_DUPLICATE, /* already delivered: drop it, acknowledge again */
    TBRDMA_REL_GAP,       /* an earlier frame is missing: drop it, NACK (go-back-N) */
} tbrdma_rel_verdict_t;

/* ---- sender ---------------------------------------------------------------------------- */

/* A fresh channel: the peer posted peer_posted receives, reserve of them for control. */
void tbrdma_rel_tx_init(tbrdma_rel_tx_t *tx, uint16_t peer_posted, uint16_t reserve,
                        uint32_t rto_ns);

/* 1 when a frame may be posted now: a DATA frame (ctrl 0) or a control frame (ctrl 1). */
int tbrdma_rel_tx_credit(const tbrdma_rel_tx_t *tx, int ctrl);

/* 1 when the channel has no credit and a timeout made the credit probe due (see above). */
int tbrdma_rel_tx_probe_due(const tbrdma_rel_tx_t *tx);

/* Takes the transmission index for a frame about to be posted (a probe ends the one due). */
uint16_t tbrdma_rel_tx_take(tbrdma_rel_tx_t *tx);

/* A new DATA frame: its sequence number. */
uint32_t tbrdma_rel_tx_new_seq(tbrdma_rel_tx_t *tx);

/* A limit granted by the peer; older (smaller) grants are ignored. */
void tbrdma_rel_tx_limit(tbrdma_rel_tx_t *tx, uint16_t lim);

/*
 * A cumulative acknowledgement (the peer expects ack next). Returns how many frames it newly
 * acknowledges (0 when stale); -1 when it acknowledges frames never sent (a bogus ack: ignored).
 * Takes a round-trip sample when it covers the timed frame, sets the timeout from the estimate
 * (unless a timeout backed it off and no new sample came since: Karn's rule, RFC 6298 5.7) and
 * re-arms the timer from now when frames stay unacknowledged.
 */
int tbrdma_rel_tx_ack(tbrdma_rel_tx_t *tx, uint32_t ack, uint64_t now,
                      const tbrdma_rel_timing_t *t);

/*
 * The frame snd_nxt was transmitted: advance snd_nxt; arms the timer if it is idle. now may be
 * TBRDMA_REL_UNTIMED when the caller has no fresh clock (a send outside a progress pass, after
 * the application computed): the timer is then armed, and the round trip timed, from the next
 * tbrdma_rel_tx_clock. A stale clock instead would arm a timer already expired (a spurious
 * go-back-N) and time a round trip that includes the computation.
 */
#define TBRDMA_REL_UNTIMED UINT64_MAX
void tbrdma_rel_tx_sent(tbrdma_rel_tx_t *tx, uint64_t now);

/*
 * The frame at snd_nxt waits for credit: the timer starts unless it runs (see "The probe's
 * timer" above), so that a timeout, and on a channel without a control reserve the credit probe,
 * follows if no grant comes. now may be TBRDMA_REL_UNTIMED, as for tbrdma_rel_tx_sent.
 */
void tbrdma_rel_tx_stall(tbrdma_rel_tx_t *tx, uint64_t now);

/*
 * A fresh clock (each progress pass): arms and stamps what was sent untimed since the last, and
 * watches acknowledgement progress (tbrdma_rel_tx_unacked_for).
 */
void tbrdma_rel_tx_clock(tbrdma_rel_tx_t *tx, uint64_t now);

/*
 * The oldest unacknowledged frame's transmission has not left this host yet (its send has not
 * completed: it waits in the send queue, or in the agent's behind other ranks' frames): nothing
 * can have been lost, so its timer starts again from now (called on every pass while that lasts;
 * a timeout would only queue a duplicate behind it). The watchdog and liveness still judge the
 * wait.
 */
void tbrdma_rel_tx_queued(tbrdma_rel_tx_t *tx, uint64_t now);

/* A NACK at ack: 1 when the sender goes back (snd_nxt = una) now, 0 when it already did. */
int tbrdma_rel_tx_nack(tbrdma_rel_tx_t *tx, uint32_t ack);

/*
 * Timer check: 1 when the retransmission timer expired with frames unacknowledged; the sender
 * then goes back to una, the timeout doubles (up to rto_max, or up to rtt_max when the
 * round-trip estimate's timeout is longer than rto_max) and the timer is re-armed. On a
 * channel without a control reserve whose credit is spent, it makes the credit probe due.
 */
int tbrdma_rel_tx_timeout(tbrdma_rel_tx_t *tx, uint64_t now, const tbrdma_rel_timing_t *t);

/* The timeout an acknowledgement sets now: the round-trip estimate within the timing's bounds. */
uint32_t tbrdma_rel_tx_rto_base(const tbrdma_rel_tx_t *tx, const tbrdma_rel_timing_t *t);

/*
 * How long frames already transmitted have waited without any acknowledgement progress (una
 * unchanged), as seen by the clocks given to tbrdma_rel_tx_clock; 0 when none is outstanding. A
 * live peer acknowledges every frame it receives, even while its application computes (the
 * liveness thread), so a wait as long as the peer timeout means the channel no longer carries
 * data, whatever else still arrives from the peer.
 */
uint64_t tbrdma_rel_tx_unacked_for(const tbrdma_rel_tx_t *tx, uint64_t now);

/* Moves the channel's clocks forward by ns: time the process itself did not run (a stall). */
void tbrdma_rel_tx_forgive(tbrdma_rel_tx_t *tx, uint64_t ns);

/* Frames sent or queued and not yet acknowledged. */
static inline uint32_t tbrdma_rel_tx_unacked(const tbrdma_rel_tx_t *tx)
{
    return tx->next_seq - tx->una;
}

/* ---- receiver -------------------------------------------------------------------------- */

/* A fresh channel with posted receives, reserve of them kept for control messages. */
void tbrdma_rel_rx_init(tbrdma_rel_rx_t *rx, uint16_t posted, uint16_t reserve);

/* A frame (any type) with transmission index txi completed one receive. */
void tbrdma_rel_rx_arrived(tbrdma_rel_rx_t *rx, uint16_t txi);

/* A receive completed without a usable frame (error status or a refused frame). */
void tbrdma_rel_rx_consumed(tbrdma_rel_rx_t *rx);

/* A receive was posted again. */
void tbrdma_rel_rx_reposted(tbrdma_rel_rx_t *rx);

/* Classifies a DATA frame's sequence number. */
tbrdma_rel_verdict_t tbrdma_rel_rx_data(const tbrdma_rel_rx_t *rx, uint32_t seq);

/* The in-order frame was delivered. */
void tbrdma_rel_rx_delivered(tbrdma_rel_rx_t *rx);

/* The credit limit to grant now. */
uint16_t tbrdma_rel_rx_limit(const tbrdma_rel_rx_t *rx);

/* DATA frames delivered since the last acknowledgement sent. */
uint32_t tbrdma_rel_rx_ack_owed(const tbrdma_rel_rx_t *rx);

/* Credits granted since the last grant sent (0 when the grant shrank). */
uint32_t tbrdma_rel_rx_grant_owed(const tbrdma_rel_rx_t *rx);

/*
 * 1 when at least threshold frames are owed an acknowledgement, or threshold credits a grant.
 * A grant alone is never owed for fewer: a control frame's own receive, posted again, raises
 * the grant by one, and answering that with another control frame never ends.
 */
int tbrdma_rel_rx_owed(const tbrdma_rel_rx_t *rx, uint32_t threshold);

/* The ack and limit just went out in a frame. */
void tbrdma_rel_rx_sent(tbrdma_rel_rx_t *rx);

/* 1 when a NACK for the current gap should go out (once per expected value). */
int tbrdma_rel_rx_nack_due(tbrdma_rel_rx_t *rx);

#endif /* TBRDMA_REL_H */
