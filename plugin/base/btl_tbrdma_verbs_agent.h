/*
 * The verbs backend's second half for agent mode (docs/design.md, "Wire header and routing: the
 * agent as a UC switch"): while the process is attached to its Mac's agent
 * (btl_tbrdma_agentlink.h), a device is one of the agent's cables and a queue pair is virtual,
 * kept by the rank's vport (core/tbrdma_vport.h) under UC's rules. base/btl_tbrdma_verbs.c
 * dispatches here; nothing else calls these. Opal-free, verbs-free.
 */
#ifndef BTL_TBRDMA_VERBS_AGENT_H
#define BTL_TBRDMA_VERBS_AGENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct tbrdma_adev tbrdma_adev_t;
typedef struct tbrdma_aqp tbrdma_aqp_t;

/* One completion as the vport gives it: status 0, TBRDMA_VPORT_LEN_ERR (a receive), or a send's
 * status from the agent (the real completion's, or 1: the cable was not connected). */
typedef struct tbrdma_awc {
    uint64_t wr_id;
    int status;
    int is_recv;
    uint32_t byte_len;
    uint32_t qp_num; /* the agent's queue pair of the virtual queue pair's channel */
} tbrdma_awc_t;

/* The agent's cable of device name. 0 or -ENODEV / -ENOMEM with err. */
int tbrdma_vagent_dev_open(const char *name, tbrdma_adev_t **dev_p, char *err, size_t errlen);
void tbrdma_vagent_dev_close(tbrdma_adev_t *dev);

/* A virtual queue pair of at most max_recv posted receives; routed (and usable) once
 * tbrdma_vagent_qp_route has named its connection id and channel. */
int tbrdma_vagent_qp_create(tbrdma_adev_t *dev, uint32_t max_recv, tbrdma_aqp_t **qp_p);
int tbrdma_vagent_qp_route(tbrdma_aqp_t *qp, uint32_t conn, uint8_t chan, uint32_t *qpn_p,
                           uint32_t *psn_p);
void tbrdma_vagent_qp_destroy(tbrdma_aqp_t *qp);

/* Records channel chan's peer queue pair; once both channels of the cable's peer are known, has
 * the agent connect the cable (tbrdma_agentlink_connect). 0 or an errno with err. */
int tbrdma_vagent_qp_connect(tbrdma_aqp_t *qp, int sgid_index, uint32_t peer_qpn, uint32_t peer_psn,
                             const uint8_t gid[16], int mtu, char *err, size_t errlen);

/* As tbrdma_verbs_post_send / post_recv / poll: 0 or a positive errno; completions or a
 * negative errno (-EPIPE: the agent stopped). */
int tbrdma_vagent_post_send(tbrdma_aqp_t *qp, uint64_t wr_id, const void *addr, uint32_t len);
int tbrdma_vagent_post_recv(tbrdma_aqp_t *qp, uint64_t wr_id, void *addr, uint32_t len);
int tbrdma_vagent_poll(tbrdma_adev_t *dev, tbrdma_awc_t *wc, int max);

/* 1 when the cable's port is ACTIVE as the agent sees it. */
int tbrdma_vagent_port_active(const tbrdma_adev_t *dev);

/* Why the last poll failed (the agent's state), "" when it did not. */
const char *tbrdma_vagent_error(void);

#endif /* BTL_TBRDMA_VERBS_AGENT_H */
