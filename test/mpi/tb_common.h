/*
 * tb_common.h: what every MPI test program of test/mpi shares. Each program checks every result
 * it computes against a value it derives independently, counts its checks, and ends with
 * tb_finish(), which prints "tbtest NAME: rank R of N OK (C checks)" on every rank when no rank
 * failed (else each failing rank prints "tbtest NAME: rank R: FAIL ..." lines and the program
 * exits 1). The scripts count the OK lines: a rank that printed nothing is a failure.
 */
#ifndef TB_COMMON_H
#define TB_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *tb_name = "?";
static int tb_rank = -1, tb_size = 0;
static long tb_checks = 0, tb_failures = 0; /* updated atomically: threads check too */
/* TBTEST_JOB: a name mixed into every patterned buffer, so a job's payloads name their job (a
 * frame of another job fails the check); unset, the patterns are the same as without it. */
static uint64_t tb_salt = 0;

static inline void tb_init(int *argc, char ***argv, const char *name)
{
    const char *job = getenv("TBTEST_JOB");

    for (; NULL != job && '\0' != *job; job++) {
        tb_salt = (tb_salt ^ (unsigned char) *job) * 0x100000001b3ull;
    }
    tb_name = name;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tb_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tb_size);
}

/* One check: counted, and printed when it fails (the first 20 failures of a rank). */
static inline void tb_check(int ok, const char *fmt, ...)
{
    va_list ap;

    __atomic_fetch_add(&tb_checks, 1, __ATOMIC_RELAXED);
    if (ok) {
        return;
    }
    if (__atomic_fetch_add(&tb_failures, 1, __ATOMIC_RELAXED) < 20) {
        fprintf(stderr, "tbtest %s: rank %d: FAIL ", tb_name, tb_rank);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
}

/* The byte at offset i of a patterned buffer identified by seed (never all equal). */
static inline unsigned char tb_byte(uint64_t seed, size_t i)
{
    uint64_t x = (seed ^ tb_salt) * 0x9e3779b97f4a7c15ull + i;

    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return (unsigned char) (x >> 32);
}

static inline void tb_fill(unsigned char *buf, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = tb_byte(seed, i);
    }
}

/* Number of bytes of buf that differ from pattern seed; the first one is reported. */
static inline size_t tb_verify(const unsigned char *buf, size_t len, uint64_t seed,
                               const char *what)
{
    size_t bad = 0;

    for (size_t i = 0; i < len; i++) {
        if (buf[i] != tb_byte(seed, i)) {
            if (0 == bad) {
                tb_check(0, "%s: %zu bytes, byte %zu is 0x%02x, expected 0x%02x", what, len, i,
                         buf[i], tb_byte(seed, i));
            }
            bad++;
        }
    }
    if (0 == bad) {
        tb_check(1, "%s", what);
    }
    return bad;
}

static inline void *tb_malloc(size_t len)
{
    void *p = malloc(len ? len : 1);

    if (NULL == p) {
        fprintf(stderr, "tbtest %s: rank %d: out of memory for %zu bytes\n", tb_name, tb_rank, len);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* Ends the program: every rank's verdict, printed; the exit status of main(). */
static inline int tb_finish(void)
{
    long failures = 0;

    MPI_Allreduce(&tb_failures, &failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (0 == failures) {
        printf("tbtest %s: rank %d of %d OK (%ld checks)\n", tb_name, tb_rank, tb_size, tb_checks);
    } else {
        printf("tbtest %s: rank %d of %d FAILED (%ld of %ld checks failed here, %ld in all)\n",
               tb_name, tb_rank, tb_size, tb_failures, tb_checks, failures);
    }
    fflush(stdout);
    MPI_Finalize();
    return (0 == failures) ? 0 : 1;
}

#endif /* TB_COMMON_H */
