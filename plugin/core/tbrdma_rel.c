/*
 * tbrdma channel reliability and credits (see tbrdma_rel.h for the rules). Every function is a
 * few comparisons on the channel's counters; the data path calls them per frame.
 */
#include "tbrdma_rel.h"
#include "tbrdma_mutate.h"

/* ---- sender ---------------------------------------------------------------------------- */

void tbrdma_rel_tx_init(tbrdma_rel_tx_t *tx, uint16_t peer_posted, uint16_t reserve,
                        uint32_t rto_ns)
{
    tx->next_seq = 0;
    tx->una = 0;
    tx->snd_nxt = 0;
    tx->tx_next = 0;
    tx->reserve = reserve;
    tx->limit = (uint16_t) (peer_posted - reserve);
    tx->rto_ns = rto_ns;
    tx->rto_at = 0;
    tx->goback_una = 0;
    tx->goback_done = 0;
    tx->sent_hi = 0;
    tx->timed_seq = 0;
    tx->timed_at = 0;
    tx->timing = 0;
    tx->backed_off = 0;
    tx->srtt_ns = 0;
    tx->rttvar_ns = 0;
    tx->credit_probe = 0;
    tx->watch_una = 0;
    tx->watch_at = 0;
}

int tbrdma_rel_tx_credit(const tbrdma_rel_tx_t *tx, int ctrl)
{
    uint16_t lim = ctrl ? (uint16_t) (tx->limit + tx->reserve) : tx->limit;

    return tbrdma_tx_lt(tx->tx_next, (uint16_t) (lim + TBRDMA_MUTANT(CREDIT_PLUS1)));
}

int tbrdma_rel_tx_probe_due(const tbrdma_rel_tx_t *tx)
{
    return tx->credit_probe && !tbrdma_tx_lt(tx->tx_next, tx->limit);
}

uint16_t tbrdma_rel_tx_take(tbrdma_rel_tx_t *tx)
{
    tx->credit_probe = 0;
    return tx->tx_next++;
}

uint32_t tbrdma_rel_tx_new_seq(tbrdma_rel_tx_t *tx)
{
    return tx->next_seq++;
}

void tbrdma_rel_tx_limit(tbrdma_rel_tx_t *tx, uint16_t lim)
{
    if (tbrdma_tx_lt(tx->limit, lim)) {
        tx->limit = lim;
    }
}

/* One round-trip sample into the estimate (RFC 6298's gains: 1/8 and 1/4). */
static void rel_rtt_sample(tbrdma_rel_tx_t *tx, uint64_t rtt)
{
    uint32_t r = (rtt > UINT32_MAX / 2) ? UINT32_MAX / 2 : (uint32_t) rtt;

    if (0 == tx->srtt_ns) {
        tx->srtt_ns = r ? r : 1;
        tx->rttvar_ns = r / 2;
        return;
    }
    tx->rttvar_ns = tx->rttvar_ns - tx->rttvar_ns / 4
                    + ((r > tx->srtt_ns) ? r - tx->srtt_ns : tx->srtt_ns - r) / 4;
    tx->srtt_ns = tx->srtt_ns - tx->srtt_ns / 8 + r / 8;
}

/* The timeout after an acknowledgement: srtt + 4 rttvar, within [rto_min, rtt_max]. */
static uint32_t rel_rto(const tbrdma_rel_tx_t *tx, const tbrdma_rel_timing_t *t)
{
    uint64_t rto = (uint64_t) tx->srtt_ns + 4 * (uint64_t) tx->rttvar_ns;
    uint32_t cap = TBRDMA_MUTANT(RTT_CAPPED_SHORT) ? t->rto_max_ns : t->rtt_max_ns;

    if (rto < t->rto_min_ns) {
        return t->rto_min_ns;
    }
    return (rto > cap) ? cap : (uint32_t) rto;
}

/*
 * Where the backoff stops: rto_max after short round trips (a pulled cable put back is retried
 * within 0.5 s), rtt_max when the round trip itself is longer than rto_max (duplicates would only
 * lengthen the queue the frames wait in).
 */
static uint32_t rel_backoff_cap(const tbrdma_rel_tx_t *tx, const tbrdma_rel_timing_t *t)
{
    return (rel_rto(tx, t) > t->rto_max_ns) ? t->rtt_max_ns : t->rto_max_ns;
}

uint32_t tbrdma_rel_tx_rto_base(const tbrdma_rel_tx_t *tx, const tbrdma_rel_timing_t *t)
{
    return rel_rto(tx, t);
}

int tbrdma_rel_tx_ack(tbrdma_rel_tx_t *tx, uint32_t ack, uint64_t now, const tbrdma_rel_timing_t *t)
{
    uint32_t n;

    if (TBRDMA_MUTANT(ACK_ONE_TOO_FAR) && tbrdma_seq_lt(tx->una, ack)
        && tbrdma_seq_lt(ack, tx->next_seq)) {
        ack++;
    }
    if (tbrdma_seq_lt(tx->next_seq, ack)) {
        return -1; /* acknowledges frames that do not exist */
    }
    if (!tbrdma_seq_lt(tx->una, ack)) {
        return 0;
    }
    if (tbrdma_seq_lt(tx->snd_nxt, ack)) {
        /* after a go-back, frames sent before it may be acknowledged ahead of snd_nxt */
        tx->snd_nxt = ack;
    }
    n = ack - tx->una;
    tx->una = ack;
    if (tx->timing && tbrdma_seq_lt(tx->timed_seq, ack)) {
        tx->timing = 0;
        /* no sample: an untimed send not stamped yet, or a clock read before another thread's
           pass stamped the frame (now - timed_at would wrap) */
        if (TBRDMA_REL_UNTIMED != tx->timed_at
            && (now >= tx->timed_at || TBRDMA_MUTANT(SAMPLE_WRAPS))) {
            rel_rtt_sample(tx, now - tx->timed_at);
            tx->backed_off = 0;
        }
    }
    if (!tx->backed_off || TBRDMA_MUTANT(BACKOFF_RESET_BY_ACK)) {
        tx->rto_ns = rel_rto(tx, t);
    }
    tx->rto_at = (tx->una != tx->snd_nxt) ? now + tx->rto_ns : 0;
    return (int) n;
}

void tbrdma_rel_tx_sent(tbrdma_rel_tx_t *tx, uint64_t now)
{
    if (!tbrdma_seq_lt(tx->snd_nxt, tx->sent_hi)) { /* a first transmission */
        if (!tx->timing) {
            tx->timing = 1;
            tx->timed_seq = tx->snd_nxt;
            tx->timed_at = now;
        }
        tx->sent_hi = tx->snd_nxt + 1;
    }
    tx->snd_nxt++;
    if (0 == tx->rto_at) {
        tx->rto_at = (TBRDMA_REL_UNTIMED == now) ? TBRDMA_REL_UNTIMED : now + tx->rto_ns;
    }
}

void tbrdma_rel_tx_stall(tbrdma_rel_tx_t *tx, uint64_t now)
{
    if (0 == tx->rto_at && tx->una != tx->next_seq && !TBRDMA_MUTANT(STALL_UNTIMED)) {
        tx->rto_at = (TBRDMA_REL_UNTIMED == now) ? TBRDMA_REL_UNTIMED : now + tx->rto_ns;
    }
}

void tbrdma_rel_tx_clock(tbrdma_rel_tx_t *tx, uint64_t now)
{
    if (tx->timing && TBRDMA_REL_UNTIMED == tx->timed_at) {
        tx->timed_at = now;
    }
    if (TBRDMA_REL_UNTIMED == tx->rto_at) {
        /* armed untimed by a transmission or a stall: runs while any frame is unacknowledged */
        tx->rto_at = (tx->una != tx->next_seq) ? now + tx->rto_ns : 0;
    }
    if (!tbrdma_seq_lt(tx->una, tx->sent_hi)) {
        tx->watch_at = 0; /* nothing transmitted waits */
    } else if (0 == tx->watch_at || tx->watch_una != tx->una) {
        tx->watch_una = tx->una;
        tx->watch_at = now;
    }
}

uint64_t tbrdma_rel_tx_unacked_for(const tbrdma_rel_tx_t *tx, uint64_t now)
{
    if (0 == tx->watch_at || tx->watch_una != tx->una || !tbrdma_seq_lt(tx->una, tx->sent_hi)
        || now < tx->watch_at || TBRDMA_MUTANT(UNACKED_NEVER)) {
        return 0;
    }
    return now - tx->watch_at;
}

void tbrdma_rel_tx_forgive(tbrdma_rel_tx_t *tx, uint64_t ns)
{
    if (0 != tx->watch_at) {
        tx->watch_at += ns;
    }
    if (0 != tx->rto_at && TBRDMA_REL_UNTIMED != tx->rto_at) {
        tx->rto_at += ns;
    }
    if (tx->timing && TBRDMA_REL_UNTIMED != tx->timed_at) {
        tx->timing = 0; /* a round trip across the stall is no sample */
    }
}

void tbrdma_rel_tx_queued(tbrdma_rel_tx_t *tx, uint64_t now)
{
    if (0 != tx->rto_at && TBRDMA_REL_UNTIMED != tx->rto_at && !TBRDMA_MUTANT(QUEUED_TIMED)) {
        tx->rto_at = now + tx->rto_ns;
    }
}

int tbrdma_rel_tx_nack(tbrdma_rel_tx_t *tx, uint32_t ack)
{
    if (ack != tx->una || tx->una == tx->snd_nxt) {
        return 0; /* stale, or nothing transmitted to go back over */
    }
    if (tx->goback_done && tx->goback_una == tx->una) {
        return 0;
    }
    tx->goback_una = tx->una;
    tx->goback_done = 1;
    tx->snd_nxt = tx->una;
    tx->timing = TBRDMA_MUTANT(NACK_KEEPS_TIMING) ? tx->timing : 0;
    return 1;
}

int tbrdma_rel_tx_timeout(tbrdma_rel_tx_t *tx, uint64_t now, const tbrdma_rel_timing_t *t)
{
    uint32_t cap;

    if (0 == tx->rto_at || now < tx->rto_at || tx->una == tx->next_seq
        || TBRDMA_MUTANT(RETRANSMIT_NEVER)) {
        return 0;
    }
    tx->snd_nxt = tx->una;
    tx->goback_una = tx->una;
    tx->goback_done = 1;
    tx->timing = 0;
    cap = rel_backoff_cap(tx, t);
    tx->rto_ns = (tx->rto_ns > cap / 2) ? cap : tx->rto_ns * 2;
    tx->backed_off = 1;
    tx->rto_at = now + tx->rto_ns;
    if (0 == tx->reserve && !tbrdma_tx_lt(tx->tx_next, tx->limit)
        && !TBRDMA_MUTANT(CREDIT_PROBE_NEVER)) {
        tx->credit_probe = 1; /* nothing else can show the receiver its receives are free */
    }
    return 1;
}

/* ---- receiver -------------------------------------------------------------------------- */

void tbrdma_rel_rx_init(tbrdma_rel_rx_t *rx, uint16_t posted, uint16_t reserve)
{
    rx->expected = 0;
    rx->seen = 0;
    rx->posted = posted;
    rx->reserve = reserve;
    rx->advertised = (uint16_t) (posted - reserve);
    rx->acked = 0;
    rx->nacked = 0;
    rx->nack_sent = 0;
}

void tbrdma_rel_rx_arrived(tbrdma_rel_rx_t *rx, uint16_t txi)
{
    if (!tbrdma_tx_lt(txi, rx->seen)) {
        rx->seen = (uint16_t) (txi + 1);
    }
    rx->posted--;
}

void tbrdma_rel_rx_consumed(tbrdma_rel_rx_t *rx)
{
    rx->posted--;
}

void tbrdma_rel_rx_reposted(tbrdma_rel_rx_t *rx)
{
    rx->posted++;
}

tbrdma_rel_verdict_t tbrdma_rel_rx_data(const tbrdma_rel_rx_t *rx, uint32_t seq)
{
    if (seq == rx->expected || (TBRDMA_MUTANT(DUP_DELIVERED) && tbrdma_seq_lt(seq, rx->expected))) {
        return TBRDMA_REL_DELIVER;
    }
    return tbrdma_seq_lt(seq, rx->expected) ? TBRDMA_REL_DUPLICATE : TBRDMA_REL_GAP;
}

void tbrdma_rel_rx_delivered(tbrdma_rel_rx_t *rx)
{
    rx->expected++;
}

uint16_t tbrdma_rel_rx_limit(const tbrdma_rel_rx_t *rx)
{
    return (uint16_t) (rx->seen + rx->posted - rx->reserve);
}

uint32_t tbrdma_rel_rx_ack_owed(const tbrdma_rel_rx_t *rx)
{
    return rx->expected - rx->acked;
}

uint32_t tbrdma_rel_rx_grant_owed(const tbrdma_rel_rx_t *rx)
{
    int32_t grant = (int16_t) (tbrdma_rel_rx_limit(rx) - rx->advertised);

    return (grant > 0) ? (uint32_t) grant : 0;
}

int tbrdma_rel_rx_owed(const tbrdma_rel_rx_t *rx, uint32_t threshold)
{
    return tbrdma_rel_rx_ack_owed(rx) >= threshold || tbrdma_rel_rx_grant_owed(rx) >= threshold;
}

void tbrdma_rel_rx_sent(tbrdma_rel_rx_t *rx)
{
    uint16_t lim = tbrdma_rel_rx_limit(rx);

    rx->acked = rx->expected;
    if (tbrdma_tx_lt(rx->advertised, lim)) {
        rx->advertised = lim;
    }
}

int tbrdma_rel_rx_nack_due(tbrdma_rel_rx_t *rx)
{
    if (rx->nack_sent && rx->nacked == rx->expected) {
        return 0;
    }
    rx->nacked = rx->expected;
    rx->nack_sent = 1;
    return 1;
}
