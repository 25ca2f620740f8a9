/* Stand-in for the macOS SDK's <sys/sysctl.h> (XNU bsd/sys/sysctl.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_SYS_SYSCTL_H
#define TBRDMA_MACOS_SYS_SYSCTL_H
#include <sys/types.h>
int sysctlbyname(const char *, void *, size_t *, void *, size_t);
#endif
