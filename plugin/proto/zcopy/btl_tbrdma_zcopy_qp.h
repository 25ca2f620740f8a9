/*
 * The zero-copy queue pair of an endpoint and its state (proto layer, the bottom of zero-copy:
 * btl_tbrdma_zcopy_qp.c). Above it: the receiver (btl_tbrdma_zcopy_get.h) and the data owner
 * (btl_tbrdma_zcopy_send.h); on top, the plan, the epochs and the dispatch of completions and
 * messages (btl_tbrdma_zcopy.h).
 */
#ifndef BTL_TBRDMA_ZCOPY_QP_H
#define BTL_TBRDMA_ZCOPY_QP_H

#include "fabric/btl_tbrdma_endpoint.h"
#include "fabric/btl_tbrdma_rcache.h"

#include "core/tbrdma_zc.h"

#include <pthread.h>

#define TBRDMA_ZC_INDEX_NONE UINT32_MAX /* the endpoint's index in module->eps is not known yet */

/* The BTL tag of tbrdma's own zero-copy control messages (a BTL's private range). */
#define TBRDMA_TAG_ZCOPY (MCA_BTL_TAG_BTL + 11)

struct mca_btl_tbrdma_zc_op;

/* A chunk the receiver granted and has not accepted yet. */
typedef struct mca_btl_tbrdma_zc_chunk_t {
    struct mca_btl_tbrdma_zc_op *op; /* NULL: the slot is free */
    uint64_t off;                    /* in the operation */
    uint32_t frames;
    uint32_t gen;                    /* its id in GRANT/DONE and its receive's work request */
    uint32_t done_crc;               /* DONE's CRC32C */
    bool crc_checked;                /* the data's CRC32C was compared (st.crc_bad) */
    uint64_t granted_ns, arrived_ns; /* when it was granted, when its receive completed */
    uint64_t done_ns;                /* when its DONE came */
    tbrdma_zc_chunk_state_t st;
} mca_btl_tbrdma_zc_chunk_t;

/* A grant the data owner has yet to serve. */
typedef struct mca_btl_tbrdma_zc_grant_t {
    uint32_t epoch, id, len;
    uint64_t addr, key;
} mca_btl_tbrdma_zc_grant_t;

#define TBRDMA_ZC_GRANTS  (2 * TBRDMA_ZC_WINDOW_MAX)
#define TBRDMA_ZC_RETRIES 8 /* epochs a get may need without progress before ob1 copies it */

/* The zero-copy side of an endpoint. */
typedef struct mca_btl_tbrdma_zc_t {
    uint32_t index;          /* the endpoint's index in module->eps (work request ids) */
    tbrdma_zc_state_t state; /* of the current epoch */
    bool peer_ok;            /* the peer answered with a queue pair: ob1 may be offered gets */
    bool hello_owed;         /* our HELLO for this epoch is still to be sent */
    uint32_t epoch;
    tbrdma_vqp_t *qp;
    uint32_t qpn, psn;
    /* receiver: ob1's gets in arrival order and the chunks outstanding, in grant order */
    pthread_mutex_t ops_lock; /* btl_get appends from any application thread */
    struct mca_btl_tbrdma_zc_op *ops_head, *ops_tail;
    mca_btl_tbrdma_zc_chunk_t chunk[TBRDMA_ZC_WINDOW_MAX]; /* a ring from chead */
    int chead, nchunks;
    uint32_t gen;
    tbrdma_zc_pace_t pace; /* how long a chunk's data may take after its DONE */
    /* data owner: grants to serve, sends outstanding on the queue pair */
    mca_btl_tbrdma_zc_grant_t grant[TBRDMA_ZC_GRANTS];
    int grant_head, ngrants;
    int sq_posted;
} mca_btl_tbrdma_zc_t;

/* One ob1 get. */
typedef struct mca_btl_tbrdma_zc_op {
    struct mca_btl_tbrdma_zc_op *next;
    uint8_t *local;
    uint64_t remote;
    uint64_t len;
    uint64_t next_off; /* the first byte not granted yet */
    int inflight;      /* its chunks outstanding */
    int retries;       /* epochs it went through since one of its chunks was accepted */
    int status;        /* OPAL_SUCCESS until it failed */
    uint32_t lkey;
    uint64_t key; /* the owner's registration */
    mca_btl_base_registration_handle_t *local_handle;
    mca_btl_base_rdma_completion_fn_t cbfunc;
    void *cbcontext, *cbdata;
} mca_btl_tbrdma_zc_op_t;

/* Creates the endpoint's zero-copy state and queue pair when planned (endpoint setup). */
void mca_btl_tbrdma_zc_setup(mca_btl_tbrdma_endpoint_t *ep);

/* Destroys the endpoint's zero-copy queue pair (verbs release). */
void mca_btl_tbrdma_zc_release(mca_btl_tbrdma_endpoint_t *ep);

/* Completion-queue entries the device needs for neps endpoints' zero-copy queue pairs. */
int mca_btl_tbrdma_zc_cqe(int neps);

/* Frees the endpoint's zero-copy state (finalize). */
void mca_btl_tbrdma_zc_free(mca_btl_tbrdma_endpoint_t *ep);

/* A control message in two steps: a frame for a control message (NULL when none is free), then the
 * message queued in it (token). */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_zc_msg_frag(mca_btl_tbrdma_module_t *module,
                                                  mca_btl_tbrdma_endpoint_t *ep);
void mca_btl_tbrdma_zc_msg_queue(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_frag_t *frag,
                                 const tbrdma_zc_msg_t *m);

/* A new queue pair for the current epoch (INIT). 0, or -1 (said at verbosity 1 when say). */
int mca_btl_tbrdma_zc_qp_new(mca_btl_tbrdma_endpoint_t *ep, bool say);

/* Destroys the queue pair; the grants it was to serve and its sends are forgotten. */
void mca_btl_tbrdma_zc_qp_destroy(mca_btl_tbrdma_zc_t *zc);

/* Our HELLO for this epoch (queue pair 0 when we have none); hello_owed stays when no frame is
 * free (token). */
void mca_btl_tbrdma_zc_send_hello(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep);

#endif /* BTL_TBRDMA_ZCOPY_QP_H */
