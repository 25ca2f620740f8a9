/*
 * shm_handoff: what a hand-off through shared memory costs between two processes, the hop a
 * per-Mac agent would add to every frame (docs/design.md, "Many ranks per Mac"). Two processes
 * (fork) share one anonymous mapping; each owns a cache line and waits, spinning, for the
 * other's to change: a ping-pong of ITERS round trips. Prints the half round trip in ns, best
 * of REPS. Usage: shm_handoff [ITERS [REPS]]. Only describes the machine it runs on (timing
 * never decides a test); pin nothing: on 2 shared cores a rank that loses its core shows.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    _Alignas(128) atomic_uint_fast64_t ping;
    _Alignas(128) atomic_uint_fast64_t pong;
} lines_t;

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void child(lines_t *l, uint64_t total)
{
    for (uint64_t i = 1; i <= total; i++) {
        while (atomic_load_explicit(&l->ping, memory_order_acquire) != i) {
        }
        atomic_store_explicit(&l->pong, i, memory_order_release);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    uint64_t iters = (argc > 1) ? strtoull(argv[1], NULL, 10) : 200000;
    int reps = (argc > 2) ? atoi(argv[2]) : 5;
    lines_t *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double best = -1;
    pid_t pid;

    if (MAP_FAILED == l || 0 == iters || 0 >= reps) {
        fprintf(stderr, "usage: shm_handoff [ITERS [REPS]]\n");
        return 2;
    }
    atomic_init(&l->ping, 0);
    atomic_init(&l->pong, 0);
    pid = fork();
    if (0 > pid) {
        perror("fork");
        return 1;
    }
    if (0 == pid) {
        child(l, iters * (uint64_t) reps);
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();

        for (uint64_t i = 1; i <= iters; i++) {
            uint64_t n = (uint64_t) r * iters + i;

            atomic_store_explicit(&l->ping, n, memory_order_release);
            while (atomic_load_explicit(&l->pong, memory_order_acquire) != n) {
            }
        }
        double half = (now_ns() - t0) / (2.0 * (double) iters);
        printf("round %d: %.1f ns a hand-off (half round trip)\n", r + 1, half);
        best = (best < 0 || half < best) ? half : best;
    }
    waitpid(pid, NULL, 0);
    printf("best: %.1f ns a hand-off between two processes through shared memory\n", best);
    return 0;
}
