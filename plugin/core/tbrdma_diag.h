/*
 * Diagnostics: turns what discovery found into one message per problem that names the host,
 * the device, the interface and the fix. The text lives here only; the plugin frames it with
 * Open MPI's help mechanism where it can, the tools print it as is.
 */
#ifndef TBRDMA_DIAG_H
#define TBRDMA_DIAG_H

#include "tbrdma_types.h"

#include <string.h>

#define TBRDMA_DIAG_DEVICE_PREFIX "rdma_" /* Apple names a device rdma_<its interface> */

typedef enum tbrdma_diag {
    TBRDMA_DIAG_OK = 0,        /* usable: ACTIVE, IPv4 present, IPv4-mapped GID found */
    TBRDMA_DIAG_BRIDGED,       /* the interface is enslaved to a bridge (Thunderbolt Bridge) */
    TBRDMA_DIAG_PORT_DOWN,     /* no cable, peer without RDMA, bridge active on the peer */
    TBRDMA_DIAG_NO_INTERFACE,  /* no network interface pairs with the device */
    TBRDMA_DIAG_NO_IPV4,       /* no IPv4 on the interface: the field's RTR errno 22 */
    TBRDMA_DIAG_NO_MAPPED_GID, /* IPv4 present, but the GID table has no ::ffff:a.b.c.d */
    TBRDMA_DIAG_COUNT
} tbrdma_diag_t;

/* The first problem of the port, in the order of the enum (a bridge explains a down port). */
tbrdma_diag_t tbrdma_diag_port(const tbrdma_port_info_t *port);

/* Short stable name: "ok", "bridged", "port-down", "no-interface", "no-ipv4", "no-mapped-gid". */
const char *tbrdma_diag_name(tbrdma_diag_t diag);

/*
 * One message for a port problem: "host H: device D (interface I): <what is wrong>; fix: <how>".
 * host may be NULL. Returns the length the full message needs (snprintf-like; truncates).
 */
size_t tbrdma_diag_port_message(const tbrdma_port_info_t *port, tbrdma_diag_t diag,
                                const char *host, char *buf, size_t len);

/* No verbs library could be loaded from lib (the path tried) with the loader's error text. */
size_t tbrdma_diag_no_library_message(const char *host, const char *lib, const char *why, char *buf,
                                      size_t len);

/* The library loaded but lists no RDMA device: RDMA disabled, or not a Thunderbolt 5 Mac. */
size_t tbrdma_diag_no_devices_message(const char *host, const char *lib, char *buf, size_t len);

/* The interface Apple pairs with a device: "en2" for "rdma_en2", else the device name itself. */
static inline const char *tbrdma_diag_iface_of(const char *device)
{
    size_t n = sizeof(TBRDMA_DIAG_DEVICE_PREFIX) - 1;

    return (0 == strncmp(device, TBRDMA_DIAG_DEVICE_PREFIX, n)) ? device + n : device;
}

#endif /* TBRDMA_DIAG_H */
