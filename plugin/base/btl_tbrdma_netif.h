/*
 * Network interfaces paired with RDMA devices: the platform code of tbrdma, in one place.
 * macOS: rdma_enX pairs with enX. Linux: the same name rule first (the simulator's devices),
 * then sysfs (/sys/class/infiniband/<dev>/ports/<n>/gid_attrs/ndevs/0, as for rxe).
 * Opal-free and verbs-free.
 */
#ifndef BTL_TBRDMA_NETIF_H
#define BTL_TBRDMA_NETIF_H

#include "core/tbrdma_types.h"

/* Finds the interface paired with a device's port. Returns 0 or -ENOENT. */
int tbrdma_netif_pair(const char *device, int port_num, char *ifname, size_t len);

/*
 * Fills port->if_up, has_ipv4, ipv4, prefix and bridge from port->ifname (left as is when
 * ifname is empty). Returns 0 or a negative errno.
 */
int tbrdma_netif_fill(tbrdma_port_info_t *port);

/* This host's identity as Open MPI sees it (the node name). Returns 0 or -errno. */
int tbrdma_netif_hostname(char *buf, size_t len);

#endif /* BTL_TBRDMA_NETIF_H */
