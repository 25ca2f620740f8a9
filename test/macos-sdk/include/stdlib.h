/* Stand-in for the macOS SDK's <stdlib.h> (Libc include/stdlib.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_STDLIB_H
#define TBRDMA_MACOS_STDLIB_H
#include <stddef.h>
void *malloc(size_t);
void *calloc(size_t, size_t);
void free(void *);
int atoi(const char *);
long strtol(const char *restrict, char **restrict, int);
unsigned long strtoul(const char *restrict, char **restrict, int);
char *getenv(const char *);
void exit(int) __attribute__((noreturn));
void abort(void) __attribute__((noreturn));
#endif
