/*
 * A rank's side of the per-Mac agent (docs/design.md, "Wire header and routing: the agent as a
 * UC switch"): what the rank's verbs backend does in agent mode, over the job's segment
 * (tbrdma_agentseg.h). A send is copied into one of the rank's own send slots and handed to the
 * agent; a send completes when the agent says its real SEND did. A frame the agent hands over is
 * matched to a virtual queue pair by its header's connection id and channel, and completes that
 * queue pair's oldest posted receive under UC's rules (tbrdma_vuc_arrive); its slot goes back to
 * the agent at once. The agent's side, the real queue pairs, is not here.
 *
 * Pure logic over memory the caller maps: no verbs, no Open MPI. One thread at a time per port
 * (the rank's progress token).
 */
#ifndef TBRDMA_VPORT_H
#define TBRDMA_VPORT_H

#include "tbrdma_agentseg.h"
#include "tbrdma_ring.h"
#include "tbrdma_route.h"

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_VPORT_OK      0
#define TBRDMA_VPORT_LEN_ERR 1 /* a receive failed by the frame rule (as IBV_WC_LOC_LEN_ERR) */

/* One completion, as the verbs backend reports them. */
typedef struct tbrdma_vport_wc {
    uint64_t wr_id;
    int status; /* TBRDMA_VPORT_OK, TBRDMA_VPORT_LEN_ERR, or the agent's status for a send */
    int is_recv;
    uint32_t byte_len;
    uint32_t vqp; /* the virtual queue pair */
} tbrdma_vport_wc_t;

typedef struct tbrdma_vport_qp {
    uint32_t conn; /* the connection id peers stamp on frames to it */
    uint8_t chan;  /* its channel: which frames it takes, which slots its sends use */
    uint16_t cable;
    tbrdma_vuc_t rq; /* its posted receives */
} tbrdma_vport_qp_t;

typedef struct tbrdma_vport {
    uint8_t *base; /* the mapped segment */
    tbrdma_agentseg_plan_t plan;
    uint32_t rank;
    tbrdma_ring_t to, from, done;
    uint32_t *free_slot[2]; /* per channel: a stack of the rank's free send slots */
    uint32_t nfree[2];
    uint64_t *tx_wr; /* per send slot of the rank (its index among them): the send's wr_id */
    uint32_t *tx_vqp;
    tbrdma_vport_qp_t *qps;
    uint32_t nqps, maxqps;
    uint64_t dropped_bad;  /* frames whose header could not be read */
    uint64_t dropped_conn; /* frames for no virtual queue pair of this rank */
} tbrdma_vport_t;

/* Attaches local rank `rank` to the laid-out segment at base (bytes long), with room for maxqps
 * virtual queue pairs. 0, -EPROTO / -ENOSPC (the segment, tbrdma_agentseg_read), -EINVAL (no such
 * rank) or -ENOMEM. */
int tbrdma_vport_open(tbrdma_vport_t *vp, void *base, size_t bytes, uint32_t rank, uint32_t maxqps);

/* Frees what open allocated. */
void tbrdma_vport_close(tbrdma_vport_t *vp);

/* A virtual queue pair for frames stamped conn on channel chan, sending over cable, with at most
 * max_recv receives posted. Its index (>= 0), -EEXIST (conn and chan taken), -ENOSPC or -ENOMEM. */
int tbrdma_vport_qp_create(tbrdma_vport_t *vp, uint32_t conn, uint8_t chan, uint16_t cable,
                           uint32_t max_recv);

/* Destroys virtual queue pair q: frames for it are dropped from now on, its posted receives are
 * forgotten, and its index is not reused. 0 or -EINVAL. */
int tbrdma_vport_qp_destroy(tbrdma_vport_t *vp, uint32_t q);

/* Posts a receive of len bytes at addr on virtual queue pair q. 0, -EINVAL or -ENOMEM (full). */
int tbrdma_vport_post_recv(tbrdma_vport_t *vp, uint32_t q, uint64_t wr_id, void *addr,
                           uint32_t len);

/* The send slots of channel chan kept for control frames (see tbrdma_vport_post_send). */
uint32_t tbrdma_vport_ctrl_reserve(const tbrdma_vport_t *vp, uint8_t chan);

/* Sends len bytes at buf on virtual queue pair q. 0, -EAGAIN (no free send slot of its channel
 * now: poll, then retry), -EMSGSIZE (longer than the channel's slot) or -EINVAL.
 * The control reserve: a data frame (header type DATA) takes a slot only while more than an
 * eighth of its channel's slots are free (tbrdma_vport_ctrl_reserve); the rest are kept for
 * control frames (acknowledgements, credit grants, probes). In the direct path each pair of ranks
 * has a send queue of its own; here every pair of the rank shares the slots, and without the
 * reserve a rank whose slots all hold data waiting for the cable could not acknowledge what it
 * receives: its peers would time out and send everything again (docs/design.md). */
int tbrdma_vport_post_send(tbrdma_vport_t *vp, uint32_t q, uint64_t wr_id, const void *buf,
                           uint32_t len);

/* Up to max completions: sends the agent finished, frames it handed over. How many, or -EPIPE
 * when a ring holds an impossible index (the agent is broken or gone). */
int tbrdma_vport_poll(tbrdma_vport_t *vp, tbrdma_vport_wc_t *wc, int max);

#endif /* TBRDMA_VPORT_H */
