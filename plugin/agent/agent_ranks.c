/*
 * The job's local ranks as the agent sees them: a rank attaches (its control line says
 * ATTACHED), hands over send slots and gives back receive slots through its ring to the agent,
 * and leaves (DETACHED: it finalized; its process gone; or broken: an index it had no right to
 * hand over, or a ring it broke). A rank that left is served no more: the receive slots it held
 * come home, its sends not yet posted are forgotten and the completions of those posted are
 * dropped. A rank leaves once; the agent does not take it back.
 *
 * Fairness: the ranks' rings are served round robin, at most AGENT_RANK_BURST entries a turn.
 * Order: a rank's sends of one channel go out in the order it handed them over: a send whose
 * queue pair is full waits in the rank's FIFO of that channel, and its later sends of the channel
 * queue behind it. The ring itself never waits: the receive slots a rank gives back must keep
 * flowing while its sends wait, or two agents whose send queues are full could each wait for
 * receives the other cannot post.
 */
#include "agent/agent.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static tbrdma_agentseg_rank_t *rank_line(agent_t *a, uint32_t r)
{
    return (tbrdma_agentseg_rank_t *) (a->base + a->plan.rank_off
                                       + (size_t) r * a->plan.rank_stride);
}

/* Rank r's three rings: the agent consumes the one to it and produces the other two. */
static int rank_rings(agent_t *a, uint32_t r)
{
    agent_rank_t *rk = &a->ranks[r];
    tbrdma_ring_t *ring[3] = {&rk->to, &rk->from, &rk->done};

    for (int w = TBRDMA_AGENTSEG_TO_AGENT; w <= TBRDMA_AGENTSEG_DONE; w++) {
        int rc = tbrdma_ring_attach(ring[w], a->base + tbrdma_agentseg_ring_off(&a->plan, r, w),
                                    tbrdma_agentseg_ring_bytes(&a->plan, w),
                                    TBRDMA_AGENTSEG_TO_AGENT != w);

        if (0 != rc) {
            return rc;
        }
    }
    return 0;
}

static void rank_attach(agent_t *a, uint32_t r)
{
    agent_rank_t *rk = &a->ranks[r];
    pid_t pid = (pid_t) atomic_load_explicit(&rank_line(a, r)->pid, memory_order_relaxed);
    char err[AGENT_ERR_MAX];

    rk->phase = AGENT_RANK_LEFT; /* unless all of it works */
    rk->pid = pid;
    if (pid <= 0) {
        agent_say(a, "local rank %u attached without its pid: ignored", r);
        return;
    }
    if (0 != tbrdma_procwatch_open(&rk->watch, pid, err, sizeof(err))) {
        agent_say(a, "local rank %u: %s: ignored", r, err);
        return;
    }
    if (0 != rank_rings(a, r)) {
        agent_say(a, "local rank %u (pid %d): its rings are broken: ignored", r, (int) pid);
        tbrdma_procwatch_close(&rk->watch);
        return;
    }
    tbrdma_route_attach(&a->routes, r);
    rk->phase = AGENT_RANK_LIVE;
    rk->pcount[0] = rk->pcount[1] = 0;
    a->c.ranks_attached++;
}

void agent_rank_leave(agent_t *a, uint32_t r, const char *why)
{
    agent_rank_t *rk = &a->ranks[r];
    uint32_t first = tbrdma_agentseg_rx_slot(&a->plan, 0, 0);

    if (AGENT_RANK_LIVE != rk->phase) {
        return;
    }
    if (a->verbose || NULL != strstr(why, "broken")) {
        agent_say(a, "local rank %u (pid %d) left: %s", r, (int) rk->pid, why);
    }
    tbrdma_route_detach(&a->routes, r);
    tbrdma_procwatch_close(&rk->watch);
    rk->phase = AGENT_RANK_LEFT;
    a->c.ranks_left++;
    for (uint32_t s = first; s < a->plan.nslots; s++) {
        agent_slot_t *sl = &a->slots[s];

        if (AGENT_SLOT_AT_RANK == sl->where && (int) r == sl->holder) {
            agent_rx_home(a, sl->cable, sl->chan, s);
        }
    }
    for (int ch = 0; ch < TBRDMA_NCHAN; ch++) {
        for (; rk->pcount[ch] > 0; rk->pcount[ch]--) { /* never posted: forgotten */
            a->slots[rk->pend[ch][rk->phead[ch]]].where = AGENT_SLOT_IDLE;
            rk->phead[ch] = (rk->phead[ch] + 1) % a->pcap;
        }
    }
}

/* A rank that handed over what it must not: said once, and it leaves. */
static void rank_broken(agent_t *a, uint32_t r, const char *what, uint32_t v)
{
    char why[160];

    snprintf(why, sizeof(why), "broken: %s %u", what, v);
    a->c.ranks_broken++;
    agent_rank_leave(a, r, why);
}

int agent_ranks_attach_new(agent_t *a)
{
    int n = 0;

    for (uint32_t r = 0; r < a->plan.g.nranks; r++) {
        if (AGENT_RANK_NONE == a->ranks[r].phase
            && TBRDMA_AGENTSEG_RANK_ATTACHED
                   == atomic_load_explicit(&rank_line(a, r)->state, memory_order_acquire)) {
            rank_attach(a, r);
            n++;
        }
    }
    return n;
}

void agent_ranks_watch(agent_t *a)
{
    agent_ranks_attach_new(a);
    for (uint32_t r = 0; r < a->plan.g.nranks; r++) {
        agent_rank_t *rk = &a->ranks[r];
        uint32_t st = atomic_load_explicit(&rank_line(a, r)->state, memory_order_acquire);

        if (AGENT_RANK_LIVE == rk->phase && TBRDMA_AGENTSEG_RANK_DETACHED == st) {
            agent_rank_leave(a, r, "it detached");
        } else if (AGENT_RANK_LIVE == rk->phase && 0 != tbrdma_procwatch_gone(&rk->watch, 0)) {
            agent_rank_leave(a, r, "its process is gone");
        }
    }
}

int agent_ranks_all_gone(const agent_t *a)
{
    int creator_left = a->creator_gone;

    for (uint32_t r = 0; r < a->plan.g.nranks; r++) {
        if (AGENT_RANK_LIVE == a->ranks[r].phase) {
            return 0;
        }
        /* a creator that is a rank of its own has left when that rank did */
        if (AGENT_RANK_LEFT == a->ranks[r].phase
            && a->ranks[r].pid == (pid_t) a->hdr->creator_pid) {
            creator_left = 1;
        }
    }
    return creator_left;
}

void agent_rank_done(agent_t *a, uint32_t slot, uint8_t status)
{
    int r = tbrdma_agentseg_slot_owner(&a->plan, slot);

    a->slots[slot].where = AGENT_SLOT_IDLE;
    if (r < 0 || AGENT_RANK_LIVE != a->ranks[r].phase) {
        a->c.sends_dropped++; /* its rank left: nobody to tell */
        return;
    }
    agent_desc(a, slot)->status = status;
    if (0 != tbrdma_ring_push(&a->ranks[r].done, slot)) {
        rank_broken(a, (uint32_t) r, "its done ring refused send slot", slot);
    }
}

/* Posts the SEND of rank r's send slot. 0 (posted, or refused and completed with status 1), or
 * -EAGAIN when its queue pair's send queue is full. */
static int rank_send(agent_t *a, uint32_t slot)
{
    tbrdma_agentseg_desc_t d = *agent_desc(a, slot); /* one copy: the rank may be buggy */
    agent_cable_t *c;
    agent_qp_t *q;

    if (d.cable >= a->plan.g.ncables || d.chan >= TBRDMA_NCHAN
        || d.len > tbrdma_agentseg_slot_bytes(&a->plan, slot) || !a->cables[d.cable].connected) {
        a->c.refused++;
        agent_rank_done(a, slot, 1);
        return 0;
    }
    c = &a->cables[d.cable];
    q = &c->qp[d.chan];
    if (q->outstanding >= AGENT_WR_MAX) {
        return -EAGAIN;
    }
    if (0
        != tbrdma_verbs_post_send(q->qp, slot, a->base + tbrdma_agentseg_slot_off(&a->plan, slot),
                                  d.len, c->mr.lkey)) {
        a->c.refused++;
        agent_rank_done(a, slot, 1);
        return 0;
    }
    q->outstanding++;
    a->slots[slot].cable = d.cable;
    a->slots[slot].chan = d.chan;
    return 0;
}

/* Rank r's send slot v: posted now, or queued behind the sends of its channel that wait. */
static void rank_send_or_queue(agent_t *a, uint32_t r, uint32_t v)
{
    agent_rank_t *rk = &a->ranks[r];
    uint8_t ch =
        (agent_desc(a, v)->chan == TBRDMA_CHAN_BULK) ? TBRDMA_CHAN_BULK : TBRDMA_CHAN_EAGER;

    if (0 == rk->pcount[ch] && -EAGAIN != rank_send(a, v)) {
        return;
    }
    rk->pend[ch][(rk->phead[ch] + rk->pcount[ch]) % a->pcap] = v;
    rk->pcount[ch]++; /* cannot overflow: each of the rank's slots is in at most once */
}

/* One entry of rank r's ring. */
static void rank_entry(agent_t *a, uint32_t r, uint32_t v)
{
    int owner = tbrdma_agentseg_slot_owner(&a->plan, v);
    agent_slot_t *sl = &a->slots[(owner >= -1) ? v : 0];

    if ((int) r == owner) {
        if (AGENT_SLOT_IDLE != sl->where) {
            rank_broken(a, r, "handed over twice: send slot", v);
            return;
        }
        sl->where = AGENT_SLOT_SENDING;
        rank_send_or_queue(a, r, v);
    } else if (-1 == owner && AGENT_SLOT_AT_RANK == sl->where && (int) r == sl->holder) {
        agent_rx_home(a, sl->cable, sl->chan, v);
    } else if (-1 == owner) {
        rank_broken(a, r, "gave back one it does not hold: receive slot", v);
    } else {
        rank_broken(a, r, "handed over none of its slots: index", v);
    }
}

/* Rank r's waiting sends, oldest first, while their queue pairs take them. Sends posted. */
static int rank_pending(agent_t *a, uint32_t r)
{
    agent_rank_t *rk = &a->ranks[r];
    int n = 0;

    for (int ch = 0; ch < TBRDMA_NCHAN; ch++) {
        while (rk->pcount[ch] > 0 && -EAGAIN != rank_send(a, rk->pend[ch][rk->phead[ch]])) {
            rk->phead[ch] = (rk->phead[ch] + 1) % a->pcap;
            rk->pcount[ch]--;
            n++;
        }
    }
    return n;
}

/* Rank r's turn: its waiting sends, then up to a burst of its ring. Entries taken. */
static int rank_turn(agent_t *a, uint32_t r)
{
    agent_rank_t *rk = &a->ranks[r];
    int n = rank_pending(a, r), got = 0, rc;
    uint32_t v;

    while (got < (int) AGENT_RANK_BURST && AGENT_RANK_LIVE == rk->phase) {
        rc = tbrdma_ring_pop(&rk->to, &v);
        if (-EAGAIN == rc) {
            break;
        }
        if (0 != rc) {
            rank_broken(a, r, "its ring to the agent is impossible at entry", rk->to.mine);
            break;
        }
        got++;
        rank_entry(a, r, v);
    }
    return n + got;
}

int agent_ranks_serve(agent_t *a)
{
    uint32_t nranks = a->plan.g.nranks;
    int work = 0;

    for (uint32_t i = 0; i < nranks; i++) {
        uint32_t r = (a->next_rank + i) % nranks;

        if (AGENT_RANK_LIVE == a->ranks[r].phase) {
            work += rank_turn(a, r);
        }
    }
    a->next_rank = (a->next_rank + 1) % nranks;
    return work;
}

uint32_t agent_rx_home_count(const agent_t *a)
{
    uint32_t n = 0;

    for (uint32_t s = tbrdma_agentseg_rx_slot(&a->plan, 0, 0); s < a->plan.nslots; s++) {
        n += (AGENT_SLOT_AT_RANK != a->slots[s].where);
    }
    return n;
}
