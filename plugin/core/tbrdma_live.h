/*
 * Liveness of one peer: the rules that decide when a silent peer is probed, when its port is
 * looked at, and when it is lost (Apple's RDMA reports no error for a dead peer or a pulled
 * cable). Pure arithmetic on clocks the caller passes in; the data path
 * (plugin/engine/btl_tbrdma_timers.c) owns the endpoints and acts on the verdicts;
 * test/unit/test_live.c pins the rules. docs/design.md ("Liveness") explains them.
 *
 * Silence is counted only while this process listened: a pass after a gap longer than the
 * liveness tick (the process was stopped, swapped out, paused in a debugger or a VM) moves every
 * peer's clocks forward by the gap (tbrdma_live_stall, tbrdma_live_forgive), and a peer is
 * never declared lost by a pass that left completions unread (the peer's frames may be among
 * them). A peer is probed after keepalive of silence, keepalive being a tenth of the timeout, so
 * a live peer is heard at least that often; a stall of either process shorter than
 * timeout - 2 x keepalive (80 %: 4 s of the default 5 s) therefore never ends a job.
 */
#ifndef TBRDMA_LIVE_H
#define TBRDMA_LIVE_H

#include <stdint.h>

typedef struct tbrdma_live_cfg {
    uint64_t timeout_ns;   /* silence after which the peer is lost */
    uint64_t keepalive_ns; /* silence after which it is probed, and between probes */
    uint64_t tick_ns;      /* the longest gap between two passes of a process that runs */
} tbrdma_live_cfg_t;

/* One peer. */
typedef struct tbrdma_live {
    uint64_t last_heard; /* its last valid frame */
    uint64_t probe_at;   /* when the next probe may go */
} tbrdma_live_t;

/* What a pass does about a peer (flags). */
#define TBRDMA_LIVE_PROBE 0x1 /* ask it to answer at once */
#define TBRDMA_LIVE_PORT  0x2 /* probes went unanswered: look at the port's state */
#define TBRDMA_LIVE_LOST  0x4 /* silent for the whole timeout: lost */

/* The rules for a peer timeout of timeout_ns and a liveness tick of tick_ns. */
void tbrdma_live_cfg_init(tbrdma_live_cfg_t *cfg, uint64_t timeout_ns, uint64_t tick_ns);

/* A peer connected (or heard) at now. */
void tbrdma_live_start(tbrdma_live_t *l, uint64_t now);

/* A valid frame from the peer arrived at now. */
static inline void tbrdma_live_heard(tbrdma_live_t *l, uint64_t now)
{
    l->last_heard = now;
}

/* How long the peer has been silent at now (0 when now is earlier than its last frame). */
uint64_t tbrdma_live_silent(const tbrdma_live_t *l, uint64_t now);

/*
 * A pass at now, the previous one at *last_pass: returns how long this process did not run
 * beyond the liveness tick (0 normally), and records now as the last pass.
 */
uint64_t tbrdma_live_stall(uint64_t *last_pass, uint64_t now, const tbrdma_live_cfg_t *cfg);

/* Moves the peer's clocks forward by stall ns: time this process did not listen. */
void tbrdma_live_forgive(tbrdma_live_t *l, uint64_t stall);

/*
 * The verdict at now: TBRDMA_LIVE_* flags. drained: the pass read every completion that had
 * arrived (a pass that left some unread never declares a peer lost). A probe verdict also
 * schedules the next one.
 */
int tbrdma_live_judge(tbrdma_live_t *l, uint64_t now, int drained, const tbrdma_live_cfg_t *cfg);

#endif /* TBRDMA_LIVE_H */
