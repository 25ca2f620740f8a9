/*
 * tbrdma-doctor's output (doctor_report.c): the text and JSON reports, and the files of the
 * cluster it found (Open MPI's hostfile, tbrdma's mesh file, MLX's hostfile JSON).
 */
#ifndef TBRDMA_DOCTOR_REPORT_H
#define TBRDMA_DOCTOR_REPORT_H

#include "doctor.h"

/* One line per finding (problems first, by host; notes last), then the summary line. */
void doc_report_text(doc_cluster_t *cl, int problems, int verbose, FILE *out);

/* The JSON document of docs/doctor.md: hosts, ports, cables and findings. */
void doc_report_json(doc_cluster_t *cl, int problems, FILE *out);

typedef struct doc_files {
    const char *ompi_hostfile; /* NULL: not wanted */
    const char *mesh_file;
    const char *mlx_hostfile;
    const char *mlx_backend; /* "jaccl" or "jaccl-ring" */
} doc_files_t;

/* The first line of the Open MPI hostfile written: where its slots come from. */
#define DOC_SLOTS_COMMENT                                                                    \
    "# slots: each Mac's performance cores (hw.perflevel0.physicalcpu), or as listed where " \
    "unknown\n"

/*
 * Writes the files wanted from the cables found; in Open MPI's hostfile each host's slots are
 * its performance cores (the probe's "cores" line), else as listed, else none. Returns 0 or
 * -errno of the first failure.
 */
int doc_write_files(const doc_cluster_t *cl, const doc_files_t *files);

#endif /* TBRDMA_DOCTOR_REPORT_H */
