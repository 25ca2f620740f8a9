/*
 * Zero-copy's top (docs/design.md, "Zero-copy large messages"): the plan (which endpoints the
 * queue pair budget leaves room for), the queue pair's epochs, and the dispatch of completions,
 * control messages (HELLO, GRANT, DONE: btl_tbrdma_zcopy_qp.c) and progress to the receiver
 * (btl_tbrdma_zcopy_get.c) and the owner (btl_tbrdma_zcopy_send.c).
 *
 * Epochs. Both ends start at epoch 1 with a queue pair each (state WAIT) and send HELLO(epoch,
 * queue pair number, PSN); a HELLO of the same epoch connects ours to theirs (READY), and ob1 is
 * offered gets from then on (peer_ok). When the receiver of a chunk sees anything but that
 * chunk whole (core/tbrdma_zc.h, tbrdma_zc_judge) it starts the next epoch: it destroys its
 * queue pair (every posted receive goes with it, so no stale chunk can land anywhere), makes a
 * new one and sends HELLO; the peer, on a HELLO of a later epoch, does the same and answers; the
 * receiver then grants its unaccepted chunks again. A queue pair that cannot be made turns
 * zero-copy off on the endpoint (HELLO with queue pair 0): its gets fail and ob1 copies them.
 */
#include "proto/zcopy/btl_tbrdma_zcopy.h"
#include "base/btl_tbrdma_output.h"
#include "core/tbrdma_mutate.h"
#include "proto/zcopy/btl_tbrdma_zcopy_get.h"
#include "proto/zcopy/btl_tbrdma_zcopy_send.h"

#include "core/tbrdma_budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- planning and setup ---------------------------------------------------------------- */

/* 1 when a cable between a local ranks and b peer ranks fits a third queue pair per pair. */
static int zc_fits(int a, int b)
{
    tbrdma_budget_use_t use = {.local_ranks = a, .peer_ranks = b, .qps_per_pair = TBRDMA_NCHAN + 1};

    return tbrdma_budget_needed(&use) <= mca_btl_tbrdma_component.max_qps_per_device;
}

/* 1 when two hosts stripe over several cables: their large messages are copied over all. */
static int zc_striped(const mca_btl_tbrdma_job_t *job, int own, int peer)
{
    return 1 < mca_btl_tbrdma_cables_used(&job->mesh->link[own][peer]);
}

void mca_btl_tbrdma_zc_plan(mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_job_t *job,
                            size_t nprocs)
{
    int own = mca_btl_tbrdma_job_host_index(job, module->local.host);
    mca_btl_tbrdma_endpoint_t *ep;

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        int peer = mca_btl_tbrdma_job_host_index(job, ep->peer_host);
        int a = mca_btl_tbrdma_job_ranks_on(job, nprocs, own);
        int b = mca_btl_tbrdma_job_ranks_on(job, nprocs, peer);
        int known = 0 <= own && 0 <= peer, striped = known && zc_striped(job, own, peer);

        ep->zc_planned = mca_btl_tbrdma_component.zcopy && ep->primary == ep && known && !striped
                         && (zc_fits(a, b) || TBRDMA_MUTANT(ZC_BUDGET_IGNORED));
        if (!mca_btl_tbrdma_component.zcopy || ep->zc_planned || ep->primary != ep) {
            continue;
        }
        if (striped) {
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                           "zero-copy off towards host %s: its %d cables stripe large messages, "
                           "which are copied over all of them",
                           ep->peer_host, job->mesh->link[own][peer].nstripes);
            continue;
        }
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "zero-copy off towards host %s: %d ranks on %s x %d on %s x %d queue "
                       "pairs per pair of ranks exceed the budget of %d per device "
                       "(btl_tbrdma_max_qps_per_device): large messages are copied",
                       ep->peer_host, a, module->local.host, b, ep->peer_host, TBRDMA_NCHAN + 1,
                       mca_btl_tbrdma_component.max_qps_per_device);
    }
}

/* ---- control messages ------------------------------------------------------------------ */

/* ---- epochs ---------------------------------------------------------------------------- */

/* Zero-copy is over on ep: no queue pair, its gets fail (ob1 copies them); tell the peer when
 * the decision is ours. */
static void zc_off(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep, bool tell)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    mca_btl_tbrdma_zc_get_rewind(ep);
    mca_btl_tbrdma_zc_qp_destroy(zc);
    zc->state = TBRDMA_ZC_QP_OFF;
    zc->peer_ok = false;
    zc->hello_owed = tell;
    mca_btl_tbrdma_zc_get_finish(module, ep, true, OPAL_ERROR);
}

/*
 * A fresh queue pair for the current epoch; outstanding chunks and grants are dropped. The new
 * one is created while the old one still exists, so the device cannot give it the old one's
 * number: a chunk still on its way to the old number then finds no queue pair, instead of a
 * receive of the new epoch of the same frame count (where, with checksums off, nothing else
 * would tell its bytes from the chunk granted there). Where the device has no room for both
 * (its queue pair budget), the old one goes first, and the new epoch's PSN and checksums are
 * what is left (docs/design.md, "Zero-copy large messages").
 */
static int zc_renew(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    tbrdma_vqp_t *old = zc->qp;
    uint32_t old_qpn = zc->qpn;

    mca_btl_tbrdma_zc_get_rewind(ep);
    zc->qp = NULL;
    if (0 != mca_btl_tbrdma_zc_qp_new(ep, false)) { /* no room for both: the old one first */
        zc->qp = old;
        mca_btl_tbrdma_zc_qp_destroy(zc);
        old = NULL;
        if (0 != mca_btl_tbrdma_zc_qp_new(ep, true)) {
            zc_off(module, ep, true);
            return -1;
        }
    }
    tbrdma_verbs_qp_destroy(old);
    zc->grant_head = 0;
    zc->ngrants = 0;
    zc->sq_posted = 0;
    TBRDMA_VERBOSE(
        TBRDMA_VERBOSE_PEER, "zero-copy towards host %s: epoch %u, queue pair 0x%x replaces 0x%x%s",
        ep->peer_host, zc->epoch, zc->qpn, old_qpn,
        (NULL == old && zc->qpn == old_qpn) ? " (the same number: no room for both)" : "");
    zc->state = TBRDMA_ZC_QP_WAIT;
    return 0;
}

/* Our queue pair of this epoch meets the peer's: READY. */
static void zc_join(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                    const tbrdma_zc_msg_t *m)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    char err[TBRDMA_MSG_MAX / 4];

    if (0
        != mca_btl_tbrdma_endpoint_qp_connect(module, ep, zc->qp, m->qpn, m->psn, zc->psn, err,
                                              sizeof(err))) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "zero-copy off towards host %s: %s", ep->peer_host,
                       err);
        zc_off(module, ep, true);
        return;
    }
    zc->state = TBRDMA_ZC_QP_READY;
    zc->peer_ok = true;
}

/* Starts a new epoch: new queue pair, HELLO, chunks to grant again (token). */
static void zc_resync(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    module->stats.zc_epochs++;
    ep->zc->epoch++;
    if (0 == zc_renew(module, ep)) {
        ep->zc->hello_owed = true;
    }
}

static void zc_on_hello(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                        const tbrdma_zc_msg_t *m)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;

    switch (tbrdma_zc_on_hello(zc->state, zc->epoch, m->epoch, m->qpn)) {
    case TBRDMA_ZC_HELLO_CONNECT:
        zc_join(module, ep, m);
        break;
    case TBRDMA_ZC_HELLO_ADOPT:
        module->stats.zc_epochs++;
        zc->epoch = m->epoch;
        if (0 == zc_renew(module, ep)) {
            zc->hello_owed = true;
            zc_join(module, ep, m);
        }
        break;
    case TBRDMA_ZC_HELLO_OFF:
        zc_off(module, ep, false);
        break;
    default:
        break;
    }
}

/* ---- completions, messages, progress --------------------------------------------------- */

void mca_btl_tbrdma_zc_complete(mca_btl_tbrdma_module_t *module, const tbrdma_vwc_t *wc)
{
    uint32_t i = tbrdma_zc_wrid_ep(wc->wr_id);
    mca_btl_tbrdma_zc_t *zc = (i < (uint32_t) module->neps) ? module->eps[i]->zc : NULL;

    if (NULL == zc) {
        return;
    }
    if (!tbrdma_zc_wrid_send(wc->wr_id)) {
        mca_btl_tbrdma_zc_get_recv(module->eps[i], tbrdma_zc_wrid_slot(wc->wr_id),
                                   tbrdma_zc_wrid_gen(wc->wr_id), wc, module->clock_ns);
        return;
    }
    /* a send of this epoch's queue pair left its ring (a destroyed one's are forgotten) */
    if (tbrdma_zc_wrid_gen(wc->wr_id) == (zc->epoch & 0xffffffu) && 0 < zc->sq_posted) {
        zc->sq_posted--;
        module->stats.zc_tx_wc_err += (0 != wc->status) ? 1 : 0;
    }
}

void mca_btl_tbrdma_zc_recv(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            const uint8_t *buf, size_t len)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    tbrdma_zc_msg_t m;

    if (NULL == zc || 0 != tbrdma_zc_decode(buf, len, &m)) {
        module->stats.zc_bad_msg++;
        return;
    }
    if (TBRDMA_ZC_HELLO == m.type) {
        zc_on_hello(module, ep, &m);
    } else if (m.epoch != zc->epoch || TBRDMA_ZC_QP_READY != zc->state) {
        return; /* of an epoch that is over */
    } else if (TBRDMA_ZC_GRANT == m.type) {
        mca_btl_tbrdma_zc_send_grant(module, ep, &m);
    } else {
        mca_btl_tbrdma_zc_get_done(ep, &m, module->clock_ns);
    }
}

/* The endpoint's index in module->eps names it in work request ids. */
static void zc_find_index(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep)
{
    for (int i = 0; i < module->neps; i++) {
        if (module->eps[i] == ep) {
            ep->zc->index = (uint32_t) i;
        }
    }
}

void mca_btl_tbrdma_zc_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                uint64_t now)
{
    mca_btl_tbrdma_zc_t *zc = ep->zc;
    bool gets;

    if (NULL == zc) {
        return;
    }
    if (TBRDMA_ZC_INDEX_NONE == zc->index) {
        zc_find_index(module, ep);
    }
    if (zc->hello_owed) {
        mca_btl_tbrdma_zc_send_hello(module, ep);
    }
    /* no get pending (nor a chunk: each belongs to a pending get): no lock on the fast path */
    gets = NULL != __atomic_load_n(&zc->ops_head, __ATOMIC_ACQUIRE);
    if (gets && TBRDMA_ZC_QP_READY == zc->state
        && mca_btl_tbrdma_zc_get_progress(module, ep, now)) {
        zc_resync(module, ep); /* a chunk was not accepted */
    }
    if (TBRDMA_ZC_QP_READY == zc->state) {
        mca_btl_tbrdma_zc_send_progress(module, ep);
    }
    if (gets) {
        mca_btl_tbrdma_zc_get_finish(
            module, ep, TBRDMA_ZC_QP_OFF == zc->state || TBRDMA_ZC_QP_NONE == zc->state,
            OPAL_ERROR);
    }
}

void mca_btl_tbrdma_zc_fail_all(mca_btl_tbrdma_module_t *module, int status)
{
    for (int i = 0; i < module->neps; i++) {
        if (NULL != module->eps[i]->zc) {
            mca_btl_tbrdma_zc_get_rewind(module->eps[i]);
            mca_btl_tbrdma_zc_get_finish(module, module->eps[i], true, status);
        }
    }
}

/* ---- registrations --------------------------------------------------------------------- */

mca_btl_base_registration_handle_t *mca_btl_tbrdma_register_mem(struct mca_btl_base_module_t *btl,
                                                                struct mca_btl_base_endpoint_t *ep,
                                                                void *base, size_t size,
                                                                uint32_t flags)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;

    (void) flags;
    if (NULL == ep || NULL == ep->zc || !ep->zc->peer_ok || !module->verbs_live
        || size < (size_t) mca_btl_tbrdma_component.zcopy_min) {
        return NULL; /* below the switch point, or no zero-copy with this peer: ob1 copies */
    }
    return mca_btl_tbrdma_rcache_register(ep->dev, base, size);
}

/* ---- counters -------------------------------------------------------------------------- */

/* The registration counters of every device, summed; *left_p: regions left at release. */
static void zc_reg_totals(const mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_reg_stats_t *t,
                          int *left_p)
{
    memset(t, 0, sizeof(*t));
    *left_p = 0;
    for (int p = 0; p < TBRDMA_MAX_PORTS; p++) {
        mca_btl_tbrdma_rcache_t *rc = (NULL != module->devices[p]) ? module->devices[p]->zc : NULL;

        if (NULL == rc) {
            continue;
        }
        pthread_mutex_lock(&rc->lock);
        t->made += rc->stats.made;
        t->dropped += rc->stats.dropped;
        t->refused += rc->stats.refused;
        t->over_budget += rc->stats.over_budget;
        t->failed += rc->stats.failed;
        *left_p += rc->at_release;
        pthread_mutex_unlock(&rc->lock);
    }
}

/* The slowest pace a connection learnt (ps a byte), 0 when none has zero-copy. */
static uint32_t zc_slowest_pace(const mca_btl_tbrdma_module_t *module)
{
    uint32_t slowest = 0;

    for (int i = 0; i < module->neps; i++) {
        const mca_btl_tbrdma_zc_t *zc = module->eps[i]->zc;

        if (NULL != zc && zc->pace.ps_per_byte > slowest) {
            slowest = zc->pace.ps_per_byte;
        }
    }
    return slowest;
}

void mca_btl_tbrdma_zc_print_stats(const mca_btl_tbrdma_module_t *module, const char *when)
{
    const mca_btl_tbrdma_stats_t *s = &module->stats;
    mca_btl_tbrdma_reg_stats_t t;
    int left;

    if (!mca_btl_tbrdma_component.zcopy) {
        return;
    }
    zc_reg_totals(module, &t, &left);
    opal_output(mca_btl_tbrdma_component.output,
                "tbrdma zcopy%s: host %s %s: %llu gets (%llu zero-copy bytes received in %llu "
                "chunks), %llu gets copied instead, %llu gets failed; %llu zero-copy bytes sent in "
                "%llu chunks; %llu epochs changed (%llu lost chunks, %llu bad completions, %llu "
                "bad lengths, %llu bad chunk checksums, %llu refused chunks); %llu registrations, "
                "%llu released by the cache, %llu registrations refused, %llu times over the "
                "budget, %llu failed; %d registered at release; chunks given %.3f ns a byte "
                "(the slowest connection's pace)",
                when, module->local.host, OPAL_NAME_PRINT(OPAL_PROC_MY_NAME),
                (unsigned long long) s->zc_gets, (unsigned long long) s->zc_rx_bytes,
                (unsigned long long) s->zc_rx_chunks, (unsigned long long) s->zc_refused,
                (unsigned long long) s->zc_failed, (unsigned long long) s->zc_tx_bytes,
                (unsigned long long) s->zc_tx_chunks, (unsigned long long) s->zc_epochs,
                (unsigned long long) s->zc_why[TBRDMA_ZC_WHY_LOST],
                (unsigned long long) s->zc_why[TBRDMA_ZC_WHY_STATUS],
                (unsigned long long) s->zc_why[TBRDMA_ZC_WHY_LEN],
                (unsigned long long) s->zc_why[TBRDMA_ZC_WHY_CRC],
                (unsigned long long) s->zc_why[TBRDMA_ZC_WHY_REFUSED], (unsigned long long) t.made,
                (unsigned long long) t.dropped, (unsigned long long) t.refused,
                (unsigned long long) t.over_budget, (unsigned long long) t.failed, left,
                zc_slowest_pace(module) / 1000.0);
}
