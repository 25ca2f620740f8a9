/*
 * libtbsim's model of pinned memory, on when the environment says TBSIM_PIN=1 (the default is
 * off: it reads /proc/self/pagemap at every transfer, a system call the hot path must not make).
 *
 * A real device (Apple's too) pins the physical pages a memory region covers when it is
 * registered and moves data from and to those pages, whatever the application does with the
 * virtual range afterwards. An application that frees a buffer (munmap) and gets a new one at
 * the same address has new pages there: a stale registration still sends the old pages' bytes
 * and receives into the old pages, which the application never sees. Registration caches must
 * therefore drop a registration when its memory is freed (Open MPI's memory hooks and rcache).
 *
 * At registration this model faults the range in for writing (MADV_POPULATE_WRITE, as a pin
 * does), keeps it from being collapsed into huge pages (which would move it), and records the
 * page frame of every page. A send from a page whose frame changed since carries 0xA5 bytes (the
 * old page's content is gone); a receive writes nothing into such a page. Page frames are visible
 * to root only (the tests run as root); without them the region is not modelled.
 */
#include "tbsim_priv.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PIN_PFN_MASK ((1ull << 55) - 1) /* pagemap: bits 0..54 the frame, bit 63 present */
#define PIN_PRESENT  (1ull << 63)
#define PIN_STALE    0xa5

struct tbsim_pin {
    uintptr_t first; /* the first page */
    size_t npages;
    uint64_t *pfn;
};

static size_t pin_page(void)
{
    static size_t page;

    if (0 == page) {
        page = (size_t) sysconf(_SC_PAGESIZE);
    }
    return page;
}

int tbsim_pin_on(void)
{
    static int on = -1;

    if (on < 0) {
        const char *v = getenv("TBSIM_PIN");

        on = (NULL != v && 0 == strcmp(v, "1") && !TBSIM_MUTANT(PIN_IGNORED)) ? 1 : 0;
    }
    return on;
}

/* The page frames of n pages from first into out (0 for a page not present); 0 or -1. */
static int pin_read(uintptr_t first, size_t n, uint64_t *out)
{
    static int fd = -1;
    size_t bytes = n * sizeof(*out);

    if (fd < 0) {
        fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0 || (ssize_t) bytes != pread(fd, out, bytes, (off_t) (first / pin_page() * 8))) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] = (out[i] & PIN_PRESENT) ? (out[i] & PIN_PFN_MASK) : 0;
    }
    return 0;
}

struct tbsim_pin *tbsim_pin_take(void *addr, size_t len)
{
    struct tbsim_pin *p;
    uintptr_t first, end;

    if (!tbsim_pin_on() || NULL == addr || 0 == len) {
        return NULL;
    }
    first = (uintptr_t) addr & ~(pin_page() - 1);
    end = ((uintptr_t) addr + len + pin_page() - 1) & ~(pin_page() - 1);
    (void) madvise((void *) first, end - first, MADV_NOHUGEPAGE);
    p = calloc(1, sizeof(*p));
    if (NULL == p || 0 != madvise((void *) first, end - first, MADV_POPULATE_WRITE)) {
        free(p);
        return NULL;
    }
    p->first = first;
    p->npages = (end - first) / pin_page();
    p->pfn = malloc(p->npages * sizeof(*p->pfn));
    if (NULL == p->pfn || 0 != pin_read(first, p->npages, p->pfn) || 0 == p->pfn[0]) {
        tbsim_pin_drop(p); /* no frames to see (not root): not modelled */
        return NULL;
    }
    return p;
}

void tbsim_pin_drop(struct tbsim_pin *p)
{
    if (NULL != p) {
        free(p->pfn);
        free(p);
    }
}

/*
 * For each page of [addr, addr+len) inside the region, whose frame is no longer the pinned
 * one: fn(offset in the range, bytes of that page in the range).
 */
static void pin_stale(const struct tbsim_pin *p, uintptr_t addr, uint32_t len,
                      void (*fn)(void *ctx, size_t off, size_t n), void *ctx)
{
    uintptr_t page = addr & ~(pin_page() - 1);
    size_t n = ((addr + len + pin_page() - 1) & ~(pin_page() - 1)) - page;
    size_t first = (page - p->first) / pin_page(), count = n / pin_page();
    uint64_t now[64];

    if (page < p->first || first + count > p->npages) {
        return; /* outside the region (a later registration reused its key) */
    }
    for (size_t i = 0; i < count; i += 64) {
        size_t k = (count - i < 64) ? count - i : 64;

        if (0 != pin_read(page + i * pin_page(), k, now)) {
            return;
        }
        for (size_t j = 0; j < k; j++) {
            uintptr_t pa = page + (i + j) * pin_page(), from = (pa < addr) ? addr : pa;
            uintptr_t to = (pa + pin_page() < addr + len) ? pa + pin_page() : addr + len;

            if (now[j] != p->pfn[first + i + j]) {
                fn(ctx, from - addr, to - from);
            }
        }
    }
}

static void pin_garble(void *ctx, size_t off, size_t n)
{
    memset((uint8_t *) ctx + off, PIN_STALE, n);
}

void tbsim_pin_send(const struct tbsim_pin *p, uint64_t src, uint8_t *data, uint32_t len)
{
    if (NULL != p && 0 < len) {
        pin_stale(p, (uintptr_t) src, len, pin_garble, data);
    }
}

struct pin_recv {
    uint8_t *save; /* the destination's bytes before the copy */
    uint8_t *dst;
};

static void pin_restore(void *ctx, size_t off, size_t n)
{
    struct pin_recv *r = ctx;

    memcpy(r->dst + off, r->save + off, n);
}

void tbsim_pin_recv(const struct tbsim_pin *p, uint64_t dst, const uint8_t *src, uint32_t len)
{
    struct pin_recv r = {NULL, (uint8_t *) (uintptr_t) dst};

    if (NULL != p && 0 < len) {
        r.save = malloc(len);
    }
    if (NULL != r.save) {
        memcpy(r.save, r.dst, len);
    }
    memcpy(r.dst, src, len);
    if (NULL != r.save) { /* the stale pages got the data, not the application's */
        pin_stale(p, (uintptr_t) dst, len, pin_restore, &r);
        free(r.save);
    }
}
