/*
 * The hand-off ring (tbrdma_ring.h): one producer and one consumer in two processes, indices
 * published with release stores and read with acquire loads, each side's view of the other
 * cached in its own handle.
 */
#include "tbrdma_ring.h"
#include "tbrdma_mutate.h"

#include <errno.h>
#include <string.h>

size_t tbrdma_ring_bytes(uint32_t cap)
{
    if (cap < TBRDMA_RING_CAP_MIN || cap > TBRDMA_RING_CAP_MAX || 0 != (cap & (cap - 1))) {
        return 0;
    }
    return sizeof(tbrdma_ring_shared_t) + (size_t) cap * sizeof(uint32_t);
}

static int ring_aligned(const void *mem)
{
    return NULL != mem && 0 == (uintptr_t) mem % TBRDMA_RING_LINE;
}

int tbrdma_ring_init(void *mem, size_t bytes, uint32_t cap)
{
    tbrdma_ring_shared_t *sh = mem;
    size_t need = tbrdma_ring_bytes(cap);

    if (0 == need || !ring_aligned(mem)) {
        return -EINVAL;
    }
    if (bytes < need) {
        return -ENOSPC;
    }
    memset(sh, 0, sizeof(*sh));
    sh->version = TBRDMA_RING_VERSION;
    sh->cap = cap;
    atomic_init(&sh->tail, 0);
    atomic_init(&sh->head, 0);
    atomic_thread_fence(memory_order_release);
    sh->magic = TBRDMA_RING_MAGIC; /* last: a ring is whole once it carries its magic */
    return 0;
}

/* Entries between from and to (mod 2^32), or -1 when more than cap: an impossible index. */
static int64_t ring_span(uint32_t from, uint32_t to, uint32_t cap)
{
    uint32_t n = to - from;

    return (n > cap) ? -1 : (int64_t) n;
}

/* Entries waiting as this side sees them, given the other side's index (-1: impossible). */
static int64_t ring_queued(const tbrdma_ring_t *r, uint32_t other)
{
    uint32_t cap = r->mask + 1;

    return r->producer ? ring_span(other, r->mine, cap) : ring_span(r->mine, other, cap);
}

int tbrdma_ring_attach(tbrdma_ring_t *r, void *mem, size_t bytes, int producer)
{
    tbrdma_ring_shared_t *sh = mem;
    uint32_t cap;

    if (NULL == r || !ring_aligned(mem)) {
        return -EINVAL;
    }
    if (bytes < sizeof(*sh)) {
        return -ENOSPC;
    }
    atomic_thread_fence(memory_order_acquire);
    if (TBRDMA_RING_MAGIC != sh->magic || TBRDMA_RING_VERSION != sh->version) {
        return -EPROTO;
    }
    cap = sh->cap; /* read once: the other side cannot change this handle's capacity later */
    if (0 == tbrdma_ring_bytes(cap)) {
        return -EPROTO;
    }
    if (bytes < tbrdma_ring_bytes(cap)) {
        return -ENOSPC;
    }
    *r = (tbrdma_ring_t){.sh = sh, .mask = cap - 1, .producer = producer};
    r->mine = atomic_load_explicit(producer ? &sh->tail : &sh->head, memory_order_relaxed);
    r->other = atomic_load_explicit(producer ? &sh->head : &sh->tail, memory_order_acquire);
    return (0 > ring_queued(r, r->other)) ? -EPIPE : 0;
}

int tbrdma_ring_push(tbrdma_ring_t *r, uint32_t v)
{
    uint32_t cap = r->mask + 1;
    uint32_t room = TBRDMA_MUTANT(RING_FULL_ONE_LATE) ? cap + 1 : cap;

    if (r->mine - r->other >= room) { /* full as last seen: has the consumer moved on? */
        uint32_t head = atomic_load_explicit(&r->sh->head, memory_order_acquire);

        if (0 > ring_span(head, r->mine, cap)) {
            return -EPIPE;
        }
        r->other = head;
        if (r->mine - head >= room) {
            return -EAGAIN;
        }
    }
    r->sh->slots[r->mine & r->mask] = v;
    r->mine++;
    atomic_store_explicit(&r->sh->tail, r->mine, memory_order_release);
    return 0;
}

int tbrdma_ring_pop(tbrdma_ring_t *r, uint32_t *v)
{
    if (r->other == r->mine) { /* empty as last seen: has the producer pushed since? */
        uint32_t tail = atomic_load_explicit(&r->sh->tail, memory_order_acquire);

        if (0 > ring_span(r->mine, tail, r->mask + 1)) {
            return -EPIPE;
        }
        r->other = tail;
        if (tail == r->mine) {
            return -EAGAIN;
        }
    }
    *v = r->sh->slots[r->mine & r->mask];
    r->mine++;
    atomic_store_explicit(&r->sh->head, r->mine, memory_order_release); /* the slot is free */
    return 0;
}

int64_t tbrdma_ring_count(tbrdma_ring_t *r)
{
    int64_t n = ring_queued(
        r, atomic_load_explicit(r->producer ? &r->sh->head : &r->sh->tail, memory_order_acquire));

    return (0 > n) ? -EPIPE : n;
}
