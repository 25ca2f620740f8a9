/*
 * The slot ledger's files (btl_tbrdma_ledger.h); opal-free.
 *
 * Guesses, written down: a record whose pid runs is taken as live, though the pid may have been
 * reused by another program (the dead slots are then not named: the message says less, never
 * wrong); the boot time tells a record of an earlier boot (macOS: kern.boottime; Linux:
 * /proc/stat's btime, the simulator's hosts share it).
 */
#include "base/btl_tbrdma_ledger.h"

#include "core/tbrdma_ledger.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __APPLE__
#include <sys/sysctl.h>
#include <sys/time.h>
#endif

#define LEDGER_PATH_MAX 1024 /* macOS's PATH_MAX */

static char ledger_path[LEDGER_PATH_MAX]; /* this process's record; "" when none is written */

/* The host's boot time in seconds since the epoch, 0 when unknown. */
static long long ledger_boot_time(void)
{
    long long boot = 0;
#ifdef __APPLE__
    struct timeval tv;
    size_t len = sizeof(tv);

    if (0 == sysctlbyname("kern.boottime", &tv, &len, NULL, 0)) {
        boot = (long long) tv.tv_sec;
    }
#else
    char line[256];
    FILE *f = fopen("/proc/stat", "r");

    while (NULL != f && NULL != fgets(line, sizeof(line), f)) {
        if (1 == sscanf(line, "btime %lld", &boot)) {
            break;
        }
    }
    if (NULL != f) {
        fclose(f);
    }
#endif
    return boot;
}

/* dir, created for every user (sticky, like /tmp) when missing and create; NULL when off. */
static const char *ledger_dir(const char *dir, int create)
{
    if (NULL == dir || '\0' == dir[0]) {
        return NULL;
    }
    if (create && 0 == mkdir(dir, 01777)) {
        (void) chmod(dir, 01777); /* the umask took bits away */
    }
    return dir;
}

/* Writes buf to path through a temporary file and a rename. 0 or an errno. */
static int ledger_put(const char *path, const char *buf, size_t len)
{
    char tmp[LEDGER_PATH_MAX + 8];
    int fd, rc = 0;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    (void) unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0) {
        return errno;
    }
    if (write(fd, buf, len) != (ssize_t) len) {
        rc = (0 != errno) ? errno : EIO;
    }
    if (0 != close(fd) && 0 == rc) {
        rc = errno;
    }
    if (0 == rc && 0 != rename(tmp, path)) {
        rc = errno;
    }
    if (0 != rc) {
        (void) unlink(tmp);
    }
    return rc;
}

int tbrdma_ledger_file_write(const char *dir, const char *host, const char *job,
                             const char *const *devs, const int *qps, int ndevs, char *path,
                             size_t pathlen)
{
    tbrdma_ledger_rec_t r;
    char line[TBRDMA_LEDGER_LINE];
    int n, rc;

    if (NULL == ledger_dir(dir, 1)) {
        return 0;
    }
    memset(&r, 0, sizeof(r));
    snprintf(r.host, sizeof(r.host), "%s", host);
    snprintf(r.job, sizeof(r.job), "%s", job);
    r.pid = (long) getpid();
    r.boot = ledger_boot_time();
    for (int d = 0; d < ndevs && r.ndevs < TBRDMA_LEDGER_DEVS; d++) {
        snprintf(r.devs[r.ndevs].name, sizeof(r.devs[0].name), "%s", devs[d]);
        r.devs[r.ndevs++].qps = qps[d];
    }
    n = tbrdma_ledger_format(&r, line, sizeof(line));
    snprintf(path, pathlen, "%s/%s.%ld", dir, host, r.pid);
    rc = (n < 0) ? -n : ledger_put(path, line, (size_t) n);
    if (0 == rc) {
        snprintf(ledger_path, sizeof(ledger_path), "%s", path);
    }
    return rc;
}

void tbrdma_ledger_file_remove(void)
{
    if ('\0' != ledger_path[0]) {
        (void) unlink(ledger_path);
        ledger_path[0] = '\0';
    }
}

/* Reads one record file: 0 with r filled, or -1. */
static int ledger_read(const char *path, tbrdma_ledger_rec_t *r)
{
    char line[TBRDMA_LEDGER_LINE];
    FILE *f = fopen(path, "r");
    int rc = -1;

    if (NULL != f) {
        if (NULL != fgets(line, sizeof(line), f) && 0 == tbrdma_ledger_parse(line, r)) {
            rc = 0;
        }
        fclose(f);
    }
    return rc;
}

/* 1 when pid runs (or cannot be signalled by this user), 0 when it is gone. */
static int ledger_alive(long pid)
{
    return (0 == kill((pid_t) pid, 0) || EPERM == errno) ? 1 : 0;
}

int tbrdma_ledger_file_explain(const char *dir, const char *host, const char *dev,
                               const char *own_job, char *msg, size_t len)
{
    tbrdma_ledger_tally_t dead, live;
    tbrdma_ledger_rec_t r;
    char path[LEDGER_PATH_MAX];
    long long boot = ledger_boot_time();
    struct dirent *e;
    DIR *d = (NULL == ledger_dir(dir, 0)) ? NULL : opendir(dir);
    size_t used;

    memset(&dead, 0, sizeof(dead));
    memset(&live, 0, sizeof(live));
    while (NULL != d && NULL != (e = readdir(d))) {
        if ('.' == e->d_name[0]
            || (int) sizeof(path) <= snprintf(path, sizeof(path), "%s/%s", dir, e->d_name)
            || 0 != ledger_read(path, &r)) {
            continue;
        }
        switch (tbrdma_ledger_judge(&r, host, boot, ledger_alive(r.pid))) {
        case TBRDMA_LEDGER_STALE:
            (void) unlink(path);
            break;
        case TBRDMA_LEDGER_DEAD:
            tbrdma_ledger_tally_add(&dead, &r, dev);
            break;
        case TBRDMA_LEDGER_LIVE:
            if (NULL != own_job && 0 != strcmp(r.job, own_job)) {
                tbrdma_ledger_tally_add(&live, &r, dev);
            }
            break;
        default:
            break;
        }
    }
    if (NULL != d) {
        closedir(d);
    }
    (void) tbrdma_ledger_explain(&dead, host, dev, msg, len);
    used = strlen(msg);
    if (0 < live.qps && used + 3 < len) {
        if (0 < used) {
            used += (size_t) snprintf(msg + used, len - used, ".\n");
        }
        (void) tbrdma_ledger_explain_live(&live, host, dev, msg + used, len - used);
    }
    return dead.qps + live.qps;
}
