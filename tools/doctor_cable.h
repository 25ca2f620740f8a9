/*
 * The doctor's checks between hosts (doctor_cable.c), called by doc_check_all in its order
 * after the per-host ones, on the cables doc_topo_cables found. names lists the hosts by the
 * names they call themselves, in the cluster's order (to read the mesh file's host names).
 */
#ifndef TBRDMA_DOCTOR_CABLE_H
#define TBRDMA_DOCTOR_CABLE_H

#include "doctor.h"

/* Hosts a and b (both up, with RDMA): one cable between them, not two or none. */
void doc_check_pair(doc_cluster_t *cl, int a, int b);

/* Every cable the mesh file names between hosts of the cluster must be a cable found. */
void doc_check_spec(doc_cluster_t *cl, const tbrdma_hostlist_t *names);

/*
 * The two ends of each cable the mesh file does not name are alone in one subnet (else crossed
 * cables, or an address mismatch); cables between link-local addresses get one line for all.
 */
void doc_check_addresses(doc_cluster_t *cl, const tbrdma_hostlist_t *names);

#endif /* TBRDMA_DOCTOR_CABLE_H */
