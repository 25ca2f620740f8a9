/* Stand-in for the macOS SDK's <sys/ioctl.h> with <sys/ioccom.h> (XNU bsd/sys/ioccom.h): the
 * command encoding _IOWR builds and ioctl itself. */
#ifndef TBRDMA_MACOS_SYS_IOCTL_H
#define TBRDMA_MACOS_SYS_IOCTL_H
#include <sys/types.h>
#define IOCPARM_MASK 0x1fff
#define IOC_VOID     (__uint32_t) 0x20000000
#define IOC_OUT      (__uint32_t) 0x40000000
#define IOC_IN       (__uint32_t) 0x80000000
#define IOC_INOUT    (IOC_IN | IOC_OUT)
#define _IOC(inout, group, num, len) \
    (inout | ((len & IOCPARM_MASK) << 16) | ((group) << 8) | (num))
#define _IOWR(g, n, t) _IOC(IOC_INOUT, (g), (n), sizeof(t))
int ioctl(int, unsigned long, ...);
#endif
