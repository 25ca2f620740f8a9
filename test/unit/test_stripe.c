/*
 * Unit tests of plugin/core/tbrdma_stripe.c (multi-cable striping decisions): which fragments
 * may leave cable 0 (bulk fragments of large messages, only with several cables), and the
 * choice of cable: the least loaded, equal loads in turn, full cables skipped, and over many
 * fragments a share per cable that follows how fast each cable drains.
 */
#include "tbrdma_stripe.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#define EAGER 4056u
#define MIN   131072u

static void test_stripe_wanted(void)
{
    CU_ASSERT(1 == tbrdma_stripe_wanted(65496, 16u << 20, EAGER, MIN, 2));
    CU_ASSERT(1 == tbrdma_stripe_wanted(EAGER + 1, MIN, EAGER, MIN, 4));   /* at the threshold */
    CU_ASSERT(0 == tbrdma_stripe_wanted(65496, 16u << 20, EAGER, MIN, 1)); /* one cable */
    CU_ASSERT(0 == tbrdma_stripe_wanted(EAGER, 16u << 20, EAGER, MIN, 2)); /* eager-sized */
    CU_ASSERT(0 == tbrdma_stripe_wanted(100, 16u << 20, EAGER, MIN, 2));
    CU_ASSERT(0 == tbrdma_stripe_wanted(65496, MIN - 1, EAGER, MIN, 2)); /* message too small */
    CU_ASSERT(0 == tbrdma_stripe_wanted(65496, 0, EAGER, 0, 2));         /* size unknown */
    CU_ASSERT(1 == tbrdma_stripe_wanted(65496, 1, EAGER, 0, 2));         /* threshold 0 */
}

static void test_stripe_pick_least_loaded(void)
{
    uint32_t load[3] = {5, 2, 9};
    unsigned cursor = 0;

    CU_ASSERT(1 == tbrdma_stripe_pick(load, 3, &cursor));
    CU_ASSERT(2 == cursor);
    load[1] = 6;
    CU_ASSERT(0 == tbrdma_stripe_pick(load, 3, &cursor));
    CU_ASSERT(-1 == tbrdma_stripe_pick(load, 0, &cursor));
}

/* Equal loads go round-robin, so idle cables share fragments evenly. */
static void test_stripe_pick_ties_in_turn(void)
{
    uint32_t load[2] = {0, 0};
    unsigned cursor = 0;
    int got[6];

    for (int i = 0; i < 6; i++) {
        got[i] = tbrdma_stripe_pick(load, 2, &cursor);
    }
    CU_ASSERT(0 == got[0] && 1 == got[1] && 0 == got[2] && 1 == got[3] && 0 == got[4]);
    cursor = 7; /* any cursor value is taken modulo the cables */
    CU_ASSERT(1 == tbrdma_stripe_pick(load, 2, &cursor));
}

static void test_stripe_pick_skips_full(void)
{
    uint32_t load[3] = {TBRDMA_STRIPE_FULL, 4, TBRDMA_STRIPE_FULL};
    unsigned cursor = 0;

    CU_ASSERT(1 == tbrdma_stripe_pick(load, 3, &cursor));
    load[1] = TBRDMA_STRIPE_FULL;
    cursor = 2;
    CU_ASSERT(-1 == tbrdma_stripe_pick(load, 3, &cursor));
    CU_ASSERT(2 == cursor); /* unchanged when nothing was chosen */
}

/*
 * A stream of fragments over two cables, cable 1 draining one frame per step and cable 0 two:
 * picking the least loaded gives cable 0 about twice the fragments, and neither queue grows
 * without bound. Equal cables get equal shares.
 */
static void stream(const unsigned *drain, int steps, unsigned *sent)
{
    uint32_t load[2] = {0, 0};
    unsigned cursor = 0;

    sent[0] = sent[1] = 0;
    for (int t = 0; t < steps; t++) {
        for (int f = 0; f < 3; f++) {
            int k = tbrdma_stripe_pick(load, 2, &cursor);

            load[k]++;
            sent[k]++;
        }
        for (int k = 0; k < 2; k++) {
            load[k] -= (load[k] < drain[k]) ? load[k] : drain[k];
            CU_ASSERT(load[k] <= 3);
        }
    }
}

static void test_stripe_pick_follows_speed(void)
{
    static const unsigned fast_slow[2] = {2, 1}, equal[2] = {2, 2};
    unsigned sent[2];

    stream(fast_slow, 3000, sent);
    CU_ASSERT(sent[0] > 19 * sent[1] / 10 && sent[0] < 21 * sent[1] / 10);
    stream(equal, 3000, sent);
    CU_ASSERT(sent[0] + 1 >= sent[1] && sent[1] + 1 >= sent[0]);
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_stripe_wanted),
        TBRDMA_UT_TEST(test_stripe_pick_least_loaded),
        TBRDMA_UT_TEST(test_stripe_pick_ties_in_turn),
        TBRDMA_UT_TEST(test_stripe_pick_skips_full),
        TBRDMA_UT_TEST(test_stripe_pick_follows_speed),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_stripe", tests);
}
