/*
 * The verbs backend: the only file of the plugin that calls ibv_*, through the table that
 * btl_tbrdma_verbs_load.c resolves with dlopen (shared with the tools). Discovery reads every
 * device's ports and GID tables through it and asks btl_tbrdma_netif for the paired
 * interface's facts. Not thread-safe: open/close/discover run once, from component init or a
 * tool's main().
 *
 * The data path (second half): one context, protection domain and completion queue per device,
 * UC queue pairs taken to INIT/RTR/RTS exactly as Apple's stack accepts them (access flags 0,
 * GRH hop limit 1, source GID = the port's IPv4-mapped entry, every send signaled, one SGE, no
 * inline data), and the inline post/poll calls of verbs.h, which reach the provider through
 * ctx->ops. The caller serializes all calls on one device (base/btl_tbrdma_token.c's token).
 *
 * While the process is attached to its Mac's agent (btl_tbrdma_agentlink.h), the data path's
 * calls go to the agent-mode half instead (btl_tbrdma_verbs_agent.c): a device is one of the
 * agent's cables, a queue pair is virtual, and nothing here touches the device.
 */
#include "base/btl_tbrdma_verbs.h"
#include "base/btl_tbrdma_agentlink.h"
#include "base/btl_tbrdma_netif.h"
#include "base/btl_tbrdma_verbs_agent.h"
#include "base/btl_tbrdma_verbs_load.h"
#include "core/tbrdma_gid.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the GID table: a failing index is an empty slot (rxe fails on unset entries). */
static void verbs_read_gids(struct ibv_context *ctx, int gid_tbl_len, tbrdma_port_info_t *port)
{
    int i, n = (gid_tbl_len < TBRDMA_GID_TBL_MAX) ? gid_tbl_len : TBRDMA_GID_TBL_MAX;

    port->gid_count = (n > 0) ? n : 0;
    for (i = 0; i < port->gid_count; i++) {
        union ibv_gid gid;

        memset(&gid, 0, sizeof(gid));
        if (0 != tbrdma_verbs_fn.query_gid(ctx, (uint8_t) port->port_num, i, &gid)) {
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
    rc = tbrdma_verbs_fn.query_port(ctx, (uint8_t) port_num, &attr);
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
    const char *name = tbrdma_verbs_fn.get_device_name(dev);
    struct ibv_context *ctx = tbrdma_verbs_fn.open_device(dev);
    int p;

    if (NULL == ctx || NULL == name) {
        goto out_close;
    }
    memset(&attr, 0, sizeof(attr));
    if (0 != tbrdma_verbs_fn.query_device(ctx, &attr)) {
        goto out_close;
    }
    for (p = 1; p <= attr.phys_port_cnt && *n_p < max; p++) {
        if (0 == verbs_query_port(ctx, name, p, &ports[*n_p])) {
            (*n_p)++;
        }
    }
out_close:
    if (NULL != ctx) {
        tbrdma_verbs_fn.close_device(ctx);
    }
}

int tbrdma_verbs_discover(tbrdma_port_info_t *ports, int max, int *nports_p, char *err,
                          size_t errlen)
{
    struct ibv_device **list;
    int ndev = 0, n = 0, i;

    if (!tbrdma_verbs_loaded()) {
        snprintf(err, errlen, "no verbs library is loaded");
        return -EINVAL;
    }
    errno = 0;
    list = tbrdma_verbs_fn.get_device_list(&ndev);
    if (NULL == list) {
        int error = errno;
        /* libibverbs without RDMA in the kernel: no device, not an error. */
        if (0 == error || ENOSYS == error) {
            *nports_p = 0;
            return 0;
        }
        snprintf(err, errlen, "%s: ibv_get_device_list failed: %s", tbrdma_verbs_path(),
                 strerror(error));
        return -error;
    }
    for (i = 0; i < ndev && NULL != list[i]; i++) {
        verbs_discover_device(list[i], ports, max, &n);
    }
    tbrdma_verbs_fn.free_device_list(list);
    *nports_p = n;
    return 0;
}

/* ---- the data path ---------------------------------------------------------------------- */

#define VERBS_SGE_MAX 1 /* Apple: one scatter/gather entry per work request */

struct tbrdma_vdev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    int port_num;
    int nqps; /* queue pairs of this process on the device now (the ledger's count) */
    char name[TBRDMA_NAME_MAX];
    tbrdma_adev_t *agent; /* agent mode: the agent's cable, and nothing above is open */
};

struct tbrdma_vqp {
    struct ibv_qp *qp;
    tbrdma_vdev_t *dev;
    tbrdma_aqp_t *agent; /* agent mode: the virtual queue pair */
};

/* Opens the device called name: a context, or NULL with -errno in *rc_p. */
static struct ibv_context *verbs_open_by_name(const char *name, int *rc_p)
{
    struct ibv_device **list;
    struct ibv_context *ctx = NULL;
    int ndev = 0;

    *rc_p = -ENODEV;
    list = tbrdma_verbs_fn.get_device_list(&ndev);
    if (NULL == list) {
        *rc_p = -(0 != errno ? errno : ENODEV);
        return NULL;
    }
    for (int i = 0; i < ndev && NULL != list[i]; i++) {
        const char *n = tbrdma_verbs_fn.get_device_name(list[i]);

        if (NULL != n && 0 == strcmp(n, name)) {
            ctx = tbrdma_verbs_fn.open_device(list[i]);
            *rc_p = (NULL != ctx) ? 0 : -(0 != errno ? errno : ENODEV);
            break;
        }
    }
    tbrdma_verbs_fn.free_device_list(list);
    return ctx;
}

int tbrdma_verbs_dev_open(const char *name, int port_num, int cqe, tbrdma_vdev_t **dev_p, char *err,
                          size_t errlen)
{
    tbrdma_vdev_t *dev = calloc(1, sizeof(*dev));
    int rc;

    if (NULL == dev) {
        snprintf(err, errlen, "device %s: out of memory", name);
        return -ENOMEM;
    }
    snprintf(dev->name, sizeof(dev->name), "%s", name);
    dev->port_num = port_num;
    if (tbrdma_agentlink_attached()) {
        rc = tbrdma_vagent_dev_open(name, &dev->agent, err, errlen);
        if (0 != rc) {
            goto err_free_dev;
        }
        *dev_p = dev;
        return 0;
    }
    dev->ctx = verbs_open_by_name(name, &rc);
    if (NULL == dev->ctx) {
        snprintf(err, errlen, "device %s: cannot open it: %s", name, strerror(-rc));
        goto err_free_dev;
    }
    dev->pd = tbrdma_verbs_fn.alloc_pd(dev->ctx);
    if (NULL == dev->pd) {
        rc = -(0 != errno ? errno : ENOMEM);
        snprintf(err, errlen, "device %s: ibv_alloc_pd failed: %s%s", name, strerror(-rc),
                 -ENXIO == rc ? " (the port is DOWN)" : "");
        goto err_close_ctx;
    }
    dev->cq = tbrdma_verbs_fn.create_cq(dev->ctx, cqe, NULL, NULL, 0);
    if (NULL == dev->cq) {
        rc = -(0 != errno ? errno : ENOMEM);
        snprintf(err, errlen, "device %s: ibv_create_cq of %d entries failed: %s", name, cqe,
                 strerror(-rc));
        goto err_dealloc_pd;
    }
    *dev_p = dev;
    return 0;

err_dealloc_pd:
    tbrdma_verbs_fn.dealloc_pd(dev->pd);
err_close_ctx:
    tbrdma_verbs_fn.close_device(dev->ctx);
err_free_dev:
    free(dev);
    return rc;
}

void tbrdma_verbs_dev_close(tbrdma_vdev_t *dev)
{
    if (NULL == dev) {
        return;
    }
    if (NULL != dev->agent) {
        tbrdma_vagent_dev_close(dev->agent);
        free(dev);
        return;
    }
    tbrdma_verbs_fn.destroy_cq(dev->cq);
    tbrdma_verbs_fn.dealloc_pd(dev->pd);
    tbrdma_verbs_fn.close_device(dev->ctx);
    free(dev);
}

int tbrdma_verbs_mr_reg(tbrdma_vdev_t *dev, void *addr, size_t len, tbrdma_vmr_t *mr, char *err,
                        size_t errlen)
{
    struct ibv_mr *m;

    if (NULL != dev->agent) { /* the agent's slab is its one region; a rank's memory is copied */
        mr->handle = NULL;
        mr->lkey = 0;
        return 0;
    }
    m = tbrdma_verbs_fn.reg_mr(dev->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == m) {
        int rc = 0 != errno ? errno : ENOMEM;

        snprintf(err, errlen, "device %s: ibv_reg_mr of %zu bytes failed: %s", dev->name, len,
                 strerror(rc));
        return -rc;
    }
    mr->handle = m;
    mr->lkey = m->lkey;
    return 0;
}

void tbrdma_verbs_mr_dereg(tbrdma_vmr_t *mr)
{
    struct ibv_mr *m = mr->handle;

    mr->handle = NULL; /* first: a release interrupted here is not done twice */
    mr->lkey = 0;
    if (NULL != m) {
        tbrdma_verbs_fn.dereg_mr(m);
    }
}

static int verbs_qp_init(struct ibv_qp *qp, int port_num)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = (uint8_t) port_num;
    attr.qp_access_flags = 0; /* send/receive only: Macs take 0 (perftest's patch for TN3205) */
    return tbrdma_verbs_fn.modify_qp(
        qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int tbrdma_verbs_qp_create(tbrdma_vdev_t *dev, uint32_t max_send, uint32_t max_recv,
                           tbrdma_vqp_t **qp_p, uint32_t *qpn_p, char *err, size_t errlen)
{
    struct ibv_qp_init_attr ia;
    tbrdma_vqp_t *q = calloc(1, sizeof(*q));
    int rc;

    if (NULL == q) {
        return -ENOMEM;
    }
    q->dev = dev;
    if (NULL != dev->agent) { /* its number comes with its route (tbrdma_verbs_qp_route) */
        rc = tbrdma_vagent_qp_create(dev->agent, max_recv, &q->agent);
        if (0 != rc) {
            snprintf(err, errlen, "device %s: no virtual queue pair: %s", dev->name, strerror(-rc));
            free(q);
            return rc;
        }
        *qpn_p = 0;
        *qp_p = q;
        return 0;
    }
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = dev->cq;
    ia.recv_cq = dev->cq;
    ia.qp_type = IBV_QPT_UC;
    ia.sq_sig_all = 0; /* tbrdma signals every send itself */
    ia.cap.max_send_wr = max_send;
    ia.cap.max_recv_wr = max_recv;
    ia.cap.max_send_sge = VERBS_SGE_MAX;
    ia.cap.max_recv_sge = VERBS_SGE_MAX;
    ia.cap.max_inline_data = 0;
    q->qp = tbrdma_verbs_fn.create_qp(dev->pd, &ia);
    if (NULL == q->qp) {
        rc = 0 != errno ? errno : ENOMEM;
        snprintf(err, errlen, "device %s: ibv_create_qp (UC) failed: %s%s", dev->name, strerror(rc),
                 EBUSY == rc ? " (the device's queue pairs are all taken: Apple allows 10 per "
                               "device, shared by every process of the Mac)"
                             : "");
        free(q);
        return -rc;
    }
    dev->nqps++;
    rc = verbs_qp_init(q->qp, dev->port_num);
    if (0 != rc) {
        snprintf(err, errlen, "device %s: changing queue pair 0x%x to INIT failed: %s", dev->name,
                 q->qp->qp_num, strerror(rc));
        tbrdma_verbs_qp_destroy(q);
        return -rc;
    }
    *qpn_p = q->qp->qp_num;
    *qp_p = q;
    return 0;
}

static int verbs_qp_rtr(struct ibv_qp *qp, int port_num, int sgid_index, const tbrdma_vpeer_t *peer)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = (enum ibv_mtu) peer->mtu;
    attr.dest_qp_num = peer->qpn;
    attr.rq_psn = peer->psn;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = (uint8_t) port_num;
    attr.ah_attr.grh.sgid_index = (uint8_t) sgid_index;
    attr.ah_attr.grh.hop_limit = 1; /* one cable, no router: what Macs use */
    memcpy(attr.ah_attr.grh.dgid.raw, peer->gid, sizeof(attr.ah_attr.grh.dgid.raw));
    return tbrdma_verbs_fn.modify_qp(
        qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
}

int tbrdma_verbs_qp_route(tbrdma_vqp_t *q, uint32_t conn, uint8_t chan, uint32_t *qpn_p,
                          uint32_t *psn_p)
{
    return (NULL == q->agent) ? 0 : tbrdma_vagent_qp_route(q->agent, conn, chan, qpn_p, psn_p);
}

uint32_t tbrdma_verbs_conn_id(uint32_t rnd)
{
    uint32_t conn = tbrdma_agentlink_attached() ? tbrdma_agentlink_conn(rnd) : rnd;

    return (0 != conn) ? conn : 1;
}

int tbrdma_verbs_qp_connect(tbrdma_vqp_t *q, int sgid_index, uint32_t psn,
                            const tbrdma_vpeer_t *peer, char *err, size_t errlen)
{
    struct ibv_qp_attr attr;
    int rc;

    if (NULL != q->agent) { /* the agent connects its own queue pair of the cable, once */
        return -tbrdma_vagent_qp_connect(q->agent, sgid_index, peer->qpn, peer->psn, peer->gid,
                                         peer->mtu, err, errlen);
    }
    rc = verbs_qp_rtr(q->qp, q->dev->port_num, sgid_index, peer);
    if (0 != rc) {
        snprintf(err, errlen,
                 "device %s: changing queue pair 0x%x to RTR (towards queue pair 0x%x, source GID "
                 "index %d) failed with errno %d: %s",
                 q->dev->name, q->qp->qp_num, peer->qpn, sgid_index, rc, strerror(rc));
        return -rc;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = psn;
    rc = tbrdma_verbs_fn.modify_qp(q->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
    if (0 != rc) {
        snprintf(err, errlen, "device %s: changing queue pair 0x%x to RTS failed with errno %d: %s",
                 q->dev->name, q->qp->qp_num, rc, strerror(rc));
        return -rc;
    }
    return 0;
}

void tbrdma_verbs_qp_destroy(tbrdma_vqp_t *q)
{
    if (NULL == q) {
        return;
    }
    if (NULL != q->agent) {
        tbrdma_vagent_qp_destroy(q->agent);
        free(q);
        return;
    }
    tbrdma_verbs_fn.destroy_qp(q->qp);
    q->dev->nqps--;
    free(q);
}

int tbrdma_verbs_dev_qps(const tbrdma_vdev_t *dev)
{
    return (NULL == dev) ? 0 : dev->nqps;
}

int tbrdma_verbs_post_send(tbrdma_vqp_t *q, uint64_t wr_id, const void *addr, uint32_t len,
                           uint32_t lkey)
{
    if (NULL != q->agent) {
        return tbrdma_vagent_post_send(q->agent, wr_id, addr, len);
    }
    /* every send signaled: Macs do not honour selective signaling */
    return tbrdma_verbs_send1(q->qp, wr_id, addr, len, lkey, IBV_SEND_SIGNALED);
}

int tbrdma_verbs_post_recv(tbrdma_vqp_t *q, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
    if (NULL != q->agent) {
        return tbrdma_vagent_post_recv(q->agent, wr_id, addr, len);
    }
    return tbrdma_verbs_recv1(q->qp, wr_id, addr, len, lkey);
}

#define VERBS_POLL_BATCH 32

/* Agent mode: the vport's completions, a receive's frame-rule failure as the device's. */
static int verbs_poll_agent(tbrdma_vdev_t *dev, tbrdma_vwc_t *out, int max)
{
    tbrdma_awc_t wc[VERBS_POLL_BATCH];
    int n = tbrdma_vagent_poll(dev->agent, wc, max < VERBS_POLL_BATCH ? max : VERBS_POLL_BATCH);

    for (int i = 0; i < n; i++) {
        out[i].wr_id = wc[i].wr_id;
        out[i].status = wc[i].status;
        if (wc[i].is_recv && TBRDMA_VPORT_LEN_ERR == wc[i].status) {
            out[i].status = IBV_WC_LOC_LEN_ERR;
        }
        out[i].is_recv = wc[i].is_recv;
        out[i].byte_len = wc[i].byte_len;
        out[i].qp_num = wc[i].qp_num;
    }
    return n;
}

int tbrdma_verbs_poll(tbrdma_vdev_t *dev, tbrdma_vwc_t *out, int max)
{
    struct ibv_wc wc[VERBS_POLL_BATCH];
    int n;

    if (NULL != dev->agent) {
        return verbs_poll_agent(dev, out, max);
    }
    n = ibv_poll_cq(dev->cq, max < VERBS_POLL_BATCH ? max : VERBS_POLL_BATCH, wc);

    if (n < 0) {
        return n < -1 ? n : -EIO;
    }
    for (int i = 0; i < n; i++) {
        out[i].wr_id = wc[i].wr_id;
        out[i].status = (int) wc[i].status;
        out[i].is_recv = 0 != (wc[i].opcode & IBV_WC_RECV);
        out[i].byte_len = wc[i].byte_len;
        out[i].qp_num = wc[i].qp_num;
    }
    return n;
}

int tbrdma_verbs_port_active(tbrdma_vdev_t *dev)
{
    struct ibv_port_attr attr;

    if (NULL != dev->agent) {
        return tbrdma_vagent_port_active(dev->agent);
    }
    memset(&attr, 0, sizeof(attr));
    if (0 != tbrdma_verbs_fn.query_port(dev->ctx, (uint8_t) dev->port_num, &attr)) {
        return 0;
    }
    return IBV_PORT_ACTIVE == attr.state;
}

const char *tbrdma_verbs_dev_error(const tbrdma_vdev_t *dev)
{
    return (NULL != dev && NULL != dev->agent) ? tbrdma_vagent_error() : "";
}

int tbrdma_verbs_wc_flushed(int status)
{
    return IBV_WC_WR_FLUSH_ERR == status;
}

const char *tbrdma_verbs_wc_status_str(int status)
{
    static const struct {
        int status;
        const char *name;
    } names[] = {
        {IBV_WC_SUCCESS, "success"},
        {IBV_WC_LOC_LEN_ERR, "local length error (frame count mismatch)"},
        {IBV_WC_LOC_QP_OP_ERR, "local queue pair operation error"},
        {IBV_WC_LOC_PROT_ERR, "local protection error"},
        {IBV_WC_WR_FLUSH_ERR, "flushed (queue pair in error state)"},
        {IBV_WC_REM_INV_REQ_ERR, "remote invalid request"},
        {IBV_WC_REM_OP_ERR, "remote operation error"},
        {IBV_WC_RETRY_EXC_ERR, "transport retry counter exceeded"},
        {IBV_WC_GENERAL_ERR, "general error"},
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (names[i].status == status) {
            return names[i].name;
        }
    }
    return "unknown completion status";
}
