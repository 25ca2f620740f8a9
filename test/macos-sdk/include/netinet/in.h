/* Stand-in for the macOS SDK's <netinet/in.h> (XNU bsd/netinet/in.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_NETINET_IN_H
#define TBRDMA_MACOS_NETINET_IN_H
#include <sys/socket.h>
typedef __uint32_t in_addr_t;
typedef __uint16_t in_port_t;
struct in_addr {
    in_addr_t s_addr;
};
struct sockaddr_in {
    __uint8_t sin_len;
    sa_family_t sin_family;
    in_port_t sin_port;
    struct in_addr sin_addr;
    char sin_zero[8];
};
/* <sys/_endian.h>: arm64 is little-endian */
#define ntohl(x) __builtin_bswap32((__uint32_t) (x))
#define htonl(x) __builtin_bswap32((__uint32_t) (x))
#define ntohs(x) __builtin_bswap16((__uint16_t) (x))
#define htons(x) __builtin_bswap16((__uint16_t) (x))
#endif
