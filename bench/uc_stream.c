/*
 * uc_stream: raw UC SEND/RECV streams between two hosts over one or more cables at once, one
 * direction or both, one process per host: the raw verbs limit of bench/run's bidirectional
 * bandwidth and of its two-cable bandwidth. (uc_pingpong streams one way on one cable; two of
 * them at once would be four spinning processes, more than this machine's two cores.)
 *
 *   uc_stream [-d dev[,dev...]] [-s size] [-n iters] [-w warm] [-b] [-p tcp_port] [server_host]
 *
 * One UC QP per device, shaped like Apple's (one SGE, no inline, MTU 1024, the IPv4-mapped GID;
 * test/sim/examples/ex_common.c), each with up to EX_DEPTH sends in flight and EX_DEPTH
 * receives posted. The client sends n messages of size bytes on every QP; with -b the server
 * sends as many back at the same time. -w: first, untimed, a stream of warm messages the same
 * way (the simulator's receive file is sparse memory: the first message into each of its data
 * regions, as many as messages in flight, pays its page faults). Without server_host it is the
 * server. Both sides take the same -s, -n, -w and -b (checked), each names its own devices, in the
 * same cable order. A stream starts on both sides together (a byte exchanged on the TCP side
 * channel) and each stops its clock when all it sent completed and all it awaited arrived, every
 * byte_len checked (the payload is not: the transport alone, as uc_pingpong -x). The client prints
 *   uc_stream: D cable(s), N x B B one way|each way: X MB/s
 * X = every byte received, both sides together, over the longer of the two times.
 * Exit 0, 1 on a failure (the verb or the wrong length is printed), 2 on usage.
 */
#include "../test/sim/examples/ex_common.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEVS 4

struct opts {
    char *devs[MAX_DEVS];
    int ndevs;
    const char *host;
    uint32_t size;
    uint32_t iters;
    uint32_t warm;
    uint32_t both;
    int port;
    uint32_t count; /* messages per cable of the phase running */
};

/* The client's request and each side's QPs, exchanged once. */
struct hello {
    uint32_t ndevs;
    uint32_t size;
    uint32_t iters;
    uint32_t warm;
    uint32_t both;
    struct ex_dest dest[MAX_DEVS];
};

/* One cable: its QP, one send and one receive slot, and the counts of the stream. */
struct lane {
    struct ex_conn c;
    uint8_t *sbuf;
    uint8_t *rbuf;
    struct ibv_mr *smr;
    struct ibv_mr *rmr;
    uint32_t sent;
    uint32_t send_done;
    uint32_t posted;
    uint32_t arrived;
};

static int usage(void)
{
    fprintf(stderr, "usage: uc_stream [-d dev[,dev...]] [-s size] [-n iters] [-w warm] [-b] "
                    "[-p tcp_port] [server_host]\n");
    return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
    int ch;

    *o = (struct opts){.size = 65536, .iters = 1000, .port = EX_TCP_PORT + 1};
    while (-1 != (ch = getopt(argc, argv, "d:s:n:w:p:bh"))) {
        if ('d' == ch) {
            for (char *d = strtok(optarg, ","); NULL != d && o->ndevs < MAX_DEVS;
                 d = strtok(NULL, ",")) {
                o->devs[o->ndevs++] = d;
            }
        } else if ('s' == ch) {
            o->size = (uint32_t) strtoul(optarg, NULL, 0);
        } else if ('n' == ch) {
            o->iters = (uint32_t) strtoul(optarg, NULL, 0);
        } else if ('w' == ch) {
            o->warm = (uint32_t) strtoul(optarg, NULL, 0);
        } else if ('p' == ch) {
            o->port = atoi(optarg);
        } else if ('b' == ch) {
            o->both = 1;
        } else {
            return -1;
        }
    }
    o->host = (optind < argc) ? argv[optind] : NULL;
    o->ndevs = o->ndevs ? o->ndevs : 1;
    return (0 == o->size || 0 == o->iters) ? -1 : 0;
}

/* The QP of one cable (NULL device name: the first device) and its two registered slots. */
static int lane_open(struct lane *l, const char *dev, uint32_t size)
{
    struct ibv_context *ctx;
    size_t slot = ((size_t) size + EX_FRAME - 1) / EX_FRAME * EX_FRAME;

    if (0 != ex_open_device(dev, &ctx)) {
        return -1;
    }
    if (0 != ex_find_gid(ctx, "auto", &l->c.gid_index, &l->c.gid)
        || 0 != ex_conn_setup(&l->c, ctx)) {
        l->c.ctx = ctx;
        return -1;
    }
    if (0 != posix_memalign((void **) &l->sbuf, EX_FRAME, slot)
        || 0 != posix_memalign((void **) &l->rbuf, EX_FRAME, slot)) {
        fprintf(stderr, "cannot allocate 2 x %zu bytes\n", slot);
        return -1;
    }
    memset(l->sbuf, 0xa5, slot);
    l->smr = ibv_reg_mr(l->c.pd, l->sbuf, slot, IBV_ACCESS_LOCAL_WRITE);
    l->rmr = (NULL != l->smr) ? ibv_reg_mr(l->c.pd, l->rbuf, slot, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (NULL == l->rmr) {
        perror("reg_mr");
        return -1;
    }
    return 0;
}

static void lane_close(struct lane *l)
{
    if (NULL != l->smr) {
        ibv_dereg_mr(l->smr);
    }
    if (NULL != l->rmr) {
        ibv_dereg_mr(l->rmr);
    }
    free(l->sbuf);
    free(l->rbuf);
    ex_conn_teardown(&l->c);
}

/* The side channel: the client's request adopted by the server, every QP connected. */
static int handshake(struct opts *o, struct lane *lanes, int *fd_p)
{
    struct hello mine = {o->ndevs, o->size, o->iters, o->warm, o->both, {{0}}};
    struct hello peer;

    for (int i = 0; i < o->ndevs; i++) {
        mine.dest[i].qpn = lanes[i].c.qp->qp_num;
        mine.dest[i].psn = EX_PSN;
        memcpy(mine.dest[i].gid, lanes[i].c.gid.raw, 16);
    }
    *fd_p = (NULL == o->host) ? ex_tcp_server(o->port) : ex_tcp_client(o->host, o->port);
    if (*fd_p < 0 || 0 != ex_xchg(*fd_p, &mine, &peer, sizeof(mine))) {
        return -1;
    }
    if (0 != memcmp(&mine, &peer, offsetof(struct hello, dest))) {
        fprintf(stderr,
                "the two sides differ: %d and %u cables, %u and %u x %u and %u B, -w %u and %u, "
                "-b %u and %u\n",
                o->ndevs, peer.ndevs, o->iters, peer.iters, o->size, peer.size, o->warm, peer.warm,
                o->both, peer.both);
        return -1;
    }
    for (int i = 0; i < o->ndevs; i++) {
        if (0 != ex_conn_connect(&lanes[i].c, &peer.dest[i])) {
            return -1;
        }
    }
    return 0;
}

/* Posts what a lane may: receives up to EX_DEPTH ahead, sends up to EX_DEPTH in flight. */
static int lane_post(struct lane *l, const struct opts *o, int sends, int recvs)
{
    while (recvs && l->posted < o->count && l->posted - l->arrived < EX_DEPTH) {
        if (0 != ex_post_recv(l->c.qp, l->rmr, l->rbuf, o->size, l->posted++)) {
            fprintf(stderr, "post_recv failed\n");
            return -1;
        }
    }
    while (sends && l->sent < o->count && l->sent - l->send_done < EX_DEPTH) {
        if (0 != ex_post_send(l->c.qp, l->smr, l->sbuf, o->size, l->sent++, NULL)) {
            fprintf(stderr, "post_send failed\n");
            return -1;
        }
    }
    return 0;
}

/* Takes a lane's completions: 1 if any, 0 if none, -1 on an error or a wrong length. */
static int lane_poll(struct lane *l, const struct opts *o)
{
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(l->c.cq, 16, wc);

    for (int k = 0; k < n; k++) {
        if (IBV_WC_SUCCESS != wc[k].status) {
            fprintf(stderr, "completion failed: %s\n", ibv_wc_status_str(wc[k].status));
            return -1;
        }
        if (IBV_WC_RECV == wc[k].opcode && wc[k].byte_len != o->size) {
            fprintf(stderr, "received %u B, expected %u B\n", wc[k].byte_len, o->size);
            return -1;
        }
        if (IBV_WC_RECV == wc[k].opcode) {
            l->arrived++;
        } else {
            l->send_done++;
        }
    }
    return n < 0 ? -1 : (n > 0);
}

/* The stream of this side until all it sent completed and all it awaited arrived; seconds. */
static double run(struct lane *lanes, const struct opts *o, int sends, int recvs)
{
    double t0 = ex_now(), last = t0;
    int left = 1;

    while (left) {
        left = 0;
        for (int i = 0; i < o->ndevs; i++) {
            struct lane *l = &lanes[i];
            int got = (0 == lane_post(l, o, sends, recvs)) ? lane_poll(l, o) : -1;

            if (got < 0) {
                return -1;
            }
            last = got ? ex_now() : last;
            left |= (sends && l->send_done < o->count) || (recvs && l->arrived < o->count);
        }
        if (left && ex_now() - last > ex_timeout_s()) {
            fprintf(stderr, "no completion within %.0f s\n", ex_timeout_s());
            return -1;
        }
    }
    return ex_now() - t0;
}

/* One stream of n messages per cable, started together once every receive is posted; its
 * seconds in *dt_p. */
static int phase(struct lane *lanes, struct opts *o, int fd, uint32_t n, double *dt_p)
{
    int client = (NULL != o->host), sends = client || o->both, recvs = !client || o->both;
    char go = 'g', peer_go = 0;

    o->count = n;
    for (int i = 0; i < o->ndevs; i++) {
        lanes[i].sent = lanes[i].send_done = lanes[i].posted = lanes[i].arrived = 0;
        if (0 != lane_post(&lanes[i], o, 0, recvs)) {
            return -1;
        }
    }
    if (0 != ex_xchg(fd, &go, &peer_go, 1)) {
        return -1;
    }
    *dt_p = run(lanes, o, sends, recvs);
    return *dt_p > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct lane lanes[MAX_DEVS];
    struct opts o;
    double dt = -1, peer_dt = -1;
    int fd = -1, rc = 1;

    memset(lanes, 0, sizeof(lanes));
    if (0 != parse(argc, argv, &o)) {
        return usage();
    }
    for (int i = 0; i < o.ndevs; i++) {
        if (0 != lane_open(&lanes[i], o.devs[i], o.size)) {
            goto close_lanes;
        }
    }
    if (0 != handshake(&o, lanes, &fd) || (o.warm && 0 != phase(lanes, &o, fd, o.warm, &dt))
        || 0 != phase(lanes, &o, fd, o.iters, &dt) || 0 != ex_xchg(fd, &dt, &peer_dt, sizeof(dt))
        || peer_dt <= 0) {
        goto close_lanes;
    }
    if (NULL != o.host) {
        double bytes = (double) o.size * o.iters * o.ndevs * (o.both ? 2 : 1);

        printf("uc_stream: %d cable(s), %u x %u B %s: %.2f MB/s\n", o.ndevs, o.iters, o.size,
               o.both ? "each way" : "one way", bytes / (dt > peer_dt ? dt : peer_dt) / 1e6);
    }
    rc = 0;
close_lanes:
    for (int i = 0; i < o.ndevs; i++) {
        lane_close(&lanes[i]);
    }
    if (fd >= 0) {
        close(fd);
    }
    return rc;
}
