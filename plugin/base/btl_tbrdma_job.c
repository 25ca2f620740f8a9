/*
 * The job as add_procs sees it (btl_tbrdma_job.h): its hosts, which host each process runs on,
 * and the queries the budget and the zero-copy plan make of it.
 */
#include "base/btl_tbrdma_job.h"

#include <stdlib.h>
#include <string.h>

int mca_btl_tbrdma_job_ranks_on(const mca_btl_tbrdma_job_t *job, size_t nprocs, int h)
{
    int n = 0;

    for (size_t i = 0; i < nprocs; i++) {
        n += (job->proc_host[i] == h) ? 1 : 0;
    }
    return n;
}

int mca_btl_tbrdma_job_host_index(const mca_btl_tbrdma_job_t *job, const char *host)
{
    for (int h = 0; h < job->nhosts; h++) {
        if (0 == strcmp(job->hosts[h].host, host)) {
            return h;
        }
    }
    return -1;
}

int mca_btl_tbrdma_cables_used(const tbrdma_mesh_link_t *l)
{
    return mca_btl_tbrdma_component.stripe ? l->nstripes : (0 <= l->port ? 1 : 0);
}

void mca_btl_tbrdma_job_free(mca_btl_tbrdma_job_t *job)
{
    free(job->hosts);
    free(job->proc_host);
    free(job->mesh);
    free(job->err);
}

int mca_btl_tbrdma_job_alloc(mca_btl_tbrdma_job_t *job, size_t nprocs)
{
    memset(job, 0, sizeof(*job));
    job->hosts = calloc(TBRDMA_MAX_HOSTS, sizeof(*job->hosts));
    job->proc_host = malloc((nprocs ? nprocs : 1) * sizeof(*job->proc_host));
    job->mesh = calloc(1, sizeof(*job->mesh));
    job->err = calloc(1, TBRDMA_JOB_ERR_MAX);
    if (NULL == job->hosts || NULL == job->proc_host || NULL == job->mesh || NULL == job->err) {
        mca_btl_tbrdma_job_free(job);
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    return OPAL_SUCCESS;
}

int mca_btl_tbrdma_job_add_host(mca_btl_tbrdma_job_t *job, const tbrdma_modex_t *m)
{
    int i = mca_btl_tbrdma_job_host_index(job, m->host);

    if (0 <= i) {
        return i;
    }
    if (TBRDMA_MAX_HOSTS == job->nhosts) {
        return -1;
    }
    job->hosts[job->nhosts] = *m;
    return job->nhosts++;
}

int mca_btl_tbrdma_job_sort_hosts(mca_btl_tbrdma_job_t *job, size_t nprocs)
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
