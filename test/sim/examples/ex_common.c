/*
 * Helpers shared by the raw-verbs examples: device and GID choice, UC QP setup and
 * connection, the TCP side channel and completion waits (see ex_common.h).
 */
#include "ex_common.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int fail(const char *what, int err)
{
    fprintf(stderr, "%s failed: %s (errno %d)\n", what, strerror(err), err);
    return -1;
}

double ex_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Read once: the programs ask for it on every wait, and getenv would be most of a raw round
 * trip's instructions (bench/instr_count.sh). */
double ex_timeout_s(void)
{
    static double timeout_s;
    const char *env;
    char *end;
    double s;

    if (0 < timeout_s) {
        return timeout_s;
    }
    env = getenv("EX_TIMEOUT_S");
    timeout_s = EX_TIMEOUT_S;
    if (NULL != env && '\0' != env[0]) {
        s = strtod(env, &end);
        timeout_s = ('\0' == *end && 0 < s) ? s : EX_TIMEOUT_S;
    }
    return timeout_s;
}

uint8_t ex_pattern(size_t i)
{
    return (uint8_t) (((uint32_t) i * 2654435761u) >> 24);
}

void ex_pattern_fill(uint8_t *buf, size_t len, size_t offset)
{
    for (size_t k = 0; k < len; k++) {
        buf[k] = ex_pattern(k + offset);
    }
}

int ex_open_device(const char *name, struct ibv_context **ctx_p)
{
    struct ibv_device **list;
    struct ibv_device *dev = NULL;
    int n = 0;

    list = ibv_get_device_list(&n);
    if (NULL == list) {
        return fail("get_device_list", errno);
    }
    for (int i = 0; i < n && NULL == dev; i++) {
        if (NULL == name || 0 == strcmp(name, ibv_get_device_name(list[i]))) {
            dev = list[i];
        }
    }
    if (NULL == dev) {
        fprintf(stderr, "device %s not found (%d available)\n", name ? name : "(any)", n);
        ibv_free_device_list(list);
        return -1;
    }
    *ctx_p = ibv_open_device(dev);
    ibv_free_device_list(list);
    if (NULL == *ctx_p) {
        return fail("open_device", errno);
    }
    return 0;
}

static int gid_is_v4mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    return 0 == memcmp(gid->raw, prefix, sizeof(prefix));
}

int ex_find_gid(struct ibv_context *ctx, const char *arg, int *index_p, union ibv_gid *gid_p)
{
    struct ibv_port_attr port;
    int rc;

    rc = ibv_query_port(ctx, EX_PORT, &port);
    if (0 != rc) {
        return fail("query_port", rc);
    }
    if (NULL != arg && 0 != strcmp(arg, "auto")) {
        *index_p = atoi(arg);
        if (0 != ibv_query_gid(ctx, EX_PORT, *index_p, gid_p)) {
            return fail("query_gid", errno);
        }
        return 0;
    }
    for (int i = 0; i < port.gid_tbl_len; i++) {
        if (0 == ibv_query_gid(ctx, EX_PORT, i, gid_p) && gid_is_v4mapped(gid_p)) {
            *index_p = i;
            return 0;
        }
    }
    fprintf(stderr, "device %s: no IPv4-mapped GID on port %d; give the interface an IPv4\n",
            ibv_get_device_name(ctx->device), EX_PORT);
    return -1;
}

static int qp_init(struct ibv_qp *qp)
{
    struct ibv_qp_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = EX_PORT;
    attr.qp_access_flags = 0;
    rc = ibv_modify_qp(qp, &attr,
                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    return (0 != rc) ? fail("modify_qp INIT", rc) : 0;
}

int ex_conn_setup(struct ex_conn *c, struct ibv_context *ctx)
{
    return ex_conn_setup_depth(c, ctx, EX_DEPTH);
}

int ex_conn_setup_depth(struct ex_conn *c, struct ibv_context *ctx, uint32_t depth)
{
    struct ibv_qp_init_attr init;

    c->ctx = ctx;
    c->pd = ibv_alloc_pd(ctx);
    if (NULL == c->pd) {
        return fail("alloc_pd", errno);
    }
    c->cq = ibv_create_cq(ctx, (int) (2 * depth + 2), NULL, NULL, 0);
    if (NULL == c->cq) {
        return fail("create_cq", errno);
    }
    memset(&init, 0, sizeof(init));
    init.send_cq = c->cq;
    init.recv_cq = c->cq;
    init.qp_type = IBV_QPT_UC;
    init.cap.max_send_wr = depth;
    init.cap.max_recv_wr = depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    c->qp = ibv_create_qp(c->pd, &init);
    if (NULL == c->qp) {
        return fail("create_qp", errno);
    }
    return qp_init(c->qp);
}

int ex_conn_connect(struct ex_conn *c, const struct ex_dest *rem)
{
    struct ibv_qp_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = IBV_MTU_1024;
    attr.dest_qp_num = rem->qpn;
    attr.rq_psn = rem->psn;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = EX_PORT;
    attr.ah_attr.grh.hop_limit = 1;
    attr.ah_attr.grh.sgid_index = (uint8_t) c->gid_index;
    memcpy(attr.ah_attr.grh.dgid.raw, rem->gid, 16);
    rc = ibv_modify_qp(
        c->qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
    if (0 != rc) {
        return fail("modify_qp RTR", rc);
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = EX_PSN;
    rc = ibv_modify_qp(c->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    return (0 != rc) ? fail("modify_qp RTS", rc) : 0;
}

void ex_conn_teardown(struct ex_conn *c)
{
    if (NULL != c->qp && 0 != ibv_destroy_qp(c->qp)) {
        fprintf(stderr, "destroy_qp failed\n");
    }
    if (NULL != c->cq) {
        ibv_destroy_cq(c->cq);
    }
    if (NULL != c->pd) {
        ibv_dealloc_pd(c->pd);
    }
    if (NULL != c->ctx) {
        ibv_close_device(c->ctx);
    }
}

int ex_tcp_server(int port)
{
    struct sockaddr_in6 sa;
    int one = 1;
    int lfd = socket(AF_INET6, SOCK_STREAM, 0);
    int fd;

    if (lfd < 0) {
        return fail("socket", errno);
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sa, 0, sizeof(sa));
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons((uint16_t) port);
    sa.sin6_addr = in6addr_any;
    if (0 != bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) || 0 != listen(lfd, 1)) {
        fail("bind/listen", errno);
        close(lfd);
        return -1;
    }
    fd = accept(lfd, NULL, NULL);
    if (fd < 0) {
        fail("accept", errno);
    }
    close(lfd);
    return fd;
}

int ex_tcp_client(const char *host, int port)
{
    struct addrinfo hints;
    struct addrinfo *res;
    char svc[16];
    int fd = -1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(svc, sizeof(svc), "%d", port);
    if (0 != getaddrinfo(host, svc, &hints, &res)) {
        fprintf(stderr, "cannot resolve %s\n", host);
        return -1;
    }
    /* the server may start a moment later: retry for a while */
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        for (struct addrinfo *ai = res; NULL != ai && fd < 0; ai = ai->ai_next) {
            fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd >= 0 && 0 != connect(fd, ai->ai_addr, ai->ai_addrlen)) {
                close(fd);
                fd = -1;
            }
        }
        if (fd < 0) {
            usleep(100000);
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "cannot connect to %s:%d\n", host, port);
    }
    return fd;
}

static int io_full(int fd, void *buf, size_t len, int writing)
{
    uint8_t *p = buf;

    while (0 < len) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);

        if (n <= 0) {
            if (n < 0 && EINTR == errno) {
                continue;
            }
            fprintf(stderr, "side channel %s failed: %s\n", writing ? "write" : "read",
                    n < 0 ? strerror(errno) : "peer closed");
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

int ex_xchg(int fd, const void *out, void *in, size_t len)
{
    if (0 != io_full(fd, (void *) out, len, 1)) {
        return -1;
    }
    return io_full(fd, in, len, 0);
}

int ex_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double timeout_s)
{
    return ex_wait_wc_peer(cq, wc, timeout_s, -1);
}

/* Whether the other side closed the side channel: it failed or exited (one system call). */
static int peer_closed(int fd)
{
    char c;

    return 0 <= fd && 0 == recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
}

int ex_wait_wc_peer(struct ibv_cq *cq, struct ibv_wc *wc, double timeout_s, int fd)
{
    double start = ex_now();
    double look = start + 1.0;
    unsigned spins = 0;

    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);

        if (n < 0) {
            fprintf(stderr, "poll_cq failed: %d\n", n);
            return -1;
        }
        if (1 == n) {
            return 1;
        }
        if (0 != (++spins & 0xfff) || ex_now() < look) {
            continue;
        }
        if (ex_now() > start + timeout_s) {
            return 0;
        }
        if (peer_closed(fd)) {
            fprintf(stderr, "no completion, and the peer closed the side channel (it stopped)\n");
            return 0;
        }
        look = ex_now() + 1.0;
    }
}

int ex_post_send_flags(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len,
                       uint64_t wr_id, int flags, struct ibv_send_wr **bad_p)
{
    struct ibv_sge sge = {.addr = (uintptr_t) buf, .length = len, .lkey = mr->lkey};
    struct ibv_send_wr wr;
    struct ibv_send_wr *bad = NULL;
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = flags;
    rc = ibv_post_send(qp, &wr, &bad);
    if (NULL != bad_p) {
        *bad_p = bad;
    }
    return rc;
}

int ex_post_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id,
                 struct ibv_send_wr **bad_p)
{
    return ex_post_send_flags(qp, mr, buf, len, wr_id, IBV_SEND_SIGNALED, bad_p);
}

int ex_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id)
{
    struct ibv_sge sge = {.addr = (uintptr_t) buf, .length = len, .lkey = mr->lkey};
    struct ibv_recv_wr wr;
    struct ibv_recv_wr *bad = NULL;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(qp, &wr, &bad);
}
