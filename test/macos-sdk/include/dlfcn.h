/* Stand-in for the macOS SDK's <dlfcn.h> (dyld include/dlfcn.h): only what tbrdma uses. */
#ifndef TBRDMA_MACOS_DLFCN_H
#define TBRDMA_MACOS_DLFCN_H
#define RTLD_LAZY   0x1
#define RTLD_NOW    0x2
#define RTLD_LOCAL  0x4
#define RTLD_GLOBAL 0x8
void *dlopen(const char *, int);
void *dlsym(void *restrict, const char *restrict);
int dlclose(void *);
char *dlerror(void);
#endif
