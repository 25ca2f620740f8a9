/*
 * Helpers shared by the raw-verbs examples (uc_pingpong, tbsim_limits): device and GID
 * choice, UC QP setup and connection, the TCP side channel, completion waits. Plain verbs
 * only, so the same binaries run over libtbsim (LD_PRELOAD) and over real rxe. Every helper
 * prints the failing verb and errno once ("modify_qp RTR failed: Invalid argument (errno 22)")
 * and returns -1.
 */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#define EX_PORT     1
#define EX_TCP_PORT 18515
#define EX_PSN      7 /* JACCL's fixed PSN */
#define EX_DEPTH    32
#define EX_FRAME    4096
/* The hang guard only (see ex_timeout_s): a UC peer that is gone never completes anything. */
#define EX_TIMEOUT_S 20.0

/* What each side sends the other over TCP. */
struct ex_dest {
    uint32_t qpn;
    uint32_t psn;
    uint8_t gid[16];
};

struct ex_conn {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    int gid_index;
    union ibv_gid gid;
};

/* Opens the named device (NULL: the first one). */
int ex_open_device(const char *name, struct ibv_context **ctx_p);

/* "auto": the first IPv4-mapped GID of port 1; else the number. Fills index and gid. */
int ex_find_gid(struct ibv_context *ctx, const char *arg, int *index_p, union ibv_gid *gid_p);

/* PD, CQ and a UC QP (depth EX_DEPTH, one SGE, no inline) moved to INIT. */
int ex_conn_setup(struct ex_conn *c, struct ibv_context *ctx);

/* The same with max_send_wr = max_recv_wr = depth (and a CQ of 2 * depth + 2). */
int ex_conn_setup_depth(struct ex_conn *c, struct ibv_context *ctx, uint32_t depth);

/* RTR towards rem (sgid_index = c->gid_index, MTU 1024) then RTS. */
int ex_conn_connect(struct ex_conn *c, const struct ex_dest *rem);

void ex_conn_teardown(struct ex_conn *c);

/* TCP side channel: the server accepts one client on port; the client connects. */
int ex_tcp_server(int port);
int ex_tcp_client(const char *host, int port);

/* Writes len bytes then reads len bytes. Returns 0 or -1. */
int ex_xchg(int fd, const void *out, void *in, size_t len);

/* Busy-polls cq for one completion. Returns 1, 0 on timeout, -1 on a poll error. */
int ex_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double timeout_s);

/*
 * The same, and 0 as soon as the peer closed the side channel fd (it failed or exited: a UC
 * peer that is gone never completes anything). Looked at once a second without a completion,
 * so a run that keeps completing makes no system call for it. fd < 0: never looked at.
 */
int ex_wait_wc_peer(struct ibv_cq *cq, struct ibv_wc *wc, double timeout_s, int fd);

/* Monotonic seconds. */
double ex_now(void);

/* The hang guard of a completion wait: EX_TIMEOUT_S, or env EX_TIMEOUT_S (seconds, > 0). */
double ex_timeout_s(void);

/* Byte i of a test pattern without a short period (a lost, stale or shifted frame shows). */
uint8_t ex_pattern(size_t i);

/* buf[k] = ex_pattern(k + offset) for k < len. */
void ex_pattern_fill(uint8_t *buf, size_t len, size_t offset);

/* One signaled SEND / one RECV of buf (inside mr, one SGE). Return the verb's rc. */
int ex_post_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id,
                 struct ibv_send_wr **bad_p);
/* The same SEND with the given send_flags (0 = unsignaled). */
int ex_post_send_flags(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len,
                       uint64_t wr_id, int flags, struct ibv_send_wr **bad_p);
int ex_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id);

#endif /* EX_COMMON_H */
