/*
 * Unit tests of plugin/core/tbrdma_vport.c (a rank's side of the per-Mac agent), against a
 * stand-in agent in this test: two Macs' segments, each with 2 local ranks; the stand-in moves
 * every send slot a rank hands over into a free receive slot of the other Mac (none free: the
 * frame is lost, as on a UC queue pair with no receive posted), routes it by its header
 * (tbrdma_route_frame) and says the send is done. Checked: a frame crosses and arrives whole, with
 * its completion on both sides; a frame with no receive posted is dropped and its slot comes back;
 * the frame rule fails a receive; a frame for a connection the rank does not have is dropped;
 * send slots run out and come back; the bulk channel; the control reserve (data frames leave an
 * eighth of the send slots to acknowledgements); 2,000 frames in order with every slot back at the
 * end; an agent that hands over a slot that is not a receive slot is reported.
 */
#include "tbrdma_route.h"
#include "tbrdma_vport.h"
#include "tbrdma_wire.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static tbrdma_agentseg_geom_t geom = {.nranks = 2,
                                      .ncables = 1,
                                      .bulk_frames = 3,
                                      .tx_eager = 4,
                                      .tx_bulk = 2,
                                      .rx_eager = 8,
                                      .rx_bulk = 2};

/* One simulated Mac: its segment and the stand-in agent's view of it. */
typedef struct mac {
    uint8_t *seg;
    tbrdma_agentseg_plan_t p;
    tbrdma_ring_t to[2], from[2], done[2]; /* the agent's ends */
    uint32_t pool[2][16], npool[2];        /* free receive slots per channel */
    tbrdma_route_table_t routes;
    tbrdma_vport_t vp[2];
} mac_t;

static mac_t A, B;

static void mac_up(mac_t *m)
{
    void *mem = NULL;

    memset(m, 0, sizeof(*m));
    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(&geom, &m->p));
    CU_ASSERT_FATAL(0 == posix_memalign(&mem, TBRDMA_AGENTSEG_PAGE, m->p.total));
    m->seg = mem;
    memset(m->seg, 0, m->p.total);
    CU_ASSERT_FATAL(0 == tbrdma_agentseg_init(m->seg, m->p.total, &m->p));
    for (uint32_t r = 0; r < 2; r++) {
        tbrdma_ring_t *ring[3] = {&m->to[r], &m->from[r], &m->done[r]};

        for (int w = 0; w < 3; w++) {
            CU_ASSERT_FATAL(0
                            == tbrdma_ring_attach(ring[w],
                                                  m->seg + tbrdma_agentseg_ring_off(&m->p, r, w),
                                                  tbrdma_agentseg_ring_bytes(&m->p, w), 0 != w));
        }
        CU_ASSERT_FATAL(0 == tbrdma_vport_open(&m->vp[r], m->seg, m->p.total, r, 8));
        tbrdma_route_attach(&m->routes, r);
    }
    for (uint32_t i = 0; i < geom.rx_eager; i++) {
        m->pool[0][m->npool[0]++] = tbrdma_agentseg_rx_slot(&m->p, 0, i);
    }
    for (uint32_t i = 0; i < geom.rx_bulk; i++) {
        m->pool[1][m->npool[1]++] = tbrdma_agentseg_rx_slot(&m->p, 1, i);
    }
}

static void mac_down(mac_t *m)
{
    tbrdma_vport_close(&m->vp[0]);
    tbrdma_vport_close(&m->vp[1]);
    free(m->seg);
}

static tbrdma_agentseg_desc_t *desc_of(mac_t *m, uint32_t slot)
{
    return (tbrdma_agentseg_desc_t *) (m->seg + m->p.desc_off) + slot;
}

/* The stand-in agent's send of one slot of src's rank r to dst. */
static void agent_send(mac_t *src, uint32_t r, uint32_t slot, mac_t *dst)
{
    const tbrdma_agentseg_desc_t *d = desc_of(src, slot);
    unsigned to = 99;

    if (0 < dst->npool[d->chan]) {
        uint32_t rx = dst->pool[d->chan][--dst->npool[d->chan]];
        uint8_t *frame = dst->seg + tbrdma_agentseg_slot_off(&dst->p, rx);

        memcpy(frame, src->seg + tbrdma_agentseg_slot_off(&src->p, slot), d->len);
        *desc_of(dst, rx) = (tbrdma_agentseg_desc_t){.len = d->len, .chan = d->chan};
        if (TBRDMA_ROUTE_TO_RANK == tbrdma_route_frame(&dst->routes, frame, d->len, d->chan, &to)) {
            CU_ASSERT(0 == tbrdma_ring_push(&dst->from[to], rx));
        } else {
            dst->pool[d->chan][dst->npool[d->chan]++] = rx;
        }
    } /* else: the agent had no receive posted: the frame is lost */
    CU_ASSERT(0 == tbrdma_ring_push(&src->done[r], slot));
}

/* One pass of the stand-in agent over src's ranks' rings towards dst. */
static void agent_pass(mac_t *src, mac_t *dst)
{
    uint32_t slot;

    for (uint32_t r = 0; r < 2; r++) {
        while (0 == tbrdma_ring_pop(&src->to[r], &slot)) {
            int owner = tbrdma_agentseg_slot_owner(&src->p, slot);

            if ((int) r == owner) {
                agent_send(src, r, slot, dst);
            } else {
                CU_ASSERT_FATAL(-1 == owner); /* a receive slot the rank gave back */
                int bulk = slot >= tbrdma_agentseg_rx_slot(&src->p, 1, 0);

                src->pool[bulk][src->npool[bulk]++] = slot;
            }
        }
    }
}

static void agents(void)
{
    agent_pass(&A, &B);
    agent_pass(&B, &A);
}

/* A sealed frame of payload plen for connection conn on chan; its length. */
static uint32_t frame_made(uint8_t *f, uint32_t conn, uint8_t chan, uint32_t seq, uint32_t plen)
{
    tbrdma_hdr_t h = {.type = TBRDMA_MSG_DATA, .chan = chan, .conn = conn, .seq = seq, .len = plen};

    for (uint32_t i = 0; i < plen; i++) {
        f[TBRDMA_HDR_BYTES + i] = (uint8_t) (seq + i);
    }
    tbrdma_wire_seal(f, &h);
    return TBRDMA_HDR_BYTES + plen;
}

/* a0 sends to b1: a0's queue pair (conn ca), b1's (conn cb), on chan. */
static void pair_made(uint8_t chan, int *qa, int *qb, uint32_t *cb)
{
    uint32_t ca;

    CU_ASSERT_FATAL(0 == tbrdma_route_conn(0, 0x1111, &ca)
                    && 0 == tbrdma_route_conn(1, 0x2222, cb));
    *qa = tbrdma_vport_qp_create(&A.vp[0], ca, chan, 0, 48);
    *qb = tbrdma_vport_qp_create(&B.vp[1], *cb, chan, 0, 48);
    CU_ASSERT_FATAL(*qa >= 0 && *qb >= 0);
}

static void test_vport_frame_crosses(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES], got[TBRDMA_FRAME_BYTES];
    tbrdma_vport_wc_t wc[4];
    uint32_t cb, n;
    int qa, qb;

    mac_up(&A);
    mac_up(&B);
    pair_made(TBRDMA_CHAN_EAGER, &qa, &qb, &cb);
    CU_ASSERT(-EEXIST == tbrdma_vport_qp_create(&B.vp[1], cb, TBRDMA_CHAN_EAGER, 0, 48));
    CU_ASSERT(-EINVAL == tbrdma_vport_qp_create(&B.vp[1], cb + 1, TBRDMA_CHAN_EAGER, 1, 48));
    n = frame_made(f, cb, TBRDMA_CHAN_EAGER, 7, 100);
    CU_ASSERT(0 == tbrdma_vport_post_recv(&B.vp[1], qb, 77, got, TBRDMA_FRAME_BYTES));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 55, f, n));
    CU_ASSERT(0 == tbrdma_vport_poll(&B.vp[1], wc, 4)); /* nothing before the agent moved it */
    agents();
    CU_ASSERT_FATAL(1 == tbrdma_vport_poll(&B.vp[1], wc, 4));
    CU_ASSERT(77 == wc[0].wr_id && wc[0].is_recv && TBRDMA_VPORT_OK == wc[0].status);
    CU_ASSERT(n == wc[0].byte_len && (uint32_t) qb == wc[0].vqp && 0 == memcmp(got, f, n));
    CU_ASSERT_FATAL(1 == tbrdma_vport_poll(&A.vp[0], wc, 4));
    CU_ASSERT(55 == wc[0].wr_id && !wc[0].is_recv && 0 == wc[0].status && n == wc[0].byte_len);
    CU_ASSERT(0 == tbrdma_vport_poll(&B.vp[0], wc, 4)); /* the other rank of B got nothing */
    agents();                                           /* B's receive slot goes back */
    CU_ASSERT(geom.rx_eager == B.npool[0] && geom.tx_eager == A.vp[0].nfree[0]);
    mac_down(&A);
    mac_down(&B);
}

static void test_vport_drops_and_len_err(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES], got[TBRDMA_FRAME_BYTES];
    tbrdma_vport_wc_t wc[4];
    uint32_t cb, n, stranger;
    int qa, qb;

    mac_up(&A);
    mac_up(&B);
    pair_made(TBRDMA_CHAN_EAGER, &qa, &qb, &cb);
    /* no receive posted: dropped, no completion, the slot back with the agent */
    n = frame_made(f, cb, TBRDMA_CHAN_EAGER, 1, 64);
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 1, f, n));
    agents();
    CU_ASSERT(0 == tbrdma_vport_poll(&B.vp[1], wc, 4));
    CU_ASSERT(1 == B.vp[1].qps[qb].rq.dropped);
    agents();
    CU_ASSERT(geom.rx_eager == B.npool[0]);
    /* longer than the receive: a length error, nothing written */
    memset(got, 0xee, sizeof(got));
    CU_ASSERT(0 == tbrdma_vport_post_recv(&B.vp[1], qb, 9, got, n - 1));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 2, f, n));
    agents();
    CU_ASSERT_FATAL(1 == tbrdma_vport_poll(&B.vp[1], wc, 4));
    CU_ASSERT(9 == wc[0].wr_id && TBRDMA_VPORT_LEN_ERR == wc[0].status && 0xee == got[0]);
    /* a connection rank 1 of B does not have (its top byte names it): dropped and counted */
    CU_ASSERT_FATAL(0 == tbrdma_route_conn(1, 0x3333, &stranger));
    n = frame_made(f, stranger, TBRDMA_CHAN_EAGER, 3, 64);
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 3, f, n));
    agents();
    CU_ASSERT(0 == tbrdma_vport_poll(&B.vp[1], wc, 4) && 1 == B.vp[1].dropped_conn);
    /* a damaged header: dropped by the agent's routing, never handed over */
    n = frame_made(f, cb, TBRDMA_CHAN_EAGER, 4, 64);
    f[9] ^= 1;
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 4, f, n));
    agents();
    CU_ASSERT(0 == tbrdma_vport_poll(&B.vp[1], wc, 4));
    agents();
    CU_ASSERT(geom.rx_eager == B.npool[0]);
    mac_down(&A);
    mac_down(&B);
}

static void test_vport_slots_run_out_and_come_back(void)
{
    static uint8_t f[3 * TBRDMA_FRAME_BYTES], got[2][3 * TBRDMA_FRAME_BYTES];
    tbrdma_vport_wc_t wc[8];
    uint32_t cb, n;
    int qa, qb, qa1, qb1;

    mac_up(&A);
    mac_up(&B);
    pair_made(TBRDMA_CHAN_EAGER, &qa, &qb, &cb);
    n = frame_made(f, cb, TBRDMA_CHAN_EAGER, 1, 8);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, i, f, n));
    }
    CU_ASSERT(-EAGAIN == tbrdma_vport_post_send(&A.vp[0], qa, 4, f, n));
    CU_ASSERT(-EMSGSIZE == tbrdma_vport_post_send(&A.vp[0], qa, 4, f, TBRDMA_FRAME_BYTES + 1));
    agents();
    CU_ASSERT(4 == tbrdma_vport_poll(&A.vp[0], wc, 8));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 5, f, n));
    /* the bulk channel: K = 3 frames a slot */
    CU_ASSERT_FATAL(0 <= (qa1 = tbrdma_vport_qp_create(&A.vp[0], 0x00000999, 1, 0, 16)));
    CU_ASSERT_FATAL(0 <= (qb1 = tbrdma_vport_qp_create(&B.vp[1], cb, 1, 0, 16)));
    n = frame_made(f, cb, TBRDMA_CHAN_BULK, 1, 3 * TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES);
    CU_ASSERT(0 == tbrdma_vport_post_recv(&B.vp[1], qb1, 31, got[0], 3 * TBRDMA_FRAME_BYTES));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa1, 32, f, n));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa1, 33, f, n));
    CU_ASSERT(-EAGAIN == tbrdma_vport_post_send(&A.vp[0], qa1, 34, f, n)); /* 2 bulk slots */
    agents();
    CU_ASSERT_FATAL(1 == tbrdma_vport_poll(&B.vp[1], wc, 8));
    CU_ASSERT(31 == wc[0].wr_id && n == wc[0].byte_len && 0 == memcmp(got[0], f, n));
    CU_ASSERT(1 == B.vp[1].qps[qb1].rq.dropped); /* the second: no receive posted */
    CU_ASSERT(3 == tbrdma_vport_poll(&A.vp[0], wc, 8));
    agents();
    CU_ASSERT(geom.rx_bulk == B.npool[1] && geom.tx_bulk == A.vp[0].nfree[1]);
    mac_down(&A);
    mac_down(&B);
}

/* A frame of type type for connection conn on the 1-frame channel; its length. */
static uint32_t ctrl_made(uint8_t *f, uint32_t conn, uint8_t type)
{
    tbrdma_hdr_t h = {.type = type, .chan = TBRDMA_CHAN_EAGER, .conn = conn};

    tbrdma_wire_seal(f, &h);
    return TBRDMA_HDR_BYTES;
}

/* 16 one-frame send slots: data takes 14, the last 2 are kept for control frames. */
static void test_vport_ctrl_reserve(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES], ack[TBRDMA_HDR_BYTES];
    tbrdma_vport_wc_t wc[16];
    uint32_t cb, n, na;
    int qa, qb;

    geom.tx_eager = 16;
    mac_up(&A);
    mac_up(&B);
    pair_made(TBRDMA_CHAN_EAGER, &qa, &qb, &cb);
    CU_ASSERT(2 == tbrdma_vport_ctrl_reserve(&A.vp[0], TBRDMA_CHAN_EAGER));
    n = frame_made(f, cb, TBRDMA_CHAN_EAGER, 1, 8);
    na = ctrl_made(ack, cb, TBRDMA_MSG_ACK);
    for (int i = 0; i < 14; i++) {
        CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, i, f, n));
    }
    CU_ASSERT(-EAGAIN == tbrdma_vport_post_send(&A.vp[0], qa, 14, f, n)); /* data: reserve left */
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 15, ack, na));    /* an ack takes it */
    na = ctrl_made(ack, cb, TBRDMA_MSG_PING);
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 16, ack, na));
    CU_ASSERT(-EAGAIN == tbrdma_vport_post_send(&A.vp[0], qa, 17, ack, na)); /* all 16 in use */
    agents();
    CU_ASSERT(16 == tbrdma_vport_poll(&A.vp[0], wc, 16));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 18, f, n)); /* back: data again */
    mac_down(&A);
    mac_down(&B);
    geom.tx_eager = 4;
}

static void test_vport_stream_in_order(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES], got[48][TBRDMA_FRAME_BYTES];
    tbrdma_vport_wc_t wc[16];
    uint32_t cb, sent = 0, next = 0, wrong = 0, posted = 0;
    int qa, qb;

    mac_up(&A);
    mac_up(&B);
    pair_made(TBRDMA_CHAN_EAGER, &qa, &qb, &cb);
    for (int pass = 0; next < 2000 && pass < 100000; pass++) { /* bounded: a bug fails, not hangs */
        while (posted - next < 48 && posted < 2000) { /* credits: a receive per frame sent */
            CU_ASSERT_FATAL(0
                            == tbrdma_vport_post_recv(&B.vp[1], qb, posted, got[posted % 48],
                                                      TBRDMA_FRAME_BYTES));
            posted++;
        }
        while (sent < posted) {
            uint32_t n = frame_made(f, cb, TBRDMA_CHAN_EAGER, sent, (sent * 37) % 4000);

            if (0 != tbrdma_vport_post_send(&A.vp[0], qa, sent, f, n)) {
                break; /* out of send slots: the agent must move some first */
            }
            sent++;
        }
        agents();
        (void) tbrdma_vport_poll(&A.vp[0], wc, 16);
        for (int k, i = 0; 0 < (k = tbrdma_vport_poll(&B.vp[1], wc, 16)); i = 0) {
            for (; i < k; i++, next++) {
                tbrdma_hdr_t h;

                wrong += (wc[i].wr_id != next) || TBRDMA_VPORT_OK != wc[i].status;
                wrong += (TBRDMA_FRAME_OK
                          != tbrdma_wire_check(got[next % 48], wc[i].byte_len, 0, cb, 0, &h))
                         || h.seq != next || got[next % 48][TBRDMA_HDR_BYTES] != (uint8_t) next;
            }
        }
    }
    CU_ASSERT(0 == wrong && 2000 == next && 0 == B.vp[1].qps[qb].rq.dropped);
    agents();
    CU_ASSERT(geom.rx_eager == B.npool[0] && geom.tx_eager == A.vp[0].nfree[0]);
    mac_down(&A);
    mac_down(&B);
}

/* A destroyed virtual queue pair: its frames are dropped like a stranger's, it can neither send
 * nor take receives, and a new one for the same connection works. */
static void test_vport_qp_destroyed(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES], got[TBRDMA_FRAME_BYTES];
    tbrdma_vport_wc_t wc[4];
    uint32_t cb, n;
    int qa, qb, qb2;

    mac_up(&A);
    mac_up(&B);
    pair_made(TBRDMA_CHAN_EAGER, &qa, &qb, &cb);
    CU_ASSERT(0 == tbrdma_vport_post_recv(&B.vp[1], qb, 1, got, TBRDMA_FRAME_BYTES));
    CU_ASSERT(0 == tbrdma_vport_qp_destroy(&B.vp[1], qb));
    CU_ASSERT(-EINVAL == tbrdma_vport_qp_destroy(&B.vp[1], qb));
    CU_ASSERT(0 != tbrdma_vport_post_recv(&B.vp[1], qb, 2, got, TBRDMA_FRAME_BYTES));
    CU_ASSERT(-EINVAL == tbrdma_vport_post_send(&B.vp[1], qb, 3, f, 64));
    n = frame_made(f, cb, TBRDMA_CHAN_EAGER, 1, 64);
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 4, f, n));
    agents();
    CU_ASSERT(0 == tbrdma_vport_poll(&B.vp[1], wc, 4) && 1 == B.vp[1].dropped_conn);
    qb2 = tbrdma_vport_qp_create(&B.vp[1], cb, TBRDMA_CHAN_EAGER, 0, 48);
    CU_ASSERT_FATAL(qb2 >= 0 && qb2 != qb);
    CU_ASSERT(0 == tbrdma_vport_post_recv(&B.vp[1], qb2, 5, got, TBRDMA_FRAME_BYTES));
    CU_ASSERT(0 == tbrdma_vport_post_send(&A.vp[0], qa, 6, f, n));
    agents();
    CU_ASSERT_FATAL(1 == tbrdma_vport_poll(&B.vp[1], wc, 4));
    CU_ASSERT(5 == wc[0].wr_id && (uint32_t) qb2 == wc[0].vqp && 0 == memcmp(got, f, n));
    mac_down(&A);
    mac_down(&B);
}

static void test_vport_broken_agent(void)
{
    tbrdma_vport_wc_t wc[4];

    mac_up(&A);
    /* a send slot of rank 1 handed to rank 0 as if it had arrived */
    CU_ASSERT(0 == tbrdma_ring_push(&A.from[0], tbrdma_agentseg_tx_slot(&A.p, 1, 0, 0)));
    CU_ASSERT(-EPIPE == tbrdma_vport_poll(&A.vp[0], wc, 4));
    /* a receive slot reported as a finished send */
    CU_ASSERT(0 == tbrdma_ring_push(&A.done[1], tbrdma_agentseg_rx_slot(&A.p, 0, 0)));
    CU_ASSERT(-EPIPE == tbrdma_vport_poll(&A.vp[1], wc, 4));
    CU_ASSERT(-EINVAL == tbrdma_vport_post_send(&A.vp[0], 5, 0, wc, 1));
    mac_down(&A);
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_vport_frame_crosses),
        TBRDMA_UT_TEST(test_vport_drops_and_len_err),
        TBRDMA_UT_TEST(test_vport_slots_run_out_and_come_back),
        TBRDMA_UT_TEST(test_vport_ctrl_reserve),
        TBRDMA_UT_TEST(test_vport_stream_in_order),
        TBRDMA_UT_TEST(test_vport_qp_destroyed),
        TBRDMA_UT_TEST(test_vport_broken_agent),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_vport", tests);
}
