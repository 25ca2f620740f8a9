/*
 * The doctor's per-host checks (doctor_check.c runs them in its order): the host answered,
 * tbrdma is installed and RDMA on (a host with RDMA off explains the DOWN ports that face it),
 * the same Open MPI and tbrdma as the others, Open MPI finds tbrdma, and on macOS the firewall,
 * the Thunderbolt Bridge service, exo's daemon, Thunderbolt 4 ports and addresses that do not
 * survive a restart.
 */
#include "doctor_host.h"

#include "core/tbrdma_fmt.h"
#include "core/tbrdma_gid.h"

#include <stddef.h>
#include <string.h>

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

void doc_check_reached(doc_cluster_t *cl, int i, const char *agent, int timeout)
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
const char *doc_majority(const doc_cluster_t *cl, size_t offset)
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
    char others[DOC_LIST_MAX];

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
    char others[DOC_LIST_MAX];

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
    doc_port_subject(&cl->hosts[i], p, subj, sizeof(subj));
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
    doc_port_subject(h, p, subj, sizeof(subj));
    tbrdma_ipv4_to_string(p->info.ipv4, ip, sizeof(ip));
    doc_add(cl, "address-not-persistent", 1, i, p->info.device, p->info.ifname,
            "%s: address %s/%d is %s: macOS drops it at the next restart or cable change; fix: "
            "tbrdma-setup --apply (one network service per Thunderbolt port, with its manual "
            "address)",
            subj, ip, p->info.prefix,
            (NULL == s) ? "in no active network service (set by hand with ifconfig?)"
                        : "not the manual address of its network service");
}

/* Per host: tbrdma, RDMA, the same Open MPI and tbrdma, Open MPI finds tbrdma, macOS. */
void doc_check_host(doc_cluster_t *cl, int i, const char *ompi_ref, const char *tb_ref)
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
void doc_check_macos_ports(doc_cluster_t *cl, int i)
{
    doc_host_t *h = &cl->hosts[i];
    int k;

    for (k = 0; h->macos && k < h->nports; k++) {
        if (0 <= h->ports[k].bus) {
            check_tb_generation(cl, i, &h->ports[k]);
        }
        if (doc_port_usable(&h->ports[k]) && 0 < h->nservices) {
            check_service(cl, i, &h->ports[k]);
        }
    }
}
