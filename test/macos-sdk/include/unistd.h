/* Stand-in for the macOS SDK's <unistd.h> (Libc include/unistd.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_UNISTD_H
#define TBRDMA_MACOS_UNISTD_H
#include <sys/types.h>
int close(int);
int unlink(const char *);
ssize_t write(int, const void *, size_t);
int gethostname(char *, size_t);
int usleep(useconds_t);
unsigned int alarm(unsigned int);
pid_t fork(void);
pid_t getpid(void);
int execvp(const char *, char *const[]);
void _exit(int) __attribute__((noreturn));
ssize_t readlink(const char *restrict, char *restrict, size_t);
#endif
