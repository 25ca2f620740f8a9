/*
 * Multi-cable striping, the pure part (docs/design.md, "Multi-cable striping"): whether a
 * fragment is striped over the cables of a pair of hosts, and which cable carries it. The
 * plugin (btl_tbrdma_stripe.c) keeps one connection per cable; this module only decides.
 * Opal-free and verbs-free.
 */
#ifndef TBRDMA_STRIPE_H
#define TBRDMA_STRIPE_H

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_STRIPE_FULL UINT32_MAX /* a load meaning "this cable cannot take it now" */

/*
 * 1 when a fragment of frag_bytes, part of a message of msg_bytes (0: unknown), may go to any
 * of ncables cables: several cables, a bulk fragment (larger than eager_max, the 1-frame
 * payload) and a message of at least min_msg bytes. Everything else stays on cable 0, in order.
 */
int tbrdma_stripe_wanted(size_t frag_bytes, size_t msg_bytes, size_t eager_max, size_t min_msg,
                         int ncables);

/*
 * The cable for the next striped fragment: the least loaded of n (load[k]: frames queued and
 * not yet acknowledged on cable k's bulk channel; TBRDMA_STRIPE_FULL: skip it), equal loads
 * taken in turn from *cursor on, which then moves past the choice. -1 when every cable is full
 * (or n < 1).
 */
int tbrdma_stripe_pick(const uint32_t *load, int n, unsigned *cursor);

#endif /* TBRDMA_STRIPE_H */
