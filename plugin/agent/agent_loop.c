/*
 * The switch loop. Each pass: links the ranks asked for are connected; the ranks' rings are
 * served (sends posted, receive slots taken back); every cable's completions are taken (a send's
 * goes to its rank's done ring, a frame is routed to its rank or dropped and counted) and the
 * receives topped up; then, at most every millisecond, the heartbeat, attaches and departures,
 * and whether anyone is left; every 100 ms the ports' state. Nothing to do: spin a little, then
 * yield, then nap (the ranks may need this machine's cores more than the agent).
 */
#include "agent/agent.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct loop_clock {
    uint64_t beat, port, work; /* when each was last done */
    uint32_t idle;             /* empty passes in a row */
} loop_clock_t;

/* Connects every cable whose link a rank has just requested. Links connected. */
static int loop_links(agent_t *a)
{
    char err[AGENT_ERR_MAX];
    int n = 0;

    for (uint32_t k = 0; k < a->plan.g.ncables; k++) {
        _Atomic uint32_t *link = &a->hdr->cables[k].link;

        if (a->cables[k].connected
            || TBRDMA_AGENTSEG_LINK_REQUESTED != atomic_load_explicit(link, memory_order_acquire)) {
            continue;
        }
        n++;
        if (0 != agent_cable_connect(a, k, err, sizeof(err))) {
            agent_seg_error(a, err);
            atomic_store_explicit(link, TBRDMA_AGENTSEG_LINK_FAILED, memory_order_release);
            continue;
        }
        atomic_store_explicit(link, TBRDMA_AGENTSEG_LINK_CONNECTED, memory_order_release);
    }
    return n;
}

/* A SEND of cable k completed: its rank hears of it (if still there). */
static void loop_sent(agent_t *a, uint32_t k, const tbrdma_vwc_t *wc, uint32_t slot)
{
    agent_slot_t *sl = &a->slots[slot];

    if (tbrdma_agentseg_slot_owner(&a->plan, slot) < 0 || AGENT_SLOT_SENDING != sl->where
        || sl->cable != k) {
        agent_say(a, "device %s: a send completion names slot %u, which has no send posted",
                  a->hdr->cables[k].device, slot);
        return;
    }
    a->cables[k].qp[sl->chan].outstanding--;
    a->c.sends++;
    if (0 != wc->status) {
        a->c.send_errors++;
    }
    /* a status that would read 0 as a byte is still a failure */
    agent_rank_done(a, slot, (0 == wc->status) ? 0 : ((wc->status & 0xff) ? wc->status & 0xff : 1));
}

/* A receive of cable k completed: the frame goes to its rank, or the slot is posted again. */
static void loop_received(agent_t *a, uint32_t k, const tbrdma_vwc_t *wc, uint32_t slot)
{
    agent_slot_t *sl = &a->slots[slot];
    uint8_t chan = sl->chan;
    tbrdma_route_outcome_t out;
    unsigned r = 0;

    if (-1 != tbrdma_agentseg_slot_owner(&a->plan, slot) || AGENT_SLOT_POSTED != sl->where
        || sl->cable != k) {
        agent_say(a, "device %s: a receive completion names slot %u, which has no receive posted",
                  a->hdr->cables[k].device, slot);
        return;
    }
    a->cables[k].qp[chan].posted--;
    if (0 != wc->status) {
        a->c.rx_errors++;
        agent_rx_home(a, k, chan, slot);
        return;
    }
    out = tbrdma_route_frame(&a->routes, a->base + tbrdma_agentseg_slot_off(&a->plan, slot),
                             wc->byte_len, chan, &r);
    /* A rank that attached since the last beat may already get frames: its peers can learn its
     * connection id as soon as it has said ATTACHED. Look once more before dropping. */
    if (TBRDMA_ROUTE_NO_RANK == out && agent_ranks_attach_new(a) > 0) {
        out = tbrdma_route_frame(&a->routes, a->base + tbrdma_agentseg_slot_off(&a->plan, slot),
                                 wc->byte_len, chan, &r);
    }
    if (TBRDMA_ROUTE_TO_RANK != out) {
        a->c.dropped[out]++;
        agent_rx_home(a, k, chan, slot);
        return;
    }
    *agent_desc(a, slot) =
        (tbrdma_agentseg_desc_t){.len = wc->byte_len, .cable = (uint16_t) k, .chan = chan};
    *sl = (agent_slot_t){
        .holder = (int16_t) r, .cable = (uint16_t) k, .chan = chan, .where = AGENT_SLOT_AT_RANK};
    if (0 != tbrdma_ring_push(&a->ranks[r].from, slot)) {
        agent_rank_leave(a, r, "broken: its ring from the agent refused a frame");
        return; /* leaving took the slot home */
    }
    a->c.switched++;
}

/* Every cable's completions. How many, or -1 when a completion queue is dead (said). */
static int loop_completions(agent_t *a)
{
    tbrdma_vwc_t wc[AGENT_POLL_BATCH];
    int total = 0;

    for (uint32_t k = 0; k < a->plan.g.ncables; k++) {
        int n = tbrdma_verbs_poll(a->cables[k].dev, wc, AGENT_POLL_BATCH);

        if (n < 0) {
            char err[AGENT_ERR_MAX];

            snprintf(err, sizeof(err), "device %s: polling its completion queue failed: %s",
                     a->hdr->cables[k].device, strerror(-n));
            agent_seg_fail(a, err);
            return -1;
        }
        for (int i = 0; i < n; i++) {
            uint32_t slot = (uint32_t) wc[i].wr_id;

            if (slot >= a->plan.nslots) {
                continue; /* not a work request of ours */
            }
            if (wc[i].is_recv) {
                loop_received(a, k, &wc[i], slot);
            } else {
                loop_sent(a, k, &wc[i], slot);
            }
        }
        total += n;
    }
    agent_rx_topup(a);
    return total;
}

/* The beat: heartbeat, ranks coming and going; every 100 ms the ports. 1 when the agent is done. */
static int loop_beat(agent_t *a, loop_clock_t *t, uint64_t now)
{
    if (now - t->beat < AGENT_BEAT_NS) {
        return 0;
    }
    t->beat = now;
    atomic_fetch_add_explicit(&a->hdr->heartbeat, 1, memory_order_relaxed);
    if (now - t->port >= AGENT_PORT_NS) {
        t->port = now;
        for (uint32_t k = 0; k < a->plan.g.ncables; k++) {
            atomic_store_explicit(&a->hdr->cables[k].active,
                                  (uint32_t) tbrdma_verbs_port_active(a->cables[k].dev),
                                  memory_order_relaxed);
        }
    }
    agent_ranks_watch(a);
    agent_seg_creator_gone(a);
    return agent_ranks_all_gone(a)
           || TBRDMA_AGENTSEG_REQ_QUIT
                  == atomic_load_explicit(&a->hdr->request, memory_order_acquire);
}

/* Idle policy: spin AGENT_SPIN_PASSES empty passes, then yield, then nap once idle long. */
static void loop_idle(loop_clock_t *t, int work, uint64_t now)
{
    struct timespec nap = {0, AGENT_NAP_NS};

    if (work > 0) {
        t->idle = 0;
        t->work = now;
        return;
    }
    if (++t->idle < AGENT_SPIN_PASSES) {
        return;
    }
    if (now - t->work >= AGENT_NAP_AFTER_NS) {
        nanosleep(&nap, NULL);
    } else {
        sched_yield();
    }
}

int agent_run(agent_t *a)
{
    uint64_t now = agent_now();
    loop_clock_t t = {.beat = now, .port = now, .work = now};

    while (!agent_stop) {
        int work = loop_links(a) + agent_ranks_serve(a);
        int done = loop_completions(a);

        if (done < 0) {
            return 1;
        }
        now = agent_now();
        if (loop_beat(a, &t, now)) {
            break;
        }
        loop_idle(&t, work + done, now);
    }
    return 0;
}
