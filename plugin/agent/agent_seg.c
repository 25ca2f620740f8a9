/*
 * The agent's side of the job's segment: attaching (twice: the header first, to learn the
 * plan, then the whole of it), the wait for the creator's GO, and the two ways out (FAILED with
 * one line of error, GONE), each of which removes the segment's name.
 */
#include "agent/agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t agent_stop = 0;

void agent_say(const agent_t *a, const char *fmt, ...)
{
    char line[AGENT_ERR_MAX + 128];
    int n = snprintf(line, sizeof(line), "tbrdma-agent %s: ", a->host);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t) n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line); /* one write per line: ranks' output interleaves with it */
}

uint64_t agent_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Maps the header only and reads the plan the creator's geometry makes. 0 or -1 (said). */
static int seg_plan(agent_t *a, const char *name, tbrdma_agentseg_plan_t *p)
{
    char err[AGENT_ERR_MAX];
    tbrdma_shmseg_t hdr_only;
    int rc = tbrdma_shmseg_attach(&hdr_only, name, sizeof(tbrdma_agentseg_hdr_t), getuid(), err,
                                  sizeof(err));

    if (0 != rc) {
        agent_say(a, "%s", err);
        return -1;
    }
    /* -ENOSPC only says the plan is larger than the header mapped here: it is filled */
    rc = tbrdma_agentseg_read(hdr_only.base, hdr_only.bytes, p);
    tbrdma_shmseg_detach(&hdr_only);
    if (0 != rc && -ENOSPC != rc) {
        agent_say(a, "shared memory segment %s: not a tbrdma agent segment of version %u", name,
                  TBRDMA_AGENTSEG_VERSION);
        return -1;
    }
    return 0;
}

/* The agent's private bookkeeping of the plan's slots. 0 or -1 (said). */
static int seg_books(agent_t *a)
{
    a->pcap = a->plan.g.tx_eager + a->plan.g.tx_bulk;
    a->pend_store = calloc((size_t) a->plan.g.nranks * TBRDMA_NCHAN * a->pcap, sizeof(uint32_t));
    a->slots = calloc(a->plan.nslots, sizeof(*a->slots));
    a->spare[0] = calloc(a->plan.g.rx_eager + 1, sizeof(uint32_t));
    a->spare[1] = calloc(a->plan.g.rx_bulk + 1, sizeof(uint32_t));
    if (NULL == a->slots || NULL == a->spare[0] || NULL == a->spare[1] || NULL == a->pend_store) {
        agent_say(a, "out of memory for the books of %u slots", a->plan.nslots);
        return -1;
    }
    for (uint32_t s = 0; s < a->plan.nslots; s++) {
        a->slots[s].holder = -1;
    }
    for (uint32_t r = 0; r < a->plan.g.nranks; r++) {
        for (int ch = 0; ch < TBRDMA_NCHAN; ch++) {
            a->ranks[r].pend[ch] = a->pend_store + ((size_t) r * TBRDMA_NCHAN + ch) * a->pcap;
        }
    }
    return 0;
}

int agent_seg_attach(agent_t *a, const char *name)
{
    char err[AGENT_ERR_MAX];
    tbrdma_agentseg_plan_t p;
    int rc;

    if (0 != seg_plan(a, name, &p)) {
        return -1;
    }
    rc = tbrdma_shmseg_attach(&a->seg, name, p.total, getuid(), err, sizeof(err));
    if (0 != rc) {
        agent_say(a, "%s", err);
        return -1;
    }
    a->base = a->seg.base;
    a->hdr = a->seg.base;
    /* again on the whole mapping: the geometry is read once more and must plan the same */
    if (0 != tbrdma_agentseg_read(a->base, a->seg.bytes, &a->plan) || a->plan.total != p.total) {
        agent_say(a, "shared memory segment %s: its geometry changed while it was attached", name);
        goto err_detach;
    }
    if (0 != seg_books(a)) {
        goto err_detach;
    }
    a->hdr->agent_pid = (uint32_t) getpid();
    return 0;

err_detach:
    tbrdma_shmseg_detach(&a->seg);
    a->base = NULL;
    a->hdr = NULL;
    return -1;
}

/* 1 once the process that created the segment has exited (latched: a kqueue says it once). */
static int seg_creator_gone(agent_t *a, int timeout_ms)
{
    int rc;

    if (a->creator_gone) {
        return 1;
    }
    rc = tbrdma_procwatch_gone(&a->creator, timeout_ms);
    if (rc < 0) {
        agent_say(a, "cannot watch creator pid %d: %s: taken for gone", (int) a->creator.pid,
                  strerror(-rc));
    }
    a->creator_gone = (0 != rc);
    return a->creator_gone;
}

int agent_seg_wait(agent_t *a)
{
    char err[AGENT_ERR_MAX];
    pid_t creator = (pid_t) a->hdr->creator_pid;

    if (creator <= 0 || 0 != tbrdma_procwatch_open(&a->creator, creator, err, sizeof(err))) {
        agent_say(a, "creator pid %d: not running: leaving", (int) creator);
        a->creator.fd = -1;
        a->creator_gone = 1;
        return TBRDMA_AGENTSEG_REQ_QUIT;
    }
    for (;;) {
        uint32_t req = atomic_load_explicit(&a->hdr->request, memory_order_acquire);

        if (TBRDMA_AGENTSEG_REQ_WAIT != req) {
            return (TBRDMA_AGENTSEG_REQ_GO == req) ? (int) req : TBRDMA_AGENTSEG_REQ_QUIT;
        }
        if (agent_stop || seg_creator_gone(a, 0)) {
            return TBRDMA_AGENTSEG_REQ_QUIT;
        }
        atomic_fetch_add_explicit(&a->hdr->heartbeat, 1, memory_order_relaxed);
        /* the wait for the creator's exit is the 10 ms between beats */
        if (seg_creator_gone(a, (int) (AGENT_WAIT_BEAT_NS / 1000000ull))) {
            return TBRDMA_AGENTSEG_REQ_QUIT;
        }
    }
}

/* 1 once the creator has exited (the loop's check, without waiting). */
int agent_seg_creator_gone(agent_t *a)
{
    return seg_creator_gone(a, 0);
}

void agent_seg_error(agent_t *a, const char *err)
{
    char *e = a->hdr->error;

    agent_say(a, "%s", err);
    snprintf(e, TBRDMA_AGENTSEG_ERR_BYTES, "tbrdma-agent %s: %s", a->host, err);
    e[strcspn(e, "\n")] = '\0'; /* one line */
}

void agent_seg_fail(agent_t *a, const char *err)
{
    agent_seg_error(a, err);
    atomic_store_explicit(&a->hdr->state, TBRDMA_AGENTSEG_FAILED, memory_order_release);
}

void agent_seg_leave(agent_t *a)
{
    if (NULL == a->hdr) {
        return;
    }
    if (TBRDMA_AGENTSEG_FAILED != atomic_load_explicit(&a->hdr->state, memory_order_relaxed)) {
        atomic_store_explicit(&a->hdr->state, TBRDMA_AGENTSEG_GONE, memory_order_release);
    }
    /* the creator may have removed the name already: ENOENT is no error */
    if (0 != shm_unlink(a->seg.name) && ENOENT != errno) {
        agent_say(a, "shared memory segment %s: cannot remove it: %s", a->seg.name,
                  strerror(errno));
    }
    tbrdma_procwatch_close(&a->creator);
    tbrdma_shmseg_detach(&a->seg);
    a->hdr = NULL;
    a->base = NULL;
    free(a->slots);
    free(a->pend_store);
    free(a->spare[0]);
    free(a->spare[1]);
}
