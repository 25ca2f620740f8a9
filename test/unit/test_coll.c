/*
 * Unit tests of plugin/core/tbrdma_coll.c (mesh collectives, the pure part): the all-reduce
 * algorithm by size and number of processes, and the cut of a vector into blocks that cover
 * it exactly once, in order, for every count and number of processes.
 */
#include "tbrdma_coll.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <string.h>

static const tbrdma_coll_limits_t lim = {.onestep_max = 2048, .rsag_min = 65536, .min_procs = 3};

static void test_coll_alg_by_size(void)
{
    CU_ASSERT(TBRDMA_COLL_ONESTEP == tbrdma_coll_allreduce_alg(&lim, 8, 4));
    CU_ASSERT(TBRDMA_COLL_ONESTEP == tbrdma_coll_allreduce_alg(&lim, 2048, 4)); /* the limit */
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&lim, 2049, 4));
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&lim, 65535, 4));
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&lim, 65536, 4));
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&lim, (size_t) 1 << 36, 4));
}

static void test_coll_alg_defers(void)
{
    tbrdma_coll_limits_t off = {.onestep_max = 0, .rsag_min = 0, .min_procs = 2};

    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&lim, 8, 2)); /* below min_procs */
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&lim, 0, 4)); /* nothing to do */
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&off, 8, 4));
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&off, 1 << 20, 4));
    CU_ASSERT(TBRDMA_COLL_ONESTEP
              == tbrdma_coll_allreduce_alg(
                  &(tbrdma_coll_limits_t){.onestep_max = 8, .min_procs = 1}, 8, 2));
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&lim, 8, 1)); /* one process */
}

/* Overlapping limits: the one-step exchange wins; rsag never gets fewer bytes than processes. */
static void test_coll_alg_overlap(void)
{
    tbrdma_coll_limits_t both = {.onestep_max = 4096, .rsag_min = 1, .min_procs = 2};

    CU_ASSERT(TBRDMA_COLL_ONESTEP == tbrdma_coll_allreduce_alg(&both, 4096, 8));
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&both, 4097, 8));
    both.onestep_max = 0;
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&both, 7, 8));
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&both, 8, 8));
}

/* 2 processes have their own one-step limit, which no other count of processes uses. */
static void test_coll_alg_pair(void)
{
    tbrdma_coll_limits_t l = {
        .onestep_max = 0, .pair_max = 1 << 20, .rsag_min = 16384, .min_procs = 2};

    CU_ASSERT(TBRDMA_COLL_ONESTEP == tbrdma_coll_allreduce_alg(&l, 8, 2));
    CU_ASSERT(TBRDMA_COLL_ONESTEP == tbrdma_coll_allreduce_alg(&l, 1 << 20, 2)); /* the limit */
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&l, (1 << 20) + 1, 2));
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&l, 8, 3));
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&l, 1 << 20, 3));
    l.pair_max = 0;
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&l, 8, 2));
    CU_ASSERT(TBRDMA_COLL_RSAG == tbrdma_coll_allreduce_alg(&l, 16384, 2));
    l.min_procs = 3;
    CU_ASSERT(TBRDMA_COLL_DEFER == tbrdma_coll_allreduce_alg(&l, 8, 2));
}

static void test_coll_window(void)
{
    CU_ASSERT(1 == tbrdma_coll_in_window(8, 4, 1, 0, 3));          /* no upper limit */
    CU_ASSERT(1 == tbrdma_coll_in_window(4096, 4, 4096, 4096, 3)); /* both edges included */
    CU_ASSERT(0 == tbrdma_coll_in_window(4095, 4, 4096, 0, 3));
    CU_ASSERT(0 == tbrdma_coll_in_window(4097, 4, 1, 4096, 3));
    CU_ASSERT(0 == tbrdma_coll_in_window(8, 4, 0, 0, 3)); /* min 0: off */
    CU_ASSERT(0 == tbrdma_coll_in_window(8, 2, 1, 0, 3)); /* below min_procs */
    CU_ASSERT(0 == tbrdma_coll_in_window(8, 1, 1, 0, 1)); /* one process */
    CU_ASSERT(1 == tbrdma_coll_in_window(8, 2, 1, 0, 2));
}

static void test_coll_blocks_cover(void)
{
    for (int p = 1; p <= 9; p++) {
        for (size_t count = 0; count <= 40; count++) {
            size_t next = 0, lo = count, hi = 0;

            for (int j = 0; j < p; j++) {
                size_t first, items;

                tbrdma_coll_block(count, p, j, &first, &items);
                CU_ASSERT(first == next);
                next = first + items;
                lo = items < lo ? items : lo;
                hi = items > hi ? items : hi;
            }
            CU_ASSERT(next == count);
            CU_ASSERT(hi - lo <= 1); /* balanced: no cable carries more than one item extra */
        }
    }
}

static void test_coll_blocks_large(void)
{
    size_t first, items;

    tbrdma_coll_block(((size_t) 1 << 33) + 3, 4, 3, &first, &items);
    CU_ASSERT(items == (size_t) 1 << 31);
    CU_ASSERT(first == 3 * ((size_t) 1 << 31) + 3);
    CU_ASSERT(0 == strcmp("one-step exchange", tbrdma_coll_alg_name(TBRDMA_COLL_ONESTEP)));
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_coll_alg_by_size),  TBRDMA_UT_TEST(test_coll_alg_defers),
        TBRDMA_UT_TEST(test_coll_alg_overlap),  TBRDMA_UT_TEST(test_coll_alg_pair),
        TBRDMA_UT_TEST(test_coll_window),       TBRDMA_UT_TEST(test_coll_blocks_cover),
        TBRDMA_UT_TEST(test_coll_blocks_large), TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_coll", tests);
}
