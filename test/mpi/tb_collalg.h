/*
 * tb_collalg.h: which Open MPI algorithm ran for a collective call, and a communicator whose
 * coll/tuned runs a chosen algorithm (or the fixed rules, or the dynamic rules file).
 *
 * Which algorithm ran: coll/tuned calls its algorithms, ompi_coll_base_<coll>_intra_<name>,
 * exported by libmpi, through the PLT (from mca_coll_tuned.so in 4.1, inside libmpi in 5.0), so
 * a program that defines functions of the same names and exports them (mpicc -rdynamic) is
 * called instead. Each of these notes its algorithm and calls libmpi's (dlsym RTLD_NEXT). Only
 * the outermost algorithm of a call is noted (nonoverlapping allreduce runs a reduce and a
 * bcast). The signatures are those of coll_base_functions.h, the same in 4.1.4 and 5.0.7.
 * Covered: allreduce, bcast, allgather, alltoall, reduce_scatter. Include this file in one
 * source file of a program only (it defines the functions).
 *
 * Which algorithm runs: coll/tuned reads the forced algorithm (coll_tuned_<coll>_algorithm,
 * _segmentsize) when a communicator is created, so setting them through MPI_T and then
 * duplicating MPI_COMM_WORLD gives a communicator with that algorithm (tb_alg_comm). The
 * dynamic rules file is read once, at MPI_Init, when coll_tuned_use_dynamic_rules is on.
 */
#ifndef TB_COLLALG_H
#define TB_COLLALG_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tb_coll { TB_ALLREDUCE, TB_BCAST, TB_ALLGATHER, TB_ALLTOALL, TB_REDUCE_SCATTER, TB_NCOLL };

static const char *const tb_coll_names[TB_NCOLL] = {"allreduce", "bcast", "allgather", "alltoall",
                                                    "reduce_scatter"};

/* coll/tuned's algorithm numbers and names (ompi_info --param coll tuned --level 9), the same
 * in 4.1 and 5.0 but for allgather's sparbit (5.0 only). Number 0: no algorithm was noted. */
#define TB_MAX_ALG 10
static const char *const tb_alg_names[TB_NCOLL][TB_MAX_ALG] = {
    {"-", "basic_linear", "nonoverlapping", "recursive_doubling", "ring", "segmented_ring",
     "rabenseifner"},
    {"-", "basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree", "binomial",
     "knomial", "scatter_allgather", "scatter_allgather_ring"},
    {"-", "linear", "bruck", "recursive_doubling", "ring", "neighbor", "two_proc", "sparbit"},
    {"-", "linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"},
    {"-", "non-overlapping", "recursive_halving", "ring", "butterfly"},
};

/* The outermost algorithm of the last collective call: tb_alg_reset() before the call. */
static int tb_alg_coll = -1, tb_alg_id = 0, tb_alg_depth = 0;

static inline void tb_alg_reset(void)
{
    tb_alg_coll = -1;
    tb_alg_id = 0;
}

static inline const char *tb_alg_name(int coll, int id)
{
    if (coll < 0 || coll >= TB_NCOLL || id < 0 || id >= TB_MAX_ALG || !tb_alg_names[coll][id]) {
        return "?";
    }
    return tb_alg_names[coll][id];
}

static inline void *tb_alg_real(const char *symbol)
{
    void *fn = dlsym(RTLD_NEXT, symbol);

    if (NULL == fn) {
        fprintf(stderr, "tb_collalg: %s is not in libmpi\n", symbol);
        abort();
    }
    return fn;
}

typedef void tb_coll_module_t; /* mca_coll_base_module_t, opaque here */

/* TB_ALG(COLL, ENUM, ID, NAME, PARAMS, ARGS): the interposer of ompi_coll_base_COLL_intra_NAME,
 * coll/tuned's algorithm ID of collective ENUM. */
#define TB_ALG(coll, e, id, name, params, args)                                      \
    int ompi_coll_base_##coll##_intra_##name params;                                 \
    int ompi_coll_base_##coll##_intra_##name params                                  \
    {                                                                                \
        static int(*real) params;                                                    \
        int rc;                                                                      \
        if (0 == tb_alg_depth++) {                                                   \
            tb_alg_coll = e;                                                         \
            tb_alg_id = id;                                                          \
        }                                                                            \
        if (NULL == real) {                                                          \
            *(void **) &real = tb_alg_real("ompi_coll_base_" #coll "_intra_" #name); \
        }                                                                            \
        rc = real args;                                                              \
        tb_alg_depth--;                                                              \
        return rc;                                                                   \
    }

/* The parameters of each collective's algorithms (coll_base_functions.h), then their names. */
#define TB_AR_P \
    const void *sb, void *rb, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm c, tb_coll_module_t *m
#define TB_AR_A sb, rb, n, dt, op, c, m
#define TB_BC_P void *b, int n, MPI_Datatype dt, int root, MPI_Comm c, tb_coll_module_t *m
#define TB_BC_A b, n, dt, root, c, m
#define TB_AG_P                                                                               \
    const void *sb, int sn, MPI_Datatype sdt, void *rb, int rn, MPI_Datatype rdt, MPI_Comm c, \
        tb_coll_module_t *m
#define TB_AG_A sb, sn, sdt, rb, rn, rdt, c, m
#define TB_RS_P                                                                      \
    const void *sb, void *rb, const int *rn, MPI_Datatype dt, MPI_Op op, MPI_Comm c, \
        tb_coll_module_t *m
#define TB_RS_A sb, rb, rn, dt, op, c, m

TB_ALG(allreduce, TB_ALLREDUCE, 1, basic_linear, (TB_AR_P), (TB_AR_A))
TB_ALG(allreduce, TB_ALLREDUCE, 2, nonoverlapping, (TB_AR_P), (TB_AR_A))
TB_ALG(allreduce, TB_ALLREDUCE, 3, recursivedoubling, (TB_AR_P), (TB_AR_A))
TB_ALG(allreduce, TB_ALLREDUCE, 4, ring, (TB_AR_P), (TB_AR_A))
TB_ALG(allreduce, TB_ALLREDUCE, 5, ring_segmented, (TB_AR_P, uint32_t seg), (TB_AR_A, seg))
TB_ALG(allreduce, TB_ALLREDUCE, 6, redscat_allgather, (TB_AR_P), (TB_AR_A))
TB_ALG(bcast, TB_BCAST, 1, basic_linear, (TB_BC_P), (TB_BC_A))
TB_ALG(bcast, TB_BCAST, 2, chain, (TB_BC_P, uint32_t seg, int32_t fan), (TB_BC_A, seg, fan))
TB_ALG(bcast, TB_BCAST, 3, pipeline, (TB_BC_P, uint32_t seg), (TB_BC_A, seg))
TB_ALG(bcast, TB_BCAST, 4, split_bintree, (TB_BC_P, uint32_t seg), (TB_BC_A, seg))
TB_ALG(bcast, TB_BCAST, 5, bintree, (TB_BC_P, uint32_t seg), (TB_BC_A, seg))
TB_ALG(bcast, TB_BCAST, 6, binomial, (TB_BC_P, uint32_t seg), (TB_BC_A, seg))
TB_ALG(bcast, TB_BCAST, 7, knomial, (TB_BC_P, uint32_t seg, int radix), (TB_BC_A, seg, radix))
TB_ALG(bcast, TB_BCAST, 8, scatter_allgather, (TB_BC_P, uint32_t seg), (TB_BC_A, seg))
TB_ALG(bcast, TB_BCAST, 9, scatter_allgather_ring, (TB_BC_P, uint32_t seg), (TB_BC_A, seg))
TB_ALG(allgather, TB_ALLGATHER, 1, basic_linear, (TB_AG_P), (TB_AG_A))
TB_ALG(allgather, TB_ALLGATHER, 2, bruck, (TB_AG_P), (TB_AG_A))
TB_ALG(allgather, TB_ALLGATHER, 3, recursivedoubling, (TB_AG_P), (TB_AG_A))
TB_ALG(allgather, TB_ALLGATHER, 4, ring, (TB_AG_P), (TB_AG_A))
TB_ALG(allgather, TB_ALLGATHER, 5, neighborexchange, (TB_AG_P), (TB_AG_A))
TB_ALG(allgather, TB_ALLGATHER, 6, two_procs, (TB_AG_P), (TB_AG_A))
TB_ALG(allgather, TB_ALLGATHER, 7, sparbit, (TB_AG_P), (TB_AG_A))
TB_ALG(alltoall, TB_ALLTOALL, 1, basic_linear, (TB_AG_P), (TB_AG_A))
TB_ALG(alltoall, TB_ALLTOALL, 2, pairwise, (TB_AG_P), (TB_AG_A))
TB_ALG(alltoall, TB_ALLTOALL, 3, bruck, (TB_AG_P), (TB_AG_A))
TB_ALG(alltoall, TB_ALLTOALL, 4, linear_sync, (TB_AG_P, int max_requests), (TB_AG_A, max_requests))
TB_ALG(alltoall, TB_ALLTOALL, 5, two_procs, (TB_AG_P), (TB_AG_A))
TB_ALG(reduce_scatter, TB_REDUCE_SCATTER, 1, nonoverlapping, (TB_RS_P), (TB_RS_A))
TB_ALG(reduce_scatter, TB_REDUCE_SCATTER, 2, basic_recursivehalving, (TB_RS_P), (TB_RS_A))
TB_ALG(reduce_scatter, TB_REDUCE_SCATTER, 3, ring, (TB_RS_P), (TB_RS_A))
TB_ALG(reduce_scatter, TB_REDUCE_SCATTER, 4, butterfly, (TB_RS_P), (TB_RS_A))

/* ---- choosing the algorithm of a communicator ---------------------------------------- */

/* The MPI_T control variable NAME, or -1. */
static inline int tb_cvar_index(const char *name)
{
    int n = 0;

    MPI_T_cvar_get_num(&n);
    for (int i = 0; i < n; i++) {
        char var[256], desc[8];
        int var_len = sizeof(var), desc_len = sizeof(desc), verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;

        if (MPI_SUCCESS
                == MPI_T_cvar_get_info(i, var, &var_len, &verbosity, &type, &enumtype, desc,
                                       &desc_len, &bind, &scope)
            && 0 == strcmp(var, name)) {
            return i;
        }
    }
    return -1;
}

/* Sets the int control variable NAME to VALUE, its old value into *OLD (when not NULL); 0 on
 * success. */
static inline int tb_cvar_set(const char *name, int value, int *old)
{
    int index = tb_cvar_index(name), count, rc;
    MPI_T_cvar_handle handle;

    if (index < 0 || MPI_SUCCESS != MPI_T_cvar_handle_alloc(index, NULL, &handle, &count)) {
        fprintf(stderr, "tb_collalg: no MPI_T control variable %s (coll/tuned missing?)\n", name);
        return -1;
    }
    rc = (NULL == old) ? MPI_SUCCESS : MPI_T_cvar_read(handle, old);
    if (MPI_SUCCESS == rc) {
        rc = MPI_T_cvar_write(handle, &value);
    }
    MPI_T_cvar_handle_free(&handle);
    if (MPI_SUCCESS != rc) {
        fprintf(stderr, "tb_collalg: %s = %d refused (error %d)\n", name, value, rc);
    }
    return MPI_SUCCESS == rc ? 0 : -1;
}

/* A duplicate of MPI_COMM_WORLD on which coll/tuned runs algorithm ALG of COLL with segments of
 * SEG bytes (0: unsegmented), errors returned; ALG 0 forces nothing: the job's own rules (the
 * fixed ones, or the dynamic rules file it was started with). Forcing needs the job started
 * with coll_tuned_use_dynamic_rules on (4.1.4 cannot change it at run time). MPI_COMM_NULL if
 * the variables cannot be set; they are set back afterwards. */
static inline MPI_Comm tb_alg_comm(int coll, int alg, int seg)
{
    char alg_var[96], seg_var[128];
    MPI_Comm comm = MPI_COMM_NULL;
    int old_alg = 0, old_seg = 0;

    snprintf(alg_var, sizeof(alg_var), "coll_tuned_%s_algorithm", tb_coll_names[coll]);
    snprintf(seg_var, sizeof(seg_var), "%s_segmentsize", alg_var);
    if (0 == tb_cvar_set(alg_var, alg, &old_alg) && 0 == tb_cvar_set(seg_var, seg, &old_seg)) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    tb_cvar_set(alg_var, old_alg, NULL);
    tb_cvar_set(seg_var, old_seg, NULL);
    return comm;
}

#endif /* TB_COLLALG_H */
