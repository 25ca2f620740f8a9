/*
 * All of tbrdma-doctor's checks, in their order (doctor_check.c): the entry the program and the
 * unit tests call once the probe output of every host is read.
 */
#ifndef TBRDMA_DOCTOR_CHECK_H
#define TBRDMA_DOCTOR_CHECK_H

#include "doctor.h"

/*
 * Finds the cables (doc_topo_cables) and runs every check, appending findings; agent and
 * timeout are named in the unreachable-host message. Returns the number of problems.
 */
int doc_check_all(doc_cluster_t *cl, const char *agent, int timeout);

#endif /* TBRDMA_DOCTOR_CHECK_H */
