/* Stand-in for the macOS SDK's <signal.h> (XNU bsd/sys/signal.h): only what tbrdma uses. On
 * macOS sigset_t is a 32-bit mask and struct sigaction's handler is a union. */
#ifndef TBRDMA_MACOS_SIGNAL_H
#define TBRDMA_MACOS_SIGNAL_H
#include <sys/types.h>
typedef __uint32_t sigset_t;
typedef int sig_atomic_t;
#define SIGHUP  1
#define SIGINT  2
#define SIGKILL 9
#define SIGPIPE 13
#define SIGALRM 14
#define SIGTERM 15
#define SIGCONT 19
#define SIG_DFL ((void (*)(int)) 0)
#define SIG_IGN ((void (*)(int)) 1)
#define SA_RESTART 0x0002
#define SA_SIGINFO 0x0040
struct __siginfo;
union __sigaction_u {
    void (*__sa_handler)(int);
    void (*__sa_sigaction)(int, struct __siginfo *, void *);
};
struct sigaction {
    union __sigaction_u __sigaction_u;
    sigset_t sa_mask;
    int sa_flags;
};
#define sa_handler   __sigaction_u.__sa_handler
#define sa_sigaction __sigaction_u.__sa_sigaction
int sigaction(int, const struct sigaction *restrict, struct sigaction *restrict);
int sigemptyset(sigset_t *);
int sigfillset(sigset_t *);
int kill(pid_t, int);
int raise(int);
void (*signal(int, void (*)(int)))(int);
#endif
