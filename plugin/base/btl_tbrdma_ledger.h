/*
 * The slot ledger's files (core/tbrdma_ledger.h says why and what a record holds): one file per
 * tbrdma process that holds queue pairs, "<dir>/<host>.<pid>" (dir: btl_tbrdma_ledger_dir),
 * written when it connects and removed when it releases them (also from the signal handler).
 * Read back when a queue pair cannot be created, to name the dead processes that hold the
 * device's slots. A dir of "" or NULL turns the ledger off. Opal-free (libtbrdma_sys).
 */
#ifndef BTL_TBRDMA_LEDGER_H
#define BTL_TBRDMA_LEDGER_H

#include <stddef.h>

/* btl_tbrdma_ledger_dir's default, and tbrdma-info's --ledger-dir's */
#define TBRDMA_LEDGER_DIR_DEFAULT "/tmp/tbrdma-ledger"

/*
 * Writes (again) this process's record in dir (created when missing): host, job, and for each
 * of ndevs devices its name and the queue pairs it holds there. path gets the file's name.
 * Returns 0 (also when the ledger is off) or an errno.
 */
int tbrdma_ledger_file_write(const char *dir, const char *host, const char *job,
                             const char *const *devs, const int *qps, int ndevs, char *path,
                             size_t pathlen);

/* Removes this process's record, if written. Async-signal-safe. */
void tbrdma_ledger_file_remove(void);

/*
 * msg gets a sentence naming the queue pairs of device dev of host held by tbrdma processes that
 * died, with the fix, and one naming those in use by live processes of jobs other than own_job
 * (jobs running beside it; none with own_job NULL); empty when the ledger names none. Returns how
 * many queue pairs they hold there. Records of an earlier boot are deleted on the way (their slots
 * came back).
 */
int tbrdma_ledger_file_explain(const char *dir, const char *host, const char *dev,
                               const char *own_job, char *msg, size_t len);

#endif /* BTL_TBRDMA_LEDGER_H */
