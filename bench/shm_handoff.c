/*
 * shm_handoff: what a hand-off through shared memory costs between two processes, the hop a
 * per-Mac agent adds to every frame (docs/design.md, "Many ranks per Mac"). Two processes
 * (fork) share one anonymous mapping and play ITERS round trips of ping-pong, two ways:
 *   line  each owns a cache line and spins until the other's changes (the floor);
 *   ring  tbrdma's hand-off ring (plugin/core/tbrdma_ring.c), one each way, an entry a turn.
 * Prints the half round trip in ns, best of REPS, for each. Usage: shm_handoff [ITERS [REPS]].
 * Only describes the machine it runs on (timing never decides a test); pins nothing: on 2
 * shared cores a process that loses its core shows.
 */
#define _GNU_SOURCE
#include "tbrdma_ring.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING_CAP 64u

typedef struct {
    _Alignas(128) atomic_uint_fast64_t ping;
    _Alignas(128) atomic_uint_fast64_t pong;
} lines_t;

/* The shared mapping: the two lines, then two rings (there and back). */
typedef struct {
    lines_t lines;
    size_t ring_bytes;
    char *ring[2];
} shared_t;

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* rc of a ring call that returned something other than 0 or -EAGAIN: a broken ring. */
static void ring_failed(int rc)
{
    fprintf(stderr, "shm_handoff: the ring failed (%d)\n", rc);
    _exit(1);
}

static void ring_push_wait(tbrdma_ring_t *r, uint32_t v)
{
    int rc;

    while (-EAGAIN == (rc = tbrdma_ring_push(r, v))) {
    }
    if (0 != rc) {
        ring_failed(rc);
    }
}

static uint32_t ring_pop_wait(tbrdma_ring_t *r)
{
    uint32_t v = 0;
    int rc;

    while (-EAGAIN == (rc = tbrdma_ring_pop(r, &v))) {
    }
    if (0 != rc) {
        ring_failed(rc);
    }
    return v;
}

/* One turn of the ring ping-pong: the first side pushes v on out and waits for it on in, the
 * other waits for it on in and pushes it back on out. */
static void ring_turn(tbrdma_ring_t *out, tbrdma_ring_t *in, uint32_t v, int first)
{
    uint32_t got;

    if (first) {
        ring_push_wait(out, v);
    }
    got = ring_pop_wait(in);
    if (got != v) {
        fprintf(stderr, "shm_handoff: ring entry %u, expected %u\n", got, v);
        _exit(1);
    }
    if (!first) {
        ring_push_wait(out, v);
    }
}

static void child(shared_t *s, uint64_t total)
{
    tbrdma_ring_t back, there;

    for (uint64_t i = 1; i <= total; i++) {
        while (atomic_load_explicit(&s->lines.ping, memory_order_acquire) != i) {
        }
        atomic_store_explicit(&s->lines.pong, i, memory_order_release);
    }
    if (0 != tbrdma_ring_attach(&there, s->ring[0], s->ring_bytes, 0)
        || 0 != tbrdma_ring_attach(&back, s->ring[1], s->ring_bytes, 1)) {
        _exit(1);
    }
    for (uint64_t i = 1; i <= total; i++) {
        ring_turn(&back, &there, (uint32_t) i, 0);
    }
    _exit(0);
}

/* REPS rounds of ITERS round trips of one kind; the best half round trip in ns. */
static double play(shared_t *s, const char *kind, uint64_t iters, int reps)
{
    tbrdma_ring_t there, back;
    double best = -1;

    if ('r' == kind[0]
        && (0 != tbrdma_ring_attach(&there, s->ring[0], s->ring_bytes, 1)
            || 0 != tbrdma_ring_attach(&back, s->ring[1], s->ring_bytes, 0))) {
        fprintf(stderr, "shm_handoff: cannot attach the rings\n");
        exit(1);
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns(), half;

        for (uint64_t i = 1; i <= iters; i++) {
            uint64_t n = (uint64_t) r * iters + i;

            if ('r' == kind[0]) {
                ring_turn(&there, &back, (uint32_t) n, 1);
                continue;
            }
            atomic_store_explicit(&s->lines.ping, n, memory_order_release);
            while (atomic_load_explicit(&s->lines.pong, memory_order_acquire) != n) {
            }
        }
        half = (now_ns() - t0) / (2.0 * (double) iters);
        printf("%s round %d: %.1f ns a hand-off (half round trip)\n", kind, r + 1, half);
        best = (best < 0 || half < best) ? half : best;
    }
    return best;
}

static shared_t *shared_map(void)
{
    size_t rb = tbrdma_ring_bytes(RING_CAP), off = (sizeof(shared_t) + 127) / 128 * 128;
    char *m = mmap(NULL, off + 2 * rb, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    shared_t *s = (shared_t *) m;

    if (MAP_FAILED == m) {
        return NULL;
    }
    atomic_init(&s->lines.ping, 0);
    atomic_init(&s->lines.pong, 0);
    s->ring_bytes = rb;
    s->ring[0] = m + off;
    s->ring[1] = m + off + rb;
    if (0 != tbrdma_ring_init(s->ring[0], rb, RING_CAP)
        || 0 != tbrdma_ring_init(s->ring[1], rb, RING_CAP)) {
        return NULL;
    }
    return s;
}

int main(int argc, char **argv)
{
    uint64_t iters = (argc > 1) ? strtoull(argv[1], NULL, 10) : 200000;
    int reps = (argc > 2) ? atoi(argv[2]) : 5, status = 0;
    shared_t *s = shared_map();
    double line, ring;
    pid_t pid;

    if (NULL == s || 0 == iters || 0 >= reps || iters * (uint64_t) reps > UINT32_MAX) {
        fprintf(stderr, "usage: shm_handoff [ITERS [REPS]]\n");
        return 2;
    }
    pid = fork();
    if (0 > pid) {
        perror("fork");
        return 1;
    }
    if (0 == pid) {
        child(s, iters * (uint64_t) reps);
    }
    line = play(s, "line", iters, reps);
    ring = play(s, "ring", iters, reps);
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || 0 != WEXITSTATUS(status)) {
        fprintf(stderr, "shm_handoff: the other process failed\n");
        return 1;
    }
    printf("best: %.1f ns a hand-off between two processes through a shared cache line\n", line);
    printf("best: %.1f ns a hand-off through tbrdma's ring (plugin/core/tbrdma_ring.c)\n", ring);
    return 0;
}
