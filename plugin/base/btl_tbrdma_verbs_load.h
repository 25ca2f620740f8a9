/*
 * Loading the verbs library: dlopen (JACCL's way: macOS ships librdma.dylib and nothing links
 * it at build time) and one table of the resolved control-path functions. Shared by the
 * plugin's verbs backend (btl_tbrdma_verbs.c) and the tools that need plain verbs
 * (tbrdma-fieldtest), so every program of tbrdma loads librdma.dylib, libibverbs or libtbsim the
 * same way. The post/poll calls are verbs.h's inlines (through ctx->ops) and need no symbol;
 * the one-SGE post helpers below are shared by both as well.
 *
 * rdma-core's verbs.h turns several names into macros or inlines that call other exported
 * symbols (ibv_query_port, ibv_reg_mr, ibv_get_device_list): callers use the table's typed
 * pointers, never those names as calls. The exported ibv_query_port fills the short compat
 * struct, a prefix of struct ibv_port_attr, so callers zero the struct first.
 * Not thread-safe: load and unload run once, from component init or a tool's main().
 */
#ifndef BTL_TBRDMA_VERBS_LOAD_H
#define BTL_TBRDMA_VERBS_LOAD_H

#include "base/btl_tbrdma_verbs_lib.h"

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

/* The resolved functions; the names drop "ibv_" so that no verbs.h macro applies. */
typedef struct tbrdma_verbs_fns {
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
} tbrdma_verbs_fns_t;

/* The table, valid while a library is loaded (all NULL otherwise). */
extern tbrdma_verbs_fns_t tbrdma_verbs_fn;

/* tbrdma_verbs_open(), tbrdma_verbs_close() and tbrdma_verbs_default_lib() fill and clear it
   (declared in btl_tbrdma_verbs_lib.h). */

/* One work request of one SGE ([addr, addr+len), lkey) on qp, through verbs.h's inline post
 * calls: a SEND with send_flags, or a receive. Return 0 or the errno verbs returned. */
int tbrdma_verbs_send1(struct ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len,
                       uint32_t lkey, unsigned send_flags);
int tbrdma_verbs_recv1(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey);

/* 1 while a library is loaded. */
int tbrdma_verbs_loaded(void);

/* The loaded library's path as given ("" when none). */
const char *tbrdma_verbs_path(void);

#endif /* BTL_TBRDMA_VERBS_LOAD_H */
