/*
 * crc_speed: GB/s of tbrdma's CRC32C against memcpy, over 4,056 B (one frame's payload) and
 * 64 KiB buffers (one bulk message) in cache and 16 MiB buffers out of cache, for each way of
 * computing it this CPU has (three interleaved streams of the CRC32C instruction, the default;
 * one stream; the software tables), measured in turn in one run. The checksum is computed twice
 * per payload (sender and receiver); on a Mac the cable moves at most about 10 GB/s
 * (Thunderbolt 5, 80 Gbit/s), so a CRC well above that costs a fraction of the wire time. Best
 * of 5 runs. Usage: crc_speed. No pass/fail.
 */
#include "tbrdma_crc32c.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static double rate(int crc, unsigned char *a, unsigned char *b, size_t len, size_t total)
{
    double best = 0;
    volatile uint32_t sink = 0;

    for (int r = 0; r < 5; r++) {
        double t0 = now();

        for (size_t done = 0; done < total; done += len) {
            if (crc) {
                sink ^= tbrdma_crc32c(a, len);
            } else {
                memcpy(b, a, len);
                sink ^= b[len / 2];
            }
        }
        double gbs = (double) total / (now() - t0) / 1e9;
        best = gbs > best ? gbs : best;
    }
    (void) sink;
    return best;
}

int main(void)
{
    static const enum tbrdma_crc32c_way ways[] = {TBRDMA_CRC32C_BEST, TBRDMA_CRC32C_ONE_STREAM,
                                                  TBRDMA_CRC32C_SOFTWARE};
    size_t sizes[] = {4056, 65536, 16u << 20};
    size_t total = 1u << 30;
    unsigned char *a = malloc(16u << 20), *b = malloc(16u << 20);

    if (NULL == a || NULL == b) {
        return 1;
    }
    for (size_t i = 0; i < (16u << 20); i++) {
        a[i] = (unsigned char) (i * 31 + 7);
    }
    printf("%-14s %10s %12s %12s %10s\n", "crc32c", "bytes", "crc32c_GB/s", "memcpy_GB/s",
           "crc/memcpy");
    for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
        tbrdma_crc32c_force(ways[w]);
        for (int s = 0; s < 3; s++) {
            double c = rate(1, a, b, sizes[s], total), m = rate(0, a, b, sizes[s], total);

            printf("%-14s %10zu %12.2f %12.2f %10.2f\n", tbrdma_crc32c_impl(), sizes[s], c, m,
                   c / m);
        }
    }
    free(a);
    free(b);
    return 0;
}
