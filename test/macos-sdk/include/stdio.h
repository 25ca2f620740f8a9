/* Stand-in for the macOS SDK's <stdio.h> (Libc include/stdio.h, _stdio.h): only what tbrdma's
 * macOS code uses. FILE is opaque here; stderr is __stderrp as in the SDK. */
#ifndef TBRDMA_MACOS_STDIO_H
#define TBRDMA_MACOS_STDIO_H
#include <stdarg.h>
#include <stddef.h>
typedef struct __sFILE FILE;
extern FILE *__stdinp, *__stdoutp, *__stderrp;
#define stdin  __stdinp
#define stdout __stdoutp
#define stderr __stderrp
#define EOF    (-1)
int printf(const char *restrict, ...) __attribute__((format(printf, 1, 2)));
int fprintf(FILE *restrict, const char *restrict, ...) __attribute__((format(printf, 2, 3)));
int snprintf(char *restrict, size_t, const char *restrict, ...)
    __attribute__((format(printf, 3, 4)));
int vsnprintf(char *restrict, size_t, const char *restrict, va_list);
int vfprintf(FILE *restrict, const char *restrict, va_list);
FILE *fopen(const char *restrict, const char *restrict);
int fclose(FILE *);
int rename(const char *, const char *);
char *fgets(char *restrict, int, FILE *);
int fflush(FILE *);
int fputs(const char *restrict, FILE *restrict);
int fputc(int, FILE *);
FILE *popen(const char *, const char *);
int pclose(FILE *);
void perror(const char *);
#endif
