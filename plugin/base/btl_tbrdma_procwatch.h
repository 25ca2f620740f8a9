/*
 * Watching another process for its exit, without being its parent: how the per-Mac agent learns
 * at once that a local rank died (SIGKILL, MPI_Abort, a crash), so that it frees what the rank
 * used and drops its frames (docs/design.md, "Deaths"). The ranks are mpirun's or prted's
 * children, never the agent's, so waitpid cannot see them.
 *
 * Linux: a pidfd (pidfd_open, Linux 5.3), readable once the process has exited. macOS: a kqueue
 * with one EVFILT_PROC / NOTE_EXIT event. Either way one file descriptor per watched process,
 * which the agent can poll with its other work, and no race with the process's pid being reused
 * once the watch is open. Where pidfd_open does not exist (ENOSYS: a kernel older than 5.3) or a
 * container's seccomp filter refuses it (EPERM: pidfd_open itself checks no permission), the
 * watch falls back to kill(pid, 0): a pid that is reused before the check is then taken for the
 * process (a guess that errs towards "alive", so the agent waits for the peers' liveness
 * instead). Opal-free (libtbrdma_sys).
 */
#ifndef BTL_TBRDMA_PROCWATCH_H
#define BTL_TBRDMA_PROCWATCH_H

#include <stddef.h>
#include <sys/types.h>

typedef struct tbrdma_procwatch {
    pid_t pid;
    int fd; /* the pidfd or kqueue; -1 with the kill(pid, 0) fallback */
} tbrdma_procwatch_t;

/* Starts watching process pid. 0, or an errno with err naming the process and the call (ESRCH:
 * it has exited already, or never was). */
int tbrdma_procwatch_open(tbrdma_procwatch_t *w, pid_t pid, char *err, size_t errlen);

/* The same, always with the kill(pid, 0) fallback (what open falls back to on ENOSYS). */
int tbrdma_procwatch_open_polling(tbrdma_procwatch_t *w, pid_t pid, char *err, size_t errlen);

/* 1 once the process has exited (a zombie not yet reaped counts as exited where a pidfd or
 * kqueue watches it), 0 while it runs after waiting up to timeout_ms for its exit (0: do not
 * wait), or a negative errno. */
int tbrdma_procwatch_gone(tbrdma_procwatch_t *w, int timeout_ms);

/* The descriptor to poll for readability with other work (-1 with the fallback). */
int tbrdma_procwatch_fd(const tbrdma_procwatch_t *w);

/* Stops watching. A closed or zeroed-and-fd=-1 watch is a no-op. */
void tbrdma_procwatch_close(tbrdma_procwatch_t *w);

#endif /* BTL_TBRDMA_PROCWATCH_H */
