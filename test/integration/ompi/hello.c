/*
 * hello: the MPI program of the Open MPI integration tests. Every rank exchanges patterned
 * buffers with its ring neighbours (a small eager message and a large rendezvous one), checks
 * every byte it received, then checks an allreduce of its rank numbers. Each rank prints
 * "hello: rank R of N OK" when all checks passed; any mismatch is printed and fails the job.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HELLO_SMALL_BYTES 64
#define HELLO_LARGE_BYTES (4 * 1024 * 1024 + 123)
#define HELLO_TAG         17

/* The byte at offset i of a buffer that rank src sends. */
static unsigned char hello_pattern(int src, size_t len, size_t i)
{
    return (unsigned char) ((i * 131u + (size_t) src * 7u + len) & 0xffu);
}

static void hello_fill(unsigned char *buf, size_t len, int src)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = hello_pattern(src, len, i);
    }
}

/* Returns the number of bytes that differ from what rank src sent. */
static size_t hello_check(const unsigned char *buf, size_t len, int src, int rank)
{
    size_t bad = 0;

    for (size_t i = 0; i < len; i++) {
        if (buf[i] != hello_pattern(src, len, i)) {
            if (0 == bad) {
                fprintf(stderr,
                        "hello: rank %d: %zu-byte message from rank %d: byte %zu is 0x%02x, "
                        "expected 0x%02x\n",
                        rank, len, src, i, buf[i], hello_pattern(src, len, i));
            }
            bad++;
        }
    }
    return bad;
}

/* Send len patterned bytes to the next rank, receive from the previous one and check them. */
static int hello_ring(size_t len, int rank, int size)
{
    int next = (rank + 1) % size;
    int prev = (rank + size - 1) % size;
    unsigned char *out = malloc(len);
    unsigned char *in = calloc(1, len);
    int ok = 0;

    if (NULL == out || NULL == in) {
        fprintf(stderr, "hello: rank %d: out of memory for %zu bytes\n", rank, len);
        goto out_free;
    }
    hello_fill(out, len, rank);
    MPI_Sendrecv(out, (int) len, MPI_UNSIGNED_CHAR, next, HELLO_TAG, in, (int) len,
                 MPI_UNSIGNED_CHAR, prev, HELLO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok = 0 == hello_check(in, len, prev, rank);
out_free:
    free(in);
    free(out);
    return ok;
}

/* Allreduce of the rank numbers must give 0 + 1 + ... + (size - 1). */
static int hello_allreduce(int rank, int size)
{
    long mine = rank;
    long sum = -1;
    long want = (long) size * (size - 1) / 2;

    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (want != sum) {
        fprintf(stderr, "hello: rank %d: allreduce sum is %ld, expected %ld\n", rank, sum, want);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int rank, size, ok, all_ok = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ok = hello_ring(HELLO_SMALL_BYTES, rank, size);
    ok &= hello_ring(HELLO_LARGE_BYTES, rank, size);
    ok &= hello_allreduce(rank, size);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (ok) {
        printf("hello: rank %d of %d OK\n", rank, size);
    }
    MPI_Finalize();
    return all_ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
