/*
 * coll/tbrdma's component: the Open MPI lifecycle (register, open, close) as short steps and
 * its parameters, each registered with help text, units, default and range, and checked once
 * (a bad value is named and replaced by its default).
 */
#include "coll_tbrdma.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal.h"
#include "opal/util/output.h"

#include <stdio.h>

/* Defaults measured on the link model, 4 simulated Macs (bench/coll_mesh_bench.sh,
 * docs/collectives.md): reduce-scatter + all-gather 1.32x faster than the rules' choice at
 * 16 KiB, 0.77x at 8 KiB; the one-step exchange 0.89x to 0.96x from 8 B to 2 KiB, so off;
 * the one-step all-gather 1.42x at 32 KiB gathered, 1.05x at 8 KiB; the one-step
 * reduce-scatter 1.19x at 8 KiB, 0.97x at 2 KiB. */
#define COLL_TBRDMA_ONESTEP_MAX_DEFAULT 0
#define COLL_TBRDMA_RSAG_MIN_DEFAULT    16384
/* 2 processes (bench/jaccl_sim.sh's cluster, memcpy cable, 2026-12-06): the one-step exchange
 * of a pair took 0.61x to 0.80x the time of Open MPI 4.1's choice from 8 B to 128 KiB, and
 * reduce-scatter + all-gather 0.80x to 0.88x from 2 to 16 MiB, where the pair was slower;
 * docs/design.md, "Where the time goes against JACCL". On by default since then: one process
 * per Mac over tbrdma is the case it is for, and it declines any other by itself. */
#define COLL_TBRDMA_PAIR_MAX_DEFAULT  1048576
#define COLL_TBRDMA_PRIORITY_DEFAULT  40
#define COLL_TBRDMA_MIN_PROCS_DEFAULT 2
#define COLL_TBRDMA_AG_MIN_DEFAULT    32768
#define COLL_TBRDMA_AG_MAX_DEFAULT    0
#define COLL_TBRDMA_RS_MIN_DEFAULT    8192
#define COLL_TBRDMA_RS_MAX_DEFAULT    0
#define COLL_TBRDMA_STR2(x)           #x
#define COLL_TBRDMA_STR(x)            COLL_TBRDMA_STR2(x)

static int component_register(void);
static int component_open(void);
static int component_close(void);
static int component_init_query(bool enable_progress_threads, bool enable_mpi_threads);

mca_coll_tbrdma_component_t mca_coll_tbrdma_component = {
    .super =
        {
            .collm_version =
                {
#if OMPI_MAJOR_VERSION >= 5
                    MCA_COLL_BASE_VERSION_2_4_0,
#else
                    MCA_COLL_BASE_VERSION_2_0_0,
#endif
                    .mca_component_name = "tbrdma",
                    MCA_BASE_MAKE_VERSION(component, OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
                                          OMPI_RELEASE_VERSION),
                    .mca_open_component = component_open,
                    .mca_close_component = component_close,
                    .mca_register_component_params = component_register,
                },
            .collm_data = {.param_field = MCA_BASE_METADATA_PARAM_NONE},
            .collm_init_query = component_init_query,
            .collm_comm_query = mca_coll_tbrdma_comm_query,
        },
    .output = -1,
};

/* Open MPI does not check a plugin's coll API, and 4.1 and 5.0 structures differ. */
static int component_check_version(void)
{
    int major = -1, minor = -1;

    if (2 == sscanf(opal_version_string, "%d.%d", &major, &minor) && OMPI_MAJOR_VERSION == major
        && OMPI_MINOR_VERSION == minor) {
        return OMPI_SUCCESS;
    }
    opal_output(0,
                "coll tbrdma: mca_coll_tbrdma was built for Open MPI %d.%d but this is Open MPI "
                "%s: rebuild tbrdma against this Open MPI (docs/building.md); coll/tbrdma is "
                "disabled",
                OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, opal_version_string);
    return OMPI_ERR_NOT_SUPPORTED;
}

typedef struct param_int {
    const char *name;
    int *storage;
    int def, min, max;
    mca_base_var_info_lvl_t level;
    const char *help;
} param_int_t;

static void params_table(param_int_t *t)
{
    mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;

    t[0] = (param_int_t){"priority",
                         &c->priority,
                         COLL_TBRDMA_PRIORITY_DEFAULT,
                         0,
                         100,
                         OPAL_INFO_LVL_2,
                         "Priority of coll/tbrdma (0: off). Above coll/tuned's (30) and "
                         "coll/han's (35) it takes the communicators it fits: one process per "
                         "Mac, over pml ob1 and btl tbrdma; any other it leaves to Open MPI's "
                         "own components. The coll-tuned.conf tbrdma installs (share/tbrdma/, for "
                         "mpirun --tune) sets 90. Range 0..100, "
                         "default " COLL_TBRDMA_STR(COLL_TBRDMA_PRIORITY_DEFAULT)};
    t[1] = (param_int_t){"verbose",
                         &c->verbose,
                         0,
                         0,
                         100,
                         OPAL_INFO_LVL_5,
                         "Verbosity of coll/tbrdma: 1 = which communicators get it and why not; "
                         "10 = the way every call of its all-reduce, all-gather and "
                         "reduce-scatter went (\"deferred\": the component below ran it). "
                         "Range 0..100, default 0"};
    t[2] = (param_int_t){
        "allreduce_onestep_max",
        &c->onestep_max,
        COLL_TBRDMA_ONESTEP_MAX_DEFAULT,
        0,
        1 << 30,
        OPAL_INFO_LVL_4,
        "Largest MPI_Allreduce in bytes (count x datatype size) done in one "
        "step, every process sending its whole vector to every other (0: "
        "never; on the simulated mesh it was no faster than Open MPI's choice from 8 B to "
        "2 KiB). Range 0..1073741824, default " COLL_TBRDMA_STR(COLL_TBRDMA_ONESTEP_MAX_DEFAULT)};
    t[3] = (param_int_t){"allreduce_rsag_min",
                         &c->rsag_min,
                         COLL_TBRDMA_RSAG_MIN_DEFAULT,
                         0,
                         1 << 30,
                         OPAL_INFO_LVL_4,
                         "Smallest MPI_Allreduce in bytes done as a one-step reduce-scatter "
                         "then a one-step all-gather over every cable (0: never); sizes between "
                         "this and allreduce_onestep_max go to the next component. Range "
                         "0..1073741824, default " COLL_TBRDMA_STR(COLL_TBRDMA_RSAG_MIN_DEFAULT)};
    t[4] = (param_int_t){"min_procs",
                         &c->min_procs,
                         COLL_TBRDMA_MIN_PROCS_DEFAULT,
                         2,
                         1 << 20,
                         OPAL_INFO_LVL_4,
                         "Fewest processes in a communicator for coll/tbrdma to take it. Range "
                         "2..1048576, default " COLL_TBRDMA_STR(COLL_TBRDMA_MIN_PROCS_DEFAULT)};
    t[5] = (param_int_t){
        "allreduce_pair_max",
        &c->pair_max,
        COLL_TBRDMA_PAIR_MAX_DEFAULT,
        0,
        1 << 30,
        OPAL_INFO_LVL_4,
        "Largest MPI_Allreduce in bytes that a communicator of 2 processes does as one "
        "exchange of the whole vectors (0: never; then, and above it, reduce-scatter + "
        "all-gather from allreduce_rsag_min). For MPI's sum, product, bitwise and logical "
        "ops on its own datatypes, the peer's vector lands straight in the result and is "
        "reduced there in one pass. Range 0..1073741824, default " COLL_TBRDMA_STR(
            COLL_TBRDMA_PAIR_MAX_DEFAULT)};
}

/* The window parameters of allgather and reduce_scatter. */
static void params_windows(param_int_t *t)
{
    mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;

    t[0] = (param_int_t){
        "allgather_min",
        &c->allgather_min,
        COLL_TBRDMA_AG_MIN_DEFAULT,
        0,
        1 << 30,
        OPAL_INFO_LVL_4,
        "Smallest MPI_Allgather in bytes (the whole gathered vector) done in "
        "one step, every process sending its block to every other at once (0: "
        "never). Range 0..1073741824, default " COLL_TBRDMA_STR(COLL_TBRDMA_AG_MIN_DEFAULT)};
    t[1] = (param_int_t){"allgather_max",
                         &c->allgather_max,
                         COLL_TBRDMA_AG_MAX_DEFAULT,
                         0,
                         1 << 30,
                         OPAL_INFO_LVL_4,
                         "Largest MPI_Allgather in bytes done in one step (0: no limit). Range "
                         "0..1073741824, default " COLL_TBRDMA_STR(COLL_TBRDMA_AG_MAX_DEFAULT)};
    t[2] = (param_int_t){"reduce_scatter_min",
                         &c->reduce_scatter_min,
                         COLL_TBRDMA_RS_MIN_DEFAULT,
                         0,
                         1 << 30,
                         OPAL_INFO_LVL_4,
                         "Smallest MPI_Reduce_scatter(_block) in bytes (the whole input "
                         "vector) done in one step, block j of every process to process j at "
                         "once (0: never). Range 0..1073741824, default " COLL_TBRDMA_STR(
                             COLL_TBRDMA_RS_MIN_DEFAULT)};
    t[3] = (param_int_t){
        "reduce_scatter_max",
        &c->reduce_scatter_max,
        COLL_TBRDMA_RS_MAX_DEFAULT,
        0,
        1 << 30,
        OPAL_INFO_LVL_4,
        "Largest MPI_Reduce_scatter(_block) in bytes done in one step (0: no "
        "limit). Range 0..1073741824, default " COLL_TBRDMA_STR(COLL_TBRDMA_RS_MAX_DEFAULT)};
}

#define PARAMS_N 10

static int component_register(void)
{
    param_int_t t[PARAMS_N];
    int rc = component_check_version();

    params_table(t);
    params_windows(t + 6);
    for (int i = 0; i < PARAMS_N && OMPI_SUCCESS == rc; i++) {
        *t[i].storage = t[i].def;
        rc =
            mca_base_component_var_register(&mca_coll_tbrdma_component.super.collm_version,
                                            t[i].name, t[i].help, MCA_BASE_VAR_TYPE_INT, NULL, 0, 0,
                                            t[i].level, MCA_BASE_VAR_SCOPE_READONLY, t[i].storage);
        rc = rc < 0 ? rc : OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != rc) {
        mca_coll_tbrdma_component.priority = 0; /* never taken, whatever was set */
    }
    return rc;
}

/* A value out of its range is named once and replaced by the default. */
static void params_verify(void)
{
    param_int_t t[PARAMS_N];

    params_table(t);
    params_windows(t + 6);
    for (int i = 0; i < PARAMS_N; i++) {
        if (*t[i].storage < t[i].min || *t[i].storage > t[i].max) {
            opal_output(0, "coll tbrdma: coll_tbrdma_%s = %d is out of range %d..%d: using %d",
                        t[i].name, *t[i].storage, t[i].min, t[i].max, t[i].def);
            *t[i].storage = t[i].def;
        }
    }
}

static int component_open(void)
{
    mca_coll_tbrdma_component.output = opal_output_open(NULL); /* silent until set below */
    params_verify();
    opal_output_set_verbosity(mca_coll_tbrdma_component.output, mca_coll_tbrdma_component.verbose);
    return OMPI_SUCCESS;
}

static int component_close(void)
{
    if (mca_coll_tbrdma_component.output >= 0) {
        opal_output_close(mca_coll_tbrdma_component.output);
        mca_coll_tbrdma_component.output = -1;
    }
    return OMPI_SUCCESS;
}

static int component_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    return OMPI_SUCCESS;
}

tbrdma_coll_limits_t mca_coll_tbrdma_limits(void)
{
    const mca_coll_tbrdma_component_t *c = &mca_coll_tbrdma_component;

    return (tbrdma_coll_limits_t){.onestep_max = (size_t) c->onestep_max,
                                  .pair_max = (size_t) c->pair_max,
                                  .rsag_min = (size_t) c->rsag_min,
                                  .min_procs = c->min_procs};
}
