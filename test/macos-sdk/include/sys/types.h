/* Stand-in for the macOS SDK's <sys/types.h> (XNU bsd/sys/types.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_SYS_TYPES_H
#define TBRDMA_MACOS_SYS_TYPES_H
#include <sys/_types.h>
typedef __darwin_ssize_t ssize_t;
typedef __darwin_pid_t pid_t;
typedef __darwin_uid_t uid_t;
typedef __darwin_mode_t mode_t;
typedef __darwin_time_t time_t;
typedef __darwin_useconds_t useconds_t;
typedef __darwin_socklen_t socklen_t;
typedef uint8_t u_char;
typedef unsigned int u_int;
typedef unsigned long u_long;
#endif
