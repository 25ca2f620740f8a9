/*
 * uc_pingpong: UC SEND/RECV between two hosts over plain verbs, with a TCP side channel for
 * the QPN/PSN/GID exchange (like ibv_uc_pingpong, shaped like Apple's device: UC, one SGE,
 * no inline, MTU 1024, sgid_index = the IPv4-mapped GID found by scanning).
 *
 *   uc_pingpong [-d dev] [-g gid_index|auto] [-s size] [-n iters] [-p tcp_port]
 *               [-r recv_size] [-m pingpong|stream] [-P] [-x] [-w warm] [server_host]
 *
 * Without server_host it is the server. The client's -s, -n and -m apply to both sides; -r
 * (the size of this side's receives, default -s) is local, to break the frame rule on purpose.
 * pingpong: round trips, prints latency and bandwidth (the means), then the least and the median
 * half round trip; each side checks every receive's byte_len
 * and the client checks that every echo holds all the bytes it sent (a pattern that changes with
 * the round, so stale bytes of an earlier round show).
 * stream: the client sends n messages (each carries its sequence number and a hash of all its
 * bytes); the server counts what arrived, what was corrupted (hash or byte_len wrong) and the
 * error completions, lists the sequence numbers that never arrived intact ("lost seq:"), and
 * both print the totals (used by the fault tests: a dropped message gives no error completion),
 * and the receive rate: bytes over the time from the first arrival to the last (what the cable
 * carried; the client's "MB/s sent" also counts the sends still on their way), and the same over
 * the second half of the arrivals (after a -P pause: what a changed link model allows), with
 * that half's first and last arrival on CLOCK_MONOTONIC (shared by every network namespace), so
 * a test can tell whether the second halves of several streams really ran at the same time.
 * -P (stream client): after half the messages, wait for a line on stdin, so a test can pull the
 * cable; (ping-pong client): after the last round trip, before its queue pair goes, so a test
 * can look at the simulator's state (tbsimctl held).
 * -x: no payload pattern, hash or content check (the bench: measures the transport, not the
 * check); byte_len is still checked.
 * -w (pingpong client): warm untimed round trips before the n timed ones (the simulator's
 * receive file is sparse memory: the first message into each of its data regions pays its page
 * faults).
 * Exit 0 on success, 1 on a failure (the failing verb and errno are printed), 2 on usage.
 */
#include "ex_common.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MSG_MAX  16773120
#define HDR_SIZE 16 /* stream messages: 8 B sequence number, 8 B hash */

struct opts {
    const char *dev;
    const char *gid;
    const char *host;
    uint32_t size;
    uint32_t rsize;
    uint32_t iters;
    uint32_t stream;
    int pause;
    uint32_t nocheck;
    uint32_t warm;
    int port;
};

/* The client's request, adopted by the server. */
struct hello {
    struct ex_dest dest;
    uint32_t size;
    uint32_t iters;
    uint32_t stream;
    uint32_t nocheck;
};

struct totals {
    uint32_t a;
    uint32_t b;
    uint32_t c;
    uint32_t pad;
    double rx_mbps;  /* server: MB/s from the first arrival to the last (0: fewer than 2) */
    double rx2_mbps; /* server: the same over the second half of the arrivals */
};

struct run {
    struct opts o;
    struct ex_conn c;
    int fd;
    size_t slot;
    uint32_t depth; /* buffer slots of each direction: EX_DEPTH, or fewer for fewer messages */
    uint8_t *sbuf;
    uint8_t *rbuf;
    struct ibv_mr *smr;
    struct ibv_mr *rmr;
    /*
     * Receive completions that arrived while only a send was awaited (one CQ serves both
     * queues and a provider may report them in either order: rxe reports the next round's
     * receive before this round's send), kept in order until a round asks for them.
     */
    uint32_t early_len[EX_DEPTH];
    unsigned early_head;
    unsigned early_count;
    uint8_t *arrived; /* stream server: one flag per sequence number that arrived intact */
    double t_first;   /* stream server: the first successful arrival, */
    double t_half;    /* the one that starts the second half (index iters / 2), */
    double t_last;    /* and the last */
};

static int usage(void)
{
    fprintf(stderr, "usage: uc_pingpong [-d dev] [-g gid_index|auto] [-s size] [-n iters] "
                    "[-p tcp_port] [-r recv_size] [-m pingpong|stream] [-P] [-x] [-w warm] "
                    "[server_host]\n");
    return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
    int ch;

    *o = (struct opts){.gid = "auto", .size = 64, .iters = 1000, .port = EX_TCP_PORT};
    while (-1 != (ch = getopt(argc, argv, "d:g:s:n:p:r:m:Pxw:h"))) {
        switch (ch) {
        case 'd':
            o->dev = optarg;
            break;
        case 'g':
            o->gid = optarg;
            break;
        case 's':
            o->size = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        case 'n':
            o->iters = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        case 'p':
            o->port = atoi(optarg);
            break;
        case 'r':
            o->rsize = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        case 'm':
            o->stream = (0 == strcmp(optarg, "stream")) ? 1 : 0;
            break;
        case 'x':
            o->nocheck = 1;
            break;
        case 'P':
            o->pause = 1;
            break;
        case 'w':
            o->warm = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        default:
            return -1;
        }
    }
    if (optind < argc) {
        o->host = argv[optind];
    }
    if (o->warm && (o->stream || NULL == o->host)) {
        return -1; /* warm-up rounds: the ping-pong client's */
    }
    o->iters += o->warm; /* the server is told every round, warm ones included */
    return (MSG_MAX < o->size || o->warm == o->iters) ? -1 : 0;
}

static uint64_t fnv64(const uint8_t *p, size_t len, uint64_t h)
{
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

static uint64_t msg_hash(const uint8_t *msg, uint32_t len)
{
    uint64_t h = fnv64(msg, 8, 0xcbf29ce484222325ull);

    return fnv64(msg + HDR_SIZE, len - HDR_SIZE, h);
}

static int wc_ok(const struct ibv_wc *wc, const char *what)
{
    if (IBV_WC_SUCCESS != wc->status) {
        fprintf(stderr, "%s completion failed: %s (status %d)\n", what,
                ibv_wc_status_str(wc->status), wc->status);
        return 0;
    }
    return 1;
}

static int wait_one(struct run *r, struct ibv_wc *wc)
{
    int n = ex_wait_wc_peer(r->c.cq, wc, ex_timeout_s(), r->fd);

    if (0 == n) {
        fprintf(stderr, "no completion within %.0f s (a UC peer that is gone never answers)\n",
                ex_timeout_s());
    }
    return (1 == n) ? 0 : -1;
}

static int buffers_setup(struct run *r)
{
    uint32_t rsize = r->o.rsize ? r->o.rsize : r->o.size;
    size_t biggest = (rsize > r->o.size) ? rsize : r->o.size;
    size_t total;

    r->slot = (biggest + EX_FRAME - 1) / EX_FRAME * EX_FRAME;
    if (0 == r->slot) {
        r->slot = EX_FRAME;
    }
    r->depth = (r->o.iters < EX_DEPTH) ? r->o.iters : EX_DEPTH;
    total = r->slot * r->depth;
    if (0 != posix_memalign((void **) &r->sbuf, EX_FRAME, total)
        || 0 != posix_memalign((void **) &r->rbuf, EX_FRAME, total)) {
        fprintf(stderr, "cannot allocate %zu bytes of buffers\n", 2 * total);
        return -1;
    }
    memset(r->sbuf, 0xa5, total);
    memset(r->rbuf, 0, total);
    r->arrived = calloc(r->o.iters, 1);
    if (NULL == r->arrived) {
        fprintf(stderr, "cannot allocate %u arrival flags\n", r->o.iters);
        return -1;
    }
    r->smr = ibv_reg_mr(r->c.pd, r->sbuf, total, IBV_ACCESS_LOCAL_WRITE);
    r->rmr = (NULL != r->smr) ? ibv_reg_mr(r->c.pd, r->rbuf, total, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (NULL == r->rmr) {
        fprintf(stderr, "reg_mr failed: %s (errno %d)\n", strerror(errno), errno);
        return -1;
    }
    return 0;
}

/* Message i's slot in the send and the receive buffer. */
static uint8_t *sbuf_at(const struct run *r, uint64_t i)
{
    return r->sbuf + (i % r->depth) * r->slot;
}

static uint8_t *rbuf_at(const struct run *r, uint64_t i)
{
    return r->rbuf + (i % r->depth) * r->slot;
}

static int recv_post(struct run *r, uint32_t i)
{
    uint32_t rsize = r->o.rsize ? r->o.rsize : r->o.size;
    int rc = ex_post_recv(r->c.qp, r->rmr, rbuf_at(r, i), rsize, i);

    if (0 != rc) {
        fprintf(stderr, "post_recv failed: %s (errno %d)\n", strerror(rc), rc);
    }
    return rc;
}

static int send_post(struct run *r, uint32_t i, uint32_t len)
{
    int rc = ex_post_send(r->c.qp, r->smr, sbuf_at(r, i), len, i, NULL);

    if (0 != rc) {
        fprintf(stderr, "post_send failed: %s (errno %d)\n", strerror(rc), rc);
    }
    return rc;
}

/* Keeps a receive completion that came before it was asked for. */
static int early_recv_keep(struct run *r, uint32_t len)
{
    if (EX_DEPTH == r->early_count) {
        fprintf(stderr, "more than %d receive completions arrived unasked\n", EX_DEPTH);
        return -1;
    }
    r->early_len[(r->early_head + r->early_count++) % EX_DEPTH] = len;
    return 0;
}

/* Takes the oldest kept receive completion, if any: 1 taken (length in *len_p), 0 none. */
static int early_recv_take(struct run *r, uint32_t *len_p)
{
    if (0 == r->early_count) {
        return 0;
    }
    *len_p = r->early_len[r->early_head];
    r->early_head = (r->early_head + 1) % EX_DEPTH;
    r->early_count--;
    return 1;
}

/*
 * Waits until the awaited send and/or receive of a round completed successfully. Completions
 * come in any order; a receive that nobody awaits yet is kept for the next round.
 */
static int round_wait(struct run *r, int want_send, int want_recv, uint32_t *len_p)
{
    struct ibv_wc wc;

    if (want_recv && early_recv_take(r, len_p)) {
        want_recv = 0;
    }
    while (want_send || want_recv) {
        if (0 != wait_one(r, &wc)) {
            return -1;
        }
        if (IBV_WC_RECV == wc.opcode) {
            if (!wc_ok(&wc, "receive")) {
                return -1;
            }
            if (want_recv) {
                *len_p = wc.byte_len;
                want_recv = 0;
            } else if (0 != early_recv_keep(r, wc.byte_len)) {
                return -1;
            }
        } else {
            if (!wc_ok(&wc, "send")) {
                return -1;
            }
            want_send = 0;
        }
    }
    return 0;
}

/* A receive of round i must be a whole message: byte_len the size both sides agreed. */
static int len_ok(struct run *r, uint32_t i, uint32_t len)
{
    if (len != r->o.size) {
        fprintf(stderr, "round %u: received %u B, expected %u B\n", i, len, r->o.size);
        return 0;
    }
    return 1;
}

/* Round i's message: the pattern from offset 131 * i (unless -x), then i in the first bytes. */
static void pingpong_fill(struct run *r, uint32_t i)
{
    uint8_t *s = sbuf_at(r, i);

    if (!r->o.nocheck) {
        ex_pattern_fill(s, r->o.size, 131u * i);
    }
    memcpy(s, &i, (r->o.size < sizeof(i)) ? r->o.size : sizeof(i));
}

/* The echo of round i holds every byte that round sent (unless -x). */
static int echo_ok(struct run *r, uint32_t i)
{
    const uint8_t *sent = sbuf_at(r, i);
    const uint8_t *echo = rbuf_at(r, i);

    for (uint32_t b = 0; !r->o.nocheck && b < r->o.size; b++) {
        if (echo[b] != sent[b]) {
            fprintf(stderr, "round %u: the echo differs from what was sent at byte %u of %u\n", i,
                    b, r->o.size);
            return 0;
        }
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a;
    double y = *(const double *) b;

    return (x > y) - (x < y);
}

/* The least and the median of the n half round trips (us); sorts them. */
static void half_rtt_report(double *half_us, uint32_t n)
{
    qsort(half_us, n, sizeof(*half_us), cmp_double);
    printf("uc_pingpong: half round trip min %.2f us, median %.2f us\n", half_us[0],
           half_us[n / 2]);
}

/* One round: the post of the ping to the echo's arrival, in half_us (the fill and check aside).
 * Not inlined: bench/instr_count.sh counts the instructions inside it. */
__attribute__((noinline)) static int pingpong_round(struct run *r, uint32_t i, double *half_us)
{
    uint32_t len = 0;
    double t;

    pingpong_fill(r, i);
    t = ex_now();
    if (0 != send_post(r, i, r->o.size) || 0 != round_wait(r, 1, 1, &len)) {
        return -1;
    }
    *half_us = 0.5e6 * (ex_now() - t);
    if (!len_ok(r, i, len) || !echo_ok(r, i)) {
        return -1;
    }
    if (i + 1 < r->o.iters && 0 != recv_post(r, i + 1)) {
        return -1;
    }
    return 0;
}

/* -P: waits for a line on stdin (a test reads the simulator's state meanwhile). */
static void pingpong_pause(const struct run *r)
{
    char line[16];

    if (r->o.pause) {
        printf("uc_pingpong: paused after %u round trips\n", r->o.iters);
        fflush(stdout);
        if (NULL == fgets(line, sizeof(line), stdin)) {
            fprintf(stderr, "stdin closed while paused\n");
        }
    }
}

/* The warm rounds first, untimed (-w), then the timed ones. */
static int pingpong_client(struct run *r)
{
    uint32_t timed = r->o.iters - r->o.warm;
    double *half_us = calloc(timed, sizeof(*half_us));
    double t0 = 0;
    double dt;
    double warm_us;
    int rc = -1;

    if (NULL == half_us) {
        fprintf(stderr, "cannot allocate %u round-trip times\n", timed);
        return -1;
    }
    if (0 != recv_post(r, 0)) {
        goto free_times;
    }
    for (uint32_t i = 0; i < r->o.iters; i++) {
        if (i == r->o.warm) {
            t0 = ex_now();
        }
        if (0 != pingpong_round(r, i, i < r->o.warm ? &warm_us : &half_us[i - r->o.warm])) {
            goto free_times;
        }
    }
    dt = ex_now() - t0;
    printf("uc_pingpong: %u iters of %u B: rtt %.2f us, latency %.2f us, bandwidth %.2f MB/s\n",
           timed, r->o.size, 1e6 * dt / timed, 0.5e6 * dt / timed,
           2.0 * r->o.size * timed / dt / 1e6);
    half_rtt_report(half_us, timed);
    if (!r->o.nocheck) {
        printf("uc_pingpong: every echo had byte_len %u and every byte sent\n", r->o.size);
    }
    pingpong_pause(r);
    rc = 0;
free_times:
    free(half_us);
    return rc;
}

static int pingpong_server(struct run *r)
{
    uint32_t len = 0;

    if (0 != recv_post(r, 0)) {
        return -1;
    }
    for (uint32_t i = 0; i < r->o.iters; i++) {
        uint8_t *s = sbuf_at(r, i);

        if (0 != round_wait(r, 0, 1, &len) || !len_ok(r, i, len)) {
            return -1;
        }
        memcpy(s, rbuf_at(r, i), len < r->slot ? len : r->slot);
        if (i + 1 < r->o.iters && 0 != recv_post(r, i + 1)) {
            return -1;
        }
        if (0 != send_post(r, i, r->o.size) || 0 != round_wait(r, 1, 0, &len)) {
            return -1;
        }
    }
    printf("uc_pingpong: server answered %u rounds of %u B\n", r->o.iters, r->o.size);
    return 0;
}

static void stream_fill(struct run *r, uint32_t i)
{
    uint8_t *m = sbuf_at(r, i);
    uint64_t seq = i;
    uint64_t h;

    memcpy(m, &seq, 8);
    if (r->o.nocheck) {
        return;
    }
    for (uint32_t b = HDR_SIZE; b < r->o.size; b++) {
        m[b] = (uint8_t) (b * 7 + i);
    }
    h = msg_hash(m, r->o.size);
    memcpy(m + 8, &h, 8);
}

/* -P: once half the messages completed, waits for a line on stdin (a test pulls a cable). */
static void stream_pause(struct run *r, uint32_t done, int *paused)
{
    char line[16];

    if (r->o.pause && !*paused && done == r->o.iters / 2) {
        printf("uc_pingpong: stream: paused after %u messages\n", done);
        fflush(stdout);
        if (NULL == fgets(line, sizeof(line), stdin)) {
            fprintf(stderr, "stdin closed while paused\n");
        }
        *paused = 1;
    }
}

/* The receive rates the server measured (see struct totals). */
static void rx_rate_print(const struct totals *t)
{
    printf("uc_pingpong: stream: %.2f MB/s received (first to last arrival), %.2f MB/s over the "
           "second half\n",
           t->rx_mbps, t->rx2_mbps);
}

static int stream_client(struct run *r)
{
    struct totals mine = {0};
    struct totals peer;
    uint32_t sent = 0;
    int paused = 0;
    struct ibv_wc wc;
    double t0 = ex_now();
    double dt;

    while (mine.b + mine.c < r->o.iters) {
        stream_pause(r, mine.b + mine.c, &paused);
        while (sent < r->o.iters && sent - (mine.b + mine.c) < r->depth
               && (!r->o.pause || paused || sent < r->o.iters / 2)) {
            stream_fill(r, sent);
            if (0 != send_post(r, sent, r->o.size)) {
                return -1;
            }
            sent++;
        }
        if (0 != wait_one(r, &wc)) {
            return -1;
        }
        if (IBV_WC_SUCCESS == wc.status) {
            mine.b++;
        } else {
            mine.c++;
        }
    }
    dt = ex_now() - t0;
    mine.a = sent;
    if (0 != ex_xchg(r->fd, &mine, &peer, sizeof(mine))) {
        return -1;
    }
    printf("uc_pingpong: stream: sent %u, send completions %u success %u error; peer received "
           "%u, corrupted %u, error completions %u; %.2f MB/s sent\n",
           mine.a, mine.b, mine.c, peer.a, peer.b, peer.c, (double) sent * r->o.size / dt / 1e6);
    rx_rate_print(&peer);
    return 0;
}

/* Arrival k (from 0) at time now: the first, the start of the second half, the last. */
static void stream_time(struct run *r, uint32_t k, double now)
{
    if (0 == k) {
        r->t_first = now;
    }
    if (r->o.iters / 2 == k) {
        r->t_half = now;
    }
    r->t_last = now;
}

/* MB/s of the arrivals from..to (indexes, inclusive) over the time between them; 0 if none. */
static double rx_rate(const struct run *r, uint32_t from, uint32_t to, double t0, double t1)
{
    return (to > from && t1 > t0) ? (double) (to - from) * r->o.size / (t1 - t0) / 1e6 : 0.0;
}

static void stream_count(struct run *r, const struct ibv_wc *wc, struct totals *t)
{
    const uint8_t *m = rbuf_at(r, wc->wr_id);
    uint64_t seq;
    uint64_t h;

    if (IBV_WC_SUCCESS != wc->status) {
        t->c++;
        return;
    }
    stream_time(r, t->a, ex_now());
    t->a++;
    memcpy(&h, m + 8, 8);
    if (wc->byte_len != r->o.size || (!r->o.nocheck && h != msg_hash(m, r->o.size))) {
        t->b++;
        return;
    }
    memcpy(&seq, m, 8);
    if (seq < r->o.iters) {
        r->arrived[seq] = 1;
    }
}

/* The sequence numbers that never arrived intact, on one line. */
static void stream_print_lost(struct run *r, uint32_t sent)
{
    uint32_t lost = 0;

    printf("uc_pingpong: stream: lost seq:");
    for (uint32_t i = 0; i < sent && i < r->o.iters; i++) {
        if (!r->arrived[i]) {
            printf(" %u", i);
            lost++;
        }
    }
    printf("%s (%u)\n", (0 == lost) ? " none" : "", lost);
}

/* Whether the client's totals arrived on the side channel (checked without blocking). */
static int stream_peer_done(struct run *r, struct totals *peer)
{
    if (sizeof(*peer) != recv(r->fd, peer, sizeof(*peer), MSG_DONTWAIT | MSG_PEEK)) {
        return 0;
    }
    return sizeof(*peer) == read(r->fd, peer, sizeof(*peer));
}

/* The server's totals: to the client, and printed with the lost sequence numbers. */
static int stream_report(struct run *r, struct totals *mine, const struct totals *peer)
{
    if (0 < mine->a) {
        mine->rx_mbps = rx_rate(r, 0, mine->a - 1, r->t_first, r->t_last);
        mine->rx2_mbps = rx_rate(r, r->o.iters / 2, mine->a - 1, r->t_half, r->t_last);
    }
    if (sizeof(*mine) != write(r->fd, mine, sizeof(*mine))) {
        fprintf(stderr, "side channel write failed: %s\n", strerror(errno));
        return -1;
    }
    printf("uc_pingpong: stream: received %u of %u, corrupted %u, error completions %u\n", mine->a,
           peer->a, mine->b, mine->c);
    rx_rate_print(mine);
    if (0 < mine->a) {
        printf("uc_pingpong: stream: second half from %.6f to %.6f s (CLOCK_MONOTONIC)\n",
               r->t_half, r->t_last);
    }
    stream_print_lost(r, peer->a);
    return 0;
}

/* Counts arrivals until the client's totals came and nothing arrived for a moment. */
static int stream_server(struct run *r)
{
    uint32_t rsize = r->o.rsize ? r->o.rsize : r->o.size;
    struct totals mine = {0};
    struct totals peer;
    double idle_since = ex_now();
    int have_peer = 0;
    unsigned empty = 0;
    struct ibv_wc wc;

    for (uint32_t i = 0; i < r->depth; i++) {
        if (0 != recv_post(r, i)) {
            return -1;
        }
    }
    for (;;) {
        int n = ibv_poll_cq(r->c.cq, 1, &wc);

        if (n < 0) {
            fprintf(stderr, "poll_cq failed: %d\n", n);
            return -1;
        }
        if (1 == n) {
            stream_count(r, &wc, &mine);
            if (0
                != ex_post_recv(r->c.qp, r->rmr, rbuf_at(r, wc.wr_id), rsize,
                                wc.wr_id + r->depth)) {
                fprintf(stderr, "post_recv failed\n");
                return -1;
            }
            idle_since = ex_now();
            continue;
        }
        if (0 != (++empty & 0x3ff)) {
            continue; /* look at the side channel (a system call) only now and then */
        }
        if (!have_peer && (have_peer = stream_peer_done(r, &peer))) {
            idle_since = ex_now();
        }
        if (ex_now() - idle_since > (have_peer ? 0.2 : 3 * ex_timeout_s())) {
            break;
        }
    }
    if (!have_peer) {
        fprintf(stderr, "stream: the client went silent for %.0f s\n", 3 * ex_timeout_s());
        return -1;
    }
    return stream_report(r, &mine, &peer);
}

static int handshake(struct run *r)
{
    struct hello mine;
    struct hello peer;

    memset(&mine, 0, sizeof(mine));
    mine.dest.qpn = r->c.qp->qp_num;
    mine.dest.psn = EX_PSN;
    memcpy(mine.dest.gid, r->c.gid.raw, 16);
    mine.size = r->o.size;
    mine.iters = r->o.iters;
    mine.stream = r->o.stream;
    mine.nocheck = r->o.nocheck;
    r->fd = (NULL == r->o.host) ? ex_tcp_server(r->o.port) : ex_tcp_client(r->o.host, r->o.port);
    if (r->fd < 0 || 0 != ex_xchg(r->fd, &mine, &peer, sizeof(mine))) {
        return -1;
    }
    if (NULL == r->o.host) {
        r->o.size = peer.size;
        r->o.iters = peer.iters;
        r->o.stream = peer.stream;
        r->o.nocheck = peer.nocheck;
    }
    if (r->o.stream && r->o.size < HDR_SIZE) {
        fprintf(stderr, "stream mode needs -s >= %d\n", HDR_SIZE);
        return -1;
    }
    if (0 != buffers_setup(r) || 0 != ex_conn_connect(&r->c, &peer.dest)) {
        return -1;
    }
    return 0;
}

static int sync_peer(struct run *r)
{
    char out = 's';
    char in = 0;

    return ex_xchg(r->fd, &out, &in, 1);
}

int main(int argc, char **argv)
{
    struct run r;
    struct ibv_context *ctx;
    int rc = -1;

    memset(&r, 0, sizeof(r));
    r.fd = -1;
    if (0 != parse(argc, argv, &r.o)) {
        return usage();
    }
    if (0 != ex_open_device(r.o.dev, &ctx)) {
        return 1;
    }
    if (0 != ex_find_gid(ctx, r.o.gid, &r.c.gid_index, &r.c.gid) || 0 != ex_conn_setup(&r.c, ctx)
        || 0 != handshake(&r) || 0 != sync_peer(&r)) {
        goto out;
    }
    if (r.o.stream) {
        rc = (NULL == r.o.host) ? stream_server(&r) : stream_client(&r);
    } else {
        rc = (NULL == r.o.host) ? pingpong_server(&r) : pingpong_client(&r);
    }
    if (0 == rc) {
        rc = sync_peer(&r);
    }
out:
    if (NULL != r.smr) {
        ibv_dereg_mr(r.smr);
    }
    if (NULL != r.rmr) {
        ibv_dereg_mr(r.rmr);
    }
    free(r.arrived);
    r.c.ctx = ctx;
    ex_conn_teardown(&r.c);
    if (r.fd >= 0) {
        close(r.fd);
    }
    return (0 == rc) ? 0 : 1;
}
