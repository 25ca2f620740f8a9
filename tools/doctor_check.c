/*
 * The doctor's checks (the list, with the test that breaks each, is in docs/doctor.md). They run
 * in an order where a root cause comes first and marks what it explains, so that one fault gives
 * one line: an unreachable host hides its other checks; a host with RDMA off explains the DOWN
 * ports that face it; a missing cable absorbs the DOWN ports at its two ends; crossed cables
 * absorb the address mismatches of their four ports; tbrdma's own mesh solver, run last on the
 * usable ports, reports only what nothing else explained. Every finding is one line naming the
 * host, device and interface, what is wrong and the fix.
 */
#include "doctor.h"

#include "core/tbrdma_fmt.h"
#include "core/tbrdma_gid.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_LIST_MAX 512

const char *doc_host_name(const doc_host_t *h)
{
    return ('\0' != h->hostname[0]) ? h->hostname : h->entry.name;
}

void doc_add(doc_cluster_t *cl, const char *check, int problem, int host, const char *device,
             const char *ifname, const char *format, ...)
{
    doc_finding_t *f;
    va_list ap;

    if (cl->nfindings == cl->maxfindings) {
        int max = (0 == cl->maxfindings) ? 16 : 2 * cl->maxfindings;
        doc_finding_t *grown = realloc(cl->findings, (size_t) max * sizeof(*grown));

        if (NULL == grown) {
            return;
        }
        cl->findings = grown;
        cl->maxfindings = max;
    }
    f = &cl->findings[cl->nfindings++];
    memset(f, 0, sizeof(*f));
    snprintf(f->check, sizeof(f->check), "%s", check);
    f->problem = problem;
    f->host = host;
    snprintf(f->device, sizeof(f->device), "%s", (NULL != device) ? device : "");
    snprintf(f->ifname, sizeof(f->ifname), "%s", (NULL != ifname) ? ifname : "");
    va_start(ap, format);
    vsnprintf(f->text, sizeof(f->text), format, ap);
    va_end(ap);
}

/* "host H: device D (interface I)" for messages. */
static void port_subject(const doc_host_t *h, const doc_port_t *p, char *buf, size_t len)
{
    snprintf(buf, len, "host %s: device %s (interface %s)", doc_host_name(h), p->info.device,
             ('\0' != p->info.ifname[0]) ? p->info.ifname : "none");
}

static int port_usable(const doc_port_t *p)
{
    return 0 == strcmp(p->diag, "ok");
}

/* ------------------------------------------------------------------------------------------ */
/* Reaching the hosts, tbrdma and RDMA on each                                                */

static const char *last_line(const char *text, char *buf, size_t len)
{
    size_t n = strlen(text);
    const char *start;

    while (0 < n && '\n' == text[n - 1]) {
        n--;
    }
    start = text + n;
    while (start > text && '\n' != start[-1]) {
        start--;
    }
    snprintf(buf, len, "%.*s", (int) (text + n - start), start);
    return ('\0' != buf[0]) ? buf : "no output";
}

static void check_reached(doc_cluster_t *cl, int i, const char *agent, int timeout)
{
    doc_host_t *h = &cl->hosts[i];
    char last[512];

    if (h->probed) {
        return;
    }
    h->down = 1;
    if (h->timed_out) {
        doc_add(cl, "unreachable", 1, i, NULL, NULL,
                "host %s: no answer within %d s through the launch agent (%s %s); fix: check "
                "that `%s %s true` returns at once, without a password prompt (mpirun starts "
                "its daemons the same way)",
                h->entry.name, timeout, agent, h->entry.login, agent, h->entry.login);
        return;
    }
    doc_add(cl, "unreachable", 1, i, NULL, NULL,
            "host %s: cannot run commands there through the launch agent %s (exit %d: %s); fix: "
            "make `%s %s true` work without a password (ssh-copy-id %s; check the host name), "
            "as mpirun starts its daemons the same way",
            h->entry.name, agent, h->exit_status, last_line(h->output_tail, last, sizeof(last)),
            agent, h->entry.login, h->entry.login);
}

static void check_tbrdma_installed(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];

    if ('\0' != h->info_path[0]) {
        return;
    }
    h->no_rdma = 1;
    doc_add(cl, "no-tbrdma", 1, i, NULL, NULL,
            "host %s: tbrdma is not installed (no tbrdma-info in the PATH of a non-interactive "
            "shell, beside tbrdma-doctor, in /opt/homebrew/bin or /usr/local/bin); fix: install "
            "tbrdma on %s, the same version as on the other hosts (`brew install "
            "packaging/homebrew/tbrdma.rb`, or `make install`)",
            doc_host_name(h), doc_host_name(h));
}

/* The ports of other hosts that face host i (and so go DOWN when it has no RDMA). */
static void facing_ports(doc_cluster_t *cl, int i, tbrdma_fmt_t *out)
{
    doc_port_t *p;
    int j, k, n = 0;

    for (j = 0; j < cl->nhosts; j++) {
        for (k = 0; j != i && k < cl->hosts[j].nports; k++) {
            p = &cl->hosts[j].ports[k];
            if (i == p->peer_host) {
                p->explained = 1;
                tbrdma_fmt_add(out, "%s%s %s", (0 == n++) ? "; that is why " : ", ",
                               doc_host_name(&cl->hosts[j]), p->info.device);
            }
        }
    }
    if (0 < n) {
        tbrdma_fmt_add(out, " %s DOWN", (1 == n) ? "is" : "are");
    }
}

/* tbrdma-info's host-level diagnoses: no verbs library, no device (RDMA off), no list. */
static void check_rdma(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];
    char facing[DOC_TEXT_MAX];
    tbrdma_fmt_t fmt;

    if (h->no_rdma || '\0' == h->host_diag[0]) {
        return;
    }
    h->no_rdma = 1;
    if (0 != strcmp(h->host_diag, "no-devices")) {
        doc_add(cl,
                (0 == strcmp(h->host_diag, "no-device-list")) ? "rdma-device-list"
                                                              : "no-verbs-library",
                1, i, NULL, NULL, "%s", h->host_diag_text);
        return;
    }
    tbrdma_fmt_init(&fmt, facing, sizeof(facing));
    facing_ports(cl, i, &fmt);
    doc_add(cl, "rdma-disabled", 1, i, NULL, NULL,
            "host %s: no RDMA device: RDMA is disabled, or this Mac has no Thunderbolt 5 port%s; "
            "fix: start %s in Recovery, open Terminal, run `rdma_ctl enable`, restart, then "
            "check that `rdma_ctl status` says enabled and `ibv_devices` lists rdma_en devices "
            "(a Mac with only Thunderbolt 4 ports lists none: it cannot do RDMA)",
            doc_host_name(h), facing, doc_host_name(h));
}

/* ------------------------------------------------------------------------------------------ */
/* The same Open MPI and tbrdma everywhere, and Open MPI finds tbrdma                         */

/* The version most hosts have (ties: the first host's); "" when none reported one. */
static const char *majority(const doc_cluster_t *cl, size_t offset)
{
    const char *best = "", *v;
    int i, j, n, best_n = 0;

    for (i = 0; i < cl->nhosts; i++) {
        v = (const char *) &cl->hosts[i] + offset;
        for (n = 0, j = 0; '\0' != v[0] && j < cl->nhosts; j++) {
            n += (0 == strcmp(v, (const char *) &cl->hosts[j] + offset));
        }
        if (n > best_n) {
            best = v;
            best_n = n;
        }
    }
    return best;
}

/* "mac-a, mac-b" for the hosts whose field at offset equals want. */
static void hosts_with(const doc_cluster_t *cl, size_t offset, const char *want, char *buf,
                       size_t len)
{
    tbrdma_fmt_t fmt;
    int i, n = 0;

    tbrdma_fmt_init(&fmt, buf, len);
    for (i = 0; i < cl->nhosts; i++) {
        if (0 == strcmp((const char *) &cl->hosts[i] + offset, want)) {
            tbrdma_fmt_add(&fmt, "%s%s", (0 == n++) ? "" : ", ", doc_host_name(&cl->hosts[i]));
        }
    }
}

static void check_ompi(doc_cluster_t *cl, int i, const char *ref)
{
    doc_host_t *h = &cl->hosts[i];
    size_t off = offsetof(doc_host_t, ompi_version);
    char others[CHECK_LIST_MAX];

    if ('\0' == h->ompi_path[0]) {
        doc_add(cl, "no-ompi", 1, i, NULL, NULL,
                "host %s: Open MPI is not found (no ompi_info in the PATH of a non-interactive "
                "shell, in /opt/homebrew/bin or /usr/local/bin), and mpirun starts its daemons "
                "through such a shell; fix: install Open MPI %s on %s (`brew install open-mpi`), "
                "or add its bin directory to PATH in ~/.zshenv, or give mpirun --prefix",
                doc_host_name(h), ('\0' != ref[0]) ? ref : "", doc_host_name(h));
        return;
    }
    if ('\0' == ref[0] || 0 == strcmp(h->ompi_version, ref)) {
        return;
    }
    hosts_with(cl, off, ref, others, sizeof(others));
    doc_add(cl, "ompi-version", 1, i, NULL, NULL,
            "host %s: Open MPI %s (%s), but %s %s %s: every host needs the same Open MPI, and "
            "tbrdma built for it; fix: install Open MPI %s on %s (or the same newer version on "
            "every host, then rebuild tbrdma on each)",
            doc_host_name(h), ('\0' != h->ompi_version[0]) ? h->ompi_version : "(unknown version)",
            h->ompi_path, others, (NULL != strchr(others, ',')) ? "have" : "has", ref, ref,
            doc_host_name(h));
}

static void check_tbrdma_version(doc_cluster_t *cl, int i, const char *ref)
{
    doc_host_t *h = &cl->hosts[i];
    char others[CHECK_LIST_MAX];

    if ('\0' == h->info_path[0] || '\0' == ref[0] || 0 == strcmp(h->tbrdma_version, ref)) {
        return;
    }
    hosts_with(cl, offsetof(doc_host_t, tbrdma_version), ref, others, sizeof(others));
    doc_add(cl, "tbrdma-version", 1, i, NULL, NULL,
            "host %s: tbrdma %s (%s), but %s %s tbrdma %s (+src.: a checksum of the "
            "component's sources); fix: install tbrdma %s on %s, built from the same release "
            "or commit as the others",
            doc_host_name(h), ('\0' != h->tbrdma_version[0]) ? h->tbrdma_version : "(unknown)",
            h->info_path, others, (NULL != strchr(others, ',')) ? "have" : "has", ref, ref,
            doc_host_name(h));
}

static void check_component(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];

    if (!h->component_found) {
        doc_add(cl, "component-missing", 1, i, NULL, NULL,
                "host %s: Open MPI %s does not find tbrdma: no mca_btl_tbrdma.so in its "
                "component path (%s); fix: install tbrdma's component there (`make install` puts "
                "it in Open MPI's own directory), or name its directory in ~/.openmpi/"
                "mca-params.conf on %s: `opal_mca_base_component_path = SYS_DEFAULT:DIR` (with "
                "`make install --prefix=P`, DIR is P/lib/openmpi)",
                doc_host_name(h), h->ompi_version,
                ('\0' != h->component_path[0]) ? h->component_path : "unknown", doc_host_name(h));
        return;
    }
    if (0 != strcmp(h->component_version, h->ompi_version)) {
        doc_add(cl, "component-version", 1, i, NULL, NULL,
                "host %s: the tbrdma component Open MPI %s loads was built for Open MPI %s; "
                "fix: rebuild and reinstall tbrdma on %s against its Open MPI %s",
                doc_host_name(h), h->ompi_version, h->component_version, doc_host_name(h),
                h->ompi_version);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* macOS: the firewall, the Thunderbolt Bridge service, exo's daemon, Thunderbolt 4, services */

static void check_macos_host(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];
    const doc_service_t *s;
    int k;

    if (1 <= h->firewall) {
        doc_add(cl, "firewall", 1, i, NULL, NULL,
                "host %s: the macOS application firewall is on (socketfilterfw: State = %d): it "
                "blocks the connections mpirun's daemons and the MPI processes accept from the "
                "other Macs; fix: `sudo /usr/libexec/ApplicationFirewall/socketfilterfw "
                "--setglobalstate off` on %s (or allow prted and your program with "
                "socketfilterfw --add and --unblockapp, with State = 1 only)",
                doc_host_name(h), h->firewall, doc_host_name(h));
    }
    for (k = 0; k < h->nservices; k++) {
        s = &h->services[k];
        if (s->svc.enabled && 0 == strcmp(s->svc.port, "Thunderbolt Bridge")) {
            doc_add(cl, "bridge-service", 1, i, s->svc.device, s->svc.device,
                    "host %s: the network service \"%s\" (%s) is active: it takes the "
                    "Thunderbolt ports into its bridge again when a cable is plugged or the Mac "
                    "restarts; fix: `sudo networksetup -setnetworkserviceenabled \"%s\" off` "
                    "(System Settings > Network > Thunderbolt Bridge > Make Inactive), or "
                    "tbrdma-setup --apply",
                    doc_host_name(h), s->svc.name, s->svc.device, s->svc.name);
        }
    }
    if (h->exo_daemon) {
        doc_add(cl, "exo-daemon", 1, i, NULL, NULL,
                "host %s: exo's LaunchDaemon io.exo.networksetup is installed: every 30 minutes "
                "it sets every Thunderbolt port back to DHCP, replacing the per-cable addresses; "
                "fix: `sudo launchctl bootout system/io.exo.networksetup; sudo rm "
                "/Library/LaunchDaemons/io.exo.networksetup.plist` on %s",
                doc_host_name(h), doc_host_name(h));
    }
}

/*
 * A Thunderbolt 4 port, cable or peer: RDMA needs Thunderbolt 5 end to end. One line per cable
 * (the other end, showing the same link, is marked explained).
 */
static void check_tb_generation(doc_cluster_t *cl, int i, doc_port_t *p)
{
    const tbrdma_tb_bus_t *bus = &cl->hosts[i].buses[p->bus];
    doc_port_t *peer = (0 <= p->peer_host && 0 <= p->peer_port)
                           ? &cl->hosts[p->peer_host].ports[p->peer_port]
                           : NULL;
    char subj[256], other[192] = "";

    if (p->explained || 4 != tbrdma_macos_tb_generation(bus)) {
        return;
    }
    port_subject(&cl->hosts[i], p, subj, sizeof(subj));
    p->explained = 1;
    if (NULL != peer) {
        peer->explained = 1;
        snprintf(other, sizeof(other), " to %s %s (%s)", doc_host_name(&cl->hosts[p->peer_host]),
                 peer->info.device, peer->info.ifname);
    }
    doc_add(cl, "thunderbolt-4", 1, i, p->info.device, p->info.ifname,
            "%s: %s (%s, receptacle %d) %s%s at %d Gb/s: that is Thunderbolt 4, and RDMA needs "
            "Thunderbolt 5 ports and cables end to end; fix: %s",
            subj, p->hwport, bus->name, bus->receptacle, bus->speed_is_max ? "offers" : "links",
            other, bus->speed_gbps,
            bus->speed_is_max ? "use a Thunderbolt 5 port of this Mac"
                              : "use a Thunderbolt 5 cable (and Thunderbolt 5 ports at both ends)");
}

/*
 * The address of a port must live in an active network service of its interface, or macOS
 * drops it at the next restart or cable change: no service at all (an `ifconfig` by hand), or a
 * Manual service holding another address. A DHCP service (link-local addresses) is persistent.
 */
static void check_service(doc_cluster_t *cl, int i, doc_port_t *p)
{
    const doc_host_t *h = &cl->hosts[i];
    const doc_service_t *s = NULL;
    char subj[256], ip[16];
    int k;

    for (k = 0; k < h->nservices; k++) {
        if (h->services[k].svc.enabled && 0 == strcmp(h->services[k].svc.device, p->info.ifname)) {
            s = &h->services[k];
            break;
        }
    }
    if (!p->info.has_ipv4
        || (NULL != s
            && (!s->has_info || TBRDMA_SVC_MANUAL != s->info.config
                || (s->info.has_ipv4 && s->info.ipv4 == p->info.ipv4)))) {
        return;
    }
    port_subject(h, p, subj, sizeof(subj));
    tbrdma_ipv4_to_string(p->info.ipv4, ip, sizeof(ip));
    doc_add(cl, "address-not-persistent", 1, i, p->info.device, p->info.ifname,
            "%s: address %s/%d is %s: macOS drops it at the next restart or cable change; fix: "
            "tbrdma-setup --apply (one network service per Thunderbolt port, with its manual "
            "address)",
            subj, ip, p->info.prefix,
            (NULL == s) ? "in no active network service (set by hand with ifconfig?)"
                        : "not the manual address of its network service");
}

/* ------------------------------------------------------------------------------------------ */
/* The mesh: a cable between every pair, none crossed, each with its own subnet              */

/* Cables between hosts a and b; lists them ("mac-a rdma_en2 <-> mac-b rdma_en2"). */
static int pair_cables(const doc_cluster_t *cl, int a, int b, tbrdma_fmt_t *out)
{
    const doc_cable_t *c;
    int k, n = 0, s;

    for (k = 0; k < cl->ncables; k++) {
        c = &cl->cables[k];
        if (!((c->host[0] == a && c->host[1] == b) || (c->host[0] == b && c->host[1] == a))) {
            continue;
        }
        s = (c->host[0] == a) ? 0 : 1;
        tbrdma_fmt_add(out, "%s%s %s <-> %s %s", (0 == n++) ? "" : ", ",
                       doc_host_name(&cl->hosts[a]), cl->hosts[a].ports[c->port[s]].info.device,
                       doc_host_name(&cl->hosts[b]),
                       cl->hosts[b].ports[c->port[1 - s]].info.device);
    }
    return n;
}

/*
 * 1 when the pair is explained by something else: a port of a faces b (or of b faces a) on an
 * interface without RDMA, or a port of either host with no known peer has its own problem
 * (bridged, no interface), which the port's finding names.
 */
static int pair_explained(const doc_cluster_t *cl, int a, int b)
{
    const doc_port_t *p;
    int s, k, h;

    for (s = 0; s < 2; s++) {
        h = (0 == s) ? a : b;
        for (k = 0; k < cl->hosts[h].nports; k++) {
            p = &cl->hosts[h].ports[k];
            if (((0 == s) ? b : a) == p->peer_host) {
                return 1;
            }
            if (0 > p->peer_host && 0 != strcmp(p->diag, "ok")
                && 0 != strcmp(p->diag, "port-down")) {
                return 1;
            }
        }
    }
    return 0;
}

/* Host h's ports with no known peer: "rdma_en4 (en4, DOWN)"; returns their number. */
static int free_ports(doc_cluster_t *cl, int h, doc_port_t **first_p, tbrdma_fmt_t *out)
{
    doc_port_t *p;
    int k, n = 0;

    for (k = 0; k < cl->hosts[h].nports; k++) {
        p = &cl->hosts[h].ports[k];
        if (0 <= p->peer_host) {
            continue;
        }
        p->explained = 1;
        *first_p = (0 == n) ? p : *first_p;
        tbrdma_fmt_add(out, "%s%s (%s, %s)", (0 == n++) ? "" : ", ", p->info.device, p->info.ifname,
                       (TBRDMA_PORT_STATE_ACTIVE == p->info.state) ? "ACTIVE" : "DOWN");
    }
    if (0 == n) {
        tbrdma_fmt_add(out, "none, every port is cabled to another Mac");
    }
    return n;
}

static void check_no_cable(doc_cluster_t *cl, int a, int b)
{
    const char *na = doc_host_name(&cl->hosts[a]), *nb = doc_host_name(&cl->hosts[b]);
    char fa[CHECK_LIST_MAX], fb[CHECK_LIST_MAX];
    doc_port_t *pa = NULL, *pb = NULL;
    tbrdma_fmt_t oa, ob;
    int n_a, n_b;

    tbrdma_fmt_init(&oa, fa, sizeof(fa));
    tbrdma_fmt_init(&ob, fb, sizeof(fb));
    n_a = free_ports(cl, a, &pa, &oa);
    n_b = free_ports(cl, b, &pb, &ob);
    if (1 == n_a && 1 == n_b) {
        doc_add(cl, "no-cable", 1, a, pa->info.device, pa->info.ifname,
                "host %s: device %s (interface %s): no cable to host %s: this port and %s's %s "
                "(%s) have no Mac at the other end (%s and %s); fix: connect %s %s to %s %s with "
                "a Thunderbolt 5 cable (if one is plugged there, it is loose, faulty or not "
                "Thunderbolt 5)",
                na, pa->info.device, pa->info.ifname, nb, nb, pb->info.device, pb->info.ifname,
                (TBRDMA_PORT_STATE_ACTIVE == pa->info.state) ? "ACTIVE" : "DOWN",
                (TBRDMA_PORT_STATE_ACTIVE == pb->info.state) ? "ACTIVE" : "DOWN", na,
                pa->info.ifname, nb, pb->info.ifname);
        return;
    }
    doc_add(cl, "no-cable", 1, a, (NULL != pa) ? pa->info.device : NULL,
            (NULL != pa) ? pa->info.ifname : NULL,
            "host %s and host %s: no cable between them (ports of %s without a Mac at the other "
            "end: %s; of %s: %s); fix: connect a Thunderbolt 5 cable between a free Thunderbolt "
            "5 port of %s and one of %s",
            na, nb, na, fa, nb, fb, na, nb);
}

static void check_pair(doc_cluster_t *cl, int a, int b)
{
    char list[CHECK_LIST_MAX];
    tbrdma_fmt_t fmt;
    int n;

    if (cl->hosts[a].down || cl->hosts[a].no_rdma || cl->hosts[b].down || cl->hosts[b].no_rdma) {
        return;
    }
    tbrdma_fmt_init(&fmt, list, sizeof(list));
    n = pair_cables(cl, a, b, &fmt);
    if (1 < n) {
        doc_add(cl, "double-cable", 0, a, NULL, NULL,
                "note: host %s and host %s are joined by %d cables (%s): tbrdma uses the first, "
                "the others stay idle",
                doc_host_name(&cl->hosts[a]), doc_host_name(&cl->hosts[b]), n, list);
    }
    if (0 == n && !pair_explained(cl, a, b)) {
        check_no_cable(cl, a, b);
    }
}

static int is_link_local(const doc_port_t *p)
{
    return p->info.has_ipv4 && 0xa9fe0000u == (p->info.ipv4 & 0xffff0000u);
}

static uint32_t net_of(const doc_port_t *p)
{
    return (0 >= p->info.prefix) ? 0 : p->info.ipv4 & ~(0xffffffffu >> p->info.prefix);
}

/* The only other port of the cluster in p's subnet: 0 and its host/port, else -1. */
static int subnet_partner(const doc_cluster_t *cl, int a, int pa, int *b_p, int *pb_p)
{
    const doc_port_t *p = &cl->hosts[a].ports[pa], *q;
    int i, k, n = 0;

    for (i = 0; i < cl->nhosts; i++) {
        for (k = 0; k < cl->hosts[i].nports; k++) {
            q = &cl->hosts[i].ports[k];
            if ((i == a && k == pa) || !q->info.has_ipv4 || q->info.prefix != p->info.prefix
                || net_of(q) != net_of(p)) {
                continue;
            }
            *b_p = i;
            *pb_p = k;
            n++;
        }
    }
    return (1 == n) ? 0 : -1;
}

static void address_text(const doc_port_t *p, char *buf, size_t len)
{
    char ip[16];

    tbrdma_ipv4_to_string(p->info.ipv4, ip, sizeof(ip));
    snprintf(buf, len, "%s/%d", ip, p->info.prefix);
}

/*
 * Crossed at host a: port pa faces host c but its subnet partner is on host b, and another
 * port qa of a faces b with its partner on c. Returns 1 after reporting it.
 */
static int check_crossed(doc_cluster_t *cl, int a, int pa)
{
    doc_host_t *h = &cl->hosts[a];
    doc_port_t *p = &h->ports[pa], *q;
    int b, pb, qb, qpb, k;
    char ap[32], aq[32];

    if (0 != subnet_partner(cl, a, pa, &b, &pb) || b == p->peer_host) {
        return 0;
    }
    for (k = 0; k < h->nports; k++) {
        q = &h->ports[k];
        if (k == pa || q->peer_host != b || 0 != subnet_partner(cl, a, k, &qb, &qpb)
            || qb != p->peer_host) {
            continue;
        }
        address_text(p, ap, sizeof(ap));
        address_text(q, aq, sizeof(aq));
        doc_add(cl, "crossed", 1, a, p->info.device, p->info.ifname,
                "host %s: devices %s (interface %s) and %s (interface %s): cables crossed: %s is "
                "cabled to %s but addressed for %s (%s), and %s is cabled to %s but addressed "
                "for %s (%s); fix: swap the two cables at %s (%s <-> %s), or address the ports as "
                "cabled: tbrdma-setup --apply",
                doc_host_name(h), p->info.device, p->info.ifname, q->info.device, q->info.ifname,
                p->info.ifname, doc_host_name(&cl->hosts[p->peer_host]),
                doc_host_name(&cl->hosts[b]), ap, q->info.ifname, doc_host_name(&cl->hosts[b]),
                doc_host_name(&cl->hosts[qb]), aq, doc_host_name(h), p->info.ifname,
                q->info.ifname);
        p->explained = q->explained = 1;
        cl->hosts[b].ports[pb].explained = cl->hosts[qb].ports[qpb].explained = 1;
        return 1;
    }
    return 0;
}

static void check_cable_address(doc_cluster_t *cl, const doc_cable_t *c, int *linklocal_p)
{
    doc_port_t *p = &cl->hosts[c->host[0]].ports[c->port[0]];
    doc_port_t *q = &cl->hosts[c->host[1]].ports[c->port[1]];
    char subj[256], ap[32], aq[32];
    int b, pb;

    if (!p->info.has_ipv4 || !q->info.has_ipv4 || p->explained || q->explained) {
        return;
    }
    if (is_link_local(p) && is_link_local(q)) {
        *linklocal_p += 1;
        return;
    }
    if (0 == subnet_partner(cl, c->host[0], c->port[0], &b, &pb) && b == c->host[1]
        && pb == c->port[1]) {
        return;
    }
    if (check_crossed(cl, c->host[0], c->port[0]) || check_crossed(cl, c->host[1], c->port[1])) {
        return;
    }
    port_subject(&cl->hosts[c->host[0]], p, subj, sizeof(subj));
    address_text(p, ap, sizeof(ap));
    address_text(q, aq, sizeof(aq));
    p->explained = q->explained = 1;
    doc_add(cl, "address-mismatch", 1, c->host[0], p->info.device, p->info.ifname,
            "%s: cabled to %s %s, but the two ends are not alone in one subnet (%s and %s): "
            "tbrdma tells cables apart by a /30 per cable; fix: tbrdma-setup --apply addresses "
            "every port as cabled",
            subj, doc_host_name(&cl->hosts[c->host[1]]), q->info.device, ap, aq);
}

/* The spec's cable with end (host a, device of pa): its other end, else -1. */
static int spec_other_end(const doc_cluster_t *cl, const tbrdma_hostlist_t *names, int a,
                          const char *device, int *b_p, const char **dev_p)
{
    const tbrdma_mesh_cable_t *c;
    int k, s;

    for (k = 0; NULL != cl->spec && k < cl->spec->ncables; k++) {
        c = &cl->spec->cables[k];
        for (s = 0; s < 2; s++) {
            if (a == tbrdma_hostlist_find(names, c->host[s]) && 0 == strcmp(c->device[s], device)) {
                *b_p = tbrdma_hostlist_find(names, c->host[1 - s]);
                *dev_p = c->device[1 - s];
                return 0;
            }
        }
    }
    return -1;
}

static void mark_device(doc_host_t *h, const char *device)
{
    int k;

    for (k = 0; k < h->nports; k++) {
        if (0 == strcmp(h->ports[k].info.device, device)) {
            h->ports[k].explained = 1;
        }
    }
}

/* Every cable the mesh file names between hosts of the cluster must be a cable found. */
static void check_spec(doc_cluster_t *cl, const tbrdma_hostlist_t *names)
{
    const char *dev;
    doc_port_t *p;
    char subj[256];
    int a, k, b;

    for (a = 0; a < cl->nhosts; a++) {
        for (k = 0; k < cl->hosts[a].nports; k++) {
            p = &cl->hosts[a].ports[k];
            if (p->explained || 0 > p->peer_port
                || 0 != spec_other_end(cl, names, a, p->info.device, &b, &dev) || 0 > b
                || (b == p->peer_host
                    && 0 == strcmp(dev, cl->hosts[b].ports[p->peer_port].info.device))) {
                continue;
            }
            port_subject(&cl->hosts[a], p, subj, sizeof(subj));
            /* one line per wrong line of the file: its other end and p's real peer are told */
            p->explained = 1;
            cl->hosts[p->peer_host].ports[p->peer_port].explained = 1;
            mark_device(&cl->hosts[b], dev);
            doc_add(cl, "mesh-file", 1, a, p->info.device, p->info.ifname,
                    "%s: the mesh file %s says it is cabled to %s %s, but it is cabled to %s %s; "
                    "fix: correct the mesh file (tbrdma-doctor --write-mesh-file %s writes it "
                    "from the cables found)",
                    subj, cl->spec_path, doc_host_name(&cl->hosts[b]), dev,
                    doc_host_name(&cl->hosts[p->peer_host]),
                    cl->hosts[p->peer_host].ports[p->peer_port].info.device, cl->spec_path);
        }
    }
}

/* 1 when the spec names exactly this cable. */
static int spec_names(const doc_cluster_t *cl, const tbrdma_hostlist_t *names, const doc_cable_t *c)
{
    const char *dev;
    int b;

    return 0
               == spec_other_end(cl, names, c->host[0],
                                 cl->hosts[c->host[0]].ports[c->port[0]].info.device, &b, &dev)
           && b == c->host[1] && 0 == strcmp(dev, cl->hosts[b].ports[c->port[1]].info.device);
}

static void check_addresses(doc_cluster_t *cl, const tbrdma_hostlist_t *names)
{
    int k, linklocal = 0;

    for (k = 0; k < cl->ncables; k++) {
        if (!spec_names(cl, names, &cl->cables[k])) {
            check_cable_address(cl, &cl->cables[k], &linklocal);
        }
    }
    if (0 == linklocal) {
        return;
    }
    doc_add(cl, "link-local", 1, -1, NULL, NULL,
            "%d cable%s join%s ports with link-local addresses (169.254/16, one subnet for every "
            "port): tbrdma cannot tell from them which port reaches which Mac%s; fix: give each "
            "cable its own /30 (tbrdma-setup --apply), or name the cables in a mesh file: "
            "tbrdma-doctor --write-mesh-file mesh.txt, then mpirun --mca btl_tbrdma_mesh_file "
            "mesh.txt",
            linklocal, (1 == linklocal) ? "" : "s", (1 == linklocal) ? "s" : "",
            (NULL != cl->spec) ? " and the mesh file does not name them" : "");
}

/*
 * For a port without IPv4 whose cable's other end has a /30: the address it needs (the other
 * host address of that /30), appended to tbrdma-info's message. "" otherwise.
 */
static void no_ipv4_exact(const doc_cluster_t *cl, const doc_port_t *p, const doc_port_t *peer,
                          char *buf, size_t len)
{
    char mine[16], theirs[16];
    uint32_t host_part;

    buf[0] = '\0';
    if (NULL == peer || !peer->info.has_ipv4 || 30 != peer->info.prefix) {
        return;
    }
    host_part = peer->info.ipv4 & 3u;
    if (1 != host_part && 2 != host_part) {
        return;
    }
    tbrdma_ipv4_to_string(peer->info.ipv4, theirs, sizeof(theirs));
    tbrdma_ipv4_to_string((peer->info.ipv4 & ~3u) | (3u - host_part), mine, sizeof(mine));
    snprintf(buf, len,
             "; for this cable: %s %s has %s/30, so %s needs %s/30 (tbrdma-setup --apply sets it "
             "to stay)",
             doc_host_name(&cl->hosts[p->peer_host]), peer->info.ifname, theirs, p->info.ifname,
             mine);
}

/*
 * A cluster where no port has IPv4 (the macOS 26.2 default): one line for all of them, with the
 * command that addresses every cable, instead of one line per port. Returns 1 when it reported.
 */
static int check_unaddressed(doc_cluster_t *cl)
{
    int i, k, n = 0, hosts = 0, before;
    doc_port_t *p;

    for (i = 0; i < cl->nhosts; i++) {
        for (before = n, k = 0;
             !cl->hosts[i].down && !cl->hosts[i].no_rdma && k < cl->hosts[i].nports; k++) {
            p = &cl->hosts[i].ports[k];
            if (!p->explained && 0 != strcmp(p->diag, "no-ipv4")) {
                return 0;
            }
            n += !p->explained;
        }
        hosts += (n > before);
    }
    if (2 > n) {
        return 0;
    }
    for (i = 0; i < cl->nhosts; i++) {
        for (k = 0; k < cl->hosts[i].nports; k++) {
            cl->hosts[i].ports[k].explained = 1;
        }
    }
    doc_add(cl, "no-ipv4", 1, -1, NULL, NULL,
            "no Thunderbolt port has an IPv4 address (%d ports on %d hosts), so none has an "
            "IPv4-mapped GID and every queue pair would fail with errno 22 (EINVAL); fix: "
            "tbrdma-setup --hostfile FILE --apply gives each cable its own /30 on every Mac (run "
            "it without --apply first to see the plan)",
            n, hosts);
    return 1;
}

/* Port diagnoses from tbrdma-info that nothing else explained. */
static void check_ports(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];
    const doc_port_t *peer;
    char exact[256];
    doc_port_t *p;
    int k;

    for (k = 0; k < h->nports; k++) {
        p = &h->ports[k];
        peer = (0 <= p->peer_host && 0 <= p->peer_port)
                   ? &cl->hosts[p->peer_host].ports[p->peer_port]
                   : NULL;
        if (port_usable(p) || p->explained
            || (0 == strcmp(p->diag, "port-down") && NULL != peer && !port_usable(peer))) {
            continue;
        }
        exact[0] = '\0';
        if (0 == strcmp(p->diag, "no-ipv4")) {
            no_ipv4_exact(cl, p, peer, exact, sizeof(exact));
        }
        doc_add(cl, p->diag, 1, i, p->info.device, p->info.ifname, "%s%s",
                ('\0' != p->diag_text[0]) ? p->diag_text : p->diag, exact);
    }
}

/* Host indexes ordered by name, as the solver wants them. */
static int name_order(const doc_cluster_t *cl, int *order)
{
    int i, j, n = 0, t;

    for (i = 0; i < cl->nhosts; i++) {
        if (!cl->hosts[i].down && !cl->hosts[i].no_rdma) {
            order[n++] = i;
        }
    }
    for (i = 1; i < n; i++) {
        for (j = i; 0 < j
                    && 0 < strcmp(doc_host_name(&cl->hosts[order[j - 1]]),
                                  doc_host_name(&cl->hosts[order[j]]));
             j--) {
            t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    return n;
}

/* tbrdma's own solver on the usable ports: what every MPI process would decide. */
static void check_solver(doc_cluster_t *cl, int problems)
{
    int order[TBRDMA_MAX_HOSTS], n = name_order(cl, order), i, k;
    char err[2 * DOC_TEXT_MAX];
    tbrdma_modex_t *m;

    if (n < cl->nhosts || NULL == (cl->modex = calloc((size_t) n, sizeof(*cl->modex)))) {
        return;
    }
    for (i = 0; i < n; i++) {
        m = &cl->modex[i];
        snprintf(m->host, sizeof(m->host), "%s", doc_host_name(&cl->hosts[order[i]]));
        for (k = 0; k < cl->hosts[order[i]].nports; k++) {
            if (port_usable(&cl->hosts[order[i]].ports[k])) {
                tbrdma_modex_port_from_info(&cl->hosts[order[i]].ports[k].info,
                                            &m->ports[m->nports++]);
            }
        }
    }
    err[0] = '\0';
    cl->solved = (0 == tbrdma_mesh_solve(cl->modex, n, cl->spec, &cl->mesh, err, sizeof(err)));
    if (!cl->solved && 0 == problems) {
        doc_add(cl, "mesh-unresolved", 1, -1, NULL, NULL,
                "tbrdma's mesh solver, on the usable ports of every host: %s; fix: every host "
                "needs a name of its own and every cable a /30 of its own (tbrdma-setup --apply), "
                "see docs/mesh.md",
                err);
    }
}

static int count_problems(const doc_cluster_t *cl)
{
    int k, n = 0;

    for (k = 0; k < cl->nfindings; k++) {
        n += cl->findings[k].problem;
    }
    return n;
}

/* Per host: tbrdma, RDMA, the same Open MPI and tbrdma, Open MPI finds tbrdma, macOS. */
static void check_host(doc_cluster_t *cl, int i, const char *ompi_ref, const char *tb_ref)
{
    doc_host_t *h = &cl->hosts[i];

    check_tbrdma_installed(cl, i);
    check_rdma(cl, i);
    check_ompi(cl, i, ompi_ref);
    check_tbrdma_version(cl, i, tb_ref);
    if ('\0' != h->ompi_path[0] && '\0' != h->info_path[0] && 0 == strcmp(h->ompi_version, ompi_ref)
        && 0 == strcmp(h->tbrdma_version, tb_ref)) {
        check_component(cl, i);
    }
    if (h->macos) {
        check_macos_host(cl, i);
    }
}

/* Per port on macOS: Thunderbolt 5, and an address that survives. */
static void check_macos_ports(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];
    int k;

    for (k = 0; h->macos && k < h->nports; k++) {
        if (0 <= h->ports[k].bus) {
            check_tb_generation(cl, i, &h->ports[k]);
        }
        if (port_usable(&h->ports[k]) && 0 < h->nservices) {
            check_service(cl, i, &h->ports[k]);
        }
    }
}

int doc_check_all(doc_cluster_t *cl, const char *agent, int timeout)
{
    const char *ompi_ref, *tb_ref;
    tbrdma_hostlist_t *names = calloc(1, sizeof(*names));
    int i, j;

    if (NULL == names) {
        return -1;
    }
    for (i = 0; i < cl->nhosts; i++) {
        check_reached(cl, i, agent, timeout);
        snprintf(names->hosts[i].name, sizeof(names->hosts[i].name), "%s",
                 doc_host_name(&cl->hosts[i]));
    }
    names->nhosts = cl->nhosts;
    doc_topo_cables(cl);
    ompi_ref = majority(cl, offsetof(doc_host_t, ompi_version));
    tb_ref = majority(cl, offsetof(doc_host_t, tbrdma_version));
    for (i = 0; i < cl->nhosts; i++) {
        if (!cl->hosts[i].down) {
            check_host(cl, i, ompi_ref, tb_ref);
            check_macos_ports(cl, i);
        }
    }
    for (i = 0; i < cl->nhosts; i++) {
        for (j = i + 1; j < cl->nhosts; j++) {
            check_pair(cl, i, j);
        }
    }
    check_spec(cl, names);
    check_addresses(cl, names);
    check_unaddressed(cl);
    for (i = 0; i < cl->nhosts; i++) {
        if (!cl->hosts[i].down && !cl->hosts[i].no_rdma) {
            check_ports(cl, i);
        }
    }
    check_solver(cl, count_problems(cl));
    free(names);
    return count_problems(cl);
}
