/* Stand-in for the macOS SDK's <sys/_types.h> (XNU bsd/sys/_types.h, bsd/arm/_types.h): the
 * integer types the other stand-ins use. */
#ifndef TBRDMA_MACOS_SYS__TYPES_H
#define TBRDMA_MACOS_SYS__TYPES_H
#include <stddef.h>
#include <stdint.h>
typedef uint8_t __uint8_t;
typedef uint16_t __uint16_t;
typedef uint32_t __uint32_t;
typedef int32_t __int32_t;
typedef int64_t __int64_t;
typedef uint64_t __uint64_t;
typedef long __darwin_ssize_t;
typedef int32_t __darwin_pid_t;
typedef uint32_t __darwin_uid_t;
typedef uint16_t __darwin_mode_t;
typedef long __darwin_time_t;
typedef uint32_t __darwin_useconds_t;
typedef uint32_t __darwin_socklen_t;
#endif
