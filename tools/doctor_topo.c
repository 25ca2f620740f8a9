/*
 * Which port faces which port, without using any IPv4 address (addresses are what the checks
 * compare against this). Two sources, in this order:
 *   1. macOS's Thunderbolt topology: each bus of system_profiler names the domain UUID of the
 *      Mac at its other end; the bus of receptacle N is hardware port "Thunderbolt N", whose
 *      device enX pairs with rdma_enX (networksetup -listallhardwareports);
 *   2. IPv6 link-local neighbours: the addresses that answered a ping to ff02::1 on the port,
 *      matched to the interface holding that link-local address on another host.
 * When macOS reports a port's bus, that is the answer (a bus with nothing linked has no cable);
 * link-local neighbours serve the ports no bus describes (Linux, or a Mac without the data).
 * A port whose peer interface carries no RDMA device (its host has RDMA off) gets peer_host
 * with peer_port -1: no cable for tbrdma, but the checks can say why.
 */
#include "doctor_topo.h"

#include <string.h>
#include <strings.h>

/* The hardware port whose device is ifname, or NULL. */
static const tbrdma_hwport_t *hwport_of_device(const doc_host_t *h, const char *ifname)
{
    int i;

    for (i = 0; i < h->nhwports; i++) {
        if (0 == strcmp(h->hwports[i].device, ifname)) {
            return &h->hwports[i];
        }
    }
    return NULL;
}

/* The device of hardware port "Thunderbolt N" for receptacle N, or "". */
static const char *device_of_receptacle(const doc_host_t *h, int receptacle)
{
    int i;

    for (i = 0; i < h->nhwports; i++) {
        if (receptacle == tbrdma_macos_hwport_receptacle(h->hwports[i].port)) {
            return h->hwports[i].device;
        }
    }
    return "";
}

static int port_of_ifname(const doc_host_t *h, const char *ifname)
{
    int i;

    for (i = 0; '\0' != ifname[0] && i < h->nports; i++) {
        if (0 == strcmp(h->ports[i].info.ifname, ifname)) {
            return i;
        }
    }
    return -1;
}

/* macOS: each port's bus (through its hardware port's receptacle number). */
static void topo_buses(doc_host_t *h)
{
    const tbrdma_hwport_t *hw;
    int p, b, r;

    for (p = 0; p < h->nports; p++) {
        hw = hwport_of_device(h, h->ports[p].info.ifname);
        if (NULL == hw) {
            continue;
        }
        snprintf(h->ports[p].hwport, sizeof(h->ports[p].hwport), "%s", hw->port);
        r = tbrdma_macos_hwport_receptacle(hw->port);
        for (b = 0; 0 < r && b < h->nbuses; b++) {
            if (r == h->buses[b].receptacle) {
                h->ports[p].bus = b;
            }
        }
    }
}

static void port_set_peer(doc_port_t *p, int host, const doc_host_t *peer, const char *ifname,
                          doc_source_t source)
{
    p->peer_host = host;
    p->peer_port = port_of_ifname(peer, ifname);
    snprintf(p->peer_ifname, sizeof(p->peer_ifname), "%s", ifname);
    p->source = source;
}

/* The peer of a port from its bus's peer domain UUID. */
static void topo_thunderbolt(doc_cluster_t *cl, doc_port_t *p, const tbrdma_tb_bus_t *bus)
{
    const doc_host_t *h;
    int i, b;

    if ('\0' == bus->peer_uuid[0]) {
        return;
    }
    for (i = 0; i < cl->nhosts; i++) {
        h = &cl->hosts[i];
        for (b = 0; b < h->nbuses; b++) {
            if (0 == strcasecmp(h->buses[b].domain_uuid, bus->peer_uuid)) {
                port_set_peer(p, i, h, device_of_receptacle(h, h->buses[b].receptacle),
                              DOC_SOURCE_THUNDERBOLT);
                return;
            }
        }
    }
}

/* The peer of a port from the link-local addresses that answered on it. */
static void topo_link_local(doc_cluster_t *cl, int self, doc_port_t *p)
{
    const doc_host_t *h;
    int n, i, k;

    for (n = 0; n < p->nneigh; n++) {
        for (i = 0; i < cl->nhosts; i++) {
            h = &cl->hosts[i];
            for (k = 0; k < h->nll; k++) {
                if (0 == strcasecmp(h->ll[k].addr, p->neigh[n])
                    && !(i == self && 0 == strcmp(h->ll[k].ifname, p->info.ifname))) {
                    port_set_peer(p, i, h, h->ll[k].ifname, DOC_SOURCE_LINK_LOCAL);
                    return;
                }
            }
        }
    }
}

static int cable_known(const doc_cluster_t *cl, int a, int pa, int b, int pb)
{
    const doc_cable_t *c;
    int k;

    for (k = 0; k < cl->ncables; k++) {
        c = &cl->cables[k];
        if ((c->host[0] == a && c->port[0] == pa && c->host[1] == b && c->port[1] == pb)
            || (c->host[0] == b && c->port[0] == pb && c->host[1] == a && c->port[1] == pa)) {
            return 1;
        }
    }
    return 0;
}

/* A cable seen from one end only (its other end heard nothing in time) counts for both. */
static void topo_symmetric(doc_cluster_t *cl)
{
    doc_port_t *p, *q;
    int a, k;

    for (a = 0; a < cl->nhosts; a++) {
        for (k = 0; k < cl->hosts[a].nports; k++) {
            p = &cl->hosts[a].ports[k];
            if (0 > p->peer_port) {
                continue;
            }
            q = &cl->hosts[p->peer_host].ports[p->peer_port];
            if (0 > q->peer_host) {
                q->peer_host = a;
                q->peer_port = k;
                snprintf(q->peer_ifname, sizeof(q->peer_ifname), "%s", p->info.ifname);
                q->source = p->source;
            }
        }
    }
}

/* Each cable once, its lower host (then port) first. */
static void topo_add_cables(doc_cluster_t *cl)
{
    const doc_port_t *p;
    doc_cable_t *c;
    int a, pa;

    cl->ncables = 0;
    for (a = 0; a < cl->nhosts; a++) {
        for (pa = 0; pa < cl->hosts[a].nports; pa++) {
            p = &cl->hosts[a].ports[pa];
            if (0 > p->peer_port || p->peer_host < a || (p->peer_host == a && p->peer_port < pa)
                || cable_known(cl, a, pa, p->peer_host, p->peer_port)
                || TBRDMA_MESH_MAX_CABLES <= cl->ncables) {
                continue;
            }
            c = &cl->cables[cl->ncables++];
            c->host[0] = a;
            c->port[0] = pa;
            c->host[1] = p->peer_host;
            c->port[1] = p->peer_port;
            c->source = p->source;
        }
    }
}

void doc_topo_cables(doc_cluster_t *cl)
{
    doc_host_t *h;
    doc_port_t *p;
    int i, k;

    for (i = 0; i < cl->nhosts; i++) {
        topo_buses(&cl->hosts[i]);
    }
    for (i = 0; i < cl->nhosts; i++) {
        h = &cl->hosts[i];
        for (k = 0; k < h->nports; k++) {
            p = &h->ports[k];
            /* a Mac that reports the port's bus is believed: unconnected means no cable */
            if (0 <= p->bus) {
                topo_thunderbolt(cl, p, &h->buses[p->bus]);
            } else {
                topo_link_local(cl, i, p);
            }
        }
    }
    topo_symmetric(cl);
    topo_add_cables(cl);
}

void doc_cables_spec(const doc_cluster_t *cl, tbrdma_mesh_spec_t *spec)
{
    const doc_cable_t *c;
    tbrdma_mesh_cable_t *sc;
    int k, s;

    memset(spec, 0, sizeof(*spec));
    for (k = 0; k < cl->ncables; k++) {
        c = &cl->cables[k];
        sc = &spec->cables[spec->ncables++];
        for (s = 0; s < 2; s++) {
            snprintf(sc->host[s], sizeof(sc->host[s]), "%s", doc_host_name(&cl->hosts[c->host[s]]));
            snprintf(sc->device[s], sizeof(sc->device[s]), "%s",
                     cl->hosts[c->host[s]].ports[c->port[s]].info.device);
        }
    }
}
