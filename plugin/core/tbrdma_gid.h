/*
 * GIDs: the 16-byte port addresses of verbs. tbrdma addresses every port by its IPv4-mapped GID
 * (::ffff:a.b.c.d), which Apple derives from the paired interface's IPv4 address; its index in
 * the port's GID table is the source GID index used everywhere (never a hard-coded 1).
 */
#ifndef TBRDMA_GID_H
#define TBRDMA_GID_H

#include "tbrdma_types.h"

#define TBRDMA_GID_STR_MAX 46 /* INET6_ADDRSTRLEN */

/* 1 when the GID is ::ffff:a.b.c.d, else 0. */
int tbrdma_gid_is_ipv4_mapped(const tbrdma_gid_t *gid);

/* The IPv4 address of an IPv4-mapped GID, host byte order. Only meaningful when mapped. */
uint32_t tbrdma_gid_ipv4(const tbrdma_gid_t *gid);

/* Builds ::ffff:a.b.c.d from an IPv4 address in host byte order. */
void tbrdma_gid_from_ipv4(uint32_t ipv4, tbrdma_gid_t *gid_p);

/* 1 when all 16 bytes are zero (an empty table slot). */
int tbrdma_gid_is_zero(const tbrdma_gid_t *gid);

/* Prints the GID in RFC 5952 text ("fe80::1", "::ffff:10.0.0.1"). Returns 0 or -ENOSPC. */
int tbrdma_gid_to_string(const tbrdma_gid_t *gid, char *buf, size_t len);

/* Parses IPv6 text (including "::ffff:a.b.c.d"). Returns 0 or -EINVAL; *gid_p set on success. */
int tbrdma_gid_parse(const char *text, tbrdma_gid_t *gid_p);

/*
 * Index of the IPv4-mapped GID in a table of n entries, -1 when there is none. When ipv4 is not
 * 0, only the GID mapping that address counts (the interface may hold several addresses).
 */
int tbrdma_gid_find_ipv4_mapped(const tbrdma_gid_t *table, int n, uint32_t ipv4);

/* Prints an IPv4 address (host byte order) as dotted quad. Returns 0 or -ENOSPC. */
int tbrdma_ipv4_to_string(uint32_t ipv4, char *buf, size_t len);

/*
 * Parses a dotted quad, optionally followed by "/prefix" when prefix_p is not NULL (then *prefix_p
 * is 32 without one). Returns 0 or -EINVAL; the outputs are set on success only.
 */
int tbrdma_ipv4_parse(const char *text, uint32_t *ipv4_p, int *prefix_p);

#endif /* TBRDMA_GID_H */
