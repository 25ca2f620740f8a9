/*
 * Explicit little-endian loads and stores for tbrdma's wire formats (the frame header of
 * tbrdma_wire.h and the zero-copy control messages of tbrdma_zc.h): free on the little-endian
 * hosts tbrdma runs on (arm64 Macs, x86-64 Linux) and correct anywhere. Opal-free.
 */
#ifndef TBRDMA_LE_H
#define TBRDMA_LE_H

#include <stdint.h>

static inline void tbrdma_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
}

static inline void tbrdma_put32(uint8_t *p, uint32_t v)
{
    tbrdma_put16(p, (uint16_t) v);
    tbrdma_put16(p + 2, (uint16_t) (v >> 16));
}

static inline void tbrdma_put64(uint8_t *p, uint64_t v)
{
    tbrdma_put32(p, (uint32_t) v);
    tbrdma_put32(p + 4, (uint32_t) (v >> 32));
}

static inline uint16_t tbrdma_get16(const uint8_t *p)
{
    return (uint16_t) (p[0] | (p[1] << 8));
}

static inline uint32_t tbrdma_get32(const uint8_t *p)
{
    return (uint32_t) tbrdma_get16(p) | ((uint32_t) tbrdma_get16(p + 2) << 16);
}

static inline uint64_t tbrdma_get64(const uint8_t *p)
{
    return (uint64_t) tbrdma_get32(p) | ((uint64_t) tbrdma_get32(p + 4) << 32);
}

#endif /* TBRDMA_LE_H */
