/*
 * libtbsim link model: the time at which a frame sent on a device arrives at the other end of
 * its cable (see test/sim/README.md, "Link model").
 *
 * Each cable has a rate and a one-way latency (struct tbsim_link, changed live by tbsimctl
 * link), and each direction is its own wire (tbsim_dev.wire_free_ns of the sending end, shared
 * by every QP of every process on that device). A frame of len bytes is ready at
 * max(the post of its send, the post of the receive it consumes + latency: the credit crosses
 * the cable too); it takes the wire once the wire is free, holds it for len * 8 / rate, and
 * arrives latency after its last byte:
 *
 *     start = max(ready, wire_free);  wire_free = start + len * 8 / rate;
 *     arrival = wire_free + latency
 *
 * so on a fixed latency arrival = max(ready + serialisation + latency, the previous frame's
 * arrival on this direction + serialisation). The times come from the posts, not from when the
 * sending process happened to run: a sender that the scheduler held back puts its queued frames
 * on the wire at the times a DMA engine would have (hardware does not wait for the CPU), and
 * the receiver still sees none before its arrival. The sender's completion is untouched (it
 * comes when the WR leaves the send queue, not on delivery, as on a Mac).
 *
 * With the cable's interleave setting (README.md, choice 20), a message of at most one frame
 * does not book the wire: it waits for the one packet on it, as if the device arbitrated its
 * queue pairs packet by packet (arrival = ready + its serialisation + one 4 KiB packet's +
 * latency).
 *
 * Hot path: three relaxed loads and one CAS on shared memory, no system call, no lock.
 */
#include "tbsim_priv.h"

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return (a > b) ? a : b;
}

/* The wire of device dev's direction (the LINK_*_SHARED mutants share one among several). */
static _Atomic uint64_t *link_wire(struct tbsim_fabric *fab, int dev)
{
    if (TBSIM_MUTANT(LINK_DUPLEX_SHARED)) {
        return &fab->devs[dev & ~1].wire_free_ns; /* both directions of the cable on one wire */
    }
    if (TBSIM_MUTANT(LINK_CABLES_SHARED)) {
        for (int d = 0; d < TBSIM_MAX_DEVS; d++) {
            if (fab->devs[d].host == fab->devs[dev].host) {
                return &fab->devs[d].wire_free_ns; /* every cable of the host on one wire */
            }
        }
    }
    return &fab->devs[dev].wire_free_ns;
}

/* Nanoseconds len bytes hold a wire of rate bit/s, rounded up. */
static uint64_t link_ser_ns(uint64_t len, uint64_t rate)
{
    return (len * 8000000000ull + rate - 1) / rate;
}

uint64_t tbsim_link_arrival(struct tbsim_fabric *fab, int dev, struct tbsim_linkmodel *link,
                            const struct tbsim_link_frame *fr, uint64_t now)
{
    uint64_t rate = atomic_load_explicit(&link->rate_bps, memory_order_relaxed);
    uint64_t lat = atomic_load_explicit(&link->latency_ns, memory_order_relaxed);
    _Atomic uint64_t *wire;
    uint64_t ready;
    uint64_t ser;
    uint64_t free_ns;
    uint64_t start;

    if ((0 == rate && 0 == lat) || TBSIM_MUTANT(LINK_OFF)) {
        return now; /* the model is off: as soon as it is copied */
    }
    ready = max_u64(fr->send_ns, fr->credit_ns + lat);
    if (0 == rate) {
        return ready + lat;
    }
    ser = link_ser_ns(fr->len, rate);
    if (TBSIM_FRAME >= fr->len && atomic_load_explicit(&link->interleave, memory_order_relaxed)
        && !TBSIM_MUTANT(INTERLEAVE_IGNORED)) {
        /* packet-by-packet arbitration: it waits for the one packet on the wire, not for
         * whole messages posted before it (it does not book the wire) */
        return ready + ser + link_ser_ns(TBSIM_FRAME, rate) + lat;
    }
    wire = link_wire(fab, dev);
    free_ns = atomic_load_explicit(wire, memory_order_relaxed);
    do {
        start = max_u64(ready, free_ns);
    } while (!atomic_compare_exchange_weak_explicit(wire, &free_ns, start + ser,
                                                    memory_order_relaxed, memory_order_relaxed));
    return start + ser + lat;
}

void tbsim_link_latch(struct tbsim_linkmodel *to, struct tbsim_linkmodel *from)
{
    atomic_store(&to->rate_bps, atomic_load(&from->rate_bps));
    atomic_store(&to->latency_ns, atomic_load(&from->latency_ns));
    atomic_store(&to->interleave, atomic_load(&from->interleave));
}
