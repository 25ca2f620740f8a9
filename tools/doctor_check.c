/*
 * The doctor's checks (the list, with the test that breaks each, is in docs/doctor.md). They run
 * in an order where a root cause comes first and marks what it explains, so that one fault gives
 * one line: an unreachable host hides its other checks; a host with RDMA off explains the DOWN
 * ports that face it; a missing cable absorbs the DOWN ports at its two ends; crossed cables
 * absorb the address mismatches of their four ports; tbrdma's own mesh solver, run last on the
 * usable ports, reports only what nothing else explained. Every finding is one line naming the
 * host, device and interface, what is wrong and the fix. Here: that order (doc_check_all), and
 * the checks that come last, on what the per-host checks (doctor_host.c) and those between
 * hosts (doctor_cable.c) left unexplained.
 */
#include "doctor_check.h"
#include "doctor_cable.h"
#include "doctor_host.h"
#include "doctor_topo.h"

#include "core/tbrdma_gid.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* What nothing else explained: the ports, and tbrdma's own mesh solver                       */

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
        if (doc_port_usable(p) || p->explained
            || (0 == strcmp(p->diag, "port-down") && NULL != peer && !doc_port_usable(peer))) {
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

/* Queue pairs held by tbrdma processes that died (tbrdma-info's slot ledger lines). */
static void check_held(doc_cluster_t *cl, int i)
{
    const doc_host_t *h = &cl->hosts[i];

    for (int k = 0; k < h->nports; k++) {
        const doc_port_t *p = &h->ports[k];

        if (0 < p->held_qps) {
            doc_add(cl, "held-slots", 1, i, p->info.device, p->info.ifname, "host %s: %s",
                    doc_host_name(h),
                    ('\0' != p->held_text[0]) ? p->held_text : "queue pairs held by the dead");
        }
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
            if (doc_port_usable(&cl->hosts[order[i]].ports[k])) {
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

int doc_check_all(doc_cluster_t *cl, const char *agent, int timeout)
{
    const char *ompi_ref, *tb_ref;
    tbrdma_hostlist_t *names = calloc(1, sizeof(*names));
    int i, j;

    if (NULL == names) {
        return -1;
    }
    for (i = 0; i < cl->nhosts; i++) {
        doc_check_reached(cl, i, agent, timeout);
        snprintf(names->hosts[i].name, sizeof(names->hosts[i].name), "%s",
                 doc_host_name(&cl->hosts[i]));
    }
    names->nhosts = cl->nhosts;
    doc_topo_cables(cl);
    ompi_ref = doc_majority(cl, offsetof(doc_host_t, ompi_version));
    tb_ref = doc_majority(cl, offsetof(doc_host_t, tbrdma_version));
    for (i = 0; i < cl->nhosts; i++) {
        if (!cl->hosts[i].down) {
            doc_check_host(cl, i, ompi_ref, tb_ref);
            doc_check_macos_ports(cl, i);
        }
    }
    for (i = 0; i < cl->nhosts; i++) {
        for (j = i + 1; j < cl->nhosts; j++) {
            doc_check_pair(cl, i, j);
        }
    }
    doc_check_spec(cl, names);
    doc_check_addresses(cl, names);
    check_unaddressed(cl);
    for (i = 0; i < cl->nhosts; i++) {
        if (!cl->hosts[i].down && !cl->hosts[i].no_rdma) {
            check_ports(cl, i);
            check_held(cl, i);
        }
    }
    check_solver(cl, count_problems(cl));
    free(names);
    return count_problems(cl);
}
