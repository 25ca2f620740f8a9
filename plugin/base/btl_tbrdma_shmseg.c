/*
 * The job's shared memory segment on one Mac (btl_tbrdma_shmseg.h): POSIX shm_open, created
 * exclusively with mode 0600, checked by every attacher with fstat before it is mapped.
 */
#include "base/btl_tbrdma_shmseg.h"
#include "core/tbrdma_crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int tbrdma_shmseg_token(uint64_t *token)
{
    return (0 == getentropy(token, sizeof(*token))) ? 0 : errno;
}

int tbrdma_shmseg_name(char *out, size_t len, const char *job, uint64_t token)
{
    /* the job's name as its CRC32C: 8 hex digits (the token, not the hash, keeps jobs apart) */
    uint32_t hash = (NULL != job) ? tbrdma_crc32c(job, strlen(job)) : 0;
    int n = snprintf(out, len, "/tbr.%08x.%016llx", hash, (unsigned long long) token);

    return (0 > n || (size_t) n >= len || n > TBRDMA_SHMSEG_NAME_MAX) ? -1 : n;
}

/* Maps fd's bytes into s; closes fd. 0 or an errno. */
static int shmseg_map(tbrdma_shmseg_t *s, int fd, const char *name, size_t bytes, int creator)
{
    void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int rc = (MAP_FAILED == base) ? errno : 0;

    close(fd);
    if (0 != rc) {
        return rc;
    }
    *s = (tbrdma_shmseg_t){.base = base, .bytes = bytes, .creator = creator};
    snprintf(s->name, sizeof(s->name), "%s", name);
    return 0;
}

int tbrdma_shmseg_create(tbrdma_shmseg_t *s, const char *name, size_t bytes, char *err,
                         size_t errlen)
{
    int fd, rc;

    if (NULL == name || strlen(name) > TBRDMA_SHMSEG_NAME_MAX || 0 == bytes) {
        snprintf(err, errlen, "shared memory segment %s: bad name or size", name ? name : "?");
        return EINVAL;
    }
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, S_IRUSR | S_IWUSR);
    if (0 > fd) {
        rc = errno;
        snprintf(err, errlen, "shared memory segment %s: cannot create it: %s", name, strerror(rc));
        return rc;
    }
    /* the umask may have taken bits away, never added any: 0600 is what it has */
    if (0 != ftruncate(fd, (off_t) bytes)) {
        rc = errno;
        close(fd);
        goto unlink_name;
    }
    rc = shmseg_map(s, fd, name, bytes, 1);
    if (0 != rc) {
        goto unlink_name;
    }
    return 0;
unlink_name:
    snprintf(err, errlen, "shared memory segment %s: cannot size or map %zu bytes: %s", name, bytes,
             strerror(rc));
    shm_unlink(name);
    return rc;
}

/* Why an attacher must refuse the segment behind fd, or 0 (err says why). */
static int shmseg_vet(int fd, const char *name, size_t min_bytes, uid_t uid, char *err,
                      size_t errlen)
{
    struct stat st;

    if (0 != fstat(fd, &st)) {
        int rc = errno;

        snprintf(err, errlen, "shared memory segment %s: cannot stat it: %s", name, strerror(rc));
        return rc;
    }
    if (st.st_uid != uid) {
        snprintf(err, errlen, "shared memory segment %s belongs to user %lu, not %lu: refused",
                 name, (unsigned long) st.st_uid, (unsigned long) uid);
        return EPERM;
    }
    if (0 != (st.st_mode & (S_IRWXG | S_IRWXO))) {
        snprintf(err, errlen,
                 "shared memory segment %s has mode %04o, open to other users: refused", name,
                 (unsigned) (st.st_mode & 07777));
        return EPERM;
    }
    if ((uint64_t) st.st_size < (uint64_t) min_bytes) {
        snprintf(err, errlen, "shared memory segment %s holds %lld bytes, fewer than %zu: refused",
                 name, (long long) st.st_size, min_bytes);
        return EMSGSIZE;
    }
    return 0;
}

int tbrdma_shmseg_attach(tbrdma_shmseg_t *s, const char *name, size_t min_bytes, uid_t uid,
                         char *err, size_t errlen)
{
    int fd = shm_open(name, O_RDWR, 0), rc;

    if (0 > fd) {
        rc = errno;
        snprintf(err, errlen, "shared memory segment %s: cannot open it: %s", name, strerror(rc));
        return rc;
    }
    rc = shmseg_vet(fd, name, min_bytes, uid, err, errlen);
    if (0 != rc) {
        close(fd);
        return rc;
    }
    rc = shmseg_map(s, fd, name, min_bytes, 0);
    if (0 != rc) {
        snprintf(err, errlen, "shared memory segment %s: cannot map it: %s", name, strerror(rc));
    }
    return rc;
}

void tbrdma_shmseg_detach(tbrdma_shmseg_t *s)
{
    if (NULL == s || NULL == s->base) {
        return;
    }
    munmap(s->base, s->bytes);
    if (s->creator) {
        shm_unlink(s->name);
    }
    s->base = NULL;
}
