/*
 * tb_agent_pair: test/agent/agent.sh's driver, run on each of two simulated Macs. It plays what
 * the ranks of a job will do with the per-Mac agent (plugin/agent): creates the job's segment
 * (core/tbrdma_agentseg.h), starts tbrdma-agent, asks it to GO, gives it the peer agent's queue
 * pairs (exchanged with the other Mac through files in --dir) and waits for its link; then forks
 * 2 local ranks. Local rank r exchanges frames with rank r of the other Mac through a vport
 * (core/tbrdma_vport.h): --frames 1-frame and --bulk 17-frame messages each way, every one a
 * sealed tbrdma frame (checksummed payload) whose payload names its host, rank, channel and
 * sequence, and checks each it receives (whole, in order, from the right sender).
 *
 * Faults: --kill-rank R --kill-after K SIGKILLs local rank R once it has received K frames and
 * writes DIR/HOST.rR.killed; --stop-file F --stop-ranks MASK makes the ranks of MASK end early
 * once F exists (the peer of a killed rank, or every rank after an agent was killed). A rank
 * whose agent's heartbeat stands still for 2 s ends, saying the agent died.
 *
 * Output: one line per rank ("rank R: complete ...", "stopped early ...", "killed ...", "the
 * agent died ...", "FAILED ..."); exit 0 unless a rank failed or the set-up did. Opal-free.
 */
#define _GNU_SOURCE /* POSIX_SPAWN_SETSID (glibc declares it only then) */

#include "base/btl_tbrdma_shmseg.h"
#include "base/btl_tbrdma_verbs.h"
#include "core/tbrdma_agentseg.h"
#include "core/tbrdma_route.h"
#include "core/tbrdma_vport.h"
#include "core/tbrdma_wire.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NRANKS      2
#define BULK_FRAMES 17
#define RX_EAGER    64 /* a rank's virtual receives per channel */
#define RX_BULK     16
#define TEXT_BYTES  64 /* the payload's naming text */
#define WAIT_S      30
#define DEADLINE_S  60 /* a rank that has not finished by then failed */
#define AGENT_QUIET_NS \
    2000000000ull /* heartbeat still this long: the agent died (as the rank side) */

#define R_COMPLETE 0
#define R_FAILED   1
#define R_STOPPED  2
#define R_NO_AGENT 3

typedef struct opts {
    const char *host, *peer, *dir, *agent, *lib, *device, *stop_file;
    uint32_t frames, bulk, stop_ranks;
    int kill_rank, kill_after;
} opts_t;

static opts_t o = {.frames = 2000, .bulk = 200, .kill_rank = -1};
static uint8_t *seg;
static size_t seg_bytes;
static tbrdma_agentseg_hdr_t *hdr;
static volatile uint64_t *progress; /* per rank: frames received (shared with the parent) */

static void say(const char *fmt, ...)
{
    char line[1024];
    int n = snprintf(line, sizeof(line), "tb_agent_pair %s: ", o.host);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t) n, fmt, ap);
    va_end(ap);
    printf("%s\n", line);
    fflush(stdout);
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static void nap_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

    nanosleep(&ts, NULL);
}

static int file_exists(const char *path)
{
    struct stat st;

    return NULL != path && 0 == stat(path, &st);
}

/* DIR/HOST.WHAT written whole (a temporary file, then a rename). 0 or -1. */
static int file_put(const char *host, const char *what, const char *text)
{
    char path[512], tmp[520];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s.%s", o.dir, host, what);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (NULL == f) {
        return -1;
    }
    fputs(text, f);
    return (0 == fclose(f) && 0 == rename(tmp, path)) ? 0 : -1;
}

/* DIR/HOST.WHAT's first line, waiting up to WAIT_S for it. 0 or -1. */
static int file_get(const char *host, const char *what, char *buf, size_t len)
{
    char path[512];
    uint64_t end = now_ns() + WAIT_S * 1000000000ull;

    snprintf(path, sizeof(path), "%s/%s.%s", o.dir, host, what);
    while (now_ns() < end) {
        FILE *f = fopen(path, "r");

        if (NULL != f) {
            char *got = fgets(buf, (int) len, f);

            fclose(f);
            if (NULL != got) {
                return 0;
            }
        }
        if (file_exists(o.stop_file)) {
            return -1;
        }
        nap_us(2000);
    }
    return -1;
}

/* ---- the payload ---------------------------------------------------------------------------- */

static uint32_t payload_len(uint8_t chan, uint32_t seq)
{
    uint32_t min = (TBRDMA_CHAN_EAGER == chan)
                       ? TEXT_BYTES
                       : (BULK_FRAMES - 1) * TBRDMA_FRAME_BYTES + 1 - TBRDMA_HDR_BYTES;
    uint32_t span = (TBRDMA_CHAN_EAGER == chan) ? TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES - min + 1
                                                : TBRDMA_FRAME_BYTES;

    return min + (seq * 2654435761u) % span;
}

static uint8_t payload_byte(uint32_t seed, uint32_t i)
{
    return (uint8_t) (seed + i * 7u + (i >> 8) * 13u);
}

static uint32_t payload_seed(const char *host, uint32_t r, uint8_t chan, uint32_t seq)
{
    uint32_t h = 2166136261u;

    for (const char *p = host; *p; p++) {
        h = (h ^ (uint8_t) *p) * 16777619u;
    }
    return h ^ (r * 0x9e3779b9u) ^ (chan * 0x85ebca6bu) ^ (seq * 0xc2b2ae35u);
}

/* Frame seq of chan from (o.host, rank r) to conn, into f. Its length. */
static uint32_t frame_build(uint8_t *f, uint32_t r, uint32_t conn, uint8_t chan, uint32_t seq)
{
    uint32_t plen = payload_len(chan, seq), seed = payload_seed(o.host, r, chan, seq);
    uint8_t *pl = f + TBRDMA_HDR_BYTES;
    tbrdma_hdr_t h = {.type = TBRDMA_MSG_DATA,
                      .flags = TBRDMA_HF_CSUM,
                      .chan = chan,
                      .conn = conn,
                      .seq = seq,
                      .len = plen};

    memset(pl, 0, TEXT_BYTES);
    snprintf((char *) pl, TEXT_BYTES, "from %s rank %u chan %u seq %u", o.host, r, chan, seq);
    for (uint32_t i = TEXT_BYTES; i < plen; i++) {
        pl[i] = payload_byte(seed, i);
    }
    h.pcrc = tbrdma_wire_payload_crc(f, plen);
    tbrdma_wire_seal(f, &h);
    return TBRDMA_HDR_BYTES + plen;
}

/* Whether frame f (len bytes, on chan) is seq from (o.peer, rank r) to conn. NULL or why not. */
static const char *frame_check(const uint8_t *f, uint32_t len, uint32_t r, uint32_t conn,
                               uint8_t chan, uint32_t seq)
{
    static char why[160];
    uint32_t seed = payload_seed(o.peer, r, chan, seq);
    char text[TEXT_BYTES];
    tbrdma_hdr_t h;
    tbrdma_frame_verdict_t v = tbrdma_wire_check(f, len, chan, conn, 1, &h);

    if (TBRDMA_FRAME_OK != v) {
        snprintf(why, sizeof(why), "chan %u frame %u: %s", chan, seq, tbrdma_wire_verdict_name(v));
        return why;
    }
    snprintf(text, sizeof(text), "from %s rank %u chan %u seq %u", o.peer, r, chan, seq);
    if (h.seq != seq || h.len != payload_len(chan, seq)
        || 0 != strcmp(text, (const char *) f + TBRDMA_HDR_BYTES)) {
        snprintf(why, sizeof(why), "chan %u: expected '%s', got seq %u: '%.60s'", chan, text, h.seq,
                 (const char *) f + TBRDMA_HDR_BYTES);
        return why;
    }
    for (uint32_t i = TEXT_BYTES; i < h.len; i++) {
        if (f[TBRDMA_HDR_BYTES + i] != payload_byte(seed, i)) {
            snprintf(why, sizeof(why), "chan %u frame %u: payload byte %u wrong", chan, seq, i);
            return why;
        }
    }
    return NULL;
}

/* ---- a rank --------------------------------------------------------------------------------- */

typedef struct rank {
    uint32_t r, conn, peer_conn;
    tbrdma_vport_t vp;
    int q[TBRDMA_NCHAN];
    uint8_t *rx[TBRDMA_NCHAN]; /* the virtual receives' buffers */
    uint8_t *tx;
    uint32_t sent[TBRDMA_NCHAN], done[TBRDMA_NCHAN], got[TBRDMA_NCHAN], want[TBRDMA_NCHAN];
    uint64_t beat, beat_seen; /* the agent's heartbeat, and when it last moved */
    const char *why;
} rank_t;

static uint32_t rx_bytes(uint8_t chan)
{
    return (TBRDMA_CHAN_EAGER == chan) ? TBRDMA_FRAME_BYTES : BULK_FRAMES * TBRDMA_FRAME_BYTES;
}

static int rank_post(rank_t *k, uint8_t chan, uint32_t i)
{
    return tbrdma_vport_post_recv(&k->vp, (uint32_t) k->q[chan], (uint64_t) chan << 32 | i,
                                  k->rx[chan] + (size_t) i * rx_bytes(chan), rx_bytes(chan));
}

/* The vport, its two virtual queue pairs with every receive posted, attached. 0 or -1. */
static int rank_open(rank_t *k, uint32_t r)
{
    uint32_t rnd, n[TBRDMA_NCHAN] = {RX_EAGER, RX_BULK};
    tbrdma_agentseg_rank_t *line;

    k->r = r;
    if (0 != tbrdma_vport_open(&k->vp, seg, seg_bytes, r, 4) || 0 != getentropy(&rnd, sizeof(rnd))
        || 0 != tbrdma_route_conn(r, rnd, &k->conn)) {
        return -1;
    }
    line = (tbrdma_agentseg_rank_t *) (seg + k->vp.plan.rank_off + r * k->vp.plan.rank_stride);
    k->tx = malloc(rx_bytes(TBRDMA_CHAN_BULK));
    for (uint8_t ch = 0; ch < TBRDMA_NCHAN; ch++) {
        k->q[ch] = tbrdma_vport_qp_create(&k->vp, k->conn, ch, 0, n[ch]);
        k->rx[ch] = malloc((size_t) n[ch] * rx_bytes(ch));
        if (k->q[ch] < 0 || NULL == k->rx[ch] || NULL == k->tx) {
            return -1;
        }
        for (uint32_t i = 0; i < n[ch]; i++) {
            if (0 != rank_post(k, ch, i)) {
                return -1;
            }
        }
    }
    atomic_store_explicit(&line->pid, (uint32_t) getpid(), memory_order_relaxed);
    atomic_store_explicit(&line->state, TBRDMA_AGENTSEG_RANK_ATTACHED, memory_order_release);
    return 0;
}

static void rank_detach(rank_t *k)
{
    tbrdma_agentseg_rank_t *line =
        (tbrdma_agentseg_rank_t *) (seg + k->vp.plan.rank_off + k->r * k->vp.plan.rank_stride);

    atomic_store_explicit(&line->state, TBRDMA_AGENTSEG_RANK_DETACHED, memory_order_release);
}

/* The next send, if any is left and a send slot is free. */
static void rank_send(rank_t *k)
{
    /* bulk frames spread among the eager ones */
    uint8_t ch =
        (k->sent[1] < o.bulk && (uint64_t) k->sent[1] * o.frames <= (uint64_t) k->sent[0] * o.bulk)
            ? TBRDMA_CHAN_BULK
            : TBRDMA_CHAN_EAGER;
    uint32_t len;

    if (k->sent[ch] >= k->want[ch]) {
        ch = !ch;
    }
    if (k->sent[ch] >= k->want[ch]) {
        return;
    }
    len = frame_build(k->tx, k->r, k->peer_conn, ch, k->sent[ch]);
    if (0 == tbrdma_vport_post_send(&k->vp, (uint32_t) k->q[ch], k->sent[ch], k->tx, len)) {
        k->sent[ch]++;
    }
}

/* One completion. 0, or -1 with k->why. */
static int rank_wc(rank_t *k, const tbrdma_vport_wc_t *wc)
{
    uint8_t ch = (uint8_t) (wc->wr_id >> 32);
    uint32_t i = (uint32_t) wc->wr_id;

    if (!wc->is_recv) {
        k->done[(wc->vqp == (uint32_t) k->q[1]) ? 1 : 0]++;
        k->why = (0 != wc->status) ? "a send completed with an error" : NULL;
        return (0 != wc->status) ? -1 : 0;
    }
    if (TBRDMA_VPORT_OK != wc->status) {
        k->why = "a receive completed with a length error";
        return -1;
    }
    k->why = frame_check(k->rx[ch] + (size_t) i * rx_bytes(ch), wc->byte_len, k->r, k->conn, ch,
                         k->got[ch]);
    if (NULL != k->why) {
        return -1;
    }
    k->got[ch]++;
    progress[k->r]++;
    return rank_post(k, ch, i);
}

/* R_NO_AGENT when the agent's heartbeat has stood still for AGENT_QUIET_NS, or it is gone. */
static int rank_agent_alive(rank_t *k, uint64_t now)
{
    uint64_t beat = atomic_load_explicit(&hdr->heartbeat, memory_order_relaxed);
    uint32_t st = atomic_load_explicit(&hdr->state, memory_order_acquire);

    if (beat != k->beat) {
        k->beat = beat;
        k->beat_seen = now;
    }
    return (now - k->beat_seen > AGENT_QUIET_NS || TBRDMA_AGENTSEG_READY != st) ? R_NO_AGENT : 0;
}

static int rank_finished(const rank_t *k)
{
    for (int ch = 0; ch < TBRDMA_NCHAN; ch++) {
        if (k->done[ch] < k->want[ch] || k->got[ch] < k->want[ch]) {
            return 0;
        }
    }
    return 1;
}

/* The exchange. R_COMPLETE, R_STOPPED, R_NO_AGENT or R_FAILED (k->why). */
static int rank_exchange(rank_t *k)
{
    uint64_t start = now_ns(), now = start;
    int stoppable = 0 != (o.stop_ranks & (1u << k->r));
    tbrdma_vport_wc_t wc[RX_BULK];

    k->beat_seen = start;
    for (uint32_t it = 0; !rank_finished(k); it++) {
        int n;

        rank_send(k);
        n = tbrdma_vport_poll(&k->vp, wc, RX_BULK); /* never more than the receives posted */
        if (n < 0) {
            k->why = "the agent handed over an impossible index";
            return R_FAILED;
        }
        for (int i = 0; i < n; i++) {
            if (0 != rank_wc(k, &wc[i])) {
                return R_FAILED;
            }
        }
        if (0 != n || 0 != (it & 255)) {
            continue;
        }
        now = now_ns();
        if (stoppable && file_exists(o.stop_file)) {
            return R_STOPPED;
        }
        if (rank_agent_alive(k, now)) {
            return R_NO_AGENT;
        }
        if (now - start > DEADLINE_S * 1000000000ull) {
            k->why = "timed out";
            return R_FAILED;
        }
        sched_yield();
    }
    return R_COMPLETE;
}

static int rank_main(uint32_t r)
{
    static const char *const verdict[] = {"complete", "FAILED", "stopped early", "the agent died"};
    char buf[64], what[32];
    rank_t k = {.want = {o.frames, o.bulk}};
    int rc = R_FAILED;

    snprintf(what, sizeof(what), "r%u.conn", r);
    if (0 != rank_open(&k, r)) {
        k.why = "cannot attach to the segment";
    } else if (snprintf(buf, sizeof(buf), "%u\n", k.conn),
               0 != file_put(o.host, what, buf) || 0 != file_get(o.peer, what, buf, sizeof(buf))) {
        k.why = "no connection id from the peer rank";
        rc = file_exists(o.stop_file) && (o.stop_ranks & (1u << r)) ? R_STOPPED : R_FAILED;
    } else {
        k.peer_conn = (uint32_t) strtoul(buf, NULL, 10);
        rc = rank_exchange(&k);
    }
    rank_detach(&k);
    say("rank %u: %s: sent %u+%u (done %u+%u), received %u+%u frames%s%s", r, verdict[rc],
        k.sent[0], k.sent[1], k.done[0], k.done[1], k.got[0], k.got[1],
        (R_FAILED == rc) ? ": " : ", all intact and in order",
        (R_FAILED == rc && k.why) ? k.why : "");
    return rc;
}

/* ---- the creator ---------------------------------------------------------------------------- */

/* The port of --device (or the first usable one): its GID, GID index and MTU. 0 or -1. */
static int port_find(tbrdma_port_info_t *port)
{
    static tbrdma_port_info_t ports[TBRDMA_MAX_PORTS];
    char err[512];
    int n = 0;

    if (0 != tbrdma_verbs_open(o.lib, err, sizeof(err))
        || 0 != tbrdma_verbs_discover(ports, TBRDMA_MAX_PORTS, &n, err, sizeof(err))) {
        say("verbs: %s", err);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if ((NULL == o.device || 0 == strcmp(o.device, ports[i].device))
            && ports[i].gid_index >= 0) {
            *port = ports[i];
            return 0;
        }
    }
    say("no usable port%s%s among %d", o.device ? " named " : "", o.device ? o.device : "", n);
    return -1;
}

/* The segment, laid out, with creator_pid and cable 0 filled. 0 or -1. */
static int seg_make(tbrdma_shmseg_t *s, const tbrdma_port_info_t *port)
{
    tbrdma_agentseg_geom_t g = {.nranks = NRANKS,
                                .ncables = 1,
                                .bulk_frames = BULK_FRAMES,
                                .tx_eager = 64,
                                .tx_bulk = 8,
                                .rx_eager = 2 * 48,
                                .rx_bulk = 2 * 16};
    tbrdma_agentseg_plan_t p;
    char name[TBRDMA_SHMSEG_NAME_MAX + 1], job[80], err[512];
    uint64_t token;

    snprintf(job, sizeof(job), "tb_agent_pair.%s", o.host);
    if (0 != tbrdma_agentseg_plan(&g, &p) || 0 != tbrdma_shmseg_token(&token)
        || 0 > tbrdma_shmseg_name(name, sizeof(name), job, token)) {
        say("cannot plan the segment");
        return -1;
    }
    if (0 != tbrdma_shmseg_create(s, name, p.total, err, sizeof(err))) {
        say("%s", err);
        return -1;
    }
    seg = s->base;
    seg_bytes = s->bytes;
    hdr = s->base;
    if (0 != tbrdma_agentseg_init(seg, seg_bytes, &p)) {
        say("cannot lay out segment %s", name);
        return -1;
    }
    hdr->creator_pid = (uint32_t) getpid();
    snprintf(hdr->cables[0].device, sizeof(hdr->cables[0].device), "%s", port->device);
    hdr->cables[0].port_num = (uint32_t) port->port_num;
    return 0;
}

/* tbrdma-agent, in a session of its own, as the rank side starts it. Its pid, or -1. */
static pid_t agent_spawn(const char *name)
{
    char *argv[] = {(char *) o.agent, "--segment", (char *) name, "--verbs-lib",
                    (char *) o.lib,   "--verbose", NULL};
    extern char **environ;
    posix_spawnattr_t attr;
    pid_t pid;
    int rc;

    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    rc = posix_spawn(&pid, o.agent, NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    if (0 != rc) {
        say("cannot start %s: %s", o.agent, strerror(rc));
        return -1;
    }
    return pid;
}

/* Waits up to WAIT_S for *word to leave `from`. Its value. */
static uint32_t await_change(_Atomic uint32_t *word, uint32_t from)
{
    uint64_t end = now_ns() + WAIT_S * 1000000000ull;
    uint32_t v;

    while (from == (v = atomic_load_explicit(word, memory_order_acquire)) && now_ns() < end) {
        nap_us(1000);
    }
    return v;
}

/* GO, READY, our queue pairs out and the peer's in, the link. 0 or -1. */
static int agent_link(const tbrdma_port_info_t *port)
{
    tbrdma_agentseg_cable_t *c = &hdr->cables[0];
    uint32_t none = TBRDMA_AGENTSEG_LINK_NONE;
    char buf[256], gid[40];
    unsigned q0, q1, psn;

    atomic_store_explicit(&hdr->request, TBRDMA_AGENTSEG_REQ_GO, memory_order_release);
    if (TBRDMA_AGENTSEG_READY != await_change(&hdr->state, TBRDMA_AGENTSEG_STARTING)) {
        say("the agent is not READY: %s", hdr->error[0] ? hdr->error : "no answer");
        return -1;
    }
    for (int i = 0; i < 16; i++) {
        snprintf(gid + 2 * i, 3, "%02x", port->gids[port->gid_index].raw[i]);
    }
    snprintf(buf, sizeof(buf), "%u %u %u %s\n", c->qpn[0], c->qpn[1], c->psn, gid);
    if (0 != file_put(o.host, "cable", buf) || 0 != file_get(o.peer, "cable", buf, sizeof(buf))
        || 4 != sscanf(buf, "%u %u %u %32s", &q0, &q1, &psn, gid)) {
        say("no queue pairs from the peer's agent");
        return -1;
    }
    if (!atomic_compare_exchange_strong(&c->link, &none, TBRDMA_AGENTSEG_LINK_CLAIMED)) {
        say("the link is claimed already");
        return -1;
    }
    c->peer_qpn[0] = q0;
    c->peer_qpn[1] = q1;
    c->peer_psn = psn;
    for (int i = 0; i < 16; i++) {
        sscanf(gid + 2 * i, "%2hhx", &c->peer_gid[i]);
    }
    c->sgid_index = port->gid_index;
    c->mtu = port->active_mtu;
    atomic_store_explicit(&c->link, TBRDMA_AGENTSEG_LINK_REQUESTED, memory_order_release);
    if (TBRDMA_AGENTSEG_LINK_CONNECTED != await_change(&c->link, TBRDMA_AGENTSEG_LINK_REQUESTED)) {
        say("the link did not connect: %s", hdr->error);
        return -1;
    }
    return 0;
}

/* Forks the ranks, SIGKILLs --kill-rank when due, reaps them. 0 unless a rank failed. */
static int ranks_run(void)
{
    pid_t pid[NRANKS];
    int left = NRANKS, failed = 0, killed = -1;

    for (uint32_t r = 0; r < NRANKS; r++) {
        pid[r] = fork();
        if (0 == pid[r]) {
            _exit(rank_main(r));
        }
    }
    while (left > 0) {
        int st, reaped = 0;

        for (uint32_t r = 0; r < NRANKS; r++) {
            /* each rank by its pid: the agent is a child too, and not ours to reap here */
            if (pid[r] > 0 && pid[r] == waitpid(pid[r], &st, WNOHANG)) {
                reaped = 1;
                left--;
                failed |= WIFSIGNALED(st) ? (int) r != killed : R_FAILED == WEXITSTATUS(st);
                pid[r] = 0;
            } else if ((int) r == o.kill_rank && killed < 0 && pid[r] > 0
                       && progress[r] >= (uint64_t) o.kill_after) {
                kill(pid[r], SIGKILL);
                say("rank %u: killed (SIGKILL) after %llu frames received", r,
                    (unsigned long long) progress[r]);
                file_put(o.host, r ? "r1.killed" : "r0.killed", "killed\n");
                killed = (int) r; /* its exit by signal is expected */
            }
        }
        if (!reaped) {
            nap_us(1000);
        }
    }
    return failed ? -1 : 0;
}

static int parse(int argc, char **argv)
{
    static const struct option lo[] = {{"host", 1, NULL, 'H'},      {"peer", 1, NULL, 'P'},
                                       {"dir", 1, NULL, 'd'},       {"agent", 1, NULL, 'a'},
                                       {"verbs-lib", 1, NULL, 'l'}, {"device", 1, NULL, 'D'},
                                       {"frames", 1, NULL, 'n'},    {"bulk", 1, NULL, 'b'},
                                       {"kill-rank", 1, NULL, 'k'}, {"kill-after", 1, NULL, 'K'},
                                       {"stop-file", 1, NULL, 's'}, {"stop-ranks", 1, NULL, 'S'},
                                       {NULL, 0, NULL, 0}};
    int c;

    while (-1 != (c = getopt_long(argc, argv, "", lo, NULL))) {
        switch (c) {
        case 'H':
            o.host = optarg;
            break;
        case 'P':
            o.peer = optarg;
            break;
        case 'd':
            o.dir = optarg;
            break;
        case 'a':
            o.agent = optarg;
            break;
        case 'l':
            o.lib = optarg;
            break;
        case 'D':
            o.device = optarg;
            break;
        case 'n':
            o.frames = (uint32_t) atoi(optarg);
            break;
        case 'b':
            o.bulk = (uint32_t) atoi(optarg);
            break;
        case 'k':
            o.kill_rank = atoi(optarg);
            break;
        case 'K':
            o.kill_after = atoi(optarg);
            break;
        case 's':
            o.stop_file = optarg;
            break;
        case 'S':
            o.stop_ranks = (uint32_t) strtoul(optarg, NULL, 0);
            break;
        default:
            return -1;
        }
    }
    return (o.host && o.peer && o.dir && o.agent && o.lib) ? 0 : -1;
}

int main(int argc, char **argv)
{
    tbrdma_shmseg_t s = {0};
    tbrdma_port_info_t port;
    pid_t agent;
    int rc = 1, st;
    char buf[32];

    if (0 != parse(argc, argv)) {
        fprintf(stderr, "usage: tb_agent_pair --host H --peer P --dir DIR --agent PATH "
                        "--verbs-lib PATH [--device DEV] [--frames N] [--bulk N] [--kill-rank R "
                        "--kill-after K] [--stop-file F --stop-ranks MASK]\n");
        return 2;
    }
    progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (MAP_FAILED == progress || 0 != port_find(&port) || 0 != seg_make(&s, &port)) {
        return 1;
    }
    agent = agent_spawn(s.name);
    snprintf(buf, sizeof(buf), "%d\n", (int) agent);
    if (agent > 0 && 0 == file_put(o.host, "agent.pid", buf) && 0 == agent_link(&port)) {
        say("agent %d READY, segment %s, link CONNECTED (qpn 0x%x 0x%x)", (int) agent, s.name,
            hdr->cables[0].qpn[0], hdr->cables[0].qpn[1]);
        fflush(stdout);
        rc = (0 == ranks_run()) ? 0 : 1;
    } else if (agent > 0) {
        atomic_store_explicit(&hdr->request, TBRDMA_AGENTSEG_REQ_QUIT, memory_order_release);
    }
    /* an agent that ended already (killed, failed) cannot remove the name: the creator does */
    s.creator = (agent <= 0 || agent == waitpid(agent, &st, WNOHANG));
    tbrdma_shmseg_detach(&s);
    return rc;
}
