/*
 * CRC32C, see tbrdma_crc32c.h. Three implementations of one function: the x86-64 SSE4.2
 * crc32 instruction (compiled for that target only inside its own function, chosen at run time
 * with __builtin_cpu_supports), the ARMv8 CRC32C instructions (compiled in when the target has
 * them, which every Apple silicon Mac does), and slicing-by-8 tables built once.
 * Hot path: tbrdma_crc32c_extend() is called for every frame when btl_tbrdma_checksum is on.
 */
#include "tbrdma_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define CRC32C_HAVE_ARM 1
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define CRC32C_HAVE_X86 1
#endif

#define CRC32C_POLY 0x82F63B78u /* reflected Castagnoli polynomial */

typedef uint32_t (*crc32c_fn_t)(uint32_t crc, const uint8_t *p, size_t len);

static uint32_t crc32c_table[8][256];
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;
static crc32c_fn_t crc32c_fn;
static const char *crc32c_name = "software";
static int crc32c_software_forced;

static void crc32c_build_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;

        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        }
        crc32c_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        for (int t = 1; t < 8; t++) {
            uint32_t prev = crc32c_table[t - 1][n];

            crc32c_table[t][n] = (prev >> 8) ^ crc32c_table[0][prev & 0xff];
        }
    }
}

/* Slicing-by-8 on the reflected (inverted) register; bytes read as little-endian words. */
static uint32_t crc32c_software(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len > 0 && 0 != ((uintptr_t) p & 7)) {
        crc = (crc >> 8) ^ crc32c_table[0][(crc ^ *p++) & 0xff];
        len--;
    }
    while (len >= 8) {
        uint32_t lo = crc
                      ^ ((uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
                         | (uint32_t) p[3] << 24);
        uint32_t hi =
            (uint32_t) p[4] | (uint32_t) p[5] << 8 | (uint32_t) p[6] << 16 | (uint32_t) p[7] << 24;

        crc = crc32c_table[7][lo & 0xff] ^ crc32c_table[6][(lo >> 8) & 0xff]
              ^ crc32c_table[5][(lo >> 16) & 0xff] ^ crc32c_table[4][lo >> 24]
              ^ crc32c_table[3][hi & 0xff] ^ crc32c_table[2][(hi >> 8) & 0xff]
              ^ crc32c_table[1][(hi >> 16) & 0xff] ^ crc32c_table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len-- > 0) {
        crc = (crc >> 8) ^ crc32c_table[0][(crc ^ *p++) & 0xff];
    }
    return crc;
}

#ifdef CRC32C_HAVE_X86
__attribute__((target("sse4.2"))) static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p,
                                                               size_t len)
{
    uint64_t c = crc;

    while (len > 0 && 0 != ((uintptr_t) p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t) c, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t w;

        memcpy(&w, p, sizeof(w));
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    while (len-- > 0) {
        c = __builtin_ia32_crc32qi((uint32_t) c, *p++);
    }
    return (uint32_t) c;
}
#endif

#ifdef CRC32C_HAVE_ARM
static uint32_t crc32c_armv8(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len > 0 && 0 != ((uintptr_t) p & 7)) {
        crc = __crc32cb(crc, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t w;

        memcpy(&w, p, sizeof(w));
        crc = __crc32cd(crc, w);
        p += 8;
        len -= 8;
    }
    while (len-- > 0) {
        crc = __crc32cb(crc, *p++);
    }
    return crc;
}
#endif

static void crc32c_choose(void)
{
    crc32c_build_tables();
    crc32c_fn = crc32c_software;
    crc32c_name = "software";
    if (crc32c_software_forced) {
        return;
    }
#ifdef CRC32C_HAVE_X86
    if (__builtin_cpu_supports("sse4.2")) {
        crc32c_fn = crc32c_sse42;
        crc32c_name = "sse4.2";
    }
#endif
#ifdef CRC32C_HAVE_ARM
    crc32c_fn = crc32c_armv8;
    crc32c_name = "armv8-crc";
#endif
}

uint32_t tbrdma_crc32c_extend(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc32c_once, crc32c_choose);
    return ~crc32c_fn(~crc, (const uint8_t *) buf, len);
}

uint32_t tbrdma_crc32c(const void *buf, size_t len)
{
    return tbrdma_crc32c_extend(0, buf, len);
}

const char *tbrdma_crc32c_impl(void)
{
    pthread_once(&crc32c_once, crc32c_choose);
    return crc32c_name;
}

void tbrdma_crc32c_force_software(int on)
{
    pthread_once(&crc32c_once, crc32c_choose);
    crc32c_software_forced = on;
    crc32c_choose();
}
