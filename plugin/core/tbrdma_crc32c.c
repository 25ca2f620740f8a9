/*
 * CRC32C, see tbrdma_crc32c.h. The CPU's CRC32C instruction (x86-64 SSE4.2, compiled for that
 * target only inside its own functions and chosen at run time with __builtin_cpu_supports; the
 * ARMv8 CRC32C instructions, compiled in when the target has them, which every Apple silicon
 * Mac does), else slicing-by-8 tables built once.
 *
 * Three streams at once. The instruction takes 3 cycles but a new one can start every cycle, so
 * one dependent chain runs at a third of what the unit can do. A long buffer is cut into blocks
 * of three equal parts, whose CRCs are computed interleaved (the first part's from the running
 * register, the other two from 0) and then combined: the register after part A then B is
 * shift_n(reg_A) ^ reg_B, where shift_n is the register's linear map for n zero bytes, applied
 * with 4 table look-ups (the tables built once per part length, from the software loop).
 * Hot path: tbrdma_crc32c_extend() is called for every frame when btl_tbrdma_checksum is on.
 */
#include "tbrdma_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define CRC32C_HW_NAME         "armv8-crc"
#define CRC32C_HW_TARGET       /* the target has it */
#define CRC32C_HW_STEP64(c, w) __crc32cd((c), (w))
#define CRC32C_HW_STEP8(c, b)  __crc32cb((c), (b))
#elif defined(__x86_64__) && defined(__GNUC__)
#define CRC32C_HW_NAME         "sse4.2"
#define CRC32C_HW_TARGET       __attribute__((target("sse4.2")))
#define CRC32C_HW_STEP64(c, w) ((uint32_t) __builtin_ia32_crc32di((c), (w)))
#define CRC32C_HW_STEP8(c, b)  __builtin_ia32_crc32qi((c), (b))
#endif

#define CRC32C_POLY  0x82F63B78u /* reflected Castagnoli polynomial */
#define CRC32C_LONG  8192        /* bytes of each of the 3 parts of a long block (24 KiB) */
#define CRC32C_SHORT 256         /* bytes of each of the 3 parts of a short block (768 B) */

typedef uint32_t (*crc32c_fn_t)(uint32_t crc, const uint8_t *p, size_t len);

static uint32_t crc32c_table[8][256];
static uint32_t crc32c_shift_long[4][256];  /* shift by CRC32C_LONG zero bytes */
static uint32_t crc32c_shift_short[4][256]; /* shift by CRC32C_SHORT zero bytes */
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;
static crc32c_fn_t crc32c_fn;
static const char *crc32c_name = "software";
static enum tbrdma_crc32c_way crc32c_forced = TBRDMA_CRC32C_BEST;

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

/*
 * The shift tables for n zero bytes: the map is linear in the register, so its value on bit i
 * alone (the software loop over n zeros) gives every byte's entry by xor.
 */
static void crc32c_build_shift(uint32_t shift[4][256], size_t n)
{
    static const uint8_t zeros[CRC32C_LONG];
    uint32_t bit[32];

    for (int i = 0; i < 32; i++) {
        bit[i] = crc32c_software(1u << i, zeros, n);
    }
    for (int k = 0; k < 4; k++) {
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;

            for (int j = 0; j < 8; j++) {
                v ^= (b >> j & 1) ? bit[8 * k + j] : 0;
            }
            shift[k][b] = v;
        }
    }
}

static uint32_t crc32c_shift(const uint32_t shift[4][256], uint32_t crc)
{
    return shift[0][crc & 0xff] ^ shift[1][(crc >> 8) & 0xff] ^ shift[2][(crc >> 16) & 0xff]
           ^ shift[3][crc >> 24];
}

#ifdef CRC32C_HW_NAME
/* One stream of the instruction. */
CRC32C_HW_TARGET static uint32_t crc32c_hw_one(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len > 0 && 0 != ((uintptr_t) p & 7)) {
        crc = CRC32C_HW_STEP8(crc, *p++);
        len--;
    }
    while (len >= 8) {
        uint64_t w;

        memcpy(&w, p, sizeof(w));
        crc = CRC32C_HW_STEP64(crc, w);
        p += 8;
        len -= 8;
    }
    while (len-- > 0) {
        crc = CRC32C_HW_STEP8(crc, *p++);
    }
    return crc;
}

/* Blocks of 3 parts of n bytes (a multiple of 8) from *p while they fit; advances *p, *len. */
CRC32C_HW_TARGET static uint32_t crc32c_hw_blocks(uint32_t crc, const uint8_t **p, size_t *len,
                                                  size_t n, const uint32_t shift[4][256])
{
    const uint8_t *q = *p;

    for (; *len >= 3 * n; *len -= 3 * n, q += 2 * n) {
        const uint8_t *end = q + n;
        uint32_t c1 = 0;
        uint32_t c2 = 0;

        do {
            uint64_t w0;
            uint64_t w1;
            uint64_t w2;

            memcpy(&w0, q, sizeof(w0));
            memcpy(&w1, q + n, sizeof(w1));
            memcpy(&w2, q + 2 * n, sizeof(w2));
            crc = CRC32C_HW_STEP64(crc, w0);
            c1 = CRC32C_HW_STEP64(c1, w1);
            c2 = CRC32C_HW_STEP64(c2, w2);
            q += 8;
        } while (q < end);
        crc = crc32c_shift(shift, crc32c_shift(shift, crc) ^ c1) ^ c2;
    }
    *p = q;
    return crc;
}

/* Three streams at once over the long and the short blocks, one for the rest (and for a buffer
 * too short for a block: headers and small payloads go straight there). */
CRC32C_HW_TARGET static uint32_t crc32c_hw_three(uint32_t crc, const uint8_t *p, size_t len)
{
    if (len < 3 * CRC32C_SHORT) {
        return crc32c_hw_one(crc, p, len);
    }
    crc = crc32c_hw_blocks(crc, &p, &len, CRC32C_LONG, crc32c_shift_long);
    crc = crc32c_hw_blocks(crc, &p, &len, CRC32C_SHORT, crc32c_shift_short);
    return crc32c_hw_one(crc, p, len);
}
#endif

/* The function for the way asked for (crc32c_forced) that this CPU has. */
static void crc32c_select(void)
{
    crc32c_fn = crc32c_software;
    crc32c_name = "software";
#ifdef CRC32C_HW_NAME
#ifdef __x86_64__
    if (!__builtin_cpu_supports("sse4.2")) {
        return;
    }
#endif
    if (TBRDMA_CRC32C_ONE_STREAM == crc32c_forced) {
        crc32c_fn = crc32c_hw_one;
        crc32c_name = CRC32C_HW_NAME;
    } else if (TBRDMA_CRC32C_BEST == crc32c_forced) {
        crc32c_fn = crc32c_hw_three;
        crc32c_name = CRC32C_HW_NAME " x3";
    }
#endif
}

/* Once per process: the tables every way needs, then the best function. */
static void crc32c_init(void)
{
    crc32c_build_tables();
    crc32c_build_shift(crc32c_shift_long, CRC32C_LONG);
    crc32c_build_shift(crc32c_shift_short, CRC32C_SHORT);
    crc32c_select();
}

uint32_t tbrdma_crc32c_extend(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc32c_once, crc32c_init);
    return ~crc32c_fn(~crc, (const uint8_t *) buf, len);
}

uint32_t tbrdma_crc32c(const void *buf, size_t len)
{
    return tbrdma_crc32c_extend(0, buf, len);
}

const char *tbrdma_crc32c_impl(void)
{
    pthread_once(&crc32c_once, crc32c_init);
    return crc32c_name;
}

void tbrdma_crc32c_force(enum tbrdma_crc32c_way way)
{
    pthread_once(&crc32c_once, crc32c_init);
    crc32c_forced = way;
    crc32c_select();
}
