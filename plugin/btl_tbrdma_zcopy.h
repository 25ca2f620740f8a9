/*
 * Zero-copy large messages (docs/design.md, "Zero-copy large messages"): ob1's get, emulated
 * over SEND on a third UC queue pair per peer, from and into user memory registered through
 * Open MPI's registration cache (rcache grdma). The pure rules are core/tbrdma_zc.h; the files:
 *   btl_tbrdma_rcache.c     registrations: the device's rcache, the memory region budget,
 *                           register_mem/deregister_mem, the owner's check of a peer's grant
 *   btl_tbrdma_zcopy.c      the zero-copy queue pair of an endpoint: budget, epochs and HELLO,
 *                           control messages, completions, progress, release
 *   btl_tbrdma_zcopy_get.c  the receiver (ob1's get): operations, chunks, grants, verdicts
 *   btl_tbrdma_zcopy_send.c the data owner: grants served from user memory, DONE
 * Everything but btl_get's queueing and the registration calls runs with the token held, on an
 * application thread (the liveness thread only records completions).
 */
#ifndef BTL_TBRDMA_ZCOPY_H
#define BTL_TBRDMA_ZCOPY_H

#include "btl_tbrdma_job.h"
#include "btl_tbrdma_endpoint.h"
#include "btl_tbrdma_frag.h"

#include "opal/mca/rcache/rcache.h"

#include "core/tbrdma_zc.h"

#include <pthread.h>

/* Defaults of btl_tbrdma_zcopy_min (the switch point, docs/design.md) and _chunk. */
#define TBRDMA_ZCOPY_MIN_DEFAULT 4194304 /* bench/zcopy_bench.sh, docs/design.md */
#define TBRDMA_ZCOPY_CHUNK_DEFAULT \
    4194304 /* 1 MiB: an unexplained VM-tier overrun, docs/design.md */
#define TBRDMA_STR_(x) #x
#define TBRDMA_STR(x)  TBRDMA_STR_(x)

/* The BTL tag of tbrdma's own zero-copy control messages (a BTL's private range). */
#define TBRDMA_TAG_ZCOPY (MCA_BTL_TAG_BTL + 11)

/*
 * What ob1 copies onto the wire for a registration: the owner checks every grant against its
 * own list of registrations (cookie), never trusting the address alone.
 */
struct mca_btl_base_registration_handle_t {
    uint64_t cookie; /* the registration in the registering process */
    uint64_t base;   /* first byte registered */
    uint64_t bound;  /* last byte registered */
};

/* One registration of user memory: grdma's record, the memory region, the device's list. */
typedef struct mca_btl_tbrdma_reg_t {
    mca_rcache_base_registration_t base; /* first: grdma allocates and caches these */
    struct mca_btl_tbrdma_reg_t *prev, *next;
    struct mca_btl_tbrdma_device_t *dev;
    tbrdma_vmr_t mr; /* zeroed once released (finalize, peer loss, signal) */
    mca_btl_base_registration_handle_t handle;
} mca_btl_tbrdma_reg_t;

/* Counters of a device's registrations (under its lock). */
typedef struct mca_btl_tbrdma_reg_stats_t {
    uint64_t made;        /* memory regions registered */
    uint64_t dropped;     /* deregistered by grdma (evicted, invalidated, unused) */
    uint64_t refused;     /* register_mem calls that gave ob1 NULL (it copied) */
    uint64_t over_budget; /* times btl_tbrdma_zcopy_max_regs was reached (grdma evicts) */
    uint64_t failed;      /* memory regions the device refused */
} mca_btl_tbrdma_reg_stats_t;

/* A device's registrations. */
typedef struct mca_btl_tbrdma_rcache_t {
    mca_rcache_base_module_t *rcache;
    pthread_mutex_t lock; /* the list: application threads register, the token holder checks */
    mca_btl_tbrdma_reg_t *live;
    int nregs;
    int at_release; /* memory regions still registered when verbs were released */
    bool released;  /* the device's verbs resources are gone: registering fails */
    mca_btl_tbrdma_reg_stats_t stats;
} mca_btl_tbrdma_rcache_t;

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

/* ---- btl_tbrdma_rcache.c --------------------------------------------------------------- */

/* The device's registration cache (at creation, single-threaded); 0 or -1 (zero-copy off). */
int mca_btl_tbrdma_rcache_init(mca_btl_tbrdma_device_t *dev);

/* Deregisters every memory region of the device (verbs release); the records stay for ob1. */
void mca_btl_tbrdma_rcache_release(mca_btl_tbrdma_device_t *dev);

/* Destroys the cache (finalize, after ob1 returned its handles). */
void mca_btl_tbrdma_rcache_fini(mca_btl_tbrdma_device_t *dev);

/* ob1's register_mem / deregister_mem. */
mca_btl_base_registration_handle_t *mca_btl_tbrdma_register_mem(struct mca_btl_base_module_t *btl,
                                                                struct mca_btl_base_endpoint_t *ep,
                                                                void *base, size_t size,
                                                                uint32_t flags);
int mca_btl_tbrdma_deregister_mem(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_registration_handle_t *handle);

/* The local key of [addr, addr+len) in the registration key of dev, or -1 (owner's check). */
int mca_btl_tbrdma_rcache_lookup(mca_btl_tbrdma_device_t *dev, uint64_t key, uint64_t addr,
                                 uint32_t len, uint32_t *lkey_p);

/* ---- btl_tbrdma_zcopy.c ---------------------------------------------------------------- */

/* Decides, for every endpoint, whether the budget leaves room for its zero-copy queue pair. */
void mca_btl_tbrdma_zc_plan(mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_job_t *job,
                            size_t nprocs);

/* Creates the endpoint's zero-copy state and queue pair when planned (endpoint setup). */
void mca_btl_tbrdma_zc_setup(mca_btl_tbrdma_endpoint_t *ep);

/* Destroys the endpoint's zero-copy queue pair (verbs release). */
void mca_btl_tbrdma_zc_release(mca_btl_tbrdma_endpoint_t *ep);

/* Completion-queue entries the device needs for neps endpoints' zero-copy queue pairs. */
int mca_btl_tbrdma_zc_cqe(int neps);

/* A zero-copy completion (token; any thread: it is only recorded). */
void mca_btl_tbrdma_zc_complete(mca_btl_tbrdma_module_t *module, const tbrdma_vwc_t *wc);

/* A control message (tag TBRDMA_TAG_ZCOPY) from ep (token, application thread). */
void mca_btl_tbrdma_zc_recv(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            const uint8_t *buf, size_t len);

/* The endpoint's zero-copy work: HELLO, verdicts, grants, sends (token, application thread). */
void mca_btl_tbrdma_zc_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                uint64_t now);

/* Every operation not finished fails with status (ob1 called unless finalizing; token). */
void mca_btl_tbrdma_zc_fail_all(mca_btl_tbrdma_module_t *module, int status);

/* Prints the zero-copy counters ("tbrdma zcopy: ..." line; finalize, with the others). */
void mca_btl_tbrdma_zc_print_stats(const mca_btl_tbrdma_module_t *module, const char *when);

/* Frees the endpoint's zero-copy state (finalize). */
void mca_btl_tbrdma_zc_free(mca_btl_tbrdma_endpoint_t *ep);

/* Starts a new epoch: new queue pair, HELLO, chunks to grant again (token). */
void mca_btl_tbrdma_zc_resync(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep);

/* Queues a control message to ep; -1 when no frame is free (try again later; token). */
int mca_btl_tbrdma_zc_send_msg(mca_btl_tbrdma_endpoint_t *ep, const tbrdma_zc_msg_t *m);

/* The same in two steps: a frame for a control message (NULL when none is free), then the
 * message queued in it (token). */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_zc_msg_frag(mca_btl_tbrdma_endpoint_t *ep);
void mca_btl_tbrdma_zc_msg_queue(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_frag_t *frag,
                                 const tbrdma_zc_msg_t *m);

/* ---- btl_tbrdma_zcopy_get.c ------------------------------------------------------------ */

/* ob1's get. */
int mca_btl_tbrdma_get(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep,
                       void *local_address, uint64_t remote_address,
                       struct mca_btl_base_registration_handle_t *local_handle,
                       struct mca_btl_base_registration_handle_t *remote_handle, size_t size,
                       int flags, int order, mca_btl_base_rdma_completion_fn_t cbfunc,
                       void *cbcontext, void *cbdata);

/* The receiver's work: verdicts on outstanding chunks, then new grants (token). */
void mca_btl_tbrdma_zc_get_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                    uint64_t now);

/* A receive completion of chunk slot (token). */
void mca_btl_tbrdma_zc_get_recv(mca_btl_tbrdma_endpoint_t *ep, uint32_t slot, uint32_t gen,
                                const tbrdma_vwc_t *wc, uint64_t now);

/* A DONE from the owner (token). */
void mca_btl_tbrdma_zc_get_done(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                const tbrdma_zc_msg_t *m, uint64_t now);

/* Outstanding chunks are given up (new epoch): their bytes are granted again later. */
void mca_btl_tbrdma_zc_get_rewind(mca_btl_tbrdma_endpoint_t *ep);

/* Completes (status OPAL_SUCCESS or an error) and frees every finished operation (token). */
void mca_btl_tbrdma_zc_get_finish(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  bool fail_all, int status);

/* ---- btl_tbrdma_zcopy_send.c ----------------------------------------------------------- */

/* A GRANT from the receiver: queued for the owner's progress (token). */
void mca_btl_tbrdma_zc_send_grant(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  const tbrdma_zc_msg_t *m);

/* Serves queued grants: the chunk from user memory, then DONE (token). */
void mca_btl_tbrdma_zc_send_progress(mca_btl_tbrdma_module_t *module,
                                     mca_btl_tbrdma_endpoint_t *ep);

#endif /* BTL_TBRDMA_ZCOPY_H */
