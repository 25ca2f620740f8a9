/*
 * tbrdma devices (fabric layer). A device (mca_btl_tbrdma_device_t) is one cable end this process
 * uses: the verbs device, one slab of page-aligned memory registered as ONE memory region (Apple
 * allows about 100 per device, shared by every process of the Mac), carved into
 *   - per endpoint: eager_depth 1-frame receives and bulk_depth bulk receives,
 *   - send_frames 1-frame send frames and bulk_send_frames bulk send frames (shared pools),
 *   - control frames (header only), and one bulk-sized control frame per endpoint for the bulk
 *     channel's credit probes (core/tbrdma_rel.h: a header padded to the bulk frame count).
 */
#ifndef BTL_TBRDMA_DEVICE_H
#define BTL_TBRDMA_DEVICE_H

#include "base/btl_tbrdma_verbs.h"
#include "btl_tbrdma.h"
#include "fabric/btl_tbrdma_frag.h"

typedef struct mca_btl_tbrdma_device_t {
    int port;            /* index in module->local.ports */
    tbrdma_vdev_t *vdev; /* NULL once released */
    tbrdma_vmr_t mr;     /* the one memory region of the slab */
    uint8_t *slab;
    size_t slab_bytes;
    mca_btl_tbrdma_frag_t *frags; /* every frame of the device */
    int nfrags;
    mca_btl_tbrdma_frag_t *recv_next; /* receive frames not yet given to an endpoint */
    mca_btl_tbrdma_pools_t pools;     /* free send and control frames */
    int neps;                         /* endpoints on this device */
    uint64_t port_checked_ns;         /* last look at the port state (failure diagnosis) */
    int cq_backlog; /* the last poll filled its batch: completions may still wait */
    struct mca_btl_tbrdma_rcache_t *zc; /* registrations of user memory (zero-copy), or NULL */
} mca_btl_tbrdma_device_t;

/*
 * Opens local port `port` for neps endpoints: the verbs device, its completion queue (with
 * extra_cqe entries for the layers above: zero-copy's queue pairs), the slab, its memory region
 * and every frame. Returns the device, or NULL with err set.
 */
mca_btl_tbrdma_device_t *mca_btl_tbrdma_device_create(mca_btl_tbrdma_module_t *module, int port,
                                                      int neps, int extra_cqe, char *err,
                                                      size_t errlen);

/* Deregisters the slab and closes the verbs device (queue pairs and the registrations of user
 * memory, btl_tbrdma_rcache.h, must be gone). Idempotent. */
void mca_btl_tbrdma_device_release(mca_btl_tbrdma_device_t *dev);

/* Frees what release left: the slab and the frames (the registration cache must be gone). */
void mca_btl_tbrdma_device_free(mca_btl_tbrdma_device_t *dev);

/* Takes count consecutive receive frames of the device for one channel. */
mca_btl_tbrdma_frag_t *mca_btl_tbrdma_device_take_recv(mca_btl_tbrdma_device_t *dev, int count,
                                                       uint8_t chan);

/* Send and control frames of dev not in their pools (finalize: a leak when not 0). */
int mca_btl_tbrdma_device_frames_out(mca_btl_tbrdma_device_t *dev);

#endif /* BTL_TBRDMA_DEVICE_H */
