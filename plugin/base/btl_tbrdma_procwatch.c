/*
 * Watching another process for its exit (btl_tbrdma_procwatch.h): a pidfd on Linux, a kqueue on
 * macOS, kill(pid, 0) where neither exists.
 */
#include "base/btl_tbrdma_procwatch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <sys/event.h>
#elif defined(__linux__)
#include <poll.h>
#include <sys/syscall.h>
#endif

#if defined(__linux__) && !defined(SYS_pidfd_open)
#define SYS_pidfd_open 434 /* the same number on every Linux architecture */
#endif

/* The fallback's check: 1 when pid is gone, 0 while it exists (another user's process too). */
static int procwatch_kill0_gone(pid_t pid)
{
    return (0 != kill(pid, 0) && ESRCH == errno) ? 1 : 0;
}

#if defined(__APPLE__)
static int procwatch_os_open(tbrdma_procwatch_t *w, const char **call)
{
    struct kevent ev;
    int kq = kqueue();

    *call = "kqueue";
    if (kq < 0) {
        return errno;
    }
    EV_SET(&ev, (uintptr_t) w->pid, EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, NULL);
    *call = "kevent(EVFILT_PROC, NOTE_EXIT)";
    if (0 != kevent(kq, &ev, 1, NULL, 0, NULL)) {
        int rc = errno;

        close(kq);
        return rc;
    }
    w->fd = kq;
    return 0;
}

static int procwatch_os_gone(tbrdma_procwatch_t *w, int timeout_ms)
{
    struct timespec ts = {timeout_ms / 1000, (long) (timeout_ms % 1000) * 1000000L};
    struct kevent ev;
    int n = kevent(w->fd, NULL, 0, &ev, 1, &ts);

    if (n < 0) {
        return (EINTR == errno) ? 0 : -errno;
    }
    return (n > 0) ? 1 : 0;
}
#else
static int procwatch_os_open(tbrdma_procwatch_t *w, const char **call)
{
    long fd;

    *call = "pidfd_open";
#if defined(__linux__)
    fd = syscall(SYS_pidfd_open, w->pid, 0);
#else
    fd = -1;
    errno = ENOSYS;
#endif
    if (fd < 0) {
        if (ENOSYS != errno && EPERM != errno) { /* EPERM: a seccomp filter refuses it */
            return errno;
        }
        *call = "kill(pid, 0)";
        return procwatch_kill0_gone(w->pid) ? ESRCH : 0; /* the fallback: fd stays -1 */
    }
    w->fd = (int) fd;
    return 0;
}

static int procwatch_os_gone(tbrdma_procwatch_t *w, int timeout_ms)
{
#if defined(__linux__)
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    int n = poll(&p, 1, timeout_ms);

    if (n < 0) {
        return (EINTR == errno) ? 0 : -errno;
    }
    return (n > 0) ? 1 : 0;
#else
    (void) w;
    (void) timeout_ms;
    return -ENOSYS;
#endif
}
#endif

/* Opens the watch: through the OS (os), or the kill(pid, 0) fallback. */
static int procwatch_open(tbrdma_procwatch_t *w, pid_t pid, int os, char *err, size_t errlen)
{
    const char *call = "kill(pid, 0)";
    int rc;

    w->pid = pid;
    w->fd = -1;
    if (pid <= 0) {
        snprintf(err, errlen, "process %ld: no such process to watch", (long) pid);
        return EINVAL;
    }
    if (os) {
        rc = procwatch_os_open(w, &call);
    } else {
        rc = procwatch_kill0_gone(pid) ? ESRCH : 0;
    }
    if (0 != rc) {
        snprintf(err, errlen, "process %ld: cannot watch it for its exit (%s: %s)", (long) pid,
                 call, (ESRCH == rc) ? "it has exited" : strerror(rc));
    }
    return rc;
}

int tbrdma_procwatch_open(tbrdma_procwatch_t *w, pid_t pid, char *err, size_t errlen)
{
    return procwatch_open(w, pid, 1, err, errlen);
}

int tbrdma_procwatch_open_polling(tbrdma_procwatch_t *w, pid_t pid, char *err, size_t errlen)
{
    return procwatch_open(w, pid, 0, err, errlen);
}

/* The fallback's wait: kill(pid, 0) every 10 ms until it is gone or the time is up. */
static int procwatch_kill0_wait(pid_t pid, int timeout_ms)
{
    for (int waited = 0;; waited += 10) {
        struct timespec tick = {0, 10 * 1000000L};

        if (procwatch_kill0_gone(pid)) {
            return 1;
        }
        if (waited >= timeout_ms) {
            return 0;
        }
        nanosleep(&tick, NULL);
    }
}

int tbrdma_procwatch_gone(tbrdma_procwatch_t *w, int timeout_ms)
{
    if (timeout_ms < 0) {
        timeout_ms = 0;
    }
    if (w->fd < 0) {
        return (w->pid > 0) ? procwatch_kill0_wait(w->pid, timeout_ms) : -EBADF;
    }
    return procwatch_os_gone(w, timeout_ms);
}

int tbrdma_procwatch_fd(const tbrdma_procwatch_t *w)
{
    return w->fd;
}

void tbrdma_procwatch_close(tbrdma_procwatch_t *w)
{
    if (w->fd >= 0) {
        close(w->fd);
    }
    w->fd = -1;
    w->pid = 0;
}
