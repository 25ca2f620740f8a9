/*
 * tbrdma peer liveness (see tbrdma_live.h for the rules).
 */
#include "tbrdma_live.h"
#include "tbrdma_mutate.h"

void tbrdma_live_cfg_init(tbrdma_live_cfg_t *cfg, uint64_t timeout_ns, uint64_t tick_ns)
{
    cfg->timeout_ns = timeout_ns;
    cfg->keepalive_ns = timeout_ns / 10;
    cfg->tick_ns = tick_ns;
}

void tbrdma_live_start(tbrdma_live_t *l, uint64_t now)
{
    l->last_heard = now;
    l->probe_at = now;
}

uint64_t tbrdma_live_silent(const tbrdma_live_t *l, uint64_t now)
{
    return (now > l->last_heard) ? now - l->last_heard : 0;
}

uint64_t tbrdma_live_stall(uint64_t *last_pass, uint64_t now, const tbrdma_live_cfg_t *cfg)
{
    uint64_t gap;

    if (now <= *last_pass) {
        return 0; /* a clock read before another thread's pass */
    }
    gap = (0 != *last_pass) ? now - *last_pass : 0;
    *last_pass = now;
    return (gap > cfg->tick_ns && !TBRDMA_MUTANT(STALL_UNFORGIVEN)) ? gap - cfg->tick_ns : 0;
}

void tbrdma_live_forgive(tbrdma_live_t *l, uint64_t stall)
{
    l->last_heard += stall;
    l->probe_at += stall;
}

int tbrdma_live_judge(tbrdma_live_t *l, uint64_t now, int drained, const tbrdma_live_cfg_t *cfg)
{
    uint64_t silent = tbrdma_live_silent(l, now);
    int v = 0;

    if (silent >= cfg->keepalive_ns && now >= l->probe_at) {
        v |= TBRDMA_LIVE_PROBE;
        l->probe_at = now + cfg->keepalive_ns;
    }
    if (silent >= 2 * cfg->keepalive_ns) {
        v |= TBRDMA_LIVE_PORT;
    }
    if (silent >= cfg->timeout_ns && (drained || TBRDMA_MUTANT(UNREAD_JUDGED))
        && !TBRDMA_MUTANT(PEER_TIMEOUT_NEVER)) {
        v |= TBRDMA_LIVE_LOST;
    }
    return v;
}
