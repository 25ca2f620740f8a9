/* Stand-in for the macOS SDK's <sys/event.h> (XNU bsd/sys/event.h): only what tbrdma uses, the
 * kqueue watch of a process's exit (plugin/base/btl_tbrdma_procwatch.c). */
#ifndef TBRDMA_MACOS_SYS_EVENT_H
#define TBRDMA_MACOS_SYS_EVENT_H
#include <sys/types.h>
#include <time.h>
#define EVFILT_PROC (-5)         /* attached to a process */
#define EV_ADD      0x0001       /* add the event to the kqueue */
#define EV_ONESHOT  0x0010       /* delete it once it fired */
#define EV_ERROR    0x4000       /* error, data holds the errno */
#define NOTE_EXIT   0x80000000U  /* the process exited */
struct kevent {
    uintptr_t ident;
    int16_t filter;
    uint16_t flags;
    uint32_t fflags;
    intptr_t data;
    void *udata;
};
#define EV_SET(kevp, a, b, c, d, e, f) \
    do {                               \
        struct kevent *__kevp__ = (kevp); \
        __kevp__->ident = (a);         \
        __kevp__->filter = (b);        \
        __kevp__->flags = (c);         \
        __kevp__->fflags = (d);        \
        __kevp__->data = (e);          \
        __kevp__->udata = (f);         \
    } while (0)
int kqueue(void);
int kevent(int kq, const struct kevent *changelist, int nchanges, struct kevent *eventlist,
           int nevents, const struct timespec *timeout);
#endif
