/*
 * The job as add_procs sees it (base layer). module_add_procs (btl_tbrdma_module.c) fills it from
 * every process's modex blob and solves the mesh; the connection step (btl_tbrdma_connect.c)
 * and the zero-copy plan read it.
 */
#ifndef BTL_TBRDMA_JOB_H
#define BTL_TBRDMA_JOB_H

#include "btl_tbrdma.h"

/* Room for the mesh solver's text: every pair of hosts, named. */
#define TBRDMA_JOB_ERR_MAX (TBRDMA_MAX_HOSTS * TBRDMA_MAX_HOSTS * 96)

typedef struct mca_btl_tbrdma_job {
    int nhosts;
    tbrdma_modex_t *hosts; /* TBRDMA_MAX_HOSTS entries, sorted by name */
    int *proc_host;        /* per proc: index in hosts, -1 = no usable blob (not a participant) */
    tbrdma_mesh_t *mesh;
    char *err; /* the mesh solver's text */
} mca_btl_tbrdma_job_t;

/* An empty job for nprocs processes; OPAL_SUCCESS or OPAL_ERR_OUT_OF_RESOURCE. */
int mca_btl_tbrdma_job_alloc(mca_btl_tbrdma_job_t *job, size_t nprocs);

/* Frees what alloc gave. */
void mca_btl_tbrdma_job_free(mca_btl_tbrdma_job_t *job);

/* Index of host m in job->hosts; appends m when new. -1 when the job has too many hosts. */
int mca_btl_tbrdma_job_add_host(mca_btl_tbrdma_job_t *job, const tbrdma_modex_t *m);

/* Sorts job->hosts by name (every process must solve the same input) and remaps proc_host. */
int mca_btl_tbrdma_job_sort_hosts(mca_btl_tbrdma_job_t *job, size_t nprocs);

/* Rank counts per host, for the budget: the number of participants on host h. */
int mca_btl_tbrdma_job_ranks_on(const mca_btl_tbrdma_job_t *job, size_t nprocs, int h);

/* Cables of a pair of hosts that get queue pairs: all of them when striping, else the first. */
int mca_btl_tbrdma_cables_used(const tbrdma_mesh_link_t *l);

/* The index of host in job->hosts, -1 when it is not there. */
int mca_btl_tbrdma_job_host_index(const mca_btl_tbrdma_job_t *job, const char *host);

#endif /* BTL_TBRDMA_JOB_H */
