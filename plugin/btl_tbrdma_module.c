/*
 * The tbrdma module: the BTL function table, add_procs, del_procs and finalize.
 *
 * add_procs sees the whole job at once (MCA_BTL_FLAGS_SINGLE_ADD_PROCS: the mesh needs every
 * host): it turns every peer's modex blob into the job's mesh (which local port reaches which
 * host), creates an endpoint per peer process on another host on the cable the mesh chose (and
 * one per further cable to that host when striping, btl_tbrdma_stripe.c),
 * connects the data path (btl_tbrdma_connect.c) and marks reachable the peers whose endpoint
 * completed the handshake. Peers on this host are left to sm/vader and self.
 *
 * finalize drains (every frame acknowledged, bounded by btl_tbrdma_peer_timeout_ms), tells
 * each peer it is closing, stops the liveness thread and releases every queue pair, memory
 * region and device.
 */
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "btl_tbrdma.h"
#include "btl_tbrdma_agent.h"
#include "btl_tbrdma_connect.h"
#include "btl_tbrdma_signal.h"
#include "channel/btl_tbrdma_chan.h"
#include "channel/btl_tbrdma_completion.h"
#include "core/tbrdma_mutate.h"
#include "engine/btl_tbrdma_liveness.h"
#include "engine/btl_tbrdma_progress.h"
#include "engine/btl_tbrdma_stats.h"
#include "engine/btl_tbrdma_teardown.h"
#include "proto/btl_tbrdma_send.h"
#include "proto/btl_tbrdma_stripe.h"
#include "proto/zcopy/btl_tbrdma_zcopy.h"
#include "proto/zcopy/btl_tbrdma_zcopy_get.h"

#include "opal/class/opal_bitmap.h"

#include "core/tbrdma_mesh.h"
#include "core/tbrdma_modex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE_RTO_MAX_NS 500000000u   /* retransmission backoff stops at 0.5 s */
#define MODULE_RTT_MAX_NS 4000000000u  /* a measured round trip's timeout stops at 4 s */
#define MODULE_CLOSE_NS   100000000ull /* finalize waits this long for its CLOSE frames */

static int module_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                            struct opal_bitmap_t *reachable);
static int module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints);
/* Every endpoint, with its zero-copy state. */
static void module_free_endpoints(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_endpoint_t *ep;

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        mca_btl_tbrdma_zc_free(ep);
    }
    OPAL_LIST_DESTRUCT(&module->endpoints);
}

static int module_finalize(struct mca_btl_base_module_t *btl);
static int module_register_error(struct mca_btl_base_module_t *btl,
                                 mca_btl_base_module_error_cb_fn_t cbfunc);

mca_btl_tbrdma_module_t mca_btl_tbrdma_module_template = {
    .super =
        {
            .btl_component = &mca_btl_tbrdma_component.super,
            /* placeholders: the eager limit and max_send_size follow btl_tbrdma_bulk_frames
               (set in mca_btl_tbrdma_params_register and _verify); a rendezvous's first
               fragment is one frame */
            .btl_eager_limit = TBRDMA_BULK_FRAMES_DEFAULT * TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES,
            .btl_rndv_eager_limit = TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES,
            .btl_max_send_size = TBRDMA_BULK_FRAMES_DEFAULT * TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES,
            .btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT,
            .btl_latency = MCA_BTL_TBRDMA_LATENCY,
            .btl_bandwidth = MCA_BTL_TBRDMA_BANDWIDTH,
            .btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SINGLE_ADD_PROCS | MCA_BTL_FLAGS_GET,
            /* zero-copy gets (btl_tbrdma_zcopy.h); no put: ob1's put pipeline is never chosen */
            .btl_min_rdma_pipeline_size = SIZE_MAX,
            .btl_registration_handle_size = sizeof(mca_btl_base_registration_handle_t),
            .btl_get = mca_btl_tbrdma_get,
            .btl_register_mem = mca_btl_tbrdma_register_mem,
            .btl_deregister_mem = mca_btl_tbrdma_deregister_mem,
            .btl_add_procs = module_add_procs,
            .btl_del_procs = module_del_procs,
            .btl_finalize = module_finalize,
            .btl_alloc = mca_btl_tbrdma_alloc,
            .btl_free = mca_btl_tbrdma_free,
            .btl_prepare_src = mca_btl_tbrdma_prepare_src,
            .btl_send = mca_btl_tbrdma_send,
            .btl_sendi = mca_btl_tbrdma_sendi,
            .btl_register_error = module_register_error,
        },
};

/*
 * The longest timeout a measured round trip may set: a quarter of the peer timeout (4 timeouts
 * fit before the watchdog judges the channel), within [MODULE_RTO_MAX_NS, MODULE_RTT_MAX_NS].
 */
static uint32_t module_rtt_max(uint64_t peer_timeout_ns)
{
    uint64_t cap = peer_timeout_ns / 4;

    if (cap > MODULE_RTT_MAX_NS) {
        cap = MODULE_RTT_MAX_NS;
    }
    return (cap < MODULE_RTO_MAX_NS) ? MODULE_RTO_MAX_NS : (uint32_t) cap;
}

/* The data path's timers, from the parameters (btl_tbrdma_params.c checked their ranges). */
static void module_set_timing(mca_btl_tbrdma_module_t *module)
{
    const mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;

    module->timing.rto_min_ns = (uint32_t) c->rto_us * 1000u;
    module->timing.rto_max_ns = MODULE_RTO_MAX_NS;
    module->peer_timeout_ns = (uint64_t) c->peer_timeout_ms * 1000000ull;
    module->timing.rtt_max_ns = module_rtt_max(module->peer_timeout_ns);
    tbrdma_live_cfg_init(&module->live, module->peer_timeout_ns,
                         2ull * TBRDMA_LIVENESS_TICK * 1000000ull);
    module->ack_delay_ns = (uint64_t) c->ack_delay_us * 1000ull;
    module->force_ns = 2ull * module->timing.rto_min_ns;
}

mca_btl_tbrdma_module_t *mca_btl_tbrdma_module_create(const tbrdma_modex_t *local,
                                                      tbrdma_port_info_t *ports,
                                                      tbrdma_mesh_spec_t *spec)
{
    mca_btl_tbrdma_module_t *module = malloc(sizeof(*module));

    if (NULL == module) {
        return NULL;
    }
    *module = mca_btl_tbrdma_module_template;
    module->local = *local;
    module->ports = ports;
    module->spec = spec;
    OBJ_CONSTRUCT(&module->endpoints, opal_list_t);
    OBJ_CONSTRUCT(&module->lock, opal_mutex_t);
    pthread_mutex_init(&module->submit_lock, NULL);
    module_set_timing(module);
    module->up = (mca_btl_tbrdma_upcalls_t){
        .wc = mca_btl_tbrdma_zc_complete, .tag = TBRDMA_TAG_ZCOPY, .msg = mca_btl_tbrdma_zc_recv};
    return module;
}

static const char *module_proc_name(const opal_proc_t *proc)
{
    return OPAL_NAME_PRINT(proc->proc_name);
}

/* The peer's published host and ports. A peer without a blob declined tbrdma (not an error). */
static int module_recv_peer(opal_proc_t *proc, tbrdma_modex_t *m_p)
{
    char msg[TBRDMA_MSG_MAX];
    char *host;
    size_t size = 0;
    void *blob = NULL;
    int rc;

    OPAL_MODEX_RECV(rc, &mca_btl_tbrdma_component.super.btl_version, &proc->proc_name, &blob,
                    &size);
    if (OPAL_SUCCESS != rc || NULL == blob) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_PEER,
                       "%s: peer %s published no tbrdma address (tbrdma "
                       "declined on its host)",
                       OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), module_proc_name(proc));
        return OPAL_ERR_NOT_FOUND;
    }
    rc = tbrdma_modex_decode(blob, size, m_p);
    free(blob);
    if (0 != rc) {
        host = tbrdma_proc_hostname(proc);
        snprintf(msg, sizeof(msg),
                 "peer %s on host %s: its tbrdma address (%zu bytes) cannot be "
                 "read: %s; tbrdma does not reach that peer (was it built from another tbrdma "
                 "version?)",
                 module_proc_name(proc), NULL != host ? host : "(unknown)", size,
                 tbrdma_modex_strerror(rc));
        free(host);
        mca_btl_tbrdma_show_help("modex-decode", msg);
        return OPAL_ERR_UNPACK_FAILURE;
    }
    return OPAL_SUCCESS;
}

/*
 * 1 when peer m uses another bulk message size than this process: the wire needs one size per
 * job, so tbrdma refuses the job before it creates any queue pair (job->err says why).
 */
static int module_bulk_mismatch(const mca_btl_tbrdma_module_t *module, const opal_proc_t *proc,
                                const tbrdma_modex_t *m, mca_btl_tbrdma_job_t *job)
{
    if (m->bulk_frames == module->local.bulk_frames) {
        return 0;
    }
    snprintf(job->err, TBRDMA_JOB_ERR_MAX,
             "host %s (%s): peer %s on host %s uses %d-frame bulk messages "
             "(btl_tbrdma_bulk_frames %d), this process %d-frame ones: every process of a job "
             "needs the same btl_tbrdma_bulk_frames",
             module->local.host, OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), module_proc_name(proc),
             m->host, m->bulk_frames, m->bulk_frames, module->local.bulk_frames);
    return 1;
}

/* Fills job->hosts (own host first) and job->proc_host from every proc's blob. */
static int module_collect_hosts(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                                mca_btl_tbrdma_job_t *job)
{
    opal_proc_t *self = opal_proc_local_get();
    size_t i, nsilent = 0;
    tbrdma_modex_t m;

    mca_btl_tbrdma_job_add_host(job, &module->local);
    for (i = 0; i < nprocs; i++) {
        job->proc_host[i] = -1;
        if (NULL != self && 0 == opal_compare_proc(self->proc_name, procs[i]->proc_name)) {
            job->proc_host[i] = 0;
            continue;
        }
        if (OPAL_SUCCESS != module_recv_peer(procs[i], &m)) {
            nsilent++;
            continue;
        }
        if (module_bulk_mismatch(module, procs[i], &m, job)) {
            return OPAL_ERR_BAD_PARAM;
        }
        job->proc_host[i] = mca_btl_tbrdma_job_add_host(job, &m);
        if (0 > job->proc_host[i]) {
            snprintf(job->err, TBRDMA_JOB_ERR_MAX,
                     "the job spans more than %d hosts with Thunderbolt RDMA, the most tbrdma "
                     "supports",
                     TBRDMA_MAX_HOSTS);
            return OPAL_ERR_NOT_SUPPORTED;
        }
    }
    if (0 < nsilent && mca_btl_tbrdma_speaks_for_host()) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "%zu of %zu processes have no usable tbrdma address (tbrdma declined on "
                       "their hosts, or their address is unreadable): the other BTLs reach them",
                       nsilent, nprocs);
    }
    return OPAL_SUCCESS;
}

/* The mesh at verbosity 1, one "tbrdma mesh: " line per pair of hosts. */
static void module_print_mesh(const mca_btl_tbrdma_job_t *job)
{
    size_t len;
    char *text, *line, *save = NULL;

    if (TBRDMA_VERBOSE_DECLINE > mca_btl_tbrdma_component.verbose
        || !mca_btl_tbrdma_speaks_for_host()) {
        return;
    }
    len = tbrdma_mesh_describe(job->hosts, job->mesh, NULL, 0) + 1;
    text = malloc(len);
    if (NULL == text) {
        return;
    }
    tbrdma_mesh_describe(job->hosts, job->mesh, text, len);
    for (line = strtok_r(text, "\n", &save); NULL != line; line = strtok_r(NULL, "\n", &save)) {
        opal_output_verbose(TBRDMA_VERBOSE_DECLINE, mca_btl_tbrdma_component.output,
                            "tbrdma mesh: %s", line);
    }
    free(text);
}

/*
 * Solves the mesh of the job's hosts and reports it. A missing cable stops tbrdma for the job
 * (OPAL_ERR_UNREACH: bml/r2 then skips this BTL and the job runs on the others) unless
 * btl_tbrdma_allow_partial_mesh; ambiguous addressing always does.
 */
static int module_solve_mesh(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_job_t *job)
{
    bool partial = mca_btl_tbrdma_component.allow_partial_mesh;
    int rc = tbrdma_mesh_solve(job->hosts, job->nhosts, module->spec, job->mesh, job->err,
                               TBRDMA_JOB_ERR_MAX);

    if (0 == rc || -ENOTCONN == rc) {
        module_print_mesh(job);
    }
    if (0 == rc) {
        return OPAL_SUCCESS;
    }
    mca_btl_tbrdma_show_help_all(-ENOTCONN != rc ? "mesh-invalid"
                                 : partial       ? "mesh-partial"
                                                 : "mesh-incomplete",
                                 job->err);
    if (-ENOTCONN == rc && partial) {
        return OPAL_SUCCESS;
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "not used in this job: %s",
                   -ENOTCONN == rc ? "the mesh is incomplete" : "the mesh cannot be solved");
    return -ENOTCONN == rc ? OPAL_ERR_UNREACH : OPAL_ERR_BAD_PARAM;
}

/* One endpoint per peer on another host that a cable reaches; the others are reported. */
static int module_add_endpoints(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                                const mca_btl_tbrdma_job_t *job)
{
    int own = mca_btl_tbrdma_job_host_index(job, module->local.host);
    const tbrdma_mesh_link_t *link;
    mca_btl_tbrdma_endpoint_t *ep;
    size_t i;
    int h;

    for (i = 0; i < nprocs; i++) {
        h = job->proc_host[i];
        if (0 > h || own == h || NULL != mca_btl_tbrdma_endpoint_find(module, procs[i])) {
            continue;
        }
        link = &job->mesh->link[own][h];
        if (0 > link->port) {
            if (mca_btl_tbrdma_speaks_for_host()) {
                TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                               "peer %s on host %s is unreachable: no "
                               "cable from host %s",
                               module_proc_name(procs[i]), job->hosts[h].host, module->local.host);
            }
            continue;
        }
        ep = mca_btl_tbrdma_endpoint_create(procs[i], job->hosts[h].host, link->port,
                                            link->peer_port, &job->hosts[h].ports[link->peer_port]);
        if (NULL == ep) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        opal_list_append(&module->endpoints, &ep->super);
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_PEER, "%s: peer %s on host %s: %s <-> %s",
                       OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), module_proc_name(procs[i]),
                       ep->peer_host, module->local.ports[ep->local_port].device, ep->peer.device);
        if (OPAL_SUCCESS != mca_btl_tbrdma_stripe_add(module, ep, link, &job->hosts[h])) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    return OPAL_SUCCESS;
}

/* Hands Open MPI every endpoint that completed the handshake, and marks its peer reachable. */
static void module_mark_reachable(mca_btl_tbrdma_module_t *module, size_t nprocs,
                                  opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                                  struct opal_bitmap_t *reachable)
{
    size_t n = 0;

    for (size_t i = 0; i < nprocs; i++) {
        mca_btl_tbrdma_endpoint_t *ep = mca_btl_tbrdma_endpoint_find(module, procs[i]);

        if (NULL == ep || TBRDMA_EP_CONNECTED != ep->state || !ep->heard) {
            continue;
        }
        endpoints[i] = ep;
        opal_bitmap_set_bit(reachable, (int) i);
        n++;
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_PEER, "%s: %zu peers reachable over Thunderbolt RDMA",
                   OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), n);
}

/* The data path for the job: connect once, then start what keeps it alive. */
static int module_start_data_path(mca_btl_tbrdma_module_t *module, size_t nprocs,
                                  opal_proc_t **procs, const mca_btl_tbrdma_job_t *job)
{
    int rc;

    if (module->connect_done) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "processes added after start-up are reached by the other BTLs");
        return OPAL_SUCCESS;
    }
    module->connect_done = true;
    /* before the first queue pair: a job refused at start-up is ended by mpirun with SIGTERM
     * while some of its processes still wait in the connection fence, holding theirs */
    mca_btl_tbrdma_signal_install();
    rc = mca_btl_tbrdma_connect(module, nprocs, procs, job);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mca_btl_tbrdma_liveness_start(module);
    return OPAL_SUCCESS;
}

static int module_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                            struct opal_bitmap_t *reachable)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;
    mca_btl_tbrdma_job_t job;
    int rc;

    rc = mca_btl_tbrdma_job_alloc(&job, nprocs);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    OPAL_THREAD_LOCK(&module->lock);
    rc = module_collect_hosts(module, nprocs, procs, &job);
    if (OPAL_ERR_NOT_SUPPORTED == rc) {
        mca_btl_tbrdma_show_help_all("mesh-invalid", job.err);
    }
    if (OPAL_ERR_BAD_PARAM == rc) {
        if (mca_btl_tbrdma_speaks_for_host()) {
            mca_btl_tbrdma_show_help("job-mismatch", job.err);
        }
        rc = OPAL_ERR_UNREACH; /* bml/r2 skips tbrdma for the job; other BTLs may reach peers */
    }
    if (OPAL_SUCCESS == rc) {
        rc = mca_btl_tbrdma_job_sort_hosts(&job, nprocs);
    }
    if (OPAL_SUCCESS == rc) {
        rc = module_solve_mesh(module, &job);
    }
    if (OPAL_SUCCESS == rc) {
        rc = module_add_endpoints(module, nprocs, procs, &job);
    }
    if (OPAL_SUCCESS == rc) {
        rc = module_start_data_path(module, nprocs, procs, &job);
    }
    if (OPAL_SUCCESS == rc) {
        module_mark_reachable(module, nprocs, procs, endpoints, reachable);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    mca_btl_tbrdma_job_free(&job);
    return rc;
}

/*
 * Endpoints stay until finalize: ob1 removes every peer just before finalizing the BTL, whose
 * drain still needs them.
 */
static int module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints)
{
    (void) btl;
    (void) nprocs;
    (void) procs;
    (void) endpoints;
    return OPAL_SUCCESS;
}

static int module_register_error(struct mca_btl_base_module_t *btl,
                                 mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_tbrdma_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

/* 1 while an endpoint still has unacknowledged frames or posted sends. */
static int module_busy(const mca_btl_tbrdma_module_t *module)
{
    for (int i = 0; i < module->neps; i++) {
        const mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        for (int c = 0; TBRDMA_EP_CONNECTED == ep->state && c < TBRDMA_NCHAN; c++) {
            if (NULL != ep->chan[c].head || 0 < ep->chan[c].sq_posted) {
                return 1;
            }
        }
    }
    return 0;
}

/* Passes until no endpoint is busy or limit_ns passed (token). */
static void module_drain_for(mca_btl_tbrdma_module_t *module, uint64_t limit_ns)
{
    uint64_t start = mca_btl_tbrdma_now(), now = start;

    while (module->verbs_live && module_busy(module) && now - start < limit_ns) {
        mca_btl_tbrdma_pass(module, true, now);
        now = mca_btl_tbrdma_now();
    }
}

/*
 * After finalize's drain: frames a peer never acknowledged are dropped and counted. The peer
 * closed or fell silent first, so it did not need them; with faults on the cable its last ack
 * can be what was lost.
 */
static void module_abandon_unacked(mca_btl_tbrdma_module_t *module)
{
    char peer[256];

    for (int i = 0; i < module->neps; i++) {
        int n = mca_btl_tbrdma_abandon_unacked(module, module->eps[i]);

        if (0 < n) {
            module->stats.abandoned += n;
            mca_btl_tbrdma_endpoint_describe(module, module->eps[i], peer, sizeof(peer));
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_PEER,
                           "finalize: %d frames to %s were never acknowledged; dropped", n, peer);
        }
    }
}

/*
 * Finalize's drain: passes (without ob1 callbacks: ob1 is finalizing) until every frame is
 * acknowledged or the peer timeout passes, then a CLOSE to every peer, whose send is awaited
 * briefly. Peers lost now are not reported: the job is over.
 */
static void module_drain(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_token_take(module);
    module_drain_for(module, module->peer_timeout_ns);
    for (int i = 0; i < module->neps && module->verbs_live; i++) {
        if (TBRDMA_EP_CONNECTED == module->eps[i]->state) {
            mca_btl_tbrdma_ep_ctrl(module, module->eps[i], TBRDMA_MSG_CLOSE, true);
        }
    }
    module_drain_for(module, MODULE_CLOSE_NS);
    module->failure_pending = false;
    mca_btl_tbrdma_release_verbs(module);
    module_abandon_unacked(module);
    mca_btl_tbrdma_zc_fail_all(module, OPAL_ERR_UNREACH); /* none left: ob1 waited for them */
    mca_btl_tbrdma_run_callbacks(module); /* finalizing: they finish without calling ob1 */
    mca_btl_tbrdma_frag_undefer(module);
    mca_btl_tbrdma_token_release(module);
}

static int module_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;

    module->finalizing = true; /* Open MPI closed the PML before the BTLs: no callback */
    if (module->verbs_live && !TBRDMA_MUTANT(RELEASE_SKIPPED)) {
        module_drain(module);
    }
    mca_btl_tbrdma_liveness_stop(module);
    mca_btl_tbrdma_signal_restore();
    mca_btl_tbrdma_print_final_stats(module);
    for (int p = 0; p < TBRDMA_MAX_PORTS; p++) {
        mca_btl_tbrdma_rcache_fini(module->devices[p]); /* ob1 returned its handles */
        mca_btl_tbrdma_device_free(module->devices[p]);
        module->devices[p] = NULL;
    }
    mca_btl_tbrdma_agent_leave(); /* agent mode: after the queue pairs, before the memory */
    free(module->eps);
    module_free_endpoints(module);
    OBJ_DESTRUCT(&module->lock);
    pthread_mutex_destroy(&module->submit_lock);
    free(module->ports);
    free(module->spec);
    if (mca_btl_tbrdma_component.module == module) {
        mca_btl_tbrdma_component.module = NULL;
    }
    free(module);
    return OPAL_SUCCESS;
}
