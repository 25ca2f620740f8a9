/*
 * tbsim interface queries in the caller's network namespace (rtnetlink, getifaddrs) and the
 * GID table derived from them. Control path only: the data path reads the change feed
 * (tbsim_net_watch_changed, one non-blocking recv) at most once per TBSIM_LINK_RECHECK_NS per
 * context and re-reads the interface only when it reports a change.
 */
#include "tbsim_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct link_req {
    struct nlmsghdr nh;
    struct ifinfomsg ifi;
    char attrs[64];
};

static int link_request(int fd, const char *ifname)
{
    struct link_req req;
    struct rtattr *rta;
    size_t nlen = strlen(ifname) + 1;

    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_type = RTM_GETLINK;
    req.nh.nlmsg_flags = NLM_F_REQUEST;
    req.nh.nlmsg_seq = 1;
    req.ifi.ifi_family = AF_UNSPEC;
    rta = (struct rtattr *) req.attrs;
    rta->rta_type = IFLA_IFNAME;
    rta->rta_len = RTA_LENGTH(nlen);
    memcpy(RTA_DATA(rta), ifname, nlen);
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi)) + RTA_ALIGN(rta->rta_len);
    if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
        return -errno;
    }
    return 0;
}

static void link_parse(struct nlmsghdr *nh, struct tbsim_link *link)
{
    struct ifinfomsg *ifi = NLMSG_DATA(nh);
    int len = (int) IFLA_PAYLOAD(nh);

    link->present = 1;
    link->up = (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_LOWER_UP);
    for (struct rtattr *rta = IFLA_RTA(ifi); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
        if (IFLA_MASTER == rta->rta_type && RTA_PAYLOAD(rta) >= sizeof(int)) {
            memcpy(&link->master, RTA_DATA(rta), sizeof(int));
        } else if (IFLA_ADDRESS == rta->rta_type && 6 == RTA_PAYLOAD(rta)) {
            memcpy(link->mac, RTA_DATA(rta), 6);
            link->has_mac = 1;
        }
    }
}

int tbsim_net_link(const char *ifname, struct tbsim_link *link)
{
    char buf[8192];
    struct nlmsghdr *nh = (struct nlmsghdr *) buf;
    ssize_t n;
    int fd;
    int rc;

    memset(link, 0, sizeof(*link));
    if (IFNAMSIZ <= strlen(ifname)) {
        return 0;
    }
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        return -errno;
    }
    rc = link_request(fd, ifname);
    if (0 != rc) {
        goto out_close;
    }
    n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0) {
        rc = -errno;
        goto out_close;
    }
    if (NLMSG_OK(nh, (size_t) n) && RTM_NEWLINK == nh->nlmsg_type) {
        link_parse(nh, link);
    }
    /* NLMSG_ERROR (ENODEV) leaves present == 0: the interface does not exist here */
out_close:
    close(fd);
    return rc;
}

int tbsim_net_watch_open(void)
{
    struct sockaddr_nl sa;
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

    if (fd < 0) {
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.nl_family = AF_NETLINK;
    sa.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
    if (0 != bind(fd, (struct sockaddr *) &sa, sizeof(sa))) {
        close(fd);
        return -1;
    }
    return fd;
}

int tbsim_net_watch_changed(int fd)
{
    char buf[4096];
    int changed = 0;

    if (fd < 0) {
        return 1;
    }
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

        if (n > 0) {
            changed = 1;
        } else if (n < 0 && EINTR == errno) {
            continue;
        } else if (n < 0 && ENOBUFS == errno) {
            changed = 1; /* events were lost: re-read to be sure */
        } else {
            return changed; /* EAGAIN: drained */
        }
    }
}

int tbsim_net_addrs(const char *ifname, struct tbsim_addrs *addrs)
{
    struct ifaddrs *list;

    memset(addrs, 0, sizeof(*addrs));
    if (0 != getifaddrs(&list)) {
        return -errno;
    }
    for (struct ifaddrs *ifa = list; NULL != ifa; ifa = ifa->ifa_next) {
        if (NULL == ifa->ifa_addr || 0 != strcmp(ifa->ifa_name, ifname)) {
            continue;
        }
        if (AF_INET == ifa->ifa_addr->sa_family && !addrs->has_ipv4) {
            addrs->ipv4 = ((struct sockaddr_in *) ifa->ifa_addr)->sin_addr.s_addr;
            addrs->has_ipv4 = 1;
        } else if (AF_INET6 == ifa->ifa_addr->sa_family && !addrs->has_ll6) {
            const uint8_t *a = ((struct sockaddr_in6 *) ifa->ifa_addr)->sin6_addr.s6_addr;

            if (0xfe == a[0] && 0x80 == (a[1] & 0xc0)) {
                memcpy(addrs->ll6, a, 16);
                addrs->has_ll6 = 1;
            }
        }
    }
    freeifaddrs(list);
    return 0;
}

void tbsim_net_eui64(const uint8_t mac[6], uint8_t eui[8])
{
    eui[0] = mac[0] ^ 0x02; /* flip the universal/local bit (RFC 4291 appendix A) */
    eui[1] = mac[1];
    eui[2] = mac[2];
    eui[3] = 0xff;
    eui[4] = 0xfe;
    eui[5] = mac[3];
    eui[6] = mac[4];
    eui[7] = mac[5];
}

void tbsim_net_v4mapped(uint32_t ipv4, uint8_t gid[16])
{
    memset(gid, 0, 16);
    gid[10] = 0xff;
    gid[11] = 0xff;
    memcpy(&gid[12], &ipv4, 4);
}

uint32_t tbsim_net_gid_ipv4(const uint8_t gid[16])
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    uint32_t ipv4;

    if (0 != memcmp(gid, prefix, sizeof(prefix))) {
        return 0;
    }
    memcpy(&ipv4, &gid[12], 4);
    return ipv4;
}

int tbsim_net_gids(const struct tbsim_link *link, const struct tbsim_addrs *addrs,
                   uint8_t gids[][16], int len)
{
    int n = 0;

    memset(gids, 0, (size_t) len * 16);
    if (len < 3) {
        return 0;
    }
    gids[n][0] = 0xfe;
    gids[n][1] = 0x80;
    if (link->has_mac) {
        tbsim_net_eui64(link->mac, &gids[n][8]);
    }
    n++;
    if (addrs->has_ipv4) {
        tbsim_net_v4mapped(addrs->ipv4, gids[n++]);
    }
    if (addrs->has_ll6) {
        memcpy(gids[n++], addrs->ll6, 16);
    }
    return n;
}
