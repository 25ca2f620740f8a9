/*
 * Mesh collectives, the pure part (docs/collectives.md, "The coll component"): which
 * algorithm an all-reduce of a given size takes on a given number of processes, and how a
 * vector is cut into one block per process. The coll component (plugin/coll/) runs what is
 * chosen here over Open MPI's pml. Opal-free.
 */
#ifndef TBRDMA_COLL_H
#define TBRDMA_COLL_H

#include <stddef.h>

typedef enum tbrdma_coll_alg {
    TBRDMA_COLL_DEFER = 0, /* the next component's algorithm (coll/tuned and its rules) */
    TBRDMA_COLL_ONESTEP,   /* every process sends its whole vector to every other, one step */
    TBRDMA_COLL_RSAG       /* reduce-scatter then all-gather, each one step over every cable */
} tbrdma_coll_alg_t;

/* The size limits of an all-reduce (bytes), from the component's parameters. */
typedef struct tbrdma_coll_limits {
    size_t onestep_max; /* one-step exchange up to this size; 0: never */
    size_t pair_max;    /* the same for 2 processes (its own limit); 0: never */
    size_t rsag_min;    /* reduce-scatter plus all-gather from this size; 0: never */
    int min_procs;      /* fewer processes than this: defer */
} tbrdma_coll_limits_t;

/* The algorithm of an all-reduce of bytes on nprocs processes (bytes 0 or nprocs < 2: defer).
 * The one-step exchange wins over rsag where both limits overlap. */
tbrdma_coll_alg_t tbrdma_coll_allreduce_alg(const tbrdma_coll_limits_t *lim, size_t bytes,
                                            int nprocs);

/* 1 when a collective of bytes on nprocs processes falls in its window: at least min_procs
 * processes (and 2), min > 0 (0: the collective is off) and min <= bytes <= max (max 0: no
 * upper limit). */
int tbrdma_coll_in_window(size_t bytes, int nprocs, size_t min, size_t max, int min_procs);

/* Block j of count items over nprocs processes: count / nprocs items each, the first
 * count % nprocs blocks one more; *first is the block's first item. */
void tbrdma_coll_block(size_t count, int nprocs, int j, size_t *first, size_t *items);

/* The algorithm's name, for the component's verbose output. */
const char *tbrdma_coll_alg_name(tbrdma_coll_alg_t alg);

#endif /* TBRDMA_COLL_H */
