/*
 * tbrdma devices: one per cable end this process uses (see btl_tbrdma_device.h). The whole memory
 * of a device is one page-aligned slab registered as a single memory region, so a process costs
 * Apple's ~100 regions per device exactly one, whatever the number of peers; the slab is carved
 * into receive frames (per endpoint, per channel), send pools and control frames.
 */
#include "fabric/btl_tbrdma_device.h"
#include "base/btl_tbrdma_output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEVICE_ALIGN       4096
#define DEVICE_CTRL_BASE   16 /* control frames per device, plus DEVICE_CTRL_PER_EP per endpoint */
#define DEVICE_CTRL_PER_EP 8

/* Frame counts and sizes of a device for neps endpoints. */
typedef struct device_layout {
    size_t bulk_bytes;
    int nrecv_eager, nrecv_bulk; /* all endpoints together */
    int nsend_eager, nsend_bulk, nctrl, nprobe;
    size_t bytes;
} device_layout_t;

static void device_plan(int neps, device_layout_t *l)
{
    const mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;

    l->bulk_bytes = (size_t) c->bulk_frames * TBRDMA_FRAME_BYTES;
    l->nrecv_eager = neps * c->eager_depth;
    l->nrecv_bulk = neps * c->bulk_depth;
    l->nsend_eager = c->send_frames;
    l->nsend_bulk = c->bulk_send_frames;
    l->nctrl = DEVICE_CTRL_BASE + DEVICE_CTRL_PER_EP * neps;
    l->nprobe = neps;
    l->bytes = (size_t) (l->nrecv_eager + l->nsend_eager) * TBRDMA_FRAME_BYTES
               + (size_t) (l->nrecv_bulk + l->nsend_bulk + l->nprobe) * l->bulk_bytes
               + (size_t) l->nctrl * TBRDMA_CTRL_BYTES;
    l->bytes = (l->bytes + DEVICE_ALIGN - 1) / DEVICE_ALIGN * DEVICE_ALIGN;
}

/* Carves `count` frames of `bytes` each from *cursor into dev->frags[*next...]. */
static void device_carve(mca_btl_tbrdma_device_t *dev, int *next, uint8_t **cursor, int count,
                         size_t bytes, uint8_t kind, uint8_t chan, int pool)
{
    for (int i = 0; i < count; i++) {
        mca_btl_tbrdma_frag_t *f = &dev->frags[(*next)++];

        OBJ_CONSTRUCT(&f->base, mca_btl_base_descriptor_t);
        f->pools = &dev->pools;
        f->buf = *cursor;
        f->cap = (uint32_t) (bytes - TBRDMA_HDR_BYTES);
        f->kind = kind;
        f->chan = chan;
        atomic_init(&f->refs, 0);
        *cursor += bytes;
        if (0 <= pool) {
            mca_btl_tbrdma_frag_pool_add(&dev->pools, pool, f);
        }
    }
}

/* The frames: receives first (taken per channel in order), then the pools. */
static void device_carve_all(mca_btl_tbrdma_device_t *dev, const device_layout_t *l, int neps)
{
    const mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    uint8_t *cursor = dev->slab;
    int next = 0;

    for (int e = 0; e < neps; e++) {
        device_carve(dev, &next, &cursor, c->eager_depth, TBRDMA_FRAME_BYTES, TBRDMA_FRAG_RECV,
                     TBRDMA_CHAN_EAGER, -1);
        device_carve(dev, &next, &cursor, c->bulk_depth, l->bulk_bytes, TBRDMA_FRAG_RECV,
                     TBRDMA_CHAN_BULK, -1);
    }
    device_carve(dev, &next, &cursor, l->nsend_eager, TBRDMA_FRAME_BYTES, TBRDMA_FRAG_SEND,
                 TBRDMA_CHAN_EAGER, TBRDMA_POOL_EAGER);
    device_carve(dev, &next, &cursor, l->nsend_bulk, l->bulk_bytes, TBRDMA_FRAG_SEND,
                 TBRDMA_CHAN_BULK, TBRDMA_POOL_BULK);
    device_carve(dev, &next, &cursor, l->nprobe, l->bulk_bytes, TBRDMA_FRAG_CTRL, TBRDMA_CHAN_BULK,
                 TBRDMA_POOL_PROBE);
    device_carve(dev, &next, &cursor, l->nctrl, TBRDMA_CTRL_BYTES, TBRDMA_FRAG_CTRL,
                 TBRDMA_CHAN_EAGER, TBRDMA_POOL_CTRL);
    dev->recv_next = dev->frags;
}

static int device_alloc(mca_btl_tbrdma_device_t *dev, const device_layout_t *l, char *err,
                        size_t errlen)
{
    void *slab = NULL;

    dev->nfrags =
        l->nrecv_eager + l->nrecv_bulk + l->nsend_eager + l->nsend_bulk + l->nctrl + l->nprobe;
    dev->frags = calloc((size_t) dev->nfrags, sizeof(*dev->frags));
    if (NULL == dev->frags || 0 != posix_memalign(&slab, DEVICE_ALIGN, l->bytes)) {
        snprintf(err, errlen, "out of memory for %zu bytes of frames", l->bytes);
        return -ENOMEM;
    }
    memset(slab, 0, l->bytes);
    dev->slab = slab;
    dev->slab_bytes = l->bytes;
    return 0;
}

mca_btl_tbrdma_device_t *mca_btl_tbrdma_device_create(mca_btl_tbrdma_module_t *module, int port,
                                                      int neps, int extra_cqe, char *err,
                                                      size_t errlen)
{
    const mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    mca_btl_tbrdma_device_t *dev = calloc(1, sizeof(*dev));
    const tbrdma_port_info_t *p = &module->ports[port];
    device_layout_t l;
    int cqe;

    if (NULL == dev) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    OBJ_CONSTRUCT(&dev->pools.lock, opal_mutex_t);
    dev->port = port;
    dev->neps = neps;
    device_plan(neps, &l);
    if (0 != device_alloc(dev, &l, err, errlen)) {
        goto err_free;
    }
    cqe = neps * TBRDMA_NCHAN * TBRDMA_WR_MAX + l.nrecv_eager + l.nrecv_bulk + l.nctrl + l.nprobe
          + extra_cqe;
    if (0 != tbrdma_verbs_dev_open(p->device, p->port_num, cqe, &dev->vdev, err, errlen)) {
        goto err_free;
    }
    if (0 != tbrdma_verbs_mr_reg(dev->vdev, dev->slab, dev->slab_bytes, &dev->mr, err, errlen)) {
        goto err_release;
    }
    device_carve_all(dev, &l, neps);
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE,
                   "device %s: %d endpoints, %zu bytes in 1 memory region, %d frames, %d-entry "
                   "completion queue (%d-frame bulk messages, 1-frame depth %d, bulk depth %d)",
                   p->device, neps, dev->slab_bytes, dev->nfrags, cqe, c->bulk_frames,
                   c->eager_depth, c->bulk_depth);
    return dev;

err_release:
    mca_btl_tbrdma_device_release(dev);
err_free:
    mca_btl_tbrdma_device_free(dev);
    return NULL;
}

void mca_btl_tbrdma_device_release(mca_btl_tbrdma_device_t *dev)
{
    tbrdma_vdev_t *vdev = (NULL != dev) ? dev->vdev : NULL;

    if (NULL == dev) {
        return;
    }
    tbrdma_verbs_mr_dereg(&dev->mr);
    dev->vdev = NULL; /* first: a release interrupted here is not done twice */
    tbrdma_verbs_dev_close(vdev);
}

void mca_btl_tbrdma_device_free(mca_btl_tbrdma_device_t *dev)
{
    if (NULL == dev) {
        return;
    }
    for (int i = 0; NULL != dev->frags && i < dev->nfrags; i++) {
        if (NULL != dev->frags[i].pools) {
            OBJ_DESTRUCT(&dev->frags[i].base);
        }
    }
    mca_btl_tbrdma_frag_heap_free(&dev->pools); /* one still lent is counted by frames_out */
    free(dev->frags);
    free(dev->slab);
    OBJ_DESTRUCT(&dev->pools.lock);
    free(dev);
}

mca_btl_tbrdma_frag_t *mca_btl_tbrdma_device_take_recv(mca_btl_tbrdma_device_t *dev, int count,
                                                       uint8_t chan)
{
    mca_btl_tbrdma_frag_t *first = dev->recv_next;

    if (first + count > dev->frags + dev->nfrags || TBRDMA_FRAG_RECV != first->kind
        || chan != first->chan) {
        return NULL;
    }
    dev->recv_next += count;
    return first;
}

int mca_btl_tbrdma_device_frames_out(mca_btl_tbrdma_device_t *dev)
{
    int out = 0;

    for (int i = 0; i < dev->nfrags; i++) {
        out += (TBRDMA_FRAG_RECV != dev->frags[i].kind) ? 1 : 0;
    }
    for (int p = 0; p < TBRDMA_POOLS; p++) {
        for (mca_btl_tbrdma_frag_t *f = dev->pools.free[p]; NULL != f; f = f->next) {
            out--;
        }
    }
    return out + dev->pools.heap_frames - dev->pools.heap_kept; /* and the heap frames lent */
}
