/*
 * The tbrdma component: the Open MPI lifecycle (register, open, init, close) as short named
 * steps. init decides whether this host can use Thunderbolt RDMA at all: it loads the verbs
 * library, discovers and selects ports, diagnoses each, publishes the usable ones through the
 * modex and reads the mesh file. Declining is normal (no RDMA here): it is silent at verbosity
 * 0 and explained at verbosity 1; only a host with RDMA devices none of which works speaks up
 * unasked, once per host (local rank 0).
 */
#include "btl_tbrdma.h"
#include "btl_tbrdma_output.h"
#include "btl_tbrdma_verbs.h"
#include "btl_tbrdma_netif.h"

#include "core/tbrdma_diag.h"
#include "core/tbrdma_select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMPONENT_MESH_FILE_MAX (1024 * 1024) /* a mesh file of 64 hosts is a few KiB */

static int component_register(void);
static int component_open(void);
static int component_close(void);
static mca_btl_base_module_t **component_init(int *num_btls, bool enable_progress_threads,
                                              bool enable_mpi_threads);

mca_btl_tbrdma_component_t mca_btl_tbrdma_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("tbrdma"),
            .mca_open_component = component_open,
            .mca_close_component = component_close,
            .mca_register_component_params = component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_NONE,
        },
        .btl_init = component_init,
        /* No data path yet, so nothing to progress: bml skips a NULL progress function. */
        .btl_progress = NULL,
    },
    .output = -1,
};

/*
 * Open MPI does not check the BTL API of a DSO it loads, and 4.1 and 5.0 structures differ:
 * refuse to run inside an Open MPI of another major.minor than the one built against.
 */
static int component_check_version(void)
{
    int major = -1, minor = -1;

    if (2 == sscanf(opal_version_string, "%d.%d", &major, &minor) && OPAL_MAJOR_VERSION == major
        && OPAL_MINOR_VERSION == minor) {
        return OPAL_SUCCESS;
    }
    opal_output(0,
                "tbrdma: mca_btl_tbrdma was built for Open MPI %d.%d but this is Open MPI %s: "
                "rebuild tbrdma against this Open MPI (docs/building.md); tbrdma is disabled",
                OPAL_MAJOR_VERSION, OPAL_MINOR_VERSION, opal_version_string);
    return OPAL_ERR_NOT_SUPPORTED;
}

static int component_register(void)
{
    int rc = component_check_version();

    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    rc = mca_btl_tbrdma_params_register();
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    mca_btl_tbrdma_output_open();
    mca_btl_tbrdma_params_verify();
    opal_output_set_verbosity(mca_btl_tbrdma_component.output, mca_btl_tbrdma_component.verbose);
    return OPAL_SUCCESS;
}

static int component_open(void)
{
    mca_btl_tbrdma_component.verbs_open = false;
    mca_btl_tbrdma_component.module = NULL;
    return OPAL_SUCCESS;
}

static void component_close_verbs(void)
{
    if (mca_btl_tbrdma_component.verbs_open) {
        tbrdma_verbs_close();
        mca_btl_tbrdma_component.verbs_open = false;
    }
}

static int component_close(void)
{
    /* The framework finalizes every module before closing; this covers a failed startup. */
    if (NULL != mca_btl_tbrdma_component.module) {
        mca_btl_tbrdma_component.module->super.btl_finalize(
            &mca_btl_tbrdma_component.module->super);
    }
    component_close_verbs();
    mca_btl_tbrdma_output_close();
    return OPAL_SUCCESS;
}

/* Messages every process would print alike are printed by local rank 0 only. */
static bool component_speaks_for_host(void)
{
    return 0 == TBRDMA_MY_LOCAL_RANK();
}

/* Step 1: load the verbs library (btl_tbrdma_verbs_lib or the platform's). */
static int component_open_verbs(const char *host)
{
    const char *lib = mca_btl_tbrdma_component.verbs_lib;
    char err[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];

    if (NULL == lib || '\0' == lib[0]) {
        lib = tbrdma_verbs_default_lib();
    }
    if (0 != tbrdma_verbs_open(lib, err, sizeof(err))) {
        tbrdma_diag_no_library_message(host, lib, err, msg, sizeof(msg));
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: %s", msg);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    mca_btl_tbrdma_component.verbs_open = true;
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE, "loaded verbs library %s", lib);
    return OPAL_SUCCESS;
}

static void component_log_port(const tbrdma_port_info_t *p)
{
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE,
                   "device %s port %d: state %d, link layer %d, mtu %d, interface %s, ipv4 %s, "
                   "bridge %s, %d GIDs, IPv4-mapped GID index %d",
                   p->device, p->port_num, p->state, p->link_layer, p->active_mtu,
                   '\0' != p->ifname[0] ? p->ifname : "(none)", p->has_ipv4 ? "yes" : "no",
                   '\0' != p->bridge[0] ? p->bridge : "(none)", p->gid_count, p->gid_index);
}

/* Step 2: every device and port the library lists; 0 ports = decline. */
static int component_discover(const char *host, tbrdma_port_info_t *ports, int *nports_p)
{
    const char *lib = mca_btl_tbrdma_component.verbs_lib;
    char err[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];
    int i, rc = tbrdma_verbs_discover(ports, TBRDMA_MAX_PORTS, nports_p, err, sizeof(err));

    if (0 != rc) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: host %s: cannot list RDMA devices: %s",
                       host, err);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    if (0 == *nports_p) {
        if (NULL == lib || '\0' == lib[0]) {
            lib = tbrdma_verbs_default_lib();
        }
        tbrdma_diag_no_devices_message(host, lib, msg, sizeof(msg));
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: %s", msg);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    for (i = 0; i < *nports_p; i++) {
        component_log_port(&ports[i]);
    }
    return OPAL_SUCCESS;
}

/* Step 3: keep the ports btl_tbrdma_if_include / if_exclude select (compacts ports[]). */
static int component_select(tbrdma_port_info_t *ports, int *nports_p)
{
    const char *inc = mca_btl_tbrdma_component.if_include;
    const char *exc = mca_btl_tbrdma_component.if_exclude;
    int i, n = 0;

    for (i = 0; i < *nports_p; i++) {
        if (tbrdma_select_device(ports[i].device, ports[i].ifname, inc, exc)) {
            ports[n++] = ports[i];
        } else {
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "device %s: not selected by "
                           "btl_tbrdma_if_include/if_exclude", ports[i].device);
        }
    }
    if (0 == n) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: btl_tbrdma_if_include = \"%s\" / "
                       "btl_tbrdma_if_exclude = \"%s\" select none of the %d ports",
                       inc ? inc : "", exc ? exc : "", *nports_p);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    *nports_p = n;
    return OPAL_SUCCESS;
}
