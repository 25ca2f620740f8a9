/*
 * The connection step's part for the per-Mac agent (docs/design.md, "Many ranks per Mac: a
 * per-Mac agent"). In agent mode (btl_tbrdma_agent) the first process of the job on each Mac
 * makes the job's segment there and starts tbrdma-agent, which holds the cables' queue pairs:
 * 2 per cable end per job, whatever the ranks. The segment's name travels to the Mac's other
 * ranks through the job's own modex (one fence); each rank then attaches and waits until its
 * agent has opened the cables. Everything after that (endpoints, records, handshake) is the
 * direct path's, over virtual queue pairs (base/btl_tbrdma_verbs_agent.h).
 */
#ifndef BTL_TBRDMA_AGENT_H
#define BTL_TBRDMA_AGENT_H

#include "base/btl_tbrdma_job.h"
#include "btl_tbrdma.h"

/*
 * Joins this Mac's agent, starting it first when this process is the job's first on the Mac.
 * Every participant (names) calls it: it holds one fence. 0, or the errno that stopped this
 * process (said once, by this process).
 */
int mca_btl_tbrdma_agent_join(mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_job_t *job,
                              size_t nprocs, opal_proc_t **procs, const opal_process_name_t *names,
                              size_t nnames);

/* After the connection records' fence, by which every local rank has attached: the segment's
 * name goes (tbrdma_agentlink_seal). */
void mca_btl_tbrdma_agent_seal(void);

/* Leaves the agent at finalize (after the queue pairs are released). */
void mca_btl_tbrdma_agent_leave(void);

#endif /* BTL_TBRDMA_AGENT_H */
