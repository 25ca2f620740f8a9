/*
 * Multi-cable striping decisions (see tbrdma_stripe.h).
 */
#include "tbrdma_stripe.h"

int tbrdma_stripe_wanted(size_t frag_bytes, size_t msg_bytes, size_t eager_max, size_t min_msg,
                         int ncables)
{
    return 1 < ncables && frag_bytes > eager_max && 0 < msg_bytes && msg_bytes >= min_msg;
}

int tbrdma_stripe_pick(const uint32_t *load, int n, unsigned *cursor)
{
    int best = -1;

    if (1 > n) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int k = (int) ((*cursor + (unsigned) i) % (unsigned) n);

        if (TBRDMA_STRIPE_FULL != load[k] && (0 > best || load[k] < load[best])) {
            best = k;
        }
    }
    if (0 <= best) {
        *cursor = (unsigned) best + 1;
    }
    return best;
}
