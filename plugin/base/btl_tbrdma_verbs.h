/*
 * The verbs backend: the only code of tbrdma that calls ibv_*. It loads the verbs library at
 * run time (librdma.dylib on macOS, libibverbs.so.1 on Linux, or the path given by the
 * btl_tbrdma_verbs_lib parameter: that is how the fabric simulator plugs in) and resolves the
 * functions tbrdma uses. Opal-free, so the tools link it too.
 */
#ifndef BTL_TBRDMA_VERBS_H
#define BTL_TBRDMA_VERBS_H

#include "core/tbrdma_types.h"

#include "base/btl_tbrdma_verbs_lib.h" /* loading the library: btl_tbrdma_verbs_load.c */

/*
 * Discovers every device and port: state, link layer, MTU, GID table and the index of the
 * IPv4-mapped GID, then the paired interface's facts (through btl_tbrdma_netif). Fills up to
 * max entries and sets *nports_p (0 when the library lists no device). Returns 0, or a
 * negative errno with err set when the device list itself cannot be read.
 */
int tbrdma_verbs_discover(tbrdma_port_info_t *ports, int max, int *nports_p, char *err,
                          size_t errlen);

/* ---- the data path: devices, memory, UC queue pairs, posting and polling -------------- */

/* One device opened for the data path: its context, protection domain and completion queue. */
typedef struct tbrdma_vdev tbrdma_vdev_t;

/* One UC queue pair (opaque). */
typedef struct tbrdma_vqp tbrdma_vqp_t;

/* A registered memory region. */
typedef struct tbrdma_vmr {
    void *handle; /* struct ibv_mr */
    uint32_t lkey;
} tbrdma_vmr_t;

/* One work completion, in tbrdma's terms. */
typedef struct tbrdma_vwc {
    uint64_t wr_id;
    int status; /* 0 = success, else the verbs status (tbrdma_verbs_wc_status_str) */
    int is_recv;
    uint32_t byte_len;
    uint32_t qp_num;
} tbrdma_vwc_t;

/* The other end of a queue pair, as RTR needs it. */
typedef struct tbrdma_vpeer {
    uint32_t qpn;
    uint32_t psn;    /* the peer's send PSN: our receive PSN */
    uint8_t gid[16]; /* the peer port's IPv4-mapped GID */
    int mtu;         /* ibv_mtu value (1 = 256 ... 5 = 4096) */
} tbrdma_vpeer_t;

/*
 * Opens device name (port port_num) for the data path: context, protection domain and one
 * completion queue of cqe entries shared by all its queue pairs. Returns 0 or a negative errno,
 * with err naming the device and the call that failed (ENXIO from the protection domain: the
 * port is DOWN).
 */
int tbrdma_verbs_dev_open(const char *name, int port_num, int cqe, tbrdma_vdev_t **dev_p, char *err,
                          size_t errlen);

/* Destroys the completion queue and protection domain and closes the device. NULL is a no-op. */
void tbrdma_verbs_dev_close(tbrdma_vdev_t *dev);

/* Registers [addr, addr+len) for local access (receives write it). 0 or a negative errno. */
int tbrdma_verbs_mr_reg(tbrdma_vdev_t *dev, void *addr, size_t len, tbrdma_vmr_t *mr, char *err,
                        size_t errlen);

/* Deregisters a region registered by tbrdma_verbs_mr_reg. A zeroed region is a no-op. */
void tbrdma_verbs_mr_dereg(tbrdma_vmr_t *mr);

/*
 * Creates a UC queue pair on dev (one SGE, no inline data, every send signaled by tbrdma) and
 * moves it to INIT with access flags 0 (what Macs accept on send/receive-only queue pairs).
 * Returns 0 or a negative errno (-EBUSY: the device's queue pair budget is used up).
 */
int tbrdma_verbs_qp_create(tbrdma_vdev_t *dev, uint32_t max_send, uint32_t max_recv,
                           tbrdma_vqp_t **qp_p, uint32_t *qpn_p, char *err, size_t errlen);

/*
 * Connects a queue pair in INIT to peer: RTR (GRH with our IPv4-mapped GID's index as source,
 * hop limit 1) then RTS with send PSN psn. Returns 0 or a negative errno with err naming the
 * step (EINVAL at RTR is the field's "Changing queue pair to RTR failed with errno 22").
 */
int tbrdma_verbs_qp_connect(tbrdma_vqp_t *qp, int sgid_index, uint32_t psn,
                            const tbrdma_vpeer_t *peer, char *err, size_t errlen);

/*
 * Names what a queue pair carries, right after it is created: conn, the connection id peers
 * stamp on frames to it, and its channel. The direct backend needs neither and changes nothing;
 * in agent mode (base/btl_tbrdma_agentlink.h) the virtual queue pair is routed by them, and
 * *qpn_p and *psn_p become the agent's queue pair of that channel and its send PSN (what peers
 * connect to). 0 or a negative errno.
 */
int tbrdma_verbs_qp_route(tbrdma_vqp_t *qp, uint32_t conn, uint8_t chan, uint32_t *qpn_p,
                          uint32_t *psn_p);

/* A connection id (never 0) from 32 random bits: in agent mode it carries the local rank the
 * agent routes by (core/tbrdma_route.h). */
uint32_t tbrdma_verbs_conn_id(uint32_t rnd);

/* Destroys a queue pair. NULL is a no-op. */
void tbrdma_verbs_qp_destroy(tbrdma_vqp_t *qp);

/* How many queue pairs this process holds on dev now (0 for NULL). */
int tbrdma_verbs_dev_qps(const tbrdma_vdev_t *dev);

/* Posts one signaled SEND of len bytes at addr (lkey). Returns 0 or the errno verbs returned. */
int tbrdma_verbs_post_send(tbrdma_vqp_t *qp, uint64_t wr_id, const void *addr, uint32_t len,
                           uint32_t lkey);

/* Posts one receive of len bytes at addr (lkey). Returns 0 or the errno verbs returned. */
int tbrdma_verbs_post_recv(tbrdma_vqp_t *qp, uint64_t wr_id, void *addr, uint32_t len,
                           uint32_t lkey);

/* Polls up to max completions of dev. Returns how many, or a negative errno (a dead CQ). */
int tbrdma_verbs_poll(tbrdma_vdev_t *dev, tbrdma_vwc_t *wc, int max);

/* 1 when dev's port is ACTIVE now, 0 when not (slow path: queries the device). */
int tbrdma_verbs_port_active(tbrdma_vdev_t *dev);

/* Why dev's completions stopped, when the backend knows more than the errno poll returned (agent
 * mode: the agent's state), else "". */
const char *tbrdma_verbs_dev_error(const tbrdma_vdev_t *dev);

/* 1 when a completion status says the queue pair is in the error state (work flushed). */
int tbrdma_verbs_wc_flushed(int status);

/* Name of a completion status ("local length error", ...). */
const char *tbrdma_verbs_wc_status_str(int status);

#endif /* BTL_TBRDMA_VERBS_H */
