/*
 * GIDs: tests, conversions and text forms of the 16-byte verbs port addresses. tbrdma only
 * ever uses the IPv4-mapped GID (::ffff:a.b.c.d, RFC 4291 section 2.5.5.2), so this file owns
 * recognising it, building it from an IPv4 address and finding it in a port's GID table.
 * Pure libc; no verbs, no Open MPI.
 */
#include "tbrdma_gid.h"
#include "tbrdma_mutate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Bytes 0..9 zero, 10..11 0xff: the IPv4-mapped prefix ::ffff:0:0/96. */
static const uint8_t gid_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

int tbrdma_gid_is_ipv4_mapped(const tbrdma_gid_t *gid)
{
    return 0 == memcmp(gid->raw, gid_mapped_prefix, sizeof(gid_mapped_prefix));
}

uint32_t tbrdma_gid_ipv4(const tbrdma_gid_t *gid)
{
    return ((uint32_t) gid->raw[12] << 24) | ((uint32_t) gid->raw[13] << 16)
           | ((uint32_t) gid->raw[14] << 8) | (uint32_t) gid->raw[15];
}

void tbrdma_gid_from_ipv4(uint32_t ipv4, tbrdma_gid_t *gid_p)
{
    memcpy(gid_p->raw, gid_mapped_prefix, sizeof(gid_mapped_prefix));
    gid_p->raw[12] = (uint8_t) (ipv4 >> 24);
    gid_p->raw[13] = (uint8_t) (ipv4 >> 16);
    gid_p->raw[14] = (uint8_t) (ipv4 >> 8);
    gid_p->raw[15] = (uint8_t) ipv4;
}

int tbrdma_gid_is_zero(const tbrdma_gid_t *gid)
{
    size_t i;

    for (i = 0; i < sizeof(gid->raw); i++) {
        if (0 != gid->raw[i]) {
            return 0;
        }
    }
    return 1;
}

int tbrdma_gid_to_string(const tbrdma_gid_t *gid, char *buf, size_t len)
{
    char text[INET6_ADDRSTRLEN];

    /* inet_ntop prints RFC 5952 form (longest zero run compressed, lowercase, mapped tail). */
    if (NULL == inet_ntop(AF_INET6, gid->raw, text, sizeof(text))) {
        return -ENOSPC;
    }
    if (NULL == buf || strlen(text) >= len) {
        return -ENOSPC;
    }
    memcpy(buf, text, strlen(text) + 1);
    return 0;
}

int tbrdma_gid_parse(const char *text, tbrdma_gid_t *gid_p)
{
    uint8_t raw[16];

    if (NULL == text || 1 != inet_pton(AF_INET6, text, raw)) {
        return -EINVAL;
    }
    memcpy(gid_p->raw, raw, sizeof(raw));
    return 0;
}

int tbrdma_gid_find_ipv4_mapped(const tbrdma_gid_t *table, int n, uint32_t ipv4)
{
    int i;

    if (TBRDMA_MUTANT(GID_INDEX_1)) {
        return (n > 1) ? 1 : -1;
    }
    for (i = 0; i < n; i++) {
        if (!tbrdma_gid_is_ipv4_mapped(&table[i])) {
            continue;
        }
        if (0 == ipv4 || tbrdma_gid_ipv4(&table[i]) == ipv4) {
            return i;
        }
    }
    return -1;
}

int tbrdma_ipv4_to_string(uint32_t ipv4, char *buf, size_t len)
{
    int n;

    if (NULL == buf || 0 == len) {
        return -ENOSPC;
    }
    n = snprintf(buf, len, "%u.%u.%u.%u", (unsigned) (ipv4 >> 24), (unsigned) (ipv4 >> 16) & 0xff,
                 (unsigned) (ipv4 >> 8) & 0xff, (unsigned) ipv4 & 0xff);
    if (n < 0 || (size_t) n >= len) {
        buf[0] = '\0';
        return -ENOSPC;
    }
    return 0;
}

int tbrdma_ipv4_parse(const char *text, uint32_t *ipv4_p, int *prefix_p)
{
    char quad[16], *end;
    const char *slash = (NULL != text) ? strchr(text, '/') : NULL;
    size_t n = (NULL != slash) ? (size_t) (slash - text) : (NULL != text ? strlen(text) : 0);
    struct in_addr addr;
    long prefix = 32;

    if (NULL == text || 0 == n || sizeof(quad) <= n || (NULL != slash && NULL == prefix_p)) {
        return -EINVAL;
    }
    memcpy(quad, text, n);
    quad[n] = '\0';
    if (1 != inet_pton(AF_INET, quad, &addr)) {
        return -EINVAL;
    }
    if (NULL != slash) {
        prefix = strtol(slash + 1, &end, 10);
        if (end == slash + 1 || '\0' != *end || 0 > prefix || 32 < prefix) {
            return -EINVAL;
        }
    }
    *ipv4_p = ntohl(addr.s_addr);
    if (NULL != prefix_p) {
        *prefix_p = (int) prefix;
    }
    return 0;
}
