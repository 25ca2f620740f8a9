/*
 * Running the probe on every host of a cluster (doctor_launch.c): through the launch agent for
 * remote hosts, directly for this one, all at once, with a deadline.
 */
#ifndef TBRDMA_DOCTOR_LAUNCH_H
#define TBRDMA_DOCTOR_LAUNCH_H

#include "core/tbrdma_types.h"

#include <stddef.h>

typedef struct doc_launch_opts {
    const char *agent;  /* "ssh", "ssh : rsh" (the first that exists), "/path/agent -x" */
    const char *script; /* the probe, sent on stdin */
    int timeout;        /* seconds for all hosts together */
    char **args;        /* the probe's arguments */
    int nargs;
} doc_launch_opts_t;

typedef struct doc_launch_result {
    char *output;  /* stdout and stderr (free it) */
    int status;    /* exit status, -1 when killed or not started */
    int timed_out; /* killed at the deadline */
} doc_launch_result_t;

/*
 * Runs `sh -s -- ARGS` with the script on stdin for each of the n logins ("mac-b",
 * "admin@mac-c"), through the agent unless the login is this host. Fills results[0..n).
 * Returns 0, or a negative errno when a child could not be started (results still filled).
 */
int doc_launch_all(const doc_launch_opts_t *o, const char *const *logins, int n,
                   doc_launch_result_t *results);

/* 1 when login names this host (its name, its short name, localhost) without a user. */
int doc_is_local(const char *login);

/* The path of prog in PATH (or prog itself when it has a '/'). Returns 0 or -ENOENT. */
int doc_which(const char *prog, char *buf, size_t len);

#endif /* TBRDMA_DOCTOR_LAUNCH_H */
