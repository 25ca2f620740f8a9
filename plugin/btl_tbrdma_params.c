/*
 * tbrdma's MCA parameters: every btl_tbrdma_* variable is registered here, in one function,
 * with help text that states units, default and range (`ompi_info --param btl tbrdma
 * --level 9` reads like docs/params.md), and checked here, in one function that warns about
 * a bad value and falls back to the default (btl_tcp's register/verify split).
 */
#include "btl_tbrdma.h"
#include "btl_tbrdma_output.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"

#include "core/tbrdma_select.h"

#include <stdio.h>
#include <stdlib.h>

static int params_register_int(const char *name, const char *help, int def,
                               mca_base_var_info_lvl_t level, int *storage)
{
    *storage = def;
    return mca_base_component_var_register(&mca_btl_tbrdma_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, level,
                                           MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int params_register_bool(const char *name, const char *help, bool def,
                                mca_base_var_info_lvl_t level, bool *storage)
{
    *storage = def;
    return mca_base_component_var_register(&mca_btl_tbrdma_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, level,
                                           MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

/* The MCA var system copies the default and owns the string stored in *storage. */
static int params_register_string(const char *name, const char *help, const char *def,
                                  mca_base_var_info_lvl_t level, char **storage)
{
    *storage = (char *) def;
    return mca_base_component_var_register(&mca_btl_tbrdma_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
}

static int params_register_own(void)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    int rc = 0;

    rc |=
        0 > params_register_int(
            "verbose",
            "Verbosity of tbrdma's own output stream (works with release builds of Open MPI): "
            "0 = silent, 1 = why tbrdma declines, which ports it uses and the mesh, 5 = per peer, "
            "10 = per resource (device, port, GID). Range 0..100, default 0",
            0, OPAL_INFO_LVL_3, &c->verbose);
    rc |= 0 > params_register_string(
              "verbs_lib",
              "Path or file name of the verbs library tbrdma loads at run time. Empty (default) = "
              "the platform's: librdma.dylib on macOS, libibverbs.so.1 on Linux",
              "", OPAL_INFO_LVL_4, &c->verbs_lib);
    rc |= 0 > params_register_string(
              "if_include",
              "Comma-separated list of RDMA devices (rdma_en3) or their network interfaces (en3) "
              "tbrdma may use; shell globs allowed (rdma_en*). Empty (default) = all devices. "
              "Mutually exclusive with btl_tbrdma_if_exclude",
              "", OPAL_INFO_LVL_1, &c->if_include);
    rc |=
        0 > params_register_string(
            "if_exclude",
            "Comma-separated list of RDMA devices (rdma_en3) or their network interfaces (en3) "
            "tbrdma must not use; shell globs allowed (rdma_en*). Empty (default) = exclude none. "
            "Mutually exclusive with btl_tbrdma_if_include",
            "", OPAL_INFO_LVL_1, &c->if_exclude);
    rc |=
        0 > params_register_string(
            "mesh_file",
            "Path of a file naming the Thunderbolt cables between hosts, needed when addresses do "
            "not identify cables (link-local 169.254/16 on every port): either tbrdma's mesh "
            "file (one cable per line, \"hostA:rdma_en2 hostB:rdma_en3\") or MLX's hostfile "
            "(JSON with an \"rdma\" device matrix). Empty (default) = cables are found from the "
            "ports' IPv4 subnets (one /30 per cable). See docs/mesh.md",
            "", OPAL_INFO_LVL_2, &c->mesh_file);
    rc |= 0 > params_register_bool(
              "allow_partial_mesh",
              "Whether tbrdma may run when some pairs of hosts have no cable between them (those "
              "peers are then reached by other BTLs only). Default false: a missing cable makes "
              "tbrdma step aside for the whole job, with a message naming every missing pair",
              false, OPAL_INFO_LVL_2, &c->allow_partial_mesh);
    return rc ? OPAL_ERROR : OPAL_SUCCESS;
}

int mca_btl_tbrdma_params_register(void)
{
    int rc = params_register_own();

    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* The standard btl_tbrdma_{exclusivity,flags,eager_limit,...} knobs. The template's
     * function table is already filled: the base strips flags without functions. */
    return mca_btl_base_param_register(&mca_btl_tbrdma_component.super.btl_version,
                                       &mca_btl_tbrdma_module_template.super);
}

/* Empties a string variable. The var system frees what its storage points to, so the old value
 * is freed here and the storage left NULL. */
static void params_reset_string(char **storage)
{
    free(*storage);
    *storage = NULL;
}

static void params_verify_verbose(void)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    char msg[TBRDMA_MSG_MAX];

    if (0 <= c->verbose && MCA_BTL_TBRDMA_VERBOSE_MAX >= c->verbose) {
        return;
    }
    snprintf(msg, sizeof(msg), "btl_tbrdma_verbose = %d is outside 0..%d; using 0", c->verbose,
             MCA_BTL_TBRDMA_VERBOSE_MAX);
    mca_btl_tbrdma_show_help("invalid-param", msg);
    c->verbose = 0;
}

/* Both device lists set (the only way they can be invalid): the include list wins. */
static void params_verify_selection(void)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    char err[TBRDMA_MSG_MAX / 2], msg[TBRDMA_MSG_MAX];

    if (0 == tbrdma_select_validate(c->if_include, c->if_exclude, err, sizeof(err))) {
        return;
    }
    snprintf(msg, sizeof(msg),
             "%s; using btl_tbrdma_if_include = %s and ignoring btl_tbrdma_if_exclude = %s", err,
             c->if_include, c->if_exclude);
    params_reset_string(&c->if_exclude);
    mca_btl_tbrdma_show_help("invalid-param", msg);
}

/* Flags whose functions this tbrdma does not have yet (no data path): the base strips PUT,
 * GET, flush and atomics; tbrdma strips the send-side ones. */
static void params_verify_flags(void)
{
    mca_btl_base_module_t *m = &mca_btl_tbrdma_module_template.super;
    uint32_t unsupported = 0;
    char msg[TBRDMA_MSG_MAX];

    if (NULL == m->btl_send) {
        unsupported |= MCA_BTL_FLAGS_SEND;
    }
    if (NULL == m->btl_prepare_src) {
        unsupported |= MCA_BTL_FLAGS_SEND_INPLACE;
    }
    if (0 == (m->btl_flags & unsupported)) {
        return;
    }
    snprintf(msg, sizeof(msg),
             "btl_tbrdma_flags = 0x%x asks for send flags 0x%x, but this "
             "tbrdma has no data path yet; ignoring them",
             m->btl_flags, m->btl_flags & unsupported);
    mca_btl_tbrdma_show_help("invalid-param", msg);
    m->btl_flags &= ~unsupported;
}

void mca_btl_tbrdma_params_verify(void)
{
    params_verify_verbose();
    params_verify_selection();
    params_verify_flags();
}
