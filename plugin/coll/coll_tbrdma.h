/*
 * coll/tbrdma: collectives for a full mesh of Thunderbolt cables (docs/collectives.md, "The
 * coll component"). On a mesh every Mac has a cable to every other, so an all-reduce can take
 * one step in which every process sends to every other at once (small vectors: the whole
 * vector; large ones: a reduce-scatter then an all-gather, each one such step), all cables busy
 * together. The component offers MPI_Allreduce only; at sizes where its measurement found no
 * gain, for operations that are not commutative and for datatypes with gaps it calls the
 * component below it (coll/tuned, with tbrdma's rules when they are on). Off unless its
 * priority is set (share/coll-tuned.conf sets it): it is for one process per Mac.
 *
 * Every process takes the same decision for a call: it depends only on the arguments MPI
 * requires to be the same on all of them (count, datatype, op) and on the parameters.
 */
#ifndef COLL_TBRDMA_H
#define COLL_TBRDMA_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"

#include "core/tbrdma_coll.h"

/* Verbosity: 1 = the component declines or a communicator gets it; 10 = every call. */
#define COLL_TBRDMA_VERBOSE_COMM 1
#define COLL_TBRDMA_VERBOSE_CALL 10

typedef struct mca_coll_tbrdma_component {
    mca_coll_base_component_t super;
    int priority;    /* 0: off */
    int verbose;     /* coll_tbrdma_verbose */
    int output;      /* its opal_output stream */
    int onestep_max; /* bytes */
    int pair_max;    /* bytes: the one-step exchange of 2 processes up to this */
    int rsag_min;    /* bytes */
    int min_procs;
    int allgather_min, allgather_max;           /* bytes gathered; min 0: off */
    int reduce_scatter_min, reduce_scatter_max; /* bytes of the input vector; min 0: off */
} mca_coll_tbrdma_component_t;

OMPI_DECLSPEC extern mca_coll_tbrdma_component_t mca_coll_tbrdma_component;

typedef struct mca_coll_tbrdma_module {
    mca_coll_base_module_t super;
    /* The collectives of the components below, for the calls this one leaves to them. */
    mca_coll_base_comm_coll_t next;
    void *scratch; /* received vectors or blocks, kept between calls */
    size_t scratch_bytes;
} mca_coll_tbrdma_module_t;

OBJ_CLASS_DECLARATION(mca_coll_tbrdma_module_t);

/* Prints "coll tbrdma: <fmt>" on the component's stream at coll_tbrdma_verbose >= level. */
#define COLL_TBRDMA_VERBOSE(level, fmt, ...)                                                    \
    do {                                                                                        \
        if (mca_coll_tbrdma_component.verbose >= (level)) {                                     \
            opal_output_verbose((level), mca_coll_tbrdma_component.output, "coll tbrdma: " fmt, \
                                ##__VA_ARGS__);                                                 \
        }                                                                                       \
    } while (0)

/* ---- building blocks (coll_tbrdma_mesh.c) ---- */

/* One step's requests: a receive and a send per other process, all posted before any wait. */
typedef struct mca_coll_tbrdma_step {
    ompi_request_t **req;
    int n;
} mca_coll_tbrdma_step_t;

/* A vector cut into one block per process, for a reduce-scatter step. */
typedef struct mca_coll_tbrdma_cut {
    const char *src;             /* this process's whole input vector */
    char *out;                   /* where this process's reduced block goes */
    const size_t *first, *items; /* block j: items[j] items from item first[j] */
    size_t size;                 /* bytes per item */
    int tag;
} mca_coll_tbrdma_cut_t;

/* The module's scratch buffer of at least bytes, kept between calls; NULL without memory. */
char *mca_coll_tbrdma_scratch(mca_coll_tbrdma_module_t *m, size_t bytes);

/* Vectors that can be cut into blocks and reduced by blocks: one contiguous run of items with
 * no gaps, and a commutative op. The same answer on every process (MPI requires the same
 * count, datatype and op everywhere). */
bool mca_coll_tbrdma_cuttable(int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op);

int mca_coll_tbrdma_recv(mca_coll_tbrdma_step_t *s, void *buf, size_t count,
                         struct ompi_datatype_t *dtype, int from, int tag,
                         struct ompi_communicator_t *comm);
int mca_coll_tbrdma_send(mca_coll_tbrdma_step_t *s, const void *buf, size_t count,
                         struct ompi_datatype_t *dtype, int to, int tag,
                         struct ompi_communicator_t *comm);
/* Waits for every request posted, even after a failed post (rc): none is left in flight. */
int mca_coll_tbrdma_finish(mca_coll_tbrdma_step_t *s, int rc);

/* out = x0 op (x1 op (... op xp-1)), in rank order on every process (the same bits
 * everywhere); out is none of the x[j]. */
void mca_coll_tbrdma_reduce(char *out, char *const *x, int p, size_t items,
                            struct ompi_datatype_t *dtype, struct ompi_op_t *op, size_t size);

/* Whether a op b and b op a give the same bits for this op and datatype, so that 2 processes
 * may each reduce in their own order: MPI's sum, product and bitwise and logical ops on its
 * predefined datatypes (IEEE addition and multiplication commute exactly, but for which of two
 * NaNs' payloads is kept; not MPI_MAX and MPI_MIN, whose result with one NaN depends on the
 * order, nor any user op). */
bool mca_coll_tbrdma_swappable(struct ompi_datatype_t *dtype, struct ompi_op_t *op);

/* The one exchange of a pair with an op whose operands may swap: send_items of send to the
 * peer while in_items of the peer's land in in, then out = (the peer's) op out in one pass,
 * where out starts as own's items: in is out itself (own elsewhere), or scratch (own is out). */
int mca_coll_tbrdma_pair_step(const char *send, size_t send_items, char *in, size_t in_items,
                              const char *own, char *out, struct ompi_datatype_t *dtype,
                              struct ompi_op_t *op, int tag, struct ompi_communicator_t *comm);

/* Whether a_bytes at a and b_bytes at b share any byte. */
bool mca_coll_tbrdma_overlap(const char *a, size_t a_bytes, const char *b, size_t b_bytes);

/* Reduce-scatter in one step: block j of every process to process j, which reduces the p
 * copies of its block into cut->out. scratch holds p slots of slot items. */
int mca_coll_tbrdma_rs_step(const mca_coll_tbrdma_cut_t *cut, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, struct ompi_communicator_t *comm, char *scratch,
                            size_t slot);

/* All-gather in one step, in place: this process's block of buf (first[me], items[me]) to
 * every other, every other's block into its place in buf. */
int mca_coll_tbrdma_ag_step(char *buf, const size_t *first, const size_t *items,
                            struct ompi_datatype_t *dtype, size_t size, int tag,
                            struct ompi_communicator_t *comm);

/* Prints the way a call went, at coll_tbrdma_verbose 10. */
#define COLL_TBRDMA_CALL(coll, bytes, p, way)                                                    \
    COLL_TBRDMA_VERBOSE(COLL_TBRDMA_VERBOSE_CALL, "%s of %zu bytes on %d processes: %s", (coll), \
                        (size_t) (bytes), (p), (way))

/* The component's size limits, from its parameters. */
tbrdma_coll_limits_t mca_coll_tbrdma_limits(void);

mca_coll_base_module_t *mca_coll_tbrdma_comm_query(struct ompi_communicator_t *comm, int *priority);

int mca_coll_tbrdma_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                         struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                         struct ompi_communicator_t *comm,
                                         mca_coll_base_module_t *module);

int mca_coll_tbrdma_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts,
                                   struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                   struct ompi_communicator_t *comm,
                                   mca_coll_base_module_t *module);

int mca_coll_tbrdma_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdtype,
                              struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

int mca_coll_tbrdma_allreduce(const void *sbuf, void *rbuf, int count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                              struct ompi_communicator_t *comm, mca_coll_base_module_t *module);

#endif /* COLL_TBRDMA_H */
