/*
 * tbrdma-doctor's model of a cluster: what the probe (tools/tbrdma-probe) reported about every
 * host, the cables found between them, and the findings, each one line naming host, device and
 * interface with the fix. The pieces (each calls only those listed above it, never back):
 *   doctor_model.c   the helpers over this model that every other piece uses (pure)
 *   doctor_launch.c  runs the probe on every host through the launch agent (as mpirun does)
 *   doctor_probe.c   turns one host's probe output into a doc_host_t (pure)
 *   doctor_topo.c    finds the cables: which port faces which port (pure)
 *   doctor_host.c    the per-host checks (pure)
 *   doctor_cable.c   the checks between hosts: cables, their addresses, the mesh file (pure)
 *   doctor_check.c   every check, in an order where a root cause hides what it explains (pure)
 *   doctor_report.c  the text and JSON reports and the hostfiles of the solved mesh
 * This header declares the model, doctor_model.c's helpers and doctor_probe.c's reader; the
 * others have a header of their own. Host and port indexes are positions in the host list; -1
 * means none.
 */
#ifndef TBRDMA_DOCTOR_H
#define TBRDMA_DOCTOR_H

#include "core/tbrdma_hostfile.h"
#include "core/tbrdma_macos.h"
#include "core/tbrdma_mesh.h"

#include <stdio.h>

#define DOC_ADDR_MAX    48   /* an IPv6 address in text */
#define DOC_NEIGH_MAX   8    /* link-local neighbours kept per port */
#define DOC_LLADDR_MAX  32   /* link-local addresses kept per host */
#define DOC_TEXT_MAX    1536 /* one message */
#define DOC_PATH_MAX    1024
#define DOC_VERSION_MAX 32
#define DOC_BUS_MAX     16
#define DOC_HWPORT_MAX  32
#define DOC_SVC_MAX     32
#define DOC_LIST_MAX    512 /* a list of hosts or ports in one message */

/* How a cable was found. */
typedef enum doc_source {
    DOC_SOURCE_NONE = 0,
    DOC_SOURCE_THUNDERBOLT, /* system_profiler: the peer's domain UUID */
    DOC_SOURCE_LINK_LOCAL   /* an IPv6 link-local neighbour answered on the port */
} doc_source_t;

typedef struct doc_port {
    tbrdma_port_info_t info;      /* from tbrdma-info --parsable: port and gid records */
    char diag[TBRDMA_NAME_MAX];   /* its diagnosis name: "ok", "bridged", "no-ipv4", ... */
    char diag_text[DOC_TEXT_MAX]; /* the message with the fix, "" for ok */
    int held_qps;                 /* queue pairs dead tbrdma processes hold (slot ledger) */
    char held_text[DOC_TEXT_MAX]; /* tbrdma-info's message naming them, "" */
    char lladdr[DOC_ADDR_MAX];    /* the interface's IPv6 link-local address, "" */
    int nneigh;                   /* link-local addresses that answered on it */
    char neigh[DOC_NEIGH_MAX][DOC_ADDR_MAX];
    int bus;                            /* index in the host's buses (macOS), -1 */
    char hwport[TBRDMA_MACOS_TEXT_MAX]; /* "Thunderbolt 1" (macOS), "" */
    int service;                        /* index in the host's services serving the port, -1 */
    int peer_host, peer_port;           /* the other end of its cable; peer_port -1 = not RDMA */
    char peer_ifname[TBRDMA_NAME_MAX];  /* the interface at the other end, "" unknown */
    doc_source_t source;                /* how the cable was found */
    int explained;                      /* a finding already names this port's problem */
} doc_port_t;

typedef struct doc_lladdr {
    char ifname[TBRDMA_NAME_MAX];
    char addr[DOC_ADDR_MAX];
} doc_lladdr_t;

typedef struct doc_service {
    tbrdma_netservice_t svc;
    int has_info;
    tbrdma_svcinfo_t info;
} doc_service_t;

typedef struct doc_host {
    tbrdma_host_entry_t entry; /* as listed: name, login, slots; ipv4 from the probe */
    /* the launch */
    int exit_status; /* of the agent (or local sh), -1 when killed */
    int timed_out;
    char output_tail[DOC_TEXT_MAX]; /* last lines of its output when the probe did not finish */
    int probed;                     /* the probe ran to its "done" line */
    char hostname[TBRDMA_HOST_MAX]; /* what the host calls itself (tbrdma-info's host=) */
    char os[16];
    int fake_macos;
    int perf_cores;  /* its performance cores (the probe's "cores" line), 0 when not reported */
    int total_cores; /* all its cores, 0 when not reported */
    char cores_source[TBRDMA_NAME_MAX]; /* where from: hw.perflevel0.physicalcpu, nproc, ... */
    /* tbrdma */
    char info_path[DOC_PATH_MAX]; /* tbrdma-info found there, "" when not installed */
    int info_status;              /* its exit status (3: no library or no device) */
    char tbrdma_version[DOC_VERSION_MAX];
    char tbrdma_built_for[DOC_VERSION_MAX]; /* the Open MPI version it was built for */
    char host_diag[TBRDMA_NAME_MAX];        /* tbrdma-info's host-level diagnosis, "" */
    char host_diag_text[DOC_TEXT_MAX];
    /* Open MPI */
    char ompi_path[DOC_PATH_MAX]; /* ompi_info, "" when not found */
    char ompi_version[DOC_VERSION_MAX];
    int component_found;                     /* ompi_info lists btl tbrdma */
    char component_version[DOC_VERSION_MAX]; /* "Component vX": the Open MPI it was built for */
    char component_path[DOC_PATH_MAX];       /* Open MPI's effective component path */
    /* the network */
    int nports;
    doc_port_t ports[TBRDMA_MAX_PORTS];
    int nll;
    doc_lladdr_t ll[DOC_LLADDR_MAX]; /* every interface's link-local address */
    /* macOS */
    int macos;      /* macOS facts were gathered */
    int firewall;   /* socketfilterfw state 0/1/2, -1 unknown */
    int exo_daemon; /* exo's io.exo.networksetup daemon is installed */
    int nbuses;
    tbrdma_tb_bus_t buses[DOC_BUS_MAX];
    int nhwports;
    tbrdma_hwport_t hwports[DOC_HWPORT_MAX];
    int nservices;
    doc_service_t services[DOC_SVC_MAX];
    /* set by the checks */
    int down;    /* unreachable, or no usable probe output */
    int no_rdma; /* no RDMA device: nothing port-level to check */
} doc_host_t;

typedef struct doc_cable {
    int host[2], port[2];
    doc_source_t source;
} doc_cable_t;

typedef struct doc_finding {
    char check[TBRDMA_NAME_MAX]; /* stable name, see docs/doctor.md */
    int problem;                 /* 1 keeps a full-mesh job from running; 0 a note */
    int host;                    /* -1 for a pair or the cluster */
    char device[TBRDMA_NAME_MAX];
    char ifname[TBRDMA_NAME_MAX];
    char text[2 * DOC_TEXT_MAX]; /* "host H: device D (interface I): what; fix: how" */
} doc_finding_t;

typedef struct doc_cluster {
    int nhosts;
    doc_host_t *hosts;
    const tbrdma_mesh_spec_t *spec; /* the mesh file given (btl_tbrdma_mesh_file), NULL */
    const char *spec_path;
    int ncables;
    doc_cable_t cables[TBRDMA_MESH_MAX_CABLES];
    int nfindings, maxfindings;
    doc_finding_t *findings;
    int solved;            /* tbrdma's solver resolved a full mesh from the usable ports */
    tbrdma_mesh_t mesh;    /* its result */
    tbrdma_modex_t *modex; /* the usable ports it solved, per host */
} doc_cluster_t;

/* doctor_probe.c: fills host (whose entry is set) from its probe output, keeping its tail. */
void doc_probe_parse(const char *text, doc_host_t *host);

/* doctor_model.c: appends a finding (printf-style text). */
void doc_add(doc_cluster_t *cl, const char *check, int problem, int host, const char *device,
             const char *ifname, const char *format, ...) __attribute__((format(printf, 7, 8)));

/* doctor_model.c: short host name for messages: what it calls itself, else its listed name. */
const char *doc_host_name(const doc_host_t *h);

/* doctor_model.c: "host H: device D (interface I)" for messages. */
void doc_port_subject(const doc_host_t *h, const doc_port_t *p, char *buf, size_t len);

/* doctor_model.c: 1 when tbrdma-info found nothing wrong with the port (diagnosis "ok"). */
int doc_port_usable(const doc_port_t *p);

#endif /* TBRDMA_DOCTOR_H */
