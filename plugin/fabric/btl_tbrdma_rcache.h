/*
 * Registrations of user memory for zero-copy (fabric layer, btl_tbrdma_rcache.c): a device's
 * registration cache, the memory region budget, registering (btl_tbrdma_zcopy.c decides when)
 * and ob1's deregister_mem, and the
 * owner's check of a peer's grant.
 */
#ifndef BTL_TBRDMA_RCACHE_H
#define BTL_TBRDMA_RCACHE_H

#include "fabric/btl_tbrdma_device.h"

#include "opal/mca/rcache/rcache.h"

#include <pthread.h>

/*
 * What ob1 copies onto the wire for a registration: the owner checks every grant against its
 * own list of registrations (cookie), never trusting the address alone.
 */
struct mca_btl_base_registration_handle_t {
    uint64_t cookie; /* the registration in the registering process */
    uint64_t base;   /* first byte registered */
    uint64_t bound;  /* last byte registered */
};

/* One registration of user memory: grdma's record, the memory region, the device's list. */
typedef struct mca_btl_tbrdma_reg_t {
    mca_rcache_base_registration_t base; /* first: grdma allocates and caches these */
    struct mca_btl_tbrdma_reg_t *prev, *next;
    struct mca_btl_tbrdma_device_t *dev;
    tbrdma_vmr_t mr; /* zeroed once released (finalize, peer loss, signal) */
    mca_btl_base_registration_handle_t handle;
} mca_btl_tbrdma_reg_t;

/* Counters of a device's registrations (under its lock). */
typedef struct mca_btl_tbrdma_reg_stats_t {
    uint64_t made;        /* memory regions registered */
    uint64_t dropped;     /* deregistered by grdma (evicted, invalidated, unused) */
    uint64_t refused;     /* register_mem calls that gave ob1 NULL (it copied) */
    uint64_t over_budget; /* times btl_tbrdma_zcopy_max_regs was reached (grdma evicts) */
    uint64_t failed;      /* memory regions the device refused */
} mca_btl_tbrdma_reg_stats_t;

/* A device's registrations. */
typedef struct mca_btl_tbrdma_rcache_t {
    mca_rcache_base_module_t *rcache;
    pthread_mutex_t lock; /* the list: application threads register, the token holder checks */
    mca_btl_tbrdma_reg_t *live;
    int nregs;
    int at_release; /* memory regions still registered when verbs were released */
    bool released;  /* the device's verbs resources are gone: registering fails */
    mca_btl_tbrdma_reg_stats_t stats;
} mca_btl_tbrdma_rcache_t;

/* The device's registration cache (at creation, single-threaded); 0 or -1 (zero-copy off). */
int mca_btl_tbrdma_rcache_init(mca_btl_tbrdma_device_t *dev);

/* Deregisters every memory region of the device (verbs release); the records stay for ob1. */
void mca_btl_tbrdma_rcache_release(mca_btl_tbrdma_device_t *dev);

/* Destroys the cache (finalize, after ob1 returned its handles). */
void mca_btl_tbrdma_rcache_fini(mca_btl_tbrdma_device_t *dev);

/* A registration of [base, base+size) on dev (one kind fits all: receives need local write only,
 * sends nothing), or NULL (counted; ob1 copies). */
mca_btl_base_registration_handle_t *mca_btl_tbrdma_rcache_register(mca_btl_tbrdma_device_t *dev,
                                                                   void *base, size_t size);

/* ob1's deregister_mem. */
int mca_btl_tbrdma_deregister_mem(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_registration_handle_t *handle);

/* The local key of [addr, addr+len) in the registration key of dev, or -1 (owner's check). */
int mca_btl_tbrdma_rcache_lookup(mca_btl_tbrdma_device_t *dev, uint64_t key, uint64_t addr,
                                 uint32_t len, uint32_t *lkey_p);

#endif /* BTL_TBRDMA_RCACHE_H */
