/*
 * Two-host probes, part 1: the framework (the client names a probe over the side channel, both
 * sides build and connect one UC queue pair with the probe's MTU, hop limit and depth, run
 * their halves, and release everything) and the probes of the data path's rules: message size,
 * the frame rule in both directions, a send with no receive posted, sends in flight, unsignaled
 * sends, the hop limit.
 */
#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PAIR_SMALL 64

const probe_def_t *pair_def(int index)
{
    if (index < probe_pair_count) {
        return &probe_pair_defs[index];
    }
    return (index < pair_count()) ? &probe_pair2_defs[index - probe_pair_count] : NULL;
}

int pair_count(void)
{
    return probe_pair_count + probe_pair2_count;
}

void pair_fill(uint8_t *buf, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (uint8_t) ((i * 131u) ^ (seed * 2654435761u) ^ (i >> 12));
    }
}

int pair_check(const uint8_t *buf, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != (uint8_t) ((i * 131u) ^ (seed * 2654435761u) ^ (i >> 12))) {
            return -1;
        }
    }
    return 0;
}

int pair_tell(probe_env_t *env, int a, int b, int c, int d, const char *text)
{
    probe_msg_t m;

    memset(&m, 0, sizeof(m));
    m.type = MSG_RESULT;
    m.a = a;
    m.b = b;
    m.c = c;
    m.d = d;
    snprintf(m.text, sizeof(m.text), "%s", NULL != text ? text : "");
    return chan_send(env->fd, &m);
}

int pair_hear(probe_env_t *env, probe_pair_t *p, probe_msg_t *m)
{
    return chan_recv(env->fd, m, MSG_RESULT, p->deadline + 5.0);
}

/* Local objects; the error of the first step that failed in p->err. */
static void pair_build(probe_env_t *env, const probe_def_t *def, probe_pair_t *p)
{
    struct ibv_device_attr attr;
    int cqe = 2 * def->depth + 2;

    memset(&attr, 0, sizeof(attr));
    if (0 == tbrdma_verbs_fn.query_device(env->ctx, &attr) && attr.max_cqe > 0
        && cqe > attr.max_cqe) {
        cqe = attr.max_cqe;
    }
    snprintf(p->step, sizeof(p->step), "setup");
    if (NULL == (p->pd = res_pd(env)) || NULL == (p->cq = res_cq(env, cqe))
        || NULL == (p->qp = pv_uc_qp(env, p->pd, p->cq, def->depth))
        || NULL == (p->mr = res_mr(p->pd, def->len, (void **) &p->buf))) {
        p->err = (0 != errno) ? errno : EIO;
        return;
    }
    p->len = def->len;
    p->err = pv_init(p->qp, 0);
    snprintf(p->step, sizeof(p->step), "%s", 0 != p->err ? "INIT" : "RTR/RTS");
}

/* Both sides: build, swap QP numbers and GIDs, connect, swap the outcome. 0 or -1 (channel). */
static int pair_setup(probe_env_t *env, const probe_def_t *def, probe_pair_t *p)
{
    probe_msg_t m, peer;

    memset(p, 0, sizeof(*p));
    p->def = def;
    p->deadline = guard_now() + env->bound_s;
    pair_build(env, def, p);
    memset(&m, 0, sizeof(m));
    m.type = MSG_QP;
    m.a = p->err;
    m.qpn = (NULL != p->qp) ? p->qp->qp_num : 0;
    memcpy(m.gid, env->port.gids[env->port.gid_index].raw, 16);
    if (0 != chan_send(env->fd, &m) || 0 != chan_recv(env->fd, &peer, MSG_QP, p->deadline)) {
        return -1;
    }
    p->peer_err = peer.a;
    if (0 == p->err && 0 == p->peer_err) {
        p->err = pv_connect(env, p->qp, peer.qpn, peer.gid, def->mtu, def->hop_limit);
    }
    if (0 != pair_tell(env, p->err, 0, 0, 0, NULL) || 0 != pair_hear(env, p, &peer)) {
        return -1;
    }
    if (0 == p->peer_err) {
        p->peer_err = peer.a;
    }
    return 0;
}

int pair_again(probe_env_t *env, probe_pair_t *p)
{
    const probe_def_t *def = p->def;
    double deadline = p->deadline;

    res_release_all();
    chan_set_epoch(chan_epoch() + 1);
    if (0 != pair_setup(env, def, p)) {
        return -1;
    }
    p->deadline = deadline + env->bound_s;
    return (0 == p->err && 0 == p->peer_err) ? 0 : -1;
}

void pair_client(probe_env_t *env, int index, const probe_def_t *def, probe_result_t *r)
{
    const char *why = (NULL != def->precheck) ? def->precheck(env) : NULL;
    probe_pair_t p;
    probe_msg_t m;

    if (NULL != why) {
        result_untested(r, "%s", why);
        return;
    }
    memset(&m, 0, sizeof(m));
    m.type = MSG_PROBE;
    m.a = index;
    chan_set_epoch((chan_epoch() | 0xff) + 1); /* a new probe */
    if (0 != chan_send(env->fd, &m) || 0 != pair_setup(env, def, &p)) {
        result_untested(r, "the side channel to %s broke", env->peer_name);
        return;
    }
    def->client(env, &p, r);
    res_release_all();
    chan_set_epoch(chan_epoch() + 1);
    chan_sync(env->fd, guard_now() + env->bound_s); /* the server released its side too */
}

int pair_serve(probe_env_t *env)
{
    for (;;) {
        const probe_def_t *def;
        probe_pair_t p;
        probe_msg_t m;

        if (0 != chan_recv(env->fd, &m, 0, guard_now() + 3600.0)) {
            return -1;
        }
        if (MSG_BYE == m.type) {
            return 0;
        }
        if (MSG_PROBE != m.type || NULL == (def = pair_def(m.a))) {
            return -1;
        }
        chan_set_epoch(m.epoch);
        fprintf(stderr, "tbrdma-fieldtest: serving %s\n", def->name);
        if (0 != pair_setup(env, def, &p)) {
            return -1;
        }
        def->server(env, &p);
        res_release_all();
        chan_set_epoch(chan_epoch() + 1);
        if (0 != chan_sync(env->fd, guard_now() + env->bound_s)) {
            return -1;
        }
    }
}

int pair_ok(const probe_pair_t *p, probe_result_t *r)
{
    char e[PROBE_ERRNO_STR];

    if (0 == p->err && 0 == p->peer_err) {
        return 1;
    }
    if (NULL != r) {
        result_untested(r, "%s failed %s: %s", p->step, 0 != p->err ? "here" : "at the peer",
                        pv_errstr(0 != p->err ? p->err : p->peer_err, e, sizeof(e)));
    }
    return 0;
}

void pair_refused(const probe_pair_t *p, probe_result_t *r, const char *what)
{
    char e[PROBE_ERRNO_STR];

    result_set(r, VERDICT_DIFFERS, "%s with %s fails %s: %s", p->step, what,
               0 != p->err ? "here" : "at the peer",
               pv_errstr(0 != p->err ? p->err : p->peer_err, e, sizeof(e)));
}

int pair_go(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    if (!pair_ok(p, r)) {
        return 0;
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        result_untested(r, "the side channel to %s broke", env->peer_name);
        return 0;
    }
    return 1;
}

/* ---- message size ---- */

static void max_msg_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    struct ibv_wc wc;
    probe_msg_t a, b;
    char e[PROBE_ERRNO_STR] = "accepted";
    int sent, rc;

    if (!pair_go(env, p, r)) {
        return;
    }
    pair_fill(p->buf, PROBE_MSG_MAX, 1);
    sent = (0 == pv_send(p->qp, p->mr, p->buf, PROBE_MSG_MAX, 1, IBV_SEND_SIGNALED)
            && 1 == pv_wait(p->cq, &wc, p->deadline) && IBV_WC_SUCCESS == wc.status);
    if (0 != pair_hear(env, p, &a)) {
        return;
    }
    rc = pv_send(p->qp, p->mr, p->buf, PROBE_MSG_MAX + 1, 2, IBV_SEND_SIGNALED);
    if (0 != rc) {
        pv_errstr(rc, e, sizeof(e));
    }
    if (0 != pair_tell(env, rc, 0, 0, 0, NULL) || 0 != pair_hear(env, p, &b)) {
        return;
    }
    result_set(r, (sent && 1 == a.a && EINVAL == rc) ? VERDICT_SAME : VERDICT_DIFFERS,
               "16,773,120 B: send %s, receive %s; 16,773,121 B: post %s%s%s",
               sent ? "ok" : "failed", a.text, e, 0 == rc ? ", receive " : "",
               0 == rc ? b.text : "");
}

/* Waits for one receive and describes it in text; 1 when it arrived whole with seed's data. */
static int pair_recv_one(probe_pair_t *p, uint32_t len, uint32_t seed, double wait_s, char *text,
                         size_t tlen)
{
    struct ibv_wc wc;
    int n = pv_wait(p->cq, &wc, guard_now() + wait_s);

    if (1 != n) {
        snprintf(text, tlen, "nothing arrived in %.1f s", wait_s);
        return 0;
    }
    if (IBV_WC_SUCCESS != wc.status) {
        snprintf(text, tlen, "completed with %s", pv_wc_str(wc.status));
        return 0;
    }
    if (wc.byte_len != len || 0 != pair_check(p->buf, len, seed)) {
        snprintf(text, tlen, "arrived with byte_len %u, data %s", wc.byte_len,
                 0 == pair_check(p->buf, wc.byte_len < len ? wc.byte_len : len, seed) ? "intact"
                                                                                      : "changed");
        return 0;
    }
    snprintf(text, tlen, "arrived whole");
    return 1;
}

static void max_msg_server(probe_env_t *env, probe_pair_t *p)
{
    char text[128];
    probe_msg_t m;
    int ok;

    if (!pair_ok(p, NULL) || 0 != pv_recv(p->qp, p->mr, p->buf, PROBE_MSG_MAX, 1)
        || 0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    ok = pair_recv_one(p, PROBE_MSG_MAX, 1, env->bound_s, text, sizeof(text));
    pair_tell(env, ok, 0, 0, 0, text);
    if (0 != pv_recv(p->qp, p->mr, p->buf, PROBE_MSG_MAX, 2) || 0 != pair_hear(env, p, &m)) {
        return;
    }
    if (0 == m.a) { /* the client's oversized send was accepted: does it arrive? */
        pair_recv_one(p, PROBE_MSG_MAX + 1, 1, 2.0, text, sizeof(text));
    }
    pair_tell(env, 0, 0, 0, 0, text);
}

/* ---- the frame rule: send def->len/2 bytes ... see frame_lens ---- */

/* (send length, receive length) of the two frame probes, by name. */
static void frame_lens(const probe_env_t *env, const probe_pair_t *p, uint32_t *send_p,
                       uint32_t *recv_p)
{
    (void) env;
    if (p->len > 2 * PROBE_FRAME) { /* frame-1into2: 100 B into 8192 B */
        *send_p = 100;
        *recv_p = 2 * PROBE_FRAME;
    } else { /* frame-2into1: 8192 B into 4096 B */
        *send_p = 2 * PROBE_FRAME;
        *recv_p = PROBE_FRAME;
    }
}

static void frame_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    uint32_t slen, rlen;
    struct ibv_wc wc;
    probe_msg_t m;
    int n;

    if (!pair_go(env, p, r)) {
        return;
    }
    frame_lens(env, p, &slen, &rlen);
    pair_fill(p->buf, slen, 3);
    n = (0 == pv_send(p->qp, p->mr, p->buf, slen, 3, IBV_SEND_SIGNALED))
            ? pv_wait(p->cq, &wc, guard_now() + 2.0)
            : -1;
    if (0 != pair_hear(env, p, &m)) {
        return;
    }
    result_set(r,
               (1 == n && IBV_WC_SUCCESS == wc.status && IBV_WC_LOC_LEN_ERR == m.a && 1 == m.b)
                   ? VERDICT_SAME
                   : VERDICT_DIFFERS,
               "%u B send into a %u B receive: receiver %s; sender %s", slen, rlen, m.text,
               1 == n ? pv_wc_str(wc.status) : (0 == n ? "no completion in 2 s" : "post failed"));
}

static void frame_server(probe_env_t *env, probe_pair_t *p)
{
    uint32_t slen, rlen;
    struct ibv_wc wc;
    char text[160];
    int n, untouched = 1;

    frame_lens(env, p, &slen, &rlen);
    memset(p->buf, 0xee, p->len);
    if (!pair_ok(p, NULL) || 0 != pv_recv(p->qp, p->mr, p->buf, rlen, 3)
        || 0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    n = pv_wait(p->cq, &wc, guard_now() + 2.0);
    for (size_t i = 0; i < p->len; i++) {
        untouched &= (0xee == p->buf[i]);
    }
    if (1 == n && IBV_WC_SUCCESS == wc.status) {
        snprintf(text, sizeof(text), "success, byte_len %u", wc.byte_len);
    } else {
        snprintf(text, sizeof(text), "%s, %s",
                 1 == n ? pv_wc_str(wc.status) : "no completion in 2 s",
                 untouched ? "no data written" : "data written");
    }
    pair_tell(env, 1 == n ? (int) wc.status : -1, untouched, 0, 0, text);
}

/* ---- a send with no receive posted ---- */

static void norecv_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    struct ibv_wc wc;
    probe_msg_t m;
    double t0;
    int early, late = 0;

    if (!pair_go(env, p, r)) {
        return;
    }
    pair_fill(p->buf, PAIR_SMALL, 5);
    t0 = guard_now();
    if (0 != pv_send(p->qp, p->mr, p->buf, PAIR_SMALL, 5, IBV_SEND_SIGNALED)) {
        result_untested(r, "the send could not be posted");
        return;
    }
    early = pv_wait(p->cq, &wc, t0 + 1.0);
    if (0 != chan_sync(env->fd, p->deadline)) { /* the peer now posts its receive */
        return;
    }
    if (0 == early) {
        late = pv_wait(p->cq, &wc, guard_now() + 2.0);
    }
    if (0 != pair_hear(env, p, &m)) {
        return;
    }
    result_set(r, (0 == early && 1 == late && 1 == m.a) ? VERDICT_SAME : VERDICT_DIFFERS,
               "send: %s%s; a receive posted 1 s later: %s",
               1 == early ? "completed at once, " : "no completion for 1 s",
               1 == early
                   ? pv_wc_str(wc.status)
                   : (1 == late ? ", then completed once the receive was posted" : ", nor after"),
               m.text);
}

static void norecv_server(probe_env_t *env, probe_pair_t *p)
{
    char text[128];
    int ok;

    if (!pair_ok(p, NULL) || 0 != chan_sync(env->fd, p->deadline) || 0 != guard_sleep(1.0)
        || 0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    if (0 != pv_recv(p->qp, p->mr, p->buf, PROBE_FRAME, 5)) {
        pair_tell(env, 0, 0, 0, 0, "could not be posted");
        return;
    }
    ok = pair_recv_one(p, PAIR_SMALL, 5, 2.0, text, sizeof(text));
    pair_tell(env, ok, 0, 0, 0, ok ? "the held message arrived whole" : text);
}

/* ---- sends in flight with no receive posted ---- */

static void sdepth_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    char e[PROBE_ERRNO_STR];
    int n = 0, rc = 0;

    if (!pair_go(env, p, r)) {
        return;
    }
    while (
        n < 4096 && !guard_stopped()
        && 0 == (rc = pv_send(p->qp, p->mr, p->buf, PAIR_SMALL, (uint64_t) n, IBV_SEND_SIGNALED))) {
        n++;
    }
    chan_sync(env->fd, p->deadline);
    if (0 == rc) {
        result_set(r, VERDICT_DIFFERS, "%d sends posted (max_send_wr 4095), none refused", n);
        return;
    }
    result_set(r, (63 == n && ENOMEM == rc) ? VERDICT_SAME : VERDICT_DIFFERS,
               "%d sends posted (max_send_wr 4095, no receive at the peer), the next fails with %s",
               n, pv_errstr(rc, e, sizeof(e)));
}

static void sdepth_server(probe_env_t *env, probe_pair_t *p)
{
    if (pair_ok(p, NULL) && 0 == chan_sync(env->fd, p->deadline)) {
        chan_sync(env->fd, p->deadline);
    }
}

/* ---- unsignaled sends ---- */

static void unsig_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    uint64_t ids[8];
    char list[64] = "";
    struct ibv_wc wc;
    probe_msg_t m;
    int n = 0, bad = 0;

    if (!pair_go(env, p, r)) {
        return;
    }
    bad |= pv_send(p->qp, p->mr, p->buf, PAIR_SMALL, 11, 0);
    bad |= pv_send(p->qp, p->mr, p->buf + PAIR_SMALL, PAIR_SMALL, 12, 0);
    bad |= pv_send(p->qp, p->mr, p->buf + 2 * PAIR_SMALL, PAIR_SMALL, 13, IBV_SEND_SIGNALED);
    for (double end = guard_now() + 1.0; n < 8 && 1 == pv_wait(p->cq, &wc, end);) {
        ids[n++] = wc.wr_id;
    }
    for (int i = 0; i < n; i++) {
        size_t off = strlen(list);

        snprintf(list + off, sizeof(list) - off, "%s%llu", i ? ", " : "",
                 (unsigned long long) ids[i]);
    }
    if (0 != pair_hear(env, p, &m)) {
        return;
    }
    result_set(r, (0 == bad && 1 == n && 13 == ids[0] && 3 == m.a) ? VERDICT_SAME : VERDICT_DIFFERS,
               "sends 11, 12 unsignaled and 13 signaled: completions for %s%s; %d of 3 arrived",
               0 == n ? "none" : "wr_id ", list, m.a);
}

static void unsig_server(probe_env_t *env, probe_pair_t *p)
{
    struct ibv_wc wc;
    int got = 0;

    if (!pair_ok(p, NULL)) {
        return;
    }
    for (int i = 0; i < 3; i++) {
        pv_recv(p->qp, p->mr, p->buf + (size_t) i * PROBE_FRAME, PROBE_FRAME, (uint64_t) i);
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    for (double end = guard_now() + 2.0; got < 3 && 1 == pv_wait(p->cq, &wc, end);) {
        got += (IBV_WC_SUCCESS == wc.status);
    }
    pair_tell(env, got, 0, 0, 0, NULL);
}

/* ---- GRH hop limit 64 ---- */

static void hop_client(probe_env_t *env, probe_pair_t *p, probe_result_t *r)
{
    struct ibv_wc wc;
    probe_msg_t m;

    if (!pair_ok(p, NULL)) {
        pair_refused(p, r, "hop limit 64");
        return;
    }
    if (0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    pair_fill(p->buf, PAIR_SMALL, 7);
    if (0 == pv_send(p->qp, p->mr, p->buf, PAIR_SMALL, 7, IBV_SEND_SIGNALED)) {
        pv_wait(p->cq, &wc, guard_now() + 2.0);
    }
    if (0 != pair_hear(env, p, &m)) {
        return;
    }
    result_set(r, 1 == m.a ? VERDICT_SAME : VERDICT_DIFFERS,
               "RTR with hop limit 64 accepted on both sides; a 64 B message %s", m.text);
}

static void hop_server(probe_env_t *env, probe_pair_t *p)
{
    char text[128];
    int ok;

    if (!pair_ok(p, NULL) || 0 != pv_recv(p->qp, p->mr, p->buf, PROBE_FRAME, 7)
        || 0 != chan_sync(env->fd, p->deadline)) {
        return;
    }
    ok = pair_recv_one(p, PAIR_SMALL, 7, 2.0, text, sizeof(text));
    pair_tell(env, ok, 0, 0, 0, text);
}

const probe_def_t probe_pair_defs[] = {
    {"max-msg", "pair",
     "a 16,773,120 B message (4095 frames) arrives whole; a 16,773,121 B send fails with EINVAL",
     "16,773,120 B", NULL, NULL, max_msg_client, max_msg_server, IBV_MTU_1024, 1, 8,
     PROBE_MSG_MAX + 1},
    {"frame-2into1", "pair",
     "a 2-frame send into a 1-frame receive: the receive completes with IBV_WC_LOC_LEN_ERR, no "
     "data written; the send succeeds",
     "frame rule: ceil(L/4096) frames must equal the receive's", NULL, NULL, frame_client,
     frame_server, IBV_MTU_1024, 1, 8, 2 * PROBE_FRAME},
    {"frame-1into2", "pair",
     "a 1-frame send (100 B) into a 2-frame receive: the receive completes with "
     "IBV_WC_LOC_LEN_ERR, no data written; the send succeeds",
     "frame rule: ceil(L/4096) frames must equal the receive's", NULL, NULL, frame_client,
     frame_server, IBV_MTU_1024, 1, 8, 3 * PROBE_FRAME},
    {"no-recv", "pair",
     "a send finding no posted receive waits (no completion, no error) and is delivered once "
     "a receive is posted",
     "credit flow control: a send waits for a posted receive", NULL, NULL, norecv_client,
     norecv_server, IBV_MTU_1024, 1, 8, PROBE_FRAME},
    {"send-depth", "pair",
     "with no receive at the peer, 63 sends are accepted in flight, the 64th fails with ENOMEM",
     "caps up to 4095 accepted", NULL, NULL, sdepth_client, sdepth_server, IBV_MTU_1024, 1, 4095,
     PROBE_FRAME},
    {"unsignaled", "pair", "only the signaled send gives a completion; all three arrive",
     "only signaled sends complete", NULL, NULL, unsig_client, unsig_server, IBV_MTU_1024, 1, 8,
     3 * PROBE_FRAME},
    {"hop-limit", "pair",
     "RTR with GRH hop limit 64 is accepted like 1 (not checked) and messages flow",
     "RTR/RTS/INIT attribute masks", NULL, NULL, hop_client, hop_server, IBV_MTU_1024, 64, 8,
     PROBE_FRAME},
};
const int probe_pair_count = (int) (sizeof(probe_pair_defs) / sizeof(probe_pair_defs[0]));
