/* Stand-in for the macOS SDK's <sys/wait.h> (XNU bsd/sys/wait.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_SYS_WAIT_H
#define TBRDMA_MACOS_SYS_WAIT_H
#include <sys/types.h>
#define WNOHANG         0x00000001
#define _WSTATUS(x)     ((x) & 0177)
#define WIFEXITED(x)    (_WSTATUS(x) == 0)
#define WEXITSTATUS(x)  (((x) >> 8) & 0x000000ff)
pid_t waitpid(pid_t, int *, int);
#endif
