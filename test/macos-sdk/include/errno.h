/* Stand-in for the macOS SDK's <errno.h> (<sys/errno.h>, XNU bsd/sys/errno.h): only what tbrdma's
 * macOS code uses, for test/macos-sdk/check.sh's syntax check. Values as in XNU. */
#ifndef TBRDMA_MACOS_ERRNO_H
#define TBRDMA_MACOS_ERRNO_H
extern int *__error(void);
#define errno (*__error())
#define EPERM  1
#define ENOENT 2
#define ESRCH  3
#define EINTR  4
#define EIO    5
#define EBADF  9
#define ECHILD 10
#define ENOMEM 12
#define EBUSY  16
#define ENODEV 19
#define EINVAL 22
#define ENOSYS 78
#endif
