/* Stand-in for the macOS SDK's <string.h> (Libc include/string.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_STRING_H
#define TBRDMA_MACOS_STRING_H
#include <stddef.h>
void *memcpy(void *restrict, const void *restrict, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
size_t strlen(const char *);
int strcmp(const char *, const char *);
int strncmp(const char *, const char *, size_t);
char *strstr(const char *, const char *);
char *strrchr(const char *, int);
char *strchr(const char *, int);
size_t strspn(const char *, const char *);
size_t strcspn(const char *, const char *);
char *strerror(int);
#endif
