/*
 * Two-host probes, part 2: timing (when a send completion fires, 64 B round trip, 64 KiB stream
 * bandwidth, MTU 1024 against 4096; measured, time-boxed, never judged: the verdicts rest on
 * the data arriving intact) and failures (the peer going away mid-stream, a port taken down
 * mid-stream, which needs --link-down).
 */
#include "probe.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define PP_SLOTS  8  /* receives kept posted by each side of the ping-pong */
#define PP_SIZE   64 /* ping-pong message */
#define PP_STOP   0xffffffffu
#define BW_MSG    65536 /* stream message */
#define BW_WIN    16    /* messages per batch; the receiver keeps 2 batches posted */
#define BW_LEN    ((size_t) 2 * BW_WIN * BW_MSG)
#define BW_LAST   0x80000000u
#define GONE_MSGS 20
#define DOWN_MSGS 10
#define ROCE_4096 4140 /* IP MTU a RoCE v2 packet of 4096 B needs: IP, UDP, BTH, payload, ICRC */

typedef struct pp_stats {
    int iters, bad;
    double rtt_us, cqe_us; /* averages: round trip; post to the send's own completion */
} pp_stats_t;

typedef struct bw_stats {
    int msgs, bad;
    double mbps;
    char why[64]; /* why the stream stopped early, "" when it did not */
} bw_stats_t;

/* The MTU 1024 figures of rtt-64 and bw-64k, for mtu-4096's comparison. */
static pp_stats_t pp_1024;
static bw_stats_t bw_1024;

static uint8_t *slot(probe_pair_t *p, int i)
{
    return p->buf + (size_t) i * PROBE_FRAME;
}

static void pp_write(uint8_t *b, uint32_t seq)
{
    memcpy(b, &seq, 4);
    pair_fill(b + 4, PP_SIZE - 4, seq);
}

/* Waits for one completion: 1 a receive (in *rwc), 2 a send, 0 at the deadline, < 0 error. */
static int pp_poll(probe_pair_t *p, struct ibv_wc *rwc, int *bad, double deadline)
{
    int n = pv_wait(p->cq, rwc, deadline);

    if (1 != n) {
        return n;
    }
    *bad += (IBV_WC_SUCCESS != rwc->status);
    return (rwc->opcode & IBV_WC_RECV) ? 1 : 2;
}

/* One round trip of seq; adds its times to st. 0 or -1 (timeout or error). */
static int pp_round(probe_pair_t *p, uint32_t seq, int *sends, pp_stats_t *st)
{
    double t0 = guard_now(), t_echo = 0, t_cqe = 0;
    int want = *sends + 1, echo = 0;
    struct ibv_wc wc;
    uint32_t got;

    pp_write(slot(p, PP_SLOTS), seq);
    if (0 != pv_send(p->qp, p->mr, slot(p, PP_SLOTS), PP_SIZE, seq, IBV_SEND_SIGNALED)) {
        return -1;
    }
    while (!echo || *sends < want) {
        int n = pp_poll(p, &wc, &st->bad, t0 + 2.0);

        if (n <= 0) {
            return -1;
        }
        if (2 == n) {
            t_cqe = (++*sends == want) ? guard_now() : t_cqe;
            continue;
        }
        echo = 1;
        t_echo = guard_now();
        memcpy(&got, slot(p, (int) wc.wr_id), 4);
        st->bad += (PP_SIZE != wc.byte_len || got != seq
                    || 0 != pair_check(slot(p, (int) wc.wr_id) + 4, PP_SIZE - 4, seq));
        pv_recv(p->qp, p->mr, slot(p, (int) wc.wr_id), PROBE_FRAME, wc.wr_id);
    }
    st->rtt_us += (t_echo - t0) * 1e6;
    st->cqe_us += (t_cqe - t0) * 1e6;
    return 0;
}

/* The client's side: up to iters round trips or secs seconds, then the stop message. */
static int pp_client(probe_env_t *env, probe_pair_t *p, int iters, double secs, pp_stats_t *st)
{
    double end = guard_now() + secs;
    int sends = 0;
    pp_stats_t stop;

    memset(st, 0, sizeof(*st));
    for (int i = 0; i < PP_SLOTS; i++) {
        pv_recv(p->qp, p->mr, slot(p, i), PROBE_FRAME, (uint64_t) i);
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return -1;
    }
    while (st->iters < iters && guard_now() < end && !guard_stopped()) {
        if (0 != pp_round(p, (uint32_t) st->iters, &sends, st)) {
            st->bad++;
            break;
        }
        st->iters++;
    }
    memset(&stop, 0, sizeof(stop));
    pp_round(p, PP_STOP, &sends, &stop);
    if (st->iters > 0) {
        st->rtt_us /= st->iters;
        st->cqe_us /= st->iters;
    }
    return 0;
}

/* The server's side: echoes every message until the stop message (or 2 s of silence). */
static void pp_server(probe_env_t *env, probe_pair_t *p)
{
    int bad = 0, n, sends = 0, posted = 0;
    struct ibv_wc wc;
    uint32_t seq = 0;

    for (int i = 0; i < PP_SLOTS; i++) {
        pv_recv(p->qp, p->mr, slot(p, i), PROBE_FRAME, (uint64_t) i);
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    while ((PP_STOP != seq || sends < posted)
           && 0 < (n = pp_poll(p, &wc, &bad, guard_now() + 2.0))) {
        if (2 == n) {
            sends++;
            continue;
        }
        memcpy(&seq, slot(p, (int) wc.wr_id), 4);
        memcpy(slot(p, PP_SLOTS + (int) (seq & 1)), slot(p, (int) wc.wr_id), PP_SIZE);
        pv_recv(p->qp, p->mr, slot(p, (int) wc.wr_id), PROBE_FRAME, wc.wr_id);
        posted += (0
                   == pv_send(p->qp, p->mr, slot(p, PP_SLOTS + (int) (seq & 1)), wc.byte_len, seq,
                              IBV_SEND_SIGNALED));
    }
}

/* ---- 64 KiB stream ---- */

static uint8_t *bslot(probe_pair_t *p, int i)
{
    return p->buf + (size_t) i * BW_MSG;
}

/* Sends one batch of BW_WIN messages from seq on; waits for their completions. */
static int bw_batch(probe_pair_t *p, uint32_t seq, int last, bw_stats_t *st)
{
    struct ibv_wc wc;
    int rc, n;

    for (int j = 0; j < BW_WIN; j++) {
        uint32_t s = seq + (uint32_t) j, tag = s | ((last && BW_WIN - 1 == j) ? BW_LAST : 0);
        uint8_t *b = bslot(p, (int) (s % (2 * BW_WIN)));

        memcpy(b, &tag, 4);
        memcpy(b + BW_MSG - 4, &s, 4);
        if (0 != (rc = pv_send(p->qp, p->mr, b, BW_MSG, s, IBV_SEND_SIGNALED))) {
            snprintf(st->why, sizeof(st->why), "a send could not be posted (errno %d)", rc);
            return -1;
        }
    }
    for (int j = 0; j < BW_WIN; j++) {
        if (1 != (n = pv_wait(p->cq, &wc, guard_now() + 5.0)) || IBV_WC_SUCCESS != wc.status) {
            snprintf(st->why, sizeof(st->why), "%s",
                     1 == n ? pv_wc_str(wc.status) : "no send completion in 5 s");
            return -1;
        }
    }
    return 0;
}

static int bw_client(probe_env_t *env, probe_pair_t *p, double secs, bw_stats_t *st)
{
    double t0, end = guard_now() + secs;
    int batches = 0, acked = 0, last = 0;
    probe_msg_t m;

    memset(st, 0, sizeof(*st));
    if (0 != chan_sync(env->fd, p->deadline)) {
        return -1;
    }
    t0 = guard_now();
    while (!last) {
        last = guard_now() >= end || batches >= 2047 || guard_stopped();
        if (batches - acked >= 2) { /* the receiver has the next batch's receives posted */
            if (0 != pair_hear(env, p, &m)) {
                return -1;
            }
            acked++;
            st->bad += m.b;
        }
        if (0 != bw_batch(p, (uint32_t) (batches * BW_WIN), last, st)) {
            st->bad++;
            break;
        }
        batches++;
    }
    while (acked < batches && 0 == pair_hear(env, p, &m)) {
        acked++;
        st->bad += m.b;
    }
    st->msgs = acked * BW_WIN;
    st->mbps = st->msgs * (double) BW_MSG / (guard_now() - t0) / 1e6;
    return (acked == batches) ? 0 : -1;
}

static void bw_server(probe_env_t *env, probe_pair_t *p)
{
    struct ibv_wc wc;
    uint32_t expect = 0, tag = 0, tail;
    int bad = 0;

    for (int i = 0; i < 2 * BW_WIN; i++) {
        pv_recv(p->qp, p->mr, bslot(p, i), BW_MSG, (uint64_t) i);
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    while (!(tag & BW_LAST) && 1 == pv_wait(p->cq, &wc, guard_now() + 5.0)) {
        memcpy(&tag, bslot(p, (int) wc.wr_id), 4);
        memcpy(&tail, bslot(p, (int) wc.wr_id) + BW_MSG - 4, 4);
        bad += (IBV_WC_SUCCESS != wc.status || BW_MSG != wc.byte_len || (tag & ~BW_LAST) != expect
                || tail != expect);
        pv_recv(p->qp, p->mr, bslot(p, (int) wc.wr_id), BW_MSG, wc.wr_id);
        if (0 == ++expect % BW_WIN) {
            pair_tell(env, (int) expect / BW_WIN, bad, 0, 0, NULL);
            bad = 0;
        }
    }
}

/* ---- the probes ---- */

static void rtt_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    pp_stats_t st;

    if (!pair_ok(p, r)) {
        return;
    }
    if (0 != pp_client(env, p, 1000, 1.0, &st) || 0 == st.iters) {
        result_untested(r, "the ping-pong did not complete");
        return;
    }
    pp_1024 = st;
    result_set(r, 0 == st.bad ? VERDICT_SAME : VERDICT_DIFFERS,
               "%d round trips of 64 B: %.2f us each (one-way %.2f us), %d bad echoes", st.iters,
               st.rtt_us, st.rtt_us / 2, st.bad);
}

static void bw_probe_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    bw_stats_t st;

    if (!pair_ok(p, r)) {
        return;
    }
    if (0 != bw_client(env, p, 1.0, &st)) {
        result_set(r, VERDICT_DIFFERS, "the stream stalled after %d messages of 64 KiB", st.msgs);
        return;
    }
    bw_1024 = st;
    result_set(r, 0 == st.bad ? VERDICT_SAME : VERDICT_DIFFERS,
               "%d messages of 64 KiB: %.1f MB/s (%.2f Gbit/s), %d out of order or damaged%s%s",
               st.msgs, st.mbps, st.mbps * 8e-3, st.bad, '\0' != st.why[0] ? "; stopped: " : "",
               st.why);
}

static void mtu_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    pp_stats_t pp;
    bw_stats_t bw;
    char then[96];

    if (!pair_ok(p, NULL)) {
        pair_refused(p, r, "path MTU 4096");
        return;
    }
    if (0 != pp_client(env, p, 1000, 1.0, &pp) || 0 != pair_again(env, p)
        || 0 != bw_client(env, p, 1.0, &bw)) {
        result_set(r, VERDICT_DIFFERS, "traffic stalled with path MTU 4096");
        return;
    }
    if (0 == pp_1024.iters || 0 == bw_1024.msgs) {
        snprintf(then, sizeof(then), "MTU 1024: not measured in this run (rtt-64, bw-64k)");
    } else {
        snprintf(then, sizeof(then), "MTU 1024 (rtt-64, bw-64k): %.2f us, %.1f MB/s",
                 pp_1024.rtt_us, bw_1024.mbps);
    }
    result_set(r, (0 == pp.bad && 0 == bw.bad) ? VERDICT_SAME : VERDICT_DIFFERS,
               "MTU 4096: 64 B round trip %.2f us, 64 KiB stream %.1f MB/s%s%s%s; %s; %d bad "
               "messages",
               pp.rtt_us, bw.mbps, '\0' != bw.why[0] ? " (stopped: " : "", bw.why,
               '\0' != bw.why[0] ? ")" : "", then, pp.bad + bw.bad);
}

static void rtt_server(probe_env_t *env, probe_pair_t *p)
{
    if (pair_ok(p, NULL)) {
        pp_server(env, p);
    }
}

static void bw_probe_server(probe_env_t *env, probe_pair_t *p)
{
    if (pair_ok(p, NULL)) {
        bw_server(env, p);
    }
}

static void mtu_server(probe_env_t *env, probe_pair_t *p)
{
    if (pair_ok(p, NULL)) {
        pp_server(env, p);
        if (0 == pair_again(env, p)) {
            bw_server(env, p);
        }
    }
}

/* When does a send complete: while the receiver is not polling, and against the round trip. */
static void cqe_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    struct ibv_wc wc;
    probe_msg_t m;
    pp_stats_t st;
    double t0, dt = -1;

    if (!pair_go(env, p, r)) {
        return;
    }
    pp_write(slot(p, PP_SLOTS), 1);
    t0 = guard_now();
    if (0 == pv_send(p->qp, p->mr, slot(p, PP_SLOTS), PP_SIZE, 1, IBV_SEND_SIGNALED)
        && 1 == pv_wait(p->cq, &wc, t0 + 2.0) && IBV_WC_SUCCESS == wc.status) {
        dt = guard_now() - t0;
    }
    if (0 != pair_hear(env, p, &m) || 0 != pp_client(env, p, 200, 0.5, &st)) {
        result_untested(r, "the side channel broke");
        return;
    }
    result_set(r,
               (dt >= 0 && dt < 0.25 && 1 == m.a && 0 == st.bad) ? VERDICT_SAME : VERDICT_DIFFERS,
               "a 64 B send %s %.0f us after posting while the receiver was not polling (it "
               "polled 0.3 s later: %s); over %d round trips: post to send completion %.2f us, "
               "half a round trip %.2f us",
               dt >= 0 ? "completed" : "had not completed", dt >= 0 ? dt * 1e6 : 2e6, m.text,
               st.iters, st.cqe_us, st.rtt_us / 2);
}

static void cqe_server(probe_env_t *env, probe_pair_t *p)
{
    struct ibv_wc wc;
    uint32_t seq = 0;
    int n;

    if (!pair_ok(p, NULL) || 0 != pv_recv(p->qp, p->mr, slot(p, 0), PROBE_FRAME, 0)
        || 0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    guard_sleep(0.3);
    n = pv_wait(p->cq, &wc, guard_now() + 2.0);
    memcpy(&seq, slot(p, 0), 4);
    n = (1 == n && IBV_WC_SUCCESS == wc.status && PP_SIZE == wc.byte_len && 1 == seq
         && 0 == pair_check(slot(p, 0) + 4, PP_SIZE - 4, 1));
    pair_tell(env, n, 0, 0, 0, n ? "arrived whole" : "not arrived whole");
    pp_server(env, p);
}

/* What a burst of sends gave: post failures, completions by status within the wait. */
typedef struct burst {
    int refused, ok, err;
    char first_err[48]; /* " (the first error status)", "" without an error */
} burst_t;

/* Sends n messages of 4 KiB; counts post failures, and completions within wait_s by status. */
static void burst(probe_pair_t *p, int n, double wait_s, burst_t *b)
{
    struct ibv_wc wc;
    int posted = 0;

    memset(b, 0, sizeof(*b));
    for (int i = 0; i < n; i++) {
        if (0
            != pv_send(p->qp, p->mr, slot(p, i % 16), PROBE_FRAME, (uint64_t) i,
                       IBV_SEND_SIGNALED)) {
            b->refused++;
        } else {
            posted++;
        }
    }
    for (double end = guard_now() + wait_s;
         b->ok + b->err < posted && 1 == pv_wait(p->cq, &wc, end);) {
        if (IBV_WC_SUCCESS == wc.status) {
            b->ok++;
        } else if (0 == b->err++) {
            snprintf(b->first_err, sizeof(b->first_err), " (%s)", pv_wc_str(wc.status));
        }
    }
}

static void gone_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    probe_msg_t m;
    burst_t b;

    if (!pair_go(env, p, r)) {
        return;
    }
    burst(p, GONE_MSGS, 5.0, &b);
    if (0 != pair_hear(env, p, &m)) {
        return;
    }
    burst(p, GONE_MSGS, 2.0, &b);
    result_set(r,
               (GONE_MSGS == m.a && 0 == b.refused && 0 == b.ok && 0 == b.err) ? VERDICT_SAME
                                                                               : VERDICT_DIFFERS,
               "%d of %d sends arrived, then the peer destroyed its queue pair: %d more sends "
               "posted (%d refused); within 2 s %d completed with success, %d with an error%s",
               m.a, GONE_MSGS, GONE_MSGS - b.refused, b.refused, b.ok, b.err, b.first_err);
}

static void gone_server(probe_env_t *env, probe_pair_t *p)
{
    struct ibv_wc wc;
    int got = 0;

    if (!pair_ok(p, NULL)) {
        return;
    }
    for (int i = 0; i < 2 * GONE_MSGS; i++) { /* credits for the sends after it went */
        pv_recv(p->qp, p->mr, slot(p, i), PROBE_FRAME, (uint64_t) i);
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    for (double end = guard_now() + 5.0; got < GONE_MSGS && 1 == pv_wait(p->cq, &wc, end);) {
        got += (IBV_WC_SUCCESS == wc.status);
    }
    res_drop_qp(p->qp); /* gone without a word, mid-stream */
    p->qp = NULL;
    pair_tell(env, got, 0, 0, 0, NULL);
}

/* The IP MTU of interface name, or -1. */
static int if_mtu(const char *name)
{
    struct ifreq ifr;
    int fd = socket(AF_INET, SOCK_DGRAM, 0), mtu = -1;

    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%.15s", name);
    if (fd >= 0 && 0 == ioctl(fd, SIOCGIFMTU, &ifr)) {
        mtu = ifr.ifr_mtu;
    }
    if (fd >= 0) {
        close(fd);
    }
    return mtu;
}

/* RoCE (Ethernet link layer) carries a 4096 B path MTU only on jumbo frames: without them
 * rxe's sends never complete and its kernel thread spins, so the probe does not try. */
static const char *mtu_precheck(probe_env_t *env)
{
    static char why[200];
    int mtu = if_mtu(env->port.ifname);

    if (TBRDMA_LINK_LAYER_ETHERNET == env->port.link_layer && mtu >= 0 && mtu < ROCE_4096) {
        snprintf(why, sizeof(why),
                 "RoCE: interface %s has MTU %d, below the %d B that path MTU 4096 needs (on "
                 "rxe the sends then never complete)",
                 env->port.ifname, mtu, ROCE_4096);
        return why;
    }
    return NULL;
}

static const char *down_precheck(probe_env_t *env)
{
    static char why[160];

    if (!env->link_down_ok) {
        snprintf(why, sizeof(why),
                 "needs --link-down (root): takes interface %s down for about 2 s",
                 '\0' != env->port.ifname[0] ? env->port.ifname : "?");
        return why;
    }
    if ('\0' == env->port.ifname[0]) {
        return "no network interface is paired with the device";
    }
    return NULL;
}

/* Port state of the device now. */
static int port_state(probe_env_t *env)
{
    struct ibv_port_attr a;

    memset(&a, 0, sizeof(a));
    return 0 == tbrdma_verbs_fn.query_port(env->ctx, 1, &a) ? (int) a.state : -1;
}

static void down_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    char err_text[160];
    int state, back = 0;
    burst_t b;
    double t_up;
    probe_msg_t m;

    if (!pair_go(env, p, r)) {
        return;
    }
    burst(p, DOWN_MSGS, 5.0, &b);
    if (0 != pair_hear(env, p, &m)) {
        return;
    }
    if (0 != guard_link_set(env->port.ifname, 0, err_text, sizeof(err_text))) {
        chan_sync(env->fd, p->deadline);
        pair_hear(env, p, &m);
        result_untested(r, "%s", err_text);
        return;
    }
    guard_sleep(0.2);
    state = port_state(env);
    burst(p, DOWN_MSGS, 2.0, &b);
    guard_link_set(env->port.ifname, 1, err_text, sizeof(err_text));
    t_up = guard_now();
    while (!(back = (IBV_PORT_ACTIVE == port_state(env))) && guard_now() < t_up + 10.0) {
        guard_sleep(0.05);
    }
    t_up = guard_now() - t_up;
    if (0 != chan_sync(env->fd, p->deadline + 15.0) || 0 != pair_hear(env, p, &m)) {
        return;
    }
    result_set(r,
               (IBV_PORT_DOWN == state && DOWN_MSGS == b.ok && 0 == m.a) ? VERDICT_SAME
                                                                         : VERDICT_DIFFERS,
               "%s down: port %s; %d sends: %d refused, %d completed with success, %d with an "
               "error%s, %d arrived; port %s %.1f s after the link came back",
               env->port.ifname, IBV_PORT_DOWN == state ? "DOWN" : "not DOWN", DOWN_MSGS, b.refused,
               b.ok, b.err, b.first_err, m.a, back ? "ACTIVE again" : "still not ACTIVE", t_up);
}

static void down_server(probe_env_t *env, probe_pair_t *p)
{
    struct ibv_wc wc;
    int got = 0;

    if (!pair_ok(p, NULL)) {
        return;
    }
    for (int i = 0; i < 2 * DOWN_MSGS; i++) {
        pv_recv(p->qp, p->mr, slot(p, i), PROBE_FRAME, (uint64_t) i);
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    for (double end = guard_now() + 5.0; got < DOWN_MSGS && 1 == pv_wait(p->cq, &wc, end);) {
        got += (IBV_WC_SUCCESS == wc.status);
    }
    pair_tell(env, got, 0, 0, 0, NULL);
    if (0 != chan_sync(env->fd, p->deadline + 15.0)) { /* the link went down and came back */
        return;
    }
    got = 0;
    for (double end = guard_now() + 1.0; 1 == pv_wait(p->cq, &wc, end);) {
        got++;
    }
    pair_tell(env, got, 0, 0, 0, NULL);
}

const probe_def_t probe_pair2_defs[] = {
    {"send-cqe", "pair",
     "no acks: a send completes once it leaves (a receive is posted), without waiting for the "
     "receiver to poll; a send completion does not mean delivery",
     "no acks", NULL, NULL, cqe_client, cqe_server, IBV_MTU_1024, 1, 16, 16 * PROBE_FRAME},
    {"rtt-64", "pair",
     "data intact; timing is not modelled (a third party measured about 8.3 us round trip at 64 B "
     "between Macs)",
     "UC send/recv data path between hosts, data intact", NULL, NULL, rtt_client, rtt_server,
     IBV_MTU_1024, 1, 16, 16 * PROBE_FRAME},
    {"bw-64k", "pair",
     "data intact and in order; timing is not modelled (a third party measured about 9.4 GB/s "
     "between Macs on one UC QP)",
     "UC send/recv data path between hosts, data intact", NULL, NULL, bw_probe_client,
     bw_probe_server, IBV_MTU_1024, 1, 2 * BW_WIN + 2, BW_LEN},
    {"mtu-4096", "pair",
     "path MTU 4096 is accepted like 1024 and has no effect on the data path (timing not "
     "modelled)",
     "PSNs, the LID and the MTU have no effect on the data path", NULL, mtu_precheck, mtu_client,
     mtu_server, IBV_MTU_4096, 1, 2 * BW_WIN + 2, BW_LEN},
    {"peer-gone", "pair",
     "the peer's queue pair goes away mid-stream: later sends wait for credits forever, no "
     "completion, no error",
     "sends wait forever for credits", NULL, NULL, gone_client, gone_server, IBV_MTU_1024, 1,
     2 * GONE_MSGS + 2, 2 * GONE_MSGS *PROBE_FRAME},
    {"port-down", "pair",
     "the port's interface taken down mid-stream: the port goes DOWN, sends complete with "
     "success and are lost",
     "sends on a port that went DOWN complete with success and are lost", NULL, down_precheck,
     down_client, down_server, IBV_MTU_1024, 1, 2 * DOWN_MSGS + 2, 2 * DOWN_MSGS *PROBE_FRAME},
};
const int probe_pair2_count = (int) (sizeof(probe_pair2_defs) / sizeof(probe_pair2_defs[0]));
