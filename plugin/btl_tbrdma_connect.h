/*
 * The job as add_procs sees it, and the data path's connection step (btl_tbrdma_connect.c).
 * module_add_procs (btl_tbrdma_module.c) fills the job from every process's modex blob and
 * solves the mesh; mca_btl_tbrdma_connect then checks the queue pair budget, creates the
 * queue pairs, exchanges their numbers through PMIx and connects them.
 */
#ifndef BTL_TBRDMA_CONNECT_H
#define BTL_TBRDMA_CONNECT_H

#include "btl_tbrdma.h"

typedef struct mca_btl_tbrdma_job {
    int nhosts;
    tbrdma_modex_t *hosts; /* TBRDMA_MAX_HOSTS entries, sorted by name */
    int *proc_host;        /* per proc: index in hosts, -1 = no usable blob (not a participant) */
    tbrdma_mesh_t *mesh;
    char *err; /* the mesh solver's text */
} mca_btl_tbrdma_job_t;

/*
 * Collective over the job's tbrdma processes (proc_host >= 0): every one of them must call it
 * with the same job. Connects the module's endpoints in state NEW; on return the usable ones
 * are CONNECTED and have heard from their peer. Returns OPAL_SUCCESS (some endpoints may still
 * be unusable, each reported) or an error when tbrdma cannot serve this job at all (reported).
 */
int mca_btl_tbrdma_connect(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                           const mca_btl_tbrdma_job_t *job);

/* Rank counts per host, for the budget: the number of participants on host h. */
int mca_btl_tbrdma_job_ranks_on(const mca_btl_tbrdma_job_t *job, size_t nprocs, int h);

/* Cables of a pair of hosts that get queue pairs: all of them when striping, else the first. */
int mca_btl_tbrdma_cables_used(const tbrdma_mesh_link_t *l);

/* The index of host in job->hosts, -1 when it is not there. */
int mca_btl_tbrdma_job_host_index(const mca_btl_tbrdma_job_t *job, const char *host);

#endif /* BTL_TBRDMA_CONNECT_H */
