/*
 * The tbrdma component: the Open MPI lifecycle (register, open, init, close) as short named
 * steps. init decides whether this host can use Thunderbolt RDMA at all: it loads the verbs
 * library, discovers and selects ports, diagnoses each, publishes the usable ones through the
 * modex and reads the mesh file. Declining is normal (no RDMA here): it is silent at verbosity
 * 0 and explained at verbosity 1; only a host with RDMA devices none of which works speaks up
 * unasked, once per host (local rank 0).
 */
#include "base/btl_tbrdma_netif.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_verbs.h"
#include "btl_tbrdma.h"

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
    .super =
        {
            .btl_version =
                {
                    MCA_BTL_DEFAULT_VERSION("tbrdma"),
                    .mca_open_component = component_open,
                    .mca_close_component = component_close,
                    .mca_register_component_params = component_register,
                },
            .btl_data =
                {
                    .param_field = MCA_BASE_METADATA_PARAM_NONE,
                },
            .btl_init = component_init,
            .btl_progress = mca_btl_tbrdma_component_progress,
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
    mca_btl_tbrdma_output_set_verbosity(mca_btl_tbrdma_component.verbose);
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
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                           "device %s: not selected by "
                           "btl_tbrdma_if_include/if_exclude",
                           ports[i].device);
        }
    }
    if (0 == n) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "declining: btl_tbrdma_if_include = \"%s\" / "
                       "btl_tbrdma_if_exclude = \"%s\" select none of the %d ports",
                       inc ? inc : "", exc ? exc : "", *nports_p);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    *nports_p = n;
    return OPAL_SUCCESS;
}

/* No selected port works: every port's diagnosis, in one message, once per host. */
static void component_report_unusable(const char *host, const tbrdma_port_info_t *ports,
                                      const tbrdma_diag_t *diag, int n)
{
    size_t len = (size_t) n * TBRDMA_MSG_MAX, used = 0;
    char *text;
    int i;

    TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: host %s: none of the %d ports is usable",
                   host, n);
    if (!mca_btl_tbrdma_speaks_for_host()) {
        return;
    }
    text = malloc(len);
    if (NULL == text) {
        return;
    }
    text[0] = '\0';
    for (i = 0; i < n && used < len; i++) {
        used += tbrdma_diag_port_message(&ports[i], diag[i], host, text + used, len - used);
        if (i + 1 < n && used + 1 < len) {
            text[used++] = '\n';
            text[used] = '\0';
        }
    }
    mca_btl_tbrdma_show_help("no-usable-port", text);
    free(text);
}

/*
 * Step 4: diagnose every selected port. Usable ones are compacted to the front of ports[] and
 * described in local->ports (same order); the others are explained at verbosity 1. No usable
 * port = decline, with every diagnosis shown.
 */
static int component_diagnose(const char *host, tbrdma_port_info_t *ports, int *nports_p,
                              tbrdma_modex_t *local)
{
    tbrdma_diag_t diag[TBRDMA_MAX_PORTS];
    char msg[TBRDMA_MSG_MAX];
    int i, n = *nports_p, nusable = 0;

    for (i = 0; i < n; i++) {
        diag[i] = tbrdma_diag_port(&ports[i]);
        nusable += (TBRDMA_DIAG_OK == diag[i]) ? 1 : 0;
    }
    if (0 == nusable) {
        component_report_unusable(host, ports, diag, n);
        return OPAL_ERR_NOT_AVAILABLE;
    }
    local->nports = 0;
    local->bulk_frames = mca_btl_tbrdma_component.bulk_frames; /* checked against every peer's */
    for (i = 0; i < n; i++) {
        tbrdma_diag_port_message(&ports[i], diag[i], host, msg, sizeof(msg));
        if (TBRDMA_DIAG_OK != diag[i]) {
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "not using: %s", msg);
            continue;
        }
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "using: %s", msg);
        ports[local->nports] = ports[i];
        tbrdma_modex_port_from_info(&ports[i], &local->ports[local->nports]);
        local->nports++;
    }
    *nports_p = local->nports;
    return OPAL_SUCCESS;
}

/* Step 5: publish this host's identity and usable ports to every peer. */
static int component_publish(const tbrdma_modex_t *local)
{
    size_t size = tbrdma_modex_encoded_size(local), used = 0;
    void *blob = malloc(size);
    int rc;

    if (NULL == blob) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    rc = tbrdma_modex_encode(local, blob, size, &used);
    if (0 != rc) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: cannot encode the modex: %s",
                       strerror(-rc));
        free(blob);
        return OPAL_ERR_BAD_PARAM;
    }
    OPAL_MODEX_SEND(rc, TBRDMA_MODEX_SCOPE, &mca_btl_tbrdma_component.super.btl_version, blob,
                    used);
    free(blob);
    if (OPAL_SUCCESS != rc) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: modex send failed (%d)", rc);
        return OPAL_ERROR;
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_PEER, "published %zu bytes: host %s, %d ports", used, local->host,
                   local->nports);
    return OPAL_SUCCESS;
}

/* Reads a whole text file (at most COMPONENT_MESH_FILE_MAX bytes) into a new string. */
static char *component_read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    size_t n;
    char *text;

    if (NULL == f) {
        snprintf(err, errlen, "cannot open it: %s", strerror(errno));
        return NULL;
    }
    text = malloc(COMPONENT_MESH_FILE_MAX + 1);
    if (NULL == text) {
        snprintf(err, errlen, "out of memory");
        fclose(f);
        return NULL;
    }
    n = fread(text, 1, COMPONENT_MESH_FILE_MAX + 1, f);
    if (ferror(f) || COMPONENT_MESH_FILE_MAX < n) {
        snprintf(err, errlen, "%s", ferror(f) ? "read error" : "larger than 1 MiB");
        free(text);
        fclose(f);
        return NULL;
    }
    fclose(f);
    text[n] = '\0';
    return text;
}

/* Step 6: parse btl_tbrdma_mesh_file when set (*spec_p stays NULL otherwise). */
static int component_read_mesh_file(const char *host, tbrdma_mesh_spec_t **spec_p)
{
    const char *path = mca_btl_tbrdma_component.mesh_file;
    char err[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];
    tbrdma_mesh_spec_t *spec;
    char *text;
    int rc = OPAL_ERR_BAD_PARAM;

    *spec_p = NULL;
    if (NULL == path || '\0' == path[0]) {
        return OPAL_SUCCESS;
    }
    spec = calloc(1, sizeof(*spec));
    if (NULL == spec) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    text = component_read_file(path, err, sizeof(err));
    if (NULL != text && 0 == tbrdma_mesh_spec_parse(text, spec, err, sizeof(err))) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "mesh file %s: %d cables", path, spec->ncables);
        *spec_p = spec;
        spec = NULL;
        rc = OPAL_SUCCESS;
    } else {
        snprintf(msg, sizeof(msg), "host %s: mesh file %s (btl_tbrdma_mesh_file): %s", host, path,
                 err);
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE, "declining: %s", msg);
        if (mca_btl_tbrdma_speaks_for_host()) {
            mca_btl_tbrdma_show_help("mesh-file", msg);
        }
    }
    free(text);
    free(spec);
    return rc;
}

/* This host's identity; falls back to Open MPI's node name. */
static void component_hostname(char *host, size_t len)
{
    if (0 != tbrdma_netif_hostname(host, len)) {
        snprintf(host, len, "%s",
                 NULL != opal_process_info.nodename ? opal_process_info.nodename : "unknown");
    }
}

/* Steps 2-6 after the library is loaded; on success local and *spec_p are filled. */
static int component_find_ports(const char *host, tbrdma_port_info_t *ports, int *nports_p,
                                tbrdma_modex_t *local, tbrdma_mesh_spec_t **spec_p)
{
    int rc = component_discover(host, ports, nports_p);

    if (OPAL_SUCCESS == rc) {
        rc = component_select(ports, nports_p);
    }
    if (OPAL_SUCCESS == rc) {
        rc = component_diagnose(host, ports, nports_p, local);
    }
    if (OPAL_SUCCESS == rc) {
        rc = component_read_mesh_file(host, spec_p);
    }
    if (OPAL_SUCCESS == rc) {
        rc = component_publish(local);
    }
    return rc;
}

/*
 * Decides whether tbrdma runs in this process. Returns one module for all usable ports, or
 * NULL (with *num_btls = 0) to decline: the usual answer on a machine without Thunderbolt RDMA.
 */
static mca_btl_base_module_t **component_init(int *num_btls, bool enable_progress_threads,
                                              bool enable_mpi_threads)
{
    mca_btl_base_module_t **modules = NULL;
    tbrdma_mesh_spec_t *spec = NULL;
    tbrdma_port_info_t *ports;
    tbrdma_modex_t local;
    int nports = 0;

    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;
    memset(&local, 0, sizeof(local));
    component_hostname(local.host, sizeof(local.host));
    ports = calloc(TBRDMA_MAX_PORTS, sizeof(*ports));
    if (NULL == ports) {
        return NULL;
    }
    if (OPAL_SUCCESS != component_open_verbs(local.host)) {
        goto err_free_ports;
    }
    if (OPAL_SUCCESS != component_find_ports(local.host, ports, &nports, &local, &spec)) {
        goto err_close_verbs;
    }
    modules = malloc(sizeof(*modules));
    if (NULL == modules) {
        goto err_free_spec;
    }
    mca_btl_tbrdma_component.module = mca_btl_tbrdma_module_create(&local, ports, spec);
    if (NULL == mca_btl_tbrdma_component.module) {
        goto err_free_modules;
    }
    modules[0] = &mca_btl_tbrdma_component.module->super;
    *num_btls = 1;
    return modules;

err_free_modules:
    free(modules);
err_free_spec:
    free(spec);
err_close_verbs:
    component_close_verbs();
err_free_ports:
    free(ports);
    return NULL;
}
