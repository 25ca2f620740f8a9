/* Stand-in for the macOS SDK's <net/if.h> (XNU bsd/net/if.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_NET_IF_H
#define TBRDMA_MACOS_NET_IF_H
#include <sys/socket.h>
#define IFNAMSIZ    16
#define IFF_UP      0x1
#define IFF_RUNNING 0x40
unsigned int if_nametoindex(const char *);
#endif
