/*
 * The mesh solver: decides, from every host's published ports (and an optional mesh spec),
 * which local port reaches which peer host, and names every pair of hosts with no cable.
 *
 * Cables come from two sources, in this order (docs/mesh.md):
 *   1. the spec: every named cable whose two hosts are in the job (device names must exist);
 *   2. addressing, over the ports the spec did not use: a subnet (address & mask, prefix)
 *      holding exactly two ports on two hosts is one cable; any other subnet with two or more
 *      ports is ambiguous unless a spec names the cables between every pair of its hosts.
 * Invariants: the result depends only on the inputs (every process solves alone) and is
 * symmetric, link[i][j].port == link[j][i].peer_port; several cables between a pair are listed
 * in the order of their devices on the lower-named host (both ends agree which is cable k), and
 * the first one is the pair's cable for small messages.
 */
#include "tbrdma_mesh.h"
#include "tbrdma_fmt.h"
#include "tbrdma_gid.h"
#include "tbrdma_mutate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MESH_MAX_REFS (TBRDMA_MAX_HOSTS * TBRDMA_MAX_PORTS)

typedef struct mesh_cable {
    int host[2];
    int port[2];
} mesh_cable_t;

/* One port in the subnet grouping. */
typedef struct mesh_ref {
    uint32_t net;
    int prefix;
    int host;
    int port;
} mesh_ref_t;

/* Working state of one solve, on the heap (it is large). */
typedef struct mesh_work {
    const tbrdma_modex_t *hosts;
    int nhosts;
    int ncables;
    mesh_cable_t cables[MESH_MAX_REFS];
    uint8_t used[TBRDMA_MAX_HOSTS][TBRDMA_MAX_PORTS];    /* port taken by a cable */
    uint8_t covered[TBRDMA_MAX_HOSTS][TBRDMA_MAX_HOSTS]; /* the spec names a cable of the pair */
    int nrefs;
    mesh_ref_t refs[MESH_MAX_REFS];
    tbrdma_mesh_t mesh;
} mesh_work_t;

static uint32_t mesh_mask(int prefix)
{
    if (0 >= prefix) {
        return 0;
    }
    return (32 <= prefix) ? 0xffffffffu : ~(0xffffffffu >> prefix);
}

/* Length of the short host name (up to the first '.'). */
static size_t mesh_short_len(const char *name)
{
    const char *dot = strchr(name, '.');

    return (NULL != dot) ? (size_t) (dot - name) : strlen(name);
}

/* Host index of a spec name: exact match, else a unique match of the short names. -1: none. */
static int mesh_find_host(const mesh_work_t *w, const char *name)
{
    size_t n = mesh_short_len(name);
    int i, found = -1, nfound = 0;

    for (i = 0; i < w->nhosts; i++) {
        if (0 == strcmp(w->hosts[i].host, name)) {
            return i;
        }
        if (mesh_short_len(w->hosts[i].host) == n && 0 == strncmp(w->hosts[i].host, name, n)) {
            found = i;
            nfound++;
        }
    }
    return (1 == nfound) ? found : -1;
}

static int mesh_find_port(const tbrdma_modex_t *host, const char *device)
{
    int p;

    for (p = 0; p < host->nports; p++) {
        if (0 == strcmp(host->ports[p].device, device)) {
            return p;
        }
    }
    return -1;
}

static void mesh_add_cable(mesh_work_t *w, int h0, int p0, int h1, int p1)
{
    mesh_cable_t *c = &w->cables[w->ncables++];

    c->host[0] = h0;
    c->port[0] = p0;
    c->host[1] = h1;
    c->port[1] = p1;
    w->used[h0][p0] = 1;
    w->used[h1][p1] = 1;
}

static void mesh_err_unknown_device(const mesh_work_t *w, int h, const char *device,
                                    tbrdma_fmt_t *err)
{
    const tbrdma_modex_t *host = &w->hosts[h];
    int p;

    tbrdma_fmt_add(err,
                   "%sthe mesh spec names device %s of host %s, which that host does not publish "
                   "(misnamed, or not usable there; it publishes:",
                   (0 == err->used) ? "" : "; ", device, host->host);
    for (p = 0; p < host->nports; p++) {
        tbrdma_fmt_add(err, " %s", host->ports[p].device);
    }
    tbrdma_fmt_add(err, "%s)", (0 == host->nports) ? " no device" : "");
}

/*
 * One spec cable: both hosts in the job -> a cable. A device its host does not publish (a typo,
 * or a port that is down or has no IPv4 there) makes the pair cable-less, explained in err: one
 * unplugged cable must not hide the rest of the mesh.
 */
static int mesh_spec_cable(mesh_work_t *w, const tbrdma_mesh_cable_t *sc, tbrdma_fmt_t *err)
{
    int h[2], p[2], s;

    for (s = 0; s < 2; s++) {
        h[s] = mesh_find_host(w, sc->host[s]);
        if (0 > h[s]) {
            return 0; /* a cable to a host outside this job */
        }
    }
    for (s = 0; s < 2; s++) {
        p[s] = mesh_find_port(&w->hosts[h[s]], sc->device[s]);
        if (0 > p[s]) {
            mesh_err_unknown_device(w, h[s], sc->device[s], err);
            w->covered[h[0]][h[1]] = w->covered[h[1]][h[0]] = 1;
            return 0;
        }
    }
    if (h[0] == h[1] || w->used[h[0]][p[0]] || w->used[h[1]][p[1]]) {
        tbrdma_fmt_add(err, "the mesh spec cable %s:%s <-> %s:%s reuses a host or a port",
                       sc->host[0], sc->device[0], sc->host[1], sc->device[1]);
        return -EINVAL;
    }
    mesh_add_cable(w, h[0], p[0], h[1], p[1]);
    w->covered[h[0]][h[1]] = w->covered[h[1]][h[0]] = 1;
    return 0;
}

/* Orders subnets: by prefix, then network address. */
static int mesh_ref_cmp_net(const mesh_ref_t *x, const mesh_ref_t *y)
{
    if (x->prefix != y->prefix) {
        return (x->prefix < y->prefix) ? -1 : 1;
    }
    if (x->net != y->net) {
        return (x->net < y->net) ? -1 : 1;
    }
    return 0;
}

static int mesh_ref_cmp(const void *a, const void *b)
{
    const mesh_ref_t *x = a, *y = b;
    int rc = mesh_ref_cmp_net(x, y);

    if (0 != rc) {
        return rc;
    }
    if (x->host != y->host) {
        return (x->host < y->host) ? -1 : 1;
    }
    return (x->port < y->port) ? -1 : (x->port > y->port);
}

/* The ports no spec cable took, sorted by subnet. */
static void mesh_collect_refs(mesh_work_t *w)
{
    const tbrdma_modex_port_t *port;
    mesh_ref_t *r;
    int h, p;

    w->nrefs = 0;
    for (h = 0; h < w->nhosts; h++) {
        for (p = 0; p < w->hosts[h].nports; p++) {
            if (w->used[h][p]) {
                continue;
            }
            port = &w->hosts[h].ports[p];
            r = &w->refs[w->nrefs++];
            r->prefix = (32 < port->prefix) ? 32 : port->prefix;
            r->net = port->ipv4 & mesh_mask(r->prefix);
            r->host = h;
            r->port = p;
        }
    }
    qsort(w->refs, (size_t) w->nrefs, sizeof(w->refs[0]), mesh_ref_cmp);
}

/* A subnet with several ports is resolved when a spec names cables of every pair of its hosts. */
static int mesh_group_resolved(const mesh_work_t *w, const mesh_ref_t *g, int n, int have_spec)
{
    int a, b;

    if (!have_spec) {
        return 0;
    }
    for (a = 0; a < n; a++) {
        for (b = 0; b < n; b++) {
            if (g[a].host != g[b].host && !w->covered[g[a].host][g[b].host]) {
                return 0;
            }
        }
    }
    return 1;
}

static void mesh_err_ambiguous(const mesh_work_t *w, const mesh_ref_t *g, int n, int first,
                               tbrdma_fmt_t *err)
{
    char net[16];
    int k;

    tbrdma_ipv4_to_string(g[0].net, net, sizeof(net));
    tbrdma_fmt_add(err, "%ssubnet %s/%d holds ports", first ? "" : "; ", net, g[0].prefix);
    for (k = 0; k < n; k++) {
        tbrdma_fmt_add(err, "%s %s:%s", (0 == k) ? "" : ",", w->hosts[g[k].host].host,
                       w->hosts[g[k].host].ports[g[k].port].device);
    }
}

/* Cables by addressing; returns -EINVAL after naming every ambiguous subnet. */
static int mesh_subnet_cables(mesh_work_t *w, int have_spec, tbrdma_fmt_t *err)
{
    const mesh_ref_t *g;
    int i = 0, n, nambiguous = 0;

    mesh_collect_refs(w);
    while (i < w->nrefs) {
        g = &w->refs[i];
        n = 1;
        while (i + n < w->nrefs && 0 == mesh_ref_cmp_net(&g[0], &g[n])) {
            n++;
        }
        if (2 == n && g[0].host != g[1].host) {
            mesh_add_cable(w, g[0].host, g[0].port, g[1].host, g[1].port);
        } else if (2 <= n && !mesh_group_resolved(w, g, n, have_spec)) {
            mesh_err_ambiguous(w, g, n, 0 == nambiguous++, err);
        }
        i += n;
    }
    if (0 < nambiguous) {
        tbrdma_fmt_add(err,
                       ": link-local or shared subnets cannot identify cables: give each cable its "
                       "own /30 (tbrdma-setup), or name the cables in a mesh file "
                       "(btl_tbrdma_mesh_file), or pass MLX's hostfile as the mesh file");
        return -EINVAL;
    }
    return 0;
}

/* Oriented so that side 0 is on host a. */
static void mesh_cable_from(const mesh_cable_t *c, int a, int *pa_p, int *pb_p)
{
    int s = (c->host[0] == a) ? 0 : 1;

    *pa_p = c->port[s];
    *pb_p = c->port[1 - s];
}

/* A link with no cable. */
static tbrdma_mesh_link_t mesh_link_none(void)
{
    tbrdma_mesh_link_t l;

    memset(&l, 0, sizeof(l));
    l.port = l.peer_port = -1;
    for (int k = 0; k < TBRDMA_MESH_MAX_STRIPES; k++) {
        l.ports[k] = l.peer_ports[k] = -1;
    }
    return l;
}

/* Inserts the cable (pa, pb) into l, kept sorted by host a's device name and capped. */
static void mesh_link_insert(tbrdma_mesh_link_t *l, const tbrdma_modex_t *a, int pa, int pb)
{
    int k = (l->nstripes < TBRDMA_MESH_MAX_STRIPES) ? l->nstripes++ : TBRDMA_MESH_MAX_STRIPES;

    for (; k > 0 && 0 > strcmp(a->ports[pa].device, a->ports[l->ports[k - 1]].device); k--) {
        if (k < TBRDMA_MESH_MAX_STRIPES) {
            l->ports[k] = l->ports[k - 1];
            l->peer_ports[k] = l->peer_ports[k - 1];
        }
    }
    if (k < TBRDMA_MESH_MAX_STRIPES) {
        l->ports[k] = pa;
        l->peer_ports[k] = pb;
    }
}

/* link[b][a]: the same cables in the same order, seen from host b. */
static tbrdma_mesh_link_t mesh_link_reverse(const tbrdma_mesh_link_t *l)
{
    tbrdma_mesh_link_t r = *l;

    for (int k = 0; k < TBRDMA_MESH_MAX_STRIPES; k++) {
        r.ports[k] = l->peer_ports[k];
        r.peer_ports[k] = l->ports[k];
    }
    r.port = l->peer_port;
    r.peer_port = l->port;
    return r;
}

/* Fills link[a][b] and link[b][a] from the cables of the pair. */
static void mesh_link_pair(mesh_work_t *w, int a, int b)
{
    tbrdma_mesh_link_t l = mesh_link_none();
    int k, pa, pb;

    /* The lower-named host's device names order the cables, so both ends list them alike. */
    if (0 < strcmp(w->hosts[a].host, w->hosts[b].host) && !TBRDMA_MUTANT(CABLES_OWN_ORDER)) {
        mesh_link_pair(w, b, a);
        return;
    }
    for (k = 0; k < w->ncables; k++) {
        const mesh_cable_t *c = &w->cables[k];

        if (!((c->host[0] == a && c->host[1] == b) || (c->host[0] == b && c->host[1] == a))) {
            continue;
        }
        l.ncables++;
        mesh_cable_from(c, a, &pa, &pb);
        mesh_link_insert(&l, &w->hosts[a], pa, pb);
    }
    l.port = l.ports[0];
    l.peer_port = l.peer_ports[0];
    w->mesh.link[a][b] = l;
    w->mesh.link[b][a] = mesh_link_reverse(&l);
}

/* Links for every pair; names each pair without a cable. */
static int mesh_links(mesh_work_t *w, tbrdma_fmt_t *err)
{
    int a, b;

    w->mesh.nhosts = w->nhosts;
    w->mesh.nmissing = 0;
    for (a = 0; a < w->nhosts; a++) {
        w->mesh.link[a][a] = mesh_link_none();
        for (b = a + 1; b < w->nhosts; b++) {
            mesh_link_pair(w, a, b);
            if (0 < w->mesh.link[a][b].ncables) {
                continue;
            }
            tbrdma_fmt_add(err, "%sno cable between host %s and host %s",
                           (0 == err->used) ? "" : "; ", w->hosts[a].host, w->hosts[b].host);
            w->mesh.nmissing++;
        }
    }
    return (0 == w->mesh.nmissing) ? 0 : -ENOTCONN;
}

/* Distinct host names and port counts in range. */
static int mesh_check_hosts(const tbrdma_modex_t *hosts, int nhosts, tbrdma_fmt_t *err)
{
    int i, j;

    if (0 > nhosts || TBRDMA_MAX_HOSTS < nhosts) {
        tbrdma_fmt_add(err, "%d hosts, at most %d supported", nhosts, TBRDMA_MAX_HOSTS);
        return -EINVAL;
    }
    for (i = 0; i < nhosts; i++) {
        if (0 > hosts[i].nports || TBRDMA_MAX_PORTS < hosts[i].nports) {
            tbrdma_fmt_add(err, "host %s: %d ports, at most %d supported", hosts[i].host,
                           hosts[i].nports, TBRDMA_MAX_PORTS);
            return -EINVAL;
        }
        for (j = 0; j < i; j++) {
            if (0 == strcmp(hosts[i].host, hosts[j].host)) {
                tbrdma_fmt_add(err, "host %s is listed twice", hosts[i].host);
                return -EINVAL;
            }
        }
    }
    return 0;
}

static int mesh_solve_work(mesh_work_t *w, const tbrdma_mesh_spec_t *spec, tbrdma_fmt_t *err)
{
    int k, rc;

    if (NULL != spec) {
        for (k = 0; k < spec->ncables && k < TBRDMA_MESH_MAX_CABLES; k++) {
            rc = mesh_spec_cable(w, &spec->cables[k], err);
            if (0 != rc) {
                return rc;
            }
        }
    }
    rc = mesh_subnet_cables(w, NULL != spec, err);
    if (0 != rc) {
        return rc;
    }
    return mesh_links(w, err);
}

int tbrdma_mesh_solve(const tbrdma_modex_t *hosts, int nhosts, const tbrdma_mesh_spec_t *spec,
                      tbrdma_mesh_t *mesh_p, char *err, size_t errlen)
{
    tbrdma_fmt_t fmt;
    mesh_work_t *w;
    int rc;

    tbrdma_fmt_init(&fmt, err, errlen);
    rc = mesh_check_hosts(hosts, nhosts, &fmt);
    if (0 != rc) {
        return rc;
    }
    w = calloc(1, sizeof(*w));
    if (NULL == w) {
        tbrdma_fmt_add(&fmt, "mesh: out of memory");
        return -ENOMEM;
    }
    w->hosts = hosts;
    w->nhosts = nhosts;
    rc = mesh_solve_work(w, spec, &fmt);
    if (0 == rc || -ENOTCONN == rc) {
        memcpy(mesh_p, &w->mesh, sizeof(w->mesh));
    }
    free(w);
    return rc;
}

/* One line per cable of the pair (a, b). */
static void mesh_describe_pair(const tbrdma_modex_t *hosts, const tbrdma_mesh_t *mesh, int a, int b,
                               tbrdma_fmt_t *fmt)
{
    const tbrdma_mesh_link_t *l = &mesh->link[a][b];

    if (0 > l->port) {
        tbrdma_fmt_add(fmt, "%s -/- %s: no cable\n", hosts[a].host, hosts[b].host);
        return;
    }
    for (int k = 0; k < l->nstripes; k++) {
        tbrdma_fmt_add(fmt, "%s %s <-> %s %s", hosts[a].host, hosts[a].ports[l->ports[k]].device,
                       hosts[b].host, hosts[b].ports[l->peer_ports[k]].device);
        if (1 < l->ncables) {
            tbrdma_fmt_add(fmt, " (cable %d of %d)", k + 1, l->ncables);
        }
        tbrdma_fmt_add(fmt, "\n");
    }
}

size_t tbrdma_mesh_describe(const tbrdma_modex_t *hosts, const tbrdma_mesh_t *mesh, char *buf,
                            size_t len)
{
    tbrdma_fmt_t fmt;
    int a, b;

    tbrdma_fmt_init(&fmt, buf, len);
    for (a = 0; a < mesh->nhosts; a++) {
        for (b = a + 1; b < mesh->nhosts; b++) {
            mesh_describe_pair(hosts, mesh, a, b, &fmt);
        }
    }
    return fmt.used;
}
