/*
 * tbsim_limits: negative tests of Apple's Thunderbolt RDMA limits over plain verbs, on one
 * host with one cable. The client checks, printing PASS/FAIL per check:
 *   RC and UD QPs fail with EOPNOTSUPP; inline data and 2 SGEs fail create_qp with EINVAL;
 *   the 11th QP of a device fails with EBUSY; the 101st MR fails with ENOMEM; the 64th
 *   posted receive fails with ENOMEM (caps of 128 accepted); RTS before RTR, RTR with a
 *   non-IPv4-mapped sgid_index, with a dgid that is not the peer's, or with MTU > 4096 fail
 *   with EINVAL; and, with the peer (the same program without server_host, on the other end
 *   of the cable): a non-SEND opcode, 2 SGEs and a message over 16,773,120 B fail post_send
 *   with EINVAL and bad_wr set; a 1-frame send into a 2-frame receive completes that receive
 *   with an error and a matching one succeeds; sends wait for the peer's receives (no
 *   completion without a credit) and the 64th outstanding send fails with ENOMEM; unsignaled
 *   sends (sq_sig_all 0) give no completion.
 *
 *   tbsim_limits [-d dev] [-p tcp_port] [-o held] [server_host]
 *   tbsim_limits [-d dev] -k N
 *
 * -o: that many QPs of the device are held by other processes of this host (the limit is
 * per device, not per process). -k: hold N QPs until stdin closes, then exit without
 * destroying them (a crashed job's leak, for the reclaim test).
 * Exit 0 when every check passed, 1 otherwise, 2 on usage.
 */
#include "ex_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QP_LIMIT  10
#define MR_LIMIT  100
#define WR_LIMIT  63
#define MSG_MAX   16773120
#define CAP_ASKED 128
#define IDLE_POLL 100000

enum peer_op { OP_POST = 1, OP_WAIT = 2, OP_QUIT = 3 };

/* Same size as struct peer_reply: ex_xchg writes and reads one size. */
struct peer_cmd {
    uint32_t op;
    uint32_t len;
    uint32_t pad;
};

struct peer_reply {
    int32_t status;
    uint32_t byte_len;
    uint32_t opcode;
};

static int g_failed;
static int g_held; /* QPs of this device held by other processes of this host (-o) */

static void check(int ok, const char *what, const char *detail)
{
    printf("%s: %s%s%s\n", ok ? "PASS" : "FAIL", what, ok ? "" : ": ", ok ? "" : detail);
    g_failed |= !ok;
}

static void check_errno(int got, int want, const char *what)
{
    char detail[128];

    snprintf(detail, sizeof(detail), "got %s (%d), want %s (%d)", got ? strerror(got) : "success",
             got, strerror(want), want);
    check(got == want, what, detail);
}

static struct ibv_qp *qp_make(struct ex_conn *c, enum ibv_qp_type type, uint32_t cap, uint32_t sge,
                              uint32_t inl)
{
    struct ibv_qp_init_attr init;

    memset(&init, 0, sizeof(init));
    init.send_cq = c->cq;
    init.recv_cq = c->cq;
    init.qp_type = type;
    init.cap.max_send_wr = cap;
    init.cap.max_recv_wr = cap;
    init.cap.max_send_sge = sge;
    init.cap.max_recv_sge = sge;
    init.cap.max_inline_data = inl;
    errno = 0;
    return ibv_create_qp(c->pd, &init);
}

static int qp_fail_errno(struct ex_conn *c, enum ibv_qp_type type, uint32_t sge, uint32_t inl)
{
    struct ibv_qp *qp = qp_make(c, type, 8, sge, inl);

    if (NULL != qp) {
        ibv_destroy_qp(qp);
        return 0;
    }
    return errno;
}

static void check_qp_types(struct ex_conn *c)
{
    check_errno(qp_fail_errno(c, IBV_QPT_RC, 1, 0), EOPNOTSUPP, "RC QP fails with EOPNOTSUPP");
    check_errno(qp_fail_errno(c, IBV_QPT_UD, 1, 0), EOPNOTSUPP, "UD QP fails with EOPNOTSUPP");
    check_errno(qp_fail_errno(c, IBV_QPT_UC, 1, 64), EINVAL, "inline data fails with EINVAL");
    check_errno(qp_fail_errno(c, IBV_QPT_UC, 2, 0), EINVAL, "2 SGEs per WR fail with EINVAL");
}

static void check_qp_limit(struct ex_conn *c)
{
    struct ibv_qp *qps[QP_LIMIT + 1];
    int made = 1; /* c->qp is the first */
    int err;
    char detail[64];

    qps[0] = NULL;
    while (made < QP_LIMIT - g_held && NULL != (qps[made] = qp_make(c, IBV_QPT_UC, 8, 1, 0))) {
        made++;
    }
    snprintf(detail, sizeof(detail), "only %d created (%s)", made, strerror(errno));
    check(QP_LIMIT - g_held == made,
          g_held ? "the QPs other processes of this host hold count against the 10"
                 : "10 UC QPs per device can be created",
          detail);
    qps[made] = qp_make(c, IBV_QPT_UC, 8, 1, 0);
    err = (NULL == qps[made]) ? errno : 0;
    if (NULL != qps[made]) {
        made++;
    }
    check_errno(err, EBUSY, "the 11th QP fails with EBUSY");
    while (made > 1) {
        ibv_destroy_qp(qps[--made]);
    }
}

static void check_mr_limit(struct ex_conn *c)
{
    static uint8_t buf[EX_FRAME] __attribute__((aligned(EX_FRAME)));
    struct ibv_mr *mrs[MR_LIMIT + 1];
    int made = 0;
    int err;
    char detail[64];

    while (made < MR_LIMIT
           && NULL != (mrs[made] = ibv_reg_mr(c->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE))) {
        made++;
    }
    snprintf(detail, sizeof(detail), "only %d registered (%s)", made, strerror(errno));
    check(MR_LIMIT == made, "100 MRs per device can be registered", detail);
    errno = 0;
    mrs[made] = ibv_reg_mr(c->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
    err = (NULL == mrs[made]) ? errno : 0;
    if (NULL != mrs[made]) {
        made++;
    }
    check_errno(err, ENOMEM, "the 101st MR fails with ENOMEM");
    while (made > 0) {
        ibv_dereg_mr(mrs[--made]);
    }
}

static int qp_init(struct ibv_qp *qp)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = EX_PORT;
    return ibv_modify_qp(qp, &attr,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static void check_recv_depth(struct ex_conn *c, struct ibv_mr *mr)
{
    struct ibv_qp *qp = qp_make(c, IBV_QPT_UC, CAP_ASKED, 1, 0);
    int posted = 0;
    int rc = 0;
    char detail[64];

    check(NULL != qp, "create_qp accepts caps of 128 WRs", strerror(errno));
    if (NULL == qp || 0 != qp_init(qp)) {
        return;
    }
    while (posted < WR_LIMIT + 1 && 0 == (rc = ex_post_recv(qp, mr, mr->addr, EX_FRAME, 0))) {
        posted++;
    }
    snprintf(detail, sizeof(detail), "%d receives posted before rc %d", posted, rc);
    check(WR_LIMIT == posted, "63 receives can be outstanding", detail);
    check_errno(rc, ENOMEM, "the 64th posted receive fails with ENOMEM");
    ibv_destroy_qp(qp);
}

static int rtr(struct ibv_qp *qp, int sgid_index, const uint8_t *dgid, enum ibv_mtu mtu)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = mtu;
    attr.dest_qp_num = 0x123;
    attr.rq_psn = EX_PSN;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = EX_PORT;
    attr.ah_attr.grh.hop_limit = 1;
    attr.ah_attr.grh.sgid_index = (uint8_t) sgid_index;
    memcpy(attr.ah_attr.grh.dgid.raw, dgid, 16);
    return ibv_modify_qp(
        qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
}

static void check_rtr(struct ex_conn *c, const uint8_t *peer_gid)
{
    struct ibv_qp *qp = qp_make(c, IBV_QPT_UC, 8, 1, 0);
    struct ibv_qp_attr attr;

    if (NULL == qp || 0 != qp_init(qp)) {
        check(0, "QP for the RTR checks", strerror(errno));
        return;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    check_errno(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL,
                "RTS before RTR fails with EINVAL");
    check_errno(rtr(qp, 0, peer_gid, IBV_MTU_1024), EINVAL,
                "RTR with sgid_index 0 (fe80, not IPv4-mapped) fails with EINVAL");
    check_errno(rtr(qp, c->gid_index, c->gid.raw, IBV_MTU_1024), EINVAL,
                "RTR towards our own GID (not the peer's) fails with EINVAL");
    check_errno(rtr(qp, c->gid_index, peer_gid, (enum ibv_mtu) 6), EINVAL,
                "RTR with an MTU above 4096 fails with EINVAL");
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = IBV_MTU_1024;
    check_errno(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU), EINVAL,
                "RTR without DEST_QPN and RQ_PSN in the mask fails with EINVAL");
    check_errno(rtr(qp, c->gid_index, peer_gid, IBV_MTU_1024), 0,
                "RTR with the IPv4-mapped GIDs of both ends succeeds");
    ibv_destroy_qp(qp);
}

static void check_bad_sends(struct ex_conn *c, struct ibv_mr *mr, struct ibv_mr *big)
{
    struct ibv_sge sge[2] = {{(uintptr_t) mr->addr, 64, mr->lkey},
                             {(uintptr_t) mr->addr + 64, 64, mr->lkey}};
    struct ibv_send_wr wr;
    struct ibv_send_wr *bad = NULL;
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.sg_list = sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    rc = ibv_post_send(c->qp, &wr, &bad);
    check_errno(rc, EINVAL, "RDMA WRITE opcode fails post_send with EINVAL");
    check(bad == &wr, "bad_wr points at the RDMA WRITE", "bad_wr not set");
    wr.opcode = IBV_WR_SEND;
    wr.num_sge = 2;
    bad = NULL;
    rc = ibv_post_send(c->qp, &wr, &bad);
    check_errno(rc, EINVAL, "a send with 2 SGEs fails with EINVAL");
    check(bad == &wr, "bad_wr points at the 2-SGE send", "bad_wr not set");
    rc = ex_post_send(c->qp, big, big->addr, MSG_MAX + 1, 0, &bad);
    check_errno(rc, EINVAL, "a send of 16,773,121 B fails with EINVAL");
}

static int peer_do(int fd, uint32_t op, uint32_t len, struct peer_reply *rep)
{
    struct peer_cmd cmd = {op, len, 0};

    _Static_assert(sizeof(struct peer_cmd) == sizeof(struct peer_reply), "one exchange size");

    return ex_xchg(fd, &cmd, rep, sizeof(cmd));
}

static int send_ok(struct ex_conn *c, struct ibv_mr *mr)
{
    struct ibv_wc wc;

    if (0 != ex_post_send(c->qp, mr, mr->addr, EX_FRAME, 1, NULL)
        || 1 != ex_wait_wc(c->cq, &wc, EX_TIMEOUT_S)) {
        return 0;
    }
    return IBV_WC_SUCCESS == wc.status;
}

static void check_frames(struct ex_conn *c, struct ibv_mr *mr, int fd)
{
    struct peer_reply rep;
    char detail[96];

    /* 1 frame sent into a 2-frame receive: Apple fails the receive */
    if (0 != peer_do(fd, OP_POST, 2 * EX_FRAME, &rep)) {
        check(0, "peer posts a 2-frame receive", "side channel");
        return;
    }
    check(send_ok(c, mr), "the 1-frame send completes with success", "no success completion");
    peer_do(fd, OP_WAIT, 0, &rep);
    snprintf(detail, sizeof(detail), "receive status %s (%d)", ibv_wc_status_str(rep.status),
             rep.status);
    check(IBV_WC_SUCCESS != rep.status && rep.status >= 0,
          "a 1-frame send into a 2-frame receive completes the receive with an error", detail);
    peer_do(fd, OP_POST, EX_FRAME, &rep);
    check(send_ok(c, mr), "the matching 1-frame send completes with success", "no success");
    peer_do(fd, OP_WAIT, 0, &rep);
    snprintf(detail, sizeof(detail), "status %d byte_len %u opcode %u", rep.status, rep.byte_len,
             rep.opcode);
    check(IBV_WC_SUCCESS == rep.status && EX_FRAME == rep.byte_len && IBV_WC_RECV == rep.opcode,
          "a 1-frame send into a 1-frame receive succeeds (IBV_WC_RECV, byte_len 4096)", detail);
}

/* A 64-byte send from the start of mr. */
static int post_small(struct ex_conn *c, struct ibv_mr *mr, uint64_t wr_id, int flags)
{
    return ex_post_send_flags(c->qp, mr, mr->addr, 64, wr_id, flags, NULL);
}

static int count_idle_completions(struct ibv_cq *cq);

/* sq_sig_all = 0: two unsignaled sends and a signaled one give exactly one completion. */
static void check_unsignaled(struct ex_conn *c, struct ibv_mr *mr, int fd)
{
    struct peer_reply rep;
    struct ibv_wc wc;
    int ok = 1;

    for (int i = 0; i < 3; i++) {
        ok &= 0 == peer_do(fd, OP_POST, 64, &rep) && 0 == rep.status;
    }
    ok &= 0 == post_small(c, mr, 11, 0) && 0 == post_small(c, mr, 12, 0)
          && 0 == post_small(c, mr, 13, IBV_SEND_SIGNALED);
    check(ok, "post 2 unsignaled sends and 1 signaled send", "post failed");
    ok = 1 == ex_wait_wc(c->cq, &wc, EX_TIMEOUT_S) && 13 == wc.wr_id;
    check(ok, "only the signaled send completes (wr_id 13)", "wrong or no completion");
    check(ok && IBV_WC_SEND == wc.opcode && c->qp->qp_num == wc.qp_num,
          "its completion says IBV_WC_SEND and names the QP", "wrong opcode or qp_num");
    check(0 == count_idle_completions(c->cq), "the unsignaled sends give no completion",
          "an unsignaled send completed");
    for (int i = 0; i < 3; i++) {
        peer_do(fd, OP_WAIT, 0, &rep);
        ok &= IBV_WC_SUCCESS == rep.status;
    }
    check(ok, "the peer received all 3", "a receive failed");
}

static int count_idle_completions(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    int got = 0;

    for (int i = 0; i < IDLE_POLL; i++) {
        int n = ibv_poll_cq(cq, 1, &wc);

        got += (n > 0) ? n : 0;
    }
    return got;
}

static void check_credits(struct ex_conn *c, struct ibv_mr *mr, int fd)
{
    struct ibv_send_wr *bad = NULL;
    struct peer_reply rep;
    struct ibv_wc wc;
    int posted = 0;
    int rc = 0;
    char detail[64];

    while (posted < WR_LIMIT + 1 && 0 == (rc = ex_post_send(c->qp, mr, mr->addr, 64, 2, &bad))) {
        posted++;
    }
    snprintf(detail, sizeof(detail), "%d sends posted before rc %d", posted, rc);
    check(WR_LIMIT == posted, "63 sends can be outstanding (cap asked: 128)", detail);
    check_errno(rc, ENOMEM, "the 64th outstanding send fails with ENOMEM");
    check(NULL != bad, "bad_wr is set on the 64th send", "bad_wr not set");
    check(0 == count_idle_completions(c->cq), "no send completes while the peer posts no receive",
          "a send completed without a credit");
    peer_do(fd, OP_POST, 64, &rep);
    rc = ex_wait_wc(c->cq, &wc, EX_TIMEOUT_S);
    check(1 == rc && IBV_WC_SUCCESS == wc.status, "one posted receive releases one send",
          "no completion");
    check(0 == count_idle_completions(c->cq), "and only one", "more sends completed");
    peer_do(fd, OP_WAIT, 0, &rep);
    check(IBV_WC_SUCCESS == rep.status && 64 == rep.byte_len, "the peer received that send",
          "peer receive failed");
}

/*
 * A send's completion is held back for at least one poll_cq call after the data left, so
 * completions on a CQ shared by sends and receives come in no promised order (rxe reports a
 * later receive before an earlier send; code that waits for "the send" must keep receives).
 */
static void check_send_cqe_held(struct ex_conn *c, struct ibv_mr *mr, int fd)
{
    struct peer_reply rep;
    struct ibv_wc wc;
    int first;

    check(0 == peer_do(fd, OP_POST, 64, &rep) && 0 == rep.status,
          "peer posts a receive (a credit is there before the send)", "side channel");
    check(0 == post_small(c, mr, 21, IBV_SEND_SIGNALED), "post a signaled send", "post failed");
    first = ibv_poll_cq(c->cq, 1, &wc);
    check(0 == first, "the first poll_cq after the send reports no completion yet",
          "its completion was visible at once");
    check(1 == ex_wait_wc(c->cq, &wc, EX_TIMEOUT_S) && 21 == wc.wr_id
              && IBV_WC_SUCCESS == wc.status,
          "a later poll_cq reports the send's completion (success)", "no completion");
    peer_do(fd, OP_WAIT, 0, &rep);
    check(IBV_WC_SUCCESS == rep.status && 64 == rep.byte_len, "the peer received that send",
          "peer receive failed");
}

static int client(struct ex_conn *c, int fd, const struct ex_dest *peer)
{
    struct ibv_mr *mr = NULL;
    struct ibv_mr *big = NULL;
    uint8_t *buf = NULL;
    size_t big_len = MSG_MAX + EX_FRAME;
    struct peer_reply rep;

    check_qp_types(c);
    check_qp_limit(c);
    check_mr_limit(c);
    if (0 != posix_memalign((void **) &buf, EX_FRAME, big_len)) {
        return -1;
    }
    memset(buf, 0x5a, big_len);
    mr = ibv_reg_mr(c->pd, buf, 2 * EX_FRAME, IBV_ACCESS_LOCAL_WRITE);
    big = ibv_reg_mr(c->pd, buf, big_len, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == mr || NULL == big) {
        check(0, "register the test buffers", strerror(errno));
        return -1;
    }
    check_recv_depth(c, mr);
    check_rtr(c, peer->gid);
    if (0 != ex_conn_connect(c, peer)) {
        check(0, "connect to the peer", "see above");
        return -1;
    }
    check_bad_sends(c, mr, big);
    check_frames(c, mr, fd);
    check_unsignaled(c, mr, fd);
    check_send_cqe_held(c, mr, fd);
    check_credits(c, mr, fd);
    peer_do(fd, OP_QUIT, 0, &rep);
    ibv_dereg_mr(big);
    ibv_dereg_mr(mr);
    free(buf);
    return 0;
}

/* The peer: posts receives and reports their completions, as the client asks. */
static int server(struct ex_conn *c, int fd)
{
    static uint8_t buf[2 * EX_FRAME] __attribute__((aligned(EX_FRAME)));
    struct ibv_mr *mr = ibv_reg_mr(c->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
    struct peer_cmd cmd;
    struct peer_reply rep;
    struct ibv_wc wc;

    if (NULL == mr) {
        fprintf(stderr, "reg_mr failed: %s (errno %d)\n", strerror(errno), errno);
        return -1;
    }
    for (;;) {
        if (sizeof(cmd) != read(fd, &cmd, sizeof(cmd)) || OP_QUIT == cmd.op) {
            break;
        }
        memset(&rep, 0, sizeof(rep));
        if (OP_POST == cmd.op) {
            rep.status = ex_post_recv(c->qp, mr, buf, cmd.len, cmd.len);
        } else if (1 == ex_wait_wc(c->cq, &wc, EX_TIMEOUT_S)) {
            rep.status = wc.status;
            rep.byte_len = wc.byte_len;
            rep.opcode = wc.opcode;
        } else {
            rep.status = -1;
        }
        if (sizeof(rep) != write(fd, &rep, sizeof(rep))) {
            break;
        }
    }
    rep.status = 0;
    if (sizeof(rep) != write(fd, &rep, sizeof(rep))) {
        fprintf(stderr, "side channel closed early\n");
    }
    ibv_dereg_mr(mr);
    printf("tbsim_limits: peer done\n");
    return 0;
}

/* -k N: holds N QPs (c->qp and N-1 more) until stdin closes, then exits without freeing. */
static int hold(struct ex_conn *c, int n)
{
    char byte;

    for (int i = 1; i < n; i++) {
        if (NULL == qp_make(c, IBV_QPT_UC, 8, 1, 0)) {
            fprintf(stderr, "create_qp failed: %s (errno %d)\n", strerror(errno), errno);
            return -1;
        }
    }
    printf("tbsim_limits: holding %d QPs\n", n);
    fflush(stdout);
    while (0 < read(STDIN_FILENO, &byte, 1)) {
    }
    return 0;
}

static int run(struct ex_conn *c, const char *host, int port)
{
    struct ex_dest mine = {c->qp->qp_num, EX_PSN, {0}};
    struct ex_dest peer;
    int fd;
    int rc;

    memcpy(mine.gid, c->gid.raw, 16);
    fd = (NULL == host) ? ex_tcp_server(port) : ex_tcp_client(host, port);
    if (fd < 0 || 0 != ex_xchg(fd, &mine, &peer, sizeof(mine))) {
        return -1;
    }
    if (NULL == host) {
        rc = ex_conn_connect(c, &peer);
        rc = (0 == rc) ? server(c, fd) : rc;
    } else {
        rc = client(c, fd, &peer);
    }
    close(fd);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dev = NULL;
    int port = EX_TCP_PORT + 1;
    int keep = 0;
    struct ibv_context *ctx;
    struct ex_conn c;
    int ch;
    int rc;

    while (-1 != (ch = getopt(argc, argv, "d:p:k:o:h"))) {
        if ('d' == ch) {
            dev = optarg;
        } else if ('p' == ch) {
            port = atoi(optarg);
        } else if ('k' == ch) {
            keep = atoi(optarg);
        } else if ('o' == ch) {
            g_held = atoi(optarg);
        } else {
            fprintf(stderr, "usage: tbsim_limits [-d dev] [-p tcp_port] [-o held] [server_host]\n"
                            "       tbsim_limits [-d dev] -k N  (hold N QPs until stdin closes)\n");
            return 2;
        }
    }
    memset(&c, 0, sizeof(c));
    if (0 != ex_open_device(dev, &ctx) || 0 != ex_find_gid(ctx, "auto", &c.gid_index, &c.gid)
        || 0 != ex_conn_setup(&c, ctx)) {
        return 1;
    }
    if (0 < keep) {
        return (0 == hold(&c, keep)) ? 0 : 1;
    }
    rc = run(&c, optind < argc ? argv[optind] : NULL, port);
    ex_conn_teardown(&c);
    if (0 != rc) {
        g_failed = 1;
    }
    if (optind < argc) {
        printf("tbsim_limits: %s\n", g_failed ? "some checks FAILED" : "all checks passed");
    }
    return g_failed ? 1 : 0;
}
