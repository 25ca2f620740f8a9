/*
 * tbsim_limits: negative and positive tests of Apple's Thunderbolt RDMA limits over plain verbs,
 * on one host with one cable; each limit is checked on both sides (the largest accepted, the
 * smallest refused). The client checks, printing PASS/FAIL per check:
 *   RC and UD QPs fail with EOPNOTSUPP; inline data and 2 SGEs fail create_qp with EINVAL;
 *   caps of 4095 WRs are accepted, 4096 fail with EINVAL; the 11th QP of a device fails with
 *   EBUSY; the 101st MR fails with ENOMEM; a queue takes max_send_wr / max_recv_wr outstanding
 *   WRs, at most 63 (the next post fails with ENOMEM, ibv_query_qp says so); RTS before RTR,
 *   RTR with a non-IPv4-mapped sgid_index, with a dgid that is not the peer's, with MTU > 4096
 *   or without the UC mask bits fail with EINVAL; and, with the peer (the same program without
 *   server_host, on the other end of the cable): a non-SEND opcode, 2 SGEs and a message or a
 *   receive over 16,773,120 B fail with EINVAL and bad_wr set; the frame rule both ways (a send
 *   of another frame count, or longer than the receive, fails the receive with
 *   IBV_WC_LOC_LEN_ERR and delivers nothing; a shorter send of the same frame count, and a
 *   16,773,120 B message, arrive whole with their byte_len); sends wait for the peer's
 *   receives (credits); unsignaled sends give no completion; a send's completion is held back;
 *   with TBSIM_PIN=1 in the environment (libtbsim's model of pinned pages), a send from a range
 *   mapped again after its registration carries the old pages.
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
#include <sys/mman.h>
#include <unistd.h>

#define QP_LIMIT   10
#define MR_LIMIT   100
#define WR_LIMIT   63
#define WR_CAP_MAX 4095
#define MSG_MAX    16773120
#define CAP_ASKED  128 /* the connected QP's caps: more than the 63 posting accepts */
#define CAP_SMALL  32  /* a cap below 63, which the queue must honour */
#define CAP_RECV   16
#define BUF_LEN    (MSG_MAX + EX_FRAME) /* every buffer: room for a message one byte too big */
#define CANARY     0xee                 /* the peer's receive buffer before a receive */
#define IDLE_POLL  100000

enum peer_op { OP_POST = 1, OP_WAIT = 2, OP_QUIT = 3 };

/* Same size as struct peer_reply: ex_xchg writes and reads one size. */
struct peer_cmd {
    uint32_t op;
    uint32_t len;
    uint32_t pad[3];
};

struct peer_reply {
    int32_t status;    /* OP_POST: post_recv's rc; OP_WAIT: the completion's status, -1 none */
    uint32_t byte_len; /* OP_WAIT: the completion's fields */
    uint32_t opcode;
    uint32_t intact;    /* the first byte_len bytes are the message's pattern */
    uint32_t untouched; /* every byte after them, up to the receive's end + 4 KiB, is CANARY */
};

static int g_failed;
static int g_held;         /* QPs of this device held by other processes of this host (-o) */
static int g_peer_fd = -1; /* the side channel: a wait ends when the peer closed it */

/* One completion of cq, or 0 on the hang guard or when the peer stopped. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
    return ex_wait_wc_peer(cq, wc, ex_timeout_s(), g_peer_fd);
}

static void check(int ok, const char *what, const char *detail)
{
    printf("%s: %s%s%s\n", ok ? "PASS" : "FAIL", what, ok ? "" : ": ", ok ? "" : detail);
    g_failed |= !ok;
}

static void check_errno(int got, int want, const char *what)
{
    char detail[128];

    snprintf(detail, sizeof(detail), "got %s (%d), want %s (%d)", got ? strerror(got) : "success",
             got, want ? strerror(want) : "success", want);
    check(got == want, what, detail);
}

/* A queue took posted WRs before a post returned rc: want of them, then ENOMEM. */
static void check_depth(int want, int posted, int rc, const char *outstanding, const char *next)
{
    char detail[64];

    snprintf(detail, sizeof(detail), "%d posted before rc %d", posted, rc);
    check(want == posted, outstanding, detail);
    check_errno(rc, ENOMEM, next);
}

/* Posts 64 B sends from mr on qp until one fails or most went in; its rc in *rc_p. */
static int fill_sends(struct ibv_qp *qp, struct ibv_mr *mr, int most, int *rc_p,
                      struct ibv_send_wr **bad_p)
{
    int posted = 0;

    *rc_p = 0;
    while (posted < most
           && 0 == (*rc_p = ex_post_send(qp, mr, mr->addr, 64, (uint64_t) posted, bad_p))) {
        posted++;
    }
    return posted;
}

static struct ibv_qp_cap cap_of(uint32_t send_wr, uint32_t recv_wr, uint32_t sge, uint32_t inl)
{
    struct ibv_qp_cap cap = {send_wr, recv_wr, sge, sge, inl};

    return cap;
}

static struct ibv_qp *qp_make(struct ex_conn *c, enum ibv_qp_type type, struct ibv_qp_cap cap)
{
    struct ibv_qp_init_attr init;

    memset(&init, 0, sizeof(init));
    init.send_cq = c->cq;
    init.recv_cq = c->cq;
    init.qp_type = type;
    init.cap = cap;
    errno = 0;
    return ibv_create_qp(c->pd, &init);
}

/* errno of a create_qp that should fail; 0 (and the QP destroyed) when it succeeded. */
static int qp_fail_errno(struct ex_conn *c, enum ibv_qp_type type, struct ibv_qp_cap cap)
{
    struct ibv_qp *qp = qp_make(c, type, cap);

    if (NULL != qp) {
        ibv_destroy_qp(qp);
        return 0;
    }
    return errno;
}

static void check_qp_types(struct ex_conn *c)
{
    check_errno(qp_fail_errno(c, IBV_QPT_RC, cap_of(8, 8, 1, 0)), EOPNOTSUPP,
                "RC QP fails with EOPNOTSUPP");
    check_errno(qp_fail_errno(c, IBV_QPT_UD, cap_of(8, 8, 1, 0)), EOPNOTSUPP,
                "UD QP fails with EOPNOTSUPP");
    check_errno(qp_fail_errno(c, IBV_QPT_UC, cap_of(8, 8, 1, 64)), EINVAL,
                "inline data fails with EINVAL");
    check_errno(qp_fail_errno(c, IBV_QPT_UC, cap_of(8, 8, 2, 0)), EINVAL,
                "2 SGEs per WR fail with EINVAL");
}

/* The caps create_qp accepts (4095) and refuses (4096), and what ibv_query_qp reports. */
static void check_caps(struct ex_conn *c)
{
    struct ibv_qp_init_attr init;
    struct ibv_qp_attr attr;
    char detail[64];

    check_errno(qp_fail_errno(c, IBV_QPT_UC, cap_of(WR_CAP_MAX, WR_CAP_MAX, 1, 0)), 0,
                "create_qp accepts caps of 4095 WRs");
    check_errno(qp_fail_errno(c, IBV_QPT_UC, cap_of(WR_CAP_MAX + 1, 8, 1, 0)), EINVAL,
                "max_send_wr 4096 fails create_qp with EINVAL");
    check_errno(qp_fail_errno(c, IBV_QPT_UC, cap_of(8, WR_CAP_MAX + 1, 1, 0)), EINVAL,
                "max_recv_wr 4096 fails create_qp with EINVAL");
    memset(&attr, 0, sizeof(attr));
    ibv_query_qp(c->qp, &attr, IBV_QP_CAP, &init);
    snprintf(detail, sizeof(detail), "max_send_wr %u max_recv_wr %u", attr.cap.max_send_wr,
             attr.cap.max_recv_wr);
    check(WR_LIMIT == attr.cap.max_send_wr && WR_LIMIT == attr.cap.max_recv_wr,
          "query_qp of a QP asked 128 WRs reports the 63 posting accepts", detail);
}

static void check_qp_limit(struct ex_conn *c)
{
    struct ibv_qp *qps[QP_LIMIT + 1];
    int made = 1; /* c->qp is the first */
    int err;
    char detail[64];

    qps[0] = NULL;
    while (made < QP_LIMIT - g_held
           && NULL != (qps[made] = qp_make(c, IBV_QPT_UC, cap_of(8, 8, 1, 0)))) {
        made++;
    }
    snprintf(detail, sizeof(detail), "only %d created (%s)", made, strerror(errno));
    check(QP_LIMIT - g_held == made,
          g_held ? "the QPs other processes of this host hold count against the 10"
                 : "10 UC QPs per device can be created",
          detail);
    qps[made] = qp_make(c, IBV_QPT_UC, cap_of(8, 8, 1, 0));
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

/* A QP asked cap receives takes want of them; the next one fails with ENOMEM. */
static void check_recv_depth(struct ex_conn *c, struct ibv_mr *mr, uint32_t cap, int want)
{
    struct ibv_qp *qp = qp_make(c, IBV_QPT_UC, cap_of(8, cap, 1, 0));
    int posted = 0;
    int rc = 0;
    char what[96];
    char next[96];

    if (NULL == qp || 0 != qp_init(qp)) {
        check(0, "QP for the receive depth checks", strerror(errno));
        return;
    }
    while (posted < want + 1 && 0 == (rc = ex_post_recv(qp, mr, mr->addr, EX_FRAME, 0))) {
        posted++;
    }
    snprintf(what, sizeof(what), "%d receives can be outstanding (max_recv_wr %u)", want, cap);
    snprintf(next, sizeof(next), "the %dth posted receive fails with ENOMEM%s", want + 1,
             (WR_LIMIT == want) ? "" : " (max_recv_wr honoured)");
    check_depth(want, posted, rc, what, next);
    ibv_destroy_qp(qp);
}

/* RTR towards QPN 0x123 (nobody's) with every attribute valid, but only the bits of mask set. */
static int rtr_full(struct ibv_qp *qp, int sgid_index, const uint8_t *dgid, enum ibv_mtu mtu,
                    int mask)
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
    return ibv_modify_qp(qp, &attr, mask);
}

static int rtr(struct ibv_qp *qp, int sgid_index, const uint8_t *dgid, enum ibv_mtu mtu)
{
    return rtr_full(qp, sgid_index, dgid, mtu,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
}

/* RTR with valid attributes (MTU 1024) and the given mask: only the mask can be wrong. */
static int rtr_mask(struct ibv_qp *qp, int sgid_index, const uint8_t *dgid, int mask)
{
    return rtr_full(qp, sgid_index, dgid, IBV_MTU_1024, mask);
}

static int rts(struct ibv_qp *qp)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = EX_PSN;
    return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void check_rtr(struct ex_conn *c, const uint8_t *peer_gid)
{
    struct ibv_qp *qp = qp_make(c, IBV_QPT_UC, cap_of(8, 8, 1, 0));

    if (NULL == qp || 0 != qp_init(qp)) {
        check(0, "QP for the RTR checks", strerror(errno));
        return;
    }
    check_errno(rts(qp), EINVAL, "RTS before RTR fails with EINVAL");
    check_errno(rtr(qp, 0, peer_gid, IBV_MTU_1024), EINVAL,
                "RTR with sgid_index 0 (fe80, not IPv4-mapped) fails with EINVAL");
    check_errno(rtr(qp, c->gid_index, c->gid.raw, IBV_MTU_1024), EINVAL,
                "RTR towards our own GID (not the peer's) fails with EINVAL");
    check_errno(rtr(qp, c->gid_index, peer_gid, (enum ibv_mtu) 6), EINVAL,
                "RTR with an MTU above 4096 fails with EINVAL");
    check_errno(rtr_mask(qp, c->gid_index, peer_gid, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU),
                EINVAL, "RTR without DEST_QPN and RQ_PSN in the mask fails with EINVAL");
    check_errno(rtr(qp, c->gid_index, peer_gid, IBV_MTU_1024), 0,
                "RTR with the IPv4-mapped GIDs of both ends succeeds");
    ibv_destroy_qp(qp);
}

/*
 * max_send_wr below 63 is honoured: a QP asked 32 (in RTS towards a QPN nobody has, so its
 * sends stay queued) takes 32 sends; the 33rd fails with ENOMEM; ibv_query_qp reports 32.
 */
static void check_send_cap(struct ex_conn *c, struct ibv_mr *mr, const uint8_t *peer_gid)
{
    struct ibv_qp *qp = qp_make(c, IBV_QPT_UC, cap_of(CAP_SMALL, 8, 1, 0));
    struct ibv_send_wr *bad = NULL;
    struct ibv_qp_init_attr init;
    struct ibv_qp_attr attr;
    int posted;
    int rc;
    char detail[64];

    if (NULL == qp || 0 != qp_init(qp) || 0 != rtr(qp, c->gid_index, peer_gid, IBV_MTU_1024)
        || 0 != rts(qp)) {
        check(0, "QP asked max_send_wr 32, in RTS", strerror(errno));
        return;
    }
    memset(&attr, 0, sizeof(attr));
    ibv_query_qp(qp, &attr, IBV_QP_CAP, &init);
    snprintf(detail, sizeof(detail), "max_send_wr %u", attr.cap.max_send_wr);
    check(CAP_SMALL == attr.cap.max_send_wr, "query_qp of a QP asked 32 sends reports 32", detail);
    posted = fill_sends(qp, mr, CAP_SMALL + 1, &rc, &bad);
    check_depth(CAP_SMALL, posted, rc, "32 sends can be outstanding (max_send_wr 32)",
                "the 33rd outstanding send fails with ENOMEM (max_send_wr honoured)");
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
    bad = NULL;
    rc = ex_post_send(c->qp, big, big->addr, MSG_MAX + 1, 0, &bad);
    check_errno(rc, EINVAL, "a send of 16,773,121 B (inside its MR) fails with EINVAL");
    check(NULL != bad, "bad_wr is set on the 16,773,121 B send", "bad_wr not set");
}

static int peer_do(int fd, uint32_t op, uint32_t len, struct peer_reply *rep)
{
    struct peer_cmd cmd = {op, len, {0, 0, 0}};

    _Static_assert(sizeof(struct peer_cmd) == sizeof(struct peer_reply), "one exchange size");

    return ex_xchg(fd, &cmd, rep, sizeof(cmd));
}

/* One signaled send of len bytes of the pattern; 1 when it completes with success. */
static int send_ok(struct ex_conn *c, struct ibv_mr *big, uint32_t len)
{
    struct ibv_wc wc;

    if (0 != ex_post_send(c->qp, big, big->addr, len, 1, NULL) || 1 != wait_wc(c->cq, &wc)) {
        return 0;
    }
    return IBV_WC_SUCCESS == wc.status;
}

/* One case of the frame rule: a send of send_len into a receive of recv_len. */
struct frame_case {
    uint32_t recv_len;
    uint32_t send_len;
    int status; /* the receive's: IBV_WC_SUCCESS (all bytes, byte_len send_len) or LOC_LEN_ERR */
    const char *what;
};

static const struct frame_case frame_cases[] = {
    {2 * EX_FRAME, EX_FRAME, IBV_WC_LOC_LEN_ERR, "a 1-frame send into a 2-frame receive"},
    {EX_FRAME, 2 * EX_FRAME, IBV_WC_LOC_LEN_ERR, "a 2-frame send into a 1-frame receive"},
    {4000, 4001, IBV_WC_LOC_LEN_ERR, "a 4001 B send into a 4000 B receive (1 frame each)"},
    {EX_FRAME, EX_FRAME, IBV_WC_SUCCESS, "a 1-frame send into a 1-frame receive"},
    {EX_FRAME, 100, IBV_WC_SUCCESS, "a 100 B send into a 4096 B receive (1 frame each)"},
    {2 * EX_FRAME, EX_FRAME + 1, IBV_WC_SUCCESS, "a 4097 B send into an 8192 B receive"},
    {EX_FRAME, 0, IBV_WC_SUCCESS, "a 0 B send (1 frame) into a 4096 B receive"},
    {MSG_MAX, MSG_MAX, IBV_WC_SUCCESS, "a 16,773,120 B send (4095 frames) into as much"},
};

static void check_frame_case(struct ex_conn *c, struct ibv_mr *big, int fd,
                             const struct frame_case *fc)
{
    int ok = IBV_WC_SUCCESS == fc->status;
    struct peer_reply rep;
    char what[160];
    char detail[128];

    if (0 != peer_do(fd, OP_POST, fc->recv_len, &rep) || 0 != rep.status) {
        check(0, fc->what, "the peer could not post its receive");
        return;
    }
    snprintf(what, sizeof(what), "%s: the send completes with success", fc->what);
    check(send_ok(c, big, fc->send_len), what, "no success completion");
    peer_do(fd, OP_WAIT, 0, &rep);
    snprintf(detail, sizeof(detail),
             "status %s (%d), byte_len %u, opcode %u, intact %u, untouched %u",
             ibv_wc_status_str(rep.status), rep.status, rep.byte_len, rep.opcode, rep.intact,
             rep.untouched);
    if (ok) {
        snprintf(what, sizeof(what), "%s arrives whole (IBV_WC_RECV, byte_len %u)", fc->what,
                 fc->send_len);
    } else {
        snprintf(what, sizeof(what), "%s fails the receive with IBV_WC_LOC_LEN_ERR", fc->what);
    }
    check(fc->status == rep.status && (!ok || fc->send_len == rep.byte_len)
              && (!ok || IBV_WC_RECV == rep.opcode) && rep.intact,
          what, detail);
    snprintf(what, sizeof(what), "%s: nothing written %s", fc->what,
             ok ? "past byte_len" : "into the receive buffer");
    check(rep.untouched, what, detail);
}

static void check_frames(struct ex_conn *c, struct ibv_mr *big, int fd)
{
    struct peer_reply rep;
    int rc;

    for (size_t i = 0; i < sizeof(frame_cases) / sizeof(frame_cases[0]); i++) {
        check_frame_case(c, big, fd, &frame_cases[i]);
    }
    peer_do(fd, OP_POST, MSG_MAX + 1, &rep);
    rc = rep.status;
    check_errno(rc, EINVAL, "a receive of 16,773,121 B (inside its MR) fails with EINVAL");
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
    ok = 1 == wait_wc(c->cq, &wc) && 13 == wc.wr_id;
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

/* The connected QP was asked 128 WRs: 63 sends wait for credits, the 64th fails. */
static void check_credits(struct ex_conn *c, struct ibv_mr *mr, int fd)
{
    struct ibv_send_wr *bad = NULL;
    struct peer_reply rep;
    struct ibv_wc wc;
    int rc;
    int posted = fill_sends(c->qp, mr, WR_LIMIT + 1, &rc, &bad);

    check_depth(WR_LIMIT, posted, rc, "63 sends can be outstanding (max_send_wr 128)",
                "the 64th outstanding send fails with ENOMEM");
    check(NULL != bad, "bad_wr is set on the 64th send", "bad_wr not set");
    check(0 == count_idle_completions(c->cq), "no send completes while the peer posts no receive",
          "a send completed without a credit");
    peer_do(fd, OP_POST, 64, &rep);
    rc = wait_wc(c->cq, &wc);
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
    check(1 == wait_wc(c->cq, &wc) && 21 == wc.wr_id && IBV_WC_SUCCESS == wc.status,
          "a later poll_cq reports the send's completion (success)", "no completion");
    peer_do(fd, OP_WAIT, 0, &rep);
    check(IBV_WC_SUCCESS == rep.status && 64 == rep.byte_len, "the peer received that send",
          "peer receive failed");
}

/*
 * TBSIM_PIN=1 only (libtbsim's model of pinned pages): a region pins the pages it was registered
 * on, so a send from its range after the application mapped new pages there (the same bytes
 * written into them) carries the old pages, and the peer does not see the pattern.
 */
static void check_pinned(struct ex_conn *c, int fd)
{
    const char *what = "a send from a range mapped again after its registration carries the old "
                       "pages (TBSIM_PIN)";
    const size_t len = 2 * EX_FRAME;
    uint8_t *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct ibv_mr *mr = NULL;
    struct peer_reply rep;
    char detail[96];

    if (MAP_FAILED == buf) {
        check(0, what, strerror(errno));
        return;
    }
    ex_pattern_fill(buf, len, 0);
    mr = ibv_reg_mr(c->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == mr
        || MAP_FAILED
               == mmap(buf, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0)) {
        check(0, what, strerror(errno));
        goto out_unmap;
    }
    ex_pattern_fill(buf, len, 0);
    if (0 != peer_do(fd, OP_POST, EX_FRAME, &rep) || 0 != rep.status || !send_ok(c, mr, EX_FRAME)
        || 0 != peer_do(fd, OP_WAIT, 0, &rep)) {
        check(0, what, "the send or the peer's receive failed");
        goto out_unmap;
    }
    snprintf(detail, sizeof(detail), "status %d, byte_len %u, the new pages' pattern %s",
             rep.status, rep.byte_len, rep.intact ? "arrived" : "did not arrive");
    check(IBV_WC_SUCCESS == rep.status && EX_FRAME == rep.byte_len && !rep.intact, what, detail);
out_unmap:
    if (NULL != mr) {
        ibv_dereg_mr(mr);
    }
    munmap(buf, len);
}

/* The checks on this host alone that need no MR (the MR limit counts every MR). */
static void client_limits(struct ex_conn *c)
{
    check_qp_types(c);
    check_caps(c);
    check_qp_limit(c);
    check_mr_limit(c);
}

/* The checks on this host alone that post (into mr), before the connection. */
static void client_depths(struct ex_conn *c, struct ibv_mr *mr, const uint8_t *peer_gid)
{
    check_recv_depth(c, mr, CAP_ASKED, WR_LIMIT);
    check_recv_depth(c, mr, CAP_RECV, CAP_RECV);
    check_rtr(c, peer_gid);
    check_send_cap(c, mr, peer_gid);
}

static int client(struct ex_conn *c, int fd, const struct ex_dest *peer)
{
    struct ibv_mr *mr = NULL;
    struct ibv_mr *big = NULL;
    uint8_t *buf = NULL;
    struct peer_reply rep;
    int rc = -1;

    client_limits(c);
    if (0 != posix_memalign((void **) &buf, EX_FRAME, BUF_LEN)) {
        return -1;
    }
    ex_pattern_fill(buf, BUF_LEN, 0);
    mr = ibv_reg_mr(c->pd, buf, 2 * EX_FRAME, IBV_ACCESS_LOCAL_WRITE);
    big = ibv_reg_mr(c->pd, buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == mr || NULL == big) {
        check(0, "register the test buffers", strerror(errno));
        goto out_dereg;
    }
    client_depths(c, mr, peer->gid);
    if (0 != ex_conn_connect(c, peer)) {
        check(0, "connect to the peer", "see above");
        goto out_dereg;
    }
    check_bad_sends(c, mr, big);
    check_frames(c, big, fd);
    if (NULL != getenv("TBSIM_PIN") && 0 == strcmp(getenv("TBSIM_PIN"), "1")) {
        check_pinned(c, fd);
    }
    check_unsignaled(c, mr, fd);
    check_send_cqe_held(c, mr, fd);
    check_credits(c, mr, fd);
    peer_do(fd, OP_QUIT, 0, &rep);
    rc = 0;
out_dereg:
    if (NULL != big) {
        ibv_dereg_mr(big);
    }
    if (NULL != mr) {
        ibv_dereg_mr(mr);
    }
    free(buf);
    return rc;
}

/* The peer's side: one receive buffer, registered whole, for every receive the client asks. */
struct peer {
    struct ex_conn *c;
    uint8_t *buf;
    struct ibv_mr *mr;
};

/* OP_POST: CANARY over the receive's length + 4 KiB, then the receive (wr_id = its length). */
static int32_t peer_post(struct peer *p, uint32_t len)
{
    size_t fill = (size_t) len + EX_FRAME;

    memset(p->buf, CANARY, (fill < BUF_LEN) ? fill : BUF_LEN);
    return ex_post_recv(p->c->qp, p->mr, p->buf, len, len);
}

/* OP_WAIT: the next completion, with what the buffer then holds. */
static void peer_wait(struct peer *p, struct peer_reply *rep)
{
    struct ibv_wc wc;
    size_t end;
    size_t got;

    if (1 != wait_wc(p->c->cq, &wc)) {
        rep->status = -1;
        return;
    }
    rep->status = wc.status;
    rep->byte_len = wc.byte_len;
    rep->opcode = wc.opcode;
    end = (wc.wr_id + EX_FRAME < BUF_LEN) ? wc.wr_id + EX_FRAME : BUF_LEN;
    got = (wc.byte_len < end) ? wc.byte_len : end;
    rep->intact = 1;
    rep->untouched = 1;
    for (size_t i = 0; i < got; i++) {
        rep->intact &= ex_pattern(i) == p->buf[i];
    }
    for (size_t i = got; i < end; i++) {
        rep->untouched &= CANARY == p->buf[i];
    }
}

/* The peer: posts receives and reports their completions, as the client asks. */
static int server(struct ex_conn *c, int fd)
{
    struct peer p = {c, NULL, NULL};
    struct peer_cmd cmd;
    struct peer_reply rep;

    if (0 != posix_memalign((void **) &p.buf, EX_FRAME, BUF_LEN)
        || NULL == (p.mr = ibv_reg_mr(c->pd, p.buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE))) {
        fprintf(stderr, "receive buffer of %d B: %s (errno %d)\n", BUF_LEN, strerror(errno), errno);
        free(p.buf);
        return -1;
    }
    while (sizeof(cmd) == read(fd, &cmd, sizeof(cmd)) && OP_QUIT != cmd.op) {
        memset(&rep, 0, sizeof(rep));
        if (OP_POST == cmd.op) {
            rep.status = peer_post(&p, cmd.len);
        } else {
            peer_wait(&p, &rep);
        }
        if (sizeof(rep) != write(fd, &rep, sizeof(rep))) {
            break;
        }
    }
    memset(&rep, 0, sizeof(rep));
    if (sizeof(rep) != write(fd, &rep, sizeof(rep))) {
        fprintf(stderr, "side channel closed early\n");
    }
    ibv_dereg_mr(p.mr);
    free(p.buf);
    printf("tbsim_limits: peer done\n");
    return 0;
}

/* -k N: holds N QPs (c->qp and N-1 more) until stdin closes, then exits without freeing. */
static int hold(struct ex_conn *c, int n)
{
    char byte;

    for (int i = 1; i < n; i++) {
        if (NULL == qp_make(c, IBV_QPT_UC, cap_of(8, 8, 1, 0))) {
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
    g_peer_fd = fd;
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
        || 0 != ex_conn_setup_depth(&c, ctx, CAP_ASKED)) {
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
