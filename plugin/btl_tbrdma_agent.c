/*
 * The connection step's part for the per-Mac agent (btl_tbrdma_agent.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include "btl_tbrdma_agent.h"
#include "base/btl_tbrdma_agentlink.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_shmseg.h"
#include "base/btl_tbrdma_verbs.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_progress.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AGENT_KEY     "btl.tbrdma.agent.v1"
#define AGENT_PROGRAM "tbrdma-agent"

/* This process's place among the job's processes on its Mac: its local rank (by vpid), how many
 * there are, and the first's index in procs. */
typedef struct agent_local {
    uint32_t rank, nranks;
    size_t first;
} agent_local_t;

static void agent_locals(const mca_btl_tbrdma_job_t *job, size_t nprocs, opal_proc_t **procs,
                         int own, agent_local_t *l)
{
    const opal_process_name_t *me = &OPAL_PROC_MY_NAME;

    *l = (agent_local_t){0, 0, nprocs};
    for (size_t i = 0; i < nprocs; i++) {
        if (own != job->proc_host[i]) {
            continue;
        }
        l->rank += (procs[i]->proc_name.vpid < me->vpid) ? 1 : 0;
        if (nprocs == l->first || procs[i]->proc_name.vpid < procs[l->first]->proc_name.vpid) {
            l->first = i;
        }
        l->nranks++;
    }
}

/* The tbrdma-agent program: btl_tbrdma_agent_path, else beside this plugin (a build tree keeps
 * the plugin in .libs below it), else the installed one. */
static const char *agent_program(char *buf, size_t len)
{
    const char *set = mca_btl_tbrdma_component.agent_path;
    Dl_info info;

    if (NULL != set && '\0' != set[0]) {
        return set;
    }
    if (0 != dladdr((void *) &mca_btl_tbrdma_component, &info) && NULL != info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        int dir = (NULL != slash) ? (int) (slash - info.dli_fname) : 0;
        const char *try[] = {"/../" AGENT_PROGRAM, "/" AGENT_PROGRAM};

        for (size_t i = 0; i < sizeof(try) / sizeof(try[0]); i++) {
            char path[PATH_MAX];

            snprintf(path, sizeof(path), "%.*s%s", dir, info.dli_fname, try[i]);
            if (0 == access(path, X_OK) && NULL != realpath(path, buf)) {
                return buf; /* buf holds PATH_MAX */
            }
        }
    }
    snprintf(buf, len, "%s/%s", TBRDMA_BINDIR, AGENT_PROGRAM);
    return buf;
}

/* The first process of the job on this Mac: the segment and the agent, over every usable port. */
static int agent_start(const mca_btl_tbrdma_module_t *module, uint32_t nranks, char *name,
                       char *err, size_t errlen)
{
    const char *lib = mca_btl_tbrdma_component.verbs_lib;
    char path[PATH_MAX];
    tbrdma_agentlink_cfg_t cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.job = OPAL_JOBID_PRINT(OPAL_PROC_MY_NAME.jobid);
    cfg.agent_path = agent_program(path, sizeof(path));
    cfg.verbs_lib = (NULL != lib && '\0' != lib[0]) ? lib : tbrdma_verbs_default_lib();
    cfg.ledger_dir = mca_btl_tbrdma_component.ledger_dir;
    cfg.host = module->local.host;
    cfg.nranks = nranks;
    cfg.ncables = (uint32_t) module->local.nports;
    cfg.bulk_frames = (uint32_t) mca_btl_tbrdma_component.bulk_frames;
    for (int p = 0; p < module->local.nports; p++) {
        cfg.devices[p] = module->ports[p].device;
        cfg.port_nums[p] = module->ports[p].port_num;
    }
    return tbrdma_agentlink_create(&cfg, name, err, errlen);
}

/* The segment's name the Mac's first process published ("" when it could not start one). */
static int agent_name_of(const opal_proc_t *first, char *name, size_t len)
{
    uint8_t *blob = NULL;
    size_t size = 0;
    int rc;

    OPAL_MODEX_RECV_STRING(rc, AGENT_KEY, &first->proc_name, &blob, &size);
    if (OPAL_SUCCESS != rc || NULL == blob || 0 == size || size >= len) {
        free(blob);
        return ENOENT;
    }
    memcpy(name, blob, size);
    name[size] = '\0';
    free(blob);
    return ('\0' != name[0]) ? 0 : ENOENT;
}

/* Publishes name (the first process) and waits for every participant. */
static int agent_fence(const char *name, bool first, const opal_process_name_t *names, size_t n)
{
    int rc = OPAL_SUCCESS;

    if (first) {
        OPAL_MODEX_SEND_STRING(rc, TBRDMA_MODEX_SCOPE, AGENT_KEY, name, strlen(name) + 1);
    }
    return (OPAL_SUCCESS == rc) ? tbrdma_compat_commit_fence(names, n) : rc;
}

static void agent_report(const mca_btl_tbrdma_module_t *module, const char *err)
{
    char msg[TBRDMA_MSG_MAX];

    snprintf(msg, sizeof(msg), "host %s (%s): %s", module->local.host,
             OPAL_NAME_PRINT(OPAL_PROC_MY_NAME), err);
    mca_btl_tbrdma_show_help("agent-failed", msg);
}

/* The Mac runs its ranks and its agent. When they outnumber its cores, ranks that busy-poll take
 * the agent's turns: on the 2-core test host, with 2 busy ranks and 2 agents, a pair's 8-byte
 * all-reduce took 8.8 ms instead of 65 us with idle ranks yielding (docs/design.md). Open MPI
 * makes idle ranks yield only on a node it knows is oversubscribed, and it does not count the
 * agent; so tbrdma turns yield-when-idle on then, unless the user set mpi_yield_when_idle. */
static void agent_yield_if_crowded(uint32_t nranks)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mca_base_var_source_t source = MCA_BASE_VAR_SOURCE_DEFAULT;
    const bool *now = NULL; /* the variable's storage, when found */
    int idx;

    if (cores <= 0 || (long) nranks + 1 <= cores) {
        return;
    }
    idx = mca_base_var_find("ompi", "mpi", NULL, "yield_when_idle");
    if (idx >= 0 && OPAL_SUCCESS == mca_base_var_get_value(idx, &now, &source, NULL)
        && MCA_BASE_VAR_SOURCE_DEFAULT != source) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "%u ranks and the agent on %ld cores: mpi_yield_when_idle left as set (%s)",
                       nranks, cores, *now ? "true" : "false");
        return;
    }
    if (NULL != now) {
        /* The variable is not settable (mca_base_var_set_value refuses it), and Open MPI hands
         * its value to opal_progress after add_procs: write its storage, as Open MPI does itself
         * for an oversubscribed node. */
        *(bool *) now = true;
    }
    (void) opal_progress_set_yield_when_idle(true);
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                   "%u ranks and the agent on %ld cores: idle ranks yield the core "
                   "(mpi_yield_when_idle 0 keeps them busy-polling)",
                   nranks, cores);
}

int mca_btl_tbrdma_agent_join(mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_job_t *job,
                              size_t nprocs, opal_proc_t **procs, const opal_process_name_t *names,
                              size_t nnames)
{
    int own = mca_btl_tbrdma_job_host_index(job, module->local.host);
    char name[TBRDMA_SHMSEG_NAME_MAX + 1] = "", err[TBRDMA_MSG_MAX / 2] = "";
    agent_local_t l;
    int rc = 0;

    agent_locals(job, nprocs, procs, own, &l);
    if (0 == l.rank) {
        rc = agent_start(module, l.nranks, name, err, sizeof(err));
    }
    if (OPAL_SUCCESS != agent_fence(name, 0 == l.rank, names, nnames)) {
        tbrdma_agentlink_quit();
        return EIO; /* the fence is missed: the job cannot start anyway */
    }
    if (0 == rc && 0 != l.rank && 0 != agent_name_of(procs[l.first], name, sizeof(name))) {
        snprintf(err, sizeof(err),
                 "the first rank of the job on this Mac (%s) could not start the tbrdma agent "
                 "(it says why)",
                 OPAL_NAME_PRINT(procs[l.first]->proc_name));
        rc = EPIPE;
    }
    if (0 == rc) {
        tbrdma_agentlink_set_stale(mca_btl_tbrdma_component.peer_timeout_ms);
        rc = tbrdma_agentlink_attach(name, l.rank, mca_btl_tbrdma_component.agent_timeout_ms, err,
                                     sizeof(err));
    }
    if (0 != rc) {
        agent_report(module, err);
        return rc;
    }
    module->agent_mode = true;
    agent_yield_if_crowded(l.nranks);
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                   "local rank %u of %u on %s: the cables' queue pairs are the tbrdma agent's "
                   "(pid %d, segment %s)",
                   l.rank, l.nranks, module->local.host, tbrdma_agentlink_agent_pid(), name);
    return 0;
}

void mca_btl_tbrdma_agent_seal(void)
{
    tbrdma_agentlink_seal();
}

void mca_btl_tbrdma_agent_leave(void)
{
    tbrdma_agentlink_detach();
}
