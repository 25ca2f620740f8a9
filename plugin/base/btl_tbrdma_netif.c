/*
 * Network interfaces paired with RDMA devices: the only platform-specific code of tbrdma.
 *
 * Pairing: "rdma_X" pairs with interface "X" everywhere (Apple's naming, and the simulator's);
 * on Linux, sysfs names the netdev of a verbs port (rxe). Interface facts come from getifaddrs.
 * Bridge membership comes from the kernel of the caller's network namespace: rtnetlink on Linux
 * (sysfs keeps showing the namespace it was mounted in after setns/nsenter, and the simulator
 * runs hosts as namespaces), the bridge driver's SIOCGDRVSPEC ioctl on macOS.
 * Opal-free and verbs-free: the plugin and the tools link it.
 */
#include "base/btl_tbrdma_netif.h"

#include "core/tbrdma_diag.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#endif

#ifdef __APPLE__
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#endif

#define NETIF_SYSFS_IB "/sys/class/infiniband"

static void netif_copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src);
}

/* Rule 1: "rdma_en2" pairs with "en2" when that interface exists here. */
static int netif_pair_by_name(const char *device, char *ifname, size_t len)
{
    const char *iface = tbrdma_diag_iface_of(device);

    if (iface == device || '\0' == iface[0]) {
        return -ENOENT; /* no "rdma_" prefix, or nothing after it */
    }
    if (0 == if_nametoindex(iface)) {
        return -ENOENT;
    }
    netif_copy(ifname, len, iface);
    return 0;
}

#ifdef __linux__
/* Reads the first line of a sysfs file into buf, without its newline. */
static int netif_read_line(const char *path, char *buf, size_t len)
{
    FILE *file = fopen(path, "r");
    int rc = -ENOENT;

    if (NULL == file) {
        return -errno;
    }
    if (NULL != fgets(buf, (int) len, file)) {
        buf[strcspn(buf, "\n")] = '\0';
        rc = ('\0' == buf[0]) ? -ENOENT : 0;
    }
    fclose(file);
    return rc;
}

/* The first entry of /sys/class/infiniband/<dev>/device/net/ (the PCI function's netdev). */
static int netif_pair_by_device_net(const char *device, char *ifname, size_t len)
{
    char path[256];
    struct dirent *entry;
    DIR *dir;
    int rc = -ENOENT;

    snprintf(path, sizeof(path), NETIF_SYSFS_IB "/%s/device/net", device);
    dir = opendir(path);
    if (NULL == dir) {
        return -ENOENT;
    }
    while (NULL != (entry = readdir(dir))) {
        if ('.' != entry->d_name[0]) {
            netif_copy(ifname, len, entry->d_name);
            rc = 0;
            break;
        }
    }
    closedir(dir);
    return rc;
}

/* Rule 2: the netdev sysfs gives for GID 0 of the port (rxe), else the device's netdev. */
static int netif_pair_by_sysfs(const char *device, int port_num, char *ifname, size_t len)
{
    char path[256];

    snprintf(path, sizeof(path), NETIF_SYSFS_IB "/%s/ports/%d/gid_attrs/ndevs/0", device, port_num);
    if (0 == netif_read_line(path, ifname, len)) {
        return 0;
    }
    return netif_pair_by_device_net(device, ifname, len);
}
#endif /* __linux__ */

int tbrdma_netif_pair(const char *device, int port_num, char *ifname, size_t len)
{
    if (0 == netif_pair_by_name(device, ifname, len)) {
        return 0;
    }
#ifdef __linux__
    if (0 == netif_pair_by_sysfs(device, port_num, ifname, len)) {
        return 0;
    }
#else
    (void) port_num;
#endif
    return -ENOENT;
}

static int netif_prefix_len(const struct sockaddr *netmask)
{
    uint32_t mask;
    int prefix = 0;

    if (NULL == netmask || AF_INET != netmask->sa_family) {
        return 32;
    }
    mask = ntohl(((const struct sockaddr_in *) netmask)->sin_addr.s_addr);
    while (0 != (mask & 0x80000000u)) {
        prefix++;
        mask <<= 1;
    }
    return prefix;
}

/* Fills if_up and the first IPv4 address. Returns 0, or -ENODEV when ifname is not here. */
static int netif_fill_addresses(tbrdma_port_info_t *port)
{
    struct ifaddrs *list, *ifa;
    int found = 0;

    if (0 != getifaddrs(&list)) {
        return -errno;
    }
    for (ifa = list; NULL != ifa; ifa = ifa->ifa_next) {
        if (0 != strcmp(ifa->ifa_name, port->ifname)) {
            continue;
        }
        found = 1;
        port->if_up = (IFF_UP | IFF_RUNNING) == (ifa->ifa_flags & (IFF_UP | IFF_RUNNING));
        if (port->has_ipv4 || NULL == ifa->ifa_addr || AF_INET != ifa->ifa_addr->sa_family) {
            continue;
        }
        port->has_ipv4 = 1;
        port->ipv4 = ntohl(((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr.s_addr);
        port->prefix = netif_prefix_len(ifa->ifa_netmask);
    }
    freeifaddrs(list);
    return found ? 0 : -ENODEV;
}

#ifdef __linux__
/* What one RTM_GETLINK answer says about an interface. */
typedef struct netif_link {
    char name[IF_NAMESIZE];
    char kind[16]; /* IFLA_INFO_KIND: "bridge", "veth", ... or "" */
    int master;    /* ifindex of the master device, 0 when none */
} netif_link_t;

static void netif_parse_linkinfo(struct rtattr *info, netif_link_t *link)
{
    int len = RTA_PAYLOAD(info);
    struct rtattr *rta;

    for (rta = RTA_DATA(info); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        if (IFLA_INFO_KIND == rta->rta_type) {
            snprintf(link->kind, sizeof(link->kind), "%.*s", (int) RTA_PAYLOAD(rta),
                     (const char *) RTA_DATA(rta));
        }
    }
}

static int netif_parse_link(struct nlmsghdr *nlh, netif_link_t *link)
{
    struct ifinfomsg *ifi = NLMSG_DATA(nlh);
    int len = IFLA_PAYLOAD(nlh);
    struct rtattr *rta;

    memset(link, 0, sizeof(*link));
    for (rta = IFLA_RTA(ifi); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        if (IFLA_IFNAME == rta->rta_type) {
            snprintf(link->name, sizeof(link->name), "%.*s", (int) RTA_PAYLOAD(rta),
                     (const char *) RTA_DATA(rta));
        } else if (IFLA_MASTER == rta->rta_type && RTA_PAYLOAD(rta) >= sizeof(int)) {
            memcpy(&link->master, RTA_DATA(rta), sizeof(int));
        } else if (IFLA_LINKINFO == rta->rta_type) {
            netif_parse_linkinfo(rta, link);
        }
    }
    return 0;
}

/* Reads the answer to one RTM_GETLINK request. */
static int netif_rtnl_recv(int fd, netif_link_t *link)
{
    char buf[32768];
    struct nlmsghdr *nlh;
    ssize_t len = recv(fd, buf, sizeof(buf), 0);

    if (len < 0) {
        return -errno;
    }
    for (nlh = (struct nlmsghdr *) buf; NLMSG_OK(nlh, (size_t) len); nlh = NLMSG_NEXT(nlh, len)) {
        if (NLMSG_ERROR == nlh->nlmsg_type) {
            struct nlmsgerr *nle = NLMSG_DATA(nlh);
            return (0 != nle->error) ? nle->error : -EPROTO;
        }
        if (RTM_NEWLINK == nlh->nlmsg_type) {
            return netif_parse_link(nlh, link);
        }
    }
    return -EPROTO;
}

/* RTM_GETLINK for one ifindex, asked of the network namespace the caller is in now. */
static int netif_rtnl_getlink(int ifindex, netif_link_t *link)
{
    struct {
        struct nlmsghdr nlh;
        struct ifinfomsg ifi;
    } req;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    int fd, rc;

    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        return -errno;
    }
    memset(&req, 0, sizeof(req));
    req.nlh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
    req.nlh.nlmsg_type = RTM_GETLINK;
    req.nlh.nlmsg_flags = NLM_F_REQUEST;
    req.nlh.nlmsg_seq = 1;
    req.ifi.ifi_family = AF_UNSPEC;
    req.ifi.ifi_index = ifindex;
    if (sendto(fd, &req, req.nlh.nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0) {
        rc = -errno;
    } else {
        rc = netif_rtnl_recv(fd, link);
    }
    close(fd);
    return rc;
}

/* The bridge ifname is enslaved to: its master, when the master is of kind "bridge". */
static int netif_fill_bridge(tbrdma_port_info_t *port)
{
    netif_link_t link, master;
    int ifindex = (int) if_nametoindex(port->ifname);
    int rc;

    if (0 == ifindex) {
        return -ENODEV;
    }
    rc = netif_rtnl_getlink(ifindex, &link);
    if (0 != rc || 0 == link.master) {
        return rc;
    }
    rc = netif_rtnl_getlink(link.master, &master);
    if (0 == rc && 0 == strcmp(master.kind, "bridge")) {
        netif_copy(port->bridge, sizeof(port->bridge), master.name);
    }
    return rc;
}
#endif /* __linux__ */

#ifdef __APPLE__
/*
 * The bridge driver's member list. <net/if_bridgevar.h> is not in the public SDK, so the few
 * definitions used are restated here from XNU's bsd/net/if_bridgevar.h (APSL, layout only):
 * BRDGGIFS is driver command 6, and the 64-bit ioctl argument layout of struct ifdrv is
 * {name[IFNAMSIZ], unsigned long cmd, size_t len, void *data}. Both bridge structs are 4-packed.
 */
#define NETIF_BRDGGIFS     6
#define NETIF_SIOCGDRVSPEC _IOWR('i', 123, struct netif_ifdrv)

struct netif_ifdrv {
    char ifd_name[IFNAMSIZ];
    unsigned long ifd_cmd;
    size_t ifd_len;
    void *ifd_data;
};

#pragma pack(4)
struct netif_ifbreq {
    char ifbr_ifsname[IFNAMSIZ];
    uint32_t ifbr_ifsflags, ifbr_stpflags, ifbr_path_cost;
    uint8_t ifbr_portno, ifbr_priority, ifbr_proto, ifbr_role, ifbr_state;
    uint32_t ifbr_addrcnt, ifbr_addrmax, ifbr_addrexceeded;
    uint8_t pad[32];
};

struct netif_ifbifconf {
    uint32_t ifbic_len;
    void *ifbic_buf;
};
#pragma pack()

#define NETIF_BRIDGE_MEMBERS_MAX 32

/* 1 when ifname is a member of bridge, 0 when not, -errno when the bridge cannot be read. */
static int netif_bridge_has_member(int fd, const char *bridge, const char *ifname)
{
    struct netif_ifbreq members[NETIF_BRIDGE_MEMBERS_MAX];
    struct netif_ifbifconf conf;
    struct netif_ifdrv drv;
    uint32_t i;

    memset(&drv, 0, sizeof(drv));
    memset(members, 0, sizeof(members));
    conf.ifbic_len = sizeof(members);
    conf.ifbic_buf = members;
    snprintf(drv.ifd_name, sizeof(drv.ifd_name), "%s", bridge);
    drv.ifd_cmd = NETIF_BRDGGIFS;
    drv.ifd_len = sizeof(conf);
    drv.ifd_data = &conf;
    if (ioctl(fd, NETIF_SIOCGDRVSPEC, &drv) < 0) {
        return -errno;
    }
    for (i = 0; i < conf.ifbic_len / sizeof(members[0]) && i < NETIF_BRIDGE_MEMBERS_MAX; i++) {
        if (0 == strncmp(members[i].ifbr_ifsname, ifname, IFNAMSIZ)) {
            return 1;
        }
    }
    return 0;
}

/* Asks every bridgeN interface (Thunderbolt Bridge is bridge0) whether ifname is a member. */
static int netif_fill_bridge(tbrdma_port_info_t *port)
{
    struct ifaddrs *list, *ifa;
    int fd;

    if (0 != getifaddrs(&list)) {
        return -errno;
    }
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    for (ifa = list; fd >= 0 && NULL != ifa; ifa = ifa->ifa_next) {
        if (0 != strncmp(ifa->ifa_name, "bridge", 6) || NULL == ifa->ifa_addr
            || AF_LINK != ifa->ifa_addr->sa_family) {
            continue;
        }
        if (1 == netif_bridge_has_member(fd, ifa->ifa_name, port->ifname)) {
            netif_copy(port->bridge, sizeof(port->bridge), ifa->ifa_name);
            break;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    freeifaddrs(list);
    return 0;
}
#endif /* __APPLE__ */

int tbrdma_netif_fill(tbrdma_port_info_t *port)
{
    int rc;

    if ('\0' == port->ifname[0]) {
        return 0;
    }
    port->if_up = 0;
    port->has_ipv4 = 0;
    port->ipv4 = 0;
    port->prefix = 0;
    port->bridge[0] = '\0';
    rc = netif_fill_addresses(port);
    if (0 != rc) {
        return rc;
    }
#if defined(__linux__) || defined(__APPLE__)
    return netif_fill_bridge(port);
#else
    return 0;
#endif
}

int tbrdma_netif_hostname(char *buf, size_t len)
{
    if (0 == len) {
        return -EINVAL;
    }
    if (0 != gethostname(buf, len)) {
        return -errno;
    }
    /* POSIX leaves truncation unterminated. */
    buf[len - 1] = '\0';
    return 0;
}
