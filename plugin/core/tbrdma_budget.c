/*
 * Queue pair budget arithmetic and its start-up message (see tbrdma_budget.h).
 */
#include "tbrdma_budget.h"
#include "tbrdma_mutate.h"

#include <errno.h>
#include <stdio.h>

int tbrdma_budget_needed(const tbrdma_budget_use_t *u)
{
    if (TBRDMA_MUTANT(QP_BUDGET_PER_PROCESS)) {
        return u->peer_ranks * u->qps_per_pair; /* this process's own queue pairs only */
    }
    return u->local_ranks * u->peer_ranks * u->qps_per_pair;
}

int tbrdma_budget_max_ranks(int budget, int qps_per_pair)
{
    int r = 0;

    while ((r + 1) * (r + 1) * qps_per_pair <= budget) {
        r++;
    }
    return r;
}

int tbrdma_budget_check(const tbrdma_budget_use_t *u, int budget, char *msg, size_t len)
{
    int need = tbrdma_budget_needed(u);
    int fit = tbrdma_budget_max_ranks(budget, u->qps_per_pair);

    if (need <= budget) {
        return 0;
    }
    snprintf(msg, len,
             "host %s: device %s (interface %s, cable to %s) needs %d queue pairs for this job "
             "(%d ranks on %s x %d ranks on %s x %d queue pairs per pair of ranks) but the "
             "budget is %d per device, shared by every process of the Mac "
             "(btl_tbrdma_max_qps_per_device; Apple's limit is %d); run at most %d %s per Mac "
             "(for example mpirun --map-by ppr:%d:node), or let one tbrdma agent per Mac hold "
             "the queue pairs for every rank of the Mac (btl_tbrdma_agent auto or on, turned "
             "off in this job)",
             u->host, u->device, u->interface, u->peer_host, need, u->local_ranks, u->host,
             u->peer_ranks, u->peer_host, u->qps_per_pair, budget, TBRDMA_APPLE_QP_BUDGET, fit,
             1 == fit ? "rank" : "ranks", fit > 0 ? fit : 1);
    return -ENOSPC;
}
