/*
 * tbrdma-agent: the per-Mac agent of one job (agent/agent.h; docs/design.md, "Many ranks per
 * Mac: a per-Mac agent"). A local rank creates the job's segment and starts it, in a session of
 * its own:
 *
 *   tbrdma-agent --segment NAME --verbs-lib PATH [--ledger-dir DIR --host HOST --job JOB]
 *                [--verbose]
 *
 * It attaches the segment, says its pid, and waits (heartbeat every 10 ms) for the request: GO
 * opens the cables (state READY, or FAILED with one line in the header's error), QUIT or the
 * creator's exit ends it at once. Then it switches frames until every process it watched (the
 * creator and each rank that attached) is gone or detached, QUIT, or SIGTERM/SIGINT/SIGHUP; it
 * then releases every queue pair and memory region, marks the segment GONE and removes its name.
 * With --ledger-dir it keeps a slot ledger record (base/btl_tbrdma_ledger.h) of its queue pairs
 * while it holds them, as a rank of the direct path does: an agent killed with SIGKILL leaves
 * them held (Apple), and the record names them to the next job, tbrdma-info and the doctor.
 *
 * Exit codes: 0 done, 1 failed (the header's error says why, when the segment could be read),
 * 2 usage.
 */
#include "agent/agent.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AGENT_EXIT_OK     0
#define AGENT_EXIT_FAILED 1
#define AGENT_EXIT_USAGE  2

typedef struct agent_opts {
    const char *segment;
    const char *verbs_lib;
    const char *ledger_dir, *host, *job; /* the slot ledger: where, and who this is */
    int verbose;
} agent_opts_t;

static const struct option longopts[] = {
    {"segment", required_argument, NULL, 's'},
    {"verbs-lib", required_argument, NULL, 'l'},
    {"ledger-dir", required_argument, NULL, 'd'},
    {"host", required_argument, NULL, 'H'},
    {"job", required_argument, NULL, 'j'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tbrdma-agent --segment NAME --verbs-lib PATH [--verbose]\n"
                 "  -s, --segment NAME    the job's shared memory segment (made by a local rank)\n"
                 "  -l, --verbs-lib PATH  the verbs library to load (\"\": the platform's)\n"
                 "  -d, --ledger-dir DIR  keep a slot ledger record there (\"\": none)\n"
                 "  -H, --host HOST       this Mac's name in the record (default: hostname)\n"
                 "  -j, --job JOB         the job's name in the record\n"
                 "  -v, --verbose         say when ranks come and go, and the counters at exit\n"
                 "  -h, --help            this text\n");
}

/* 0, or AGENT_EXIT_USAGE (said). -1 for --help. */
static int parse_args(int argc, char **argv, agent_opts_t *o)
{
    int ch;

    while (-1 != (ch = getopt_long(argc, argv, "s:l:d:H:j:vh", longopts, NULL))) {
        switch (ch) {
        case 's':
            o->segment = optarg;
            break;
        case 'l':
            o->verbs_lib = optarg;
            break;
        case 'd':
            o->ledger_dir = optarg;
            break;
        case 'H':
            o->host = optarg;
            break;
        case 'j':
            o->job = optarg;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return AGENT_EXIT_USAGE;
        }
    }
    if (optind != argc || NULL == o->segment || NULL == o->verbs_lib) {
        usage(stderr);
        return AGENT_EXIT_USAGE;
    }
    return 0;
}

static void on_stop(int sig)
{
    (void) sig;
    agent_stop = 1;
}

static void signals_install(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL); /* the ranks' output pipes may close before the agent */
}

static void agent_init(agent_t *a, int verbose)
{
    memset(a, 0, sizeof(*a));
    a->verbose = verbose;
    a->creator.fd = -1;
    for (uint32_t r = 0; r < TBRDMA_ROUTE_RANKS; r++) {
        a->ranks[r].watch.fd = -1;
    }
    if (0 != gethostname(a->host, sizeof(a->host) - 1)) {
        snprintf(a->host, sizeof(a->host), "?");
    }
}

/* The counters, one line (--verbose). */
static void agent_counters(const agent_t *a)
{
    const agent_counters_t *c = &a->c;

    agent_say(a,
              "switched %llu frames; dropped short %llu, bad header %llu, no rank %llu, "
              "agent's %llu; receive errors %llu; sends %llu (failed %llu, refused %llu, "
              "of ranks gone %llu); ranks attached %llu, left %llu, broken %llu; "
              "receive slots home %u of %u",
              (unsigned long long) c->switched, (unsigned long long) c->dropped[TBRDMA_ROUTE_SHORT],
              (unsigned long long) c->dropped[TBRDMA_ROUTE_BAD_HDR],
              (unsigned long long) c->dropped[TBRDMA_ROUTE_NO_RANK],
              (unsigned long long) c->dropped[TBRDMA_ROUTE_TO_AGENT],
              (unsigned long long) c->rx_errors, (unsigned long long) c->sends,
              (unsigned long long) c->send_errors, (unsigned long long) c->refused,
              (unsigned long long) c->sends_dropped, (unsigned long long) c->ranks_attached,
              (unsigned long long) c->ranks_left, (unsigned long long) c->ranks_broken,
              agent_rx_home_count(a), a->plan.g.rx_eager + a->plan.g.rx_bulk);
}

/* The slot ledger's record of the agent's queue pairs (2 per cable), when asked for one. */
static void agent_ledger_write(const agent_t *a, const agent_opts_t *o)
{
    const char *devs[TBRDMA_MAX_PORTS];
    int qps[TBRDMA_MAX_PORTS], rc;
    char path[512];

    if (NULL == o->ledger_dir || '\0' == o->ledger_dir[0]) {
        return;
    }
    for (uint32_t k = 0; k < a->plan.g.ncables; k++) {
        devs[k] = a->hdr->cables[k].device;
        qps[k] = TBRDMA_NCHAN;
    }
    rc = tbrdma_ledger_file_write(o->ledger_dir, NULL != o->host ? o->host : a->host,
                                  NULL != o->job ? o->job : "?", devs, qps, (int) a->plan.g.ncables,
                                  path, sizeof(path));
    if (0 != rc) {
        agent_say(a, "slot ledger %s: not written: %s", path, strerror(rc));
    }
}

/* GO: the cables, READY, the switch. The exit code. */
static int agent_go(agent_t *a, const agent_opts_t *o)
{
    char err[AGENT_ERR_MAX];
    int rc;

    if (0 != agent_cables_open(a, err, sizeof(err))) {
        agent_seg_fail(a, err);
        return AGENT_EXIT_FAILED;
    }
    agent_ledger_write(a, o);
    for (uint32_t k = 0; k < a->plan.g.ncables; k++) {
        atomic_store_explicit(&a->hdr->cables[k].active,
                              (uint32_t) tbrdma_verbs_port_active(a->cables[k].dev),
                              memory_order_relaxed);
    }
    atomic_store_explicit(&a->hdr->state, TBRDMA_AGENTSEG_READY, memory_order_release);
    rc = agent_run(a);
    agent_cables_close(a);
    tbrdma_ledger_file_remove(); /* nothing held any more */
    return (0 == rc) ? AGENT_EXIT_OK : AGENT_EXIT_FAILED;
}

int main(int argc, char **argv)
{
    static agent_t agent; /* large (a line per possible rank): not on the stack */
    agent_opts_t o = {0};
    char err[AGENT_ERR_MAX];
    int rc = parse_args(argc, argv, &o);

    if (0 != rc) {
        return (rc < 0) ? AGENT_EXIT_OK : rc;
    }
    signals_install();
    agent_init(&agent, o.verbose);
    if (0 != agent_seg_attach(&agent, o.segment)) {
        return AGENT_EXIT_FAILED;
    }
    rc = AGENT_EXIT_OK;
    if (0 != tbrdma_verbs_open(o.verbs_lib, err, sizeof(err))) {
        char line[AGENT_ERR_MAX + 64];

        snprintf(line, sizeof(line), "verbs library %s: %s", o.verbs_lib, err);
        agent_seg_fail(&agent, line);
        rc = AGENT_EXIT_FAILED;
    } else if (TBRDMA_AGENTSEG_REQ_GO == agent_seg_wait(&agent)) {
        rc = agent_go(&agent, &o);
        if (agent.verbose) {
            agent_counters(&agent);
        }
    }
    agent_seg_leave(&agent);
    tbrdma_verbs_close();
    return rc;
}
