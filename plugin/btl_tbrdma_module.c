/*
 * The tbrdma module: the BTL function table and add_procs, which turns every peer's modex
 * blob into the job's mesh (which local port reaches which host) and records, per peer on
 * another host, the cable to use.
 *
 * Scope of this version: there is no data path yet (UC queue pairs, frames, send/recv come
 * later). The module therefore reaches no peer: add_procs sets no reachable bit and hands no
 * endpoint to Open MPI, so bml/r2 uses the other BTLs (tcp, sm/vader, self) for everything;
 * the function table holds add_procs/del_procs/finalize only and the flags advertise no
 * transfer capability (MCA_BTL_FLAGS_SINGLE_ADD_PROCS only, so that add_procs sees the
 * whole job at once: the mesh needs every host).
 */
#include "btl_tbrdma.h"
#include "btl_tbrdma_endpoint.h"
#include "btl_tbrdma_output.h"

#include "opal/class/opal_bitmap.h"

#include "core/tbrdma_mesh.h"
#include "core/tbrdma_modex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODULE_ERR_MAX (TBRDMA_MAX_HOSTS * TBRDMA_MAX_HOSTS * 96) /* every pair, named */

static int module_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                            struct opal_bitmap_t *reachable);
static int module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints);
static int module_finalize(struct mca_btl_base_module_t *btl);

mca_btl_tbrdma_module_t mca_btl_tbrdma_module_template = {
    .super =
        {
            .btl_component = &mca_btl_tbrdma_component.super,
            .btl_eager_limit = MCA_BTL_TBRDMA_FRAME_SIZE,
            .btl_rndv_eager_limit = MCA_BTL_TBRDMA_FRAME_SIZE,
            .btl_max_send_size = MCA_BTL_TBRDMA_FRAME_SIZE,
            .btl_exclusivity = MCA_BTL_EXCLUSIVITY_DEFAULT,
            .btl_latency = MCA_BTL_TBRDMA_LATENCY,
            .btl_bandwidth = MCA_BTL_TBRDMA_BANDWIDTH,
            .btl_flags = MCA_BTL_FLAGS_SINGLE_ADD_PROCS,
            .btl_add_procs = module_add_procs,
            .btl_del_procs = module_del_procs,
            .btl_finalize = module_finalize,
        },
};

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
    return module;
}

/* The job as add_procs sees it: the distinct hosts (sorted by name) and each proc's host. */
typedef struct module_job {
    int nhosts;
    tbrdma_modex_t *hosts; /* TBRDMA_MAX_HOSTS entries */
    int *proc_host;        /* per proc: index in hosts, -1 = no usable blob */
    tbrdma_mesh_t *mesh;
    char *err; /* MODULE_ERR_MAX bytes for the mesh solver's text */
} module_job_t;

static void module_job_free(module_job_t *job)
{
    free(job->hosts);
    free(job->proc_host);
    free(job->mesh);
    free(job->err);
}

static int module_job_alloc(module_job_t *job, size_t nprocs)
{
    memset(job, 0, sizeof(*job));
    job->hosts = calloc(TBRDMA_MAX_HOSTS, sizeof(*job->hosts));
    job->proc_host = malloc((nprocs ? nprocs : 1) * sizeof(*job->proc_host));
    job->mesh = calloc(1, sizeof(*job->mesh));
    job->err = calloc(1, MODULE_ERR_MAX);
    if (NULL == job->hosts || NULL == job->proc_host || NULL == job->mesh || NULL == job->err) {
        module_job_free(job);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

/* Index of host in job->hosts; appends m when new. -1 when the job has too many hosts. */
static int module_job_add_host(module_job_t *job, const tbrdma_modex_t *m)
{
    int i;

    for (i = 0; i < job->nhosts; i++) {
        if (0 == strcmp(job->hosts[i].host, m->host)) {
            return i;
        }
    }
    if (TBRDMA_MAX_HOSTS == job->nhosts) {
        return -1;
    }
    job->hosts[job->nhosts] = *m;
    return job->nhosts++;
}

/* Messages every process of a host would print alike come from local rank 0 only. */
static bool module_speaks_for_host(void)
{
    return 0 == TBRDMA_MY_LOCAL_RANK();
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

/* Fills job->hosts (own host first) and job->proc_host from every proc's blob. */
static int module_collect_hosts(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                                module_job_t *job)
{
    opal_proc_t *self = opal_proc_local_get();
    size_t i, nsilent = 0;
    tbrdma_modex_t m;

    module_job_add_host(job, &module->local);
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
        job->proc_host[i] = module_job_add_host(job, &m);
        if (0 > job->proc_host[i]) {
            snprintf(job->err, MODULE_ERR_MAX,
                     "the job spans more than %d hosts with Thunderbolt RDMA, the most tbrdma "
                     "supports",
                     TBRDMA_MAX_HOSTS);
            return OPAL_ERR_NOT_SUPPORTED;
        }
    }
    if (0 < nsilent && module_speaks_for_host()) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "%zu of %zu processes have no usable tbrdma address (tbrdma declined on "
                       "their hosts, or their address is unreadable): the other BTLs reach them",
                       nsilent, nprocs);
    }
    return OPAL_SUCCESS;
}

/* Sorts job->hosts by name (every process must solve the same input) and remaps proc_host. */
static int module_sort_hosts(module_job_t *job, size_t nprocs)
{
    int map[TBRDMA_MAX_HOSTS], order[TBRDMA_MAX_HOSTS];
    tbrdma_modex_t *sorted;
    int i, j, k;
    size_t p;

    for (i = 0; i < job->nhosts; i++) {
        for (j = i; j > 0 && 0 < strcmp(job->hosts[order[j - 1]].host, job->hosts[i].host); j--) {
            order[j] = order[j - 1];
        }
        order[j] = i;
    }
    sorted = malloc(job->nhosts * sizeof(*sorted));
    if (NULL == sorted) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (k = 0; k < job->nhosts; k++) {
        sorted[k] = job->hosts[order[k]];
        map[order[k]] = k;
    }
    memcpy(job->hosts, sorted, job->nhosts * sizeof(*sorted));
    free(sorted);
    for (p = 0; p < nprocs; p++) {
        if (0 <= job->proc_host[p]) {
            job->proc_host[p] = map[job->proc_host[p]];
        }
    }
    return OPAL_SUCCESS;
}

static int module_host_index(const module_job_t *job, const char *host)
{
    int i;

    for (i = 0; i < job->nhosts; i++) {
        if (0 == strcmp(job->hosts[i].host, host)) {
            return i;
        }
    }
    return -1;
}

/* The mesh at verbosity 1, one "tbrdma mesh: " line per pair of hosts. */
static void module_print_mesh(const module_job_t *job)
{
    size_t len;
    char *text, *line, *save = NULL;

    if (TBRDMA_VERBOSE_DECLINE > mca_btl_tbrdma_component.verbose || !module_speaks_for_host()) {
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
static int module_solve_mesh(mca_btl_tbrdma_module_t *module, module_job_t *job)
{
    bool partial = mca_btl_tbrdma_component.allow_partial_mesh;
    int rc = tbrdma_mesh_solve(job->hosts, job->nhosts, module->spec, job->mesh, job->err,
                               MODULE_ERR_MAX);

    if (0 == rc || -ENOTCONN == rc) {
        module_print_mesh(job);
    }
    if (0 == rc) {
        return OPAL_SUCCESS;
    }
    if (module_speaks_for_host()) {
        mca_btl_tbrdma_show_help(-ENOTCONN != rc ? "mesh-invalid"
                                 : partial       ? "mesh-partial"
                                                 : "mesh-incomplete",
                                 job->err);
    }
    if (-ENOTCONN == rc && partial) {
        return OPAL_SUCCESS;
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "not used in this job: %s",
                   -ENOTCONN == rc ? "the mesh is incomplete" : "the mesh cannot be solved");
    return -ENOTCONN == rc ? OPAL_ERR_UNREACH : OPAL_ERR_BAD_PARAM;
}

/* One endpoint per peer on another host that a cable reaches; the others are reported. */
static int module_add_endpoints(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                                const module_job_t *job)
{
    int own = module_host_index(job, module->local.host);
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
            if (module_speaks_for_host()) {
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
    }
    return OPAL_SUCCESS;
}

static int module_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints,
                            struct opal_bitmap_t *reachable)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;
    module_job_t job;
    int rc;

    /* No data path yet: no endpoint goes to Open MPI and no reachable bit is set. */
    (void) endpoints;
    (void) reachable;
    rc = module_job_alloc(&job, nprocs);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    OPAL_THREAD_LOCK(&module->lock);
    rc = module_collect_hosts(module, nprocs, procs, &job);
    if (OPAL_ERR_NOT_SUPPORTED == rc && module_speaks_for_host()) {
        mca_btl_tbrdma_show_help("mesh-invalid", job.err);
    }
    if (OPAL_SUCCESS == rc) {
        rc = module_sort_hosts(&job, nprocs);
    }
    if (OPAL_SUCCESS == rc) {
        rc = module_solve_mesh(module, &job);
    }
    if (OPAL_SUCCESS == rc) {
        rc = module_add_endpoints(module, nprocs, procs, &job);
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    module_job_free(&job);
    return rc;
}

static int module_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                            struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **endpoints)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;
    mca_btl_tbrdma_endpoint_t *ep;
    size_t i;

    (void) endpoints;
    OPAL_THREAD_LOCK(&module->lock);
    for (i = 0; i < nprocs; i++) {
        ep = mca_btl_tbrdma_endpoint_find(module, procs[i]);
        if (NULL != ep) {
            opal_list_remove_item(&module->endpoints, &ep->super);
            OBJ_RELEASE(ep);
        }
    }
    OPAL_THREAD_UNLOCK(&module->lock);
    return OPAL_SUCCESS;
}

static int module_finalize(struct mca_btl_base_module_t *btl)
{
    mca_btl_tbrdma_module_t *module = (mca_btl_tbrdma_module_t *) btl;

    OPAL_LIST_DESTRUCT(&module->endpoints);
    OBJ_DESTRUCT(&module->lock);
    free(module->ports);
    free(module->spec);
    if (mca_btl_tbrdma_component.module == module) {
        mca_btl_tbrdma_component.module = NULL;
    }
    free(module);
    return OPAL_SUCCESS;
}
