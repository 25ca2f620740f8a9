/*
 * mca_btl_tbrdma: the component and module of tbrdma, Open MPI's BTL for RDMA over Thunderbolt.
 *
 * One component, at most one module per process (all of a host's Thunderbolt ports belong to
 * one module: the mesh decides which port reaches which peer host). This issue brings the
 * control path only: discovery, diagnosis, modex, mesh. The module reaches no peer yet (no
 * queue pairs, no send/recv): add_procs records every peer's resolved port in an endpoint for
 * the data path to come and sets no reachable bit, so Open MPI uses the other BTLs.
 */
#ifndef BTL_TBRDMA_H
#define BTL_TBRDMA_H

#include "btl_tbrdma_compat.h"

#include "opal/class/opal_list.h"

#include "core/tbrdma_mesh.h"
#include "core/tbrdma_modex.h"
#include "core/tbrdma_types.h"

#include <stdbool.h>

/* Module defaults until the data path exists; they size ob1's fragments then. */
#define MCA_BTL_TBRDMA_FRAME_SIZE  4096  /* one Apple RDMA frame (research: 4 KiB frames) */
#define MCA_BTL_TBRDMA_LATENCY     10    /* below tcp's 100: first fragments go here */
#define MCA_BTL_TBRDMA_BANDWIDTH   40000 /* Mbit/s, what one TB5 cable carries with RDMA */
#define MCA_BTL_TBRDMA_VERBOSE_MAX 100

typedef struct mca_btl_tbrdma_component_t {
    mca_btl_base_component_t super;

    /* MCA parameters (btl_tbrdma_params.c); strings are owned by the MCA var system. */
    int verbose;
    char *verbs_lib;
    char *if_include;
    char *if_exclude;
    char *mesh_file;
    bool allow_partial_mesh;

    int output; /* opal_output stream of btl_tbrdma_verbose, -1 when closed */

    /* What init found; freed by close. */
    bool verbs_open;
    struct mca_btl_tbrdma_module_t *module;
} mca_btl_tbrdma_component_t;

OPAL_DECLSPEC extern mca_btl_tbrdma_component_t mca_btl_tbrdma_component;

typedef struct mca_btl_tbrdma_module_t {
    mca_btl_base_module_t super;

    tbrdma_modex_t local;      /* this host and its usable ports, as published */
    tbrdma_port_info_t *ports; /* discovery of local.ports[i], same order */
    tbrdma_mesh_spec_t *spec;  /* btl_tbrdma_mesh_file, NULL when not set */
    opal_list_t endpoints;     /* mca_btl_tbrdma_endpoint_t, one per peer on another host */
    opal_mutex_t lock;         /* add_procs/del_procs may run from several threads */
} mca_btl_tbrdma_module_t;

/* The function table and defaults every module starts from (registered with the MCA base). */
extern mca_btl_tbrdma_module_t mca_btl_tbrdma_module_template;

/* btl_tbrdma_params.c: register every MCA variable of tbrdma; warn about and reset bad ones. */
int mca_btl_tbrdma_params_register(void);
void mca_btl_tbrdma_params_verify(void);

/* btl_tbrdma_module.c: a module for the usable ports; takes ownership of ports and spec. */
mca_btl_tbrdma_module_t *mca_btl_tbrdma_module_create(const tbrdma_modex_t *local,
                                                      tbrdma_port_info_t *ports,
                                                      tbrdma_mesh_spec_t *spec);

#endif /* BTL_TBRDMA_H */
