/*
 * Mesh collectives, the pure part: the choice of all-reduce algorithm by size and the cut of
 * a vector into blocks (tbrdma_coll.h).
 */
#include "tbrdma_coll.h"

tbrdma_coll_alg_t tbrdma_coll_allreduce_alg(const tbrdma_coll_limits_t *lim, size_t bytes,
                                            int nprocs)
{
    if (0 == bytes || nprocs < 2 || nprocs < lim->min_procs) {
        return TBRDMA_COLL_DEFER;
    }
    if (bytes <= lim->onestep_max || (2 == nprocs && bytes <= lim->pair_max)) {
        return TBRDMA_COLL_ONESTEP;
    }
    if (0 != lim->rsag_min && bytes >= lim->rsag_min && bytes >= (size_t) nprocs) {
        return TBRDMA_COLL_RSAG;
    }
    return TBRDMA_COLL_DEFER;
}

int tbrdma_coll_in_window(size_t bytes, int nprocs, size_t min, size_t max, int min_procs)
{
    if (nprocs < 2 || nprocs < min_procs || 0 == min || bytes < min) {
        return 0;
    }
    return 0 == max || bytes <= max;
}

void tbrdma_coll_block(size_t count, int nprocs, int j, size_t *first, size_t *items)
{
    size_t n = (size_t) nprocs, per = count / n, extra = count % n, k = (size_t) j;

    *items = per + (k < extra ? 1 : 0);
    *first = k * per + (k < extra ? k : extra);
}

const char *tbrdma_coll_alg_name(tbrdma_coll_alg_t alg)
{
    switch (alg) {
    case TBRDMA_COLL_ONESTEP:
        return "one-step exchange";
    case TBRDMA_COLL_RSAG:
        return "reduce-scatter + all-gather";
    default:
        return "deferred";
    }
}
