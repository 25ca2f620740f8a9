/*
 * The verbs backend: the only file of tbrdma that calls ibv_*. It loads the verbs library with
 * dlopen (JACCL's way: macOS ships librdma.dylib and nothing links it at build time) and keeps
 * the resolved functions in one static table; discovery reads every device's ports and GID
 * tables through it and asks btl_tbrdma_netif for the paired interface's facts.
 *
 * rdma-core's verbs.h turns several names into macros or inlines that call other exported
 * symbols (ibv_query_port, ibv_reg_mr, ibv_get_device_list): this file never uses those names
 * as calls, only the table's typed pointers. The exported ibv_query_port fills the short
 * compat struct, a prefix of struct ibv_port_attr, so the struct is zeroed first.
 * Not thread-safe: open/close/discover run once, from component init or a tool's main().
 */
#include "btl_tbrdma_verbs.h"
#include "btl_tbrdma_netif.h"
#include "core/tbrdma_gid.h"

#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifdef __APPLE__
#define VERBS_DEFAULT_LIB "librdma.dylib"
#else
#define VERBS_DEFAULT_LIB "libibverbs.so.1"
#endif

#define VERBS_PATH_MAX 4096

/* The resolved functions; the names drop "ibv_" so that no verbs.h macro applies. */
typedef struct verbs_table {
    struct ibv_device **(*get_device_list)(int *num_devices);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *device);
    struct ibv_context *(*open_device)(struct ibv_device *device);
    int (*close_device)(struct ibv_context *context);
    int (*query_device)(struct ibv_context *context, struct ibv_device_attr *attr);
    int (*query_port)(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr);
    int (*query_gid)(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe, void *cq_context,
                                struct ibv_comp_channel *channel, int comp_vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*destroy_qp)(struct ibv_qp *qp);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
} verbs_table_t;

typedef struct verbs_symbol {
    const char *name;
    size_t offset; /* of the pointer in verbs_table_t */
} verbs_symbol_t;

#define VERBS_SYMBOL(field)                           \
    {                                                 \
        "ibv_" #field, offsetof(verbs_table_t, field) \
    }

static const verbs_symbol_t verbs_symbols[] = {
    VERBS_SYMBOL(get_device_list), VERBS_SYMBOL(free_device_list), VERBS_SYMBOL(get_device_name),
    VERBS_SYMBOL(open_device),     VERBS_SYMBOL(close_device),     VERBS_SYMBOL(query_device),
    VERBS_SYMBOL(query_port),      VERBS_SYMBOL(query_gid),        VERBS_SYMBOL(alloc_pd),
    VERBS_SYMBOL(dealloc_pd),      VERBS_SYMBOL(reg_mr),           VERBS_SYMBOL(dereg_mr),
    VERBS_SYMBOL(create_cq),       VERBS_SYMBOL(destroy_cq),       VERBS_SYMBOL(create_qp),
    VERBS_SYMBOL(destroy_qp),      VERBS_SYMBOL(modify_qp),
};

static verbs_table_t verbs;
static void *verbs_handle;
static char verbs_path[VERBS_PATH_MAX];

const char *tbrdma_verbs_default_lib(void)
{
    return VERBS_DEFAULT_LIB;
}

static int verbs_resolve(char *err, size_t errlen)
{
    size_t i;

    for (i = 0; i < sizeof(verbs_symbols) / sizeof(verbs_symbols[0]); i++) {
        void *sym;

        dlerror();
        sym = dlsym(verbs_handle, verbs_symbols[i].name);
        if (NULL == sym) {
            const char *why = dlerror();
            snprintf(err, errlen, "%s: symbol %s not found: %s", verbs_path, verbs_symbols[i].name,
                     (NULL != why) ? why : "NULL");
            return -ENOSYS;
        }
        /* POSIX guarantees object and function pointers convert through dlsym's void *. */
        memcpy((char *) &verbs + verbs_symbols[i].offset, &sym, sizeof(sym));
    }
    return 0;
}

int tbrdma_verbs_open(const char *lib, char *err, size_t errlen)
{
    const char *path = (NULL == lib || '\0' == lib[0]) ? VERBS_DEFAULT_LIB : lib;
    int rc;

    if (NULL != verbs_handle) {
        if (0 == strcmp(path, verbs_path)) {
            return 0;
        }
        tbrdma_verbs_close();
    }
    snprintf(verbs_path, sizeof(verbs_path), "%s", path);
    verbs_handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (NULL == verbs_handle) {
        const char *why = dlerror();
        snprintf(err, errlen, "%s", (NULL != why) ? why : path);
        return -ENOENT;
    }
    rc = verbs_resolve(err, errlen);
    if (0 != rc) {
        tbrdma_verbs_close();
    }
    return rc;
}

void tbrdma_verbs_close(void)
{
    if (NULL != verbs_handle) {
        dlclose(verbs_handle);
    }
    verbs_handle = NULL;
    verbs_path[0] = '\0';
    memset(&verbs, 0, sizeof(verbs));
}

/* Reads the GID table: a failing index is an empty slot (rxe fails on unset entries). */
static void verbs_read_gids(struct ibv_context *ctx, int gid_tbl_len, tbrdma_port_info_t *port)
{
    int i, n = (gid_tbl_len < TBRDMA_GID_TBL_MAX) ? gid_tbl_len : TBRDMA_GID_TBL_MAX;

    port->gid_count = (n > 0) ? n : 0;
    for (i = 0; i < port->gid_count; i++) {
        union ibv_gid gid;

        memset(&gid, 0, sizeof(gid));
        if (0 != verbs.query_gid(ctx, (uint8_t) port->port_num, i, &gid)) {
            memset(&gid, 0, sizeof(gid));
        }
        memcpy(port->gids[i].raw, gid.raw, sizeof(port->gids[i].raw));
    }
}

/* The paired interface's facts. An interface named by sysfs but absent here counts as none. */
static void verbs_fill_interface(tbrdma_port_info_t *port)
{
    if (0 != tbrdma_netif_pair(port->device, port->port_num, port->ifname, sizeof(port->ifname))) {
        port->ifname[0] = '\0';
        return;
    }
    if (-ENODEV == tbrdma_netif_fill(port)) {
        port->ifname[0] = '\0';
    }
}

/* Fills one port. Returns 0, or the errno of query_port (the port is then skipped). */
static int verbs_query_port(struct ibv_context *ctx, const char *name, int port_num,
                            tbrdma_port_info_t *port)
{
    struct ibv_port_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    rc = verbs.query_port(ctx, (uint8_t) port_num, &attr);
    if (0 != rc) {
        return rc;
    }
    memset(port, 0, sizeof(*port));
    snprintf(port->device, sizeof(port->device), "%s", name);
    port->port_num = port_num;
    port->state = (int) attr.state;
    port->link_layer = (int) attr.link_layer;
    port->active_mtu = (int) attr.active_mtu;
    verbs_read_gids(ctx, attr.gid_tbl_len, port);
    verbs_fill_interface(port);
    port->gid_index =
        tbrdma_gid_find_ipv4_mapped(port->gids, port->gid_count, port->has_ipv4 ? port->ipv4 : 0);
    return 0;
}

/* Appends the ports of one device to ports[*n_p .. max). A device that fails to open is skipped. */
static void verbs_discover_device(struct ibv_device *dev, tbrdma_port_info_t *ports, int max,
                                  int *n_p)
{
    struct ibv_device_attr attr;
    const char *name = verbs.get_device_name(dev);
    struct ibv_context *ctx = verbs.open_device(dev);
    int p;

    if (NULL == ctx || NULL == name) {
        goto out_close;
    }
    memset(&attr, 0, sizeof(attr));
    if (0 != verbs.query_device(ctx, &attr)) {
        goto out_close;
    }
    for (p = 1; p <= attr.phys_port_cnt && *n_p < max; p++) {
        if (0 == verbs_query_port(ctx, name, p, &ports[*n_p])) {
            (*n_p)++;
        }
    }
out_close:
    if (NULL != ctx) {
        verbs.close_device(ctx);
    }
}

int tbrdma_verbs_discover(tbrdma_port_info_t *ports, int max, int *nports_p, char *err,
                          size_t errlen)
{
    struct ibv_device **list;
    int ndev = 0, n = 0, i;

    if (NULL == verbs_handle) {
        snprintf(err, errlen, "no verbs library is loaded");
        return -EINVAL;
    }
    errno = 0;
    list = verbs.get_device_list(&ndev);
    if (NULL == list) {
        int error = errno;
        /* libibverbs without RDMA in the kernel: no device, not an error. */
        if (0 == error || ENOSYS == error) {
            *nports_p = 0;
            return 0;
        }
        snprintf(err, errlen, "%s: ibv_get_device_list failed: %s", verbs_path, strerror(error));
        return -error;
    }
    for (i = 0; i < ndev && NULL != list[i]; i++) {
        verbs_discover_device(list[i], ports, max, &n);
    }
    verbs.free_device_list(list);
    *nports_p = n;
    return 0;
}
