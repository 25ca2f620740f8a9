/*
 * Unit tests of plugin/core/tbrdma_route.c (the per-Mac agent's switch): connection ids that name
 * a local rank, the routing of a frame by its header only (damaged headers, unattached and
 * departed ranks, the agents' own frames), a frame of another job routed by its top byte and then
 * refused by the rank's own check, a rank's virtual UC queue pair keeping libtbsim's rules (no
 * receive: dropped; another frame count or too long: a length error), and a model of one agent
 * and 8 ranks: 40,000 frames from peers, every one delivered to the rank it names, in order.
 */
#include "tbrdma_route.h"
#include "tbrdma_wire.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A sealed DATA frame of payload len on chan, for connection conn; payload bytes = fill. */
static uint32_t frame_made(uint8_t *f, uint32_t conn, uint8_t chan, uint32_t seq, uint32_t len,
                           uint8_t fill)
{
    tbrdma_hdr_t h = {.type = TBRDMA_MSG_DATA,
                      .tag = 65,
                      .flags = TBRDMA_HF_CSUM,
                      .chan = chan,
                      .conn = conn,
                      .seq = seq,
                      .len = len};

    memset(f + TBRDMA_HDR_BYTES, fill, len);
    h.pcrc = tbrdma_wire_payload_crc(f, len);
    tbrdma_wire_seal(f, &h);
    return TBRDMA_HDR_BYTES + len;
}

static void test_route_conn_names_rank(void)
{
    uint32_t conn = 0;

    for (unsigned r = 0; r < TBRDMA_ROUTE_RANKS; r++) {
        CU_ASSERT_FATAL(0 == tbrdma_route_conn(r, 0xabcdef12u ^ r, &conn));
        CU_ASSERT(r == tbrdma_route_conn_rank(conn));
        CU_ASSERT(((0xabcdef12u ^ r) & 0xffffffu) == (conn & 0xffffffu));
    }
    conn = 7;
    CU_ASSERT(-EINVAL == tbrdma_route_conn(TBRDMA_ROUTE_AGENT, 1, &conn));
    CU_ASSERT(-EINVAL == tbrdma_route_conn(1000, 1, &conn));
    CU_ASSERT(7 == conn); /* untouched when refused */
}

static void test_route_table(void)
{
    tbrdma_route_table_t t = {{0}};

    CU_ASSERT(0 == tbrdma_route_live(&t, 0));
    CU_ASSERT(0 == tbrdma_route_attach(&t, 0) && 0 == tbrdma_route_attach(&t, 64));
    CU_ASSERT(0 == tbrdma_route_attach(&t, 254));
    CU_ASSERT(tbrdma_route_live(&t, 0) && tbrdma_route_live(&t, 64) && tbrdma_route_live(&t, 254));
    CU_ASSERT(!tbrdma_route_live(&t, 1) && !tbrdma_route_live(&t, 63)
              && !tbrdma_route_live(&t, 65));
    CU_ASSERT(0 == tbrdma_route_detach(&t, 64));
    CU_ASSERT(!tbrdma_route_live(&t, 64) && tbrdma_route_live(&t, 0));
    CU_ASSERT(-EINVAL == tbrdma_route_attach(&t, 255) && -EINVAL == tbrdma_route_detach(&t, 255));
    CU_ASSERT(!tbrdma_route_live(&t, 255) && !tbrdma_route_live(&t, 100000));
}

static void test_route_frame_outcomes(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES];
    tbrdma_route_table_t t = {{0}};
    uint32_t conn, n;
    unsigned r = 99;

    CU_ASSERT_FATAL(0 == tbrdma_route_conn(3, 0x123456, &conn));
    n = frame_made(f, conn, TBRDMA_CHAN_EAGER, 1, 100, 0x33);
    CU_ASSERT(TBRDMA_ROUTE_NO_RANK == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
    CU_ASSERT(99 == r);
    tbrdma_route_attach(&t, 3);
    CU_ASSERT(TBRDMA_ROUTE_TO_RANK == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
    CU_ASSERT(3 == r);
    /* the header only: exactly a header's bytes route, one fewer is short */
    CU_ASSERT(TBRDMA_ROUTE_TO_RANK == tbrdma_route_frame(&t, f, TBRDMA_HDR_BYTES, 0, &r));
    CU_ASSERT(TBRDMA_ROUTE_SHORT == tbrdma_route_frame(&t, f, TBRDMA_HDR_BYTES - 1, 0, &r));
    /* the other channel's queue pair: refused, as the rank's check would */
    CU_ASSERT(TBRDMA_ROUTE_BAD_HDR == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_BULK, &r));
    /* a damaged payload is the rank's to find: routed */
    f[TBRDMA_HDR_BYTES + 5] ^= 0x40;
    CU_ASSERT(TBRDMA_ROUTE_TO_RANK == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
    /* a damaged header never reaches a rank: each byte of it, the conn's top byte included */
    for (unsigned i = 0; i < TBRDMA_HDR_BYTES; i++) {
        f[i] ^= 0x08;
        CU_ASSERT(TBRDMA_ROUTE_BAD_HDR == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
        f[i] ^= 0x08;
    }
    /* the rank departs: its frames are dropped, not handed to anyone */
    tbrdma_route_detach(&t, 3);
    CU_ASSERT(TBRDMA_ROUTE_NO_RANK == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
    /* the agents' own frames */
    n = frame_made(f, 0xff000001u, TBRDMA_CHAN_EAGER, 1, 0, 0);
    CU_ASSERT(TBRDMA_ROUTE_TO_AGENT == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
    CU_ASSERT(0 == strcmp("no such rank", tbrdma_route_outcome_name(TBRDMA_ROUTE_NO_RANK)));
    CU_ASSERT(0 == strcmp("unknown outcome", tbrdma_route_outcome_name(TBRDMA_ROUTE_OUTCOMES)));
}

/* A frame of another job (or a stale one) whose top byte names one of our ranks is routed to
 * it, and its own check refuses it: the whole conn is the rank's to compare. */
static void test_route_foreign_frame_refused_by_rank(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES];
    tbrdma_route_table_t t = {{0}};
    tbrdma_hdr_t h;
    uint32_t ours, theirs, n;
    unsigned r = 0;

    CU_ASSERT_FATAL(0 == tbrdma_route_conn(5, 0x00aaaa, &ours));
    CU_ASSERT_FATAL(0 == tbrdma_route_conn(5, 0x00bbbb, &theirs));
    tbrdma_route_attach(&t, 5);
    n = frame_made(f, theirs, TBRDMA_CHAN_EAGER, 9, 64, 0x55);
    CU_ASSERT(TBRDMA_ROUTE_TO_RANK == tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r));
    CU_ASSERT(5 == r);
    CU_ASSERT(TBRDMA_FRAME_BAD_CONN == tbrdma_wire_check(f, n, TBRDMA_CHAN_EAGER, ours, 1, &h));
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check(f, n, TBRDMA_CHAN_EAGER, theirs, 1, &h));
}

static void test_vuc_rules(void)
{
    tbrdma_vuc_t v;
    tbrdma_vuc_recv_t rcv = {0};
    const uint32_t k17 = 17 * TBRDMA_FRAME_BYTES;

    CU_ASSERT(-EINVAL == tbrdma_vuc_init(&v, 0));
    CU_ASSERT_FATAL(0 == tbrdma_vuc_init(&v, 3));
    /* nothing posted: dropped, counted, no receive taken */
    CU_ASSERT(TBRDMA_VUC_DROP == tbrdma_vuc_arrive(&v, 100, &rcv));
    CU_ASSERT(1 == v.dropped && 0 == v.len_errors);
    CU_ASSERT(0 == tbrdma_vuc_post(&v, 11, TBRDMA_FRAME_BYTES));
    CU_ASSERT(0 == tbrdma_vuc_post(&v, 12, TBRDMA_FRAME_BYTES));
    CU_ASSERT(0 == tbrdma_vuc_post(&v, 13, 4000));
    CU_ASSERT(-ENOMEM == tbrdma_vuc_post(&v, 14, TBRDMA_FRAME_BYTES)); /* max_recv */
    /* oldest first */
    CU_ASSERT(TBRDMA_VUC_DELIVER == tbrdma_vuc_arrive(&v, 100, &rcv) && 11 == rcv.wr_id);
    /* two frames into a one-frame receive: the receive fails, nothing delivered */
    CU_ASSERT(TBRDMA_VUC_LEN_ERR == tbrdma_vuc_arrive(&v, TBRDMA_FRAME_BYTES + 1, &rcv));
    CU_ASSERT(12 == rcv.wr_id && 1 == v.len_errors);
    /* one frame, but longer than the 4000 bytes posted */
    CU_ASSERT(TBRDMA_VUC_LEN_ERR == tbrdma_vuc_arrive(&v, 4001, &rcv) && 13 == rcv.wr_id);
    CU_ASSERT(2 == v.len_errors && 0 == v.count);
    /* a bulk receive of K = 17 frames: a message padded to 16 frames + 1 byte fits; 16 do not */
    CU_ASSERT(0 == tbrdma_vuc_post(&v, 21, k17) && 0 == tbrdma_vuc_post(&v, 22, k17));
    CU_ASSERT(TBRDMA_VUC_DELIVER == tbrdma_vuc_arrive(&v, k17 - TBRDMA_FRAME_BYTES + 1, &rcv));
    CU_ASSERT(21 == rcv.wr_id);
    CU_ASSERT(TBRDMA_VUC_LEN_ERR == tbrdma_vuc_arrive(&v, k17 - TBRDMA_FRAME_BYTES, &rcv));
    CU_ASSERT(22 == rcv.wr_id && 3 == v.len_errors);
    /* an empty message spans one frame, as on Apple's device */
    CU_ASSERT(0 == tbrdma_vuc_post(&v, 31, TBRDMA_FRAME_BYTES));
    CU_ASSERT(TBRDMA_VUC_DELIVER == tbrdma_vuc_arrive(&v, 0, &rcv) && 31 == rcv.wr_id);
    tbrdma_vuc_fini(&v);
    CU_ASSERT(NULL == v.q && 0 == v.cap);
}

static void test_vuc_wraps_in_order(void)
{
    tbrdma_vuc_t v;
    tbrdma_vuc_recv_t rcv = {0};
    uint64_t next_post = 0, next_done = 0, wrong = 0;

    CU_ASSERT_FATAL(0 == tbrdma_vuc_init(&v, 48));
    for (unsigned i = 0; i < 10000; i++) {
        for (unsigned p = 0; p < 64 && 0 == tbrdma_vuc_post(&v, next_post, TBRDMA_FRAME_BYTES);
             p++) {
            next_post++;
        }
        CU_ASSERT_FATAL(48 == v.count); /* filled to max_recv, never past it */
        for (unsigned j = 0; j < 1 + i % 47; j++) {
            CU_ASSERT_FATAL(TBRDMA_VUC_DELIVER == tbrdma_vuc_arrive(&v, 64, &rcv));
            wrong += (rcv.wr_id != next_done++);
        }
    }
    CU_ASSERT(0 == wrong && next_done + v.count == next_post);
    tbrdma_vuc_fini(&v);
}

#define MODEL_RANKS  8
#define MODEL_FRAMES 40000

/* One agent, 8 local ranks (rank 6 departs halfway), frames from peers for random ranks, each
 * rank posting receives at its own pace. Every frame routed to a rank is the one it names, and
 * each rank's deliveries carry its sequence numbers in order with none missing except drops its
 * own queue pair counted. */
static void test_route_model_many_ranks(void)
{
    static uint8_t f[TBRDMA_FRAME_BYTES];
    tbrdma_route_table_t t = {{0}};
    tbrdma_vuc_t v[MODEL_RANKS];
    uint32_t conn[MODEL_RANKS], sent[MODEL_RANKS] = {0}, got[MODEL_RANKS] = {0};
    uint64_t misrouted = 0, disorder = 0, no_rank = 0;
    tbrdma_hdr_t h;
    unsigned seed = 12345;

    for (unsigned r = 0; r < MODEL_RANKS; r++) {
        CU_ASSERT_FATAL(0 == tbrdma_route_conn(r, 0x1000u * (r + 1) + 7, &conn[r]));
        CU_ASSERT_FATAL(0 == tbrdma_vuc_init(&v[r], 48));
        tbrdma_route_attach(&t, r);
    }
    for (unsigned i = 0; i < MODEL_FRAMES; i++) {
        unsigned dst = (seed = seed * 1103515245u + 12345u) >> 16, r = 999;
        tbrdma_vuc_recv_t rcv;
        uint32_t n;

        dst %= MODEL_RANKS;
        if (MODEL_FRAMES / 2 == i) {
            tbrdma_route_detach(&t, 6);
        }
        n = frame_made(f, conn[dst], TBRDMA_CHAN_EAGER, sent[dst]++, 16 + i % 512, (uint8_t) dst);
        for (unsigned k = 0; k < MODEL_RANKS; k++) { /* ranks post unevenly; rank 7 rarely */
            if (7 != k || 0 == i % 16) {
                (void) tbrdma_vuc_post(&v[k], i, TBRDMA_FRAME_BYTES);
            }
        }
        switch (tbrdma_route_frame(&t, f, n, TBRDMA_CHAN_EAGER, &r)) {
        case TBRDMA_ROUTE_TO_RANK:
            misrouted += (r != dst);
            if (TBRDMA_VUC_DELIVER == tbrdma_vuc_arrive(&v[r], n, &rcv)) {
                CU_ASSERT_FATAL(TBRDMA_FRAME_OK
                                == tbrdma_wire_check(f, n, TBRDMA_CHAN_EAGER, conn[r], 1, &h));
                disorder += (h.seq < got[r]) || (f[TBRDMA_HDR_BYTES] != (uint8_t) r);
                got[r] = h.seq + 1;
            }
            break;
        case TBRDMA_ROUTE_NO_RANK:
            no_rank++;
            misrouted += (6 != dst);
            break;
        default:
            misrouted++;
        }
    }
    CU_ASSERT(0 == misrouted && 0 == disorder);
    CU_ASSERT(no_rank > MODEL_FRAMES / (2 * MODEL_RANKS) / 2); /* rank 6's second half */
    CU_ASSERT(v[7].dropped > 0); /* the slow poster lost frames, as UC does */
    for (unsigned r = 0; r < MODEL_RANKS; r++) {
        CU_ASSERT(0 == v[r].len_errors);
        if (6 != r && 7 != r) {
            CU_ASSERT(0 == v[r].dropped && got[r] == sent[r]);
        }
        tbrdma_vuc_fini(&v[r]);
    }
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_route_conn_names_rank),
        TBRDMA_UT_TEST(test_route_table),
        TBRDMA_UT_TEST(test_route_frame_outcomes),
        TBRDMA_UT_TEST(test_route_foreign_frame_refused_by_rank),
        TBRDMA_UT_TEST(test_vuc_rules),
        TBRDMA_UT_TEST(test_vuc_wraps_in_order),
        TBRDMA_UT_TEST(test_route_model_many_ranks),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_route", tests);
}
