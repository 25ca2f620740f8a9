/*
 * Unit tests of plugin/core/tbrdma_agentseg.c (the layout of a job's segment on one Mac):
 * geometries out of range refused; at 1, 16 and 255 ranks every piece aligned, the slots laid
 * end to end with nothing between or over them up to the plan's total, the control lines and
 * rings of each rank inside its stride and before the descriptors; slot indices and owners
 * mapping both ways; a segment laid out, read back and its rings attached; damaged or grown
 * headers refused; and every send slot of a rank fitting its rings at once (no push can find a
 * ring full).
 */
#include "tbrdma_agentseg.h"
#include "tbrdma_wire.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const tbrdma_agentseg_geom_t typical = {.nranks = 16,
                                               .ncables = 4,
                                               .bulk_frames = 17,
                                               .tx_eager = 64,
                                               .tx_bulk = 8,
                                               .rx_eager = 256,
                                               .rx_bulk = 32};

static const tbrdma_agentseg_geom_t small = {.nranks = 4,
                                             .ncables = 2,
                                             .bulk_frames = 3,
                                             .tx_eager = 4,
                                             .tx_bulk = 2,
                                             .rx_eager = 8,
                                             .rx_bulk = 2};

static void test_agentseg_geometry_refused(void)
{
    tbrdma_agentseg_plan_t p;
    tbrdma_agentseg_geom_t g;

#define REFUSED(field, value)                               \
    do {                                                    \
        g = typical;                                        \
        g.field = (value);                                  \
        CU_ASSERT(-EINVAL == tbrdma_agentseg_plan(&g, &p)); \
    } while (0)
    REFUSED(nranks, 0);
    REFUSED(nranks, 256);
    REFUSED(ncables, 0);
    REFUSED(ncables, TBRDMA_MAX_PORTS + 1);
    REFUSED(bulk_frames, 1);
    REFUSED(bulk_frames, 4096);
    REFUSED(tx_eager, 0);
    REFUSED(rx_eager, 0);
    REFUSED(tx_bulk, TBRDMA_RING_CAP_MAX);
    REFUSED(rx_eager, TBRDMA_AGENTSEG_SLOTS_MAX);
#undef REFUSED
    g = typical;
    g.nranks = 255;
    g.tx_eager = 8192; /* 255 x 8200 slots: over the slot limit of 2^20 */
    CU_ASSERT(-EINVAL == tbrdma_agentseg_plan(&g, &p));
    CU_ASSERT(0 == tbrdma_agentseg_plan(&typical, &p));
}

/* Every check on the plan of g that does not need the memory. */
static void plan_checked(const tbrdma_agentseg_geom_t *g)
{
    tbrdma_agentseg_plan_t p;
    size_t end = 0;
    uint32_t bad = 0;

    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(g, &p));
    CU_ASSERT(0 == p.rank_off % TBRDMA_RING_LINE && 0 == p.rank_stride % TBRDMA_RING_LINE);
    CU_ASSERT(p.rank_off >= sizeof(tbrdma_agentseg_hdr_t));
    CU_ASSERT(0 == p.slab_off % TBRDMA_AGENTSEG_PAGE);
    CU_ASSERT(p.slab_off >= p.desc_off + p.nslots * sizeof(tbrdma_agentseg_desc_t));
    CU_ASSERT(p.to_ring_cap >= g->tx_eager + g->tx_bulk + g->rx_eager + g->rx_bulk);
    CU_ASSERT(p.from_ring_cap >= g->rx_eager + g->rx_bulk);
    CU_ASSERT(p.done_ring_cap >= g->tx_eager + g->tx_bulk);
    for (int w = TBRDMA_AGENTSEG_TO_AGENT; w <= TBRDMA_AGENTSEG_DONE; w++) {
        uint32_t cap = tbrdma_agentseg_ring_cap(&p, w);

        CU_ASSERT(0 == (cap & (cap - 1)));
        CU_ASSERT(tbrdma_agentseg_ring_bytes(&p, w) >= tbrdma_ring_bytes(cap));
    }
    CU_ASSERT(p.nslots == g->nranks * (g->tx_eager + g->tx_bulk) + g->rx_eager + g->rx_bulk);
    for (uint32_t r = 0; r < g->nranks; r++) {
        size_t line = p.rank_off + r * p.rank_stride;
        size_t to = tbrdma_agentseg_ring_off(&p, r, TBRDMA_AGENTSEG_TO_AGENT);
        size_t from = tbrdma_agentseg_ring_off(&p, r, TBRDMA_AGENTSEG_FROM_AGENT);
        size_t done = tbrdma_agentseg_ring_off(&p, r, TBRDMA_AGENTSEG_DONE);

        bad += !(line + sizeof(tbrdma_agentseg_rank_t) <= to && to + p.to_ring_bytes <= from);
        bad += !(from + p.from_ring_bytes <= done);
        bad += !(done + p.done_ring_bytes <= line + p.rank_stride);
        bad += (0 != to % TBRDMA_RING_LINE) + (0 != from % TBRDMA_RING_LINE);
        bad += (0 != done % TBRDMA_RING_LINE);
    }
    CU_ASSERT(0 == bad);
    CU_ASSERT(p.rank_off + g->nranks * p.rank_stride <= p.desc_off);
    /* the slots, end to end: no gap, no overlap, each 4 KiB aligned, up to the total */
    end = p.slab_off;
    for (uint32_t s = 0; s < p.nslots; s++) {
        size_t off = tbrdma_agentseg_slot_off(&p, s);
        uint32_t n = tbrdma_agentseg_slot_bytes(&p, s);

        bad += (off != end) + (0 != off % TBRDMA_FRAME_BYTES);
        bad += (n != TBRDMA_FRAME_BYTES && n != g->bulk_frames * TBRDMA_FRAME_BYTES);
        end = off + n;
    }
    CU_ASSERT(0 == bad);
    CU_ASSERT(end == p.total);
}

static void test_agentseg_plans_laid_end_to_end(void)
{
    tbrdma_agentseg_geom_t g = typical;
    tbrdma_agentseg_plan_t p;

    plan_checked(&typical);
    plan_checked(&small);
    g.nranks = 1;
    plan_checked(&g);
    g.nranks = 255;
    plan_checked(&g);
    /* the typical plan's size: 16 ranks' send slots and the agent's receive slots, about 16 MiB */
    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(&typical, &p));
    CU_ASSERT(p.total - p.slab_off
              == (16 * (64 + 8 * 17) + (256 + 32 * 17)) * (size_t) TBRDMA_FRAME_BYTES);
}

static void test_agentseg_slot_indices(void)
{
    tbrdma_agentseg_plan_t p;
    uint32_t bad = 0, s;

    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(&typical, &p));
    for (uint32_t r = 0; r < typical.nranks; r++) {
        for (uint32_t i = 0; i < typical.tx_eager; i++) {
            s = tbrdma_agentseg_tx_slot(&p, r, 0, i);
            bad += ((int) r != tbrdma_agentseg_slot_owner(&p, s));
            bad += (TBRDMA_FRAME_BYTES != tbrdma_agentseg_slot_bytes(&p, s));
        }
        for (uint32_t i = 0; i < typical.tx_bulk; i++) {
            s = tbrdma_agentseg_tx_slot(&p, r, 1, i);
            bad += ((int) r != tbrdma_agentseg_slot_owner(&p, s));
            bad += (17 * TBRDMA_FRAME_BYTES != tbrdma_agentseg_slot_bytes(&p, s));
        }
    }
    for (uint32_t i = 0; i < typical.rx_bulk; i++) {
        s = tbrdma_agentseg_rx_slot(&p, 1, i);
        bad += (-1 != tbrdma_agentseg_slot_owner(&p, s));
        bad += (17 * TBRDMA_FRAME_BYTES != tbrdma_agentseg_slot_bytes(&p, s));
    }
    CU_ASSERT(0 == bad);
    CU_ASSERT(-1 == tbrdma_agentseg_slot_owner(&p, tbrdma_agentseg_rx_slot(&p, 0, 0)));
    CU_ASSERT(p.nslots - 1 == tbrdma_agentseg_rx_slot(&p, 1, typical.rx_bulk - 1));
    CU_ASSERT(UINT32_MAX == tbrdma_agentseg_tx_slot(&p, 16, 0, 0));
    CU_ASSERT(UINT32_MAX == tbrdma_agentseg_tx_slot(&p, 0, 0, 64));
    CU_ASSERT(UINT32_MAX == tbrdma_agentseg_tx_slot(&p, 0, 1, 8));
    CU_ASSERT(UINT32_MAX == tbrdma_agentseg_rx_slot(&p, 0, 256));
    CU_ASSERT(UINT32_MAX == tbrdma_agentseg_rx_slot(&p, 1, 32));
    CU_ASSERT(-2 == tbrdma_agentseg_slot_owner(&p, p.nslots));
    CU_ASSERT(0 == tbrdma_agentseg_slot_bytes(&p, p.nslots));
    CU_ASSERT(0 == tbrdma_agentseg_slot_off(&p, UINT32_MAX));
}

/* A laid-out segment of plan p in fresh, page-aligned, zeroed memory. */
static void *segment_made(const tbrdma_agentseg_plan_t *p)
{
    void *m = NULL;

    CU_ASSERT_FATAL(0 == posix_memalign(&m, TBRDMA_AGENTSEG_PAGE, p->total));
    memset(m, 0, p->total);
    CU_ASSERT_FATAL(0 == tbrdma_agentseg_init(m, p->total, p));
    return m;
}

static void test_agentseg_init_and_read(void)
{
    tbrdma_agentseg_plan_t p, q;
    tbrdma_agentseg_hdr_t *h;
    tbrdma_ring_t ring;
    uint8_t *m;

    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(&small, &p));
    CU_ASSERT(-EPROTO == tbrdma_agentseg_read("", 0, &q)); /* not even a header */
    m = segment_made(&p);
    h = (tbrdma_agentseg_hdr_t *) m;
    CU_ASSERT(TBRDMA_AGENTSEG_STARTING == atomic_load(&h->state));
    CU_ASSERT(0 == tbrdma_agentseg_read(m, p.total, &q));
    CU_ASSERT(0 == memcmp(&p, &q, sizeof(p)));
    for (uint32_t r = 0; r < small.nranks; r++) {
        for (int w = TBRDMA_AGENTSEG_TO_AGENT; w <= TBRDMA_AGENTSEG_DONE; w++) {
            CU_ASSERT(0
                      == tbrdma_ring_attach(&ring, m + tbrdma_agentseg_ring_off(&q, r, w),
                                            tbrdma_agentseg_ring_bytes(&q, w), 1));
            CU_ASSERT(tbrdma_agentseg_ring_cap(&q, w) == ring.mask + 1);
        }
    }
    CU_ASSERT(-ENOSPC == tbrdma_agentseg_read(m, p.total - 1, &q));
    h->geom.nranks = 5; /* grown past the memory it is in */
    CU_ASSERT(-ENOSPC == tbrdma_agentseg_read(m, p.total, &q));
    h->geom.nranks = 0;
    CU_ASSERT(-EPROTO == tbrdma_agentseg_read(m, p.total, &q));
    h->geom.nranks = small.nranks;
    h->version = TBRDMA_AGENTSEG_VERSION + 1; /* another version */
    CU_ASSERT(-EPROTO == tbrdma_agentseg_read(m, p.total, &q));
    h->version = TBRDMA_AGENTSEG_VERSION;
    h->magic ^= 1;
    CU_ASSERT(-EPROTO == tbrdma_agentseg_read(m, p.total, &q));
    CU_ASSERT(-ENOSPC == tbrdma_agentseg_init(m, p.total - 1, &p));
    CU_ASSERT(-EINVAL == tbrdma_agentseg_init(m + 8, p.total - 8, &p));
    free(m);
}

/* Every slot a producer can own at once fits its ring: a push never finds it full. */
static void test_agentseg_rings_never_full(void)
{
    tbrdma_agentseg_plan_t p;
    tbrdma_ring_t to, from, done;
    uint32_t failed = 0;
    uint8_t *m;

    CU_ASSERT_FATAL(0 == tbrdma_agentseg_plan(&small, &p));
    m = segment_made(&p);
    CU_ASSERT_FATAL(0
                    == tbrdma_ring_attach(&to, m + tbrdma_agentseg_ring_off(&p, 3, 0),
                                          tbrdma_agentseg_ring_bytes(&p, 0), 1));
    CU_ASSERT_FATAL(0
                    == tbrdma_ring_attach(&from, m + tbrdma_agentseg_ring_off(&p, 3, 1),
                                          tbrdma_agentseg_ring_bytes(&p, 1), 1));
    CU_ASSERT_FATAL(0
                    == tbrdma_ring_attach(&done, m + tbrdma_agentseg_ring_off(&p, 3, 2),
                                          tbrdma_agentseg_ring_bytes(&p, 2), 1));
    /* rank 3 holds every receive slot (the agent handed it all) and fills every send slot: it
     * hands them all to the agent at once, the emptied receive slots with them */
    for (uint32_t s = 0; s < p.nslots; s++) {
        int owner = tbrdma_agentseg_slot_owner(&p, s);

        if (3 == owner) {
            failed += (0 != tbrdma_ring_push(&to, s)) + (0 != tbrdma_ring_push(&done, s));
        } else if (-1 == owner) {
            failed += (0 != tbrdma_ring_push(&from, s)) + (0 != tbrdma_ring_push(&to, s));
        }
    }
    CU_ASSERT(0 == failed);
    CU_ASSERT(small.tx_eager + small.tx_bulk + small.rx_eager + small.rx_bulk
              == tbrdma_ring_count(&to));
    CU_ASSERT(small.rx_eager + small.rx_bulk == tbrdma_ring_count(&from));
    free(m);
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_agentseg_geometry_refused),
        TBRDMA_UT_TEST(test_agentseg_plans_laid_end_to_end),
        TBRDMA_UT_TEST(test_agentseg_slot_indices),
        TBRDMA_UT_TEST(test_agentseg_init_and_read),
        TBRDMA_UT_TEST(test_agentseg_rings_never_full),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_agentseg", tests);
}
