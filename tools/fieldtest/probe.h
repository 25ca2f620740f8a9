/*
 * tbrdma-fieldtest: measures on real hardware each rule the fabric simulator (test/sim, libtbsim)
 * assumes about Apple's RDMA over Thunderbolt, and reports what differs. Shared declarations of
 * the probe's parts:
 *   probe_res.c     every verbs object a probe creates, released in one place (also on Ctrl-C)
 *   probe_verbs.c   plain verbs through the plugin's loader (btl_tbrdma_verbs_load.h)
 *   probe_chan.c    the TCP side channel between --server and --client
 *   probe_guard.c   signals, time bounds, the running-MPI-job check, taking a link down
 *   probe_local.c   single-host probes;  probe_pair.c / probe_pair2.c  two-host probes
 *   probe_report.c  the table, --json and --markdown
 */
#ifndef TBRDMA_FIELDTEST_H
#define TBRDMA_FIELDTEST_H

#include "base/btl_tbrdma_verbs.h"
#include "base/btl_tbrdma_verbs_load.h"
#include "core/tbrdma_types.h"

#include <stddef.h>
#include <stdint.h>

#define PROBE_VERSION   1
#define PROBE_TCP_PORT  18516
#define PROBE_FRAME     4096
#define PROBE_MSG_MAX   16773120 /* Apple: 4095 frames of 4 KiB */
#define PROBE_PSN       7
#define PROBE_TEXT      640
#define PROBE_MAX       32
#define PROBE_NAME_LEN  24
#define PROBE_ERRNO_STR 64

typedef enum { VERDICT_SAME, VERDICT_DIFFERS, VERDICT_UNTESTED } probe_verdict_t;

/* One probe's line of the report. */
typedef struct probe_result {
    char name[PROBE_NAME_LEN];
    const char *scope;   /* "host" or "pair" */
    const char *assumes; /* what the simulator assumes */
    const char *rule;    /* the row of test/sim/README.md it comes from (a quote of it) */
    char observed[PROBE_TEXT];
    probe_verdict_t verdict;
    char why[PROBE_TEXT]; /* could not test: why */
    double seconds;
} probe_result_t;

/* What a run needs: options, the chosen port, the side channel. */
typedef struct probe_env {
    const char *lib;
    const char *device;      /* --device, NULL: chosen */
    const char *peer_device; /* --peer-device, NULL: chosen */
    const char *peer_host;   /* --client HOST */
    const char *only;        /* --only NAME[,NAME] */
    int server, tcp_port, force, link_down_ok;
    double bound_s; /* per-probe bound, seconds */
    char host[TBRDMA_HOST_MAX];
    char peer_name[TBRDMA_HOST_MAX];
    tbrdma_port_info_t port;      /* the local port used */
    tbrdma_port_info_t peer_port; /* the peer's port (pair mode) */
    struct ibv_context *ctx;
    int fd; /* side channel, -1 when none */
} probe_env_t;

/* ---- probe_guard.c ---- */
void guard_install(double total_s);
int guard_stopped(void);        /* 1 after SIGINT/SIGTERM/SIGHUP or the total bound */
const char *guard_reason(void); /* "interrupted (SIGINT)", "total time bound reached" */
double guard_now(void);         /* monotonic seconds */
/* Sleeps up to s seconds; returns early (-1) when stopped. */
int guard_sleep(double s);
/* A running MPI job on this host (same network namespace on Linux): 1 and who, else 0. */
int guard_mpi_running(char *who, size_t len);
/* Sets ifname down (up = 0) or up. 0 or -1 with err. Remembers a downed link for guard_restore. */
int guard_link_set(const char *ifname, int up, char *err, size_t errlen);
/* Brings back a link this process took down, if any. */
void guard_restore(void);

/* ---- probe_res.c ---- */
struct ibv_pd *res_pd(probe_env_t *env);
struct ibv_cq *res_cq(probe_env_t *env, int cqe);
struct ibv_qp *res_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia);
struct ibv_mr *res_mr(struct ibv_pd *pd, size_t len, void **buf_p);
void res_drop_qp(struct ibv_qp *qp); /* destroys one QP now */
void res_release_all(void);          /* every QP, MR (and buffer), CQ, PD, in that order */
int res_held(void);                  /* objects currently held */

/* ---- probe_verbs.c ---- */
int pv_open(probe_env_t *env, char *err, size_t errlen);
int pv_choose_port(probe_env_t *env, const tbrdma_port_info_t *peers, int npeers, char *err,
                   size_t errlen);
void pv_close(probe_env_t *env);
/* A UC QP (one SGE, no inline) on a new PD/CQ pair; NULL with errno. */
struct ibv_qp *pv_uc_qp(probe_env_t *env, struct ibv_pd *pd, struct ibv_cq *cq, int depth);
int pv_init(struct ibv_qp *qp, int access);
int pv_connect(probe_env_t *env, struct ibv_qp *qp, uint32_t qpn, const uint8_t gid[16], int mtu,
               int hop_limit);
int pv_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id,
            int flags);
int pv_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id);
/* Polls one completion until deadline: 1, 0 at the deadline, -1 poll error, -2 stopped. */
int pv_wait(struct ibv_cq *cq, struct ibv_wc *wc, double deadline);
/* "errno 95 (Operation not supported)" */
const char *pv_errstr(int err, char *buf, size_t len);
const char *pv_wc_str(int status);

/* ---- probe_chan.c: fixed-size messages, integers in network order ---- */
enum { MSG_HELLO = 1, MSG_PORTS, MSG_CHOICE, MSG_PROBE, MSG_QP, MSG_SYNC, MSG_RESULT, MSG_BYE };
typedef struct probe_msg {
    uint32_t type;
    uint32_t epoch;     /* stamped by chan_send: messages of an older epoch are dropped */
    int32_t a, b, c, d; /* meaning per message */
    uint32_t qpn;
    uint8_t gid[16];
    char text[256];
} probe_msg_t;
int chan_listen(int port, double deadline);
int chan_connect(const char *host, int port, double deadline);
int chan_send(int fd, probe_msg_t *m);
/* Receives a message of type want (0: any) before deadline. 0, or -1 (timeout, EOF, stop). */
int chan_recv(int fd, probe_msg_t *m, uint32_t want, double deadline);
/* Both sides call it: sends a SYNC and waits for the other's. */
int chan_sync(int fd, double deadline);
/* The epoch: both sides move to a new one at each step of a probe (in lockstep), so that a
 * message left over from a step the other side gave up on is dropped, not misread. */
void chan_set_epoch(uint32_t epoch);
uint32_t chan_epoch(void);

/* ---- the probes ---- */

/* Both ends of a two-host probe: one UC QP each, connected, with one MR of len bytes. */
typedef struct probe_pair {
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t *buf;
    size_t len;
    int err;      /* 0, or the errno of the first local step that failed */
    int peer_err; /* the same at the other end */
    char step[32];
    double deadline; /* of this probe */
    const struct probe_def *def;
} probe_pair_t;

typedef struct probe_def {
    const char *name;
    const char *scope;
    const char *assumes;
    const char *rule;
    void (*run)(probe_env_t *env, probe_result_t *r); /* host probes */
    /* pair probes: why it cannot run here (NULL: it can), the client's and the server's half */
    const char *(*precheck)(probe_env_t *env);
    void (*client)(probe_env_t *env, probe_pair_t *p, probe_result_t *r);
    void (*server)(probe_env_t *env, probe_pair_t *p);
    int mtu, hop_limit, depth; /* the pair's queue pairs: ibv_mtu, GRH hop limit, WR caps */
    size_t len;                /* bytes of the MR on each side */
} probe_def_t;

extern const probe_def_t probe_local_defs[];
extern const int probe_local_count;
extern const probe_def_t probe_pair_defs[];
extern const int probe_pair_count;
extern const probe_def_t probe_pair2_defs[];
extern const int probe_pair2_count;

/* ---- probe_pair.c: the framework of two-host probes ---- */
void pair_client(probe_env_t *env, int index, const probe_def_t *def, probe_result_t *r);
/* Serves the client's probes until it says goodbye. 0, or -1 when the channel broke. */
int pair_serve(probe_env_t *env);
/* Both sides: releases the pair and builds and connects a fresh one. 0, or -1 (channel). */
int pair_again(probe_env_t *env, probe_pair_t *p);
/* The pair probe with this global index (probe_pair_defs then probe_pair2_defs). */
const probe_def_t *pair_def(int index);
int pair_count(void);
/* 1 when both ends connected; else r (if not NULL) is marked "could not test" with why. */
int pair_ok(const probe_pair_t *p, probe_result_t *r);
/* pair_ok, then a sync with the other side (its half is ready): 1, or 0 with r marked. */
int pair_go(probe_env_t *env, probe_pair_t *p, probe_result_t *r);
/* When the connection itself is what a probe varies: "STEP with WHAT fails here: errno N". */
void pair_refused(const probe_pair_t *p, probe_result_t *r, const char *what);
/* A result message to the other side / from it (a..d, text). */
int pair_tell(probe_env_t *env, int a, int b, int c, int d, const char *text);
int pair_hear(probe_env_t *env, probe_pair_t *p, probe_msg_t *m);
/* Fills / checks len bytes with the pattern of seed. */
void pair_fill(uint8_t *buf, size_t len, uint32_t seed);
int pair_check(const uint8_t *buf, size_t len, uint32_t seed);

/* Result helpers (probe_report.c). */
void result_set(probe_result_t *r, probe_verdict_t v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void result_untested(probe_result_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *verdict_name(probe_verdict_t v);

/* ---- probe_report.c ---- */
typedef enum { REPORT_TABLE, REPORT_JSON, REPORT_MARKDOWN } report_format_t;
void report_print(report_format_t fmt, const probe_env_t *env, const probe_result_t *res, int n,
                  const char *stopped);

#endif /* TBRDMA_FIELDTEST_H */
