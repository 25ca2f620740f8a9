/*
 * tbrdma-fieldtest: a field self-test for Macs with RDMA over Thunderbolt. It measures, on the
 * user's hardware, each rule the fabric simulator (test/sim) assumes, and prints a report with a
 * verdict per probe: same, differs, or could not test. Single-host probes run alone; with one
 * host as --server and the other as --client HOST (a TCP side channel over any shared network)
 * the two-host probes run too. Every probe is bounded in time and everything it creates is
 * released after it, on failure and on Ctrl-C. docs/field-validation.md documents the report.
 *
 * Exit status: 0 every probe said "same"; 1 a probe said "differs" or "could not test";
 * 2 usage; 3 no verbs library or no usable port; 4 refused (an MPI job runs, see --force);
 * 5 the side channel failed; 130 stopped by a signal or --timeout (partial report printed).
 */
#include "base/btl_tbrdma_netif.h"
#include "core/tbrdma_diag.h"
#include "fieldtest/probe.h"
#include "tool_usage.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_SAME    0
#define EXIT_DIFFERS 1
#define EXIT_USAGE   2
#define EXIT_NODEV   3
#define EXIT_REFUSED 4
#define EXIT_CHANNEL 5
#define EXIT_STOPPED 130

typedef struct main_opts {
    report_format_t fmt;
    double total_s;
    int list;
} main_opts_t;

static const struct option longopts[] = {
    {"verbs-lib", required_argument, NULL, 'l'},
    {"device", required_argument, NULL, 'd'},
    {"peer-device", required_argument, NULL, 'D'},
    {"server", no_argument, NULL, 's'},
    {"client", required_argument, NULL, 'c'},
    {"port", required_argument, NULL, 'p'},
    {"json", no_argument, NULL, 'j'},
    {"markdown", no_argument, NULL, 'm'},
    {"only", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, 'f'},
    {"link-down", no_argument, NULL, 'L'},
    {"bound", required_argument, NULL, 'b'},
    {"timeout", required_argument, NULL, 't'},
    {"list", no_argument, NULL, 'n'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parallel to longopts: argument name and help text. */
static const char *const help[][2] = {
    {"PATH", "verbs library (default: $TBRDMA_VERBS_LIB, else librdma.dylib on macOS,\n"
             "        libibverbs.so.1 on Linux; libtbsim.so for the simulator)"},
    {"NAME", "local RDMA device (default: the first ACTIVE one with an IPv4-mapped GID;\n"
             "        with --client, the one sharing a subnet with the server's)"},
    {"NAME", "the server's device to use (--client; default: chosen by subnet)"},
    {"", "serve the two-host probes of one --client, then exit"},
    {"HOST", "run the single-host probes, then the two-host probes with the server HOST"},
    {"N", "TCP port of the side channel (default 18516)"},
    {"", "print the report as JSON (one probe per line)"},
    {"", "print the report as a Markdown table"},
    {"LIST", "run only these probes (comma-separated names, see --list)"},
    {"", "run although an MPI job runs on this host"},
    {"", "allow the port-down probe to take the device's interface down for ~2 s (root)"},
    {"S", "bound of one probe in seconds (default 15)"},
    {"S", "bound of the whole run in seconds (default 300)"},
    {"", "list the probes and what the simulator assumes, then exit"},
    {"", "print tbrdma's version and its sources' checksum, and exit"},
    {"", "print this help and exit"},
};

static void usage(FILE *out, const char *argv0)
{
    fprintf(out,
            "Usage: %s [OPTIONS]\n       %s --server [OPTIONS]\n       %s --client HOST "
            "[OPTIONS]\n",
            argv0, argv0, argv0);
    fprintf(out, "Measures this Mac's RDMA over Thunderbolt against the rules the tbrdma fabric\n"
                 "simulator assumes, and reports what differs.\n\nOptions:\n");
    tbrdma_tool_options(out, longopts, help);
    fprintf(out,
            "\nExit status: 0 all same; 1 a probe differs or could not test; 2 usage; 3 no\n"
            "usable port; 4 an MPI job runs (see --force); 5 side channel failed; 130 stopped.\n");
}

static int parse_double(const char *s, double *out)
{
    char *end;

    *out = strtod(s, &end);
    return ('\0' == *s || '\0' != *end || *out <= 0) ? -1 : 0;
}

static int parse_opt(int c, probe_env_t *env, main_opts_t *mo)
{
    switch (c) {
    case 'l':
        env->lib = optarg;
        return 0;
    case 'd':
        env->device = optarg;
        return 0;
    case 'D':
        env->peer_device = optarg;
        return 0;
    case 's':
        env->server = 1;
        return 0;
    case 'c':
        env->peer_host = optarg;
        return 0;
    case 'p':
        env->tcp_port = atoi(optarg);
        return (env->tcp_port > 0 && env->tcp_port < 65536) ? 0 : -1;
    case 'j':
        mo->fmt = REPORT_JSON;
        return 0;
    case 'm':
        mo->fmt = REPORT_MARKDOWN;
        return 0;
    case 'o':
        env->only = optarg;
        return 0;
    case 'f':
        env->force = 1;
        return 0;
    case 'L':
        env->link_down_ok = 1;
        return 0;
    case 'b':
        return parse_double(optarg, &env->bound_s);
    case 't':
        return parse_double(optarg, &mo->total_s);
    case 'n':
        mo->list = 1;
        return 0;
    default:
        return -1;
    }
}

static int parse_args(int argc, char **argv, probe_env_t *env, main_opts_t *mo)
{
    int c;

    memset(env, 0, sizeof(*env));
    memset(mo, 0, sizeof(*mo));
    env->fd = -1;
    env->tcp_port = PROBE_TCP_PORT;
    env->bound_s = 15.0;
    env->lib = getenv("TBRDMA_VERBS_LIB");
    mo->total_s = 300.0;
    while (-1 != (c = getopt_long(argc, argv, "l:d:D:sc:p:jmo:fLb:t:nVh", longopts, NULL))) {
        if ('h' == c) {
            usage(stdout, argv[0]);
            exit(EXIT_SAME);
        }
        if ('V' == c) {
            tbrdma_tool_version(stdout, argv[0]);
            exit(EXIT_SAME);
        }
        if (0 != parse_opt(c, env, mo)) {
            usage(stderr, argv[0]);
            return -1;
        }
    }
    if (optind < argc || (env->server && NULL != env->peer_host)) {
        fprintf(stderr, "%s: %s\n", argv[0],
                optind < argc ? "unexpected argument" : "--server and --client exclude each other");
        return -1;
    }
    if (NULL == env->lib || '\0' == env->lib[0]) {
        env->lib = tbrdma_verbs_default_lib();
    }
    return 0;
}

/* 1 when name is selected by --only (or no --only was given). */
static int selected(const probe_env_t *env, const char *name)
{
    size_t n = strlen(name);

    for (const char *s = env->only; NULL != s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
        if (0 == strncmp(s, name, n) && (',' == s[n] || '\0' == s[n])) {
            return 1;
        }
    }
    return NULL == env->only;
}

/* The probe of index i of the whole list (host probes, then pair probes). */
static const probe_def_t *def_at(int i)
{
    return i < probe_local_count ? &probe_local_defs[i] : pair_def(i - probe_local_count);
}

/* NULL when every name of --only is a probe, else the first unknown one (in buf). */
static const char *only_unknown(const probe_env_t *env, char *buf, size_t len)
{
    for (const char *s = env->only; NULL != s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
        int known = 0;

        snprintf(buf, len, "%.*s", (int) strcspn(s, ","), s);
        for (int i = 0; i < probe_local_count + pair_count() && !known; i++) {
            known = 0 == strcmp(buf, def_at(i)->name);
        }
        if (!known) {
            return buf;
        }
    }
    return NULL;
}

static void list_probes(void)
{
    for (int i = 0; i < probe_local_count + pair_count(); i++) {
        const probe_def_t *d =
            i < probe_local_count ? &probe_local_defs[i] : pair_def(i - probe_local_count);

        printf("%-14s %-5s %s\n%-20s rule: test/sim/README.md \"%s\"\n", d->name, d->scope,
               d->assumes, "", d->rule);
    }
}

/* Runs one probe into r (after the previous ones, so a stop leaves the rest unrun). */
static void run_one(probe_env_t *env, const probe_def_t *d, int pair_index, probe_result_t *r)
{
    double t0 = guard_now();

    memset(r, 0, sizeof(*r));
    snprintf(r->name, sizeof(r->name), "%s", d->name);
    r->scope = d->scope;
    r->assumes = d->assumes;
    r->rule = d->rule;
    if (pair_index < 0) {
        d->run(env, r);
    } else {
        pair_client(env, pair_index, d, r);
    }
    res_release_all();
    if (guard_stopped() && VERDICT_UNTESTED != r->verdict && '\0' == r->observed[0]) {
        result_untested(r, "%s", guard_reason());
    }
    if ('\0' == r->observed[0] && VERDICT_UNTESTED != r->verdict) {
        result_untested(r, "the probe ended without an observation");
    }
    r->seconds = guard_now() - t0;
}

/* Runs every selected probe; returns how many results. */
static int run_probes(probe_env_t *env, probe_result_t *res)
{
    int n = 0;

    for (int i = 0; i < probe_local_count && !guard_stopped(); i++) {
        if (selected(env, probe_local_defs[i].name)) {
            run_one(env, &probe_local_defs[i], -1, &res[n++]);
        }
    }
    for (int i = 0; env->fd >= 0 && i < pair_count() && !guard_stopped(); i++) {
        if (selected(env, pair_def(i)->name)) {
            run_one(env, pair_def(i), i, &res[n++]);
        }
    }
    return n;
}

/* Loads verbs, checks for MPI jobs. Returns -1 to go on, else the exit status. */
static int prepare(probe_env_t *env)
{
    char err[512], msg[1024], who[128];

    if (0 != tbrdma_netif_hostname(env->host, sizeof(env->host))) {
        snprintf(env->host, sizeof(env->host), "unknown");
    }
    if (0 != tbrdma_verbs_open(env->lib, err, sizeof(err))) {
        tbrdma_diag_no_library_message(env->host, env->lib, err, msg, sizeof(msg));
        fprintf(stderr, "tbrdma-fieldtest: %s\n", msg);
        return EXIT_NODEV;
    }
    if (!env->force && guard_mpi_running(who, sizeof(who))) {
        fprintf(stderr,
                "tbrdma-fieldtest: host %s: an MPI job is running (%s); the probes would take its "
                "queue pairs and memory regions and disturb it. Run again when it ended, or "
                "with --force.\n",
                env->host, who);
        return EXIT_REFUSED;
    }
    return -1;
}

/* The server's side of the handshake: its usable ports out, the client's choice in. */
static int server_handshake(probe_env_t *env, char *err, size_t errlen)
{
    tbrdma_port_info_t ports[TBRDMA_MAX_PORTS];
    probe_msg_t m;
    int n = 0, rc = -1;
    double deadline = guard_now() + env->bound_s;

    if (0 != chan_recv(env->fd, &m, MSG_HELLO, deadline)
        || 0 != tbrdma_verbs_discover(ports, TBRDMA_MAX_PORTS, &n, err, errlen)) {
        return -1;
    }
    snprintf(env->peer_name, sizeof(env->peer_name), "%.63s", m.text);
    memset(&m, 0, sizeof(m));
    m.type = MSG_HELLO;
    m.a = PROBE_VERSION;
    m.b = n;
    snprintf(m.text, sizeof(m.text), "%.63s", env->host);
    chan_send(env->fd, &m);
    for (int i = 0; i < n; i++) {
        memset(&m, 0, sizeof(m));
        m.type = MSG_PORTS;
        m.a = (int32_t) ports[i].ipv4;
        m.b = ports[i].prefix;
        m.c = ports[i].gid_index >= 0 && TBRDMA_PORT_STATE_ACTIVE == ports[i].state;
        snprintf(m.text, sizeof(m.text), "%.31s", ports[i].device);
        chan_send(env->fd, &m);
    }
    if (0 != chan_recv(env->fd, &m, MSG_CHOICE, deadline)) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (0 == strcmp(m.text, ports[i].device)) {
            env->port = ports[i];
            rc = pv_open(env, err, errlen);
        }
    }
    pair_tell(env, 0 == rc ? 0 : ENODEV, 0, 0, 0, NULL);
    return rc;
}

/* The client's side: the server's usable ports in, the pair of ports chosen, opened. */
static int client_handshake(probe_env_t *env, char *err, size_t errlen)
{
    tbrdma_port_info_t peers[TBRDMA_MAX_PORTS];
    double deadline = guard_now() + env->bound_s;
    probe_msg_t m;
    int n = 0;

    memset(&m, 0, sizeof(m));
    m.type = MSG_HELLO;
    m.a = PROBE_VERSION;
    snprintf(m.text, sizeof(m.text), "%.63s", env->host);
    if (0 != chan_send(env->fd, &m) || 0 != chan_recv(env->fd, &m, MSG_HELLO, deadline)) {
        snprintf(err, errlen, "the server did not answer");
        return -1;
    }
    snprintf(env->peer_name, sizeof(env->peer_name), "%.63s", m.text);
    for (int i = 0, total = m.b; i < total && i < TBRDMA_MAX_PORTS; i++) {
        if (0 != chan_recv(env->fd, &m, MSG_PORTS, deadline)) {
            return -1;
        }
        if (m.c) {
            memset(&peers[n], 0, sizeof(peers[n]));
            snprintf(peers[n].device, sizeof(peers[n].device), "%.31s", m.text);
            peers[n].ipv4 = (uint32_t) m.a;
            peers[n].prefix = m.b;
            peers[n++].has_ipv4 = 1;
        }
    }
    if (0 != pv_choose_port(env, peers, n, err, errlen) || 0 != pv_open(env, err, errlen)) {
        return -1;
    }
    memset(&m, 0, sizeof(m));
    m.type = MSG_CHOICE;
    snprintf(m.text, sizeof(m.text), "%s", env->peer_port.device);
    if (0 != chan_send(env->fd, &m) || 0 != chan_recv(env->fd, &m, MSG_RESULT, deadline)
        || 0 != m.a) {
        snprintf(err, errlen, "the server could not open its device %s", env->peer_port.device);
        return -1;
    }
    return 0;
}

static int serve(probe_env_t *env, const main_opts_t *mo)
{
    char err[512] = "";
    int rc;

    fprintf(stderr, "tbrdma-fieldtest: host %s waits for a client on TCP port %d\n", env->host,
            env->tcp_port);
    env->fd = chan_listen(env->tcp_port, guard_now() + mo->total_s);
    if (env->fd < 0 || 0 != server_handshake(env, err, sizeof(err))) {
        fprintf(stderr, "tbrdma-fieldtest: %s\n", '\0' != err[0] ? err : "no client came");
        return guard_stopped() ? EXIT_STOPPED : EXIT_CHANNEL;
    }
    fprintf(stderr, "tbrdma-fieldtest: serving %s on %s\n", env->peer_name, env->port.device);
    rc = pair_serve(env);
    if (guard_stopped()) {
        return EXIT_STOPPED;
    }
    return 0 == rc ? EXIT_SAME : EXIT_CHANNEL;
}

/* Single-host or client run: choose and open the port, run, report. */
static int probe(probe_env_t *env, const main_opts_t *mo)
{
    static probe_result_t res[PROBE_MAX];
    char err[512] = "";
    int n, c = 0;

    if (NULL != env->peer_host) {
        env->fd = chan_connect(env->peer_host, env->tcp_port, guard_now() + 30.0);
        if (env->fd < 0 || 0 != client_handshake(env, err, sizeof(err))) {
            fprintf(stderr, "tbrdma-fieldtest: side channel to %s: %s\n", env->peer_host,
                    '\0' != err[0] ? err : "cannot connect");
            return guard_stopped() ? EXIT_STOPPED : EXIT_CHANNEL;
        }
    } else if (0 != pv_choose_port(env, NULL, 0, err, sizeof(err))
               || 0 != pv_open(env, err, sizeof(err))) {
        fprintf(stderr, "tbrdma-fieldtest: %s\n", err);
        return EXIT_NODEV;
    }
    n = run_probes(env, res);
    if (env->fd >= 0) {
        probe_msg_t bye = {.type = MSG_BYE};

        chan_send(env->fd, &bye);
    }
    report_print(mo->fmt, env, res, n, guard_reason());
    for (int i = 0; i < n; i++) {
        c += VERDICT_SAME != res[i].verdict;
    }
    return guard_stopped() ? EXIT_STOPPED : (0 == c ? EXIT_SAME : EXIT_DIFFERS);
}

int main(int argc, char **argv)
{
    char name[PROBE_NAME_LEN];
    main_opts_t mo;
    probe_env_t env;
    int rc;

    if (0 != parse_args(argc, argv, &env, &mo)) {
        return EXIT_USAGE;
    }
    if (mo.list) {
        list_probes();
        return EXIT_SAME;
    }
    if (NULL != only_unknown(&env, name, sizeof(name))) {
        fprintf(stderr, "%s: --only: no probe named '%s' (see --list)\n", argv[0], name);
        return EXIT_USAGE;
    }
    guard_install(mo.total_s);
    rc = prepare(&env);
    if (-1 == rc) {
        rc = env.server ? serve(&env, &mo) : probe(&env, &mo);
    }
    pv_close(&env); /* every object, then the device */
    guard_restore();
    if (env.fd >= 0) {
        close(env.fd);
    }
    tbrdma_verbs_close();
    return rc;
}
