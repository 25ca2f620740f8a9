/*
 * The cables of a cluster (doctor_topo.c): which port faces which port, found from macOS's
 * Thunderbolt topology or IPv6 link-local neighbours, and those cables as a mesh spec.
 */
#ifndef TBRDMA_DOCTOR_TOPO_H
#define TBRDMA_DOCTOR_TOPO_H

#include "doctor.h"

/* Finds the cables from system_profiler or link-local neighbours. */
void doc_topo_cables(doc_cluster_t *cl);

/* The physical cables as a mesh spec, with the names hosts call themselves. */
void doc_cables_spec(const doc_cluster_t *cl, tbrdma_mesh_spec_t *spec);

#endif /* TBRDMA_DOCTOR_TOPO_H */
