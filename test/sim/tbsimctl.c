/*
 * tbsimctl: control of the simulated Thunderbolt RDMA fabric ($TBSIM_DIR/fabric).
 *   init                      create the fabric from $TBSIM_DIR/topology (tbcluster up)
 *   destroy                   remove the fabric and every QP receive file (tbcluster down)
 *   fault <cable> [drop=P] [drop_min=B] [corrupt=P] [delay_us=N] [seed=N]   change a cable's
 *                                                              faults live
 *   link <cable>|all [on|off] [rate_gbps=G] [latency_us=U] [interleave=0|1]
 *                                                            change the link model live
 *                             (on: 8 Gbit/s and 4 us per direction; off, the default: 0 and 0)
 *   rdma <host> on|off        RDMA enablement of a host (Apple: rdma_ctl enable/disable)
 *   reclaim                   free the QP and MR slots of processes that no longer exist
 *   show                      print hosts, cables, faults, devices and their QP/MR use
 *   counters                  one line of traffic counters per device (see tbsim_counters)
 *   held                      list every QP and MR slot still held (a QP with the memory its
 *                             receive file holds); exit 1 when there is one
 * Exit status: 0 ok, 1 failure, 2 usage.
 */
#include "libtbsim/tbsim_shm.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int usage(void)
{
    fprintf(stderr,
            "usage: tbsimctl init | destroy | show | reclaim | counters | held\n"
            "       tbsimctl fault <cable-id> [drop=P] [drop_min=B] [corrupt=P] [delay_us=N] "
            "[seed=N]\n"
            "       tbsimctl link <cable-id>|all [on|off|apple] [rate_gbps=G] [latency_us=U] "
            "[interleave=0|1]\n"
            "       tbsimctl rdma <host> on|off\n"
            "state directory: $TBSIM_DIR (default %s)\n",
            TBSIM_DIR_DEFAULT);
    return 2;
}

static struct tbsim_fabric *map_or_say(void)
{
    struct tbsim_fabric *fab = tbsim_fabric_map();

    if (NULL == fab) {
        fprintf(stderr, "tbsimctl: fabric in %s: %s\n", tbsim_dir(), strerror(errno));
    }
    return fab;
}

static int parse_prob(const char *s, uint32_t *ppm)
{
    char *end;
    double p = strtod(s, &end);

    if (end == s || '\0' != *end || p < 0.0 || p > 1.0) {
        return -1;
    }
    *ppm = (uint32_t) (p * TBSIM_PPM + 0.5);
    return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;

    errno = 0;
    *v = strtoull(s, &end, 0);
    return (end == s || '\0' != *end || 0 != errno) ? -1 : 0;
}

static int fault_one(struct tbsim_fault *f, const char *kv)
{
    uint32_t ppm;
    uint64_t v;

    if (0 == strncmp(kv, "drop=", 5) && 0 == parse_prob(kv + 5, &ppm)) {
        atomic_store(&f->drop_ppm, ppm);
    } else if (0 == strncmp(kv, "corrupt=", 8) && 0 == parse_prob(kv + 8, &ppm)) {
        atomic_store(&f->corrupt_ppm, ppm);
    } else if (0 == strncmp(kv, "delay_us=", 9) && 0 == parse_u64(kv + 9, &v) && v <= UINT32_MAX) {
        atomic_store(&f->delay_us, (uint32_t) v);
    } else if (0 == strncmp(kv, "drop_min=", 9) && 0 == parse_u64(kv + 9, &v) && v <= UINT32_MAX) {
        atomic_store(&f->drop_min, (uint32_t) v);
    } else if (0 == strncmp(kv, "seed=", 5) && 0 == parse_u64(kv + 5, &v)) {
        atomic_store(&f->seed, v);
    } else {
        fprintf(stderr, "tbsimctl: fault: bad setting '%s'\n", kv);
        return -1;
    }
    return 0;
}

static int cmd_fault(int argc, char **argv)
{
    struct tbsim_fabric *fab;
    int c;

    if (argc < 1) {
        return usage();
    }
    fab = map_or_say();
    if (NULL == fab) {
        return 1;
    }
    c = tbsim_cable_find(fab, argv[0]);
    if (c < 0) {
        fprintf(stderr, "tbsimctl: fault: no cable %s\n", argv[0]);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (0 != fault_one(&fab->cables[c].fault, argv[i])) {
            return 2;
        }
    }
    return 0;
}

/* A number >= 0 and <= max (decimals allowed), times scale, rounded. */
static int parse_scaled(const char *s, double scale, double max, uint64_t *v)
{
    char *end;
    double x = strtod(s, &end);

    if (end == s || '\0' != *end || !(x >= 0.0 && x <= max)) {
        return -1;
    }
    *v = (uint64_t) (x * scale + 0.5);
    return 0;
}

static int link_one(struct tbsim_linkmodel *l, const char *kv)
{
    uint64_t v;

    if (0 == strcmp(kv, "on") || 0 == strcmp(kv, "off")) {
        int on = 0 == strcmp(kv, "on");

        atomic_store(&l->rate_bps, on ? TBSIM_LINK_ON_RATE_BPS : 0);
        atomic_store(&l->latency_ns, on ? TBSIM_LINK_ON_LATENCY_NS : 0);
    } else if (0 == strcmp(kv, "apple")) {
        atomic_store(&l->rate_bps, TBSIM_LINK_APPLE_RATE_BPS);
        atomic_store(&l->latency_ns, TBSIM_LINK_APPLE_LATENCY_NS);
        atomic_store(&l->interleave, 1u);
    } else if (0 == strncmp(kv, "rate_gbps=", 10) && 0 == parse_scaled(kv + 10, 1e9, 1e6, &v)) {
        atomic_store(&l->rate_bps, v);
    } else if (0 == strncmp(kv, "latency_us=", 11) && 0 == parse_scaled(kv + 11, 1e3, 1e9, &v)) {
        atomic_store(&l->latency_ns, v);
    } else if (0 == strcmp(kv, "interleave=0") || 0 == strcmp(kv, "interleave=1")) {
        atomic_store(&l->interleave, (uint32_t) (kv[sizeof("interleave=") - 1] - '0'));
    } else {
        fprintf(stderr, "tbsimctl: link: bad setting '%s'\n", kv);
        return -1;
    }
    return 0;
}

/* Settings are checked on a copy first, so a bad one changes nothing. */
static int cmd_link(int argc, char **argv)
{
    struct tbsim_fabric *fab;
    struct tbsim_linkmodel scratch = {0, 0, 0, 0};
    int all;
    int c;

    if (argc < 2) {
        return usage();
    }
    for (int i = 1; i < argc; i++) {
        if (0 != link_one(&scratch, argv[i])) {
            return 2;
        }
    }
    fab = map_or_say();
    if (NULL == fab) {
        return 1;
    }
    all = 0 == strcmp(argv[0], "all");
    c = all ? 0 : tbsim_cable_find(fab, argv[0]);
    if (c < 0) {
        fprintf(stderr, "tbsimctl: link: no cable %s\n", argv[0]);
        return 1;
    }
    for (; c < (int) fab->ncables; c++) {
        for (int i = 1; i < argc; i++) {
            link_one(&fab->cables[c].model, argv[i]);
        }
        if (!all) {
            break;
        }
    }
    return 0;
}

static int cmd_rdma(int argc, char **argv)
{
    struct tbsim_fabric *fab;
    int h;

    if (2 != argc || (0 != strcmp(argv[1], "on") && 0 != strcmp(argv[1], "off"))) {
        return usage();
    }
    fab = map_or_say();
    if (NULL == fab) {
        return 1;
    }
    h = tbsim_host_find(fab, argv[0]);
    if (h < 0) {
        fprintf(stderr, "tbsimctl: rdma: no host %s\n", argv[0]);
        return 1;
    }
    atomic_store(&fab->hosts[h].rdma_enabled, 0 == strcmp(argv[1], "on"));
    return 0;
}

static int pid_dead(int32_t pid)
{
    return 0 != pid && 0 != kill(pid, 0) && ESRCH == errno;
}

static int cmd_reclaim(void)
{
    struct tbsim_fabric *fab = map_or_say();
    int qps = 0;
    int mrs = 0;

    if (NULL == fab) {
        return 1;
    }
    for (uint32_t d = 0; d < 2 * fab->ncables; d++) {
        struct tbsim_dev *dev = &fab->devs[d];

        for (int q = 0; q < TBSIM_QP_SLOTS; q++) {
            if (pid_dead(atomic_load(&dev->qp_owner[q]))) {
                atomic_store(&dev->qp[q].qpn, 0);
                atomic_store(&dev->qp_owner[q], 0);
                qps++;
            }
        }
        for (int m = 0; m < TBSIM_MR_SLOTS; m++) {
            if (pid_dead(atomic_load(&dev->mr_owner[m]))) {
                atomic_store(&dev->mr_owner[m], 0);
                mrs++;
            }
        }
    }
    printf("reclaimed %d QP slots and %d MR slots of dead processes\n", qps, mrs);
    return 0;
}

static void counters_dev(const struct tbsim_fabric *fab, int d)
{
    const struct tbsim_dev *dev = &fab->devs[d];
    const struct tbsim_counters *c = &dev->cnt;

    printf("counters %s:rdma_%s tx_msgs %llu tx_bytes %llu rx_msgs %llu rx_bytes %llu lost %llu "
           "corrupted %llu len_err %llu\n",
           fab->hosts[dev->host].name, dev->ifname, (unsigned long long) atomic_load(&c->tx_msgs),
           (unsigned long long) atomic_load(&c->tx_bytes),
           (unsigned long long) atomic_load(&c->rx_msgs),
           (unsigned long long) atomic_load(&c->rx_bytes),
           (unsigned long long) atomic_load(&c->lost),
           (unsigned long long) atomic_load(&c->corrupted),
           (unsigned long long) atomic_load(&c->len_err));
}

static int cmd_counters(void)
{
    struct tbsim_fabric *fab = map_or_say();

    if (NULL == fab) {
        return 1;
    }
    for (uint32_t d = 0; d < 2 * fab->ncables; d++) {
        counters_dev(fab, (int) d);
    }
    return 0;
}

/* The memory a QP's receive file holds (allocated, not its sparse size), -1 when it has none. */
static long long rxq_kib(const struct tbsim_fabric *fab, int d, int q)
{
    char path[4096];
    struct stat st;

    tbsim_rxq_path(fab, d, q, path, sizeof(path));
    return (0 == stat(path, &st)) ? (long long) st.st_blocks / 2 : -1;
}

/* Prints one line per slot held on device d; returns how many. */
static int held_dev(const struct tbsim_fabric *fab, int d)
{
    const struct tbsim_dev *dev = &fab->devs[d];
    const char *host = fab->hosts[dev->host].name;
    int n = 0;

    for (int q = 0; q < TBSIM_QP_SLOTS; q++) {
        int32_t pid = atomic_load(&dev->qp_owner[q]);

        if (0 != pid) {
            printf("held %s:rdma_%s qp 0x%06x pid %d%s, receive file %lld KiB\n", host, dev->ifname,
                   atomic_load(&dev->qp[q].qpn), pid, pid_dead(pid) ? " (dead)" : "",
                   rxq_kib(fab, d, q));
            n++;
        }
    }
    for (int m = 0; m < TBSIM_MR_SLOTS; m++) {
        int32_t pid = atomic_load(&dev->mr_owner[m]);

        if (0 != pid) {
            printf("held %s:rdma_%s mr %d pid %d%s\n", host, dev->ifname, m, pid,
                   pid_dead(pid) ? " (dead)" : "");
            n++;
        }
    }
    return n;
}

static int cmd_held(void)
{
    struct tbsim_fabric *fab = map_or_say();
    int n = 0;

    if (NULL == fab) {
        return 1;
    }
    for (uint32_t d = 0; d < 2 * fab->ncables; d++) {
        n += held_dev(fab, (int) d);
    }
    printf("%d slots held\n", n);
    return (0 == n) ? 0 : 1;
}

static void show_dev(const struct tbsim_fabric *fab, int d)
{
    const struct tbsim_dev *dev = &fab->devs[d];
    char ip[INET_ADDRSTRLEN] = "-";
    uint32_t ipv4 = atomic_load(&dev->pub_ipv4);
    int qps = 0;
    int mrs = 0;

    for (int q = 0; q < TBSIM_QP_SLOTS; q++) {
        qps += 0 != atomic_load(&dev->qp_owner[q]);
    }
    for (int m = 0; m < TBSIM_MR_SLOTS; m++) {
        mrs += 0 != atomic_load(&dev->mr_owner[m]);
    }
    if (0 != ipv4) {
        inet_ntop(AF_INET, &ipv4, ip, sizeof(ip));
    }
    printf("device %s:rdma_%s qps %d/%d mrs %d/%d published_ipv4 %s peak_qps %u peak_mrs %u\n",
           fab->hosts[dev->host].name, dev->ifname, qps, TBSIM_QP_MAX, mrs, TBSIM_MR_MAX, ip,
           atomic_load(&dev->qp_peak), atomic_load(&dev->mr_peak));
    for (int q = 0; q < TBSIM_QP_SLOTS; q++) {
        const struct tbsim_qp_entry *e = &dev->qp[q];
        int32_t pid = atomic_load(&dev->qp_owner[q]);

        if (0 != pid) {
            printf("  qp 0x%06x pid %d state %u dest 0x%06x\n", atomic_load(&e->qpn), pid,
                   atomic_load(&e->state), atomic_load(&e->dest_qpn));
        }
    }
}

static int cmd_show(void)
{
    struct tbsim_fabric *fab = map_or_say();

    if (NULL == fab) {
        return 1;
    }
    printf("fabric %s version %u id %016llx\n", tbsim_dir(), fab->version,
           (unsigned long long) fab->fabric_id);
    for (uint32_t h = 0; h < fab->nhosts; h++) {
        printf("host %s rdma %s\n", fab->hosts[h].name,
               atomic_load(&fab->hosts[h].rdma_enabled) ? "on" : "off");
    }
    for (uint32_t c = 0; c < fab->ncables; c++) {
        struct tbsim_cable *cb = &fab->cables[c];

        printf("cable %s %s:%s <-> %s:%s drop=%.6f drop_min=%u corrupt=%.6f delay_us=%u seed=%llu "
               "rate_gbps=%.3f latency_us=%.3f interleave=%u\n",
               cb->id, fab->hosts[cb->host[0]].name, cb->ifname[0], fab->hosts[cb->host[1]].name,
               cb->ifname[1], atomic_load(&cb->fault.drop_ppm) / (double) TBSIM_PPM,
               atomic_load(&cb->fault.drop_min),
               atomic_load(&cb->fault.corrupt_ppm) / (double) TBSIM_PPM,
               atomic_load(&cb->fault.delay_us), (unsigned long long) atomic_load(&cb->fault.seed),
               atomic_load(&cb->model.rate_bps) / 1e9, atomic_load(&cb->model.latency_ns) / 1e3,
               atomic_load(&cb->model.interleave));
    }
    for (uint32_t d = 0; d < 2 * fab->ncables; d++) {
        show_dev(fab, (int) d);
    }
    return 0;
}

int main(int argc, char **argv)
{
    char err[512] = "";

    if (argc < 2 || 0 == strcmp(argv[1], "--help") || 0 == strcmp(argv[1], "-h")) {
        return (argc < 2) ? usage() : (usage(), 0);
    }
    if (0 == strcmp(argv[1], "init")) {
        if (0 != tbsim_fabric_init(err, sizeof(err))) {
            fprintf(stderr, "tbsimctl: init: %s\n", err);
            return 1;
        }
        return 0;
    }
    if (0 == strcmp(argv[1], "destroy")) {
        return (0 == tbsim_fabric_destroy()) ? 0 : 1;
    }
    if (0 == strcmp(argv[1], "fault")) {
        return cmd_fault(argc - 2, argv + 2);
    }
    if (0 == strcmp(argv[1], "link")) {
        return cmd_link(argc - 2, argv + 2);
    }
    if (0 == strcmp(argv[1], "rdma")) {
        return cmd_rdma(argc - 2, argv + 2);
    }
    if (0 == strcmp(argv[1], "reclaim")) {
        return cmd_reclaim();
    }
    if (0 == strcmp(argv[1], "show")) {
        return cmd_show();
    }
    if (0 == strcmp(argv[1], "counters")) {
        return cmd_counters();
    }
    if (0 == strcmp(argv[1], "held")) {
        return cmd_held();
    }
    return usage();
}
