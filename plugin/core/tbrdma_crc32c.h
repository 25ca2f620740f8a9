/*
 * CRC32C (Castagnoli; iSCSI, ext4, SCTP): tbrdma's frame checksum. Reflected polynomial
 * 0x82F63B78, initial value and final xor 0xFFFFFFFF, so tbrdma_crc32c("123456789") is
 * 0xE3069283. Computed with the CPU's CRC32C instruction where it has one (x86-64 SSE4.2,
 * ARMv8 CRC: every Apple silicon Mac), three streams at once over long buffers, else with an
 * 8-table software loop; the choice is made once, at the first call. Opal-free; thread-safe.
 */
#ifndef TBRDMA_CRC32C_H
#define TBRDMA_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC32C of len bytes at buf. */
uint32_t tbrdma_crc32c(const void *buf, size_t len);

/*
 * Extends a finished CRC32C over more bytes: tbrdma_crc32c_extend(tbrdma_crc32c(a), b) equals
 * the CRC32C of a followed by b; tbrdma_crc32c_extend(0, buf, len) equals tbrdma_crc32c().
 */
uint32_t tbrdma_crc32c_extend(uint32_t crc, const void *buf, size_t len);

/* The implementation in use: "sse4.2 x3", "armv8-crc x3" (three streams at once), "sse4.2",
 * "armv8-crc" (one stream) or "software". */
const char *tbrdma_crc32c_impl(void);

enum tbrdma_crc32c_way {
    TBRDMA_CRC32C_BEST,       /* the CPU's instruction, three streams at once (the default) */
    TBRDMA_CRC32C_ONE_STREAM, /* the CPU's instruction, one stream */
    TBRDMA_CRC32C_SOFTWARE    /* the table loop */
};

/*
 * Forces a way of computing (where the CPU has no instruction, every way is the software loop),
 * for tests and the checksum benchmark. Not thread-safe: call before any other thread computes
 * a CRC.
 */
void tbrdma_crc32c_force(enum tbrdma_crc32c_way way);

#endif /* TBRDMA_CRC32C_H */
