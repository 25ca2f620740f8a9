/*
 * Unit tests of plugin/core/tbrdma_mesh.c (tbrdma_mesh_solve, tbrdma_mesh_describe): full
 * meshes of 2..8 hosts addressed with one /30 per cable as MLX's mlx.distributed_config does,
 * missing cables, duplicate and crossed cables (their order, the same on both ends), link-local
 * addressing with and without a mesh spec (ours and MLX's hostfile), a spec naming an unknown
 * device, and the error buffer contract.
 */
#include "tbrdma_gid.h"
#include "tbrdma_mesh.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_MAX 4096
#define LL_BASE 0xa9fe0000u /* 169.254.0.0 */

static tbrdma_modex_t hosts[TBRDMA_MAX_HOSTS];
static tbrdma_mesh_t mesh;
static tbrdma_mesh_spec_t spec;
static char err[ERR_MAX];

static void host_init(tbrdma_modex_t *h, const char *name)
{
    memset(h, 0, sizeof(*h));
    snprintf(h->host, sizeof(h->host), "%s", name);
}

static int host_add_port(tbrdma_modex_t *h, const char *device, uint32_t ipv4, int prefix)
{
    tbrdma_modex_port_t *p = &h->ports[h->nports];

    snprintf(p->device, sizeof(p->device), "%s", device);
    p->ipv4 = ipv4;
    p->prefix = prefix;
    tbrdma_gid_from_ipv4(ipv4, &p->gid);
    p->gid_index = 1;
    p->active_mtu = 5;
    p->link_layer = TBRDMA_LINK_LAYER_THUNDERBOLT;
    return h->nports++;
}

static int port_index(const tbrdma_modex_t *h, const char *device)
{
    int p;

    for (p = 0; p < h->nports; p++) {
        if (0 == strcmp(h->ports[p].device, device)) {
            return p;
        }
    }
    return -1;
}

/* Device of host i for the cable to host j: rdma_en<2+j> (rdma_en<2+i> never used by i). */
static void device_name(int j, char *buf, size_t len)
{
    snprintf(buf, len, "rdma_en%d", 2 + j);
}

/* 1 when the pair (i, j) is in skip[] (pairs as i*100+j with i < j, terminated by -1). */
static int skipped(const int *skip, int i, int j)
{
    for (; NULL != skip && 0 <= *skip; skip++) {
        if (*skip == i * 100 + j) {
            return 1;
        }
    }
    return 0;
}

/*
 * n hosts mac-a, mac-b, ... with one cable per pair except the skipped ones. Cable c gets the
 * /30 192.168.0.0 + 4c (like mlx.distributed_config): .1 on the lower host, .2 on the higher.
 * With linklocal, every port gets a 169.254/16 address instead. Ports are added in descending
 * peer order so that port indices differ from peer indices.
 */
static void build_mesh(int n, const int *skip, int linklocal)
{
    char name[16], dev[TBRDMA_NAME_MAX];
    uint32_t net[TBRDMA_MAX_HOSTS][TBRDMA_MAX_HOSTS];
    int i, j, c = 0;

    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "mac-%c", 'a' + i);
        host_init(&hosts[i], name);
        for (j = i + 1; j < n; j++) {
            net[i][j] = 0xc0a80000u + 4u * (uint32_t) c++;
        }
    }
    for (i = 0; i < n; i++) {
        for (j = n - 1; j >= 0; j--) {
            if (i == j || skipped(skip, (i < j) ? i : j, (i < j) ? j : i)) {
                continue;
            }
            device_name(j, dev, sizeof(dev));
            if (linklocal) {
                host_add_port(&hosts[i], dev, LL_BASE + (uint32_t) (256 * (i + 1) + j + 1), 16);
            } else {
                host_add_port(&hosts[i], dev, net[(i < j) ? i : j][(i < j) ? j : i] + 1 + (i > j),
                              30);
            }
        }
    }
}

/* Symmetric, and every link joins host i's port for j to host j's port for i. */
static void check_links(int n, const int *skip)
{
    char want_i[TBRDMA_NAME_MAX], want_j[TBRDMA_NAME_MAX];
    const tbrdma_mesh_link_t *l;
    int i, j;

    CU_ASSERT(n == mesh.nhosts);
    for (i = 0; i < n; i++) {
        CU_ASSERT(-1 == mesh.link[i][i].port);
        for (j = 0; j < n; j++) {
            if (i == j) {
                continue;
            }
            l = &mesh.link[i][j];
            CU_ASSERT(l->port == mesh.link[j][i].peer_port);
            CU_ASSERT(l->peer_port == mesh.link[j][i].port);
            CU_ASSERT(l->ncables == mesh.link[j][i].ncables);
            if (skipped(skip, (i < j) ? i : j, (i < j) ? j : i)) {
                CU_ASSERT(-1 == l->port && -1 == l->peer_port && 0 == l->ncables);
                continue;
            }
            device_name(j, want_i, sizeof(want_i));
            device_name(i, want_j, sizeof(want_j));
            CU_ASSERT(1 == l->ncables && 1 == l->nstripes);
            CU_ASSERT(l->ports[0] == l->port && l->peer_ports[0] == l->peer_port);
            CU_ASSERT(port_index(&hosts[i], want_i) == l->port);
            CU_ASSERT(port_index(&hosts[j], want_j) == l->peer_port);
        }
    }
}

static void test_mesh_solve_full_2_to_8_hosts(void)
{
    int n;

    for (n = 2; n <= 8; n++) {
        build_mesh(n, NULL, 0);
        strcpy(err, "untouched");
        CU_ASSERT(0 == tbrdma_mesh_solve(hosts, n, NULL, &mesh, err, sizeof(err)));
        CU_ASSERT(0 == mesh.nmissing);
        CU_ASSERT_STRING_EQUAL(err, "");
        check_links(n, NULL);
        /* The M3 Ultra's port list starts at index 0 for the highest peer. */
        CU_ASSERT(n - 2 == mesh.link[0][1].port);
    }
}

static void test_mesh_solve_single_host(void)
{
    build_mesh(1, NULL, 0);
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 1, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT(1 == mesh.nhosts && 0 == mesh.nmissing);
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 0, NULL, &mesh, NULL, 0));
}

static void test_mesh_solve_missing_one(void)
{
    static const int skip[] = {103, -1}; /* mac-b -- mac-d */

    build_mesh(4, skip, 0);
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 4, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "no cable between host mac-b and host mac-d");
    CU_ASSERT(1 == mesh.nmissing);
    check_links(4, skip);
}

static void test_mesh_solve_missing_several(void)
{
    static const int skip[] = {2, 104, 304, -1}; /* a-c, b-e, d-e */

    build_mesh(5, skip, 0);
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 5, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "no cable between host mac-a and host mac-c; "
                                "no cable between host mac-b and host mac-e; "
                                "no cable between host mac-d and host mac-e");
    CU_ASSERT(3 == mesh.nmissing);
    check_links(5, skip);
}

/* Both ends list the cables of every pair in one order: link[i][j] mirrors link[j][i]. */
static void check_stripes_mirror(int n)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            const tbrdma_mesh_link_t *l = &mesh.link[i][j], *r = &mesh.link[j][i];

            CU_ASSERT(l->nstripes == r->nstripes);
            for (int k = 0; k < l->nstripes; k++) {
                CU_ASSERT(l->ports[k] == r->peer_ports[k] && l->peer_ports[k] == r->ports[k]);
            }
        }
    }
}

/* Two cables between mac-a and mac-b, ordered by mac-a's device names: rdma_en3 first. */
static void test_mesh_solve_duplicate_cables(void)
{
    int a5, a3, b2, b4;

    host_init(&hosts[0], "mac-a");
    host_init(&hosts[1], "mac-b");
    a5 = host_add_port(&hosts[0], "rdma_en5", 0xc0a80001u, 30);
    a3 = host_add_port(&hosts[0], "rdma_en3", 0xc0a80005u, 30);
    b2 = host_add_port(&hosts[1], "rdma_en2", 0xc0a80002u, 30); /* with mac-a rdma_en5 */
    b4 = host_add_port(&hosts[1], "rdma_en4", 0xc0a80006u, 30); /* with mac-a rdma_en3 */
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 2, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT(2 == mesh.link[0][1].ncables && 2 == mesh.link[1][0].ncables);
    CU_ASSERT(2 == mesh.link[0][1].nstripes && 2 == mesh.link[1][0].nstripes);
    CU_ASSERT(a3 == mesh.link[0][1].port && b4 == mesh.link[0][1].peer_port);
    CU_ASSERT(b4 == mesh.link[1][0].port && a3 == mesh.link[1][0].peer_port);
    CU_ASSERT(a3 == mesh.link[0][1].ports[0] && a5 == mesh.link[0][1].ports[1]);
    CU_ASSERT(b4 == mesh.link[0][1].peer_ports[0] && b2 == mesh.link[0][1].peer_ports[1]);
    check_stripes_mirror(2);
}

/* The same order when the hosts are passed in the other order. */
static void test_mesh_solve_duplicate_cables_order_independent(void)
{
    tbrdma_modex_t a;

    test_mesh_solve_duplicate_cables();
    a = hosts[0];
    hosts[0] = hosts[1];
    hosts[1] = a;
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 2, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(hosts[1].ports[mesh.link[1][0].port].device, "rdma_en3");
    CU_ASSERT_STRING_EQUAL(hosts[0].ports[mesh.link[0][1].port].device, "rdma_en4");
    CU_ASSERT_STRING_EQUAL(hosts[1].ports[mesh.link[1][0].ports[1]].device, "rdma_en5");
    CU_ASSERT_STRING_EQUAL(hosts[0].ports[mesh.link[0][1].ports[1]].device, "rdma_en2");
    check_stripes_mirror(2);
}

/*
 * Crossed cabling: cable 1 joins mac-a en2 to mac-b en3, cable 2 mac-a en3 to mac-b en2. Each
 * host ordering its own device names would cross the cables (mac-b would put en2 first); both
 * must list cable 1 first, and the same when each host publishes its ports in another order.
 */
static void test_mesh_solve_crossed_cables(void)
{
    for (int order = 0; order < 2; order++) {
        int a2, a3, b2, b3;

        host_init(&hosts[0], "mac-a");
        host_init(&hosts[1], "mac-b");
        if (0 == order) {
            a2 = host_add_port(&hosts[0], "rdma_en2", 0xc0a80001u, 30);
            a3 = host_add_port(&hosts[0], "rdma_en3", 0xc0a80005u, 30);
            b2 = host_add_port(&hosts[1], "rdma_en2", 0xc0a80006u, 30);
            b3 = host_add_port(&hosts[1], "rdma_en3", 0xc0a80002u, 30);
        } else {
            b3 = host_add_port(&hosts[1], "rdma_en3", 0xc0a80002u, 30);
            b2 = host_add_port(&hosts[1], "rdma_en2", 0xc0a80006u, 30);
            a3 = host_add_port(&hosts[0], "rdma_en3", 0xc0a80005u, 30);
            a2 = host_add_port(&hosts[0], "rdma_en2", 0xc0a80001u, 30);
        }
        CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 2, NULL, &mesh, err, sizeof(err)));
        CU_ASSERT(a2 == mesh.link[0][1].ports[0] && b3 == mesh.link[0][1].peer_ports[0]);
        CU_ASSERT(a3 == mesh.link[0][1].ports[1] && b2 == mesh.link[0][1].peer_ports[1]);
        CU_ASSERT(b3 == mesh.link[1][0].ports[0] && a2 == mesh.link[1][0].peer_ports[0]);
        CU_ASSERT(b2 == mesh.link[1][0].ports[1] && a3 == mesh.link[1][0].peer_ports[1]);
        check_stripes_mirror(2);
    }
}

/* Six cables between two Macs: all counted, the first TBRDMA_MESH_MAX_STRIPES by name listed. */
static void test_mesh_solve_stripes_capped(void)
{
    static const char *names[] = {"rdma_en7", "rdma_en2", "rdma_en6",
                                  "rdma_en3", "rdma_en5", "rdma_en4"};
    char want[TBRDMA_NAME_MAX];

    host_init(&hosts[0], "mac-a");
    host_init(&hosts[1], "mac-b");
    for (int c = 0; c < 6; c++) {
        host_add_port(&hosts[0], names[c], 0xc0a80001u + 4u * (uint32_t) c, 30);
        host_add_port(&hosts[1], names[5 - c], 0xc0a80002u + 4u * (uint32_t) c, 30);
    }
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 2, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT(6 == mesh.link[0][1].ncables && TBRDMA_MESH_MAX_STRIPES == mesh.link[0][1].nstripes);
    for (int k = 0; k < TBRDMA_MESH_MAX_STRIPES; k++) {
        snprintf(want, sizeof(want), "rdma_en%d", 2 + k);
        CU_ASSERT_STRING_EQUAL(hosts[0].ports[mesh.link[0][1].ports[k]].device, want);
    }
    check_stripes_mirror(2);
}

static void test_mesh_solve_linklocal_without_spec(void)
{
    build_mesh(3, NULL, 1);
    memset(&mesh, 0x5a, sizeof(mesh));
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 3, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "subnet 169.254.0.0/16 holds ports mac-a:rdma_en4, "
                                "mac-a:rdma_en3, mac-b:rdma_en4, mac-b:rdma_en2, "
                                "mac-c:rdma_en3, mac-c:rdma_en2: link-local or shared subnets "
                                "cannot identify cables: give each cable its own /30 "
                                "(tbrdma-setup), or name the cables in a mesh file "
                                "(btl_tbrdma_mesh_file), or pass MLX's hostfile as the mesh "
                                "file");
    CU_ASSERT(0x5a5a5a5a == mesh.nhosts); /* untouched on -EINVAL */
}

/* Two Macs, one cable, both self-assigned: the subnet holds exactly the two ends. */
static void test_mesh_solve_linklocal_two_hosts(void)
{
    build_mesh(2, NULL, 1);
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 2, NULL, &mesh, err, sizeof(err)));
    check_links(2, NULL);
}

/* Two ports of one host in one /30 cannot be told apart. */
static void test_mesh_solve_same_host_subnet(void)
{
    host_init(&hosts[0], "mac-a");
    host_init(&hosts[1], "mac-b");
    host_add_port(&hosts[0], "rdma_en2", 0xc0a80001u, 30);
    host_add_port(&hosts[0], "rdma_en3", 0xc0a80002u, 30);
    host_add_port(&hosts[1], "rdma_en2", 0xc0a80101u, 30);
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 2, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT(NULL
              != strstr(err, "subnet 192.168.0.0/30 holds ports mac-a:rdma_en2, "
                             "mac-a:rdma_en3: link-local or shared subnets"));
}

static void build_spec(int n)
{
    char text[8192], dev_i[TBRDMA_NAME_MAX], dev_j[TBRDMA_NAME_MAX];
    size_t used = 0;
    int i, j;

    used += (size_t) snprintf(text, sizeof(text), "# %d Macs, self-assigned addresses\n", n);
    for (i = 0; i < n; i++) {
        for (j = i + 1; j < n; j++) {
            device_name(j, dev_i, sizeof(dev_i));
            device_name(i, dev_j, sizeof(dev_j));
            used += (size_t) snprintf(text + used, sizeof(text) - used, "%s:%s  %s:%s\n",
                                      hosts[i].host, dev_i, hosts[j].host, dev_j);
        }
    }
    CU_ASSERT(0 == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
}

static void test_mesh_solve_linklocal_with_mesh_file(void)
{
    int n;

    for (n = 2; n <= 8; n++) {
        build_mesh(n, NULL, 1);
        build_spec(n);
        CU_ASSERT(0 == tbrdma_mesh_solve(hosts, n, &spec, &mesh, err, sizeof(err)));
        check_links(n, NULL);
    }
}

/* The spec names a pair; another pair stays ambiguous in the shared subnet. */
static void test_mesh_solve_linklocal_partial_spec(void)
{
    build_mesh(3, NULL, 1);
    CU_ASSERT(
        0 == tbrdma_mesh_spec_parse("mac-a:rdma_en3 mac-b:rdma_en2\n", &spec, err, sizeof(err)));
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 3, &spec, &mesh, err, sizeof(err)));
    CU_ASSERT(NULL
              != strstr(err, "subnet 169.254.0.0/16 holds ports mac-a:rdma_en4, "
                             "mac-b:rdma_en4, mac-c:rdma_en3, mac-c:rdma_en2:"));
}

/* A link-local mesh with a cable missing: the spec lists the cables there are. */
static void test_mesh_solve_linklocal_spec_missing_cable(void)
{
    static const int skip[] = {2, -1}; /* a-c */

    build_mesh(3, skip, 1);
    CU_ASSERT(0
              == tbrdma_mesh_spec_parse("mac-a:rdma_en3 mac-b:rdma_en2\n"
                                        "mac-b:rdma_en4 mac-c:rdma_en3\n",
                                        &spec, err, sizeof(err)));
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 3, &spec, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "no cable between host mac-a and host mac-c");
    check_links(3, skip);
}

/* MLX's documented 4x M3 Ultra hostfile, with every port self-assigned. */
static void test_mesh_solve_mlx_hostfile(void)
{
    static const char *const rows[4][4] = {{NULL, "rdma_en5", "rdma_en4", "rdma_en3"},
                                           {"rdma_en5", NULL, "rdma_en3", "rdma_en4"},
                                           {"rdma_en4", "rdma_en3", NULL, "rdma_en5"},
                                           {"rdma_en3", "rdma_en4", "rdma_en5", NULL}};
    static const char hostfile[] =
        "{\"backend\": \"jaccl\", \"envs\": [], \"hosts\": [\n"
        "{\"ssh\": \"m3-ultra-1\", \"ips\": [\"123.123.123.1\"], "
        "\"rdma\": [null, \"rdma_en5\", \"rdma_en4\", \"rdma_en3\"]},\n"
        "{\"ssh\": \"m3-ultra-2\", \"ips\": [], \"rdma\": [\"rdma_en5\", null, \"rdma_en3\", "
        "\"rdma_en4\"]},\n"
        "{\"ssh\": \"m3-ultra-3\", \"ips\": [], \"rdma\": [\"rdma_en4\", \"rdma_en3\", null, "
        "\"rdma_en5\"]},\n"
        "{\"ssh\": \"m3-ultra-4\", \"ips\": [], \"rdma\": [\"rdma_en3\", \"rdma_en4\", "
        "\"rdma_en5\", null]}]}\n";
    char name[16];
    int i, j;

    for (i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "m3-ultra-%d", i + 1);
        host_init(&hosts[i], name);
        host_add_port(&hosts[i], "rdma_en2", LL_BASE + 0x100u * (uint32_t) i + 9, 16); /* unused */
        for (j = 3; j >= 0; j--) {
            if (NULL != rows[i][j]) {
                host_add_port(&hosts[i], rows[i][j], LL_BASE + 0x100u * (uint32_t) i + 1 + j, 16);
            }
        }
    }
    CU_ASSERT(0 == tbrdma_mesh_spec_parse(hostfile, &spec, err, sizeof(err)));
    CU_ASSERT(6 == spec.ncables);
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 4, &spec, &mesh, err, sizeof(err)));
    for (i = 0; i < 4; i++) {
        for (j = 0; j < 4; j++) {
            if (i != j) {
                CU_ASSERT(port_index(&hosts[i], rows[i][j]) == mesh.link[i][j].port);
                CU_ASSERT(port_index(&hosts[j], rows[j][i]) == mesh.link[i][j].peer_port);
                CU_ASSERT(1 == mesh.link[i][j].ncables);
            }
        }
    }
}

/*
 * A spec cable naming a device its host does not publish (misnamed, or down there) is explained
 * and leaves the pair to the addressing: here the pair's own /30 still finds the real cable.
 */
static void test_mesh_solve_spec_unknown_device(void)
{
    build_mesh(2, NULL, 0);
    CU_ASSERT(
        0 == tbrdma_mesh_spec_parse("mac-a:rdma_en3 mac-b:rdma_en9\n", &spec, err, sizeof(err)));
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, 2, &spec, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "the mesh spec names device rdma_en9 of host mac-b, which that "
                                "host does not publish (misnamed, or not usable there; it "
                                "publishes: rdma_en2)");
    CU_ASSERT(1 == mesh.link[0][1].ncables);
    CU_ASSERT(0 == mesh.link[0][1].port);
    CU_ASSERT(0 == mesh.link[0][1].peer_port);
}

/*
 * Link-local addressing and a full mesh file, but the a-b cable is unplugged, so neither end is
 * published: the pair is named as missing, with the reason, and the rest of the mesh stands.
 */
static void test_mesh_solve_spec_unpublished_linklocal(void)
{
    static const int skip[] = {1, -1};

    build_mesh(3, skip, 1);
    CU_ASSERT(0
              == tbrdma_mesh_spec_parse("mac-a:rdma_en3 mac-b:rdma_en2\n"
                                        "mac-a:rdma_en4 mac-c:rdma_en2\n"
                                        "mac-b:rdma_en4 mac-c:rdma_en3\n",
                                        &spec, err, sizeof(err)));
    memset(&mesh, 0x5a, sizeof(mesh));
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 3, &spec, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "the mesh spec names device rdma_en3 of host mac-a, which that "
                                "host does not publish (misnamed, or not usable there; it "
                                "publishes: rdma_en4); no cable between host mac-a and host mac-b");
    CU_ASSERT(3 == mesh.nhosts);
    CU_ASSERT(1 == mesh.nmissing);
    CU_ASSERT(-1 == mesh.link[0][1].port);
    CU_ASSERT(-1 == mesh.link[1][0].peer_port);
    CU_ASSERT(1 == mesh.link[0][2].ncables);
    CU_ASSERT(1 == mesh.link[1][2].ncables);
}

/* The spec TEXT parses and solves the n hosts' mesh, every link right. */
static void solves_with_spec(int n, const char *text)
{
    CU_ASSERT(0 == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
    CU_ASSERT(0 == tbrdma_mesh_solve(hosts, n, &spec, &mesh, err, sizeof(err)));
    check_links(n, NULL);
}

/* Names the hosts of build_mesh(n, ...) with a domain: mac-a.local, mac-b.local, ... */
static void hosts_fqdn(int n)
{
    for (int i = 0; i < n; i++) {
        snprintf(hosts[i].host, sizeof(hosts[i].host), "mac-%c.local", 'a' + i);
    }
}

/*
 * Cables of hosts outside the job are ignored; short names in the spec match the hosts' FQDNs.
 * Three link-local hosts share one /16: only the spec can solve them (checked without it).
 */
static void test_mesh_solve_spec_other_hosts_and_short_names(void)
{
    build_mesh(3, NULL, 1);
    hosts_fqdn(3);
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 3, NULL, &mesh, err, sizeof(err)));
    solves_with_spec(3, "mac-a:rdma_en3 mac-b:rdma_en2\n"
                        "mac-a:rdma_en7 mac-z:rdma_en2\n"
                        "mac-a:rdma_en4 mac-c:rdma_en2\n"
                        "mac-y:rdma_en3 mac-z:rdma_en3\n"
                        "mac-b:rdma_en4 mac-c:rdma_en3\n");
}

/* The other way round: FQDNs in the spec match hosts known by their short names. */
static void test_mesh_solve_spec_fqdns_match_short_hosts(void)
{
    build_mesh(3, NULL, 1);
    solves_with_spec(3, "mac-a.local:rdma_en3 mac-b.local:rdma_en2\n"
                        "mac-a.local:rdma_en4 mac-c.local:rdma_en2\n"
                        "mac-b.local:rdma_en4 mac-c.local:rdma_en3\n");
}

/*
 * A short name two hosts share (mac.one, mac.two: "mac") names neither: the spec cables that use
 * it are dropped, and their four link-local ports stay ambiguous. Full names solve the mesh.
 */
static void test_mesh_solve_spec_ambiguous_short_name(void)
{
    static const char *const fixed = "mac.one:rdma_en3 mac.two:rdma_en2\n"
                                     "mac.two:rdma_en4 mac-c:rdma_en3\n"
                                     "mac.two:rdma_en5 mac-d:rdma_en3\n"
                                     "mac-c:rdma_en5 mac-d:rdma_en4\n";
    char text[512];

    build_mesh(4, NULL, 1);
    strcpy(hosts[0].host, "mac.one");
    strcpy(hosts[1].host, "mac.two");
    snprintf(text, sizeof(text), "%smac:rdma_en4 mac-c:rdma_en2\nmac:rdma_en5 mac-d:rdma_en2\n",
             fixed);
    CU_ASSERT(0 == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 4, &spec, &mesh, err, sizeof(err)));
    CU_ASSERT(NULL
              != strstr(err, "subnet 169.254.0.0/16 holds ports mac.one:rdma_en5, "
                             "mac.one:rdma_en4, mac-c:rdma_en2, mac-d:rdma_en2:"));
    snprintf(text, sizeof(text),
             "%smac.one:rdma_en4 mac-c:rdma_en2\nmac.one:rdma_en5 mac-d:rdma_en2\n", fixed);
    solves_with_spec(4, text);
}

/*
 * A spec for some pairs, addressing for the rest: mac-a -- mac-c keeps its /30; mac-a -- mac-b
 * and mac-b -- mac-c move to link-local, so their four ports share 169.254/16 and only the
 * spec, by naming mac-a -- mac-b, leaves the two ports of mac-b -- mac-c alone in it.
 */
static void test_mesh_solve_spec_and_subnets(void)
{
    static const char *const moved[][2] = {
        {"mac-a", "rdma_en3"}, {"mac-b", "rdma_en2"}, {"mac-b", "rdma_en4"}, {"mac-c", "rdma_en3"}};

    build_mesh(3, NULL, 0);
    for (int k = 0; k < 4; k++) {
        tbrdma_modex_t *h = &hosts[moved[k][0][4] - 'a'];
        tbrdma_modex_port_t *p = &h->ports[port_index(h, moved[k][1])];

        p->ipv4 = LL_BASE + 1 + (uint32_t) k;
        p->prefix = 16;
    }
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 3, NULL, &mesh, err, sizeof(err)));
    solves_with_spec(3, "mac-a:rdma_en3 mac-b:rdma_en2");
}

static void test_mesh_solve_err_truncation(void)
{
    static const int skip[] = {2, 104, 304, -1};
    char small[24];

    build_mesh(5, skip, 0);
    memset(small, 'x', sizeof(small));
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 5, NULL, &mesh, small, 20));
    CU_ASSERT_STRING_EQUAL(small, "no cable between ho");
    CU_ASSERT('x' == small[20]);
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 5, NULL, &mesh, NULL, 0));
    CU_ASSERT(3 == mesh.nmissing);
    check_links(5, skip);
}

static void test_mesh_solve_invalid_hosts(void)
{
    build_mesh(3, NULL, 0);
    strcpy(hosts[2].host, "mac-b");
    CU_ASSERT(-EINVAL == tbrdma_mesh_solve(hosts, 3, NULL, &mesh, err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "host mac-b is listed twice");
    CU_ASSERT(-EINVAL
              == tbrdma_mesh_solve(hosts, TBRDMA_MAX_HOSTS + 1, NULL, &mesh, err, sizeof(err)));
}

static void test_mesh_describe_lines(void)
{
    static const int skip[] = {2, -1}; /* a-c */
    char text[1024];
    size_t need;

    build_mesh(3, skip, 0);
    CU_ASSERT(-ENOTCONN == tbrdma_mesh_solve(hosts, 3, NULL, &mesh, err, sizeof(err)));
    need = tbrdma_mesh_describe(hosts, &mesh, text, sizeof(text));
    CU_ASSERT_STRING_EQUAL(text, "mac-a rdma_en3 <-> mac-b rdma_en2\n"
                                 "mac-a -/- mac-c: no cable\n"
                                 "mac-b rdma_en4 <-> mac-c rdma_en3\n");
    CU_ASSERT(need == strlen(text));
    CU_ASSERT(need == tbrdma_mesh_describe(hosts, &mesh, text, 5));
    CU_ASSERT_STRING_EQUAL(text, "mac-");
}

static void test_mesh_describe_duplicate(void)
{
    char text[256];

    test_mesh_solve_duplicate_cables();
    tbrdma_mesh_describe(hosts, &mesh, text, sizeof(text));
    CU_ASSERT_STRING_EQUAL(text, "mac-a rdma_en3 <-> mac-b rdma_en4 (cable 1 of 2)\n"
                                 "mac-a rdma_en5 <-> mac-b rdma_en2 (cable 2 of 2)\n");
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_mesh_solve_full_2_to_8_hosts),
    TBRDMA_UT_TEST(test_mesh_solve_single_host),
    TBRDMA_UT_TEST(test_mesh_solve_missing_one),
    TBRDMA_UT_TEST(test_mesh_solve_missing_several),
    TBRDMA_UT_TEST(test_mesh_solve_duplicate_cables),
    TBRDMA_UT_TEST(test_mesh_solve_duplicate_cables_order_independent),
    TBRDMA_UT_TEST(test_mesh_solve_crossed_cables),
    TBRDMA_UT_TEST(test_mesh_solve_stripes_capped),
    TBRDMA_UT_TEST(test_mesh_solve_linklocal_without_spec),
    TBRDMA_UT_TEST(test_mesh_solve_linklocal_two_hosts),
    TBRDMA_UT_TEST(test_mesh_solve_same_host_subnet),
    TBRDMA_UT_TEST(test_mesh_solve_linklocal_with_mesh_file),
    TBRDMA_UT_TEST(test_mesh_solve_linklocal_partial_spec),
    TBRDMA_UT_TEST(test_mesh_solve_linklocal_spec_missing_cable),
    TBRDMA_UT_TEST(test_mesh_solve_mlx_hostfile),
    TBRDMA_UT_TEST(test_mesh_solve_spec_unknown_device),
    TBRDMA_UT_TEST(test_mesh_solve_spec_unpublished_linklocal),
    TBRDMA_UT_TEST(test_mesh_solve_spec_other_hosts_and_short_names),
    TBRDMA_UT_TEST(test_mesh_solve_spec_fqdns_match_short_hosts),
    TBRDMA_UT_TEST(test_mesh_solve_spec_ambiguous_short_name),
    TBRDMA_UT_TEST(test_mesh_solve_spec_and_subnets),
    TBRDMA_UT_TEST(test_mesh_solve_err_truncation),
    TBRDMA_UT_TEST(test_mesh_solve_invalid_hosts),
    TBRDMA_UT_TEST(test_mesh_describe_lines),
    TBRDMA_UT_TEST(test_mesh_describe_duplicate),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("tbrdma_mesh", tests);
}
