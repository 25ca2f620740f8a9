/* Stand-in for the macOS SDK's <fcntl.h> (XNU bsd/sys/fcntl.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_FCNTL_H
#define TBRDMA_MACOS_FCNTL_H
#include <sys/types.h>
#define O_RDONLY   0x00000000
#define O_WRONLY   0x00000001
#define O_NOFOLLOW 0x00000100
#define O_CREAT    0x00000200
#define O_EXCL     0x00000800
int open(const char *, int, ...);
#endif
