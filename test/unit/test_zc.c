/*
 * Unit tests of plugin/core/tbrdma_zc.c (zero-copy large messages): the control message codec
 * (exact bytes, hostile input), chunk sizes (pairwise different frame counts), chunk verdicts,
 * epochs (what a HELLO means), work request ids; and a model of the protocol on a lossy UC
 * queue pair that obeys Apple's frame rule, with checksums off: a chunk is only ever accepted
 * when its own bytes landed in its own receive, and every loss ends in a new epoch, never in a
 * wrong or a missing chunk.
 */
#include "tbrdma_wire.h"
#include "tbrdma_zc.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static tbrdma_zc_msg_t msg(uint8_t type)
{
    tbrdma_zc_msg_t m;

    memset(&m, 0, sizeof(m));
    m.type = type;
    m.epoch = 7;
    if (TBRDMA_ZC_HELLO == type) {
        m.qpn = 0x123456;
        m.psn = 0xabcdef;
        return m;
    }
    m.id = 0x1234;
    m.len = 4096 * 1024;
    if (TBRDMA_ZC_GRANT == type) {
        m.addr = 0x7f0012345678ull;
        m.key = 0x55aa55aa55aa55aaull;
    } else {
        m.crc = 0xdeadbeefu;
        m.status = TBRDMA_ZC_ST_NOREG;
    }
    return m;
}

static void test_zc_codec_roundtrip(void)
{
    static const uint8_t types[] = {TBRDMA_ZC_HELLO, TBRDMA_ZC_GRANT, TBRDMA_ZC_DONE};
    uint8_t buf[TBRDMA_ZC_MSG_BYTES];

    for (size_t i = 0; i < sizeof(types); i++) {
        tbrdma_zc_msg_t in = msg(types[i]), out;

        tbrdma_zc_encode(&in, buf);
        CU_ASSERT(0 == tbrdma_zc_decode(buf, sizeof(buf), &out));
        CU_ASSERT(0 == memcmp(&in, &out, sizeof(in)));
    }
}

static void test_zc_codec_exact_bytes(void)
{
    static const uint8_t want[TBRDMA_ZC_MSG_BYTES] = {
        2,    1,    0,    0,    7,    0,    0,    0,    0x34, 0x12, 0,    0,    0,    0,
        0x40, 0,    0x78, 0x56, 0x34, 0x12, 0x00, 0x7f, 0,    0,    0xaa, 0x55, 0xaa, 0x55,
        0xaa, 0x55, 0xaa, 0x55, 0,    0,    0,    0,    0,    0,    0,    0};
    tbrdma_zc_msg_t g = msg(TBRDMA_ZC_GRANT);
    uint8_t buf[TBRDMA_ZC_MSG_BYTES];

    tbrdma_zc_encode(&g, buf);
    CU_ASSERT(0 == memcmp(buf, want, sizeof(want)));
}

/* Encodes m, applies one change, and expects the decoder to refuse it. */
static void refuse(tbrdma_zc_msg_t m, int at, uint8_t value)
{
    uint8_t buf[TBRDMA_ZC_MSG_BYTES];
    tbrdma_zc_msg_t out;

    tbrdma_zc_encode(&m, buf);
    if (0 <= at) {
        buf[at] = value;
    }
    CU_ASSERT(-EBADMSG == tbrdma_zc_decode(buf, sizeof(buf), &out));
}

static void test_zc_codec_hostile_input(void)
{
    tbrdma_zc_msg_t h = msg(TBRDMA_ZC_HELLO), g = msg(TBRDMA_ZC_GRANT), d = msg(TBRDMA_ZC_DONE);
    uint8_t buf[TBRDMA_ZC_MSG_BYTES];
    tbrdma_zc_msg_t out;

    tbrdma_zc_encode(&g, buf);
    for (size_t len = 0; len < sizeof(buf); len++) {
        CU_ASSERT(-EBADMSG == tbrdma_zc_decode(buf, len, &out));
    }
    refuse(g, 0, 0);  /* no such type */
    refuse(g, 0, 4);  /* no such type */
    refuse(g, 1, 2);  /* another version */
    refuse(g, 2, 1);  /* reserved bits */
    refuse(g, 35, 1); /* GRANT carries no status */
    refuse(h, 16, 1); /* HELLO carries no address */
    refuse(h, 11, 1); /* a queue pair number of more than 24 bits */
    refuse(d, 20, 1); /* DONE carries no address */
    refuse(d, 36, 3); /* no such status */
    g.id = 0;
    refuse(g, -1, 0); /* chunk 0 does not exist */
    g = msg(TBRDMA_ZC_GRANT);
    g.len = 0;
    refuse(g, -1, 0);
    g.len = TBRDMA_MSG_MAX_BYTES + 1;
    refuse(g, -1, 0); /* larger than a SEND can be */
}

static void test_zc_chunk_len(void)
{
    const uint32_t max = 1024 * TBRDMA_FRAME_BYTES;
    uint32_t busy[3] = {1024, 1023, 1};

    CU_ASSERT(max == tbrdma_zc_chunk_len(10ull * max, max, NULL, 0));
    CU_ASSERT(5000 == tbrdma_zc_chunk_len(5000, max, NULL, 0)); /* the tail, as it is */
    CU_ASSERT(1023 * TBRDMA_FRAME_BYTES == tbrdma_zc_chunk_len(10ull * max, max, busy, 1));
    CU_ASSERT(1022 * TBRDMA_FRAME_BYTES == tbrdma_zc_chunk_len(10ull * max, max, busy, 2));
    CU_ASSERT(5000 == tbrdma_zc_chunk_len(5000, max, busy, 3)); /* 2 frames: free */
    CU_ASSERT(0 == tbrdma_zc_chunk_len(4096, max, busy, 3));    /* 1 frame: taken */
    CU_ASSERT(0 == tbrdma_zc_chunk_len(0, max, NULL, 0));       /* nothing left */
    CU_ASSERT(2 * TBRDMA_FRAME_BYTES
              == tbrdma_zc_chunk_len(3 * TBRDMA_FRAME_BYTES - 1, max, (uint32_t[]){3}, 1));
}

static void test_zc_chunk_len_windows_distinct(void)
{
    srand(11);
    for (int round = 0; round < 2000; round++) {
        uint32_t busy[TBRDMA_ZC_WINDOW_MAX], max = (uint32_t) (1 + rand() % 8) * TBRDMA_FRAME_BYTES;
        int n = 0, window = 1 + rand() % TBRDMA_ZC_WINDOW_MAX;

        while (n < window) {
            uint64_t remaining = 1 + (uint64_t) rand() % (3 * max);
            uint32_t len = tbrdma_zc_chunk_len(remaining, max, busy, n);
            uint32_t f = tbrdma_wire_frames(len);

            if (0 == len) {
                break;
            }
            CU_ASSERT(len <= remaining && len <= max);
            for (int i = 0; i < n; i++) {
                CU_ASSERT(busy[i] != f);
            }
            busy[n++] = f;
        }
    }
}

static tbrdma_zc_chunk_state_t chunk(uint32_t len)
{
    tbrdma_zc_chunk_state_t c;

    memset(&c, 0, sizeof(c));
    c.len = len;
    return c;
}

static tbrdma_zc_verdict_t judge(const tbrdma_zc_chunk_state_t *c, uint64_t now,
                                 tbrdma_zc_reason_t *why)
{
    return tbrdma_zc_judge(c, now, why);
}

static void test_zc_judge(void)
{
    tbrdma_zc_chunk_state_t c = chunk(8192);
    tbrdma_zc_reason_t why;

    CU_ASSERT(TBRDMA_ZC_WAIT == judge(&c, 0, &why)); /* nothing yet */
    c.recv_done = 1;
    c.recv_len = 8192;
    CU_ASSERT(TBRDMA_ZC_WAIT == judge(&c, 1000000000, &why)); /* data without DONE: wait */
    c.done_in = 1;
    c.done_len = 8192;
    CU_ASSERT(TBRDMA_ZC_ACCEPT == judge(&c, 0, &why));
    c.crc_bad = 1;
    CU_ASSERT(TBRDMA_ZC_RESYNC == judge(&c, 0, &why) && TBRDMA_ZC_WHY_CRC == why);
    c.crc_bad = 0;
    c.recv_len = 8191;
    CU_ASSERT(TBRDMA_ZC_RESYNC == judge(&c, 0, &why) && TBRDMA_ZC_WHY_LEN == why);
    c.recv_len = 8192;
    c.recv_status = 1;
    CU_ASSERT(TBRDMA_ZC_RESYNC == judge(&c, 0, &why) && TBRDMA_ZC_WHY_STATUS == why);
    c = chunk(8192);
    c.recv_status = 1;
    c.recv_done = 1; /* an error completion decides alone */
    CU_ASSERT(TBRDMA_ZC_RESYNC == judge(&c, 0, &why) && TBRDMA_ZC_WHY_STATUS == why);
    c = chunk(8192);
    c.done_in = 1;
    c.done_len = 8192;
    c.deadline = 500;
    CU_ASSERT(TBRDMA_ZC_WAIT == judge(&c, 499, &why)); /* DONE, data still on its way */
    CU_ASSERT(TBRDMA_ZC_RESYNC == judge(&c, 500, &why) && TBRDMA_ZC_WHY_LOST == why);
    c.done_len = 4096;
    CU_ASSERT(TBRDMA_ZC_RESYNC == judge(&c, 0, &why) && TBRDMA_ZC_WHY_LEN == why);
    c.done_len = 8192;
    c.done_status = TBRDMA_ZC_ST_NOREG;
    CU_ASSERT(TBRDMA_ZC_REFUSED == judge(&c, 0, &why) && TBRDMA_ZC_WHY_REFUSED == why);
}

static void test_zc_deadline(void)
{
    tbrdma_zc_pace_t p;

    tbrdma_zc_pace_init(&p); /* 1 ns a byte */
    CU_ASSERT(1000 + 2 * 4000000ull + 4096 == tbrdma_zc_deadline(&p, 1000, 4096, 4000000));
    p.ps_per_byte = 40000; /* 40 ns a byte: a 1 MiB chunk is given 41.9 ms */
    CU_ASSERT(7 + 2 * 10ull + 41943040 == tbrdma_zc_deadline(&p, 7, 1 << 20, 10));
    p.ps_per_byte = TBRDMA_ZC_PACE_MAX; /* the longest: no overflow at the largest chunk */
    CU_ASSERT(16773120ull * 1000 == tbrdma_zc_deadline(&p, 0, 16773120, 0));
}

/* A chunk's data waits on the wire behind the chunks before it, while its DONE may pass them:
 * its time counts from the later of its DONE and the previous chunk's arrival. */
static void test_zc_deadline_wire(void)
{
    tbrdma_zc_pace_t p;
    const uint32_t mib = 1 << 20;

    tbrdma_zc_pace_init(&p);
    p.ps_per_byte = 40000;                         /* 40 ns a byte */
    tbrdma_zc_pace_chunk(&p, mib, 0, 20ull * mib); /* twice 20 ns a byte: stays 40 */
    CU_ASSERT(40000 == p.ps_per_byte);
    /* a 4 KiB chunk whose DONE came long before the 1 MiB chunk ahead of it had arrived */
    CU_ASSERT(20ull * mib + 2 * 10 + 4096 * 40 == tbrdma_zc_deadline(&p, 1000, 4096, 10));
    /* a DONE after that arrival: from the DONE */
    CU_ASSERT(30ull * mib + 4096 * 40 == tbrdma_zc_deadline(&p, 30ull * mib, 4096, 0));
}

/* A chunk still on a slow wire is declared lost a few times at most, not again and again. */
static void test_zc_pace(void)
{
    tbrdma_zc_pace_t p;
    const uint32_t mib = 1 << 20;
    int lost = 0;

    tbrdma_zc_pace_init(&p);
    CU_ASSERT(TBRDMA_ZC_PACE_START == p.ps_per_byte);
    tbrdma_zc_pace_arrived(&p, mib, mib / 4); /* 4 GB/s: stays at the floor */
    CU_ASSERT(TBRDMA_ZC_PACE_START == p.ps_per_byte);
    tbrdma_zc_pace_arrived(&p, mib, 3 * (uint64_t) mib); /* 3 ns a byte: twice that at once */
    CU_ASSERT(6000 == p.ps_per_byte);
    tbrdma_zc_pace_arrived(&p, mib, mib); /* faster again: an eighth less a chunk */
    CU_ASSERT(5250 == p.ps_per_byte);
    for (int i = 0; i < 40; i++) {
        tbrdma_zc_pace_arrived(&p, mib, mib);
    }
    CU_ASSERT(2000 == p.ps_per_byte); /* down to twice what a byte takes, not below */
    /* a wire at 30 MB/s (33 ns a byte): each loss doubles the pace until the chunk fits */
    tbrdma_zc_pace_init(&p);
    while (tbrdma_zc_deadline(&p, 0, mib, 0) < 33ull * mib && lost < 20) {
        tbrdma_zc_pace_lost(&p);
        lost++;
    }
    CU_ASSERT(6 == lost);
    for (int i = 0; i < 30; i++) {
        tbrdma_zc_pace_lost(&p);
    }
    CU_ASSERT(TBRDMA_ZC_PACE_MAX == p.ps_per_byte);
    tbrdma_zc_pace_arrived(&p, mib, UINT64_MAX); /* absurd times stay in range */
    CU_ASSERT(TBRDMA_ZC_PACE_MAX == p.ps_per_byte);
    tbrdma_zc_pace_arrived(&p, 0, 5); /* nothing learnt from nothing */
    CU_ASSERT(TBRDMA_ZC_PACE_MAX == p.ps_per_byte);
}

/* Chunks are served in grant order: a chunk's wire time starts at its grant or at the previous
 * chunk's arrival, whichever came later (two granted at once do not count the first twice). */
static void test_zc_pace_chunk(void)
{
    tbrdma_zc_pace_t p;
    const uint32_t mib = 1 << 20;

    tbrdma_zc_pace_init(&p);
    tbrdma_zc_pace_chunk(&p, mib, 1000, 1000 + 4ull * mib); /* 4 ns a byte from its grant */
    CU_ASSERT(8000 == p.ps_per_byte);
    CU_ASSERT(1000 + 4ull * mib == p.last_arrival_ns);
    /* granted with the first, arrived 4 ns a byte after it: 4, not 8 ns a byte (twice: 8000) */
    tbrdma_zc_pace_chunk(&p, mib, 1000, 1000 + 8ull * mib);
    CU_ASSERT(8000 == p.ps_per_byte);
    /* granted long after: from its grant */
    tbrdma_zc_pace_chunk(&p, mib, 1ull << 40, (1ull << 40) + 5ull * mib);
    CU_ASSERT(10000 == p.ps_per_byte);
    /* a receive completion seen before its grant's time (clock of another pass): no time */
    tbrdma_zc_pace_chunk(&p, mib, 1ull << 41, 1ull << 40);
    CU_ASSERT(8750 == p.ps_per_byte);
}

static void test_zc_hello(void)
{
    CU_ASSERT(TBRDMA_ZC_HELLO_CONNECT == tbrdma_zc_on_hello(TBRDMA_ZC_QP_WAIT, 1, 1, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_IGNORE == tbrdma_zc_on_hello(TBRDMA_ZC_QP_READY, 1, 1, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_ADOPT == tbrdma_zc_on_hello(TBRDMA_ZC_QP_READY, 1, 2, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_ADOPT == tbrdma_zc_on_hello(TBRDMA_ZC_QP_WAIT, 2, 5, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_IGNORE == tbrdma_zc_on_hello(TBRDMA_ZC_QP_WAIT, 3, 2, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_IGNORE == tbrdma_zc_on_hello(TBRDMA_ZC_QP_READY, 3, 2, 0));
    CU_ASSERT(TBRDMA_ZC_HELLO_OFF == tbrdma_zc_on_hello(TBRDMA_ZC_QP_WAIT, 1, 1, 0));
    CU_ASSERT(TBRDMA_ZC_HELLO_OFF == tbrdma_zc_on_hello(TBRDMA_ZC_QP_READY, 1, 4, 0));
    CU_ASSERT(TBRDMA_ZC_HELLO_IGNORE == tbrdma_zc_on_hello(TBRDMA_ZC_QP_NONE, 1, 1, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_IGNORE == tbrdma_zc_on_hello(TBRDMA_ZC_QP_OFF, 1, 2, 0x20));
    CU_ASSERT(TBRDMA_ZC_HELLO_ADOPT == tbrdma_zc_on_hello(TBRDMA_ZC_QP_READY, 0xffffffffu, 0, 9));
}

static void test_zc_wrid(void)
{
    uint64_t id = tbrdma_zc_wrid(0xfedcba98u, 1, 37, 0xabcdef);

    CU_ASSERT(tbrdma_zc_wrid_is_zc(id));
    CU_ASSERT(!tbrdma_zc_wrid_is_zc((uint64_t) (uintptr_t) &id & ~1ull)); /* a frame's pointer */
    CU_ASSERT(0xfedcba98u == tbrdma_zc_wrid_ep(id));
    CU_ASSERT(tbrdma_zc_wrid_send(id) && 37 == tbrdma_zc_wrid_slot(id));
    CU_ASSERT(0xabcdef == tbrdma_zc_wrid_gen(id));
    id = tbrdma_zc_wrid(3, 0, 7, 0x1000001); /* the generation keeps 24 bits */
    CU_ASSERT(!tbrdma_zc_wrid_send(id) && 7 == tbrdma_zc_wrid_slot(id)
              && 1 == tbrdma_zc_wrid_gen(id));
    CU_ASSERT(1 == tbrdma_zc_gen_next(0xffffff));
    CU_ASSERT(2 == tbrdma_zc_gen_next(1));
}

/* ---- the protocol on a lossy UC queue pair --------------------------------------------- */

#define MODEL_RQ 64

/* A receive posted for chunk id (its length), and what landed in it. */
typedef struct model_recv {
    uint32_t id, len;
} model_recv_t;

typedef struct model {
    tbrdma_zc_chunk_state_t st[TBRDMA_ZC_WINDOW_MAX];
    uint32_t id[TBRDMA_ZC_WINDOW_MAX], landed[TBRDMA_ZC_WINDOW_MAX];
    uint64_t off[TBRDMA_ZC_WINDOW_MAX];
    int n;
    model_recv_t rq[MODEL_RQ]; /* posted receives in order, head first */
    int nrq;
    uint64_t next, accepted;
    uint32_t next_id;
    int resyncs, wrong, drop_pct, drops;
} model_t;

/* The owner sends chunk i of the window; UC delivers it into the oldest posted receive under
 * Apple's frame rule (a mismatch fails that receive), or drops it. DONE always arrives. */
static void model_send(model_t *m, int i, uint64_t now)
{
    model_recv_t r;
    int k;

    m->st[i].done_in = 1;
    m->st[i].done_len = m->st[i].len;
    m->st[i].deadline = now + 10;
    if (rand() % 100 < m->drop_pct) {
        m->drops++;
        return;
    }
    r = m->rq[0];
    memmove(m->rq, m->rq + 1, (size_t) (--m->nrq) * sizeof(r));
    for (k = 0; k < m->n && m->id[k] != r.id; k++) {
    }
    if (k == m->n) {
        return;
    }
    m->st[k].recv_done = 1;
    m->st[k].recv_len = m->st[i].len;
    m->st[k].recv_status =
        (tbrdma_wire_frames(m->st[i].len) != tbrdma_wire_frames(r.len) || m->st[i].len > r.len);
    m->landed[k] = m->id[i]; /* whose bytes are in receive k (checksums are off) */
}

static void model_grant(model_t *m, uint64_t total, uint32_t max, int window, uint64_t now)
{
    while (m->n < window && m->next < total) {
        uint32_t busy[TBRDMA_ZC_WINDOW_MAX], len;

        for (int i = 0; i < m->n; i++) {
            busy[i] = tbrdma_wire_frames(m->st[i].len);
        }
        len = tbrdma_zc_chunk_len(total - m->next, max, busy, m->n);
        if (0 == len) {
            return;
        }
        memset(&m->st[m->n], 0, sizeof(m->st[0]));
        m->st[m->n].len = len;
        m->id[m->n] = ++m->next_id;
        m->off[m->n] = m->next;
        m->landed[m->n] = 0;
        m->rq[m->nrq++] = (model_recv_t){m->next_id, len};
        model_send(m, m->n++, now);
        m->next += len;
    }
}

/* The oldest chunk's verdict; 1 when the window moved. */
static int model_judge(model_t *m, uint64_t now)
{
    tbrdma_zc_reason_t why;
    tbrdma_zc_verdict_t v;

    if (0 == m->n) {
        return 0;
    }
    v = tbrdma_zc_judge(&m->st[0], now, &why);
    if (TBRDMA_ZC_ACCEPT == v) {
        m->wrong += (m->landed[0] != m->id[0]);
        m->accepted += m->st[0].len;
        memmove(m->st, m->st + 1, (size_t) (m->n - 1) * sizeof(m->st[0]));
        memmove(m->id, m->id + 1, (size_t) (m->n - 1) * sizeof(m->id[0]));
        memmove(m->landed, m->landed + 1, (size_t) (m->n - 1) * sizeof(m->landed[0]));
        memmove(m->off, m->off + 1, (size_t) (m->n - 1) * sizeof(m->off[0]));
        m->n--;
        return 1;
    }
    if (TBRDMA_ZC_RESYNC == v) { /* new queue pairs: posted receives gone, grant again */
        m->next = m->off[0];
        m->n = 0;
        m->nrq = 0;
        m->resyncs++;
        return 1;
    }
    return 0;
}

static void test_zc_model_lossy_uc(void)
{
    srand(5);
    for (int round = 0; round < 300; round++) {
        model_t m;
        uint32_t max = (uint32_t) (1 + rand() % 6) * TBRDMA_FRAME_BYTES;
        uint64_t total = 1 + (uint64_t) rand() % (40ull * max), now = 0;
        int window = 1 + rand() % TBRDMA_ZC_WINDOW_MAX;

        memset(&m, 0, sizeof(m));
        m.drop_pct = rand() % 30;
        while (m.accepted < total && now < 100000) {
            model_grant(&m, total, max, window, now);
            while (model_judge(&m, now)) {
            }
            now++;
        }
        CU_ASSERT(0 == m.wrong);                  /* never another chunk's bytes */
        CU_ASSERT(total == m.accepted);           /* every byte, once the losses were repaired */
        CU_ASSERT(0 == m.drops || 0 < m.resyncs); /* a loss is noticed, never papered over */
    }
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_zc_codec_roundtrip),
        TBRDMA_UT_TEST(test_zc_codec_exact_bytes),
        TBRDMA_UT_TEST(test_zc_codec_hostile_input),
        TBRDMA_UT_TEST(test_zc_chunk_len),
        TBRDMA_UT_TEST(test_zc_chunk_len_windows_distinct),
        TBRDMA_UT_TEST(test_zc_judge),
        TBRDMA_UT_TEST(test_zc_deadline),
        TBRDMA_UT_TEST(test_zc_deadline_wire),
        TBRDMA_UT_TEST(test_zc_pace),
        TBRDMA_UT_TEST(test_zc_pace_chunk),
        TBRDMA_UT_TEST(test_zc_hello),
        TBRDMA_UT_TEST(test_zc_wrid),
        TBRDMA_UT_TEST(test_zc_model_lossy_uc),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("zc", tests);
}
