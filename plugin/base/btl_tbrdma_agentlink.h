/*
 * A rank's link to its Mac's agent (docs/design.md, "Many ranks per Mac: a per-Mac agent"): the
 * job's segment on this Mac, the agent process, and what a rank asks of it. One per process.
 *
 *   create    the Mac's first rank of the job: makes the segment (core/tbrdma_agentseg.h in a
 *             mode-0600 segment, base/btl_tbrdma_shmseg.h), writes the cables, starts the
 *             tbrdma-agent program in a session of its own and tells it to open the cables
 *   attach    every local rank (the creator too): maps the segment, waits until the agent says
 *             READY (or FAILED: its one line), attaches its vport (core/tbrdma_vport.h)
 *   connect   a cable's link between this Mac's agent and the peer Mac's: the first rank to ask
 *             gives the peer agent's queue pairs, every rank waits until the agent connected them
 *   detach    at finalize: the rank says it left; the agent ends when its last rank has
 *
 * The verbs backend (base/btl_tbrdma_verbs.c) routes a rank's devices and queue pairs through
 * the vport while the link is attached. Opal-free (libtbrdma_sys).
 */
#ifndef BTL_TBRDMA_AGENTLINK_H
#define BTL_TBRDMA_AGENTLINK_H

#include "core/tbrdma_agentseg.h"
#include "core/tbrdma_vport.h"

#include <stddef.h>
#include <stdint.h>

/* How long the agent's heartbeat may stand still before a rank gives up on it, at least. Its death
 * is seen at once (its pid is gone); this catches an agent that hangs. Generous: on the simulated
 * Macs an agent's port query (rtnetlink, in the simulator) was seen blocked for 5 s at a job's
 * start (strace: socket(AF_NETLINK) and recvmsg taking 5.0 s) while 16 ranks started, and on the
 * 2-core host with 20 processes an agent's sched_yield once returned after 4.6 s. A hung agent
 * also silences every peer of its ranks, whose liveness (btl_tbrdma_peer_timeout_ms) ends the job
 * anyway; so the limit is 3 peer timeouts when that is longer (tbrdma_agentlink_set_stale): a
 * user who lengthens the peer timeout for a loaded Mac lengthens this with it. */
#define TBRDMA_AGENTLINK_STALE_MS 15000

/* Sets how long the agent's heartbeat may stand still: max(TBRDMA_AGENTLINK_STALE_MS,
 * 3 x peer_timeout_ms). Before attaching; the limit is TBRDMA_AGENTLINK_STALE_MS until then. */
void tbrdma_agentlink_set_stale(int peer_timeout_ms);

/* The limit tbrdma_agentlink_set_stale set, in ms. */
int tbrdma_agentlink_stale_ms(void);

/* What the creator needs to make the segment and start the agent. */
typedef struct tbrdma_agentlink_cfg {
    const char *job;        /* the job's name: hashed into the segment's name */
    const char *agent_path; /* the tbrdma-agent program */
    const char *verbs_lib;  /* the verbs library the agent loads (the ranks' own) */
    const char *ledger_dir; /* the slot ledger's directory ("": none) */
    const char *host;       /* this Mac's name, for the agent's ledger record */
    uint32_t nranks;        /* local ranks of the job */
    uint32_t ncables;
    const char *devices[TBRDMA_MAX_PORTS]; /* per cable: the verbs device and its port */
    int port_nums[TBRDMA_MAX_PORTS];
    uint32_t bulk_frames; /* frames of a bulk message (btl_tbrdma_bulk_frames) */
} tbrdma_agentlink_cfg_t;

/* The peer Mac's agent on one cable, and this end's addressing, as RTR needs them. */
typedef struct tbrdma_agentlink_peer {
    uint32_t qpn[2]; /* the peer agent's queue pair per channel */
    uint32_t psn;    /* its send PSN */
    uint8_t gid[16]; /* the peer port's IPv4-mapped GID */
    int sgid_index;  /* this port's */
    int mtu;         /* ibv_mtu value */
} tbrdma_agentlink_peer_t;

/* The segment geometry the first defaults give (docs/design.md, "The job's segment"). */
void tbrdma_agentlink_geom(const tbrdma_agentlink_cfg_t *cfg, tbrdma_agentseg_geom_t *g);

/* Makes the segment, starts the agent and asks it to open the cables; the segment's name goes
 * to name (TBRDMA_SHMSEG_NAME_MAX + 1 bytes). 0 or an errno, with err saying what failed. */
int tbrdma_agentlink_create(const tbrdma_agentlink_cfg_t *cfg, char *name, char *err,
                            size_t errlen);

/* Maps segment name as local rank `rank`, waits up to timeout_ms for the agent to be READY and
 * attaches. 0 or an errno with err (ETIMEDOUT, EPIPE: the agent failed or ended, its line). */
int tbrdma_agentlink_attach(const char *name, uint32_t rank, int timeout_ms, char *err,
                            size_t errlen);

/* The creator, once every local rank has attached: removes the segment's name, so that nothing
 * can open it any more and nothing is left in the file system whatever ends the job (the agent
 * and the ranks keep their mappings). A no-op elsewhere. */
void tbrdma_agentlink_seal(void);

/* 1 while attached. */
int tbrdma_agentlink_attached(void);

/* The vport (NULL when not attached). */
tbrdma_vport_t *tbrdma_agentlink_vport(void);

/* The cable of verbs device `device` in the segment, or -1. */
int tbrdma_agentlink_cable(const char *device);

/* The agent's queue pairs and send PSN on cable k. */
void tbrdma_agentlink_cable_qps(int k, uint32_t qpn[2], uint32_t *psn);

/* The connection id of one of this rank's endpoints, from 32 random bits. */
uint32_t tbrdma_agentlink_conn(uint32_t rnd);

/* Has the agent connect cable k to peer (once per cable; later calls check they agree) and
 * waits until it has (at most attach's timeout_ms). 0 or an errno with err. */
int tbrdma_agentlink_connect(int k, const tbrdma_agentlink_peer_t *peer, char *err, size_t errlen);

/* 1 when the agent's port of cable k is ACTIVE (as the agent saw it last). */
int tbrdma_agentlink_port_active(int k);

/* 0 while the agent runs; EPIPE (err: which agent, why) when it failed, ended, or its
 * heartbeat has not moved for stale_ms. Cheap: reads the header at most every millisecond. */
int tbrdma_agentlink_check(int stale_ms, char *err, size_t errlen);

/* The agent's pid (0 when not attached). */
int tbrdma_agentlink_agent_pid(void);

/* Says this rank left (its control line: the agent frees what the rank used), and nothing more:
 * safe in a signal handler. Frames are neither sent nor delivered after it. */
void tbrdma_agentlink_leave(void);

/* Says this rank left and unmaps; the creator also removes the segment's name. Idempotent. */
void tbrdma_agentlink_detach(void);

/* The creator, when the job does not use the agent after all: tells it to leave, unmaps. */
void tbrdma_agentlink_quit(void);

#endif /* BTL_TBRDMA_AGENTLINK_H */
