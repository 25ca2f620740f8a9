/* Stand-in for the macOS SDK's <sys/time.h> (XNU bsd/sys/_types/_timeval.h): only what tbrdma
 * uses (kern.boottime is a struct timeval). */
#ifndef TBRDMA_MACOS_SYS_TIME_H
#define TBRDMA_MACOS_SYS_TIME_H
#include <sys/types.h>
struct timeval {
    __darwin_time_t tv_sec;
    __int32_t tv_usec; /* __darwin_suseconds_t */
};
#endif
