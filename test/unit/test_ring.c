/*
 * Unit tests of plugin/core/tbrdma_ring.c (the hand-off ring of the per-Mac agent): sizes and
 * the layout refused when wrong, a full ring refusing the next entry and handing every entry
 * back in order, indices wrapping past 2^32, impossible indices from the other side reported
 * instead of read past, a capacity changed under an attached handle ignored, and two processes
 * handing 2 million entries through one ring, every one arriving once and in order.
 */
#include "tbrdma_ring.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* A zeroed, line-aligned buffer of n bytes (freed by the caller). */
static void *ring_mem(size_t n)
{
    void *m = NULL;

    if (0 != posix_memalign(&m, TBRDMA_RING_LINE, n)) {
        return NULL;
    }
    memset(m, 0, n);
    return m;
}

/* An empty ring of cap slots in fresh memory; *n_p gets its size. */
static void *ring_made(uint32_t cap, size_t *n_p)
{
    void *m;

    *n_p = tbrdma_ring_bytes(cap);
    m = ring_mem(*n_p);
    CU_ASSERT_FATAL(NULL != m && 0 == tbrdma_ring_init(m, *n_p, cap));
    return m;
}

static void test_ring_sizes_and_layout_refused(void)
{
    size_t n = tbrdma_ring_bytes(8);
    char *m = ring_mem(n + TBRDMA_RING_LINE);
    tbrdma_ring_t r;

    CU_ASSERT_FATAL(NULL != m);
    CU_ASSERT(0 == tbrdma_ring_bytes(0) && 0 == tbrdma_ring_bytes(1) && 0 == tbrdma_ring_bytes(3));
    CU_ASSERT(0 == tbrdma_ring_bytes(2 * TBRDMA_RING_CAP_MAX));
    CU_ASSERT(sizeof(tbrdma_ring_shared_t) + 8 * sizeof(uint32_t) == n);
    CU_ASSERT(0 == sizeof(tbrdma_ring_shared_t) % TBRDMA_RING_LINE);
    CU_ASSERT(-EINVAL == tbrdma_ring_init(m, n, 6));
    CU_ASSERT(-EINVAL == tbrdma_ring_init(m + 4, n, 8)); /* not on a cache line */
    CU_ASSERT(-ENOSPC == tbrdma_ring_init(m, n - 1, 8));
    CU_ASSERT(-EPROTO == tbrdma_ring_attach(&r, m, n, 1)); /* never laid out */
    CU_ASSERT(0 == tbrdma_ring_init(m, n, 8));
    CU_ASSERT(-ENOSPC == tbrdma_ring_attach(&r, m, sizeof(tbrdma_ring_shared_t) - 1, 1));
    CU_ASSERT(-ENOSPC == tbrdma_ring_attach(&r, m, n - 1, 1)); /* its slots do not fit */
    ((tbrdma_ring_shared_t *) m)->cap = 12;
    CU_ASSERT(-EPROTO == tbrdma_ring_attach(&r, m, n, 0));
    ((tbrdma_ring_shared_t *) m)->cap = 8;
    ((tbrdma_ring_shared_t *) m)->version = 2;
    CU_ASSERT(-EPROTO == tbrdma_ring_attach(&r, m, n, 0));
    free(m);
}

static void test_ring_full_and_order(void)
{
    size_t n;
    void *m = ring_made(8, &n);
    tbrdma_ring_t p, c;
    uint32_t v;

    CU_ASSERT_FATAL(0 == tbrdma_ring_attach(&p, m, n, 1) && 0 == tbrdma_ring_attach(&c, m, n, 0));
    CU_ASSERT(-EAGAIN == tbrdma_ring_pop(&c, &v));
    for (uint32_t i = 0; i < 8; i++) {
        CU_ASSERT(0 == tbrdma_ring_push(&p, 100 + i));
    }
    CU_ASSERT(-EAGAIN == tbrdma_ring_push(&p, 999)); /* full: the oldest is not overwritten */
    CU_ASSERT(8 == tbrdma_ring_count(&p) && 8 == tbrdma_ring_count(&c));
    for (uint32_t i = 0; i < 8; i++) {
        CU_ASSERT(0 == tbrdma_ring_pop(&c, &v) && 100 + i == v);
    }
    CU_ASSERT(-EAGAIN == tbrdma_ring_pop(&c, &v));
    CU_ASSERT(0 == tbrdma_ring_push(&p, 7) && 1 == tbrdma_ring_count(&c));
    free(m);
}

/* Indices start just below 2^32: pushes and pops across the wrap, entries in order. */
static void test_ring_indices_wrap(void)
{
    size_t n;
    void *m = ring_made(4, &n);
    tbrdma_ring_shared_t *sh = m;
    tbrdma_ring_t p, c;
    uint32_t v, next = 0, want = 0;

    atomic_store(&sh->tail, UINT32_MAX - 5);
    atomic_store(&sh->head, UINT32_MAX - 5);
    CU_ASSERT_FATAL(0 == tbrdma_ring_attach(&p, m, n, 1) && 0 == tbrdma_ring_attach(&c, m, n, 0));
    for (int round = 0; round < 100; round++) {
        while (0 == tbrdma_ring_push(&p, next)) {
            next++;
        }
        CU_ASSERT(4 == tbrdma_ring_count(&c));
        for (int k = 0; k < 1 + round % 4; k++) {
            CU_ASSERT(0 == tbrdma_ring_pop(&c, &v) && want == v);
            want++;
        }
    }
    CU_ASSERT(atomic_load(&sh->tail) < 1000); /* wrapped */
    while (0 == tbrdma_ring_pop(&c, &v)) {
        CU_ASSERT(want == v);
        want++;
    }
    CU_ASSERT(want == next);
    free(m);
}

/* The other side publishes an index that cannot be: reported, nothing read or written past. */
static void test_ring_impossible_indices(void)
{
    size_t n;
    void *m = ring_made(4, &n);
    tbrdma_ring_shared_t *sh = m;
    tbrdma_ring_t p, c;
    uint32_t v;

    CU_ASSERT_FATAL(0 == tbrdma_ring_attach(&c, m, n, 0));
    atomic_store(&sh->tail, 5); /* 5 entries in 4 slots */
    CU_ASSERT(-EPIPE == tbrdma_ring_pop(&c, &v));
    CU_ASSERT(-EPIPE == tbrdma_ring_count(&c));
    CU_ASSERT(-EPIPE == tbrdma_ring_attach(&c, m, n, 0));
    atomic_store(&sh->tail, 0);
    CU_ASSERT_FATAL(0 == tbrdma_ring_attach(&p, m, n, 1));
    for (int i = 0; i < 4; i++) {
        CU_ASSERT(0 == tbrdma_ring_push(&p, (uint32_t) i));
    }
    atomic_store(&sh->head, 9); /* the consumer claims more than was pushed */
    CU_ASSERT(-EPIPE == tbrdma_ring_push(&p, 4));
    CU_ASSERT(-EPIPE == tbrdma_ring_count(&p));
    free(m);
}

/* The capacity is the one seen at attach: a larger one written later changes nothing. */
static void test_ring_capacity_taken_at_attach(void)
{
    size_t n;
    void *m = ring_made(4, &n);
    tbrdma_ring_t p;

    CU_ASSERT_FATAL(0 == tbrdma_ring_attach(&p, m, n, 1));
    ((tbrdma_ring_shared_t *) m)->cap = TBRDMA_RING_CAP_MAX;
    for (int i = 0; i < 4; i++) {
        CU_ASSERT(0 == tbrdma_ring_push(&p, (uint32_t) i));
    }
    CU_ASSERT(-EAGAIN == tbrdma_ring_push(&p, 4)); /* not a write past the 4 slots */
    free(m);
}

#define TWO_PROC_ENTRIES 2000000u

/* The child pushes 1..TWO_PROC_ENTRIES; exit status 0 when every push went in. */
static void two_proc_producer(void *m, size_t n)
{
    tbrdma_ring_t p;
    int rc;

    if (0 != tbrdma_ring_attach(&p, m, n, 1)) {
        _exit(2);
    }
    for (uint32_t i = 1; i <= TWO_PROC_ENTRIES; i++) {
        while (-EAGAIN == (rc = tbrdma_ring_push(&p, i))) {
            sched_yield();
        }
        if (0 != rc) {
            _exit(3);
        }
    }
    _exit(0);
}

static void test_ring_two_processes(void)
{
    size_t n = tbrdma_ring_bytes(64);
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint32_t v, want = 1, wrong = 0;
    tbrdma_ring_t c;
    int status = -1, rc = 0;
    pid_t pid;

    CU_ASSERT_FATAL(MAP_FAILED != m);
    CU_ASSERT_FATAL(0 == tbrdma_ring_init(m, n, 64));
    CU_ASSERT_FATAL(0 == tbrdma_ring_attach(&c, m, n, 0));
    pid = fork();
    CU_ASSERT_FATAL(0 <= pid);
    if (0 == pid) {
        two_proc_producer(m, n);
    }
    while (want <= TWO_PROC_ENTRIES && (0 == rc || -EAGAIN == rc)) {
        rc = tbrdma_ring_pop(&c, &v);
        if (0 == rc) {
            wrong += (v != want);
            want++;
        } else {
            sched_yield();
        }
    }
    waitpid(pid, &status, 0);
    CU_ASSERT(0 == rc || -EAGAIN == rc);
    CU_ASSERT(TWO_PROC_ENTRIES + 1 == want);
    CU_ASSERT(0 == wrong);
    CU_ASSERT(WIFEXITED(status) && 0 == WEXITSTATUS(status));
    CU_ASSERT(-EAGAIN == tbrdma_ring_pop(&c, &v));
    munmap(m, n);
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_ring_sizes_and_layout_refused),
        TBRDMA_UT_TEST(test_ring_full_and_order),
        TBRDMA_UT_TEST(test_ring_indices_wrap),
        TBRDMA_UT_TEST(test_ring_impossible_indices),
        TBRDMA_UT_TEST(test_ring_capacity_taken_at_attach),
        TBRDMA_UT_TEST(test_ring_two_processes),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_ring", tests);
}
