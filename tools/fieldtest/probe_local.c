/*
 * Single-host probes: what one Mac shows without a peer (device and port attributes, the GID
 * table, which queue pairs and attributes are refused and with which errno, the QP, MR and
 * work-request caps). Each creates its objects through probe_res.c; main releases them after
 * every probe. Every count is bounded (PROBE_COUNT_MAX) so a device without a cap ends quickly.
 */
#include "probe.h"

#include "core/tbrdma_gid.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROBE_COUNT_MAX 64   /* QPs tried before concluding "no cap up to 64" */
#define PROBE_MR_MAX    256  /* MRs tried */
#define PROBE_WR_MAX    4096 /* receives tried (Apple's max_qp_wr is 4095) */
#define PROBE_HOLD_QPS  4    /* QPs the second process holds */

static void probe_device(probe_env_t *env, probe_result_t *r)
{
    struct ibv_device_attr d;
    struct ibv_port_attr p;

    memset(&d, 0, sizeof(d));
    memset(&p, 0, sizeof(p));
    if (0 != tbrdma_verbs_fn.query_device(env->ctx, &d)
        || 0 != tbrdma_verbs_fn.query_port(env->ctx, 1, &p)) {
        result_untested(r, "ibv_query_device or ibv_query_port failed");
        return;
    }
    result_set(r,
               (100 == p.link_layer && IBV_MTU_1024 == p.active_mtu && IBV_MTU_4096 == p.max_mtu
                && PROBE_MSG_MAX == p.max_msg_sz && 16 == p.gid_tbl_len && 10 == d.max_qp
                && 100 == d.max_mr && 4095 == d.max_qp_wr && 1 == d.max_sge && 1 == d.phys_port_cnt)
                   ? VERDICT_SAME
                   : VERDICT_DIFFERS,
               "ports %d, link layer %d, active MTU %d, max MTU %d, max_msg_sz %u, "
               "gid_tbl_len %d, max_qp %d, max_mr %d, max_qp_wr %d, max_sge %d",
               d.phys_port_cnt, p.link_layer, 128 << p.active_mtu, 128 << p.max_mtu, p.max_msg_sz,
               p.gid_tbl_len, d.max_qp, d.max_mr, d.max_qp_wr, d.max_sge);
}

static void probe_gid_table(probe_env_t *env, probe_result_t *r)
{
    const tbrdma_port_info_t *p = &env->port;
    char text[PROBE_TEXT] = "", gid[TBRDMA_GID_STR_MAX];
    int fe80[TBRDMA_GID_TBL_MAX], nfe80 = 0, v4 = -1, other = 0;
    size_t off = 0;

    for (int i = 0; i < p->gid_count; i++) {
        const uint8_t *g = p->gids[i].raw;

        if (tbrdma_gid_is_zero(&p->gids[i])) {
            continue;
        }
        if (0xfe == g[0] && 0x80 == g[1]) {
            fe80[nfe80++] = i;
        } else if (v4 < 0 && tbrdma_gid_is_ipv4_mapped(&p->gids[i])) {
            v4 = i;
        } else {
            other++;
        }
        if (0 != tbrdma_gid_to_string(&p->gids[i], gid, sizeof(gid))) {
            snprintf(gid, sizeof(gid), "?");
        }
        off += (size_t) snprintf(text + off, off < sizeof(text) ? sizeof(text) - off : 0,
                                 "%s[%d] %s", 0 == off ? "" : ", ", i, gid);
    }
    result_set(r,
               (1 == v4 && 2 == nfe80 && 0 == fe80[0] && 2 == fe80[1] && 0 == other)
                   ? VERDICT_SAME
                   : VERDICT_DIFFERS,
               "%s (IPv4-mapped at %d, %d fe80 entr%s)", off > 0 ? text : "empty table", v4, nfe80,
               1 == nfe80 ? "y" : "ies");
}

/* Creates one QP of type with inline bytes on a fresh PD/CQ: 0 or the errno. */
static int probe_try_qp(probe_env_t *env, enum ibv_qp_type type, uint32_t inline_data)
{
    struct ibv_pd *pd = res_pd(env);
    struct ibv_cq *cq = (NULL != pd) ? res_cq(env, 16) : NULL;
    struct ibv_qp_init_attr ia;

    if (NULL == cq) {
        return (0 != errno) ? errno : ENOMEM;
    }
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = cq;
    ia.recv_cq = cq;
    ia.qp_type = type;
    ia.cap.max_send_wr = 8;
    ia.cap.max_recv_wr = 8;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    ia.cap.max_inline_data = inline_data;
    if (NULL == res_qp(pd, &ia)) {
        return (0 != errno) ? errno : -1;
    }
    return 0;
}

static void probe_refusal(probe_result_t *r, int err, int expect)
{
    char e[PROBE_ERRNO_STR];

    if (0 == err) {
        result_set(r, VERDICT_DIFFERS, "created");
    } else if (err < 0) {
        result_set(r, VERDICT_DIFFERS, "refused without an errno");
    } else {
        result_set(r, expect == err ? VERDICT_SAME : VERDICT_DIFFERS, "refused: %s",
                   pv_errstr(err, e, sizeof(e)));
    }
}

static void probe_rc(probe_env_t *env, probe_result_t *r)
{
    probe_refusal(r, probe_try_qp(env, IBV_QPT_RC, 0), EOPNOTSUPP);
}

static void probe_ud(probe_env_t *env, probe_result_t *r)
{
    probe_refusal(r, probe_try_qp(env, IBV_QPT_UD, 0), EOPNOTSUPP);
}

static void probe_inline(probe_env_t *env, probe_result_t *r)
{
    probe_refusal(r, probe_try_qp(env, IBV_QPT_UC, 64), EINVAL);
}

/* Creates UC QPs until one fails or max exist: how many, and the errno of the failure. */
static int probe_count_qps(probe_env_t *env, int max, int *err_p)
{
    struct ibv_pd *pd = res_pd(env);
    struct ibv_cq *cq = (NULL != pd) ? res_cq(env, 64) : NULL;
    int n = 0;

    *err_p = (NULL == cq) ? errno : 0;
    while (NULL != cq && n < max && !guard_stopped()) {
        if (NULL == pv_uc_qp(env, pd, cq, 8)) {
            *err_p = (0 != errno) ? errno : -1;
            break;
        }
        n++;
    }
    return n;
}

static void probe_count_result(probe_result_t *r, const char *what, int n, int err, int max,
                               int expect_n, int expect_err)
{
    char e[PROBE_ERRNO_STR];

    if (0 == err) {
        result_set(r, VERDICT_DIFFERS, "%d %s, no refusal up to %d", n, what, max);
        return;
    }
    result_set(r, (expect_n == n && expect_err == err) ? VERDICT_SAME : VERDICT_DIFFERS,
               "%d %s, the next fails with %s", n, what, pv_errstr(err, e, sizeof(e)));
}

static void probe_qp_cap(probe_env_t *env, probe_result_t *r)
{
    int err = 0, n = probe_count_qps(env, PROBE_COUNT_MAX, &err);

    probe_count_result(r, "UC QPs created", n, err, PROBE_COUNT_MAX, 10, EBUSY);
}

/* The second process: opens the device, holds PROBE_HOLD_QPS QPs, says so, waits for EOF. */
static void probe_holder(probe_env_t *env, int wfd, int rfd)
{
    char c = 0;
    int err = 0, n;

    signal(SIGINT, SIG_IGN); /* it ends when the parent's pipe closes, whatever the parent did */
    env->ctx = NULL;
    if (0 == pv_open(env, (char[128]){0}, 128)) {
        n = probe_count_qps(env, PROBE_HOLD_QPS, &err);
        c = (char) n;
    }
    if (1 == write(wfd, &c, 1)) {
        while (read(rfd, &c, 1) > 0) {
        }
    }
    pv_close(env);
    _exit(0);
}

/* The holder's word (how many QPs it holds) within the probe's bound; 0 when none came. */
static char probe_holder_word(probe_env_t *env, int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char held = 0;

    for (double end = guard_now() + env->bound_s; !guard_stopped() && guard_now() < end;) {
        if (1 == poll(&p, 1, 100)) {
            return (1 == read(fd, &held, 1)) ? held : 0;
        }
    }
    return 0;
}

/* Waits up to 5 s for the holder to exit (it does once its pipe closes), then ends it. */
static void probe_holder_reap(pid_t pid)
{
    int st;

    for (int i = 0; i < 500; i++) {
        if (pid == waitpid(pid, &st, WNOHANG)) {
            return;
        }
        usleep(10000);
    }
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
}

static void probe_qp_cap_2proc(probe_env_t *env, probe_result_t *r)
{
    int up[2], down[2], err = 0, n = 0;
    char held = 0;
    pid_t pid;

    if (0 != pipe(up) || 0 != pipe(down)) {
        result_untested(r, "pipe failed");
        return;
    }
    pid = fork();
    if (0 == pid) {
        close(up[0]);
        close(down[1]);
        probe_holder(env, up[1], down[0]);
    }
    close(up[1]);
    close(down[0]);
    if (pid > 0 && PROBE_HOLD_QPS == (held = probe_holder_word(env, up[0]))) {
        n = probe_count_qps(env, PROBE_COUNT_MAX, &err);
    }
    res_release_all();
    close(down[1]); /* the holder releases its QPs and exits */
    close(up[0]);
    if (pid > 0) {
        probe_holder_reap(pid);
    }
    if (PROBE_HOLD_QPS != held) {
        result_untested(r, "the second process could not create %d QPs (it made %d)",
                        PROBE_HOLD_QPS, held);
        return;
    }
    probe_count_result(r, "more UC QPs created while another process holds 4", n, err,
                       PROBE_COUNT_MAX, 6, EBUSY);
}

static void probe_mr_cap(probe_env_t *env, probe_result_t *r)
{
    struct ibv_pd *pd = res_pd(env);
    int n = 0, err = (NULL == pd) ? errno : 0;
    void *buf;

    while (NULL != pd && n < PROBE_MR_MAX && !guard_stopped()) {
        if (NULL == res_mr(pd, PROBE_FRAME, &buf)) {
            err = (0 != errno) ? errno : -1;
            break;
        }
        n++;
    }
    probe_count_result(r, "MRs of 4 KiB registered", n, err, PROBE_MR_MAX, 100, ENOMEM);
}

static void probe_wr_depth(probe_env_t *env, probe_result_t *r)
{
    struct ibv_pd *pd = res_pd(env);
    struct ibv_cq *cq = (NULL != pd) ? res_cq(env, 64) : NULL;
    struct ibv_qp *qp = (NULL != cq) ? pv_uc_qp(env, pd, cq, 4095) : NULL;
    struct ibv_mr *mr;
    void *buf;
    int n = 0, err = 0;

    if (NULL == qp || 0 != pv_init(qp, 0) || NULL == (mr = res_mr(pd, PROBE_FRAME, &buf))) {
        result_untested(r, "a UC QP with max_recv_wr 4095 could not be set up (errno %d)", errno);
        return;
    }
    while (n < PROBE_WR_MAX && !guard_stopped()) {
        err = pv_recv(qp, mr, buf, PROBE_FRAME, (uint64_t) n);
        if (0 != err) {
            break;
        }
        n++;
    }
    probe_count_result(r, "receives posted (max_recv_wr 4095)", n, err, PROBE_WR_MAX, 63, ENOMEM);
}

static void probe_access(probe_env_t *env, probe_result_t *r)
{
    struct ibv_pd *pd = res_pd(env);
    struct ibv_cq *cq = (NULL != pd) ? res_cq(env, 16) : NULL;
    struct ibv_qp *a = (NULL != cq) ? pv_uc_qp(env, pd, cq, 8) : NULL;
    struct ibv_qp *b = (NULL != a) ? pv_uc_qp(env, pd, cq, 8) : NULL;
    char e0[PROBE_ERRNO_STR] = "accepted", e1[PROBE_ERRNO_STR] = "accepted";
    int rc0, rc1;

    if (NULL == b) {
        result_untested(r, "two UC QPs could not be created (errno %d)", errno);
        return;
    }
    rc0 = pv_init(a, 0);
    rc1 = pv_init(b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (0 != rc0) {
        pv_errstr(rc0, e0, sizeof(e0));
    }
    if (0 != rc1) {
        pv_errstr(rc1, e1, sizeof(e1));
    }
    result_set(r, (0 == rc0 && 0 == rc1) ? VERDICT_SAME : VERDICT_DIFFERS,
               "INIT with access flags 0: %s; with LOCAL_WRITE|REMOTE_WRITE: %s", e0, e1);
}

#define HOST_PROBE(n, a, r, f)                                        \
    {                                                                 \
        .name = n, .scope = "host", .assumes = a, .rule = r, .run = f \
    }

const probe_def_t probe_local_defs[] = {
    HOST_PROBE("device",
               "1 port, link layer 100, active MTU 1024, max MTU 4096, max_msg_sz 16773120, "
               "gid_tbl_len 16, max_qp 10, max_mr 100, max_qp_wr 4095, max_sge 1",
               "link layer 100; MTU 1024/4096; 16 GIDs; max message 16,773,120", probe_device),
    HOST_PROBE("gid-table",
               "[0] fe80 (EUI-64), [1] ::ffff:IPv4, [2] the interface's own fe80; nothing else",
               "GID[1] = `::ffff:IPv4` while the interface has one", probe_gid_table),
    HOST_PROBE("rc-qp", "an RC QP is refused with EOPNOTSUPP", "RC and UD QPs refused", probe_rc),
    HOST_PROBE("ud-qp", "a UD QP is refused with EOPNOTSUPP", "RC and UD QPs refused", probe_ud),
    HOST_PROBE("inline", "a UC QP with max_inline_data 64 is refused with EINVAL",
               "`max_inline_data > 0` refused at create", probe_inline),
    HOST_PROBE("qp-cap", "10 UC QPs per device, the 11th fails with EBUSY",
               "10 QPs per device, counted across every process of the host", probe_qp_cap),
    HOST_PROBE("qp-cap-2proc",
               "the 10 QPs are shared by every process: with 4 held elsewhere, 6 "
               "more, then EBUSY",
               "10 QPs per device, counted across every process of the host", probe_qp_cap_2proc),
    HOST_PROBE("mr-cap", "100 MRs per device, the 101st fails with ENOMEM",
               "100 MRs per device (host-wide)", probe_mr_cap),
    HOST_PROBE(
        "wr-depth",
        "a QP created with max_recv_wr 4095 takes 63 outstanding receives, the 64th fails with "
        "ENOMEM",
        "caps up to 4095 accepted", probe_wr_depth),
    HOST_PROBE("access-flags", "INIT accepts access flags 0 and LOCAL_WRITE|REMOTE_WRITE alike",
               "INIT needs exactly STATE|PKEY_INDEX|PORT|ACCESS_FLAGS", probe_access),
};
const int probe_local_count = (int) (sizeof(probe_local_defs) / sizeof(probe_local_defs[0]));
