/*
 * The data path's connection step of add_procs (docs/design.md, "Connections"). Queue pair
 * numbers travel through PMIx, Open MPI's own side channel: no daemon, no port to open.
 *   1. budget: every cable used between two hosts needs (ranks on one) x (ranks on the other)
 *      x 2 queue pairs on each end's device; all processes check all pairs, so all decide alike;
 *   2. setup: the devices this process uses, two UC queue pairs per peer process on another
 *      host and cable used (one cable, or all of a pair's when striping), every receive
 *      posted; a local failure is published as a status, not hidden;
 *   3. exchange: each process publishes its connection record (core/tbrdma_conn.h) and waits
 *      in a PMIx fence over the job's tbrdma processes;
 *   4. connect: RTR/RTS towards the peer's queue pairs, credits from its receive depths;
 *   5. handshake: each endpoint asks its peer to answer (retried every 10 ms) and is usable once
 *      a valid frame came back, which proves the path end to end before ob1 is told.
 * Both ends of a pair list the cables between their hosts in the order the mesh solved,
 * identically everywhere, and an entry names its cable (stripe), so two cables between two
 * Macs can never be crossed.
 */
#include "btl_tbrdma_connect.h"
#include "base/btl_tbrdma_ledger.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "btl_tbrdma_agent.h"
#include "channel/btl_tbrdma_chan.h"
#include "engine/btl_tbrdma_progress.h"
#include "engine/btl_tbrdma_teardown.h"
#include "proto/btl_tbrdma_stripe.h"
#include "proto/zcopy/btl_tbrdma_zcopy.h"

#include "core/tbrdma_budget.h"
#include "core/tbrdma_conn.h"
#include "core/tbrdma_diag.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_KEY         "btl.tbrdma.conn.v1"
#define CONNECT_RETRY_NS    10000000ull /* the handshake asks again every 10 ms */
#define CONNECT_NOT_STRIPED 1           /* the peer has no queue pairs for this striped cable */
#define CONNECT_PEER_SETUP  2           /* the peer could not set up its queue pairs at all */

/* Step 1 for host a's end of cable k to host b: 1 when over the budget (said by a's host). */
static int connect_budget_cable(const mca_btl_tbrdma_job_t *job, size_t nprocs, int a, int b, int k,
                                int own, bool quiet)
{
    const char *dev = job->hosts[a].ports[job->mesh->link[a][b].ports[k]].device;
    tbrdma_budget_use_t use = {job->hosts[a].host,
                               dev,
                               tbrdma_diag_iface_of(dev),
                               job->hosts[b].host,
                               mca_btl_tbrdma_job_ranks_on(job, nprocs, a),
                               mca_btl_tbrdma_job_ranks_on(job, nprocs, b),
                               TBRDMA_NCHAN};
    char msg[TBRDMA_MSG_MAX];

    if (0
        == tbrdma_budget_check(&use, mca_btl_tbrdma_component.max_qps_per_device, msg,
                               sizeof(msg))) {
        return 0;
    }
    if (!quiet && a == own && mca_btl_tbrdma_speaks_for_host()) {
        mca_btl_tbrdma_show_help("qp-budget", msg);
    }
    return 1;
}

/*
 * Step 1. OPAL_ERR_UNREACH when a cabled pair exceeds the budget (this host's said so). Every
 * cable has its own device, so each cable used (all of a pair's when striping) is counted on
 * its own device: striping adds devices, not queue pairs per device.
 */
static int connect_budget(const mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_job_t *job,
                          size_t nprocs, bool quiet)
{
    int own = mca_btl_tbrdma_job_host_index(job, module->local.host), over = 0;

    for (int a = 0; a < job->nhosts; a++) {
        for (int b = 0; b < job->nhosts; b++) {
            int ncables = (a == b) ? 0 : mca_btl_tbrdma_cables_used(&job->mesh->link[a][b]), n = 0;

            for (int k = 0; k < ncables; k++) {
                n += connect_budget_cable(job, nprocs, a, b, k, own, quiet);
            }
            over += (0 < n) ? 1 : 0;
        }
    }
    if (0 < over && !quiet) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "not used in this job: %d cabled pairs of hosts exceed the queue pair "
                       "budget of %d per device",
                       over / 2, mca_btl_tbrdma_component.max_qps_per_device);
    }
    return (0 == over) ? OPAL_SUCCESS : OPAL_ERR_UNREACH;
}

/* Every tbrdma process of the job, self included: the fence's participants. */
static opal_process_name_t *connect_participants(size_t nprocs, opal_proc_t **procs,
                                                 const mca_btl_tbrdma_job_t *job, size_t *n_p)
{
    opal_process_name_t *names = calloc(nprocs ? nprocs : 1, sizeof(*names));
    size_t n = 0;

    for (size_t i = 0; NULL != names && i < nprocs; i++) {
        if (0 <= job->proc_host[i]) {
            names[n++] = procs[i]->proc_name;
        }
    }
    *n_p = n;
    return names;
}

/* The slot ledger's record of the queue pairs this process now holds on each device. */
static void connect_ledger_write(const mca_btl_tbrdma_module_t *module)
{
    const char *devs[TBRDMA_MAX_PORTS];
    char path[PATH_MAX] = "";
    int qps[TBRDMA_MAX_PORTS], n = 0, rc;

    for (int p = 0; p < module->local.nports; p++) {
        if (NULL != module->devices[p]) {
            devs[n] = module->local.ports[p].device;
            qps[n++] = tbrdma_verbs_dev_qps(module->devices[p]->vdev);
        }
    }
    if (0 == n || module->agent_mode) { /* no queue pair of its own: nothing to record */
        tbrdma_ledger_file_remove();
        return;
    }
    rc = tbrdma_ledger_file_write(mca_btl_tbrdma_component.ledger_dir, module->local.host,
                                  OPAL_JOBID_PRINT(OPAL_PROC_MY_NAME.jobid), devs, qps, n, path,
                                  sizeof(path));
    if (0 != rc) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "slot ledger %s: not written: %s", path,
                       strerror(rc));
    }
}

/* Step 2 for one local port: its device and the queue pairs of its endpoints. */
static int connect_setup_port(mca_btl_tbrdma_module_t *module, int port, int neps,
                              tbrdma_conn_record_t *rec, char *err, size_t errlen)
{
    mca_btl_tbrdma_endpoint_t *ep;
    int rc;

    module->devices[port] =
        mca_btl_tbrdma_device_create(module, port, neps, mca_btl_tbrdma_zc_cqe(neps), err, errlen);
    if (NULL == module->devices[port]) {
        return -ENOMEM;
    }
    if (mca_btl_tbrdma_component.zcopy && !module->agent_mode) {
        (void) mca_btl_tbrdma_rcache_init(module->devices[port]); /* none: large messages copied */
    }
    if (!module->verbs_live) {
        module->stats_start_ns = mca_btl_tbrdma_now();
        module->stats_next_ns =
            module->stats_start_ns + mca_btl_tbrdma_component.stats_interval_s * 1000000000ull;
    }
    module->verbs_live = true;
    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        tbrdma_conn_entry_t *e = &rec->entries[rec->nentries];

        if (ep->local_port != port || TBRDMA_EP_NEW != ep->state) {
            continue;
        }
        e->peer_jobid = ep->proc->proc_name.jobid;
        e->peer_vpid = ep->proc->proc_name.vpid;
        e->stripe = (uint16_t) ep->stripe;
        rc = mca_btl_tbrdma_endpoint_setup(ep, module->devices[port], e, err, errlen);
        if (0 != rc) {
            return rc;
        }
        mca_btl_tbrdma_zc_setup(ep); /* the zero-copy queue pair, where the budget allows */
        rec->nentries++;
    }
    /* at once, port by port: a job starting beside this one that finds a device full names it */
    connect_ledger_write(module);
    return 0;
}

/* Step 2: fills rec (entries or a failure status). */
static void connect_setup(mca_btl_tbrdma_module_t *module, tbrdma_conn_record_t *rec)
{
    char err[TBRDMA_MSG_MAX / 4], held[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];
    int count[TBRDMA_MAX_PORTS] = {0}, rc = 0, p;
    mca_btl_tbrdma_endpoint_t *ep;

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        count[ep->local_port] += (TBRDMA_EP_NEW == ep->state) ? 1 : 0;
    }
    for (p = 0; p < module->local.nports && 0 == rc; p++) {
        if (0 < count[p]) {
            rc = connect_setup_port(module, p, count[p], rec, err, sizeof(err));
        }
    }
    if (0 == rc) {
        return; /* each port's queue pairs are in the slot ledger already */
    }
    held[0] = '\0';
    if (-EBUSY == rc) { /* the device's slots are taken: by dead processes, by other jobs? */
        (void) tbrdma_ledger_file_explain(mca_btl_tbrdma_component.ledger_dir, module->local.host,
                                          module->local.ports[p - 1].device,
                                          OPAL_JOBID_PRINT(OPAL_PROC_MY_NAME.jobid), held,
                                          sizeof(held));
    }
    snprintf(msg, sizeof(msg), "host %s (%s): %s%s%s", module->local.host,
             OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), err, ('\0' == held[0]) ? "" : ".\n", held);
    mca_btl_tbrdma_show_help("setup-failed", msg);
    mca_btl_tbrdma_release_verbs(module);
    rec->status = (0 < -rc && -rc < 65536) ? -rc : EIO;
    rec->nentries = 0;
}

/* Step 3: publish rec, wait for every participant's. */
static int connect_exchange(const tbrdma_conn_record_t *rec, const opal_process_name_t *names,
                            size_t n)
{
    size_t len = tbrdma_conn_encoded_size(rec), used = 0;
    void *blob = malloc(len);
    int rc;

    if (NULL == blob || 0 != tbrdma_conn_encode(rec, blob, len, &used)) {
        free(blob);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OPAL_MODEX_SEND_STRING(rc, TBRDMA_MODEX_SCOPE, CONNECT_KEY, blob, used);
    free(blob);
    if (OPAL_SUCCESS != rc) {
        return OPAL_ERROR;
    }
    return tbrdma_compat_commit_fence(names, n);
}

/*
 * The peer's record; -1 (and why) when it cannot be read, CONNECT_PEER_SETUP (and why) when it
 * says the peer could not set up its queue pairs.
 */
static int connect_peer_record(const mca_btl_tbrdma_endpoint_t *ep, tbrdma_conn_record_t *rec,
                               char *err, size_t errlen)
{
    uint8_t *blob = NULL;
    size_t size = 0;
    int rc;

    OPAL_MODEX_RECV_STRING(rc, CONNECT_KEY, &ep->proc->proc_name, &blob, &size);
    if (OPAL_SUCCESS != rc || NULL == blob) {
        snprintf(err, errlen, "it published no connection record");
        return -1;
    }
    rc = tbrdma_conn_decode(blob, size, rec);
    free(blob);
    if (0 != rc) {
        snprintf(err, errlen, "its connection record cannot be read (%s)", strerror(-rc));
        return -1;
    }
    if (0 != rec->status) {
        snprintf(err, errlen, "it could not set up its queue pairs (%s)", strerror(rec->status));
        tbrdma_conn_record_free(rec);
        return CONNECT_PEER_SETUP;
    }
    return 0;
}

/* Step 4 for one endpoint. */
static int connect_endpoint(const mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint64_t now, char *err, size_t errlen)
{
    const opal_process_name_t *me = &OPAL_PROC_MY_NAME;
    const tbrdma_conn_entry_t *entry;
    tbrdma_conn_record_t rec;
    int rc;

    rc = connect_peer_record(ep, &rec, err, errlen);
    if (0 != rc) {
        return rc;
    }
    entry = tbrdma_conn_find(&rec, me->jobid, me->vpid, (uint16_t) ep->stripe);
    if (NULL == entry && 0 < ep->stripe) {
        rc = CONNECT_NOT_STRIPED; /* btl_tbrdma_stripe is off on the peer's host */
    } else if (NULL == entry) {
        snprintf(err, errlen, "its connection record has no queue pairs for this process");
        rc = -1;
    } else {
        rc = mca_btl_tbrdma_endpoint_connect(module, ep, entry, rec.flags, now, err, errlen);
    }
    tbrdma_conn_record_free(&rec);
    return rc;
}

/* An endpoint that will not be used: its queue pairs go, the zero-copy one with them. */
static void connect_drop(mca_btl_tbrdma_endpoint_t *ep)
{
    mca_btl_tbrdma_endpoint_release(ep);
    mca_btl_tbrdma_zc_release(ep);
}

static void connect_report(const mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                           const char *why)
{
    char where[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];

    mca_btl_tbrdma_endpoint_describe(module, ep, where, sizeof(where));
    snprintf(msg, sizeof(msg), "host %s (%s): cannot connect to %s: %s", module->local.host,
             OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), where, why);
    mca_btl_tbrdma_show_help("connect-failed", msg);
}

/*
 * Step 3b: whether any participant's record says it could not set up its queue pairs. Every
 * participant reads the same records after the fence, so every process decides alike, also one
 * that has no endpoint to the process that failed (a rank of the same Mac).
 */
static bool connect_job_refused(const opal_process_name_t *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t *blob = NULL;
        size_t size = 0;
        int rc, status;

        OPAL_MODEX_RECV_STRING(rc, CONNECT_KEY, &names[i], &blob, &size);
        if (OPAL_SUCCESS != rc || NULL == blob) {
            continue; /* named by the endpoints that need it (connect_peer_record) */
        }
        status = tbrdma_conn_status(blob, size); /* the header only: no entries decoded */
        free(blob);
        if (0 < status) {
            return true;
        }
    }
    return false;
}

/* Step 4: every READY endpoint; a failed one is reported and dropped. */
static void connect_all(mca_btl_tbrdma_module_t *module)
{
    char err[TBRDMA_MSG_MAX / 2];
    mca_btl_tbrdma_endpoint_t *ep;
    uint64_t now = mca_btl_tbrdma_now();

    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        int rc;

        if (TBRDMA_EP_READY != ep->state) {
            continue;
        }
        rc = connect_endpoint(module, ep, now, err, sizeof(err));
        if (CONNECT_NOT_STRIPED == rc) {
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                           "%s: peer %s publishes no queue pairs for striped cable %d "
                           "(btl_tbrdma_stripe is off there): that cable stays idle",
                           OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), OPAL_NAME_PRINT(ep->proc->proc_name),
                           ep->stripe + 1);
            ep->state = TBRDMA_EP_CLOSED;
            connect_drop(ep);
        } else if (0 != rc) {
            connect_report(module, ep, err);
            ep->state = TBRDMA_EP_FAILED;
            ep->fail_reported = 1;
            connect_drop(ep);
        }
    }
}

/* The module's progress array: every CONNECTED endpoint. */
static int connect_index(mca_btl_tbrdma_module_t *module)
{
    mca_btl_tbrdma_endpoint_t *ep;
    int n = 0;

    free(module->eps);
    module->eps = calloc(opal_list_get_size(&module->endpoints) + 1, sizeof(*module->eps));
    if (NULL == module->eps) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    OPAL_LIST_FOREACH (ep, &module->endpoints, mca_btl_tbrdma_endpoint_t) {
        if (TBRDMA_EP_CONNECTED == ep->state) {
            module->eps[n++] = ep;
        }
    }
    module->neps = n;
    return OPAL_SUCCESS;
}

/* Asks every endpoint not heard yet to answer; 1 when all have been heard. */
static int connect_ask(mca_btl_tbrdma_module_t *module)
{
    int waiting = 0;

    for (int i = 0; i < module->neps; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        if (TBRDMA_EP_CONNECTED == ep->state && !ep->heard) {
            ep->probe = 1;
            mca_btl_tbrdma_ep_ctrl(module, ep, TBRDMA_MSG_ACK, false);
            waiting++;
        }
    }
    return 0 == waiting;
}

/*
 * Step 5. Passes run as the liveness thread's would: ob1 has not registered its callbacks yet,
 * so a data frame from a faster peer is held for the first real progress.
 */
static void connect_handshake(mca_btl_tbrdma_module_t *module)
{
    uint64_t start = mca_btl_tbrdma_now(), asked = 0, now = start;
    char why[256];

    mca_btl_tbrdma_token_take(module);
    while (now - start < module->peer_timeout_ns) {
        if (now - asked >= CONNECT_RETRY_NS) {
            if (connect_ask(module)) {
                break;
            }
            asked = now;
        }
        mca_btl_tbrdma_pass(module, true, mca_btl_tbrdma_now());
        now = mca_btl_tbrdma_now();
    }
    snprintf(why, sizeof(why),
             "no answer within %d ms (btl_tbrdma_peer_timeout_ms) to the connection handshake: "
             "its frames are lost on this cable",
             mca_btl_tbrdma_component.peer_timeout_ms);
    for (int i = 0; i < module->neps; i++) {
        mca_btl_tbrdma_endpoint_t *ep = module->eps[i];

        if (TBRDMA_EP_CONNECTED == ep->state && !ep->heard) {
            mca_btl_tbrdma_ep_fail(module, ep, why);
        }
        if (TBRDMA_EP_FAILED == ep->state && !ep->fail_reported) {
            connect_report(module, ep, ep->fail_reason);
            ep->fail_reported = 1;
        }
    }
    module->failure_pending = false; /* the handshake's failures were reported just above */
    mca_btl_tbrdma_token_release(module);
}

/*
 * Every process refuses alike (the budget is computed from the same job map everywhere), and
 * mpirun ends the job as soon as one of them gives up: a fence after the messages, so that each
 * host's speaker has said its part before any rank returns (else the hosts of slower ranks
 * said nothing).
 */
static void connect_refusal_fence(size_t nprocs, opal_proc_t **procs,
                                  const mca_btl_tbrdma_job_t *job)
{
    size_t n = 0;
    opal_process_name_t *names = connect_participants(nprocs, procs, job, &n);

    if (NULL != names) {
        (void) tbrdma_compat_commit_fence(names, n);
        free(names);
    }
}

/*
 * A process of the job could not set up its queue pairs: the job cannot run on tbrdma alone, and
 * a process that aborts in MPI_Init keeps what it holds (Apple), so every process lets go now.
 * Each one whose own setup worked names the peers that failed (connect_all), then all meet in a
 * fence before any returns, as for the budget's refusal. Without that fence, 4 of 40 such jobs
 * on the simulated Macs never ended on Open MPI 5.0 (prterun and one prted waiting, every rank
 * gone); with it, none of 70. Why the launcher waits is a guess: a help message still on its
 * way to mpirun when the first process aborts.
 */
static void connect_refused(mca_btl_tbrdma_module_t *module, const tbrdma_conn_record_t *rec,
                            const opal_process_name_t *names, size_t n)
{
    if (0 == rec->status) {
        connect_all(module);
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                   "not used in this job: a process of the job could not set up its queue pairs, "
                   "so every process releases its own");
    mca_btl_tbrdma_release_verbs(module);
    (void) tbrdma_compat_commit_fence(names, n);
}

/*
 * Whether the job's cables are the per-Mac agents' (btl_tbrdma_agent): "on", or "auto" and the
 * ranks' own queue pairs would not fit the budget. Every process decides alike from the same job
 * map; it must, since a rank's queue pair and an agent's cannot be connected to each other.
 */
static bool connect_use_agent(const mca_btl_tbrdma_module_t *module,
                              const mca_btl_tbrdma_job_t *job, size_t nprocs)
{
    const char *mode = mca_btl_tbrdma_component.agent;

    if (0 == strcmp(mode, "on") || 0 == strcmp(mode, "off")) {
        return 0 == strcmp(mode, "on");
    }
    return OPAL_SUCCESS != connect_budget(module, job, nprocs, true);
}

int mca_btl_tbrdma_connect(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                           const mca_btl_tbrdma_job_t *job)
{
    tbrdma_conn_record_t rec = {0};
    opal_process_name_t *names;
    size_t nnames = 0;
    bool agent = connect_use_agent(module, job, nprocs);
    int rc = agent ? OPAL_SUCCESS : connect_budget(module, job, nprocs, false);

    if (OPAL_SUCCESS != rc) {
        connect_refusal_fence(nprocs, procs, job);
        return rc;
    }
    if (!agent) { /* through the agent, large messages are copied (docs/design.md) */
        mca_btl_tbrdma_zc_plan(module, job, nprocs); /* zero-copy queue pairs where they fit */
    }
    names = connect_participants(nprocs, procs, job, &nnames);
    rec.entries = calloc(opal_list_get_size(&module->endpoints) + 1, sizeof(*rec.entries));
    if (NULL == names || NULL == rec.entries) {
        rc = OPAL_ERR_OUT_OF_RESOURCE; /* the fence is missed: the job cannot start anyway */
        goto out_free;
    }
    rec.flags = mca_btl_tbrdma_component.checksum ? TBRDMA_CONN_FLAG_CSUM : 0;
    if (agent) { /* one more fence: the segment's name, from each Mac's first process */
        rec.status = mca_btl_tbrdma_agent_join(module, job, nprocs, procs, names, nnames);
    }
    if (0 == rec.status) {
        connect_setup(module, &rec);
    }
    rc = connect_exchange(&rec, names, nnames);
    mca_btl_tbrdma_agent_seal(); /* every local rank attached before this fence */
    if (OPAL_SUCCESS != rc) {
        mca_btl_tbrdma_release_verbs(module);
        goto out_free;
    }
    if (connect_job_refused(names, nnames)) {
        connect_refused(module, &rec, names, nnames);
        rc = OPAL_ERR_UNREACH;
        goto out_free;
    }
    connect_all(module); /* no peer failed its setup: connect_job_refused saw every record */
    rc = connect_index(module);
    if (OPAL_SUCCESS == rc) {
        connect_handshake(module);
        mca_btl_tbrdma_stripe_ready(module);
    }
out_free:
    free(rec.entries);
    free(names);
    return rc;
}
