/*
 * tbrdma-info: lists this host's RDMA over Thunderbolt ports as tbrdma sees them (state, link
 * layer, paired interface, IPv4, bridge, GID table and the source GID index) and explains every
 * port that cannot be used, with the fix. Operators run it on each Mac; the demo and the tests
 * run it on simulated Macs and in the VMs. The --parsable format is a stable interface,
 * documented in tools/README.md: add fields only at the end of a line.
 *
 * Exit codes: 0 at least one usable port, 1 none usable (diagnoses printed), 2 usage error,
 * 3 no verbs library, no RDMA device (or none matching --device), or an unreadable device list.
 */
#include "config.h"

#include "base/btl_tbrdma_ledger.h"
#include "base/btl_tbrdma_netif.h"
#include "base/btl_tbrdma_verbs.h"
#include "core/tbrdma_diag.h"
#include "core/tbrdma_gid.h"
#include "tbrdma_source_id.h"
#include "tool_usage.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INFO_EXIT_USABLE    0
#define INFO_EXIT_UNUSABLE  1
#define INFO_EXIT_USAGE     2
#define INFO_EXIT_NO_DEVICE 3

#define INFO_MSG_MAX 2048
#define INFO_ERR_MAX 1024

typedef struct info_opts {
    const char *lib;    /* --verbs-lib, else $TBRDMA_VERBS_LIB, else the platform default */
    const char *device; /* --device filter, NULL for all */
    const char *ledger; /* --ledger-dir: the slot ledger ("" or NULL: not read) */
    int parsable;
    char host[TBRDMA_HOST_MAX];
} info_opts_t;

static const struct option longopts[] = {
    {"verbs-lib", required_argument, NULL, 'l'},
    {"device", required_argument, NULL, 'd'},
    {"ledger-dir", required_argument, NULL, 'L'},
    {"parsable", no_argument, NULL, 'p'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parallel to longopts: argument name and help text. */
static const char *const help[][2] = {
    {"PATH", "verbs library to load (default: $TBRDMA_VERBS_LIB, else librdma.dylib on\n"
             "        macOS, libibverbs.so.1 on Linux); as the MCA parameter btl_tbrdma_verbs_lib"},
    {"NAME", "show only this device (rdma_en2)"},
    {"DIR", "the slot ledger to read (default " TBRDMA_LEDGER_DIR_DEFAULT ", as the MCA\n"
            "        parameter btl_tbrdma_ledger_dir; \"\" to not read it): queue pairs held by\n"
            "        tbrdma processes that died without releasing them"},
    {"", "stable machine-readable lines (see tools/README.md)"},
    {"", "print tbrdma's version, its sources' checksum and the Open MPI it was built for"},
    {"", "print this help and exit"},
};

static void usage(FILE *out, const char *argv0)
{
    fprintf(out, "Usage: %s [OPTIONS]\n", argv0);
    fprintf(out, "Lists the RDMA over Thunderbolt ports of this host and explains unusable ones.\n"
                 "\nOptions:\n");
    tbrdma_tool_options(out, longopts, help);
    fprintf(out,
            "\nExit status: 0 at least one usable port; 1 no usable port (diagnoses printed);\n"
            "2 usage error; 3 no verbs library or no RDMA device.\n");
}

static int parse_args(int argc, char **argv, info_opts_t *opts)
{
    int c;

    memset(opts, 0, sizeof(*opts));
    opts->lib = getenv("TBRDMA_VERBS_LIB");
    opts->ledger = TBRDMA_LEDGER_DIR_DEFAULT;
    while (-1 != (c = getopt_long(argc, argv, "l:d:L:pVh", longopts, NULL))) {
        switch (c) {
        case 'l':
            opts->lib = optarg;
            break;
        case 'd':
            opts->device = optarg;
            break;
        case 'L':
            opts->ledger = optarg;
            break;
        case 'p':
            opts->parsable = 1;
            break;
        case 'V':
            /* tbrdma-doctor compares this line across the hosts of a cluster: the version
             * with the checksum of the component's sources (tools/Makefile.am), one token. */
            printf("tbrdma-info (tbrdma) %s+src.%s, built for Open MPI %s\n", PACKAGE_VERSION,
                   TBRDMA_SOURCE_ID, TBRDMA_OMPI_VERSION);
            exit(INFO_EXIT_USABLE);
        case 'h':
            usage(stdout, argv[0]);
            exit(INFO_EXIT_USABLE);
        default:
            usage(stderr, argv[0]);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        usage(stderr, argv[0]);
        return -1;
    }
    if (NULL == opts->lib || '\0' == opts->lib[0]) {
        opts->lib = tbrdma_verbs_default_lib();
    }
    return 0;
}

static const char *state_name(int state)
{
    static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};

    if (0 <= state && state < (int) (sizeof(names) / sizeof(names[0]))) {
        return names[state];
    }
    return "UNKNOWN";
}

static const char *link_layer_name(int link_layer)
{
    switch (link_layer) {
    case TBRDMA_LINK_LAYER_INFINIBAND:
        return "InfiniBand";
    case TBRDMA_LINK_LAYER_ETHERNET:
        return "Ethernet";
    case TBRDMA_LINK_LAYER_THUNDERBOLT:
        return "Thunderbolt";
    default:
        return "Unknown";
    }
}

/* ibv_mtu 1..5 in bytes, 0 when unknown. */
static int mtu_bytes(int mtu)
{
    return (1 <= mtu && mtu <= 5) ? (128 << mtu) : 0;
}

/* "192.168.0.1/30", or "-" without IPv4. */
static void format_ipv4(const tbrdma_port_info_t *port, char *buf, size_t len)
{
    char ip[16];

    if (!port->has_ipv4 || 0 != tbrdma_ipv4_to_string(port->ipv4, ip, sizeof(ip))) {
        snprintf(buf, len, "-");
        return;
    }
    snprintf(buf, len, "%s/%d", ip, port->prefix);
}

static const char *or_dash(const char *text)
{
    return ('\0' != text[0]) ? text : "-";
}

/* The diagnosis message on one line (the parsable format is line-based). */
static void port_message(const tbrdma_port_info_t *port, tbrdma_diag_t diag, const char *host,
                         char *buf, size_t len)
{
    char *nl;

    tbrdma_diag_port_message(port, diag, host, buf, len);
    while (NULL != (nl = strchr(buf, '\n'))) {
        *nl = ' ';
    }
}

static void print_port_parsable(const info_opts_t *opts, const tbrdma_port_info_t *port,
                                tbrdma_diag_t diag)
{
    char ipv4[24], gid[TBRDMA_GID_STR_MAX], msg[INFO_MSG_MAX];
    int i, held;

    format_ipv4(port, ipv4, sizeof(ipv4));
    printf("port host=%s device=%s port=%d state=%s link_layer=%s mtu=%d ifname=%s ipv4=%s "
           "bridge=%s gid_index=%d diag=%s if_up=%s\n",
           opts->host, port->device, port->port_num, state_name(port->state),
           link_layer_name(port->link_layer), mtu_bytes(port->active_mtu), or_dash(port->ifname),
           ipv4, or_dash(port->bridge), port->gid_index, tbrdma_diag_name(diag),
           port->if_up ? "yes" : "no");
    for (i = 0; i < port->gid_count; i++) {
        if (tbrdma_gid_is_zero(&port->gids[i])
            || 0 != tbrdma_gid_to_string(&port->gids[i], gid, sizeof(gid))) {
            continue;
        }
        printf("gid host=%s device=%s port=%d index=%d gid=%s\n", opts->host, port->device,
               port->port_num, i, gid);
    }
    if (TBRDMA_DIAG_OK != diag) {
        port_message(port, diag, opts->host, msg, sizeof(msg));
        printf("diag host=%s device=%s port=%d name=%s text=%s\n", opts->host, port->device,
               port->port_num, tbrdma_diag_name(diag), msg);
    }
    held =
        tbrdma_ledger_file_explain(opts->ledger, opts->host, port->device, NULL, msg, sizeof(msg));
    if (0 < held) {
        printf("held host=%s device=%s port=%d qps=%d text=%s\n", opts->host, port->device,
               port->port_num, held, msg);
    }
}

static void print_gids_human(const tbrdma_port_info_t *port)
{
    char gid[TBRDMA_GID_STR_MAX];
    int i;

    for (i = 0; i < port->gid_count; i++) {
        if (tbrdma_gid_is_zero(&port->gids[i])
            || 0 != tbrdma_gid_to_string(&port->gids[i], gid, sizeof(gid))) {
            continue;
        }
        printf("\t\tGID[%2d]:\t%s%s\n", i, gid,
               (i == port->gid_index) ? "  <- IPv4-mapped, source GID index" : "");
    }
}

static void print_port_human(const info_opts_t *opts, const tbrdma_port_info_t *port,
                             tbrdma_diag_t diag)
{
    char ipv4[24], msg[INFO_MSG_MAX];
    int held;

    format_ipv4(port, ipv4, sizeof(ipv4));
    printf("device %s\n\tport: %d\n", port->device, port->port_num);
    printf("\t\tstate:\t\tPORT_%s (%d)\n", state_name(port->state), port->state);
    printf("\t\tlink_layer:\t%s (%d)\n", link_layer_name(port->link_layer), port->link_layer);
    printf("\t\tactive_mtu:\t%d (%d)\n", mtu_bytes(port->active_mtu), port->active_mtu);
    if ('\0' != port->ifname[0]) {
        printf("\t\tinterface:\t%s (%s)\n", port->ifname, port->if_up ? "up" : "not running");
    } else {
        printf("\t\tinterface:\tnone found\n");
    }
    printf("\t\tipv4:\t\t%s\n", ipv4);
    printf("\t\tbridge:\t\t%s\n", or_dash(port->bridge));
    print_gids_human(port);
    printf("\t\tdiagnosis:\t%s\n", tbrdma_diag_name(diag));
    if (TBRDMA_DIAG_OK != diag) {
        port_message(port, diag, opts->host, msg, sizeof(msg));
        printf("\t%s\n", msg);
    }
    held =
        tbrdma_ledger_file_explain(opts->ledger, opts->host, port->device, NULL, msg, sizeof(msg));
    if (0 < held) {
        printf("\t\theld slots:\t%d queue pairs, by dead tbrdma processes\n\t%s\n", held, msg);
    }
    printf("\n");
}

/* A host-level problem (no library, no device): "diag host=H device=- name=N text=T". */
static void print_host_problem(const info_opts_t *opts, const char *name, const char *msg)
{
    if (opts->parsable) {
        printf("diag host=%s device=- port=0 name=%s text=%s\n", opts->host, name, msg);
    } else {
        printf("%s\n", msg);
    }
}

/* Loads the library and discovers; returns the exit code for failures, or -1 on success. */
static int discover(const info_opts_t *opts, tbrdma_port_info_t *ports, int *nports_p)
{
    char err[INFO_ERR_MAX] = "", msg[INFO_MSG_MAX];
    int rc;

    rc = tbrdma_verbs_open(opts->lib, err, sizeof(err));
    if (0 != rc) {
        tbrdma_diag_no_library_message(opts->host, opts->lib, err, msg, sizeof(msg));
        print_host_problem(opts, (-ENOSYS == rc) ? "missing-symbol" : "no-library", msg);
        return INFO_EXIT_NO_DEVICE;
    }
    rc = tbrdma_verbs_discover(ports, TBRDMA_MAX_PORTS, nports_p, err, sizeof(err));
    if (0 != rc) {
        snprintf(msg, sizeof(msg), "host %s: cannot list RDMA devices: %s", opts->host, err);
        print_host_problem(opts, "no-device-list", msg);
        return INFO_EXIT_NO_DEVICE;
    }
    if (0 == *nports_p) {
        tbrdma_diag_no_devices_message(opts->host, opts->lib, msg, sizeof(msg));
        print_host_problem(opts, "no-devices", msg);
        return INFO_EXIT_NO_DEVICE;
    }
    return -1;
}

/* Prints every port (matching --device); returns the number of usable ones, -1 if none shown. */
static int print_ports(const info_opts_t *opts, const tbrdma_port_info_t *ports, int n)
{
    int i, shown = 0, usable = 0;

    if (!opts->parsable) {
        printf("host %s (verbs library %s)\n\n", opts->host, opts->lib);
    }
    for (i = 0; i < n; i++) {
        tbrdma_diag_t diag = tbrdma_diag_port(&ports[i]);

        if (NULL != opts->device && 0 != strcmp(opts->device, ports[i].device)) {
            continue;
        }
        shown++;
        usable += (TBRDMA_DIAG_OK == diag);
        if (opts->parsable) {
            print_port_parsable(opts, &ports[i], diag);
        } else {
            print_port_human(opts, &ports[i], diag);
        }
    }
    if (0 == shown) {
        return -1;
    }
    if (opts->parsable) {
        printf("summary host=%s ports=%d usable=%d\n", opts->host, shown, usable);
    } else {
        printf("host %s: %d port%s, %d usable\n", opts->host, shown, (1 == shown) ? "" : "s",
               usable);
    }
    return usable;
}

int main(int argc, char **argv)
{
    tbrdma_port_info_t ports[TBRDMA_MAX_PORTS];
    char msg[INFO_MSG_MAX];
    info_opts_t opts;
    int nports = 0, rc;

    if (0 != parse_args(argc, argv, &opts)) {
        return INFO_EXIT_USAGE;
    }
    if (0 != tbrdma_netif_hostname(opts.host, sizeof(opts.host))) {
        snprintf(opts.host, sizeof(opts.host), "unknown");
    }
    rc = discover(&opts, ports, &nports);
    if (-1 != rc) {
        tbrdma_verbs_close();
        return rc;
    }
    rc = print_ports(&opts, ports, nports);
    tbrdma_verbs_close();
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "host %s: no RDMA device named %s (%d port%s found)", opts.host,
                 opts.device, nports, (1 == nports) ? "" : "s");
        print_host_problem(&opts, "no-such-device", msg);
        return INFO_EXIT_NO_DEVICE;
    }
    return (rc > 0) ? INFO_EXIT_USABLE : INFO_EXIT_UNUSABLE;
}
