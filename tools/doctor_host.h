/*
 * The doctor's per-host checks (doctor_host.c), called by doc_check_all in its order. Each
 * appends its findings to the cluster and may mark the host down or without RDMA, or ports
 * explained.
 */
#ifndef TBRDMA_DOCTOR_HOST_H
#define TBRDMA_DOCTOR_HOST_H

#include "doctor.h"

#include <stddef.h>

/* Host i's probe ran to its end; when not, host i is reported unreachable and marked down. */
void doc_check_reached(doc_cluster_t *cl, int i, const char *agent, int timeout);

/*
 * The text field at offset in doc_host_t (a version) most hosts have (ties: the first host's);
 * "" when none reported one.
 */
const char *doc_majority(const doc_cluster_t *cl, size_t offset);

/*
 * Per host: tbrdma, RDMA, the same Open MPI and tbrdma as ompi_ref and tb_ref (the majority's),
 * Open MPI finds tbrdma, macOS.
 */
void doc_check_host(doc_cluster_t *cl, int i, const char *ompi_ref, const char *tb_ref);

/* Per port on macOS: Thunderbolt 5, and an address that survives. */
void doc_check_macos_ports(doc_cluster_t *cl, int i);

#endif /* TBRDMA_DOCTOR_HOST_H */
