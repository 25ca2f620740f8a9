/*
 * A shared memory segment between the processes of one job on one Mac: the per-Mac agent
 * (docs/design.md, "Many ranks per Mac") creates it, the job's local ranks attach, and the
 * hand-off rings and frames live in it. Who may attach: the segment is created exclusively with
 * mode 0600 (no other user can open it), under a name that carries a hash of the job's name and
 * 64 random bits (the token, which travels only through the job's own modex, so another job of
 * the same user does not know the name); an attacher refuses a segment that is not its user's,
 * that others may read or write, or that is smaller than it expects. Opal-free (libtbrdma_sys).
 */
#ifndef BTL_TBRDMA_SHMSEG_H
#define BTL_TBRDMA_SHMSEG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* macOS's limit on a POSIX shared memory name, the leading slash included (PSHMNAMLEN). */
#define TBRDMA_SHMSEG_NAME_MAX 31

typedef struct tbrdma_shmseg {
    void *base;
    size_t bytes;
    char name[TBRDMA_SHMSEG_NAME_MAX + 1];
    int creator; /* removes the name at detach */
} tbrdma_shmseg_t;

/* 64 random bits from the OS (getentropy). 0 or an errno. */
int tbrdma_shmseg_token(uint64_t *token);

/* The segment's name for job and token: "/tbr.<8 hex of the job's hash>.<16 hex of the token>",
 * 30 characters. Returns its length, or -1 when len is too short. */
int tbrdma_shmseg_name(char *out, size_t len, const char *job, uint64_t token);

/* Creates the segment name (it must not exist) of bytes bytes, mode 0600, zeroed, mapped.
 * 0 or an errno, with err naming the segment and what failed. */
int tbrdma_shmseg_create(tbrdma_shmseg_t *s, const char *name, size_t bytes, char *err,
                         size_t errlen);

/* Maps the existing segment name if it belongs to user uid, no other user may read or write
 * it, and it holds at least min_bytes. 0 or an errno (EPERM: another user's, or open to
 * others; EMSGSIZE: too small), with err naming the segment and why. */
int tbrdma_shmseg_attach(tbrdma_shmseg_t *s, const char *name, size_t min_bytes, uid_t uid,
                         char *err, size_t errlen);

/* Unmaps it; its creator also removes the name (attached processes keep their mappings). */
void tbrdma_shmseg_detach(tbrdma_shmseg_t *s);

#endif /* BTL_TBRDMA_SHMSEG_H */
