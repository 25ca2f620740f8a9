/* Stand-in for the macOS SDK's <sys/socket.h> (XNU bsd/sys/socket.h): only what tbrdma uses.
 * BSD's sockaddr starts with its length (sa_len); AF_LINK is 18, AF_INET6 30. */
#ifndef TBRDMA_MACOS_SYS_SOCKET_H
#define TBRDMA_MACOS_SYS_SOCKET_H
#include <sys/types.h>
typedef __uint8_t sa_family_t;
struct sockaddr {
    __uint8_t sa_len;
    sa_family_t sa_family;
    char sa_data[14];
};
#define SOCK_STREAM 1
#define SOCK_DGRAM  2
#define AF_UNSPEC   0
#define AF_INET     2
#define AF_LINK     18
#define AF_INET6    30
int socket(int, int, int);
#endif
