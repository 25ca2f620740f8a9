/*
 * tb_collcall.h: one call of a collective at a coll/tuned rules size, with inputs that make a
 * wrong result visible and its check (bench/coll_tune.c, test/mpi/tb_collrules.c).
 *
 * A size is the message size coll/tuned's dynamic rules use (coll_tuned_decision_dynamic.c):
 * the whole vector for allreduce and bcast, the whole gathered vector for allgather, one rank's
 * whole send buffer for alltoall, the sum of the receive counts for reduce_scatter. Reductions
 * sum doubles (small integers: exact), the others move bytes; bcast's root is rank 0. A size
 * must be a multiple of tb_coll_unit(). Include after tb_collalg.h, in one file of a program.
 */
#ifndef TB_COLLCALL_H
#define TB_COLLCALL_H

#include "tb_collalg.h"

#define TB_COLL_MAX_RANKS 256

/* The buffers of a program's calls, each of the largest size, and where it runs. */
static struct {
    double *dbl_in, *dbl_out;
    unsigned char *byte_in, *byte_out;
    int rank, nranks;
} tb_cb;

/* Buffers for sizes up to MAX bytes on MPI_COMM_WORLD; 0 on success. */
static inline int tb_coll_init(size_t max)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &tb_cb.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tb_cb.nranks);
    tb_cb.dbl_in = malloc(max + sizeof(double));
    tb_cb.dbl_out = malloc(max + sizeof(double));
    tb_cb.byte_in = malloc(max + 1);
    tb_cb.byte_out = malloc(max + 1);
    return (tb_cb.dbl_in && tb_cb.dbl_out && tb_cb.byte_in && tb_cb.byte_out
            && tb_cb.nranks <= TB_COLL_MAX_RANKS)
               ? 0
               : -1;
}

/* The sizes of COLL are the multiples of this. */
static inline size_t tb_coll_unit(int coll)
{
    switch (coll) {
    case TB_ALLREDUCE:
        return sizeof(double);
    case TB_REDUCE_SCATTER:
        return sizeof(double) * (size_t) tb_cb.nranks;
    case TB_BCAST:
        return 1;
    default:
        return (size_t) tb_cb.nranks;
    }
}

static inline unsigned char tb_coll_byte(int r, size_t i, int salt)
{
    return (unsigned char) (r * 31 + (int) (i % 241) * 7 + salt);
}

static inline double tb_coll_value(int r, size_t i, int salt)
{
    return (double) ((r + 1) * 3 + (int) ((i + (size_t) salt) % 251));
}

/* Fills the inputs of COLL for BYTES with SALT and clears the outputs. */
static inline void tb_coll_fill(int coll, size_t bytes, int salt)
{
    size_t n = bytes / sizeof(double);

    if (TB_ALLREDUCE == coll || TB_REDUCE_SCATTER == coll) {
        for (size_t i = 0; i < n; i++) {
            tb_cb.dbl_in[i] = tb_coll_value(tb_cb.rank, i, salt);
            tb_cb.dbl_out[i] = -1;
        }
        return;
    }
    for (size_t i = 0; i < bytes; i++) {
        tb_cb.byte_in[i] = tb_coll_byte(tb_cb.rank, i, salt);
        tb_cb.byte_out[i] = 0xff;
    }
    if (TB_BCAST == coll && tb_cb.rank != 0) {
        memset(tb_cb.byte_in, 0xff, bytes);
    }
}

/* One call of COLL of BYTES on COMM; MPI's return code. */
static inline int tb_coll_call(int coll, size_t bytes, MPI_Comm comm)
{
    int per = (int) (bytes / (size_t) tb_cb.nranks), counts[TB_COLL_MAX_RANKS];

    switch (coll) {
    case TB_ALLREDUCE:
        return MPI_Allreduce(tb_cb.dbl_in, tb_cb.dbl_out, (int) (bytes / sizeof(double)),
                             MPI_DOUBLE, MPI_SUM, comm);
    case TB_BCAST:
        return MPI_Bcast(tb_cb.byte_in, (int) bytes, MPI_BYTE, 0, comm);
    case TB_ALLGATHER:
        return MPI_Allgather(tb_cb.byte_in, per, MPI_BYTE, tb_cb.byte_out, per, MPI_BYTE, comm);
    case TB_ALLTOALL:
        return MPI_Alltoall(tb_cb.byte_in, per, MPI_BYTE, tb_cb.byte_out, per, MPI_BYTE, comm);
    default:
        for (int r = 0; r < tb_cb.nranks; r++) {
            counts[r] = per / (int) sizeof(double);
        }
        return MPI_Reduce_scatter(tb_cb.dbl_in, tb_cb.dbl_out, counts, MPI_DOUBLE, MPI_SUM, comm);
    }
}

/* Wrong values in this rank's result of COLL for BYTES filled with SALT. */
static inline size_t tb_coll_wrong(int coll, size_t bytes, int salt)
{
    int p = tb_cb.nranks, me = tb_cb.rank;
    size_t bad = 0, n = bytes / sizeof(double), per = bytes / (size_t) p, mine = n / (size_t) p;
    double ranks = (double) p * (p + 1) / 2 * 3; /* the sum of the (r + 1) * 3 parts */

    switch (coll) {
    case TB_ALLREDUCE:
        for (size_t i = 0; i < n; i++) {
            bad += tb_cb.dbl_out[i] != ranks + p * (double) ((i + (size_t) salt) % 251);
        }
        break;
    case TB_REDUCE_SCATTER: /* this rank's block of the sum */
        for (size_t i = 0, o = (size_t) me * mine; i < mine; i++) {
            bad += tb_cb.dbl_out[i] != ranks + p * (double) ((o + i + (size_t) salt) % 251);
        }
        break;
    case TB_BCAST:
        for (size_t i = 0; i < bytes; i++) {
            bad += tb_cb.byte_in[i] != tb_coll_byte(0, i, salt);
        }
        break;
    case TB_ALLGATHER: /* block r is rank r's first per bytes */
        for (size_t i = 0; i < bytes; i++) {
            bad += tb_cb.byte_out[i] != tb_coll_byte((int) (i / per), i % per, salt);
        }
        break;
    default: /* alltoall: block r is what rank r sent to this rank */
        for (size_t i = 0; i < bytes; i++) {
            bad += tb_cb.byte_out[i]
                   != tb_coll_byte((int) (i / per), (size_t) me * per + i % per, salt);
        }
    }
    return bad;
}

/* The collective named NAME, or -1. */
static inline int tb_coll_index(const char *name)
{
    for (int c = 0; c < TB_NCOLL; c++) {
        if (0 == strcmp(name, tb_coll_names[c])) {
            return c;
        }
    }
    return -1;
}

#endif /* TB_COLLCALL_H */
