/*
 * A rank's link to its Mac's agent (btl_tbrdma_agentlink.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* POSIX_SPAWN_SETSID (glibc 2.26) */
#endif
#include "base/btl_tbrdma_agentlink.h"
#include "base/btl_tbrdma_shmseg.h"

#include "core/tbrdma_mutate.h"
#include "core/tbrdma_route.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define AGENTLINK_MAXQPS  4096 /* virtual queue pairs per rank: 2 per peer process and cable */
#define AGENTLINK_WAIT_NS 200000ull

static struct {
    tbrdma_shmseg_t seg;
    tbrdma_vport_t vp;
    tbrdma_agentseg_hdr_t *hdr;
    int attached;
    pid_t child; /* the agent, when this process started it */
    uint64_t beat, beat_ns, checked_ns;
    int timeout_ms; /* how long the agent may take to answer (attach's) */
    int stale_ms;   /* how long its heartbeat may stand still */
} agentlink = {.stale_ms = TBRDMA_AGENTLINK_STALE_MS};

void tbrdma_agentlink_set_stale(int peer_timeout_ms)
{
    int three = 3 * peer_timeout_ms; /* the peer timeout is at most 3,600,000 ms */

    agentlink.stale_ms = (three > TBRDMA_AGENTLINK_STALE_MS) ? three : TBRDMA_AGENTLINK_STALE_MS;
}

int tbrdma_agentlink_stale_ms(void)
{
    return agentlink.stale_ms;
}

static tbrdma_agentseg_rank_t *agentlink_line(void);

static uint64_t agentlink_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void agentlink_nap(void)
{
    struct timespec ts = {0, (long) AGENTLINK_WAIT_NS};

    nanosleep(&ts, NULL);
}

void tbrdma_agentlink_geom(const tbrdma_agentlink_cfg_t *cfg, tbrdma_agentseg_geom_t *g)
{
    /* per rank 64 one-frame and 8 bulk send slots; the agent 2 x 48 one-frame and 2 x 16 bulk
     * receive slots per cable: each queue pair's receives, and as many again while ranks hold
     * frames (the design's first guesses, to be measured) */
    *g = (tbrdma_agentseg_geom_t){.nranks = cfg->nranks,
                                  .ncables = cfg->ncables,
                                  .bulk_frames = cfg->bulk_frames,
                                  .tx_eager = 64,
                                  .tx_bulk = 8,
                                  .rx_eager = 2 * 48 * cfg->ncables,
                                  .rx_bulk = 2 * 16 * cfg->ncables};
}

/* Starts the agent on segment name, in a session of its own (a signal to the rank's process
 * group does not reach it: it must outlive a killed rank to free what the rank used). */
static int agentlink_spawn(const tbrdma_agentlink_cfg_t *cfg, const char *name, char *err,
                           size_t errlen)
{
    char *argv[] = {(char *) cfg->agent_path,
                    "--segment",
                    (char *) name,
                    "--verbs-lib",
                    (char *) cfg->verbs_lib,
                    "--ledger-dir",
                    (char *) (NULL != cfg->ledger_dir ? cfg->ledger_dir : ""),
                    "--host",
                    (char *) cfg->host,
                    "--job",
                    (char *) cfg->job,
                    NULL};
    posix_spawnattr_t attr;
    sigset_t none;
    int rc;

    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
    rc = posix_spawn(&agentlink.child, cfg->agent_path, NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    if (0 != rc) {
        snprintf(err, errlen, "cannot start the agent %s: %s", cfg->agent_path, strerror(rc));
    }
    return rc;
}

/* The header a new segment's agent reads first: who made it, which cables. */
static void agentlink_fill(tbrdma_agentseg_hdr_t *h, const tbrdma_agentlink_cfg_t *cfg)
{
    h->creator_pid = (uint32_t) getpid();
    for (uint32_t k = 0; k < cfg->ncables; k++) {
        snprintf(h->cables[k].device, sizeof(h->cables[k].device), "%s", cfg->devices[k]);
        h->cables[k].port_num = (uint32_t) cfg->port_nums[k];
    }
}

int tbrdma_agentlink_create(const tbrdma_agentlink_cfg_t *cfg, char *name, char *err, size_t errlen)
{
    tbrdma_agentseg_geom_t g;
    tbrdma_agentseg_plan_t p;
    uint64_t token;
    int rc;

    tbrdma_agentlink_geom(cfg, &g);
    if (0 != tbrdma_agentseg_plan(&g, &p)) {
        snprintf(err, errlen, "no agent segment for %u local ranks and %u cables", cfg->nranks,
                 cfg->ncables);
        return EINVAL;
    }
    rc = tbrdma_shmseg_token(&token);
    if (0 != rc) {
        snprintf(err, errlen, "no random token for the agent's segment: %s", strerror(rc));
        return rc;
    }
    tbrdma_shmseg_name(name, TBRDMA_SHMSEG_NAME_MAX + 1, cfg->job, token);
    rc = tbrdma_shmseg_create(&agentlink.seg, name, p.total, err, errlen);
    if (0 != rc) {
        return rc;
    }
    (void) tbrdma_agentseg_init(agentlink.seg.base, p.total, &p);
    agentlink_fill(agentlink.seg.base, cfg);
    rc = agentlink_spawn(cfg, name, err, errlen);
    if (0 != rc) {
        tbrdma_shmseg_detach(&agentlink.seg);
        return rc;
    }
    atomic_store_explicit(&((tbrdma_agentseg_hdr_t *) agentlink.seg.base)->request,
                          TBRDMA_AGENTSEG_REQ_GO, memory_order_release);
    return 0;
}

/* Maps the whole segment (the creator has it mapped already). */
static int agentlink_map(const char *name, char *err, size_t errlen)
{
    tbrdma_shmseg_t head = {0};
    tbrdma_agentseg_plan_t p;
    int rc;

    if (NULL != agentlink.seg.base) {
        return 0;
    }
    rc = tbrdma_shmseg_attach(&head, name, sizeof(tbrdma_agentseg_hdr_t), getuid(), err, errlen);
    if (0 != rc) {
        return rc;
    }
    rc = tbrdma_agentseg_read(head.base, SIZE_MAX, &p);
    tbrdma_shmseg_detach(&head);
    if (0 != rc) {
        snprintf(err, errlen, "shared memory segment %s is not a tbrdma agent's (version %u)", name,
                 TBRDMA_AGENTSEG_VERSION);
        return EPROTO;
    }
    return tbrdma_shmseg_attach(&agentlink.seg, name, p.total, getuid(), err, errlen);
}

/* Waits until the agent is READY: 0, or EPIPE / ETIMEDOUT with err. */
static int agentlink_wait_ready(int timeout_ms, char *err, size_t errlen)
{
    tbrdma_agentseg_hdr_t *h = agentlink.seg.base;
    uint64_t end = agentlink_now() + (uint64_t) timeout_ms * 1000000ull;

    for (;;) {
        uint32_t st = atomic_load_explicit(&h->state, memory_order_acquire);

        if (TBRDMA_AGENTSEG_READY == st) {
            return 0;
        }
        if (TBRDMA_AGENTSEG_FAILED == st || TBRDMA_AGENTSEG_GONE == st) {
            snprintf(err, errlen, "the tbrdma agent (pid %u) %s: %.200s", h->agent_pid,
                     TBRDMA_AGENTSEG_FAILED == st ? "could not open the cables" : "has ended",
                     h->error);
            return EPIPE;
        }
        if (agentlink_now() > end) {
            snprintf(err, errlen,
                     "the tbrdma agent (pid %u, segment %s) was not ready within %d ms "
                     "(btl_tbrdma_agent_timeout_ms)",
                     h->agent_pid, agentlink.seg.name, timeout_ms);
            return ETIMEDOUT;
        }
        agentlink_nap();
    }
}

int tbrdma_agentlink_attach(const char *name, uint32_t rank, int timeout_ms, char *err,
                            size_t errlen)
{
    tbrdma_agentseg_rank_t *line;
    int rc = agentlink_map(name, err, errlen);

    if (0 != rc) {
        return rc;
    }
    agentlink.hdr = agentlink.seg.base;
    agentlink.timeout_ms = timeout_ms;
    rc = agentlink_wait_ready(timeout_ms, err, errlen);
    if (0 == rc) {
        rc = -tbrdma_vport_open(&agentlink.vp, agentlink.seg.base, agentlink.seg.bytes, rank,
                                AGENTLINK_MAXQPS);
        if (0 != rc) {
            snprintf(err, errlen, "agent segment %s: cannot attach local rank %u: %s", name, rank,
                     strerror(rc));
        }
    }
    if (0 != rc) {
        tbrdma_agentlink_quit();
        return rc;
    }
    line = agentlink_line();
    atomic_store_explicit(&line->pid, (uint32_t) getpid(), memory_order_relaxed);
    atomic_store_explicit(&line->state, TBRDMA_AGENTSEG_RANK_ATTACHED, memory_order_release);
    agentlink.attached = 1;
    agentlink.beat_ns = agentlink_now();
    return 0;
}

void tbrdma_agentlink_seal(void)
{
    if (agentlink.seg.creator && NULL != agentlink.seg.base) {
        shm_unlink(agentlink.seg.name);
        agentlink.seg.creator = 0; /* detach has nothing left to remove */
    }
}

int tbrdma_agentlink_attached(void)
{
    return agentlink.attached;
}

tbrdma_vport_t *tbrdma_agentlink_vport(void)
{
    return agentlink.attached ? &agentlink.vp : NULL;
}

int tbrdma_agentlink_cable(const char *device)
{
    for (uint32_t k = 0; agentlink.attached && k < agentlink.vp.plan.g.ncables; k++) {
        if (0 == strcmp(agentlink.hdr->cables[k].device, device)) {
            return (int) k;
        }
    }
    return -1;
}

void tbrdma_agentlink_cable_qps(int k, uint32_t qpn[2], uint32_t *psn)
{
    const tbrdma_agentseg_cable_t *c = &agentlink.hdr->cables[k];

    qpn[0] = c->qpn[0];
    qpn[1] = c->qpn[1];
    *psn = c->psn;
}

uint32_t tbrdma_agentlink_conn(uint32_t rnd)
{
    uint32_t conn = rnd;

    (void) tbrdma_route_conn(agentlink.vp.rank, rnd, &conn);
    return conn;
}

/* Whether the link's peer fields say what peer says. */
static int agentlink_same_peer(const tbrdma_agentseg_cable_t *c, const tbrdma_agentlink_peer_t *p)
{
    return c->peer_qpn[0] == p->qpn[0] && c->peer_qpn[1] == p->qpn[1] && c->peer_psn == p->psn
           && 0 == memcmp(c->peer_gid, p->gid, sizeof(c->peer_gid));
}

/* The first rank to ask gives the agent the peer (CLAIMED while it writes, then REQUESTED). */
static void agentlink_request(tbrdma_agentseg_cable_t *c, const tbrdma_agentlink_peer_t *p)
{
    uint32_t none = TBRDMA_AGENTSEG_LINK_NONE;

    if (!atomic_compare_exchange_strong(&c->link, &none, TBRDMA_AGENTSEG_LINK_CLAIMED)) {
        return; /* another rank of this Mac asked first */
    }
    c->peer_qpn[0] = p->qpn[0];
    c->peer_qpn[1] = p->qpn[1];
    c->peer_psn = p->psn;
    c->sgid_index = p->sgid_index;
    c->mtu = p->mtu;
    memcpy(c->peer_gid, p->gid, sizeof(c->peer_gid));
    atomic_store_explicit(&c->link, TBRDMA_AGENTSEG_LINK_REQUESTED, memory_order_release);
}

int tbrdma_agentlink_connect(int k, const tbrdma_agentlink_peer_t *peer, char *err, size_t errlen)
{
    tbrdma_agentseg_cable_t *c = &agentlink.hdr->cables[k];
    int timeout_ms = agentlink.timeout_ms;
    uint64_t end = agentlink_now() + (uint64_t) timeout_ms * 1000000ull;
    uint32_t st;

    agentlink_request(c, peer);
    while (TBRDMA_AGENTSEG_LINK_CONNECTED
           != (st = atomic_load_explicit(&c->link, memory_order_acquire))) {
        if (TBRDMA_AGENTSEG_LINK_FAILED == st) {
            snprintf(err, errlen, "the tbrdma agent (pid %u) could not connect cable %s: %.200s",
                     agentlink.hdr->agent_pid, c->device, agentlink.hdr->error);
            return EPIPE;
        }
        if (0 != tbrdma_agentlink_check(tbrdma_agentlink_stale_ms(), err, errlen)) {
            return EPIPE; /* err says what became of the agent */
        }
        if (agentlink_now() > end) {
            snprintf(err, errlen, "the tbrdma agent (pid %u) did not connect cable %s within %d ms",
                     agentlink.hdr->agent_pid, c->device, timeout_ms);
            return ETIMEDOUT;
        }
        agentlink_nap();
    }
    if (!agentlink_same_peer(c, peer)) {
        snprintf(err, errlen,
                 "cable %s: the peer's agent has queue pairs 0x%x/0x%x, but another rank of this "
                 "Mac connected this Mac's agent to 0x%x/0x%x",
                 c->device, peer->qpn[0], peer->qpn[1], c->peer_qpn[0], c->peer_qpn[1]);
        return EPROTO;
    }
    return 0;
}

int tbrdma_agentlink_port_active(int k)
{
    return agentlink.attached
           && 0 != atomic_load_explicit(&agentlink.hdr->cables[k].active, memory_order_relaxed);
}

/* Reaps the agent this process started, if it has ended (it is this process's child). */
static void agentlink_reap(void)
{
    if (0 < agentlink.child && 0 != waitpid(agentlink.child, NULL, WNOHANG)) {
        agentlink.child = 0;
    }
}

/* This rank's control line. */
static tbrdma_agentseg_rank_t *agentlink_line(void)
{
    return (tbrdma_agentseg_rank_t *) ((uint8_t *) agentlink.seg.base + agentlink.vp.plan.rank_off
                                       + agentlink.vp.rank * agentlink.vp.plan.rank_stride);
}

void tbrdma_agentlink_leave(void)
{
    if (agentlink.attached) {
        atomic_store_explicit(&agentlink_line()->state, TBRDMA_AGENTSEG_RANK_DETACHED,
                              memory_order_release);
    }
}

/* Whether the agent's process is gone: reaped here when this process started it (a dead child
 * stays a zombie, which kill(pid, 0) still finds), else no longer there at all. */
static int agentlink_gone(uint32_t pid)
{
    if (0 == pid) {
        return 0; /* it has not said its pid yet */
    }
    if (0 < agentlink.child && (pid_t) pid == agentlink.child) {
        agentlink_reap();
        return 0 == agentlink.child;
    }
    return 0 != kill((pid_t) pid, 0) && ESRCH == errno;
}

/*
 * The agent's liveness, judged under agentlink_check_lock: the progress thread, the liveness
 * thread and a thread connecting a cable check at once. Unlocked, one thread could stamp a newer
 * beat time after another had read its clock, and that one's now - beat_ns wrapped round to
 * "stood still for ever": a live agent taken for stopped (seen in a CI run, 15 s into a job).
 */
static pthread_mutex_t agentlink_check_lock = PTHREAD_MUTEX_INITIALIZER;

static int agentlink_check_locked(const tbrdma_agentseg_hdr_t *h, int stale_ms, char *err,
                                  size_t errlen)
{
    uint64_t now = agentlink_now(), beat, still;
    uint32_t st;

    agentlink.checked_ns = now;
    if (agentlink_gone(h->agent_pid)) {
        snprintf(err, errlen, "the tbrdma agent of this Mac (pid %u) has died", h->agent_pid);
        return EPIPE;
    }
    st = atomic_load_explicit(&h->state, memory_order_acquire);
    beat = atomic_load_explicit(&h->heartbeat, memory_order_relaxed);
    if (beat != agentlink.beat) {
        agentlink.beat = beat;
        agentlink.beat_ns = now;
    }
    still = (now > agentlink.beat_ns || TBRDMA_MUTANT(AGENT_BEAT_UNLOCKED))
                ? now - agentlink.beat_ns
                : 0;
    if (TBRDMA_AGENTSEG_READY == st && still <= (uint64_t) stale_ms * 1000000ull) {
        return 0;
    }
    if (TBRDMA_AGENTSEG_READY == st) {
        snprintf(err, errlen,
                 "the tbrdma agent of this Mac (pid %u) stopped: its heartbeat has not moved for "
                 "%d ms",
                 h->agent_pid, stale_ms);
    } else {
        snprintf(err, errlen, "the tbrdma agent of this Mac (pid %u) has ended", h->agent_pid);
    }
    return EPIPE;
}

int tbrdma_agentlink_check(int stale_ms, char *err, size_t errlen)
{
    tbrdma_agentseg_hdr_t *h = agentlink.hdr;
    int rc;

    if (NULL == h) {
        snprintf(err, errlen, "no tbrdma agent");
        return EPIPE;
    }
    if (agentlink_now() - agentlink.checked_ns < 1000000ull) {
        return 0; /* looked less than 1 ms ago (a racy read: at worst one look more) */
    }
    if (!TBRDMA_MUTANT(AGENT_BEAT_UNLOCKED)) {
        pthread_mutex_lock(&agentlink_check_lock);
    }
    rc = agentlink_check_locked(h, stale_ms, err, errlen);
    if (!TBRDMA_MUTANT(AGENT_BEAT_UNLOCKED)) {
        pthread_mutex_unlock(&agentlink_check_lock);
    }
    return rc;
}

int tbrdma_agentlink_agent_pid(void)
{
    return (NULL == agentlink.hdr) ? 0 : (int) agentlink.hdr->agent_pid;
}

void tbrdma_agentlink_detach(void)
{
    if (agentlink.attached) {
        tbrdma_agentlink_leave();
        tbrdma_vport_close(&agentlink.vp);
        agentlink.attached = 0;
    }
    agentlink.hdr = NULL;
    tbrdma_shmseg_detach(&agentlink.seg);
    agentlink_reap();
}

void tbrdma_agentlink_quit(void)
{
    tbrdma_agentseg_hdr_t *h = agentlink.seg.base;

    if (NULL != h && agentlink.seg.creator) {
        atomic_store_explicit(&h->request, TBRDMA_AGENTSEG_REQ_QUIT, memory_order_release);
    }
    tbrdma_agentlink_detach();
}
