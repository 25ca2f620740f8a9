/*
 * tbsim view of a simulated Thunderbolt interface, read live in the caller's network
 * namespace: link flags, MAC and bridge master through rtnetlink (never sysfs, which shows
 * the namespace sysfs was mounted in), addresses through getifaddrs. Also the GID table Apple
 * derives from those addresses.
 */
#ifndef TBSIM_NET_H
#define TBSIM_NET_H

#include <stdint.h>

struct tbsim_link {
    int present;
    int up;     /* administratively up and carrier (IFF_UP and IFF_LOWER_UP) */
    int master; /* ifindex of the bridge (or other master) holding it, 0 when none */
    int has_mac;
    uint8_t mac[6];
};

struct tbsim_addrs {
    int has_ipv4;
    uint32_t ipv4; /* network byte order, the first address */
    int has_ll6;
    uint8_t ll6[16]; /* the interface's own IPv6 link-local */
};

/* Reads the link facts of ifname. Returns 0 (present == 0 when it does not exist) or -errno. */
int tbsim_net_link(const char *ifname, struct tbsim_link *link);

/*
 * A change feed for the data path: a non-blocking rtnetlink socket subscribed to link and
 * address events of the caller's namespace. Reading it never waits for the kernel's rtnl lock,
 * which the full re-read (tbsim_net_link, tbsim_net_addrs) takes and which busy hosts can hold
 * for seconds. Returns the descriptor, or -1 when none could be opened (then every check says
 * "changed" and the data path re-reads as before).
 */
int tbsim_net_watch_open(void);

/* 1 when anything changed since the last call (or the feed overflowed, or there is none), else
 * 0. Drains what is queued without blocking. */
int tbsim_net_watch_changed(int fd);

/* Reads the addresses of ifname. Returns 0 or -errno. */
int tbsim_net_addrs(const char *ifname, struct tbsim_addrs *addrs);

/* fe80::/64 with the EUI-64 interface id of mac (also the node GUID's bytes). */
void tbsim_net_eui64(const uint8_t mac[6], uint8_t eui[8]);

/*
 * Fills the compact GID table (see test/sim/README.md): [0] fe80 EUI-64, then ::ffff:IPv4 if
 * the interface has an IPv4, then its own IPv6 link-local if any; the rest zero.
 * Returns the number of filled entries.
 */
int tbsim_net_gids(const struct tbsim_link *link, const struct tbsim_addrs *addrs,
                   uint8_t gids[][16], int len);

/* ::ffff:a.b.c.d for an IPv4 in network byte order. */
void tbsim_net_v4mapped(uint32_t ipv4, uint8_t gid[16]);

/* The IPv4 of an IPv4-mapped GID (network order), or 0 when gid is not IPv4-mapped. */
uint32_t tbsim_net_gid_ipv4(const uint8_t gid[16]);

#endif /* TBSIM_NET_H */
