/*
 * tbrdma core types: the facts tbrdma knows about a Thunderbolt RDMA port, shared by the
 * discovery layer (which fills them from verbs and the OS), the pure logic in core/ (which
 * diagnoses, encodes and solves on them) and the tools.
 *
 * This header is opal-free and verbs-free: it must compile anywhere with a C99 compiler, so
 * numeric values that mirror verbs enums (port state, link layer, MTU) are plain ints whose
 * values are those of <infiniband/verbs.h>.
 */
#ifndef TBRDMA_TYPES_H
#define TBRDMA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_NAME_MAX    32 /* device or interface name, including the NUL */
#define TBRDMA_HOST_MAX    64 /* host identity, including the NUL */
#define TBRDMA_GID_TBL_MAX 16 /* GID entries kept per port (Apple shows 3) */
#define TBRDMA_MAX_PORTS   16 /* ports per host (M3 Ultra Mac Studio: 6) */
#define TBRDMA_MAX_HOSTS   64 /* hosts in one job's mesh (JACCL's mesh: 8) */

/* Values of enum ibv_port_state. */
#define TBRDMA_PORT_STATE_DOWN   1
#define TBRDMA_PORT_STATE_ACTIVE 4

/* Values of IBV_LINK_LAYER_*; 100 is Apple's IBV_LINK_LAYER_THUNDERBOLT. */
#define TBRDMA_LINK_LAYER_INFINIBAND  1
#define TBRDMA_LINK_LAYER_ETHERNET    2
#define TBRDMA_LINK_LAYER_THUNDERBOLT 100

typedef struct tbrdma_gid {
    uint8_t raw[16];
} tbrdma_gid_t;

/*
 * Everything discovery learns about one port. Filled by the discovery layer; read by core/.
 * ipv4 is in host byte order (192.168.0.1 == 0xc0a80001).
 */
typedef struct tbrdma_port_info {
    char device[TBRDMA_NAME_MAX]; /* verbs device, "rdma_en3" */
    int port_num;                 /* verbs port number, 1 on Apple */
    int state;                    /* TBRDMA_PORT_STATE_* (ibv_port_state value) */
    int link_layer;               /* TBRDMA_LINK_LAYER_* */
    int active_mtu;               /* ibv_mtu value: 1=256 ... 5=4096 */
    char ifname[TBRDMA_NAME_MAX]; /* paired network interface, "" when none was found */
    int if_up;                    /* the interface is administratively and operationally up */
    int has_ipv4;                 /* the interface holds an IPv4 address */
    uint32_t ipv4;                /* that address (first one), host byte order */
    int prefix;                   /* its prefix length, 0..32 */
    char bridge[TBRDMA_NAME_MAX]; /* bridge the interface is enslaved to, "" when none */
    int gid_count;                /* entries filled in gids[] (the table's length, capped) */
    tbrdma_gid_t gids[TBRDMA_GID_TBL_MAX];
    int gid_index; /* index of the IPv4-mapped GID in gids[], -1 when there is none */
} tbrdma_port_info_t;

#endif /* TBRDMA_TYPES_H */
