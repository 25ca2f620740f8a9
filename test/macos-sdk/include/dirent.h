/* Stand-in for the macOS SDK's <dirent.h> (Libc include/dirent.h, XNU bsd/sys/dirent.h, 64-bit
 * inodes): only what tbrdma uses. DIR is opaque here. */
#ifndef TBRDMA_MACOS_DIRENT_H
#define TBRDMA_MACOS_DIRENT_H
#include <sys/types.h>
struct dirent {
    __uint64_t d_ino;
    __uint64_t d_seekoff;
    __uint16_t d_reclen;
    __uint16_t d_namlen;
    __uint8_t d_type;
    char d_name[1024];
};
typedef struct __tbrdma_dir DIR;
DIR *opendir(const char *);
struct dirent *readdir(DIR *);
int closedir(DIR *);
#endif
