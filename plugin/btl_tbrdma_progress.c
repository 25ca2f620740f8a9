/*
 * tbrdma's progress: the pass that polls completions
 * and moves frames, the timers (retransmission, delayed acknowledgements, liveness probes, peer
 * loss), the liveness thread, and how a lost peer is reported to ob1.
 *
 * Liveness (docs/design.md, "Liveness"): UC gives no error for a dead peer or a pulled cable,
 * so every endpoint tracks when it last heard a valid frame. A peer silent for a quarter of
 * btl_tbrdma_peer_timeout_ms is asked to answer (a control frame with TBRDMA_HF_AREQ); a peer
 * silent for the whole timeout is lost. While probes go unanswered the port state is read (at
 * most every 200 ms): a DOWN port fails its endpoints at once, with that reason. Peers answer
 * even while their application computes outside MPI, because the liveness thread runs a pass
 * whenever no application thread has progressed for TBRDMA_LIVENESS_TICK ms.
 *
 * A lost peer: one message naming both hosts, the cable and the reason, every queue pair and
 * memory region released (ob1's error callback aborts the job), then the error callback.
 */
#include "btl_tbrdma_progress.h"
#include "btl_tbrdma_output.h"
#include "btl_tbrdma_zcopy.h"
#include "core/tbrdma_mutate.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PROGRESS_PORT_CHECK_NS 200000000ull /* at most one port query per device per 200 ms */

/* ---- failures --------------------------------------------------------------------------- */

/* The first failed endpoint not reported yet: its message, once. */
static mca_btl_tbrdma_endpoint_t *progress_report_one(mca_btl_tbrdma_module_t *module)
{
    char where[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];

    for (int i = 0; i < module->neps; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        if (TBRDMA_EP_FAILED != ep->state || ep->fail_reported) {
            continue;
        }
        ep->fail_reported = 1;
        mca_btl_tbrdma_endpoint_describe(module, ep, where, sizeof(where));
        snprintf(msg, sizeof(msg), "host %s (%s): lost %s: %s", module->local.host,
                 OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), where, ep->fail_reason);
        mca_btl_tbrdma_show_help("peer-lost", msg);
        return ep;
    }
    return NULL;
}

/*
 * Reports failures to ob1 (application thread, token held once; releases it): the message,
 * then every verbs resource released (ob1's error callback ends the process), then the callback.
 */
static void progress_report_failures(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_endpoint_t *ep = progress_report_one(module);

    module->failure_pending = false;
    if (NULL == ep) {
        mca_btl_tbrdma_token_release(module);
        return;
    }
    mca_btl_tbrdma_release_verbs(module);
    mca_btl_tbrdma_zc_fail_all(module, OPAL_ERR_UNREACH); /* gets in flight end, not hang */
    mca_btl_tbrdma_token_release(module);
    if (NULL != module->error_cb) {
        module->error_cb(&module->super, MCA_BTL_ERROR_FLAGS_FATAL, ep->proc, ep->fail_reason);
    }
}

/* ---- timers ----------------------------------------------------------------------------- */

/* Probes went unanswered: a DOWN port explains it (at most one query per device per 200 ms). */
static void progress_check_port(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                uint64_t now)
{
    const tbrdma_port_info_t *p = &module->ports[ep->local_port];
    char why[320];

    if (mca_btl_tbrdma_elapsed(now, ep->dev->port_checked_ns) < PROGRESS_PORT_CHECK_NS) {
        return;
    }
    ep->dev->port_checked_ns = now;
    if (tbrdma_verbs_port_active(ep->dev->vdev)) {
        return;
    }
    snprintf(why, sizeof(why),
             "port %s (interface %s) is DOWN: the Thunderbolt cable was unplugged, or RDMA was "
             "disabled (rdma_ctl) on one of the two Macs",
             p->device, '\0' != p->ifname[0] ? p->ifname : "?");
    for (int i = 0; i < module->neps; i++) {
        if (module->eps[i]->dev == ep->dev) {
            mca_btl_tbrdma_ep_fail(module, module->eps[i], why);
        }
    }
}

static void progress_liveness(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                              uint64_t now)
{
    int v = tbrdma_live_judge(&ep->live, now, !ep->dev->cq_backlog, &module->live);
    uint64_t silent = tbrdma_live_silent(&ep->live, now);
    char why[320];

    if (v & TBRDMA_LIVE_PROBE) {
        ep->probe = 1; /* answer at once, please */
    }
    if (v & TBRDMA_LIVE_PORT) {
        progress_check_port(module, ep, now);
    }
    if (TBRDMA_EP_CONNECTED == ep->state && (v & TBRDMA_LIVE_LOST)) {
        snprintf(why, sizeof(why),
                 "no frame from it for %.1f s (btl_tbrdma_peer_timeout_ms = %d): the peer process "
                 "died or hangs, its Mac went away, or the cable is broken",
                 (double) silent / 1e9, mca_btl_tbrdma_component.peer_timeout_ms);
        mca_btl_tbrdma_ep_fail(module, ep, why);
    }
}

/*
 * A channel whose transmitted frames stay unacknowledged for the whole peer timeout carries no
 * data any more, even if the peer still answers probes on the other channel: the peer is lost
 * (a wait that never ends would be a silent hang).
 */
static void progress_unacked(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep, int c,
                             uint64_t now)
{
    const mca_btl_tbrdma_chan_t *ch = &ep->chan[c];
    uint64_t waited = tbrdma_rel_tx_unacked_for(&ch->tx, now);
    char why[320];

    if (waited < module->peer_timeout_ns || TBRDMA_EP_CONNECTED != ep->state
        || TBRDMA_MUTANT(WATCHDOG_OFF)) {
        return;
    }
    snprintf(why, sizeof(why),
             "its %s channel acknowledged none of frames %u..%u for %.1f s "
             "(btl_tbrdma_peer_timeout_ms = %d), although the peer still answers: the cable "
             "loses every %s message, or the peer's tbrdma is stuck",
             TBRDMA_CHAN_EAGER == c ? "1-frame" : "bulk", ch->tx.una, ch->tx.sent_hi - 1,
             (double) waited / 1e9, mca_btl_tbrdma_component.peer_timeout_ms,
             TBRDMA_CHAN_EAGER == c ? "small" : "large");
    mca_btl_tbrdma_ep_fail(module, ep, why);
}

static void progress_timers(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint64_t now)
{
    for (int c = 0; c < TBRDMA_NCHAN; c++) {
        mca_btl_tbrdma_chan_t *ch = &ep->chan[c];

        tbrdma_rel_tx_clock(&ch->tx, now);
        if (tbrdma_rel_tx_timeout(&ch->tx, now, &module->timing)) {
            module->stats.timeouts++;
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_FRAME,
                           "channel %d to %s: retransmission timeout, frames %u..%u unacked "
                           "(%u sent), next timeout in %u us, credit up to tx %u (next tx %u)",
                           c, ep->peer_host, ch->tx.una, ch->tx.next_seq - 1, ch->tx.sent_hi,
                           ch->tx.rto_ns / 1000, ch->tx.limit, ch->tx.tx_next);
            ch->snd = ch->head; /* go back to the first unacknowledged frame */
            if (!tbrdma_rel_tx_credit(&ch->tx, 0)) {
                ep->probe = 1; /* the grant that would let it retransmit may have been lost */
            }
        }
        progress_unacked(module, ep, c, now);
    }
    progress_liveness(module, ep, now);
}

/* ---- the pass --------------------------------------------------------------------------- */

/* btl_tbrdma_stats_interval_s: the counters, when the interval has passed since the last time. */
static void progress_stats(mca_btl_tbrdma_module_t *module, uint64_t now)
{
    uint64_t every = mca_btl_tbrdma_component.stats_interval_s * 1000000000ull;
    char when[40];

    if (0 == every || now < module->stats_next_ns) {
        return;
    }
    module->stats_next_ns = now + every;
    snprintf(when, sizeof(when), " after %llu s",
             (unsigned long long) ((now - module->stats_start_ns) / 1000000000ull));
    mca_btl_tbrdma_print_stats(module, when);
}

/*
 * This process did not run for stall ns (stopped, swapped out, paused): its peers' silence and
 * its channels' timers count only the time it listened.
 */
static void progress_forgive(mca_btl_tbrdma_module_t *module, uint64_t stall)
{
    for (int i = 0; i < module->neps; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        tbrdma_live_forgive(&ep->live, stall);
        for (int c = 0; c < TBRDMA_NCHAN; c++) {
            tbrdma_rel_tx_forgive(&ep->chan[c].tx, stall);
        }
    }
}

int mca_btl_tbrdma_pass(mca_btl_tbrdma_module_t *module, bool async, uint64_t now)
{
    uint64_t stall = tbrdma_live_stall(&module->last_pass_ns, now, &module->live);
    int n = 0;

    if (0 != stall) {
        progress_forgive(module, stall);
    }
    module->clock_ns = now;
    module->in_progress++;
    module->async_pass = async;
    if (!async && TBRDMA_MUTANT(HELD_BEFORE_CALLBACKS)) {
        for (int i = 0; i < module->neps; i++) {
            n += mca_btl_tbrdma_deliver_held(module, module->eps[i]);
        }
    }
    if (!async) {
        mca_btl_tbrdma_frag_undefer(module);
        n += mca_btl_tbrdma_run_callbacks(module);
        for (int i = 0; i < module->neps; i++) {
            n += mca_btl_tbrdma_deliver_held(module, module->eps[i]);
        }
    }
    mca_btl_tbrdma_submit_drain(module);
    for (int p = 0; p < TBRDMA_MAX_PORTS && module->verbs_live; p++) {
        if (NULL != module->devices[p]) {
            n += mca_btl_tbrdma_poll_device(module, module->devices[p], now);
        }
    }
    for (int i = 0; i < module->neps && module->verbs_live; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        if (TBRDMA_EP_CONNECTED == ep->state) {
            if (!async) {
                mca_btl_tbrdma_zc_progress(module, ep, now);
            }
            mca_btl_tbrdma_ep_push(module, ep, now);
            progress_timers(module, ep, now);
            mca_btl_tbrdma_ep_flush_owed(module, ep, now);
        }
    }
    progress_stats(module, now);
    module->async_pass = false;
    module->in_progress--;
    return n;
}

int mca_btl_tbrdma_component_progress(void)
{
    mca_btl_tbrdma_module_t *module = mca_btl_tbrdma_component.module;
    uint64_t now;
    int n;

    if (NULL == module || !module->verbs_live) {
        return 0;
    }
    now = mca_btl_tbrdma_now(); /* one clock read per call: it is not free in every VM */
    atomic_store_explicit(&module->last_app_progress, now, memory_order_relaxed);
    if (!mca_btl_tbrdma_token_try(module)) {
        return 0; /* another thread is progressing */
    }
    if (0 != module->in_progress) {
        mca_btl_tbrdma_token_release(module); /* called from an ob1 callback of our own pass */
        return 0;
    }
    n = mca_btl_tbrdma_pass(module, false, now);
    if (module->failure_pending) {
        progress_report_failures(module); /* releases the token */
        return n;
    }
    mca_btl_tbrdma_token_release(module);
    return n;
}

/* ---- the liveness thread ---------------------------------------------------------------- */

static void *progress_liveness_main(void *arg)
{
    mca_btl_tbrdma_module_t *module = arg;
    const uint64_t tick = TBRDMA_LIVENESS_TICK * 1000000ull;
    struct timespec nap = {0, TBRDMA_LIVENESS_TICK * 1000000L};
    sigset_t all;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals go to the application's threads */
    mca_btl_tbrdma_token_mark_liveness_thread();
    while (!atomic_load(&module->thread_stop)) {
        nanosleep(&nap, NULL);
        if (!module->verbs_live
            || mca_btl_tbrdma_now() - atomic_load(&module->last_app_progress) < tick) {
            continue;
        }
        if (!mca_btl_tbrdma_token_try(module)) {
            continue;
        }
        if (module->verbs_live && 0 == module->in_progress
            && !TBRDMA_MUTANT(LIVENESS_THREAD_IDLE)) {
            mca_btl_tbrdma_pass(module, true, mca_btl_tbrdma_now());
        }
        mca_btl_tbrdma_token_release(module);
    }
    return NULL;
}

int mca_btl_tbrdma_liveness_start(mca_btl_tbrdma_module_t *module)
{
    int rc;

    if (!mca_btl_tbrdma_component.liveness_thread || module->thread_running) {
        return OPAL_SUCCESS;
    }
    atomic_store(&module->thread_stop, 0);
    atomic_store(&module->last_app_progress, mca_btl_tbrdma_now());
    rc = pthread_create(&module->thread, NULL, progress_liveness_main, module);
    if (0 != rc) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "cannot start the liveness thread (%s): peers computing outside MPI for "
                       "longer than btl_tbrdma_peer_timeout_ms will be declared lost",
                       strerror(rc));
        return OPAL_ERROR;
    }
    module->thread_running = true;
    return OPAL_SUCCESS;
}

void mca_btl_tbrdma_liveness_stop(mca_btl_tbrdma_module_t *module)
{
    if (!module->thread_running) {
        return;
    }
    atomic_store(&module->thread_stop, 1);
    pthread_join(module->thread, NULL);
    module->thread_running = false;
}
