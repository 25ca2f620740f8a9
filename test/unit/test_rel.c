/*
 * Unit tests of plugin/core/tbrdma_rel.c: the per-channel reliability and credit arithmetic.
 * Small cases pin each rule (serial comparisons, acks, NACK once per gap, timeout backoff,
 * grants shrinking while receives are held). Then a model of one channel between two nodes
 * drives it through a wire that drops and corrupts frames, with the two behaviours a frame
 * meeting no posted receive can have: it waits (Apple's hardware credit) or it is dropped
 * (rxe). Every run must deliver every message exactly once and in order, and without loss no
 * frame may ever meet an empty receive queue (the credits alone prevent it).
 */
#include "tbrdma_rel.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tbrdma_rel_timing_t timing = {
    .rto_min_ns = 50000, .rto_max_ns = 800000, .rtt_max_ns = 800000};

static void test_rel_serial_compare_wraps(void)
{
    CU_ASSERT(tbrdma_seq_lt(0xfffffff0u, 5));
    CU_ASSERT(!tbrdma_seq_lt(5, 0xfffffff0u));
    CU_ASSERT(tbrdma_tx_lt(0xfff0, 3));
    CU_ASSERT(!tbrdma_tx_lt(3, 3));
}

static void test_rel_credit_data_and_control(void)
{
    tbrdma_rel_tx_t tx;

    tbrdma_rel_tx_init(&tx, 8, 2, timing.rto_min_ns);
    for (int i = 0; i < 6; i++) {
        CU_ASSERT(tbrdma_rel_tx_credit(&tx, 0));
        tbrdma_rel_tx_take(&tx);
    }
    CU_ASSERT(!tbrdma_rel_tx_credit(&tx, 0)); /* 6 = 8 posted - 2 reserved */
    CU_ASSERT(tbrdma_rel_tx_credit(&tx, 1));  /* control may use the reserve */
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_take(&tx);
    CU_ASSERT(!tbrdma_rel_tx_credit(&tx, 1));
    tbrdma_rel_tx_limit(&tx, 5); /* an older grant changes nothing */
    CU_ASSERT(!tbrdma_rel_tx_credit(&tx, 1));
    tbrdma_rel_tx_limit(&tx, 9);
    CU_ASSERT(tbrdma_rel_tx_credit(&tx, 0));
}

static void test_rel_grant_recovers_dropped_frames(void)
{
    tbrdma_rel_rx_t rx;

    tbrdma_rel_rx_init(&rx, 8, 2);
    CU_ASSERT(6 == tbrdma_rel_rx_limit(&rx));
    /* frames tx 0..4 were sent; 1 and 2 were dropped on the wire */
    tbrdma_rel_rx_arrived(&rx, 0);
    tbrdma_rel_rx_arrived(&rx, 3);
    tbrdma_rel_rx_arrived(&rx, 4);
    CU_ASSERT(5 + 5 - 2 == tbrdma_rel_rx_limit(&rx)); /* seen 5, 5 still posted */
    /* holding the 3 receives shrinks nothing granted before, and grants 3 more on repost */
    for (int i = 0; i < 3; i++) {
        tbrdma_rel_rx_reposted(&rx);
    }
    CU_ASSERT(5 + 8 - 2 == tbrdma_rel_rx_limit(&rx));
    tbrdma_rel_rx_consumed(&rx); /* a receive that completed in error */
    CU_ASSERT(5 + 7 - 2 == tbrdma_rel_rx_limit(&rx));
}

static void test_rel_ack_nack_and_timeout(void)
{
    tbrdma_rel_tx_t tx;

    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    for (int i = 0; i < 5; i++) {
        tbrdma_rel_tx_new_seq(&tx);
        tbrdma_rel_tx_take(&tx);
        tbrdma_rel_tx_sent(&tx, 1000);
    }
    CU_ASSERT(5 == tbrdma_rel_tx_unacked(&tx));
    CU_ASSERT(-1 == tbrdma_rel_tx_ack(&tx, 6, 2000, &timing)); /* never sent */
    CU_ASSERT(2 == tbrdma_rel_tx_ack(&tx, 2, 2000, &timing));
    CU_ASSERT(0 == tbrdma_rel_tx_ack(&tx, 1, 2000, &timing)); /* stale */
    CU_ASSERT(1 == tbrdma_rel_tx_nack(&tx, 2));
    CU_ASSERT(2 == tx.snd_nxt);
    CU_ASSERT(0 == tbrdma_rel_tx_nack(&tx, 2)); /* not twice for the same gap */
    tbrdma_rel_tx_sent(&tx, 3000);
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, 2000 + timing.rto_min_ns - 1, &timing));
    CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, 2000 + timing.rto_min_ns, &timing));
    CU_ASSERT(2 == tx.snd_nxt);
    CU_ASSERT(2 * timing.rto_min_ns == tx.rto_ns);
    /* an ack after the go-back may cover frames beyond snd_nxt */
    CU_ASSERT(3 == tbrdma_rel_tx_ack(&tx, 5, 900000, &timing));
    CU_ASSERT(5 == tx.snd_nxt && 5 == tx.una && 0 == tx.rto_at);
    CU_ASSERT(2 * timing.rto_min_ns == tx.rto_ns); /* Karn: backed off until a new sample */
}

/*
 * A grant spent on frames acknowledged since (an outage lost the retransmissions of frames whose
 * first transmission had arrived): the next frame waits for credit with nothing transmitted
 * unacknowledged. The stall must start the timer, and its expiry make the credit probe due on a
 * channel without a control reserve; without it the channel waited for ever.
 */
static void test_rel_stall_starts_the_probe_timer(void)
{
    tbrdma_rel_tx_t tx;
    uint64_t now = 1000;

    tbrdma_rel_tx_init(&tx, 4, 0, timing.rto_min_ns); /* a bulk channel: 4 receives, no reserve */
    for (int i = 0; i < 4; i++) {                     /* frames 0..3 arrive (tx 0..3) */
        tbrdma_rel_tx_new_seq(&tx);
        tbrdma_rel_tx_take(&tx);
        tbrdma_rel_tx_sent(&tx, now);
    }
    tbrdma_rel_tx_limit(&tx, 8); /* the receiver reposted them: seen 4 + 4 posted */
    now += timing.rto_min_ns;
    CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, now, &timing)); /* their acknowledgement is lost */
    for (int i = 0; i < 4; i++) { /* the go-back's retransmissions (tx 4..7): lost */
        tbrdma_rel_tx_take(&tx);
        tbrdma_rel_tx_sent(&tx, now);
    }
    CU_ASSERT(4 == tbrdma_rel_tx_ack(&tx, 4, now + 10, &timing)); /* a late ack covers them all */
    CU_ASSERT(0 == tx.rto_at);                                    /* nothing transmitted waits */
    tbrdma_rel_tx_new_seq(&tx);                                   /* the next message's frame */
    CU_ASSERT(!tbrdma_rel_tx_credit(&tx, 0)); /* tx 8 >= limit 8, and the receiver saw only 0..3 */
    tbrdma_rel_tx_stall(&tx, now + 10);
    CU_ASSERT(0 != tx.rto_at);
    CU_ASSERT(2 * timing.rto_min_ns == tx.rto_ns); /* still backed off: no sample since */
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, now + 9 + 2 * timing.rto_min_ns, &timing));
    CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, now + 10 + 2 * timing.rto_min_ns, &timing));
    CU_ASSERT(tbrdma_rel_tx_probe_due(&tx));
    tbrdma_rel_tx_take(&tx); /* the probe (tx 8) arrives: the receiver's seen 9 + 4 posted */
    CU_ASSERT(!tbrdma_rel_tx_probe_due(&tx));
    tbrdma_rel_tx_limit(&tx, 13);
    CU_ASSERT(tbrdma_rel_tx_credit(&tx, 0));
    /* a stall while the timer runs leaves it be; an untimed stall is armed at the next clock */
    tbrdma_rel_tx_init(&tx, 0, 0, timing.rto_min_ns);
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_stall(&tx, TBRDMA_REL_UNTIMED);
    tbrdma_rel_tx_clock(&tx, 5000);
    CU_ASSERT(5000 + timing.rto_min_ns == tx.rto_at);
    tbrdma_rel_tx_stall(&tx, 6000);
    CU_ASSERT(5000 + timing.rto_min_ns == tx.rto_at);
}

static void test_rel_backoff_is_capped(void)
{
    tbrdma_rel_tx_t tx;
    uint64_t now = 0;

    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_sent(&tx, now);
    for (int i = 0; i < 20; i++) {
        now += timing.rto_max_ns;
        CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, now, &timing));
        tbrdma_rel_tx_sent(&tx, now);
    }
    CU_ASSERT(timing.rto_max_ns == tx.rto_ns);
}

/* Sends one new frame at t and acknowledges it at t + rtt; returns the timeout then set. */
static uint32_t rel_round_trip(tbrdma_rel_tx_t *tx, uint64_t t, uint64_t rtt,
                               const tbrdma_rel_timing_t *tm)
{
    uint32_t seq = tbrdma_rel_tx_new_seq(tx);

    tbrdma_rel_tx_take(tx);
    tbrdma_rel_tx_sent(tx, t);
    CU_ASSERT(1 == tbrdma_rel_tx_ack(tx, seq + 1, t + rtt, tm));
    return tx->rto_ns;
}

static void test_rel_rto_follows_round_trips(void)
{
    const tbrdma_rel_timing_t tm = {
        .rto_min_ns = 50000, .rto_max_ns = 1000000000, .rtt_max_ns = 1000000000};
    tbrdma_rel_tx_t tx;
    uint64_t t = 0;
    uint32_t rto = 0;

    tbrdma_rel_tx_init(&tx, 16, 2, tm.rto_min_ns);
    CU_ASSERT(30000000 == rel_round_trip(&tx, t, 10000000, &tm)); /* first: srtt + 4 * srtt/2 */
    for (int i = 0; i < 60; i++) {
        t += 20000000;
        rto = rel_round_trip(&tx, t, 10000000, &tm);
    }
    CU_ASSERT(rto >= 10000000 && rto <= 11000000); /* steady: the deviation decays */
    tbrdma_rel_tx_init(&tx, 16, 2, tm.rto_min_ns);
    for (int i = 0; i < 10; i++) {
        t += 20000000;
        rto = rel_round_trip(&tx, t, 10000, &tm);
    }
    CU_ASSERT(tm.rto_min_ns == rto); /* fast round trips: the floor */
    /* Karn: the acknowledgement of a retransmitted frame is no sample */
    rto = tx.srtt_ns;
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_sent(&tx, t);
    CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, t + tm.rto_min_ns, &tm));
    tbrdma_rel_tx_sent(&tx, t + tm.rto_min_ns);
    CU_ASSERT(1 == tbrdma_rel_tx_ack(&tx, tx.next_seq, t + 500000000, &tm));
    CU_ASSERT(rto == tx.srtt_ns);
    /* ... and keeps the backed-off timeout until a new sample (an ack of a frame sent again
       says nothing of the round trip: it may be the first transmission's, late) */
    CU_ASSERT(2 * tm.rto_min_ns == tx.rto_ns);
    t += 600000000;
    rel_round_trip(&tx, t, 10000, &tm);
    CU_ASSERT(tm.rto_min_ns == tx.rto_ns); /* sampled: the estimate again */
}

/*
 * A frame sent outside a progress pass (the application computed since the last one) is sent
 * untimed: its timer runs from the next pass's clock, never from the stale one, and its round
 * trip is timed from there (at most the true one, never one that includes the computation).
 */
static void test_rel_untimed_send_arms_at_next_clock(void)
{
    const uint64_t pass = 1000000, computed = 30000000; /* the last pass; 30 ms of computation */
    tbrdma_rel_tx_t tx;

    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, TBRDMA_REL_UNTIMED); /* at pass + computed, clock unknown */
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, pass + computed, &timing));
    tbrdma_rel_tx_clock(&tx, pass + computed);
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, pass + computed + timing.rto_min_ns - 1, &timing));
    CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, pass + computed + timing.rto_min_ns, &timing));
    /* timed from the clock after the send: a 200 us round trip is sampled as such */
    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, TBRDMA_REL_UNTIMED);
    tbrdma_rel_tx_clock(&tx, pass + computed);
    CU_ASSERT(1 == tbrdma_rel_tx_ack(&tx, 1, pass + computed + 200000, &timing));
    CU_ASSERT(200000 == tx.srtt_ns && 0 == tx.rto_at);
    /* acknowledged before any clock: no sample, nothing left to arm */
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, TBRDMA_REL_UNTIMED);
    CU_ASSERT(1 == tbrdma_rel_tx_ack(&tx, 2, pass + 2 * computed, &timing));
    tbrdma_rel_tx_clock(&tx, pass + 2 * computed);
    CU_ASSERT(200000 == tx.srtt_ns && 0 == tx.rto_at);
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, pass + 3 * computed, &timing));
}

/*
 * A pass reads its clock before it takes the progress token; another thread's pass may have
 * stamped the timed frame later in the meantime. An acknowledgement seen with a clock earlier
 * than the stamp is no sample: it must not wrap into a round trip of 2^64 - d ns (the timeout
 * would then sit at its ceiling).
 */
static void test_rel_sample_never_wraps(void)
{
    const tbrdma_rel_timing_t tm = {
        .rto_min_ns = 50000, .rto_max_ns = 500000000, .rtt_max_ns = 500000000};
    tbrdma_rel_tx_t tx;

    tbrdma_rel_tx_init(&tx, 16, 2, tm.rto_min_ns);
    rel_round_trip(&tx, 1000000, 100000, &tm); /* an estimate of 100 us */
    CU_ASSERT(100000 == tx.srtt_ns);
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, 2000500); /* stamped by a pass whose clock was read later */
    CU_ASSERT(1 == tbrdma_rel_tx_ack(&tx, tx.next_seq, 2000000, &tm));
    CU_ASSERT(100000 == tx.srtt_ns);
    CU_ASSERT(tx.rto_ns < tm.rto_max_ns);
}

/*
 * Round trips longer than the backoff's cap (frames queued behind other ranks' in a busy agent:
 * 0.4 s and more at 8 ranks per Mac on 2 cores): the timeout follows them up to rtt_max, and a
 * frame acknowledged after such a round trip is never sent again before. With the timeout cut
 * at rto_max every frame was sent twice, and the duplicates lengthened the queue further.
 */
static void test_rel_long_round_trips_are_waited_for(void)
{
    const tbrdma_rel_timing_t tm = {
        .rto_min_ns = 4000000, .rto_max_ns = 500000000, .rtt_max_ns = 1250000000};
    const uint64_t rtt = 700000000; /* 0.7 s */
    tbrdma_rel_tx_t tx;
    uint64_t t = 0;
    uint32_t seq;

    tbrdma_rel_tx_init(&tx, 16, 2, tm.rto_min_ns);
    for (int i = 0; i < 20; i++) {
        t += 2 * rtt;
        rel_round_trip(&tx, t, rtt, &tm);
    }
    CU_ASSERT(tx.rto_ns > rtt && tx.rto_ns <= tm.rtt_max_ns);
    /* the next frame, sent at t and acknowledged 0.7 s later: no timeout before */
    t += 2 * rtt;
    seq = tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, t);
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, t + rtt, &tm));
    CU_ASSERT(1 == tbrdma_rel_tx_ack(&tx, seq + 1, t + rtt, &tm));
    /* a real loss: the backoff grows from there up to rtt_max, never down to rto_max */
    t += 2 * rtt;
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, t);
    for (int i = 0; i < 5; i++) {
        t += tm.rtt_max_ns;
        CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, t, &tm));
        CU_ASSERT(tx.rto_ns > rtt);
        tbrdma_rel_tx_sent(&tx, t);
    }
    CU_ASSERT(tm.rtt_max_ns == tx.rto_ns);
    /* a huge round trip (a stalled peer): the timeout stops at rtt_max */
    tbrdma_rel_tx_init(&tx, 16, 2, tm.rto_min_ns);
    rel_round_trip(&tx, t, 3000000000ull, &tm);
    CU_ASSERT(tm.rtt_max_ns == tx.rto_ns);
}

/*
 * A frame whose send has not completed is still in this Mac's send queue (behind other ranks'
 * frames in the agent's): it cannot have been lost, so while that lasts its timer starts again
 * on every pass, and it times out only a whole timeout after it left.
 */
static void test_rel_queued_frame_does_not_time_out(void)
{
    tbrdma_rel_tx_t tx;
    uint64_t now = 1000;

    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, now);
    for (int i = 0; i < 10; i++) { /* 10 timeouts long in the queue, a pass every half */
        now += timing.rto_min_ns / 2;
        tbrdma_rel_tx_queued(&tx, now);
        CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, now, &timing));
    }
    /* it left at now: a whole timeout later, and not before, it is sent again */
    CU_ASSERT(0 == tbrdma_rel_tx_timeout(&tx, now + timing.rto_min_ns - 1, &timing));
    CU_ASSERT(1 == tbrdma_rel_tx_timeout(&tx, now + timing.rto_min_ns, &timing));
    /* nothing armed: nothing to restart */
    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    tbrdma_rel_tx_queued(&tx, now);
    CU_ASSERT(0 == tx.rto_at);
}

/* Karn's rule after a NACK too: the round trip of a frame sent again is never sampled. */
static void test_rel_karn_after_nack(void)
{
    const tbrdma_rel_timing_t tm = {
        .rto_min_ns = 50000, .rto_max_ns = 500000000, .rtt_max_ns = 500000000};
    tbrdma_rel_tx_t tx;

    tbrdma_rel_tx_init(&tx, 16, 2, tm.rto_min_ns);
    rel_round_trip(&tx, 1000000, 100000, &tm); /* an estimate of 100 us */
    for (int i = 0; i < 3; i++) {
        tbrdma_rel_tx_new_seq(&tx);
        tbrdma_rel_tx_take(&tx);
        tbrdma_rel_tx_sent(&tx, 2000000); /* the first of them is timed */
    }
    CU_ASSERT(1 == tbrdma_rel_tx_nack(&tx, tx.una)); /* a gap: go back */
    for (int i = 0; i < 3; i++) {
        tbrdma_rel_tx_take(&tx);
        tbrdma_rel_tx_sent(&tx, 2100000);
    }
    /* acknowledged 300 ms later: the first transmission's time would be a 300 ms sample */
    CU_ASSERT(3 == tbrdma_rel_tx_ack(&tx, tx.next_seq, 302000000, &tm));
    CU_ASSERT(100000 == tx.srtt_ns);
}

/* Frames transmitted and not acknowledged: how long una has not moved, by the pass clocks. */
static void test_rel_unacked_for(void)
{
    tbrdma_rel_tx_t tx;

    tbrdma_rel_tx_init(&tx, 16, 2, timing.rto_min_ns);
    tbrdma_rel_tx_clock(&tx, 1000);
    CU_ASSERT(0 == tbrdma_rel_tx_unacked_for(&tx, 5000)); /* nothing sent */
    tbrdma_rel_tx_new_seq(&tx);
    tbrdma_rel_tx_take(&tx);
    tbrdma_rel_tx_sent(&tx, 2000);
    tbrdma_rel_tx_clock(&tx, 3000);
    CU_ASSERT(7000 == tbrdma_rel_tx_unacked_for(&tx, 10000));
    tbrdma_rel_tx_forgive(&tx, 4000); /* this process stalled 4 us: not the peer's doing */
    CU_ASSERT(3000 == tbrdma_rel_tx_unacked_for(&tx, 10000));
    CU_ASSERT(1 == tbrdma_rel_tx_ack(&tx, 1, 11000, &timing));
    tbrdma_rel_tx_clock(&tx, 12000);
    CU_ASSERT(0 == tbrdma_rel_tx_unacked_for(&tx, 20000));
}

static void test_rel_receiver_verdicts(void)
{
    tbrdma_rel_rx_t rx;

    tbrdma_rel_rx_init(&rx, 8, 2);
    CU_ASSERT(TBRDMA_REL_DELIVER == tbrdma_rel_rx_data(&rx, 0));
    tbrdma_rel_rx_delivered(&rx);
    CU_ASSERT(TBRDMA_REL_DUPLICATE == tbrdma_rel_rx_data(&rx, 0));
    CU_ASSERT(TBRDMA_REL_GAP == tbrdma_rel_rx_data(&rx, 2));
    CU_ASSERT(1 == tbrdma_rel_rx_nack_due(&rx));
    CU_ASSERT(0 == tbrdma_rel_rx_nack_due(&rx));
    CU_ASSERT(tbrdma_rel_rx_owed(&rx, 1));
    CU_ASSERT(!tbrdma_rel_rx_owed(&rx, 2));
    CU_ASSERT(1 == tbrdma_rel_rx_ack_owed(&rx));
    tbrdma_rel_rx_sent(&rx);
    CU_ASSERT(!tbrdma_rel_rx_owed(&rx, 1));
    /* a control frame's receive, posted again, owes a grant of 1 but no acknowledgement */
    tbrdma_rel_rx_arrived(&rx, 0);
    tbrdma_rel_rx_reposted(&rx);
    CU_ASSERT(0 == tbrdma_rel_rx_ack_owed(&rx));
    CU_ASSERT(1 == tbrdma_rel_rx_grant_owed(&rx));
}

/* ---- a channel between two nodes over a lossy wire -------------------------------------- */

#define MODEL_WIRE    4096
#define MODEL_DEPTH_S 12 /* receives the sender posts for the receiver's control frames */
#define MODEL_DEPTH_R 24 /* receives the receiver posts for data */
#define MODEL_RESERVE 3
#define MODEL_ACK_T   6       /* owed frames that trigger a control frame */
#define MODEL_DELAY   20000   /* ns an ack may stay owed before it goes out alone */
#define MODEL_FORCE   400000  /* ns after which it goes out without credit */
#define MODEL_STEP    1000    /* ns per step */
#define MODEL_STEPS   4000000 /* hang guard */

typedef struct frame {
    int data;
    uint32_t seq;
    uint16_t tx;
    uint32_t ack;
    uint16_t lim;
    int nack;
    int areq; /* answer at once (TBRDMA_HF_AREQ) */
    int corrupt;
} frame_t;

typedef struct wire {
    frame_t q[MODEL_WIRE];
    size_t head, count;
} wire_t;

typedef struct node {
    tbrdma_rel_tx_t tx;
    tbrdma_rel_rx_t rx;
    int held;            /* receives kept (not reposted) */
    uint64_t owed_since; /* 0: nothing owed */
    int nack, dup;
    int probe; /* out of credit when the timer expired: ask the peer for its grant */
} node_t;

typedef struct model {
    double drop, corrupt, hold;
    int apple; /* 1: a frame without a posted receive waits; 0: it is dropped (rxe) */
    /*
     * 1: the data channel is a bulk channel: no receives reserved for control frames and none
     * sent on it; the sender's requests for an answer travel on the other (1-frame) channel, so
     * nothing but data frames moves the receiver's `seen` on this one.
     */
    int bulk;
    uint64_t outage_from, outage_to; /* every frame towards the receiver is lost in [from, to) */
    int outage_both;                 /* ... and every frame towards the sender */
    unsigned seed;
    uint32_t n;
    uint64_t now;
    wire_t s2r, r2s;
    node_t s, r;
    uint32_t delivered, misordered;
    long stalls, forced, overrun_drops, ctrl, probes;
} model_t;

static double rnd(model_t *m)
{
    return (double) rand_r(&m->seed) / ((double) RAND_MAX + 1.0);
}

static void wire_push(model_t *m, wire_t *w, frame_t f)
{
    if (rnd(m) < m->drop
        || ((w == &m->s2r || m->outage_both) && m->now >= m->outage_from
            && m->now < m->outage_to)) {
        return;
    }
    f.corrupt = rnd(m) < m->corrupt;
    CU_ASSERT_FATAL(w->count < MODEL_WIRE);
    w->q[(w->head + w->count++) % MODEL_WIRE] = f;
}

/* Builds a frame from node n: its ack and grant for the reverse direction. */
static frame_t node_frame(node_t *n, int data)
{
    frame_t f;

    memset(&f, 0, sizeof(f));
    f.data = data;
    f.ack = n->rx.expected;
    f.lim = tbrdma_rel_rx_limit(&n->rx);
    f.nack = n->nack;
    f.tx = tbrdma_rel_tx_take(&n->tx);
    tbrdma_rel_rx_sent(&n->rx);
    n->nack = n->dup = 0;
    n->owed_since = 0;
    return f;
}

/* Control frame from n if owed (threshold, NACK, duplicate, request, delay), with credit or
 * forced; a node whose timer expired while it had no credit asks for an answer (areq). */
static void node_maybe_ctrl(model_t *m, node_t *n, wire_t *w)
{
    int owed = tbrdma_rel_rx_owed(&n->rx, MODEL_ACK_T) || n->nack || n->dup || n->probe;
    frame_t f;

    if ((tbrdma_rel_rx_ack_owed(&n->rx) > 0 || n->probe) && 0 == n->owed_since) {
        n->owed_since = m->now;
    }
    if (!owed && !(n->owed_since && m->now - n->owed_since >= MODEL_DELAY)) {
        return;
    }
    if (!tbrdma_rel_tx_credit(&n->tx, 1)) {
        if (!(n->owed_since && m->now - n->owed_since >= MODEL_FORCE)) {
            return;
        }
        m->forced++;
    }
    m->ctrl++;
    f = node_frame(n, 0);
    f.areq = n->probe;
    n->probe = 0;
    wire_push(m, w, f);
}

static void sender_transmit(model_t *m)
{
    node_t *s = &m->s;

    while (s->tx.next_seq < m->n && tbrdma_rel_tx_unacked(&s->tx) < 64) {
        tbrdma_rel_tx_new_seq(&s->tx);
    }
    if (tbrdma_rel_tx_timeout(&s->tx, m->now, &timing) && !tbrdma_rel_tx_credit(&s->tx, 0)) {
        s->probe = 1; /* the grant that would let it retransmit may have been lost */
    }
    if (tbrdma_rel_tx_probe_due(&s->tx)) {
        frame_t f = node_frame(s, 0); /* the credit probe: header only, beyond the limit */

        f.areq = 1;
        m->probes++;
        wire_push(m, &m->s2r, f);
    }
    if (s->tx.snd_nxt != s->tx.next_seq && !tbrdma_rel_tx_credit(&s->tx, 0)) {
        tbrdma_rel_tx_stall(&s->tx, m->now); /* as the data path does */
    }
    for (int i = 0; i < 4 && s->tx.snd_nxt != s->tx.next_seq && tbrdma_rel_tx_credit(&s->tx, 0);
         i++) {
        frame_t f = node_frame(s, 1);

        f.seq = s->tx.snd_nxt;
        tbrdma_rel_tx_sent(&s->tx, m->now);
        wire_push(m, &m->s2r, f);
    }
}

/* The receiving side of node n takes one frame: 1 when it took one. */
static int node_receive(model_t *m, node_t *n, wire_t *w, node_t *peer)
{
    frame_t f;

    if (0 == w->count) {
        return 0;
    }
    if (0 == n->rx.posted) {
        m->stalls++;
        if (m->apple) {
            return 0; /* waits for a receive, like Apple's hardware credit */
        }
        m->overrun_drops++;
        w->head = (w->head + 1) % MODEL_WIRE;
        w->count--;
        return 1;
    }
    f = w->q[w->head];
    w->head = (w->head + 1) % MODEL_WIRE;
    w->count--;
    if (f.corrupt) {
        tbrdma_rel_rx_consumed(&n->rx); /* refused by the header or payload check */
    } else {
        tbrdma_rel_rx_arrived(&n->rx, f.tx);
        tbrdma_rel_tx_limit(&n->tx, f.lim);
        if (tbrdma_rel_tx_ack(&n->tx, f.ack, m->now, &timing) >= 0 && f.nack) {
            tbrdma_rel_tx_nack(&n->tx, f.ack);
        }
        n->dup |= f.areq;
        if (f.data) {
            switch (tbrdma_rel_rx_data(&n->rx, f.seq)) {
            case TBRDMA_REL_DELIVER:
                m->misordered += (f.seq != m->delivered);
                m->delivered++;
                tbrdma_rel_rx_delivered(&n->rx);
                break;
            case TBRDMA_REL_DUPLICATE:
                n->dup = 1;
                break;
            case TBRDMA_REL_GAP:
                n->nack |= tbrdma_rel_rx_nack_due(&n->rx);
                break;
            }
        }
    }
    (void) peer;
    if (rnd(m) < m->hold) {
        n->held++;
    } else {
        tbrdma_rel_rx_reposted(&n->rx);
    }
    return 1;
}

static void node_release_held(model_t *m, node_t *n)
{
    while (n->held > 0 && rnd(m) < 0.5) {
        n->held--;
        tbrdma_rel_rx_reposted(&n->rx);
    }
}

/*
 * The sender's side channel on a bulk model: its request for an answer goes on the 1-frame
 * channel (lost in an outage, like any frame), and the receiver answers at once.
 */
static void sender_side_request(model_t *m)
{
    if (m->s.probe && !(m->now >= m->outage_from && m->now < m->outage_to)) { /* s2r is out */
        m->r.dup = 1;
    }
    m->s.probe = 0;
}

/* Runs the model to completion; returns the steps it took (MODEL_STEPS: it hung). */
static long model_run(model_t *m)
{
    int reserve = m->bulk ? 0 : MODEL_RESERVE;
    long step;

    tbrdma_rel_tx_init(&m->s.tx, MODEL_DEPTH_R, reserve, timing.rto_min_ns);
    tbrdma_rel_rx_init(&m->s.rx, MODEL_DEPTH_S, MODEL_RESERVE);
    tbrdma_rel_tx_init(&m->r.tx, MODEL_DEPTH_S, MODEL_RESERVE, timing.rto_min_ns);
    tbrdma_rel_rx_init(&m->r.rx, MODEL_DEPTH_R, reserve);
    for (step = 0; step < MODEL_STEPS; step++) {
        m->now += MODEL_STEP;
        sender_transmit(m);
        for (int i = 0; i < 3 && node_receive(m, &m->r, &m->s2r, &m->s); i++) {
        }
        node_release_held(m, &m->r);
        node_maybe_ctrl(m, &m->r, &m->r2s);
        for (int i = 0; i < 3 && node_receive(m, &m->s, &m->r2s, &m->r); i++) {
        }
        node_release_held(m, &m->s);
        if (m->bulk) {
            sender_side_request(m);
        } else {
            node_maybe_ctrl(m, &m->s, &m->s2r);
        }
        if (m->s.tx.una == m->n && m->delivered == m->n) {
            break;
        }
    }
    return step;
}

static void model_check_ex(double drop, double corrupt, double hold, int apple, unsigned seed,
                           int bulk, uint64_t outage_from, uint64_t outage_to, int outage_both)
{
    model_t *m = calloc(1, sizeof(*m));
    long steps;

    CU_ASSERT_FATAL(NULL != m);
    m->outage_both = outage_both;
    m->bulk = bulk;
    m->outage_from = outage_from;
    m->outage_to = outage_to;
    m->drop = drop;
    m->corrupt = corrupt;
    m->hold = hold;
    m->apple = apple;
    m->seed = seed;
    m->n = 3000;
    steps = model_run(m);
    printf("\n    %sdrop %.2f corrupt %.2f hold %.2f %s seed %u outage %lu us %s: %ld steps, %u "
           "delivered, %ld control frames, %ld stalls, %ld forced, %ld overrun drops, %ld credit "
           "probes",
           bulk ? "bulk " : "", drop, corrupt, hold, apple ? "apple" : "rxe", seed,
           (unsigned long) ((outage_to - outage_from) / 1000),
           outage_both ? "both ways" : "one way", steps, m->delivered, m->ctrl, m->stalls,
           m->forced, m->overrun_drops, m->probes);
    if (steps >= MODEL_STEPS) {
        printf("\n  S.tx una %u snd %u next %u txn %u lim %u rto_at %lu | R.rx exp %u seen %u "
               "posted %u adv %u held %d | R.tx txn %u lim %u | S.rx exp %u seen %u posted %u adv "
               "%u held %d | wires %zu %zu now %lu",
               m->s.tx.una, m->s.tx.snd_nxt, m->s.tx.next_seq, m->s.tx.tx_next, m->s.tx.limit,
               (unsigned long) m->s.tx.rto_at, m->r.rx.expected, m->r.rx.seen, m->r.rx.posted,
               m->r.rx.advertised, m->r.held, m->r.tx.tx_next, m->r.tx.limit, m->s.rx.expected,
               m->s.rx.seen, m->s.rx.posted, m->s.rx.advertised, m->s.held, m->s2r.count,
               m->r2s.count, (unsigned long) m->now);
    }
    CU_ASSERT(steps < MODEL_STEPS);
    CU_ASSERT(m->n == m->delivered);
    CU_ASSERT(0 == m->misordered);
    CU_ASSERT(m->n == m->s.tx.una);
    if (0 == m->forced && 0 == m->probes) {
        CU_ASSERT(0 == m->stalls); /* credits alone kept every frame within posted receives */
    }
    if (!bulk) {
        CU_ASSERT(0 == m->probes); /* a control reserve never needs the credit probe */
    }
    if (0 == drop && 0 == corrupt && outage_to == outage_from) {
        /* no acknowledgement of acknowledgements: at most one control frame per data frame */
        CU_ASSERT(m->ctrl <= (long) m->n);
    }
    free(m);
}

static void model_check(double drop, double corrupt, double hold, int apple, unsigned seed)
{
    model_check_ex(drop, corrupt, hold, apple, seed, 0, 0, 0, 0);
}

static void test_rel_model_clean_wire(void)
{
    model_check(0, 0, 0, 1, 1);
    model_check(0, 0, 0, 0, 2);
}

static void test_rel_model_held_receives(void)
{
    model_check(0, 0, 0.3, 1, 3);
    model_check(0, 0, 0.3, 0, 4);
}

static void test_rel_model_lossy_wire(void)
{
    for (unsigned seed = 10; seed < 14; seed++) {
        model_check(0.05, 0.02, 0.1, 1, seed);
        model_check(0.05, 0.02, 0.1, 0, seed);
    }
    model_check(0.3, 0.1, 0.2, 1, 20);
    model_check(0.3, 0.1, 0.2, 0, 21);
}

/*
 * An outage: the wire loses every frame for a while (a cable reseated or retraining, a Mac
 * stalled), one way or both, long enough for several retransmission timeouts, each of which
 * resends the window
 * and spends credits on frames that never arrive. Afterwards the channel must recover: on the
 * 1-frame channel through its control reserve and forced acknowledgements; on a bulk channel,
 * which has neither, through the one frame a timeout may send beyond the credit limit (without
 * it the sender waits forever for a grant that only an arriving bulk frame can raise).
 */
static void test_rel_model_outage(void)
{
    const uint64_t from = 300000, lengths[] = {20000, 400000, 3000000};

    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        for (int k = 0; k < 4; k++) {
            int apple = k & 1, both = k >> 1;
            unsigned seed = 30 + 10 * (unsigned) i + (unsigned) k;

            model_check_ex(0, 0, 0, apple, seed, 0, from, from + lengths[i], both);
            model_check_ex(0, 0, 0, apple, seed, 1, from, from + lengths[i], both);
            model_check_ex(0.02, 0.01, 0.1, apple, seed, 1, from, from + lengths[i], both);
        }
    }
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_rel_serial_compare_wraps),
        TBRDMA_UT_TEST(test_rel_credit_data_and_control),
        TBRDMA_UT_TEST(test_rel_grant_recovers_dropped_frames),
        TBRDMA_UT_TEST(test_rel_ack_nack_and_timeout),
        TBRDMA_UT_TEST(test_rel_stall_starts_the_probe_timer),
        TBRDMA_UT_TEST(test_rel_backoff_is_capped),
        TBRDMA_UT_TEST(test_rel_rto_follows_round_trips),
        TBRDMA_UT_TEST(test_rel_untimed_send_arms_at_next_clock),
        TBRDMA_UT_TEST(test_rel_sample_never_wraps),
        TBRDMA_UT_TEST(test_rel_long_round_trips_are_waited_for),
        TBRDMA_UT_TEST(test_rel_queued_frame_does_not_time_out),
        TBRDMA_UT_TEST(test_rel_karn_after_nack),
        TBRDMA_UT_TEST(test_rel_unacked_for),
        TBRDMA_UT_TEST(test_rel_receiver_verdicts),
        TBRDMA_UT_TEST(test_rel_model_clean_wire),
        TBRDMA_UT_TEST(test_rel_model_held_receives),
        TBRDMA_UT_TEST(test_rel_model_lossy_wire),
        TBRDMA_UT_TEST(test_rel_model_outage),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("rel", tests);
}
