/*
 * libtbsim control path: the exported ibv_* functions of a simulated Apple Thunderbolt RDMA
 * provider (devices, ports, GIDs, PDs, MRs, CQs, QPs and their state machine). Programs use
 * it through dlopen/dlsym (the tbrdma plugin), by linking it, or with LD_PRELOAD in front of
 * libibverbs; the data path is reached through ctx->ops (tbsim_data.c).
 *
 * Invariants: every limit Apple enforces per device is counted host-wide in the fabric's slot
 * tables (CAS on the owner pid); the port state and the GID table are derived live from the
 * paired interface in the caller's network namespace; contexts are not extended
 * (abi_compat != __VERBS_ABI_IS_EXTENDED), so the header's inline wrappers call the plain
 * exported functions below.
 */
#include "tbsim_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TBSIM_EXPORT __attribute__((visibility("default")))

#define UC_INIT_REQ (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)
#define UC_RTR_REQ  (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define UC_RTR_OPT  (IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX)
#define UC_RTS_REQ  (IBV_QP_STATE | IBV_QP_SQ_PSN)
#define UC_RTS_OPT \
    (IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE)

static struct tbsim_fabric *g_fab;
static struct tbsim_device g_devices[TBSIM_MAX_DEVS];

#ifdef TBSIM_MUTATE_NAME
/* test/sim/mutate.sh checks that a mutant library carries its name (and a normal one none) */
__attribute__((used)) static const char g_mutant_id[] = "tbsim mutant: " TBSIM_MUTATE_NAME;
#endif

uint64_t tbsim_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static struct tbsim_fabric *fabric_get(void)
{
    if (NULL == g_fab) {
        g_fab = tbsim_fabric_map();
    }
    return g_fab;
}

static int host_self(struct tbsim_fabric *fab)
{
    char name[TBSIM_NAME_LEN];

    if (0 != gethostname(name, sizeof(name))) {
        return -1;
    }
    name[sizeof(name) - 1] = '\0';
    return tbsim_host_find(fab, name);
}

/*
 * What this process last read of each port's interface, valid until the change feed
 * (tbsim_net_watch_open) reports a change in the namespace: then every entry is read again.
 * Reading an interface takes the kernel's rtnl lock, which dozens of processes starting at once
 * on a loaded host can hold for seconds; the feed is read without it. One feed per process
 * (reopened in a forked child, which must not share its parent's).
 */
struct port_seen {
    int valid;
    struct tbsim_link lk;
    struct tbsim_addrs ad;
};

static pthread_mutex_t g_port_lock = PTHREAD_MUTEX_INITIALIZER;
static struct port_seen g_port_seen[TBSIM_MAX_DEVS];
static int g_watch_fd = -1;
static pid_t g_watch_pid;

/* Drops what was seen when the feed reports a change (or is new). Holds g_port_lock. */
static void port_seen_refresh(void)
{
    pid_t pid = getpid();
    int stale;

    if (g_watch_pid != pid) {
        if (0 <= g_watch_fd) {
            close(g_watch_fd);
        }
        g_watch_fd = tbsim_net_watch_open(); /* before the reads it guards: no change missed */
        g_watch_pid = pid;
        stale = 1;
    } else {
        stale = tbsim_net_watch_changed(g_watch_fd) && !TBSIM_MUTANT(LINK_FEED_DEAF);
    }
    if (stale) {
        memset(g_port_seen, 0, sizeof(g_port_seen));
    }
}

/* The interface of dev as last seen, read again when the feed says it may have changed. */
static void port_seen_get(struct tbsim_fabric *fab, int dev, struct tbsim_link *lk,
                          struct tbsim_addrs *ad)
{
    struct port_seen *seen = &g_port_seen[dev];

    pthread_mutex_lock(&g_port_lock);
    port_seen_refresh();
    if (!seen->valid) {
        if (0 != tbsim_net_link(fab->devs[dev].ifname, &seen->lk)
            || 0 != tbsim_net_addrs(fab->devs[dev].ifname, &seen->ad)) {
            memset(seen, 0, sizeof(*seen)); /* not kept: read again next time */
        } else {
            seen->valid = 1;
        }
    }
    *lk = seen->lk;
    *ad = seen->ad;
    pthread_mutex_unlock(&g_port_lock);
}

int tbsim_port_eval(struct tbsim_fabric *fab, int dev, struct tbsim_link *link,
                    struct tbsim_addrs *addrs)
{
    struct tbsim_dev *d = &fab->devs[dev];
    struct tbsim_dev *p = &fab->devs[tbsim_dev_peer(dev)];
    struct tbsim_link lk;
    struct tbsim_addrs ad;

    port_seen_get(fab, dev, &lk, &ad);
    if (ad.has_ipv4 || !TBSIM_MUTANT(GID_STALE)) {
        atomic_store(&d->pub_ipv4, ad.has_ipv4 ? ad.ipv4 : 0);
    }
    atomic_store(&d->pub_valid, 1);
    if (NULL != link) {
        *link = lk;
    }
    if (NULL != addrs) {
        *addrs = ad;
    }
    if (TBSIM_MUTANT(CARRIER_IGNORED)) {
        lk.up = 1;
    }
    if (TBSIM_MUTANT(BRIDGE_IGNORED)) {
        lk.master = 0;
    }
    return lk.present && lk.up && 0 == lk.master && atomic_load(&fab->hosts[d->host].rdma_enabled)
           && (atomic_load(&fab->hosts[p->host].rdma_enabled) || TBSIM_MUTANT(PEER_RDMA_IGNORED));
}

/* ---- devices ---------------------------------------------------------------------------- */

static void device_fill(struct tbsim_device *tdev, struct tbsim_fabric *fab, int dev)
{
    struct ibv_device *ib = &tdev->ibv;

    memset(tdev, 0, sizeof(*tdev));
    tdev->dev = dev;
    ib->node_type = IBV_NODE_CA;
    ib->transport_type = (enum ibv_transport_type) TBSIM_LINK_LAYER;
    snprintf(ib->name, sizeof(ib->name), "rdma_%s", fab->devs[dev].ifname);
    snprintf(ib->dev_name, sizeof(ib->dev_name), "uverbs%d", dev);
    snprintf(ib->dev_path, sizeof(ib->dev_path), "/dev/infiniband/uverbs%d", dev);
    snprintf(ib->ibdev_path, sizeof(ib->ibdev_path), "/sys/class/infiniband/%s", ib->name);
}

TBSIM_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
    struct tbsim_fabric *fab = fabric_get();
    struct ibv_device **list = calloc(TBSIM_MAX_DEVS + 1, sizeof(*list));
    int host = (NULL != fab) ? host_self(fab) : -1;
    int n = 0;

    if (NULL == list) {
        errno = ENOMEM;
        return NULL;
    }
    /*
     * No fabric, a host outside the topology, or RDMA disabled on this host (rdma_ctl
     * disable: no RDMA stack): an empty device list, like a Mac without TB5.
     */
    if (host >= 0 && !atomic_load(&fab->hosts[host].rdma_enabled)
        && !TBSIM_MUTANT(RDMA_OFF_LISTS)) {
        host = -1;
    }
    for (int d = 0; host >= 0 && d < (int) (2 * fab->ncables); d++) {
        if (fab->devs[d].host == host || TBSIM_MUTANT(DEVICE_LIST_ALL)) {
            device_fill(&g_devices[d], fab, d);
            list[n++] = &g_devices[d].ibv;
        }
    }
    if (NULL != num_devices) {
        *num_devices = n;
    }
    return list;
}

TBSIM_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    free(list);
}

TBSIM_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
    return device->name;
}

static __be64 device_guid(struct tbsim_fabric *fab, int dev)
{
    struct tbsim_link lk;
    struct tbsim_addrs ad;
    uint8_t eui[8] = {0};
    __be64 guid;

    port_seen_get(fab, dev, &lk, &ad);
    if (lk.has_mac) {
        tbsim_net_eui64(lk.mac, eui);
        if (TBSIM_MUTANT(GUID_MAC)) {
            memset(eui, 0, sizeof(eui));
            memcpy(eui, lk.mac, sizeof(lk.mac));
        }
    }
    memcpy(&guid, eui, sizeof(guid));
    return guid;
}

TBSIM_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
    return device_guid(fabric_get(), ((struct tbsim_device *) device)->dev);
}

static int ops_req_notify(struct ibv_cq *cq, int solicited_only)
{
    (void) cq;
    (void) solicited_only;
    return EOPNOTSUPP; /* no completion channels: Apple's users busy-poll */
}

static int ops_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
                             struct ibv_recv_wr **bad_wr)
{
    (void) srq;
    *bad_wr = wr;
    return EOPNOTSUPP;
}

/* How often the data path re-reads the port state: TBSIM_LINK_RECHECK_MS, else 10 ms. */
static uint64_t link_recheck_ns(void)
{
    const char *env = getenv("TBSIM_LINK_RECHECK_MS");
    char *end;
    unsigned long ms;

    if (NULL == env || '\0' == env[0]) {
        return TBSIM_LINK_RECHECK_NS;
    }
    ms = strtoul(env, &end, 10);
    return ('\0' == *end && 0 < ms) ? (uint64_t) ms * 1000000ull : TBSIM_LINK_RECHECK_NS;
}

TBSIM_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    struct tbsim_fabric *fab = fabric_get();
    struct tbsim_context *ctx;

    if (NULL == fab) {
        errno = ENODEV;
        return NULL;
    }
    ctx = calloc(1, sizeof(*ctx));
    if (NULL == ctx) {
        errno = ENOMEM;
        return NULL;
    }
    ctx->fab = fab;
    ctx->dev = ((struct tbsim_device *) device)->dev;
    ctx->link_recheck_ns = link_recheck_ns();
    ctx->ibv.device = device;
    ctx->ibv.cmd_fd = -1;
    ctx->ibv.async_fd = -1;
    ctx->ibv.num_comp_vectors = 1;
    ctx->ibv.abi_compat = NULL; /* not extended: verbs.h's inlines use the plain symbols */
    ctx->ibv.ops.post_send = tbsim_post_send;
    ctx->ibv.ops.post_recv = tbsim_post_recv;
    ctx->ibv.ops.poll_cq = tbsim_poll_cq;
    ctx->ibv.ops.req_notify_cq = ops_req_notify;
    ctx->ibv.ops.post_srq_recv = ops_post_srq_recv;
    return &ctx->ibv;
}

TBSIM_EXPORT int ibv_close_device(struct ibv_context *context)
{
    free(to_tctx(context));
    return 0;
}

TBSIM_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
    struct tbsim_context *ctx = to_tctx(context);

    memset(attr, 0, sizeof(*attr));
    snprintf(attr->fw_ver, sizeof(attr->fw_ver), "tbsim-%d", TBSIM_VERSION);
    attr->node_guid = device_guid(ctx->fab, ctx->dev);
    attr->sys_image_guid = attr->node_guid;
    attr->max_mr_size = TBSIM_MSG_MAX;
    attr->page_size_cap = 4096;
    attr->vendor_id = 0x05ac; /* Apple's PCI vendor id */
    attr->max_qp = TBSIM_QP_MAX;
    attr->max_qp_wr = TBSIM_WR_CAP_MAX;
    attr->max_sge = 1;
    attr->max_cq = 256;
    attr->max_cqe = TBSIM_CQE_MAX;
    attr->max_mr = TBSIM_MR_MAX;
    attr->max_pd = 256;
    attr->max_pkeys = 1;
    attr->phys_port_cnt = 1;
    return 0;
}

/* ---- ports and GIDs --------------------------------------------------------------------- */

static int port_check(uint8_t port_num)
{
    if (1 != port_num) {
        errno = EINVAL;
        return EINVAL;
    }
    return 0;
}

TBSIM_EXPORT int(ibv_query_port)(struct ibv_context *context, uint8_t port_num,
                                 struct _compat_ibv_port_attr *compat)
{
    struct ibv_port_attr *attr = (struct ibv_port_attr *) compat;
    struct tbsim_context *ctx = to_tctx(context);
    int active;

    if (0 != port_check(port_num)) {
        return EINVAL;
    }
    active = tbsim_port_eval(ctx->fab, ctx->dev, NULL, NULL);
    memset(attr, 0, sizeof(*attr));
    attr->state = active ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
    attr->max_mtu = IBV_MTU_4096;
    attr->active_mtu = IBV_MTU_1024;
    attr->gid_tbl_len = TBSIM_GID_TBL_LEN;
    attr->max_msg_sz = TBSIM_MSG_MAX;
    attr->pkey_tbl_len = 1;
    attr->active_width = 4;            /* 8X, as Apple reports */
    attr->active_speed = 4;            /* 10 Gbps per lane */
    attr->phys_state = active ? 5 : 3; /* LinkUp : Disabled */
    attr->link_layer = TBSIM_LINK_LAYER;
    return 0;
}

TBSIM_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
                               union ibv_gid *gid)
{
    struct tbsim_context *ctx = to_tctx(context);
    uint8_t gids[TBSIM_GID_TBL_LEN][16];
    struct tbsim_link lk;
    struct tbsim_addrs ad;

    if (0 != port_check(port_num) || index < 0 || TBSIM_GID_TBL_LEN <= index) {
        errno = EINVAL;
        return -1;
    }
    tbsim_port_eval(ctx->fab, ctx->dev, &lk, &ad);
    if (TBSIM_MUTANT(GID_STALE) && !ad.has_ipv4) {
        ad.ipv4 = atomic_load(&ctx->fab->devs[ctx->dev].pub_ipv4);
        ad.has_ipv4 = 0 != ad.ipv4;
    }
    tbsim_net_gids(&lk, &ad, gids, TBSIM_GID_TBL_LEN);
    memcpy(gid->raw, gids[index], 16);
    return 0;
}

TBSIM_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
                                __be16 *pkey)
{
    (void) context;
    if (0 != port_check(port_num) || 0 != index) {
        errno = EINVAL;
        return -1;
    }
    *pkey = 0xffff;
    return 0;
}

/* ---- protection domains and memory regions ---------------------------------------------- */

TBSIM_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
    struct tbsim_context *ctx = to_tctx(context);
    struct ibv_pd *pd;

    /* Apple: ibv_open_device works on a PORT_DOWN device but ibv_alloc_pd returns NULL */
    if (!tbsim_port_eval(ctx->fab, ctx->dev, NULL, NULL) && !TBSIM_MUTANT(PD_ON_DOWN)) {
        errno = TBSIM_ERRNO_PORT_DOWN;
        return NULL;
    }
    pd = calloc(1, sizeof(*pd));
    if (NULL == pd) {
        errno = ENOMEM;
        return NULL;
    }
    pd->context = context;
    return pd;
}

TBSIM_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}

static int owner_dead(int32_t pid)
{
    return 0 != pid && 0 != kill(pid, 0) && ESRCH == errno;
}

/* Slots of owner[0..nslots) that count against pid's limit: all held ones, or its own. */
static int slots_held(_Atomic int32_t *owner, int nslots, int32_t pid, int per_process)
{
    int held = 0;

    for (int i = 0; i < nslots; i++) {
        int32_t o = atomic_load(&owner[i]);

        held += 0 != o && (!per_process || o == pid);
    }
    return held;
}

/* Raises *peak to held when held is more. */
static void peak_raise(_Atomic uint32_t *peak, int held)
{
    uint32_t seen = atomic_load(peak);

    while (seen < (uint32_t) held && !atomic_compare_exchange_weak(peak, &seen, (uint32_t) held)) {
    }
}

/*
 * Takes a free slot of owner[0..nslots) for this process, then gives it back when more than
 * limit slots are held: Apple counts a device's QPs and MRs across every process of the host.
 * Two processes racing for the last slot may both fail (harsher, never laxer). Records the most
 * slots held at once in *peak. Returns the slot or -1.
 */
static int slot_take(_Atomic int32_t *owner, int nslots, int limit, int per_process,
                     _Atomic uint32_t *peak)
{
    int32_t pid = (int32_t) getpid();
    int slot = -1;

    for (int i = 0; i < nslots && slot < 0; i++) {
        int32_t expect = 0;

        if (TBSIM_MUTANT(CRASH_RELEASE) && owner_dead(atomic_load(&owner[i]))) {
            expect = atomic_load(&owner[i]);
        }
        if (atomic_compare_exchange_strong(&owner[i], &expect, pid)) {
            slot = i;
        }
    }
    if (0 <= slot && limit < slots_held(owner, nslots, pid, per_process)) {
        atomic_store(&owner[slot], 0);
        slot = -1;
    }
    if (0 <= slot) {
        peak_raise(peak, slots_held(owner, nslots, pid, 0));
    }
    return slot;
}

static int mr_slot_take(struct tbsim_dev *d)
{
    return slot_take(d->mr_owner, TBSIM_MR_SLOTS, TBSIM_MR_MAX + TBSIM_MUTANT(MR_CAP_101), 0,
                     &d->mr_peak);
}

TBSIM_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
                                             uint64_t iova, unsigned int access)
{
    struct tbsim_context *ctx = to_tctx(pd->context);
    struct tbsim_mr *mr;
    int slot;

    (void) access; /* Apple accepts LOCAL_WRITE alone and JACCL's REMOTE_* too */
    if (NULL == addr && 0 != length) {
        errno = EINVAL;
        return NULL;
    }
    mr = calloc(1, sizeof(*mr));
    if (NULL == mr) {
        errno = ENOMEM;
        return NULL;
    }
    slot = mr_slot_take(&ctx->fab->devs[ctx->dev]);
    if (slot < 0) {
        free(mr);
        errno = ENOMEM; /* the 101st MR of a device */
        return NULL;
    }
    mr->slot = slot;
    mr->ibv.context = pd->context;
    mr->ibv.pd = pd;
    mr->ibv.addr = (void *) (uintptr_t) iova;
    mr->ibv.length = length;
    mr->ibv.lkey = (uint32_t) slot + 1;
    mr->ibv.rkey = (uint32_t) slot + 1;
    mr->pin = tbsim_pin_take(addr, length);
    ctx->mrs[slot] = mr;
    return &mr->ibv;
}

TBSIM_EXPORT struct ibv_mr *(ibv_reg_mr) (struct ibv_pd *pd, void *addr, size_t length, int access)
{
    return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t) addr, (unsigned int) access);
}

TBSIM_EXPORT struct ibv_mr *(ibv_reg_mr_iova) (struct ibv_pd *pd, void *addr, size_t length,
                                               uint64_t iova, int access)
{
    return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int) access);
}

TBSIM_EXPORT int ibv_dereg_mr(struct ibv_mr *ibmr)
{
    struct tbsim_mr *mr = (struct tbsim_mr *) ibmr;
    struct tbsim_context *ctx = to_tctx(ibmr->context);

    ctx->mrs[mr->slot] = NULL;
    tbsim_pin_drop(mr->pin);
    if (!TBSIM_MUTANT(DEREG_KEEPS_SLOT)) {
        atomic_store(&ctx->fab->devs[ctx->dev].mr_owner[mr->slot], 0);
    }
    free(mr);
    return 0;
}

/* ---- completion queues ------------------------------------------------------------------ */

TBSIM_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
                                          struct ibv_comp_channel *channel, int comp_vector)
{
    struct tbsim_cq *cq;

    (void) comp_vector;
    if (NULL != channel) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (cqe < 1 || TBSIM_CQE_MAX < cqe) {
        errno = EINVAL;
        return NULL;
    }
    cq = calloc(1, sizeof(*cq));
    if (NULL == cq) {
        goto err_nomem;
    }
    cq->ring = calloc((size_t) cqe, sizeof(struct ibv_wc));
    if (NULL == cq->ring) {
        goto err_free_cq;
    }
    cq->held = calloc((size_t) cqe, sizeof(struct ibv_wc));
    if (NULL == cq->held) {
        goto err_free_ring;
    }
    cq->held_polls = calloc((size_t) cqe, 1);
    if (NULL == cq->held_polls) {
        goto err_free_held;
    }
    cq->size = (uint32_t) cqe;
    cq->ibv.context = context;
    cq->ibv.cq_context = cq_context;
    cq->ibv.cqe = cqe;
    return &cq->ibv;

err_free_held:
    free(cq->held);
err_free_ring:
    free(cq->ring);
err_free_cq:
    free(cq);
err_nomem:
    errno = ENOMEM;
    return NULL;
}

TBSIM_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
    struct tbsim_cq *cq = to_tcq(ibcq);

    free(cq->held_polls);
    free(cq->held);
    free(cq->ring);
    free(cq);
    return 0;
}

/* ---- queue pairs: creation ---------------------------------------------------------------- */

static int qp_attr_check(const struct ibv_qp_init_attr *attr)
{
    uint32_t cap_max = TBSIM_WR_CAP_MAX + TBSIM_MUTANT(WR_CAP_4096);

    if (IBV_QPT_UC != attr->qp_type && !TBSIM_MUTANT(QP_TYPE_ANY)) {
        return EOPNOTSUPP; /* Apple: RC fails with errno 102 (EOPNOTSUPP on Darwin) */
    }
    if (NULL == attr->send_cq || NULL == attr->recv_cq || NULL != attr->srq) {
        return EINVAL;
    }
    if (cap_max < attr->cap.max_send_wr || cap_max < attr->cap.max_recv_wr) {
        return EINVAL;
    }
    if ((1 < attr->cap.max_send_sge || 1 < attr->cap.max_recv_sge) && !TBSIM_MUTANT(SGE_MULTI)) {
        return EINVAL;
    }
#ifndef TBSIM_LAX_INLINE /* only test/integration/sim/probe_sim.sh's laxer build defines it */
    if (0 < attr->cap.max_inline_data && !TBSIM_MUTANT(INLINE_OK)) {
        return EINVAL; /* no evidence Apple supports inline data: refuse it */
    }
#endif
    return 0;
}

static int qp_slot_take(struct tbsim_dev *d)
{
    return slot_take(d->qp_owner, TBSIM_QP_SLOTS, TBSIM_QP_MAX + TBSIM_MUTANT(QP_CAP_11),
                     TBSIM_MUTANT(QP_CAP_PER_PROCESS), &d->qp_peak);
}

/*
 * The outstanding WRs a queue accepts: the cap asked at create, at most 63 (Apple accepts caps
 * up to 4095 but only 63 posts; whether it honours smaller caps is unknown, so the harsher
 * choice: it does, see test/sim/README.md).
 */
static uint32_t wr_cap(uint32_t asked)
{
    uint32_t most = TBSIM_WR_MAX + TBSIM_MUTANT(WR_DEPTH_64);

    return (asked < most && !TBSIM_MUTANT(WR_CAP_IGNORED)) ? asked : most;
}

static struct tbsim_rxq *rxq_create(struct tbsim_fabric *fab, int dev, int slot, uint32_t gen,
                                    uint32_t qpn)
{
    struct tbsim_rxq *rxq;
    char path[4096];
    int fd;

    tbsim_rxq_path(fab, dev, slot, path, sizeof(path));
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        return NULL;
    }
    /* sparse: only the pages messages touch are allocated */
    if (0 != ftruncate(fd, (off_t) TBSIM_RXQ_SIZE)) {
        close(fd);
        return NULL;
    }
    rxq = mmap(NULL, TBSIM_RXQ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == rxq) {
        return NULL;
    }
    rxq->gen = gen;
    rxq->qpn = qpn;
    atomic_store(&rxq->rq_posted, 0);
    atomic_store(&rxq->tx_claimed, 0);
    atomic_store(&rxq->region_busy, 0);
    rxq->magic = TBSIM_RXQ_MAGIC;
    return rxq;
}

static int ctx_qp_add(struct tbsim_context *ctx, struct tbsim_qp *qp)
{
    for (int i = 0; i < TBSIM_CTX_QP_MAX; i++) {
        if (NULL == ctx->qps[i]) {
            ctx->qps[i] = qp;
            return 0;
        }
    }
    return -1;
}

static void qp_fill(struct tbsim_qp *qp, struct ibv_pd *pd, struct ibv_qp_init_attr *attr,
                    uint32_t qpn)
{
    qp->ibv.context = pd->context;
    qp->ibv.qp_context = attr->qp_context;
    qp->ibv.pd = pd;
    qp->ibv.send_cq = attr->send_cq;
    qp->ibv.recv_cq = attr->recv_cq;
    qp->ibv.qp_num = qpn;
    qp->ibv.state = IBV_QPS_RESET;
    qp->ibv.qp_type = IBV_QPT_UC;
    qp->sig_all = attr->sq_sig_all;
    qp->send_cap = wr_cap(attr->cap.max_send_wr);
    qp->recv_cap = wr_cap(attr->cap.max_recv_wr);
}

/*
 * A new QP's number: from a fabric-wide counter, never used twice (the default); or, with
 * TBSIM_QPN_REUSE=1 in the environment, its slot's own number (0x100 + 16 x device + slot), so a
 * destroyed QP's number comes back with the next QP that takes its slot, as hardware numbering
 * QPs by index does (whether Apple's does is not known: README, choice 21).
 */
static uint32_t qp_number(const struct tbsim_context *ctx, int slot)
{
    const char *reuse = getenv("TBSIM_QPN_REUSE");

    if (NULL != reuse && '1' == reuse[0]) {
        return 0x100u + 16u * (uint32_t) ctx->dev + (uint32_t) slot;
    }
    return atomic_fetch_add(&ctx->fab->next_qpn, 1) & 0xffffff;
}

TBSIM_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    struct tbsim_context *ctx = to_tctx(pd->context);
    struct tbsim_dev *d = &ctx->fab->devs[ctx->dev];
    struct tbsim_qp *qp;
    int rc = qp_attr_check(attr);
    uint32_t qpn;

    if (0 != rc) {
        errno = rc;
        return NULL;
    }
    qp = calloc(1, sizeof(*qp));
    if (NULL == qp) {
        errno = ENOMEM;
        return NULL;
    }
    qp->dev = ctx->dev;
    qp->slot = qp_slot_take(d);
    if (qp->slot < 0) {
        rc = EBUSY; /* Apple: the 11th QP of a device, whichever process asks */
        goto err_free_qp;
    }
    qp->gen = atomic_fetch_add(&ctx->fab->next_gen, 1);
    qpn = qp_number(ctx, qp->slot);
    qp->rxq = rxq_create(ctx->fab, ctx->dev, qp->slot, qp->gen, qpn);
    if (NULL == qp->rxq) {
        rc = errno;
        goto err_release_slot;
    }
    if (0 != ctx_qp_add(ctx, qp)) {
        rc = EBUSY;
        goto err_unmap_rxq;
    }
    qp_fill(qp, pd, attr, qpn);
    tbsim_port_eval(ctx->fab, ctx->dev, NULL, NULL); /* publish this port's address */
    atomic_store(&d->qp[qp->slot].gen, qp->gen);
    atomic_store(&d->qp[qp->slot].state, IBV_QPS_RESET);
    atomic_store(&d->qp[qp->slot].dest_qpn, 0);
    atomic_store(&d->qp[qp->slot].qpn, qpn);
    return &qp->ibv;

err_unmap_rxq:
    munmap(qp->rxq, TBSIM_RXQ_SIZE);
err_release_slot:
    atomic_store(&d->qp_owner[qp->slot], 0);
err_free_qp:
    free(qp);
    errno = rc;
    return NULL;
}

TBSIM_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
    struct tbsim_qp *qp = to_tqp(ibqp);
    struct tbsim_context *ctx = to_tctx(ibqp->context);
    struct tbsim_dev *d = &ctx->fab->devs[qp->dev];
    struct tbsim_qp_entry *e = &d->qp[qp->slot];
    char path[4096];

    for (int i = 0; i < TBSIM_CTX_QP_MAX; i++) {
        if (ctx->qps[i] == qp) {
            ctx->qps[i] = NULL;
        }
    }
    atomic_store(&e->qpn, 0);
    atomic_store(&e->state, IBV_QPS_RESET);
    tbsim_qp_unlink_peer(qp);
    munmap(qp->rxq, TBSIM_RXQ_SIZE);
    tbsim_rxq_path(ctx->fab, qp->dev, qp->slot, path, sizeof(path));
    unlink(path);
    atomic_store(&d->qp_owner[qp->slot], 0);
    free(qp);
    return 0;
}

/* ---- queue pairs: state machine --------------------------------------------------------- */

/* Whether any device of the fabric published ipv4 (the RTR_ANY_CABLE mutant's check). */
static int fabric_has_ipv4(struct tbsim_context *ctx, uint32_t ipv4)
{
    for (uint32_t d = 0; 0 != ipv4 && d < 2 * ctx->fab->ncables; d++) {
        if (ipv4 == atomic_load(&ctx->fab->devs[d].pub_ipv4)) {
            return 1;
        }
    }
    return 0;
}

/* RTR's address vector: the check that reproduces the field's "RTR failed with errno 22". */
static int rtr_check_av(struct tbsim_context *ctx, const struct ibv_ah_attr *ah)
{
    struct tbsim_dev *peer = &ctx->fab->devs[tbsim_dev_peer(ctx->dev)];
    uint8_t gids[TBSIM_GID_TBL_LEN][16];
    struct tbsim_link lk;
    struct tbsim_addrs ad;
    uint32_t dst;

    if (!ah->is_global || TBSIM_GID_TBL_LEN <= ah->grh.sgid_index) {
        return EINVAL;
    }
    tbsim_port_eval(ctx->fab, ctx->dev, &lk, &ad);
    tbsim_net_gids(&lk, &ad, gids, TBSIM_GID_TBL_LEN);
    if (0 == tbsim_net_gid_ipv4(gids[ah->grh.sgid_index]) && !TBSIM_MUTANT(RTR_SGID_ANY)) {
        return EINVAL; /* the source GID index holds no IPv4-mapped GID */
    }
    dst = tbsim_net_gid_ipv4(ah->grh.dgid.raw);
    if (TBSIM_MUTANT(RTR_DGID_ANY) || (TBSIM_MUTANT(RTR_ANY_CABLE) && fabric_has_ipv4(ctx, dst))) {
        return 0;
    }
    if (0 == dst || !atomic_load(&peer->pub_valid) || dst != atomic_load(&peer->pub_ipv4)) {
        return EINVAL; /* not the address on the other end of this port's cable */
    }
    return 0;
}

static int qp_to_rtr(struct tbsim_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    struct tbsim_context *ctx = to_tctx(qp->ibv.context);
    struct tbsim_qp_entry *e = &ctx->fab->devs[qp->dev].qp[qp->slot];
    int rc;

    if (IBV_QPS_INIT != qp->ibv.state) {
        return EINVAL;
    }
    if ((UC_RTR_REQ != (mask & UC_RTR_REQ) || 0 != (mask & ~(UC_RTR_REQ | UC_RTR_OPT)))
        && !TBSIM_MUTANT(RTR_MASK_ANY)) {
        return EINVAL;
    }
    if ((attr->path_mtu < IBV_MTU_256 || IBV_MTU_4096 < attr->path_mtu)
        && !TBSIM_MUTANT(RTR_MTU_ANY)) {
        return EINVAL;
    }
    rc = rtr_check_av(ctx, &attr->ah_attr);
    if (0 != rc) {
        return rc;
    }
    qp->dest_qpn = attr->dest_qp_num & 0xffffff;
    atomic_store(&e->dest_qpn, qp->dest_qpn);
    atomic_store(&e->state, IBV_QPS_RTR);
    return 0;
}

static int qp_transition(struct tbsim_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    enum ibv_qp_state cur = qp->ibv.state;

    switch (attr->qp_state) {
    case IBV_QPS_RESET:
    case IBV_QPS_ERR:
        return 0;
    case IBV_QPS_INIT:
        if (IBV_QPS_RESET != cur || UC_INIT_REQ != mask || 1 != attr->port_num) {
            return EINVAL;
        }
        return 0;
    case IBV_QPS_RTR:
        return qp_to_rtr(qp, attr, mask);
    case IBV_QPS_RTS:
        if (TBSIM_MUTANT(RTS_FROM_INIT) && IBV_QPS_INIT == cur) {
            return 0;
        }
        if (IBV_QPS_RTR != cur || UC_RTS_REQ != (mask & UC_RTS_REQ)
            || 0 != (mask & ~(UC_RTS_REQ | UC_RTS_OPT))) {
            return EINVAL;
        }
        return 0;
    default:
        return EINVAL;
    }
}

static void qp_reset(struct tbsim_qp *qp)
{
    tbsim_qp_unlink_peer(qp);
    qp->sq_posted = qp->sq_sent = qp->sq_retired = 0;
    qp->rq_posted = qp->rq_done = qp->rq_copied = 0;
    atomic_store(&qp->rxq->rq_posted, 0);
    atomic_store(&qp->rxq->tx_claimed, 0);
    atomic_store(&qp->rxq->region_busy, 0);
    for (int i = 0; i < TBSIM_RING; i++) {
        atomic_store(&qp->rxq->slot[i].seq, 0);
    }
}

TBSIM_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
    struct tbsim_qp *qp = to_tqp(ibqp);
    struct tbsim_context *ctx = to_tctx(ibqp->context);
    struct tbsim_qp_entry *e = &ctx->fab->devs[qp->dev].qp[qp->slot];
    int rc;

    if (0 == (attr_mask & IBV_QP_STATE)) {
        errno = EINVAL;
        return EINVAL;
    }
    rc = qp_transition(qp, attr, attr_mask);
    if (0 != rc) {
        errno = rc;
        return rc;
    }
    if (IBV_QPS_RESET == attr->qp_state) {
        qp_reset(qp);
    }
    ibqp->state = attr->qp_state;
    atomic_store(&e->state, attr->qp_state);
    return 0;
}

TBSIM_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
                              struct ibv_qp_init_attr *init_attr)
{
    struct tbsim_qp *qp = to_tqp(ibqp);

    (void) attr_mask;
    memset(attr, 0, sizeof(*attr));
    attr->qp_state = ibqp->state;
    attr->cur_qp_state = ibqp->state;
    attr->path_mtu = IBV_MTU_1024;
    attr->dest_qp_num = qp->dest_qpn;
    attr->port_num = 1;
    /* the caps posting really accepts: the ones asked at create, at most 63 */
    attr->cap.max_send_wr = qp->send_cap;
    attr->cap.max_recv_wr = qp->recv_cap;
    attr->cap.max_send_sge = 1;
    attr->cap.max_recv_sge = 1;
    if (NULL != init_attr) {
        memset(init_attr, 0, sizeof(*init_attr));
        init_attr->send_cq = ibqp->send_cq;
        init_attr->recv_cq = ibqp->recv_cq;
        init_attr->qp_type = IBV_QPT_UC;
        init_attr->sq_sig_all = qp->sig_all;
        init_attr->cap = attr->cap;
    }
    return 0;
}
