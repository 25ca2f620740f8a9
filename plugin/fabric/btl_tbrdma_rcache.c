/*
 * Registrations of user memory for zero-copy gets, through Open MPI's registration cache
 * framework: one rcache grdma module per device (its own protection domain), created with
 * mca_rcache_base_module_create, which also installs Open MPI's memory hooks so that memory the
 * application frees is invalidated (grdma drops the stale registration before the next one).
 * grdma keeps unused registrations in a least-recently-used list; this file counts the memory
 * regions of each device and refuses a new one past btl_tbrdma_zcopy_max_regs, which makes
 * grdma evict the least recently used one and try again (Apple allows about 100 memory regions
 * per device, shared by every process of the Mac). A registration that fails is no error: ob1
 * gets NULL and copies the message.
 *
 * The device's list of live registrations is what a data owner checks a peer's grant against
 * (the cookie in ob1's handle names one of them; the range must lie inside it), and what a
 * release deregisters when verbs go away (peer loss, finalize, signal) while ob1 still holds
 * handles: the records stay, their memory regions are gone.
 */
#include "fabric/btl_tbrdma_rcache.h"
#include "base/btl_tbrdma_output.h"
#include "core/tbrdma_mutate.h"

#include "opal/mca/rcache/base/base.h"
#include "opal/memoryhooks/memory.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define RCACHE_LOCK_YIELDS 20000 /* how long a release (perhaps in a signal handler) waits */

static mca_btl_tbrdma_module_t *rcache_module(void)
{
    return mca_btl_tbrdma_component.module;
}

static void rcache_link(mca_btl_tbrdma_rcache_t *rc, mca_btl_tbrdma_reg_t *r)
{
    r->prev = NULL;
    r->next = rc->live;
    if (NULL != rc->live) {
        rc->live->prev = r;
    }
    rc->live = r;
    rc->nregs++;
}

static void rcache_unlink(mca_btl_tbrdma_rcache_t *rc, mca_btl_tbrdma_reg_t *r)
{
    if (NULL != r->prev) {
        r->prev->next = r->next;
    } else {
        rc->live = r->next;
    }
    if (NULL != r->next) {
        r->next->prev = r->prev;
    }
    r->prev = r->next = NULL;
    rc->nregs--;
}

/*
 * grdma's register callback: one memory region of [base, base+size) on the device.
 * OPAL_ERR_OUT_OF_RESOURCE (budget reached, or the device refused) makes grdma evict an
 * unused registration and call again; it gives up when none is left.
 */
static int rcache_reg_mem(void *reg_data, void *base, size_t size,
                          mca_rcache_base_registration_t *reg)
{
    mca_btl_tbrdma_device_t *dev = reg_data;
    mca_btl_tbrdma_rcache_t *rc = dev->zc;
    mca_btl_tbrdma_reg_t *r = (mca_btl_tbrdma_reg_t *) reg;
    char err[TBRDMA_MSG_MAX / 4];
    int ret = OPAL_ERR_OUT_OF_RESOURCE;

    pthread_mutex_lock(&rc->lock);
    if (rc->released) {
        ret = OPAL_ERR_UNREACH;
    } else if (rc->nregs >= mca_btl_tbrdma_component.zcopy_max_regs
               && !TBRDMA_MUTANT(ZC_REGS_UNLIMITED)) {
        rc->stats.over_budget++;
    } else if (0 != tbrdma_verbs_mr_reg(dev->vdev, base, size, &r->mr, err, sizeof(err))) {
        rc->stats.failed++;
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE, "%s (the message is copied instead)", err);
    } else {
        r->dev = dev;
        r->handle.cookie = (uint64_t) (uintptr_t) r;
        r->handle.base = (uint64_t) (uintptr_t) base;
        r->handle.bound = (uint64_t) (uintptr_t) base + size - 1;
        rcache_link(rc, r);
        rc->stats.made++;
        ret = OPAL_SUCCESS;
    }
    pthread_mutex_unlock(&rc->lock);
    return ret;
}

/* grdma's deregister callback (eviction, invalidation, no cache, finalize). */
static int rcache_dereg_mem(void *reg_data, mca_rcache_base_registration_t *reg)
{
    mca_btl_tbrdma_device_t *dev = reg_data;
    mca_btl_tbrdma_reg_t *r = (mca_btl_tbrdma_reg_t *) reg;

    pthread_mutex_lock(&dev->zc->lock);
    tbrdma_verbs_mr_dereg(&r->mr);
    rcache_unlink(dev->zc, r);
    dev->zc->stats.dropped++;
    pthread_mutex_unlock(&dev->zc->lock);
    return OPAL_SUCCESS;
}

/*
 * 1 when Open MPI's memory hooks tell the registration cache about memory the application frees
 * or unmaps. Without them (the memory patcher off or unsupported, as under AddressSanitizer), a
 * buffer freed and allocated again at the same address would keep its old registration, which
 * pins the old pages: zero-copy would then send or fill the wrong memory, so it is not used.
 */
static int rcache_hooks_active(void)
{
    int need = OPAL_MEMORY_FREE_SUPPORT | OPAL_MEMORY_MUNMAP_SUPPORT;

    return need == (opal_mem_hooks_support_level() & need) || TBRDMA_MUTANT(ZC_HOOKS_IGNORED);
}

int mca_btl_tbrdma_rcache_init(mca_btl_tbrdma_device_t *dev)
{
    mca_btl_tbrdma_module_t *module = rcache_module();
    const char *name = module->local.ports[dev->port].device;
    mca_rcache_base_resources_t res;
    mca_btl_tbrdma_rcache_t *rc = calloc(1, sizeof(*rc));
    char cache_name[TBRDMA_NAME_MAX + 16];

    if (NULL == rc) {
        return -1;
    }
    snprintf(cache_name, sizeof(cache_name), "tbrdma.%s", name);
    memset(&res, 0, sizeof(res));
    res.cache_name = cache_name; /* grdma keeps a copy */
    res.reg_data = dev;
    res.sizeof_reg = sizeof(mca_btl_tbrdma_reg_t);
    res.register_mem = rcache_reg_mem;
    res.deregister_mem = rcache_dereg_mem;
    pthread_mutex_init(&rc->lock, NULL);
    dev->zc = rc; /* the callbacks find it here */
    rc->rcache = mca_rcache_base_module_create("grdma", dev, &res);
    if (NULL == rc->rcache) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "device %s: no registration cache (rcache grdma): large messages are "
                       "copied",
                       name);
        goto undo_rc;
    }
    /* after the cache: the first cache created is what sets up Open MPI's memory hooks */
    if (!rcache_hooks_active()) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "device %s: Open MPI's memory hooks are not active (memory patcher off "
                       "or unsupported): a freed buffer could keep a stale registration, so "
                       "large messages are copied",
                       name);
        goto destroy_rcache;
    }
    return 0;
destroy_rcache:
    mca_rcache_base_module_destroy(rc->rcache);
undo_rc:
    dev->zc = NULL;
    pthread_mutex_destroy(&rc->lock);
    free(rc);
    return -1;
}

/* Takes the list lock, waiting a little if another thread holds it (a signal may be ending the
 * process on the thread that holds it: then release anyway). 1 when taken. */
static int rcache_lock_release(mca_btl_tbrdma_rcache_t *rc)
{
    for (int i = 0; i < RCACHE_LOCK_YIELDS; i++) {
        if (0 == pthread_mutex_trylock(&rc->lock)) {
            return 1;
        }
        sched_yield();
    }
    return 0;
}

void mca_btl_tbrdma_rcache_release(mca_btl_tbrdma_device_t *dev)
{
    mca_btl_tbrdma_rcache_t *rc = (NULL != dev) ? dev->zc : NULL;
    int locked;

    if (NULL == rc) {
        return;
    }
    locked = rcache_lock_release(rc);
    if (!rc->released) {
        rc->released = true;
        rc->at_release = rc->nregs;
    }
    for (mca_btl_tbrdma_reg_t *r = rc->live; NULL != r; r = r->next) {
        tbrdma_verbs_mr_dereg(&r->mr); /* the record stays until grdma lets it go */
    }
    if (locked) {
        pthread_mutex_unlock(&rc->lock);
    }
}

void mca_btl_tbrdma_rcache_fini(mca_btl_tbrdma_device_t *dev)
{
    mca_btl_tbrdma_rcache_t *rc = (NULL != dev) ? dev->zc : NULL;

    if (NULL == rc) {
        return;
    }
    mca_btl_tbrdma_rcache_release(dev);
    mca_rcache_base_module_destroy(rc->rcache); /* deregisters what is left (no-ops now) */
    dev->zc = NULL;
    pthread_mutex_destroy(&rc->lock);
    free(rc);
}

mca_btl_base_registration_handle_t *mca_btl_tbrdma_rcache_register(mca_btl_tbrdma_device_t *dev,
                                                                   void *base, size_t size)
{
    mca_btl_tbrdma_rcache_t *rc = dev->zc;
    mca_rcache_base_registration_t *reg = NULL;

    if (NULL == rc) {
        return NULL;
    }
    if (OPAL_SUCCESS
        != rc->rcache->rcache_register(rc->rcache, base, size, 0, MCA_RCACHE_ACCESS_ANY, &reg)) {
        pthread_mutex_lock(&rc->lock);
        rc->stats.refused++;
        pthread_mutex_unlock(&rc->lock);
        return NULL; /* ob1 copies */
    }
    return &((mca_btl_tbrdma_reg_t *) reg)->handle;
}

int mca_btl_tbrdma_deregister_mem(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_registration_handle_t *handle)
{
    mca_btl_tbrdma_reg_t *r =
        (mca_btl_tbrdma_reg_t *) ((char *) handle - offsetof(mca_btl_tbrdma_reg_t, handle));

    (void) btl;
    r->base.rcache->rcache_deregister(r->base.rcache, &r->base);
    return OPAL_SUCCESS;
}

int mca_btl_tbrdma_rcache_lookup(mca_btl_tbrdma_device_t *dev, uint64_t key, uint64_t addr,
                                 uint32_t len, uint32_t *lkey_p)
{
    mca_btl_tbrdma_rcache_t *rc = dev->zc;
    int found = -1;

    if (NULL == rc || 0 == len || addr + len < addr) {
        return -1;
    }
    pthread_mutex_lock(&rc->lock);
    for (mca_btl_tbrdma_reg_t *r = rc->live; NULL != r && 0 > found; r = r->next) {
        if ((uint64_t) (uintptr_t) r == key && NULL != r->mr.handle && r->handle.base <= addr
            && addr + len - 1 <= r->handle.bound) {
            *lkey_p = r->mr.lkey;
            found = 0;
        }
    }
    pthread_mutex_unlock(&rc->lock);
    return found;
}
