/*
 * The mesh solver: from every host's published ports, decide which local port reaches which
 * peer host (one Thunderbolt cable per pair of Macs), and name every pair with no cable.
 *
 * Cables are found by addressing: two ports whose IPv4 subnets match and whose subnet holds
 * exactly those two ports are the two ends of one cable (one /30 per cable, as MLX's
 * mlx.distributed_config assigns). Link-local 169.254/16 on every port (exo's scheme) puts every
 * port in one subnet, so the subnet names no cable: an explicit mesh spec resolves it (our mesh
 * file, or MLX's hostfile with its "rdma" device matrix). See docs/mesh.md.
 *
 * Every process solves the same inputs independently, so the result must be deterministic and
 * symmetric: link[i][j].port == link[j][i].peer_port, and link[i][j].ports[k] ==
 * link[j][i].peer_ports[k] for every cable k of a pair. Callers pass hosts sorted by name.
 */
#ifndef TBRDMA_MESH_H
#define TBRDMA_MESH_H

#include "tbrdma_modex.h"

#define TBRDMA_MESH_MAX_CABLES  (TBRDMA_MAX_HOSTS * TBRDMA_MAX_PORTS / 2)
#define TBRDMA_MESH_MAX_STRIPES 4 /* cables of one pair of hosts used together (jaccl-ring: 4) */

/* One cable named by a mesh spec: (host[0], device[0]) <-> (host[1], device[1]). */
typedef struct tbrdma_mesh_cable {
    char host[2][TBRDMA_HOST_MAX];
    char device[2][TBRDMA_NAME_MAX];
} tbrdma_mesh_cable_t;

typedef struct tbrdma_mesh_spec {
    int ncables;
    tbrdma_mesh_cable_t cables[TBRDMA_MESH_MAX_CABLES];
} tbrdma_mesh_spec_t;

/*
 * The cables between hosts i and j, in one order both hosts compute alike: by the device name
 * on the lower-named host of the pair. Cable 0 (port, peer_port) carries the pair's small
 * messages; all nstripes cables carry the stripes of large ones (docs/design.md).
 */
typedef struct tbrdma_mesh_link {
    int port;      /* index in hosts[i].ports of the port cabled to host j, -1 when none */
    int peer_port; /* index in hosts[j].ports of the other end, -1 when none */
    int ncables;   /* cables found between the pair */
    int nstripes;  /* cables listed below: min(ncables, TBRDMA_MESH_MAX_STRIPES) */
    int ports[TBRDMA_MESH_MAX_STRIPES];      /* host i's end of cable k; ports[0] == port */
    int peer_ports[TBRDMA_MESH_MAX_STRIPES]; /* host j's end of cable k */
} tbrdma_mesh_link_t;

typedef struct tbrdma_mesh {
    int nhosts;
    int nmissing; /* unordered pairs with no cable */
    tbrdma_mesh_link_t link[TBRDMA_MAX_HOSTS][TBRDMA_MAX_HOSTS];
} tbrdma_mesh_t;

/*
 * Parses a mesh spec. Two formats are recognised by their first non-blank character:
 *   our mesh file: one cable per line, "hostA:rdma_en2 hostB:rdma_en3", '#' starts a comment;
 *   '{': MLX's hostfile JSON ({"hosts":[{"ssh":"mac-a","rdma":[null,"rdma_en2",...]},...]}).
 * Returns 0, or -EINVAL with err naming the line or field at fault.
 */
int tbrdma_mesh_spec_parse(const char *text, tbrdma_mesh_spec_t *spec_p, char *err, size_t errlen);

/*
 * Solves the mesh for nhosts hosts (distinct names, sorted). spec may be NULL.
 * Returns 0 for a full mesh; -ENOTCONN when some pairs have no cable (mesh_p is still filled,
 * those links are -1, and err names every pair: "no cable between host mac-b and host mac-d");
 * -EINVAL when the addressing is ambiguous or the spec contradicts itself (err says which ports
 * and how to resolve it). A spec cable naming a device its host does not publish (misnamed, down,
 * no IPv4) leaves that pair without a cable, and err says so. -ENOMEM. err may be NULL.
 */
int tbrdma_mesh_solve(const tbrdma_modex_t *hosts, int nhosts, const tbrdma_mesh_spec_t *spec,
                      tbrdma_mesh_t *mesh_p, char *err, size_t errlen);

/*
 * One line per cable: "mac-a rdma_en2 <-> mac-b rdma_en3", "mac-a rdma_en4 <-> mac-b rdma_en5
 * (cable 2 of 2)" for pairs joined by several, or "mac-a -/- mac-c: no cable".
 */
size_t tbrdma_mesh_describe(const tbrdma_modex_t *hosts, const tbrdma_mesh_t *mesh, char *buf,
                            size_t len);

#endif /* TBRDMA_MESH_H */
