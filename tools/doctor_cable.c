/*
 * The doctor's checks between hosts (doctor_check.c runs them in its order, after the per-host
 * ones): a cable between every pair (a missing cable absorbs the DOWN ports at its two ends),
 * none crossed (crossed cables absorb the address mismatches of their four ports), each cable
 * alone in its subnet, no link-local addresses that no mesh file names, and the mesh file given
 * names the cables found.
 */
#include "doctor_cable.h"

#include "core/tbrdma_fmt.h"
#include "core/tbrdma_gid.h"

#include <string.h>

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
    char fa[DOC_LIST_MAX], fb[DOC_LIST_MAX];
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

void doc_check_pair(doc_cluster_t *cl, int a, int b)
{
    char list[DOC_LIST_MAX];
    tbrdma_fmt_t fmt;
    int n;

    if (cl->hosts[a].down || cl->hosts[a].no_rdma || cl->hosts[b].down || cl->hosts[b].no_rdma) {
        return;
    }
    tbrdma_fmt_init(&fmt, list, sizeof(list));
    n = pair_cables(cl, a, b, &fmt);
    if (1 < n) {
        doc_add(cl, "double-cable", 0, a, NULL, NULL,
                "note: host %s and host %s are joined by %d cables (%s): tbrdma spreads large "
                "messages over all of them (btl_tbrdma_stripe, on by default)",
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
    doc_port_subject(&cl->hosts[c->host[0]], p, subj, sizeof(subj));
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
void doc_check_spec(doc_cluster_t *cl, const tbrdma_hostlist_t *names)
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
            doc_port_subject(&cl->hosts[a], p, subj, sizeof(subj));
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

void doc_check_addresses(doc_cluster_t *cl, const tbrdma_hostlist_t *names)
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
