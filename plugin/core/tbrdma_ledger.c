/*
 * The slot ledger's records and verdicts (tbrdma_ledger.h); opal-free.
 */
#include "tbrdma_ledger.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEDGER_MAGIC "tbrdma-ledger 1"

/* A word fit for a record: non-empty, shorter than max, no space, '=' or control character. */
static int ledger_word_ok(const char *s, size_t max)
{
    size_t n = strlen(s);

    if (0 == n || n >= max) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char) s[i] <= ' ' || '=' == s[i]) {
            return 0;
        }
    }
    return 1;
}

int tbrdma_ledger_format(const tbrdma_ledger_rec_t *r, char *buf, size_t len)
{
    size_t used;
    int n;

    if (!ledger_word_ok(r->host, sizeof(r->host)) || !ledger_word_ok(r->job, sizeof(r->job))
        || r->ndevs < 0 || r->ndevs > TBRDMA_LEDGER_DEVS) {
        return -EINVAL;
    }
    n = snprintf(buf, len, LEDGER_MAGIC " host=%s pid=%ld boot=%lld job=%s", r->host, r->pid,
                 r->boot, r->job);
    for (int d = 0; 0 <= n && (size_t) n < len && d < r->ndevs; d++) {
        if (!ledger_word_ok(r->devs[d].name, sizeof(r->devs[d].name))) {
            return -EINVAL;
        }
        used = (size_t) n;
        n += snprintf(buf + used, len - used, " %s=%d", r->devs[d].name, r->devs[d].qps);
    }
    if (n < 0 || (size_t) n + 1 >= len) {
        return -ENOSPC;
    }
    buf[n++] = '\n';
    buf[n] = '\0';
    return n;
}

/* Copies word [s, s+n) into dst (max bytes with its NUL). 0 or -EINVAL. */
static int ledger_copy(char *dst, size_t max, const char *s, size_t n)
{
    if (0 == n || n >= max) {
        return -EINVAL;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return ledger_word_ok(dst, max) ? 0 : -EINVAL;
}

/* A non-negative decimal integer filling [s, s+n). 0 or -EINVAL. */
static int ledger_number(const char *s, size_t n, long long *v)
{
    char tmp[24], *end;

    if (0 == n || n >= sizeof(tmp) || '-' == s[0] || '+' == s[0]) {
        return -EINVAL;
    }
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    errno = 0;
    *v = strtoll(tmp, &end, 10);
    return (0 == errno && '\0' == *end) ? 0 : -EINVAL;
}

/* One "key=value" field of a record into r; seen marks the fixed keys found. 0 or -EINVAL. */
static int ledger_field(const char *s, size_t n, tbrdma_ledger_rec_t *r, int *seen)
{
    const char *eq = memchr(s, '=', n);
    size_t k, vn;
    long long v = 0;

    if (NULL == eq) {
        return -EINVAL;
    }
    k = (size_t) (eq - s);
    vn = n - k - 1;
    if (4 == k && 0 == memcmp(s, "host", 4)) {
        *seen |= 1;
        return ledger_copy(r->host, sizeof(r->host), eq + 1, vn);
    }
    if (3 == k && 0 == memcmp(s, "job", 3)) {
        *seen |= 2;
        return ledger_copy(r->job, sizeof(r->job), eq + 1, vn);
    }
    if (0 != ledger_number(eq + 1, vn, &v)) {
        return -EINVAL;
    }
    if (3 == k && 0 == memcmp(s, "pid", 3)) {
        *seen |= 4;
        r->pid = (long) v;
        return (0 < v) ? 0 : -EINVAL;
    }
    if (4 == k && 0 == memcmp(s, "boot", 4)) {
        *seen |= 8;
        r->boot = v;
        return 0;
    }
    if (r->ndevs >= TBRDMA_LEDGER_DEVS || v > 1000000) {
        return -EINVAL;
    }
    r->devs[r->ndevs].qps = (int) v;
    return ledger_copy(r->devs[r->ndevs++].name, sizeof(r->devs[0].name), s, k);
}

int tbrdma_ledger_parse(const char *line, tbrdma_ledger_rec_t *r)
{
    const char *p = line + strlen(LEDGER_MAGIC);
    int seen = 0;

    memset(r, 0, sizeof(*r));
    if (0 != strncmp(line, LEDGER_MAGIC, strlen(LEDGER_MAGIC)) || ' ' != *p) {
        return -EINVAL;
    }
    while (' ' == *p) {
        const char *start = ++p;

        while ('\0' != *p && ' ' != *p && '\n' != *p) {
            p++;
        }
        if (0 != ledger_field(start, (size_t) (p - start), r, &seen)) {
            return -EINVAL;
        }
    }
    if (('\n' == *p && '\0' != p[1]) || ('\n' != *p && '\0' != *p) || 15 != seen) {
        return -EINVAL;
    }
    return 0;
}

tbrdma_ledger_verdict_t tbrdma_ledger_judge(const tbrdma_ledger_rec_t *r, const char *host,
                                            long long boot, int alive)
{
    if (0 != strcmp(r->host, host)) {
        return TBRDMA_LEDGER_OTHER_HOST;
    }
    if (r->boot != boot) {
        return TBRDMA_LEDGER_STALE;
    }
    return alive ? TBRDMA_LEDGER_LIVE : TBRDMA_LEDGER_DEAD;
}

int tbrdma_ledger_qps_on(const tbrdma_ledger_rec_t *r, const char *dev)
{
    for (int d = 0; d < r->ndevs; d++) {
        if (0 == strcmp(r->devs[d].name, dev)) {
            return r->devs[d].qps;
        }
    }
    return 0;
}

void tbrdma_ledger_tally_add(tbrdma_ledger_tally_t *t, const tbrdma_ledger_rec_t *r,
                             const char *dev)
{
    int qps = tbrdma_ledger_qps_on(r, dev);
    size_t used = strlen(t->who);

    if (qps <= 0) {
        return;
    }
    t->qps += qps;
    t->procs++;
    if (used + 1 < sizeof(t->who)) {
        snprintf(t->who + used, sizeof(t->who) - used, "%spid %ld (job %s) %d",
                 (0 == used) ? "" : ", ", r->pid, r->job, qps);
    }
}

/* msg emptied; 1 when t counts no queue pair (nothing to say). */
static int ledger_nothing(const tbrdma_ledger_tally_t *t, char *msg)
{
    msg[0] = '\0';
    return t->qps <= 0;
}

int tbrdma_ledger_explain(const tbrdma_ledger_tally_t *t, const char *host, const char *dev,
                          char *msg, size_t len)
{
    if (ledger_nothing(t, msg)) {
        return 0;
    }
    snprintf(msg, len,
             "device %s: %d of its queue pairs are held by %d tbrdma process%s of %s that ended "
             "without releasing them (killed with SIGKILL, MPI_Abort or a crash): %s; Apple's "
             "stack frees them only when %s restarts; fix: restart %s, and end jobs with Ctrl-C "
             "or kill (SIGTERM), not kill -9",
             dev, t->qps, t->procs, (1 == t->procs) ? "" : "es", host, t->who, host, host);
    return 0;
}

int tbrdma_ledger_explain_live(const tbrdma_ledger_tally_t *t, const char *host, const char *dev,
                               char *msg, size_t len)
{
    if (ledger_nothing(t, msg)) {
        return 0;
    }
    snprintf(msg, len,
             "device %s: %d of its queue pairs are in use by %d tbrdma process%s of other jobs "
             "running now on %s: %s; Apple allows 10 per device; fix: start this job when they "
             "have ended, or run fewer jobs at once on these Macs",
             dev, t->qps, t->procs, (1 == t->procs) ? "" : "es", host, t->who);
    return 0;
}
