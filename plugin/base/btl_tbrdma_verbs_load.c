/*
 * Loading the verbs library with dlopen and resolving the control-path functions into
 * tbrdma_verbs_fn (see btl_tbrdma_verbs_load.h). Moved here from btl_tbrdma_verbs.c so that the
 * plugin and tbrdma-fieldtest load verbs the same way.
 */
#include "base/btl_tbrdma_verbs_load.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef __APPLE__
#define VERBS_DEFAULT_LIB "librdma.dylib"
#else
#define VERBS_DEFAULT_LIB "libibverbs.so.1"
#endif

#define VERBS_PATH_MAX 4096

typedef struct verbs_symbol {
    const char *name;
    size_t offset; /* of the pointer in tbrdma_verbs_fns_t */
} verbs_symbol_t;

#define VERBS_SYMBOL(field)                                \
    {                                                      \
        "ibv_" #field, offsetof(tbrdma_verbs_fns_t, field) \
    }

static const verbs_symbol_t verbs_symbols[] = {
    VERBS_SYMBOL(get_device_list), VERBS_SYMBOL(free_device_list), VERBS_SYMBOL(get_device_name),
    VERBS_SYMBOL(open_device),     VERBS_SYMBOL(close_device),     VERBS_SYMBOL(query_device),
    VERBS_SYMBOL(query_port),      VERBS_SYMBOL(query_gid),        VERBS_SYMBOL(alloc_pd),
    VERBS_SYMBOL(dealloc_pd),      VERBS_SYMBOL(reg_mr),           VERBS_SYMBOL(dereg_mr),
    VERBS_SYMBOL(create_cq),       VERBS_SYMBOL(destroy_cq),       VERBS_SYMBOL(create_qp),
    VERBS_SYMBOL(destroy_qp),      VERBS_SYMBOL(modify_qp),
};

tbrdma_verbs_fns_t tbrdma_verbs_fn;
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
        memcpy((char *) &tbrdma_verbs_fn + verbs_symbols[i].offset, &sym, sizeof(sym));
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
    memset(&tbrdma_verbs_fn, 0, sizeof(tbrdma_verbs_fn));
}

int tbrdma_verbs_send1(struct ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
                       uint32_t lkey, unsigned send_flags)
{
    struct ibv_sge sge = {.addr = (uintptr_t) addr, .length = len, .lkey = lkey};
    struct ibv_send_wr wr, *bad = NULL;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = send_flags;
    return ibv_post_send(qp, &wr, &bad);
}

int tbrdma_verbs_recv1(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t) addr, .length = len, .lkey = lkey};
    struct ibv_recv_wr wr, *bad = NULL;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(qp, &wr, &bad);
}

int tbrdma_verbs_loaded(void)
{
    return NULL != verbs_handle;
}

const char *tbrdma_verbs_path(void)
{
    return verbs_path;
}
