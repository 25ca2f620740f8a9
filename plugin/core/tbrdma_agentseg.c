/*
 * The layout of a job's shared segment on one Mac (tbrdma_agentseg.h).
 */
#include "tbrdma_agentseg.h"

#include "tbrdma_wire.h"

#include <errno.h>
#include <string.h>

static size_t agentseg_align(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

static uint32_t agentseg_pow2(uint32_t n)
{
    uint32_t c = TBRDMA_RING_CAP_MIN;

    while (c < n) {
        c <<= 1;
    }
    return c;
}

static int agentseg_geom_ok(const tbrdma_agentseg_geom_t *g)
{
    uint64_t slots = (uint64_t) g->nranks * ((uint64_t) g->tx_eager + g->tx_bulk)
                     + (uint64_t) g->rx_eager + g->rx_bulk;

    return g->nranks >= 1 && g->nranks <= 255 && g->ncables >= 1 && g->ncables <= TBRDMA_MAX_PORTS
           && g->bulk_frames >= 2 && g->bulk_frames <= 4095 && g->tx_eager >= 1 && g->rx_eager >= 1
           && g->tx_eager + g->tx_bulk <= TBRDMA_RING_CAP_MAX
           && g->rx_eager + g->rx_bulk <= TBRDMA_RING_CAP_MAX && slots <= TBRDMA_AGENTSEG_SLOTS_MAX;
}

/* Bytes of one rank's send slots. */
static size_t agentseg_rank_slab(const tbrdma_agentseg_plan_t *p)
{
    return ((size_t) p->g.tx_eager + (size_t) p->g.tx_bulk * p->g.bulk_frames) * TBRDMA_FRAME_BYTES;
}

int tbrdma_agentseg_plan(const tbrdma_agentseg_geom_t *g, tbrdma_agentseg_plan_t *p)
{
    size_t rings, agent_slab;

    if (!agentseg_geom_ok(g)) {
        return -EINVAL;
    }
    memset(p, 0, sizeof(*p));
    p->g = *g;
    p->to_ring_cap = agentseg_pow2(g->tx_eager + g->tx_bulk + g->rx_eager + g->rx_bulk);
    p->from_ring_cap = agentseg_pow2(g->rx_eager + g->rx_bulk);
    p->done_ring_cap = agentseg_pow2(g->tx_eager + g->tx_bulk);
    p->to_ring_bytes = agentseg_align(tbrdma_ring_bytes(p->to_ring_cap), TBRDMA_RING_LINE);
    p->from_ring_bytes = agentseg_align(tbrdma_ring_bytes(p->from_ring_cap), TBRDMA_RING_LINE);
    p->done_ring_bytes = agentseg_align(tbrdma_ring_bytes(p->done_ring_cap), TBRDMA_RING_LINE);
    rings = p->to_ring_bytes + p->from_ring_bytes + p->done_ring_bytes;
    p->rank_off = agentseg_align(sizeof(tbrdma_agentseg_hdr_t), TBRDMA_RING_LINE);
    p->rank_stride = agentseg_align(sizeof(tbrdma_agentseg_rank_t), TBRDMA_RING_LINE) + rings;
    p->nslots = g->nranks * (g->tx_eager + g->tx_bulk) + g->rx_eager + g->rx_bulk;
    p->desc_off = p->rank_off + (size_t) g->nranks * p->rank_stride;
    p->slab_off = agentseg_align(p->desc_off + (size_t) p->nslots * sizeof(tbrdma_agentseg_desc_t),
                                 TBRDMA_AGENTSEG_PAGE);
    agent_slab = ((size_t) g->rx_eager + (size_t) g->rx_bulk * g->bulk_frames) * TBRDMA_FRAME_BYTES;
    p->total = p->slab_off + (size_t) g->nranks * agentseg_rank_slab(p) + agent_slab;
    return 0;
}

size_t tbrdma_agentseg_ring_off(const tbrdma_agentseg_plan_t *p, uint32_t r, int which)
{
    size_t off = p->rank_off + (size_t) r * p->rank_stride
                 + agentseg_align(sizeof(tbrdma_agentseg_rank_t), TBRDMA_RING_LINE);

    switch (which) {
    case TBRDMA_AGENTSEG_TO_AGENT:
        return off;
    case TBRDMA_AGENTSEG_FROM_AGENT:
        return off + p->to_ring_bytes;
    default:
        return off + p->to_ring_bytes + p->from_ring_bytes;
    }
}

uint32_t tbrdma_agentseg_ring_cap(const tbrdma_agentseg_plan_t *p, int which)
{
    return (TBRDMA_AGENTSEG_TO_AGENT == which)     ? p->to_ring_cap
           : (TBRDMA_AGENTSEG_FROM_AGENT == which) ? p->from_ring_cap
                                                   : p->done_ring_cap;
}

size_t tbrdma_agentseg_ring_bytes(const tbrdma_agentseg_plan_t *p, int which)
{
    return (TBRDMA_AGENTSEG_TO_AGENT == which)     ? p->to_ring_bytes
           : (TBRDMA_AGENTSEG_FROM_AGENT == which) ? p->from_ring_bytes
                                                   : p->done_ring_bytes;
}

int tbrdma_agentseg_init(void *base, size_t bytes, const tbrdma_agentseg_plan_t *p)
{
    tbrdma_agentseg_hdr_t *h = base;
    uint8_t *b = base;

    if (0 != ((uintptr_t) base % TBRDMA_RING_LINE)) {
        return -EINVAL;
    }
    if (bytes < p->total) {
        return -ENOSPC;
    }
    for (uint32_t r = 0; r < p->g.nranks; r++) {
        for (int which = TBRDMA_AGENTSEG_TO_AGENT; which <= TBRDMA_AGENTSEG_DONE; which++) {
            if (0
                != tbrdma_ring_init(b + tbrdma_agentseg_ring_off(p, r, which),
                                    tbrdma_agentseg_ring_bytes(p, which),
                                    tbrdma_agentseg_ring_cap(p, which))) {
                return -EINVAL;
            }
        }
    }
    h->geom = p->g;
    h->version = TBRDMA_AGENTSEG_VERSION;
    atomic_store_explicit(&h->state, TBRDMA_AGENTSEG_STARTING, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    h->magic = TBRDMA_AGENTSEG_MAGIC; /* last: an attacher that sees it sees the rest */
    return 0;
}

int tbrdma_agentseg_read(const void *base, size_t bytes, tbrdma_agentseg_plan_t *p)
{
    const tbrdma_agentseg_hdr_t *h = base;
    tbrdma_agentseg_geom_t g;

    if (bytes < sizeof(*h) || TBRDMA_AGENTSEG_MAGIC != h->magic) {
        return -EPROTO;
    }
    atomic_thread_fence(memory_order_acquire);
    if (TBRDMA_AGENTSEG_VERSION != h->version) {
        return -EPROTO;
    }
    g = h->geom; /* one copy: the creator may be buggy, so every check runs on this copy */
    if (0 != tbrdma_agentseg_plan(&g, p)) {
        return -EPROTO;
    }
    return (p->total <= bytes) ? 0 : -ENOSPC;
}

uint32_t tbrdma_agentseg_tx_slot(const tbrdma_agentseg_plan_t *p, uint32_t r, int bulk, uint32_t i)
{
    if (r >= p->g.nranks || i >= (bulk ? p->g.tx_bulk : p->g.tx_eager)) {
        return UINT32_MAX;
    }
    return r * (p->g.tx_eager + p->g.tx_bulk) + (bulk ? p->g.tx_eager : 0) + i;
}

uint32_t tbrdma_agentseg_rx_slot(const tbrdma_agentseg_plan_t *p, int bulk, uint32_t i)
{
    if (i >= (bulk ? p->g.rx_bulk : p->g.rx_eager)) {
        return UINT32_MAX;
    }
    return p->g.nranks * (p->g.tx_eager + p->g.tx_bulk) + (bulk ? p->g.rx_eager : 0) + i;
}

int tbrdma_agentseg_slot_owner(const tbrdma_agentseg_plan_t *p, uint32_t slot)
{
    uint32_t per = p->g.tx_eager + p->g.tx_bulk;

    if (slot >= p->nslots) {
        return -2;
    }
    return (slot < p->g.nranks * per) ? (int) (slot / per) : -1;
}

/* Whether slot (in range) is a bulk slot, and its index among its owner's slots of that class. */
static int agentseg_slot_bulk(const tbrdma_agentseg_plan_t *p, uint32_t slot, uint32_t *i_p)
{
    uint32_t per = p->g.tx_eager + p->g.tx_bulk, first = p->g.nranks * per;
    uint32_t i = (slot < first) ? slot % per : slot - first;
    uint32_t eager = (slot < first) ? p->g.tx_eager : p->g.rx_eager;

    *i_p = (i < eager) ? i : i - eager;
    return i >= eager;
}

uint32_t tbrdma_agentseg_slot_bytes(const tbrdma_agentseg_plan_t *p, uint32_t slot)
{
    uint32_t i;

    if (slot >= p->nslots) {
        return 0;
    }
    return agentseg_slot_bulk(p, slot, &i) ? p->g.bulk_frames * TBRDMA_FRAME_BYTES
                                           : TBRDMA_FRAME_BYTES;
}

size_t tbrdma_agentseg_slot_off(const tbrdma_agentseg_plan_t *p, uint32_t slot)
{
    int owner = tbrdma_agentseg_slot_owner(p, slot);
    uint32_t i, eager;
    size_t off;

    if (owner < -1) {
        return 0;
    }
    off = p->slab_off + ((owner >= 0) ? (size_t) owner : p->g.nranks) * agentseg_rank_slab(p);
    eager = (owner >= 0) ? p->g.tx_eager : p->g.rx_eager;
    if (!agentseg_slot_bulk(p, slot, &i)) {
        return off + (size_t) i * TBRDMA_FRAME_BYTES;
    }
    return off + ((size_t) eager + (size_t) i * p->g.bulk_frames) * TBRDMA_FRAME_BYTES;
}
