/*
 * The data path's connection step (btl_tbrdma_connect.c): once module_add_procs
 * (btl_tbrdma_module.c) filled the job and solved the mesh, mca_btl_tbrdma_connect checks the
 * queue pair budget, creates the queue pairs, exchanges their numbers through PMIx and connects
 * them.
 */
#ifndef BTL_TBRDMA_CONNECT_H
#define BTL_TBRDMA_CONNECT_H

#include "base/btl_tbrdma_job.h"

/*
 * Collective over the job's tbrdma processes (proc_host >= 0): every one of them must call it
 * with the same job. Connects the module's endpoints in state NEW; on return the usable ones
 * are CONNECTED and have heard from their peer. Returns OPAL_SUCCESS (some endpoints may still
 * be unusable, each reported) or an error when tbrdma cannot serve this job at all (reported).
 */
int mca_btl_tbrdma_connect(mca_btl_tbrdma_module_t *module, size_t nprocs, opal_proc_t **procs,
                           const mca_btl_tbrdma_job_t *job);

#endif /* BTL_TBRDMA_CONNECT_H */
