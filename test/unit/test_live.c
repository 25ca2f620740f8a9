/*
 * Unit tests of plugin/core/tbrdma_live.c: when a silent peer is probed, when its port is looked
 * at, when it is lost. Small cases pin each rule; then a model of two processes that only probe
 * each other (an idle job: the longest silences a live peer shows) stops one of them for a while
 * at every phase of the probe cycle: a stop shorter than 80 % of the peer timeout must never end
 * the job on either side, a stop longer than the timeout must, on the side that kept running.
 */
#include "tbrdma_live.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#define MS        1000000ull
#define TIMEOUT   (5000 * MS) /* btl_tbrdma_peer_timeout_ms's default */
#define LIVE_TICK (20 * MS)   /* two of the liveness thread's 10 ms ticks */

static void test_live_probe_port_and_loss(void)
{
    tbrdma_live_cfg_t cfg;
    tbrdma_live_t l;
    uint64_t t0 = 1000 * MS, k;

    tbrdma_live_cfg_init(&cfg, TIMEOUT, LIVE_TICK);
    k = cfg.keepalive_ns;
    CU_ASSERT(TIMEOUT / 10 == k); /* a live peer is heard at least every tenth of the timeout */
    tbrdma_live_start(&l, t0);
    CU_ASSERT(0 == tbrdma_live_judge(&l, t0 + k - 1, 1, &cfg));
    CU_ASSERT(TBRDMA_LIVE_PROBE == tbrdma_live_judge(&l, t0 + k, 1, &cfg));
    CU_ASSERT(0 == tbrdma_live_judge(&l, t0 + k + 1, 1, &cfg)); /* one probe per keepalive */
    CU_ASSERT((TBRDMA_LIVE_PROBE | TBRDMA_LIVE_PORT) == tbrdma_live_judge(&l, t0 + 2 * k, 1, &cfg));
    CU_ASSERT(0 == (TBRDMA_LIVE_LOST & tbrdma_live_judge(&l, t0 + TIMEOUT - 1, 1, &cfg)));
    CU_ASSERT(TBRDMA_LIVE_LOST & tbrdma_live_judge(&l, t0 + TIMEOUT, 1, &cfg));
    tbrdma_live_heard(&l, t0 + TIMEOUT);
    CU_ASSERT(0 == tbrdma_live_judge(&l, t0 + TIMEOUT + 1, 1, &cfg));
    CU_ASSERT(0 == tbrdma_live_silent(&l, t0)); /* a clock read before the last frame */
}

/* A pass that left completions unread never declares a peer lost: its frames may be there. */
static void test_live_unread_completions_never_lose(void)
{
    tbrdma_live_cfg_t cfg;
    tbrdma_live_t l;

    tbrdma_live_cfg_init(&cfg, TIMEOUT, LIVE_TICK);
    tbrdma_live_start(&l, 0);
    CU_ASSERT(0 == (TBRDMA_LIVE_LOST & tbrdma_live_judge(&l, 2 * TIMEOUT, 0, &cfg)));
    CU_ASSERT(TBRDMA_LIVE_LOST & tbrdma_live_judge(&l, 2 * TIMEOUT, 1, &cfg));
}

/* A gap between passes longer than the tick is a stall; the silence it hides is forgiven. */
static void test_live_stall_is_forgiven(void)
{
    tbrdma_live_cfg_t cfg;
    tbrdma_live_t l;
    uint64_t last = 0, t = 100 * MS;

    tbrdma_live_cfg_init(&cfg, TIMEOUT, LIVE_TICK);
    CU_ASSERT(0 == tbrdma_live_stall(&last, t, &cfg)); /* the first pass */
    tbrdma_live_start(&l, t);
    t += LIVE_TICK;
    CU_ASSERT(0 == tbrdma_live_stall(&last, t, &cfg));      /* a pass on time */
    CU_ASSERT(0 == tbrdma_live_stall(&last, t - MS, &cfg)); /* an older clock: no stall */
    CU_ASSERT(t == last);
    t += 4500 * MS; /* stopped for 4.5 s */
    CU_ASSERT(4500 * MS - LIVE_TICK == tbrdma_live_stall(&last, t, &cfg));
    tbrdma_live_forgive(&l, 4500 * MS - LIVE_TICK);
    CU_ASSERT(2 * LIVE_TICK == tbrdma_live_silent(&l, t));
    CU_ASSERT(0 == (TBRDMA_LIVE_LOST & tbrdma_live_judge(&l, t, 1, &cfg)));
}

/* ---- two processes probing each other, one of them stopped for a while ------------------- */

#define PAIR_RTT  (MS / 10) /* a frame's trip */
#define PAIR_STEP (10 * MS) /* each running process passes every 10 ms */
#define PAIR_MAXF 64

typedef struct pair_proc {
    tbrdma_live_t live; /* its view of the other */
    uint64_t last_pass;
    uint64_t arrive[PAIR_MAXF]; /* frames on their way to it (0: free slot) */
    int is_probe[PAIR_MAXF];
    int answer_due;
    uint64_t lost_at; /* when it declared the other lost (0: never) */
} pair_proc_t;

static void pair_send(pair_proc_t *to, uint64_t at, int probe)
{
    for (int i = 0; i < PAIR_MAXF; i++) {
        if (0 == to->arrive[i]) {
            to->arrive[i] = at;
            to->is_probe[i] = probe;
            return;
        }
    }
    CU_FAIL("too many frames in flight");
}

/* One pass of p at t: stall check, every arrived frame read, the verdict, the answers. */
static void pair_pass(pair_proc_t *p, pair_proc_t *other, uint64_t t, const tbrdma_live_cfg_t *cfg)
{
    uint64_t stall = tbrdma_live_stall(&p->last_pass, t, cfg);
    int v;

    tbrdma_live_forgive(&p->live, stall);
    for (int i = 0; i < PAIR_MAXF; i++) {
        if (0 != p->arrive[i] && p->arrive[i] <= t) {
            tbrdma_live_heard(&p->live, t);
            p->answer_due |= p->is_probe[i];
            p->arrive[i] = 0;
        }
    }
    v = tbrdma_live_judge(&p->live, t, 1, cfg);
    if ((v & TBRDMA_LIVE_LOST) && 0 == p->lost_at) {
        p->lost_at = t;
    }
    if (v & TBRDMA_LIVE_PROBE) {
        pair_send(other, t + PAIR_RTT, 1);
    }
    if (p->answer_due) {
        pair_send(other, t + PAIR_RTT, 0);
        p->answer_due = 0;
    }
}

/*
 * Processes a and b from time 0; a does not run in [from, from + stop). Runs until end; fills
 * each one's time of declaring the other lost (0: never).
 */
static void pair_run(uint64_t from, uint64_t stop, uint64_t end, uint64_t *a_lost, uint64_t *b_lost)
{
    static pair_proc_t a, b;
    tbrdma_live_cfg_t cfg;

    tbrdma_live_cfg_init(&cfg, TIMEOUT, LIVE_TICK);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    tbrdma_live_start(&a.live, PAIR_STEP);
    tbrdma_live_start(&b.live, PAIR_STEP);
    for (uint64_t t = PAIR_STEP; t < end; t += PAIR_STEP) {
        if (t < from || t >= from + stop) {
            pair_pass(&a, &b, t, &cfg);
        }
        pair_pass(&b, &a, t + PAIR_STEP / 2, &cfg);
    }
    *a_lost = a.lost_at;
    *b_lost = b.lost_at;
}

static void test_live_short_stop_survived_by_both(void)
{
    const uint64_t stop = TIMEOUT / 10 * 8; /* 80 % of the timeout */
    int lost = 0, phases = 0;

    /* every phase of the probe cycle, from an idle start */
    for (uint64_t from = 3000 * MS; from < 3000 * MS + TIMEOUT / 4 + 20 * MS; from += 30 * MS) {
        uint64_t a_lost, b_lost;

        pair_run(from, stop, from + stop + 3 * TIMEOUT, &a_lost, &b_lost);
        if (0 != a_lost || 0 != b_lost) {
            if (lost++ < 3) {
                printf("\n    stopped at %.2f s for %.2f s: declared lost by %s at %.2f s",
                       from / 1e9, stop / 1e9, b_lost ? "the other" : "the stopped one",
                       (b_lost ? b_lost : a_lost) / 1e9);
            }
        }
        phases++;
    }
    printf("\n    a stop of %.1f s at %d phases: %d ended the job", stop / 1e9, phases, lost);
    CU_ASSERT(0 == lost);
}

static void test_live_long_stop_is_a_loss(void)
{
    for (uint64_t from = 3000 * MS; from < 3000 * MS + TIMEOUT / 4; from += 70 * MS) {
        uint64_t a_lost, b_lost;

        pair_run(from, 2 * TIMEOUT, from + 3 * TIMEOUT, &a_lost, &b_lost);
        CU_ASSERT(0 != b_lost);
        CU_ASSERT(b_lost <= from + TIMEOUT + PAIR_STEP); /* within the timeout of its last frame */
    }
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_live_probe_port_and_loss),
        TBRDMA_UT_TEST(test_live_unread_completions_never_lose),
        TBRDMA_UT_TEST(test_live_stall_is_forgiven),
        TBRDMA_UT_TEST(test_live_short_stop_survived_by_both),
        TBRDMA_UT_TEST(test_live_long_stop_is_a_loss),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("live", tests);
}
