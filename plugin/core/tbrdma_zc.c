/*
 * Zero-copy large messages: control message codec, chunk sizes, chunk verdicts and epochs
 * (see tbrdma_zc.h and docs/design.md). Message layout, little-endian:
 *    0 u8 type   1 u8 version (1)   2 u16 0   4 u32 epoch
 *    8 u32 qpn (HELLO) | id (GRANT, DONE)    12 u32 psn (HELLO) | len (GRANT, DONE)
 *   16 u64 addr (GRANT)   24 u64 key (GRANT)   32 u32 crc (DONE)   36 u32 status (DONE)
 * A field a type does not use is 0, and a decoder refuses anything else.
 */
#include "tbrdma_zc.h"
#include "tbrdma_le.h"
#include "tbrdma_mutate.h"
#include "tbrdma_wire.h"

#include <errno.h>
#include <string.h>

#define ZC_VERSION  1
#define ZC_QPN_MASK 0xffffffu /* queue pair numbers and PSNs are 24 bits */

void tbrdma_zc_encode(const tbrdma_zc_msg_t *m, uint8_t *buf)
{
    int hello = TBRDMA_ZC_HELLO == m->type;

    memset(buf, 0, TBRDMA_ZC_MSG_BYTES);
    buf[0] = m->type;
    buf[1] = ZC_VERSION;
    tbrdma_put32(buf + 4, m->epoch);
    tbrdma_put32(buf + 8, hello ? m->qpn : m->id);
    tbrdma_put32(buf + 12, hello ? m->psn : m->len);
    if (TBRDMA_ZC_GRANT == m->type) {
        tbrdma_put64(buf + 16, m->addr);
        tbrdma_put64(buf + 24, m->key);
    }
    if (TBRDMA_ZC_DONE == m->type) {
        tbrdma_put32(buf + 32, m->crc);
        tbrdma_put32(buf + 36, m->status);
    }
}

/* The fields of each type are possible; the ones it does not use were 0 on the wire. */
static int zc_fields_sane(const tbrdma_zc_msg_t *m, const uint8_t *buf)
{
    static const uint8_t zero[24];

    switch (m->type) {
    case TBRDMA_ZC_HELLO:
        return m->qpn <= ZC_QPN_MASK && m->psn <= ZC_QPN_MASK && 0 == memcmp(buf + 16, zero, 24);
    case TBRDMA_ZC_GRANT:
        return 0 != m->id && 0 < m->len && m->len <= TBRDMA_MSG_MAX_BYTES
               && 0 == memcmp(buf + 32, zero, 8);
    case TBRDMA_ZC_DONE:
        return 0 != m->id && 0 < m->len && m->len <= TBRDMA_MSG_MAX_BYTES
               && m->status <= TBRDMA_ZC_ST_POSTERR && 0 == memcmp(buf + 16, zero, 16);
    default:
        return 0;
    }
}

int tbrdma_zc_decode(const uint8_t *buf, size_t len, tbrdma_zc_msg_t *m)
{
    tbrdma_zc_msg_t d;

    if (len < TBRDMA_ZC_MSG_BYTES || ZC_VERSION != buf[1] || 0 != tbrdma_get16(buf + 2)) {
        return -EBADMSG;
    }
    memset(&d, 0, sizeof(d));
    d.type = buf[0];
    d.epoch = tbrdma_get32(buf + 4);
    if (TBRDMA_ZC_HELLO == d.type) {
        d.qpn = tbrdma_get32(buf + 8);
        d.psn = tbrdma_get32(buf + 12);
    } else {
        d.id = tbrdma_get32(buf + 8);
        d.len = tbrdma_get32(buf + 12);
    }
    d.addr = tbrdma_get64(buf + 16);
    d.key = tbrdma_get64(buf + 24);
    d.crc = tbrdma_get32(buf + 32);
    d.status = tbrdma_get32(buf + 36);
    if (!zc_fields_sane(&d, buf)) {
        return -EBADMSG;
    }
    *m = d;
    return 0;
}

/* ---- chunks ---------------------------------------------------------------------------- */

static int zc_busy(uint32_t frames, const uint32_t *busy, int nbusy)
{
    for (int i = 0; i < nbusy; i++) {
        if (busy[i] == frames) {
            return 1;
        }
    }
    return 0;
}

uint32_t tbrdma_zc_chunk_len(uint64_t remaining, uint32_t max_len, const uint32_t *busy, int nbusy)
{
    uint32_t len = (remaining < max_len) ? (uint32_t) remaining : max_len;
    uint32_t frames = tbrdma_wire_frames(len), f = frames;

    if (0 == len) {
        return 0;
    }
    while (f > 0 && !TBRDMA_MUTANT(ZC_SAME_FRAMES) && zc_busy(f, busy, nbusy)) {
        f--;
    }
    if (0 == f) {
        return 0;
    }
    return (f == frames) ? len : f * TBRDMA_FRAME_BYTES;
}

/* The receive's own evidence: an error or a foreign length says another chunk landed. */
static tbrdma_zc_reason_t zc_recv_wrong(const tbrdma_zc_chunk_state_t *c)
{
    if (!c->recv_done) {
        return TBRDMA_ZC_WHY_NONE;
    }
    if (0 != c->recv_status) {
        return TBRDMA_ZC_WHY_STATUS;
    }
    return (c->recv_len != c->len) ? TBRDMA_ZC_WHY_LEN : TBRDMA_ZC_WHY_NONE;
}

tbrdma_zc_verdict_t tbrdma_zc_judge(const tbrdma_zc_chunk_state_t *c, uint64_t now,
                                    tbrdma_zc_reason_t *why_p)
{
    tbrdma_zc_reason_t why = zc_recv_wrong(c);

    if (TBRDMA_MUTANT(ZC_ACCEPT_WITHOUT_DONE) && TBRDMA_ZC_WHY_NONE == why && c->recv_done) {
        *why_p = TBRDMA_ZC_WHY_NONE;
        return TBRDMA_ZC_ACCEPT;
    }
    if (TBRDMA_ZC_WHY_NONE == why && c->done_in) {
        if (TBRDMA_ZC_ST_SENT != c->done_status) {
            *why_p = TBRDMA_ZC_WHY_REFUSED;
            return TBRDMA_ZC_REFUSED;
        }
        if (c->done_len != c->len) {
            why = TBRDMA_ZC_WHY_LEN;
        } else if (c->recv_done && c->crc_bad) {
            why = TBRDMA_ZC_WHY_CRC;
        } else if (c->recv_done) {
            *why_p = TBRDMA_ZC_WHY_NONE;
            return TBRDMA_ZC_ACCEPT;
        } else if (now >= c->deadline) {
            why = TBRDMA_ZC_WHY_LOST;
        }
    }
    *why_p = why;
    return (TBRDMA_ZC_WHY_NONE == why) ? TBRDMA_ZC_WAIT : TBRDMA_ZC_RESYNC;
}

const char *tbrdma_zc_reason_name(tbrdma_zc_reason_t why)
{
    static const char *names[TBRDMA_ZC_REASONS] = {
        [TBRDMA_ZC_WHY_NONE] = "none",
        [TBRDMA_ZC_WHY_LOST] = "lost",
        [TBRDMA_ZC_WHY_STATUS] = "bad completion",
        [TBRDMA_ZC_WHY_LEN] = "bad length",
        [TBRDMA_ZC_WHY_CRC] = "bad checksum",
        [TBRDMA_ZC_WHY_REFUSED] = "refused by its owner",
    };

    return (why < TBRDMA_ZC_REASONS) ? names[why] : "unknown reason";
}

/* ---- pace ------------------------------------------------------------------------------ */

static uint32_t zc_pace_clamp(uint64_t ps)
{
    if (ps < TBRDMA_ZC_PACE_START) {
        return TBRDMA_ZC_PACE_START;
    }
    return (ps > TBRDMA_ZC_PACE_MAX) ? TBRDMA_ZC_PACE_MAX : (uint32_t) ps;
}

void tbrdma_zc_pace_init(tbrdma_zc_pace_t *p)
{
    p->ps_per_byte = TBRDMA_ZC_PACE_START;
    p->last_arrival_ns = 0;
}

void tbrdma_zc_pace_arrived(tbrdma_zc_pace_t *p, uint32_t len, uint64_t took_ns)
{
    const uint64_t took_cap = 1ull << 44; /* hours: 2 * 2^44 * 1000 fits 64 bits */
    uint32_t want;

    if (0 == len) {
        return;
    }
    took_ns = (took_ns < took_cap) ? took_ns : took_cap;
    want = zc_pace_clamp(2 * took_ns * 1000 / len); /* twice what a byte took */
    if (want >= p->ps_per_byte) {
        p->ps_per_byte = want;
    } else {
        uint32_t decayed = p->ps_per_byte - p->ps_per_byte / 8;

        p->ps_per_byte = (decayed > want) ? decayed : want;
    }
}

void tbrdma_zc_pace_chunk(tbrdma_zc_pace_t *p, uint32_t len, uint64_t granted_ns,
                          uint64_t arrived_ns)
{
    uint64_t start = (granted_ns > p->last_arrival_ns) ? granted_ns : p->last_arrival_ns;

    tbrdma_zc_pace_arrived(p, len, (arrived_ns > start) ? arrived_ns - start : 0);
    p->last_arrival_ns = arrived_ns;
}

void tbrdma_zc_pace_lost(tbrdma_zc_pace_t *p)
{
    p->ps_per_byte = zc_pace_clamp(2ull * p->ps_per_byte);
}

uint64_t tbrdma_zc_deadline(const tbrdma_zc_pace_t *p, uint64_t done_ns, uint32_t len,
                            uint32_t rto_ns)
{
    uint64_t start = (done_ns > p->last_arrival_ns || TBRDMA_MUTANT(ZC_DEADLINE_FROM_DONE))
                         ? done_ns
                         : p->last_arrival_ns;

    return start + 2ull * rto_ns + (uint64_t) len * p->ps_per_byte / 1000;
}

/* ---- epochs ---------------------------------------------------------------------------- */

tbrdma_zc_hello_action_t tbrdma_zc_on_hello(tbrdma_zc_state_t st, uint32_t my_epoch,
                                            uint32_t peer_epoch, uint32_t peer_qpn)
{
    int32_t ahead = (int32_t) (peer_epoch - my_epoch);

    if (TBRDMA_ZC_QP_NONE == st || TBRDMA_ZC_QP_OFF == st || ahead < 0) {
        return TBRDMA_ZC_HELLO_IGNORE;
    }
    if (0 == peer_qpn) {
        return TBRDMA_ZC_HELLO_OFF;
    }
    if (ahead > 0) {
        return TBRDMA_ZC_HELLO_ADOPT;
    }
    return (TBRDMA_ZC_QP_WAIT == st) ? TBRDMA_ZC_HELLO_CONNECT : TBRDMA_ZC_HELLO_IGNORE;
}
