/* Stand-in for the macOS SDK's <arpa/inet.h> (Libc include/arpa/inet.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_ARPA_INET_H
#define TBRDMA_MACOS_ARPA_INET_H
#include <netinet/in.h>
const char *inet_ntop(int, const void *, char *, socklen_t);
int inet_pton(int, const char *, void *);
#endif
