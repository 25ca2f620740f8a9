/*
 * tbrdma's progress (engine layer): the pass that polls completions, moves frames and runs the
 * timers, called by the component's progress function (application threads), by the liveness
 * thread (btl_tbrdma_liveness.c), by the connection handshake and by finalize's drain; and how a
 * lost peer is reported to ob1: every queue pair and memory region released, one message naming
 * both hosts, the cable and the reason, then the error callback (ob1's aborts the job).
 */
#include "engine/btl_tbrdma_progress.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "channel/btl_tbrdma_chan.h"
#include "channel/btl_tbrdma_completion.h"
#include "core/tbrdma_mutate.h"
#include "engine/btl_tbrdma_stats.h"
#include "engine/btl_tbrdma_teardown.h"
#include "engine/btl_tbrdma_timers.h"
#include "proto/btl_tbrdma_send.h"
#include "proto/zcopy/btl_tbrdma_zcopy.h"

#include <stdio.h>

/* ---- failures --------------------------------------------------------------------------- */

/* The first failed endpoint not reported yet, its message in msg (shown once). */
static mca_btl_tbrdma_endpoint_t *progress_report_one(mca_btl_tbrdma_module_t *module, char *msg,
                                                      size_t len)
{
    char where[TBRDMA_MSG_MAX / 2];

    for (int i = 0; i < module->neps; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        if (TBRDMA_EP_FAILED != ep->state || ep->fail_reported) {
            continue;
        }
        ep->fail_reported = 1;
        if (module->agent_lost) { /* not a peer's fault: every peer is lost alike */
            snprintf(msg, len, "host %s (%s): %s", module->local.host,
                     OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), ep->fail_reason);
            return ep;
        }
        mca_btl_tbrdma_endpoint_describe(module, ep, where, sizeof(where));
        snprintf(msg, len, "host %s (%s): lost %s: %s", module->local.host,
                 OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), where, ep->fail_reason);
        return ep;
    }
    return NULL;
}

/*
 * Reports failures to ob1 (application thread, token held once; releases it): every verbs
 * resource released first (ob1's error callback ends the process, and the launcher may end it
 * sooner: the message can take long to get out), then the message, then the zero-copy gets
 * failed (ob1 aborts at the first), then the callback.
 */
static void progress_report_failures(mca_btl_tbrdma_module_t *module)
{
    char msg[TBRDMA_MSG_MAX];
    mca_btl_tbrdma_endpoint_t *ep = progress_report_one(module, msg, sizeof(msg));

    module->failure_pending = false;
    if (NULL == ep) {
        mca_btl_tbrdma_token_release(module);
        return;
    }
    mca_btl_tbrdma_release_verbs(module);
    /* before the gets fail: ob1 aborts on those */
    mca_btl_tbrdma_show_help(module->agent_lost ? "agent-lost" : "peer-lost", msg);
    mca_btl_tbrdma_zc_fail_all(module, OPAL_ERR_UNREACH); /* gets in flight end, not hang */
    mca_btl_tbrdma_token_release(module);
    if (NULL != module->error_cb) {
        module->error_cb(&module->super, MCA_BTL_ERROR_FLAGS_FATAL, ep->proc, ep->fail_reason);
    }
}

/* ---- the pass --------------------------------------------------------------------------- */

int mca_btl_tbrdma_pass(mca_btl_tbrdma_module_t *module, bool async, uint64_t now)
{
    uint64_t stall = tbrdma_live_stall(&module->last_pass_ns, now, &module->live);
    int n = 0;

    if (0 != stall) {
        mca_btl_tbrdma_timers_forgive(module, stall);
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
            mca_btl_tbrdma_timers(module, ep, now);
            mca_btl_tbrdma_ep_flush_owed(module, ep, now);
        }
    }
    mca_btl_tbrdma_stats_tick(module, now);
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
