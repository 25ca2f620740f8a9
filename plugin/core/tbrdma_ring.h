/*
 * A hand-off ring between two processes through shared memory: one producer, one consumer,
 * entries of 32 bits (a frame's index and flags). The first piece of the per-Mac agent
 * (docs/design.md, "Many ranks per Mac"): a rank hands the agent the frames it filled, the agent
 * hands a rank the frames that arrived for it, each way through one of these.
 *
 * Layout in the shared segment: a header of three cache lines (the constants; the producer's
 * tail; the consumer's head, each written by one side only), then the slots. The producer
 * writes a slot, then publishes the tail (release); the consumer reads the tail (acquire), the
 * slot, then publishes the head (release), which gives the slot back. Each side keeps the
 * other's last index in its own handle and reads the shared one only when that says full or
 * empty, so an uncontended hand-off costs one cache line written here and read there.
 *
 * The segment is shared with another process, which may be buggy or gone: a handle takes the
 * capacity once, at attach, checked against the segment's size, and never trusts the indices
 * the other side publishes beyond what the capacity allows (a head ahead of the tail, or a tail
 * more than a capacity ahead of the head, is reported as a broken ring, never read past).
 * Opal-free, verbs-free; C11 atomics only (lock-free on every target: 32-bit indices).
 */
#ifndef TBRDMA_RING_H
#define TBRDMA_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TBRDMA_RING_MAGIC   0x7462726eu /* "tbrn" */
#define TBRDMA_RING_VERSION 1u
#define TBRDMA_RING_LINE    64u /* cache line: Apple M-series and x86-64 both use 64 B for this */
#define TBRDMA_RING_CAP_MIN 2u
#define TBRDMA_RING_CAP_MAX (1u << 20)

/* The shared header (written by init; then tail by the producer, head by the consumer). */
typedef struct tbrdma_ring_shared {
    _Alignas(TBRDMA_RING_LINE) uint32_t magic;
    uint32_t version;
    uint32_t cap;                                     /* slots, a power of two */
    _Alignas(TBRDMA_RING_LINE) _Atomic uint32_t tail; /* entries pushed, mod 2^32 */
    _Alignas(TBRDMA_RING_LINE) _Atomic uint32_t head; /* entries popped, mod 2^32 */
    _Alignas(TBRDMA_RING_LINE) uint32_t slots[];
} tbrdma_ring_shared_t;

/* One side's handle (private memory). */
typedef struct tbrdma_ring {
    tbrdma_ring_shared_t *sh;
    uint32_t mask;  /* cap - 1, taken at attach */
    uint32_t mine;  /* the index this side publishes (producer: tail; consumer: head) */
    uint32_t other; /* the other side's index as last read */
    int producer;   /* this side pushes (else it pops) */
} tbrdma_ring_t;

/* Bytes a ring of cap slots needs (0 when cap is not a power of two in range). */
size_t tbrdma_ring_bytes(uint32_t cap);

/* Lays out an empty ring of cap slots in mem (bytes long, aligned to TBRDMA_RING_LINE).
 * 0, or -EINVAL (cap, alignment) / -ENOSPC (bytes too few). */
int tbrdma_ring_init(void *mem, size_t bytes, uint32_t cap);

/* Attaches a handle to the ring in mem (bytes long) as its producer (producer != 0) or its
 * consumer. 0, or -EPROTO (not a ring of this version) / -EINVAL / -ENOSPC (its capacity does
 * not fit bytes). */
int tbrdma_ring_attach(tbrdma_ring_t *r, void *mem, size_t bytes, int producer);

/* Producer: appends v. 0, -EAGAIN (full) or -EPIPE (the consumer's head is impossible). */
int tbrdma_ring_push(tbrdma_ring_t *r, uint32_t v);

/* Consumer: takes the oldest entry into *v. 0, -EAGAIN (empty) or -EPIPE (the producer's tail
 * is impossible). */
int tbrdma_ring_pop(tbrdma_ring_t *r, uint32_t *v);

/* Entries waiting, as this side sees them now (either side; -EPIPE when impossible). */
int64_t tbrdma_ring_count(tbrdma_ring_t *r);

#endif /* TBRDMA_RING_H */
