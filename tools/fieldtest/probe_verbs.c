/*
 * Plain verbs for the probes, through the plugin's loader (tbrdma_verbs_fn): choosing and
 * opening the port, UC queue pairs taken through INIT/RTR/RTS as Apple's sample does, posting
 * and bounded polling. The probes vary one attribute at a time around these defaults.
 */
#include "probe.h"

#include "base/btl_tbrdma_netif.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The first usable port (or the one named), discovered as tbrdma-info sees it. */
static int pv_pick(probe_env_t *env, const tbrdma_port_info_t *ports, int n, char *err,
                   size_t errlen)
{
    for (int i = 0; i < n; i++) {
        const tbrdma_port_info_t *p = &ports[i];

        if (NULL != env->device ? 0 == strcmp(env->device, p->device)
                                : (TBRDMA_PORT_STATE_ACTIVE == p->state && p->gid_index >= 0)) {
            env->port = *p;
            return 0;
        }
    }
    snprintf(err, errlen, "host %s: %s", env->host,
             NULL != env->device ? "no such RDMA device (see tbrdma-info)"
                                 : "no ACTIVE port with an IPv4-mapped GID (see tbrdma-info)");
    return -1;
}

/* 1 when addr (host order) lies in p's IPv4 subnet. */
static int pv_same_subnet(const tbrdma_port_info_t *p, uint32_t addr)
{
    uint32_t mask = (0 == p->prefix) ? 0 : 0xffffffffu << (32 - p->prefix);

    return p->has_ipv4 && (p->ipv4 & mask) == (addr & mask);
}

int pv_choose_port(probe_env_t *env, const tbrdma_port_info_t *peers, int npeers, char *err,
                   size_t errlen)
{
    tbrdma_port_info_t ports[TBRDMA_MAX_PORTS];
    int n = 0;

    if (0 != tbrdma_verbs_discover(ports, TBRDMA_MAX_PORTS, &n, err, errlen)) {
        return -1;
    }
    if (NULL == peers) {
        return pv_pick(env, ports, n, err, errlen);
    }
    /* pair mode: a local port and a peer port on one cable (same IPv4 subnet) */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < npeers; j++) {
            if ((NULL != env->device && 0 != strcmp(env->device, ports[i].device))
                || (NULL != env->peer_device && 0 != strcmp(env->peer_device, peers[j].device))
                || ports[i].gid_index < 0 || !pv_same_subnet(&ports[i], peers[j].ipv4)) {
                continue;
            }
            env->port = ports[i];
            env->peer_port = peers[j];
            return 0;
        }
    }
    snprintf(err, errlen,
             "host %s: no local port shares an IPv4 subnet with a port of %s (name them with "
             "--device and --peer-device)",
             env->host, env->peer_name);
    return -1;
}

int pv_open(probe_env_t *env, char *err, size_t errlen)
{
    struct ibv_device **list;
    int ndev = 0;

    list = tbrdma_verbs_fn.get_device_list(&ndev);
    if (NULL == list) {
        snprintf(err, errlen, "host %s: cannot list RDMA devices", env->host);
        return -1;
    }
    for (int i = 0; i < ndev && NULL == env->ctx; i++) {
        const char *name = tbrdma_verbs_fn.get_device_name(list[i]);

        if (NULL != name && 0 == strcmp(name, env->port.device)) {
            env->ctx = tbrdma_verbs_fn.open_device(list[i]);
        }
    }
    tbrdma_verbs_fn.free_device_list(list);
    if (NULL == env->ctx) {
        snprintf(err, errlen, "device %s: cannot open it", env->port.device);
        return -1;
    }
    return 0;
}

void pv_close(probe_env_t *env)
{
    res_release_all();
    if (NULL != env->ctx) {
        tbrdma_verbs_fn.close_device(env->ctx);
    }
    env->ctx = NULL;
}

struct ibv_qp *pv_uc_qp(probe_env_t *env, struct ibv_pd *pd, struct ibv_cq *cq, int depth)
{
    struct ibv_qp_init_attr ia;

    (void) env;
    memset(&ia, 0, sizeof(ia));
    ia.send_cq = cq;
    ia.recv_cq = cq;
    ia.qp_type = IBV_QPT_UC;
    ia.cap.max_send_wr = (uint32_t) depth;
    ia.cap.max_recv_wr = (uint32_t) depth;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    return res_qp(pd, &ia);
}

int pv_init(struct ibv_qp *qp, int access)
{
    struct ibv_qp_attr attr;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = 1;
    attr.qp_access_flags = (unsigned) access;
    return tbrdma_verbs_fn.modify_qp(
        qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int pv_connect(probe_env_t *env, struct ibv_qp *qp, uint32_t qpn, const uint8_t gid[16], int mtu,
               int hop_limit)
{
    struct ibv_qp_attr attr;
    int rc;

    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = (enum ibv_mtu) mtu;
    attr.dest_qp_num = qpn;
    attr.rq_psn = PROBE_PSN;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = 1;
    attr.ah_attr.grh.hop_limit = (uint8_t) hop_limit;
    attr.ah_attr.grh.sgid_index = (uint8_t) env->port.gid_index;
    memcpy(attr.ah_attr.grh.dgid.raw, gid, 16);
    rc = tbrdma_verbs_fn.modify_qp(
        qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
    if (0 != rc) {
        return rc;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = PROBE_PSN;
    return tbrdma_verbs_fn.modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int pv_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id,
            int flags)
{
    return tbrdma_verbs_send1(qp, wr_id, buf, len, mr->lkey, (unsigned) flags);
}

int pv_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint32_t len, uint64_t wr_id)
{
    return tbrdma_verbs_recv1(qp, wr_id, buf, len, mr->lkey);
}

int pv_wait(struct ibv_cq *cq, struct ibv_wc *wc, double deadline)
{
    for (unsigned spins = 1;; spins++) {
        int n = ibv_poll_cq(cq, 1, wc);

        if (n < 0) {
            return -1;
        }
        if (1 == n) {
            return 1;
        }
        if (0 == (spins & 0x3ff)) {
            if (guard_stopped()) {
                return -2;
            }
            if (guard_now() > deadline) {
                return 0;
            }
        }
    }
}

const char *pv_errstr(int err, char *buf, size_t len)
{
    snprintf(buf, len, "errno %d (%s)", err, strerror(err));
    return buf;
}

const char *pv_wc_str(int status)
{
    switch (status) {
    case IBV_WC_SUCCESS:
        return "success";
    case IBV_WC_LOC_LEN_ERR:
        return "IBV_WC_LOC_LEN_ERR";
    case IBV_WC_LOC_QP_OP_ERR:
        return "IBV_WC_LOC_QP_OP_ERR";
    case IBV_WC_LOC_PROT_ERR:
        return "IBV_WC_LOC_PROT_ERR";
    case IBV_WC_WR_FLUSH_ERR:
        return "IBV_WC_WR_FLUSH_ERR";
    case IBV_WC_REM_INV_REQ_ERR:
        return "IBV_WC_REM_INV_REQ_ERR";
    case IBV_WC_RETRY_EXC_ERR:
        return "IBV_WC_RETRY_EXC_ERR";
    case IBV_WC_GENERAL_ERR:
        return "IBV_WC_GENERAL_ERR";
    default:
        return "another error status";
    }
}
