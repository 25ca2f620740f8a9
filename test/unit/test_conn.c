/*
 * Unit tests of plugin/core/tbrdma_conn.c (the connection record every process publishes once
 * its queue pairs exist) and tbrdma_budget.c (Apple's 10 queue pairs per device): record round
 * trips, the exact bytes, a decoder that refuses every truncation, every length-field bit flip
 * and a foreign version; the budget arithmetic and the wording of its start-up refusal.
 */
#include "tbrdma_budget.h"
#include "tbrdma_conn.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static tbrdma_conn_entry_t entries[3] = {
    {.peer_jobid = 0x11223344u,
     .peer_vpid = 1,
     .conn_id = 0xa1a2a3a4u,
     .qpn = {0x17, 0x18},
     .psn = 7,
     .depth = {48, 16},
     .bulk_frames = 16},
    {.peer_jobid = 0x11223344u,
     .peer_vpid = 3,
     .conn_id = 2,
     .qpn = {0x19, 0x1a},
     .psn = 8,
     .depth = {48, 16},
     .bulk_frames = 16},
    {.peer_jobid = 0x11223344u,
     .peer_vpid = 3,
     .conn_id = 3,
     .qpn = {0xffffff, 1},
     .psn = 0,
     .depth = {63, 2},
     .bulk_frames = 256,
     .stripe = 1},
};

static size_t encode(const tbrdma_conn_record_t *rec, uint8_t *buf, size_t cap)
{
    size_t used = 0;

    CU_ASSERT(0 == tbrdma_conn_encode(rec, buf, cap, &used));
    CU_ASSERT(used == tbrdma_conn_encoded_size(rec));
    return used;
}

static void test_conn_roundtrip(void)
{
    tbrdma_conn_record_t in = {
        .status = 0, .flags = TBRDMA_CONN_FLAG_CSUM, .nentries = 3, .entries = entries};
    tbrdma_conn_record_t out;
    uint8_t buf[256];
    size_t used = encode(&in, buf, sizeof(buf));

    CU_ASSERT(16 + 3 * 32 == used);
    CU_ASSERT(0 == tbrdma_conn_decode(buf, used, &out));
    CU_ASSERT(3 == out.nentries && TBRDMA_CONN_FLAG_CSUM == out.flags && 0 == out.status);
    CU_ASSERT(0 == memcmp(entries, out.entries, sizeof(entries)));
    CU_ASSERT(&out.entries[1] == tbrdma_conn_find(&out, 0x11223344u, 3, 0));
    CU_ASSERT(&out.entries[2] == tbrdma_conn_find(&out, 0x11223344u, 3, 1)); /* its 2nd cable */
    CU_ASSERT(NULL == tbrdma_conn_find(&out, 0x11223344u, 3, 2));
    CU_ASSERT(NULL == tbrdma_conn_find(&out, 0x11223344u, 2, 0));
    tbrdma_conn_record_free(&out);
}

static void test_conn_failed_publisher(void)
{
    tbrdma_conn_record_t in = {.status = EBUSY, .nentries = 0, .entries = NULL};
    tbrdma_conn_record_t out;
    uint8_t buf[64];
    size_t used = encode(&in, buf, sizeof(buf));

    CU_ASSERT(0 == tbrdma_conn_decode(buf, used, &out));
    CU_ASSERT(EBUSY == out.status && 0 == out.nentries && NULL == out.entries);
}

static void test_conn_exact_bytes(void)
{
    static const uint8_t want[48] = {0x54, 0x42, 0x43, 0x4e, 0,    2,    1,    0,    0, 0,  0, 48,
                                     0,    0,    0,    1,    0x11, 0x22, 0x33, 0x44, 0, 0,  0, 1,
                                     0xa1, 0xa2, 0xa3, 0xa4, 0,    0,    0,    0x17, 0, 0,  0, 0x18,
                                     0,    0,    0,    7,    0,    48,   0,    16,   0, 16, 0, 0};
    tbrdma_conn_record_t in = {.flags = 1, .nentries = 1, .entries = entries};
    uint8_t buf[64];

    CU_ASSERT(48 == encode(&in, buf, sizeof(buf)));
    CU_ASSERT(0 == memcmp(want, buf, sizeof(want)));
    in.entries = &entries[2]; /* the stripe is the entry's last field */
    CU_ASSERT(48 == encode(&in, buf, sizeof(buf)));
    CU_ASSERT(0 == buf[46] && 1 == buf[47]);
}

static void test_conn_hostile_input(void)
{
    tbrdma_conn_record_t in = {.nentries = 2, .entries = entries}, out;
    uint8_t buf[128], bad[128];
    size_t used = encode(&in, buf, sizeof(buf)), bit;
    int accepted = 0;

    for (size_t n = 0; n < used; n++) {
        accepted += 0 == tbrdma_conn_decode(buf, n, &out);
    }
    CU_ASSERT(0 == accepted);
    /* every bit of the magic, length, status and count fields */
    for (bit = 0; bit < 16 * 8; bit++) {
        if (bit / 8 == 4 || bit / 8 == 5 || bit / 8 == 6) {
            continue; /* version and flags: tested below */
        }
        memcpy(bad, buf, used);
        bad[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        if (0 == tbrdma_conn_decode(bad, used, &out)) {
            accepted++;
            tbrdma_conn_record_free(&out);
        }
    }
    CU_ASSERT(0 == accepted);
    memcpy(bad, buf, used);
    bad[5] = 1; /* version 1 did not name cables */
    CU_ASSERT(-EPROTONOSUPPORT == tbrdma_conn_decode(bad, used, &out));
    CU_ASSERT(-ENOSPC == tbrdma_conn_encode(&in, bad, used - 1, &used));
}

static void test_budget_arithmetic(void)
{
    tbrdma_budget_use_t u = {"mac-a", "rdma_en2", "en2", "mac-b", 2, 2, 2};
    char msg[1024];

    CU_ASSERT(8 == tbrdma_budget_needed(&u));
    CU_ASSERT(0 == tbrdma_budget_check(&u, TBRDMA_APPLE_QP_BUDGET, msg, sizeof(msg)));
    CU_ASSERT(2 == tbrdma_budget_max_ranks(10, 2));
    CU_ASSERT(3 == tbrdma_budget_max_ranks(10, 1));
    CU_ASSERT(0 == tbrdma_budget_max_ranks(1, 2));
    u.peer_ranks = 3;
    CU_ASSERT(12 == tbrdma_budget_needed(&u));
}

static void test_budget_refusal_says_what_to_do(void)
{
    tbrdma_budget_use_t u = {"mac-a", "rdma_en3", "en3", "mac-c", 3, 3, 2};
    char msg[1024];

    CU_ASSERT(-ENOSPC == tbrdma_budget_check(&u, TBRDMA_APPLE_QP_BUDGET, msg, sizeof(msg)));
    CU_ASSERT(NULL != strstr(msg, "host mac-a: device rdma_en3 (interface en3, cable to mac-c)"));
    CU_ASSERT(NULL != strstr(msg, "needs 18 queue pairs"));
    CU_ASSERT(NULL != strstr(msg, "3 ranks on mac-a x 3 ranks on mac-c x 2 queue pairs"));
    CU_ASSERT(NULL != strstr(msg, "the budget is 10 per device"));
    CU_ASSERT(NULL != strstr(msg, "run at most 2 ranks per Mac"));
    CU_ASSERT(NULL != strstr(msg, "--map-by ppr:2:node"));
    CU_ASSERT(NULL != strstr(msg, "btl_tbrdma_agent auto or on")); /* the other way out */
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_conn_roundtrip),
        TBRDMA_UT_TEST(test_conn_failed_publisher),
        TBRDMA_UT_TEST(test_conn_exact_bytes),
        TBRDMA_UT_TEST(test_conn_hostile_input),
        TBRDMA_UT_TEST(test_budget_arithmetic),
        TBRDMA_UT_TEST(test_budget_refusal_says_what_to_do),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("conn", tests);
}
