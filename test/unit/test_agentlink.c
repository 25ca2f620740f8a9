/*
 * Unit test of plugin/base/btl_tbrdma_agentlink.c: a rank's judgement of its agent's liveness
 * (tbrdma_agentlink_check) while several threads of the rank judge at once, as the progress
 * thread, the liveness thread and a thread connecting a cable do. A stand-in agent (a thread of
 * this test) lays out a segment, says READY and moves the heartbeat every 100 us; four threads
 * check it for 2 s. A live agent must never be taken for stopped (it once was, in a CI run: one
 * thread's newer beat time made another's age of the beat wrap round). Then the stand-in stops
 * beating, and a check says so after the stale time.
 */
#include "base/btl_tbrdma_agentlink.h"
#include "base/btl_tbrdma_shmseg.h"
#include "core/tbrdma_agentseg.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECKERS 4

static tbrdma_agentseg_hdr_t *hdr;
static atomic_int beating, checking, false_stops;

static void nap_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

    nanosleep(&ts, NULL);
}

static void *agent_beats(void *arg)
{
    (void) arg;
    while (atomic_load(&beating)) {
        atomic_fetch_add(&hdr->heartbeat, 1);
        nap_us(100);
    }
    return NULL;
}

static void *rank_checks(void *arg)
{
    char err[256];

    (void) arg;
    while (atomic_load(&checking)) {
        if (0 != tbrdma_agentlink_check(1000, err, sizeof(err))) {
            atomic_fetch_add(&false_stops, 1);
        }
    }
    return NULL;
}

/* A segment laid out for 1 rank and 1 cable, READY, with this process as its agent. */
static void segment_up(tbrdma_shmseg_t *seg, char *name, size_t len)
{
    const tbrdma_agentseg_geom_t g = {.nranks = 1,
                                      .ncables = 1,
                                      .bulk_frames = 2,
                                      .tx_eager = 4,
                                      .tx_bulk = 2,
                                      .rx_eager = 8,
                                      .rx_bulk = 2};
    tbrdma_agentseg_plan_t p;
    uint64_t token = 0;
    char err[256];

    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(&g, &p));
    CU_ASSERT_FATAL(0 == tbrdma_shmseg_token(&token));
    CU_ASSERT_FATAL(0 < tbrdma_shmseg_name(name, len, "test_agentlink", token));
    CU_ASSERT_FATAL(0 == tbrdma_shmseg_create(seg, name, p.total, err, sizeof(err)));
    CU_ASSERT_FATAL(0 == tbrdma_agentseg_init(seg->base, p.total, &p));
    hdr = seg->base;
    hdr->agent_pid = (uint32_t) getpid();
    atomic_store(&hdr->state, TBRDMA_AGENTSEG_READY);
}

static void test_agentlink_check_threads(void)
{
    pthread_t agent, rank[CHECKERS];
    tbrdma_shmseg_t seg;
    char name[64], err[256];

    segment_up(&seg, name, sizeof(name));
    CU_ASSERT_FATAL(0 == tbrdma_agentlink_attach(name, 0, 1000, err, sizeof(err)));
    atomic_store(&beating, 1);
    atomic_store(&checking, 1);
    CU_ASSERT_FATAL(0 == pthread_create(&agent, NULL, agent_beats, NULL));
    for (int i = 0; i < CHECKERS; i++) {
        CU_ASSERT_FATAL(0 == pthread_create(&rank[i], NULL, rank_checks, NULL));
    }
    sleep(2);
    atomic_store(&checking, 0);
    for (int i = 0; i < CHECKERS; i++) {
        pthread_join(rank[i], NULL);
    }
    CU_ASSERT_EQUAL(0, atomic_load(&false_stops)); /* a beating agent is never "stopped" */
    atomic_store(&beating, 0);
    pthread_join(agent, NULL);
    nap_us(2000);
    CU_ASSERT(0 == tbrdma_agentlink_check(1000, err, sizeof(err))); /* sees the last beat */
    nap_us(1200000); /* then no beat for 1.2 s: past the 1000 ms given */
    CU_ASSERT(EPIPE == tbrdma_agentlink_check(1000, err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "heartbeat has not moved for 1000 ms"));
    tbrdma_agentlink_detach();
    tbrdma_shmseg_detach(&seg);
}

/* The limit follows a lengthened peer timeout (3 of them), never below 15 s. */
static void test_agentlink_stale_follows_peer_timeout(void)
{
    CU_ASSERT(TBRDMA_AGENTLINK_STALE_MS == tbrdma_agentlink_stale_ms()); /* before any setting */
    tbrdma_agentlink_set_stale(5000); /* the default peer timeout */
    CU_ASSERT(15000 == tbrdma_agentlink_stale_ms());
    tbrdma_agentlink_set_stale(60000);
    CU_ASSERT(180000 == tbrdma_agentlink_stale_ms());
    tbrdma_agentlink_set_stale(3600000); /* the largest peer timeout */
    CU_ASSERT(10800000 == tbrdma_agentlink_stale_ms());
    tbrdma_agentlink_set_stale(100);
    CU_ASSERT(15000 == tbrdma_agentlink_stale_ms());
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_agentlink_stale_follows_peer_timeout),
        TBRDMA_UT_TEST(test_agentlink_check_threads),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_agentlink", tests);
}
