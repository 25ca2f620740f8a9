/*
 * The per-Mac agent's two decisions per frame (docs/design.md, "Wire header and routing: the
 * agent as a UC switch"): where a frame that arrived on one of the agent's real queue pairs goes,
 * and what a rank's virtual queue pair does with a frame handed to it.
 *
 * Routing. In agent mode a rank's connection id is its local rank in the top byte and 24 random
 * bits below; peers stamp it on every frame (the header's `conn`, unchanged). The agent reads the
 * header (its sanity and CRC only, tbrdma_wire_peek_conn), takes the local rank from `conn` and
 * hands the frame to that rank when it is attached, else drops it. Top byte 255 is the agents'
 * own (their credit frames). The rank checks the rest, the whole `conn` included.
 *
 * Virtual UC queue pair. A rank's channel posts receives on a virtual queue pair kept by the
 * rank's verbs backend; a frame the agent hands over completes the oldest posted receive, with
 * Apple's rules as libtbsim enforces them: no posted receive, the frame is dropped without a
 * trace; a frame spanning another number of 4 KiB frames than the receive, or longer than it,
 * fails that receive (a length error) and is not delivered.
 *
 * Opal-free, verbs-free, no shared memory of its own: the agent and the backend keep these in
 * their private memory.
 */
#ifndef TBRDMA_ROUTE_H
#define TBRDMA_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_ROUTE_RANKS 255u /* local ranks 0..254 per Mac */
#define TBRDMA_ROUTE_AGENT 255u /* conn's top byte on the agents' own frames */

/* The connection id of an endpoint of local rank local_rank, from 32 random bits rnd (their low
 * 24 are kept). 0 with *conn_p set, or -EINVAL when local_rank is not below TBRDMA_ROUTE_RANKS. */
int tbrdma_route_conn(unsigned local_rank, uint32_t rnd, uint32_t *conn_p);

/* The local rank (or TBRDMA_ROUTE_AGENT) a connection id names. */
static inline unsigned tbrdma_route_conn_rank(uint32_t conn)
{
    return conn >> 24;
}

/* The agent's table of its attached local ranks. Zeroed: none attached. */
typedef struct tbrdma_route_table {
    uint64_t live[4]; /* bit r: local rank r is attached and alive */
} tbrdma_route_table_t;

/* Marks local rank r attached (0) or gone (detach); -EINVAL when r is out of range. */
int tbrdma_route_attach(tbrdma_route_table_t *t, unsigned r);
int tbrdma_route_detach(tbrdma_route_table_t *t, unsigned r);

/* 1 when local rank r is attached. */
int tbrdma_route_live(const tbrdma_route_table_t *t, unsigned r);

/* Where a frame goes. */
typedef enum tbrdma_route_outcome {
    TBRDMA_ROUTE_TO_RANK = 0, /* hand it to the local rank written to *rank_p */
    TBRDMA_ROUTE_TO_AGENT,    /* the agents' own frame */
    TBRDMA_ROUTE_SHORT,       /* fewer bytes than a header: dropped */
    TBRDMA_ROUTE_BAD_HDR,     /* header damaged (magic, version, fields, CRC): dropped */
    TBRDMA_ROUTE_NO_RANK,     /* no attached rank has that local rank: dropped */
    TBRDMA_ROUTE_OUTCOMES
} tbrdma_route_outcome_t;

/* Decides where a frame of byte_len bytes that arrived on channel chan goes. Reads only the
 * header, never past byte_len; *rank_p is written only for TBRDMA_ROUTE_TO_RANK. */
tbrdma_route_outcome_t tbrdma_route_frame(const tbrdma_route_table_t *t, const uint8_t *frame,
                                          uint32_t byte_len, uint8_t chan, unsigned *rank_p);

/* Short name of an outcome, for counters and messages. */
const char *tbrdma_route_outcome_name(tbrdma_route_outcome_t o);

/* ---- a rank's virtual UC queue pair ---------------------------------------------------- */

typedef struct tbrdma_vuc_recv {
    uint64_t wr_id;
    void *addr;   /* where the frame goes (NULL: the caller keeps that itself) */
    uint32_t len; /* bytes posted */
} tbrdma_vuc_recv_t;

typedef struct tbrdma_vuc {
    tbrdma_vuc_recv_t *q; /* the posted receives, oldest at head */
    uint32_t cap;         /* at most this many posted (the queue pair's max_recv) */
    uint32_t head;        /* index of the oldest */
    uint32_t count;       /* posted now */
    uint64_t dropped;     /* frames that found no posted receive */
    uint64_t len_errors;  /* receives failed by the frame rule */
} tbrdma_vuc_t;

/* A virtual queue pair of at most cap posted receives. 0, -EINVAL (cap 0) or -ENOMEM. */
int tbrdma_vuc_init(tbrdma_vuc_t *v, uint32_t cap);

/* Frees it (the posted receives are forgotten, as a destroyed queue pair's). */
void tbrdma_vuc_fini(tbrdma_vuc_t *v);

/* Posts a receive of len bytes. 0, or -ENOMEM when cap receives are posted already (what a
 * verbs post beyond max_recv returns). */
int tbrdma_vuc_post(tbrdma_vuc_t *v, uint64_t wr_id, uint32_t len);

/* The same, with the receive's buffer, handed back in the receive that arrive takes. */
int tbrdma_vuc_post_buf(tbrdma_vuc_t *v, uint64_t wr_id, void *addr, uint32_t len);

/* What became of a frame handed to the queue pair. */
typedef enum tbrdma_vuc_verdict {
    TBRDMA_VUC_DELIVER = 0, /* copy it into *rcv and complete rcv successfully */
    TBRDMA_VUC_DROP,        /* no receive posted: gone, no completion */
    TBRDMA_VUC_LEN_ERR      /* *rcv completes with a length error; nothing delivered */
} tbrdma_vuc_verdict_t;

/* A frame of byte_len bytes arrives: takes the oldest posted receive into *rcv (unless
 * TBRDMA_VUC_DROP) and says what to do with it. */
tbrdma_vuc_verdict_t tbrdma_vuc_arrive(tbrdma_vuc_t *v, uint32_t byte_len, tbrdma_vuc_recv_t *rcv);

#endif /* TBRDMA_ROUTE_H */
