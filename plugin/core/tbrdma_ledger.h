/*
 * The slot ledger (docs/design.md, "Queue pair slots held after a crash"): Apple's device keeps
 * the queue pairs of a process that died without destroying them (SIGKILL, MPI_Abort, a crash)
 * until the Mac restarts, and says only EBUSY once 10 are taken. So each tbrdma process keeps
 * one record of the queue pairs it holds, per device, in a file of a per-Mac directory, and
 * removes it when it releases them. A record whose process is gone names slots held for good;
 * a record of an earlier boot names slots that came back. This module is the record's text and
 * the verdicts on records; opal-free (the files are base/btl_tbrdma_ledger.c's).
 *
 * One record, one line:
 *   tbrdma-ledger 1 host=mac-b pid=4242 boot=1733000000 job=[1234,1] rdma_en2=3 rdma_en3=3
 */
#ifndef TBRDMA_LEDGER_H
#define TBRDMA_LEDGER_H

#include <stddef.h>

#define TBRDMA_LEDGER_DEVS 8   /* devices per record */
#define TBRDMA_LEDGER_NAME 32  /* a device's name, a job's name */
#define TBRDMA_LEDGER_HOST 64  /* a host's name */
#define TBRDMA_LEDGER_LINE 512 /* a record's line, newline included */

typedef struct tbrdma_ledger_rec {
    char host[TBRDMA_LEDGER_HOST];
    long pid;
    long long boot; /* the host's boot time, seconds since the epoch */
    char job[TBRDMA_LEDGER_NAME];
    int ndevs;
    struct {
        char name[TBRDMA_LEDGER_NAME];
        int qps;
    } devs[TBRDMA_LEDGER_DEVS];
} tbrdma_ledger_rec_t;

/* What a record says to a process of host at boot time boot. */
typedef enum tbrdma_ledger_verdict {
    TBRDMA_LEDGER_OTHER_HOST, /* another host's (hosts sharing one directory: the simulator) */
    TBRDMA_LEDGER_STALE,      /* an earlier boot's: its slots came back with the restart */
    TBRDMA_LEDGER_LIVE,       /* its process runs: its slots are in use */
    TBRDMA_LEDGER_DEAD        /* its process is gone: its slots are held until a restart */
} tbrdma_ledger_verdict_t;

/* The slots some processes hold on one device (the dead ones, or other jobs' live ones). */
typedef struct tbrdma_ledger_tally {
    int qps;       /* queue pairs held by them on the device */
    int procs;     /* how many processes */
    char who[256]; /* "pid 4242 (job [1234,1]) 3, pid 4250 (job [1301,1]) 3" (cut short) */
} tbrdma_ledger_tally_t;

/* r's line, newline included, into buf. Its length, or -ENOSPC. */
int tbrdma_ledger_format(const tbrdma_ledger_rec_t *r, char *buf, size_t len);

/* Parses one line (its newline optional). 0, or -EINVAL for anything not a record. */
int tbrdma_ledger_parse(const char *line, tbrdma_ledger_rec_t *r);

/* The verdict on r for a process of host at boot time boot; alive: r's pid runs. */
tbrdma_ledger_verdict_t tbrdma_ledger_judge(const tbrdma_ledger_rec_t *r, const char *host,
                                            long long boot, int alive);

/* Queue pairs r holds on device dev (0 when it names none). */
int tbrdma_ledger_qps_on(const tbrdma_ledger_rec_t *r, const char *dev);

/* Adds a process's record to t's count for device dev (no-op when it holds none there). */
void tbrdma_ledger_tally_add(tbrdma_ledger_tally_t *t, const tbrdma_ledger_rec_t *r,
                             const char *dev);

/*
 * One sentence for a message about device dev of host: the slots dead processes hold and the
 * fix. 0 with msg empty when t counts none.
 */
int tbrdma_ledger_explain(const tbrdma_ledger_tally_t *t, const char *host, const char *dev,
                          char *msg, size_t len);

/*
 * One sentence for a message about device dev of host: the slots live processes of other jobs
 * hold (jobs running now beside this one) and what to do. 0 with msg empty when t counts none.
 */
int tbrdma_ledger_explain_live(const tbrdma_ledger_tally_t *t, const char *host, const char *dev,
                               char *msg, size_t len);

#endif /* TBRDMA_LEDGER_H */
