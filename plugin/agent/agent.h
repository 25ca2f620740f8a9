/*
 * tbrdma-agent: the per-Mac agent of a job (docs/design.md, "Many ranks per Mac: a per-Mac
 * agent"). One process per job per Mac owns the cables' real UC queue pairs (2 per cable: the
 * eager and the bulk channel) and switches frames between them and the job's local ranks, which
 * reach it through the job's shared segment (core/tbrdma_agentseg.h). A UC switch: it routes a
 * received frame by its header's conn (core/tbrdma_route.h) and posts the SENDs the ranks hand
 * it; reliability stays with the ranks.
 *
 * Single-threaded, opal-free. The state below is the agent's private memory: what it must not
 * trust to the shared segment (a rank may be buggy or dead), such as which rank holds which
 * receive slot and which sends are in flight, lives here.
 */
#ifndef TBRDMA_AGENT_H
#define TBRDMA_AGENT_H

#include "base/btl_tbrdma_ledger.h"
#include "base/btl_tbrdma_procwatch.h"
#include "base/btl_tbrdma_shmseg.h"
#include "base/btl_tbrdma_verbs.h"
#include "core/tbrdma_agentseg.h"
#include "core/tbrdma_ring.h"
#include "core/tbrdma_route.h"
#include "core/tbrdma_wire.h"

#include <signal.h>
#include <stdint.h>

/* Apple's send queue depth per queue pair: TBRDMA_WR_MAX of plugin/btl_tbrdma.h (copied here:
 * that header includes Open MPI's, which the agent must not need). */
#define AGENT_WR_MAX       63u
#define AGENT_RX_EAGER_MAX 48u /* receives kept posted per eager queue pair, at most */
#define AGENT_RX_BULK_MAX  16u /* ... per bulk queue pair */
#define AGENT_RANK_BURST   8u  /* entries of one rank's ring taken per turn (fairness) */
#define AGENT_POLL_BATCH   32
#define AGENT_ERR_MAX      512

/* Timing (nanoseconds) and the idle policy: spin, then yield, then nap. */
#define AGENT_WAIT_BEAT_NS 10000000ull   /* heartbeat while waiting for GO */
#define AGENT_BEAT_NS      1000000ull    /* heartbeat while switching, at least this apart */
#define AGENT_PORT_NS      1000000000ull /* port state looked at this often (a failure's diagnosis) */
#define AGENT_SPIN_PASSES  200u          /* empty passes spun before yielding */
#define AGENT_NAP_AFTER_NS 100000000ull /* nothing to do this long: nap each pass */
#define AGENT_NAP_NS       100000l      /* one nap */

/* A slot's state in the agent's own bookkeeping (agent_slot_t.where). */
enum agent_slot_where {
    AGENT_SLOT_IDLE = 0, /* a send slot not handed over, or a receive slot in the spare pool */
    AGENT_SLOT_POSTED,   /* a receive slot posted on cable/chan */
    AGENT_SLOT_AT_RANK,  /* a receive slot handed to rank holder */
    AGENT_SLOT_SENDING   /* a send slot taken from its rank: pending, or its SEND posted */
};

typedef struct agent_slot {
    int16_t holder; /* AT_RANK: the rank; else -1 */
    uint16_t cable; /* POSTED / SENDING: the cable */
    uint8_t chan;   /* POSTED / SENDING: the channel */
    uint8_t where;  /* enum agent_slot_where */
} agent_slot_t;

typedef struct agent_qp {
    tbrdma_vqp_t *qp;
    uint32_t qpn;
    uint32_t outstanding; /* SENDs posted and not completed */
    uint32_t posted;      /* receives posted */
    uint32_t target;      /* receives to keep posted */
} agent_qp_t;

typedef struct agent_cable {
    tbrdma_vdev_t *dev;
    tbrdma_vmr_t mr;
    agent_qp_t qp[TBRDMA_NCHAN];
    uint32_t psn;
    int connected;
} agent_cable_t;

/* What the agent knows of one local rank. */
enum agent_rank_phase { AGENT_RANK_NONE = 0, AGENT_RANK_LIVE, AGENT_RANK_LEFT };

typedef struct agent_rank {
    int phase; /* enum agent_rank_phase */
    pid_t pid; /* as its control line said at attach */
    tbrdma_procwatch_t watch;
    tbrdma_ring_t to, from, done;
    /* per channel: sends taken from its ring that wait for room on their queue pair, oldest
     * first (a FIFO of pcap entries in the agent's books: every send slot of the rank fits) */
    uint32_t *pend[TBRDMA_NCHAN];
    uint32_t phead[TBRDMA_NCHAN], pcount[TBRDMA_NCHAN];
} agent_rank_t;

typedef struct agent_counters {
    uint64_t switched;                       /* frames handed to a rank */
    uint64_t dropped[TBRDMA_ROUTE_OUTCOMES]; /* frames not handed on, per route outcome */
    uint64_t rx_errors;                      /* receives completed with an error */
    uint64_t sends, send_errors, refused;    /* SENDs completed, failed, never posted */
    uint64_t sends_dropped;                  /* completions of ranks that left */
    uint64_t ranks_attached, ranks_left, ranks_broken;
} agent_counters_t;

typedef struct agent {
    char host[64];
    int verbose;
    tbrdma_shmseg_t seg;
    uint8_t *base;
    tbrdma_agentseg_hdr_t *hdr;
    tbrdma_agentseg_plan_t plan;
    agent_cable_t cables[TBRDMA_MAX_PORTS];
    agent_rank_t ranks[TBRDMA_ROUTE_RANKS];
    tbrdma_route_table_t routes;
    agent_slot_t *slots;           /* one per slot of the plan */
    uint32_t *pend_store;          /* the ranks' pending FIFOs */
    uint32_t pcap;                 /* entries of one FIFO: a rank's send slots */
    uint32_t *spare[TBRDMA_NCHAN]; /* per channel: receive slots not posted and not at a rank */
    uint32_t nspare[TBRDMA_NCHAN];
    tbrdma_procwatch_t creator;
    int creator_gone;
    uint32_t next_rank; /* round robin */
    agent_counters_t c;
} agent_t;

extern volatile sig_atomic_t agent_stop; /* SIGTERM, SIGINT, SIGHUP */

/* Says "tbrdma-agent HOST: ..." on stderr, one line. */
void agent_say(const agent_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Monotonic nanoseconds. */
uint64_t agent_now(void);

/* agent_seg.c: the segment. Attach: 0 or -1 (said). Wait: the request that ended the wait
 * (TBRDMA_AGENTSEG_REQ_GO or _QUIT; _QUIT also when the creator is gone or a signal came). */
int agent_seg_attach(agent_t *a, const char *name);
int agent_seg_wait(agent_t *a);
int agent_seg_creator_gone(agent_t *a);
void agent_seg_error(agent_t *a, const char *err); /* said, and the header's error */
void agent_seg_fail(agent_t *a, const char *err);  /* the same, and state FAILED */
void agent_seg_leave(agent_t *a);

static inline tbrdma_agentseg_desc_t *agent_desc(agent_t *a, uint32_t slot)
{
    return (tbrdma_agentseg_desc_t *) (a->base + a->plan.desc_off) + slot;
}

/* agent_setup.c: the cables. Open: 0, or -1 with err (nothing left open). */
int agent_cables_open(agent_t *a, char *err, size_t errlen);
void agent_cables_close(agent_t *a);
int agent_cable_connect(agent_t *a, uint32_t k, char *err, size_t errlen);
int agent_rx_post(agent_t *a, uint32_t k, uint8_t chan, uint32_t slot);
void agent_rx_home(agent_t *a, uint32_t k, uint8_t chan, uint32_t slot);
void agent_rx_topup(agent_t *a);
uint8_t agent_rx_chan(const agent_t *a, uint32_t slot);

/* agent_ranks.c: the local ranks. */
void agent_ranks_watch(agent_t *a);
int agent_ranks_attach_new(agent_t *a); /* ranks newly ATTACHED: attached now; how many */
int agent_ranks_serve(agent_t *a);
void agent_rank_leave(agent_t *a, uint32_t r, const char *why);
void agent_rank_done(agent_t *a, uint32_t slot, uint8_t status);
int agent_ranks_all_gone(const agent_t *a);
uint32_t agent_rx_home_count(const agent_t *a);

/* agent_loop.c: the switch. Returns the process's exit code. */
int agent_run(agent_t *a);

#endif /* TBRDMA_AGENT_H */
