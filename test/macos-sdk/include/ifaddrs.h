/* Stand-in for the macOS SDK's <ifaddrs.h> (Libc include/ifaddrs.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_IFADDRS_H
#define TBRDMA_MACOS_IFADDRS_H
struct ifaddrs {
    struct ifaddrs *ifa_next;
    char *ifa_name;
    unsigned int ifa_flags;
    struct sockaddr *ifa_addr;
    struct sockaddr *ifa_netmask;
    struct sockaddr *ifa_dstaddr;
    void *ifa_data;
};
int getifaddrs(struct ifaddrs **);
void freeifaddrs(struct ifaddrs *);
#endif
