/* Stand-in for the macOS SDK's <sys/stat.h> (XNU bsd/sys/stat.h, 64-bit inodes): only what
 * tbrdma uses. */
#ifndef TBRDMA_MACOS_SYS_STAT_H
#define TBRDMA_MACOS_SYS_STAT_H
#include <sys/types.h>
#include <time.h>
struct stat {
    __int32_t st_dev;
    mode_t st_mode;
    __uint16_t st_nlink;
    __uint64_t st_ino;
    uid_t st_uid;
    __uint32_t st_gid;
    __int32_t st_rdev;
    struct timespec st_atimespec, st_mtimespec, st_ctimespec, st_birthtimespec;
    __int64_t st_size;
    __int64_t st_blocks;
    __int32_t st_blksize;
    __uint32_t st_flags, st_gen;
    __int32_t st_lspare;
    __int64_t st_qspare[2];
};
int stat(const char *restrict, struct stat *restrict);
int mkdir(const char *, mode_t);
int chmod(const char *, mode_t);
#endif
