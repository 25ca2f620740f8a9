/*
 * Stand-in for the macOS SDK's <infiniband/verbs.h> (macOS 26.2+; rdma-core's
 * libibverbs/verbs.h, which Apple ships with librdma.tbd): only the declarations tbrdma's macOS
 * code uses. Structures the code only points to stay incomplete; struct ibv_context_ops is
 * abridged to the two members the inline post calls use (this header checks syntax and types,
 * never layout: nothing is linked against it).
 */
#ifndef TBRDMA_MACOS_INFINIBAND_VERBS_H
#define TBRDMA_MACOS_INFINIBAND_VERBS_H
#include <stddef.h>
#include <stdint.h>

struct ibv_device;
struct ibv_device_attr;
struct ibv_port_attr;
struct ibv_pd;
struct ibv_mr;
struct ibv_cq;
struct ibv_comp_channel;
struct ibv_qp_init_attr;
struct ibv_qp_attr;
struct ibv_wc;

union ibv_gid {
    uint8_t raw[16];
    struct {
        uint64_t subnet_prefix;
        uint64_t interface_id;
    } global;
};

struct ibv_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
};

enum ibv_wr_opcode {
    IBV_WR_RDMA_WRITE,
    IBV_WR_RDMA_WRITE_WITH_IMM,
    IBV_WR_SEND,
    IBV_WR_SEND_WITH_IMM,
    IBV_WR_RDMA_READ,
};

enum ibv_send_flags {
    IBV_SEND_FENCE = 1 << 0,
    IBV_SEND_SIGNALED = 1 << 1,
    IBV_SEND_SOLICITED = 1 << 2,
    IBV_SEND_INLINE = 1 << 3,
};

struct ibv_send_wr {
    uint64_t wr_id;
    struct ibv_send_wr *next;
    struct ibv_sge *sg_list;
    int num_sge;
    enum ibv_wr_opcode opcode;
    unsigned int send_flags;
    uint32_t imm_data;
};

struct ibv_recv_wr {
    uint64_t wr_id;
    struct ibv_recv_wr *next;
    struct ibv_sge *sg_list;
    int num_sge;
};

struct ibv_qp;

struct ibv_context_ops {
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
    int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
};

struct ibv_context {
    struct ibv_device *device;
    struct ibv_context_ops ops;
};

struct ibv_qp {
    struct ibv_context *context;
    void *qp_context;
    struct ibv_pd *pd;
    struct ibv_cq *send_cq;
    struct ibv_cq *recv_cq;
    uint32_t handle;
    uint32_t qp_num;
};

static inline int ibv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
                                struct ibv_send_wr **bad_wr)
{
    return qp->context->ops.post_send(qp, wr, bad_wr);
}

static inline int ibv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
                                struct ibv_recv_wr **bad_wr)
{
    return qp->context->ops.post_recv(qp, wr, bad_wr);
}
#endif
