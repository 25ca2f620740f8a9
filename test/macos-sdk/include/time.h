/* Stand-in for the macOS SDK's <time.h> (Libc include/time.h, sys/_types/_timespec.h): only what
 * tbrdma uses. */
#ifndef TBRDMA_MACOS_TIME_H
#define TBRDMA_MACOS_TIME_H
#include <sys/types.h>
struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
typedef enum {
    _CLOCK_REALTIME = 0,
    _CLOCK_MONOTONIC = 6,
} clockid_t;
#define CLOCK_REALTIME  _CLOCK_REALTIME
#define CLOCK_MONOTONIC _CLOCK_MONOTONIC
int clock_gettime(clockid_t, struct timespec *);
int nanosleep(const struct timespec *, struct timespec *);
#endif
