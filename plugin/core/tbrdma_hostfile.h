/*
 * Host lists and the files that describe a cluster to its launchers: Open MPI's hostfile (what
 * `mpirun --hostfile` reads), tbrdma's mesh file (btl_tbrdma_mesh_file, docs/mesh.md) and MLX's
 * hostfile JSON (what `mlx.launch --hostfile` reads, with the "rdma" device matrix of JACCL).
 * The writers take the cables of a solved mesh, so one cluster serves mpirun and mlx.launch;
 * tbrdma_mesh_spec_parse() reads both the mesh file and MLX's hostfile back. Used by the
 * operator tools (tbrdma-doctor, tbrdma-setup); opal-free and verbs-free.
 *
 * Writers follow the snprintf contract: at most len bytes with the NUL, the full length returned.
 */
#ifndef TBRDMA_HOSTFILE_H
#define TBRDMA_HOSTFILE_H

#include "tbrdma_mesh.h"

#define TBRDMA_LOGIN_MAX 128 /* "user@host" as given to ssh, including the NUL */
#define TBRDMA_IPV4_MAX  16  /* "255.255.255.255" and the NUL */

typedef struct tbrdma_host_entry {
    char name[TBRDMA_HOST_MAX];   /* host name: Open MPI's node name, the mesh spec's name */
    char login[TBRDMA_LOGIN_MAX]; /* what ssh or mpirun is given: "mac-a" or "admin@mac-a" */
    int slots;                    /* slots=N of a hostfile line, 0 when not given */
    char ipv4[TBRDMA_IPV4_MAX];   /* an address others reach it at (MLX's "ips"), "" unknown */
} tbrdma_host_entry_t;

typedef struct tbrdma_hostlist {
    int nhosts;
    tbrdma_host_entry_t hosts[TBRDMA_MAX_HOSTS];
} tbrdma_hostlist_t;

/*
 * Parses a host list. Recognised by the first non-blank character:
 *   '{': MLX's hostfile JSON (every hosts[].ssh, and its first "ips" entry);
 *   otherwise Open MPI's hostfile: one host per line, "name [slots=N] [max_slots=N]", '#'
 *   starts a comment, other key=value words are ignored, a host listed twice adds its slots.
 * A "user@" prefix stays in login and is dropped from name. Returns 0 or -EINVAL with err
 * naming the line at fault; at least one host is required.
 */
int tbrdma_hostlist_parse(const char *text, tbrdma_hostlist_t *list_p, char *err, size_t errlen);

/* Parses mpirun's --host syntax: "mac-a,mac-b:2,mac-c" (":N" is slots). Same errors. */
int tbrdma_hostlist_parse_arg(const char *arg, tbrdma_hostlist_t *list_p, char *err, size_t errlen);

/* Index of the host named name (exact, then unique short name before the first '.'), or -1. */
int tbrdma_hostlist_find(const tbrdma_hostlist_t *list, const char *name);

/* Open MPI's hostfile: "login slots=N" per host ("login" alone without slots), in list order. */
size_t tbrdma_hostfile_write_ompi(const tbrdma_hostlist_t *list, char *buf, size_t len);

/*
 * tbrdma's mesh file: a comment header, then one cable per line, "hostA:device hostB:device",
 * in the order of the spec.
 */
size_t tbrdma_hostfile_write_mesh(const tbrdma_mesh_spec_t *spec, char *buf, size_t len);

/*
 * MLX's hostfile JSON for backend ("jaccl" or "jaccl-ring"): {"backend": ..., "hosts": [{"ssh":
 * login, "ips": [ipv4] or [], "rdma": [...]}, ...]} in list order. Entry j of host i's "rdma" is
 * null on the diagonal and for a pair without a cable, the device of host i whose cable goes to
 * host j, or, when several cables join the pair, an array of them in the same cable order on
 * both rows (ordered by the device on the lower-named host, so entry [0] is the cable tbrdma's
 * solver uses). Cables naming hosts outside the list are left out.
 */
size_t tbrdma_hostfile_write_mlx(const tbrdma_hostlist_t *list, const tbrdma_mesh_spec_t *spec,
                                 const char *backend, char *buf, size_t len);

#endif /* TBRDMA_HOSTFILE_H */
