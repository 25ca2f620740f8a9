/*
 * tbrdma's MCA parameters: every btl_tbrdma_* variable is registered here, in one function,
 * with help text that states units, default and range (`ompi_info --param btl tbrdma
 * --level 9` reads like docs/params.md), and checked here, in one function that warns about
 * a bad value and falls back to the default (btl_tcp's register/verify split).
 */
#include "base/btl_tbrdma_ledger.h"
#include "base/btl_tbrdma_output.h"
#include "btl_tbrdma.h"
#include "fabric/btl_tbrdma_frag.h"
#include "proto/zcopy/btl_tbrdma_zcopy.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/btl/base/base.h"

#include "core/tbrdma_select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int params_register_int(const char *name, const char *help, int def,
                               mca_base_var_info_lvl_t level, mca_base_var_scope_t scope,
                               int *storage)
{
    *storage = def;
    return mca_base_component_var_register(&mca_btl_tbrdma_component.super.btl_version, name, help,
                                           MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, level, scope,
                                           storage);
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

/* An integer parameter: name, storage, default and range, with its help text and level. */
typedef struct params_int {
    const char *name;
    int *storage;
    int def, min, max;
    mca_base_var_info_lvl_t level;
    const char *help;
} params_int_t;

/* ALL_EQ for the parameters every process of a job must share (the wire's bulk message size:
 * add_procs refuses a job whose processes differ), LOCAL for the others. */
static mca_base_var_scope_t params_scope(const char *name)
{
    return (0 == strcmp(name, "bulk_frames")) ? MCA_BASE_VAR_SCOPE_ALL_EQ
                                              : MCA_BASE_VAR_SCOPE_LOCAL;
}

#define PARAMS_ZCOPY_MIN_HELP                                                                     \
    "Bytes from which a contiguous message goes zero-copy (the receiver posts receives straight " \
    "into the user's buffer and the sender sends from it) instead of being copied through "       \
    "tbrdma's frames; the switch point, measured by bench/zcopy_bench.sh (docs/design.md). "      \
    "Messages of at most btl_tbrdma_eager_limit go one way, copied, whatever this says. Range "   \
    "4057..1073741824, default " TBRDMA_STR(TBRDMA_ZCOPY_MIN_DEFAULT)

/* Zero-copy's integer parameters (docs/design.md, "Zero-copy large messages"). */
static void params_zcopy_table(params_int_t *t)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;

    t[0] = (params_int_t){"zcopy_min",
                          &c->zcopy_min,
                          TBRDMA_ZCOPY_MIN_DEFAULT,
                          TBRDMA_FRAME_BYTES - TBRDMA_HDR_BYTES + 1,
                          1 << 30,
                          OPAL_INFO_LVL_4,
                          PARAMS_ZCOPY_MIN_HELP};
    t[1] = (params_int_t){"zcopy_chunk",
                          &c->zcopy_chunk,
                          TBRDMA_ZCOPY_CHUNK_DEFAULT,
                          TBRDMA_FRAME_BYTES,
                          TBRDMA_MSG_MAX_BYTES,
                          OPAL_INFO_LVL_6,
                          "Largest zero-copy SEND in bytes, a multiple of 4096 (Apple sends at "
                          "most 4095 frames, 16773120 bytes, per message). Range "
                          "4096..16773120, default " TBRDMA_STR(TBRDMA_ZCOPY_CHUNK_DEFAULT)};
    t[2] = (params_int_t){
        "zcopy_window",
        &c->zcopy_window,
        TBRDMA_ZCOPY_WINDOW_DEFAULT,
        1,
        TBRDMA_ZC_WINDOW_MAX,
        OPAL_INFO_LVL_6,
        "Zero-copy chunks in flight per peer process (receives posted into user "
        "memory at once). Range 1..8, default " TBRDMA_STR(TBRDMA_ZCOPY_WINDOW_DEFAULT)};
    t[3] = (params_int_t){"zcopy_max_regs",
                          &c->zcopy_max_regs,
                          32,
                          0,
                          100,
                          OPAL_INFO_LVL_5,
                          "Memory regions of user memory one process keeps registered per "
                          "device (Apple allows about 100 per device, shared by every process "
                          "of the Mac); the least recently used unused one is released for a "
                          "new one, and a message that finds none is copied. 0 = never "
                          "zero-copy. Range 0..100, default 32"};
}

/* The data path's integer parameters (docs/params.md and docs/design.md explain each). */
static params_int_t *params_int_table(size_t *n_p)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    static params_int_t table[17];

    table[0] = (params_int_t){"eager_depth",
                              &c->eager_depth,
                              48,
                              TBRDMA_CTRL_RESERVE + 4,
                              TBRDMA_WR_MAX,
                              OPAL_INFO_LVL_6,
                              "1-frame receives posted per peer process (frames). "
                              "Range 8..63 (Apple accepts 63 work requests per queue), "
                              "default 48, of which 4 are kept for control frames"};
    table[1] = (params_int_t){"bulk_depth",
                              &c->bulk_depth,
                              16,
                              2,
                              TBRDMA_WR_MAX,
                              OPAL_INFO_LVL_6,
                              "Bulk receives posted per peer process (messages). Range 2..63, "
                              "default 16"};
    table[2] = (params_int_t){"bulk_frames",
                              &c->bulk_frames,
                              TBRDMA_BULK_FRAMES_DEFAULT,
                              2,
                              256,
                              OPAL_INFO_LVL_5,
                              "Size of a bulk message in 4 KiB frames: ob1's large fragments "
                              "are up to this many frames minus the 40-byte header. Every "
                              "process of a job must use the same value. Range 2..256, "
                              "default 17 (68 KiB: a 64 KiB MPI message with ob1's header is one "
                              "bulk message)"};
    table[3] = (params_int_t){"send_frames",
                              &c->send_frames,
                              256,
                              16,
                              4096,
                              OPAL_INFO_LVL_6,
                              "1-frame send buffers per device (frames), shared by its peers. "
                              "Range 16..4096, default 256"};
    table[4] = (params_int_t){"bulk_send_frames",
                              &c->bulk_send_frames,
                              32,
                              2,
                              1024,
                              OPAL_INFO_LVL_6,
                              "Bulk send buffers per device (messages), shared by its peers. "
                              "Range 2..1024, default 32"};
    table[5] = (params_int_t){"max_qps_per_device",
                              &c->max_qps_per_device,
                              10,
                              2,
                              4096,
                              OPAL_INFO_LVL_4,
                              "Queue pairs one device may hold, counted over every process of "
                              "the host (Apple's limit is 10). A job needing more (2 per pair "
                              "of ranks on the two ends of a cable) is refused at start-up. "
                              "Range 2..4096, default 10"};
    table[6] = (params_int_t){"peer_timeout_ms",
                              &c->peer_timeout_ms,
                              5000,
                              100,
                              3600000,
                              OPAL_INFO_LVL_3,
                              "Milliseconds of silence after which a peer is declared lost "
                              "(its process died, its Mac went away, the cable was pulled): "
                              "the job then ends with a message naming the peer and the cable. "
                              "Peers are probed after a tenth of it; a process stalled for "
                              "less than 80 % of it is never declared lost, and frames left "
                              "unacknowledged for all of it end the job too. Range "
                              "100..3600000, default 5000"};
    table[7] = (params_int_t){"retransmit_timeout_us",
                              &c->rto_us,
                              4000,
                              10,
                              1000000,
                              OPAL_INFO_LVL_6,
                              "Least microseconds before an unacknowledged frame is sent "
                              "again; above it the timeout follows the measured round trip "
                              "(smoothed + 4 deviations), doubling per timeout up to 0.5 s. "
                              "Range 10..1000000, default 4000"};
    table[8] = (params_int_t){"ack_delay_us",
                              &c->ack_delay_us,
                              100,
                              1,
                              100000,
                              OPAL_INFO_LVL_7,
                              "Microseconds an acknowledgement may wait for a data frame to "
                              "carry it before it goes alone. Range 1..100000, default 100"};
    table[9] = (params_int_t){"stripe_min_size",
                              &c->stripe_min_size,
                              131072,
                              0,
                              1 << 30,
                              OPAL_INFO_LVL_4,
                              "Bytes from which a message is striped over every cable joining "
                              "two Macs (with btl_tbrdma_stripe): its bulk fragments go to the "
                              "least loaded cable; smaller messages, and every eager-sized one, "
                              "stay on the pair's first cable, in order. Range 0..1073741824, "
                              "default 131072 (two bulk fragments)"};
    table[10] = (params_int_t){"train_frames",
                               &c->train_frames,
                               TBRDMA_TRAIN_FRAMES_DEFAULT,
                               1,
                               256,
                               OPAL_INFO_LVL_5,
                               "Longest message, in frames of 4056 payload bytes, sent as a "
                               "train of 1-frame messages on the 1-frame channel instead of one "
                               "bulk message padded to btl_tbrdma_bulk_frames frames (Apple's "
                               "frame rule: a short bulk message crosses the cable as a whole "
                               "one). 1 = never: every message longer than one frame goes bulk. "
                               "Processes may differ. Range 1..256, default 8 (32,448 bytes: a "
                               "32 KiB message with ob1's header goes as one bulk message, "
                               "measured faster so)"};
    params_zcopy_table(table + 11);
    table[15] = (params_int_t){"stats_interval_s",
                               &c->stats_interval_s,
                               0,
                               0,
                               86400,
                               OPAL_INFO_LVL_5,
                               "Seconds between two prints of each process's data path counters "
                               "while the job runs (\"tbrdma stats after N s:\" and \"tbrdma "
                               "zcopy after N s:\" lines, the fields of btl_tbrdma_stats): what "
                               "a slow or stuck job is doing. Printed by the progress pass, so "
                               "also while a process waits in MPI. 0 = never. Range 0..86400, "
                               "default 0"};
    table[16] = (params_int_t){"agent_timeout_ms",
                               &c->agent_timeout_ms,
                               30000,
                               100,
                               600000,
                               OPAL_INFO_LVL_5,
                               "Milliseconds a rank waits for its Mac's tbrdma agent to open the "
                               "cables and to connect them to the peer Macs' agents at start-up "
                               "(btl_tbrdma_agent); a dead agent is seen at once, one whose "
                               "heartbeat stands still for 15 s (or 3 x btl_tbrdma_peer_timeout_ms "
                               "when longer) is taken for hung. Range 100..600000, default 30000"};
    *n_p = sizeof(table) / sizeof(table[0]);
    return table;
}

static int params_register_data_path(void)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    size_t n;
    params_int_t *t = params_int_table(&n);
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        rc |= 0 > params_register_int(t[i].name, t[i].help, t[i].def, t[i].level,
                                      params_scope(t[i].name), t[i].storage);
    }
    rc |= 0 > params_register_bool(
              "checksum",
              "Whether every frame's payload carries a CRC32C (hardware-accelerated where the "
              "CPU has it) that the receiver checks; a frame that fails is dropped and sent "
              "again. On when either end of a connection asks. Default true",
              true, OPAL_INFO_LVL_4, &c->checksum);
    rc |= 0 > params_register_bool(
              "liveness_thread",
              "Whether a thread answers peers while the application computes outside MPI, so "
              "that a busy rank is never mistaken for a lost one. Default true; without it, "
              "raise btl_tbrdma_peer_timeout_ms above the longest computation",
              true, OPAL_INFO_LVL_5, &c->liveness_thread);
    rc |= 0 > params_register_bool(
              "release_on_signal",
              "Whether SIGTERM, SIGINT and SIGHUP first release tbrdma's queue pairs and memory "
              "(Macs are reported to keep them until a reboot otherwise). Signals the "
              "application handles or ignores itself are left to it. Default true",
              true, OPAL_INFO_LVL_5, &c->release_on_signal);
    rc |= 0 > params_register_bool(
              "stripe",
              "Whether two Macs joined by several Thunderbolt cables use all of them (up to 4): "
              "each cable gets its own queue pairs (2 per pair of ranks, on that cable's device) "
              "and large messages are striped over them (btl_tbrdma_stripe_min_size); a cable "
              "lost then ends the job like a lost peer. False: only the pair's first cable is "
              "used and the others stay idle. Default true",
              true, OPAL_INFO_LVL_4, &c->stripe);
    rc |= 0 > params_register_bool(
              "zcopy",
              "Whether large contiguous messages go zero-copy (ob1's get, emulated over SEND "
              "into and from user memory) where the queue pair budget leaves room for a third "
              "queue pair per pair of ranks; else every message is copied through tbrdma's "
              "frames. Default true",
              true, OPAL_INFO_LVL_4, &c->zcopy);
    rc |= 0 > params_register_bool(
              "stats",
              "Whether each process prints its data path counters (frames, retransmissions, "
              "refused frames) at finalize. Default false",
              false, OPAL_INFO_LVL_5, &c->stats);
    return rc ? OPAL_ERROR : OPAL_SUCCESS;
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
            0, OPAL_INFO_LVL_3, MCA_BASE_VAR_SCOPE_LOCAL, &c->verbose);
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
    rc |= 0 > params_register_string(
              "ledger_dir",
              "Directory of the slot ledger: each tbrdma process records there the queue pairs "
              "it holds on each device, and removes its record when it releases them. When a "
              "queue pair cannot be created, the records of processes that died without "
              "releasing theirs (SIGKILL, MPI_Abort, a crash) name the slots they hold until the "
              "Mac restarts. Created for every user when missing. Empty = no ledger. "
              "Default " TBRDMA_LEDGER_DIR_DEFAULT,
              TBRDMA_LEDGER_DIR_DEFAULT, OPAL_INFO_LVL_4, &c->ledger_dir);
    rc |= 0 > params_register_string(
              "agent",
              "Who holds the cables' queue pairs. \"on\": one tbrdma-agent process per Mac and "
              "job, which every rank of that Mac reaches through shared memory: 2 queue pairs "
              "per cable end per job whatever the ranks, and a rank that dies holds nothing. "
              "\"off\": each rank its own, 2 per pair of ranks on the two ends of a cable "
              "(and zero-copy's third where it fits). \"auto\" (default): the agent when the "
              "ranks' own would not fit btl_tbrdma_max_qps_per_device",
              "auto", OPAL_INFO_LVL_3, &c->agent);
    rc |= 0 > params_register_string(
              "agent_path",
              "Path of the tbrdma-agent program (btl_tbrdma_agent). Empty (default) = the one "
              "built beside this plugin, else the installed one",
              "", OPAL_INFO_LVL_5, &c->agent_path);
    rc |= 0 > params_register_bool(
              "allow_partial_mesh",
              "Whether tbrdma may run when some pairs of hosts have no cable between them (those "
              "peers are then reached by other BTLs only). Default false: a missing cable makes "
              "tbrdma step aside for the whole job, with a message naming every missing pair",
              false, OPAL_INFO_LVL_2, &c->allow_partial_mesh);
    return rc ? OPAL_ERROR : OPAL_SUCCESS;
}

/* Out-of-range integers go back to their default, with a message. */
static void params_verify_ints(void)
{
    char msg[TBRDMA_MSG_MAX];
    size_t n;
    params_int_t *t = params_int_table(&n);

    for (size_t i = 0; i < n; i++) {
        if (t[i].min <= *t[i].storage && *t[i].storage <= t[i].max) {
            continue;
        }
        snprintf(msg, sizeof(msg), "btl_tbrdma_%s = %d is outside %d..%d; using %d", t[i].name,
                 *t[i].storage, t[i].min, t[i].max, t[i].def);
        mca_btl_tbrdma_show_help_all("invalid-param", msg);
        *t[i].storage = t[i].def;
    }
}

/* btl_tbrdma_agent is one of its three words. */
static void params_verify_agent(void)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    char msg[TBRDMA_MSG_MAX];

    if (NULL != c->agent
        && (0 == strcmp(c->agent, "auto") || 0 == strcmp(c->agent, "on")
            || 0 == strcmp(c->agent, "off"))) {
        return;
    }
    snprintf(msg, sizeof(msg), "btl_tbrdma_agent = \"%s\" is not auto, on or off; using auto",
             NULL != c->agent ? c->agent : "");
    mca_btl_tbrdma_show_help_all("invalid-param", msg);
    c->agent = "auto";
}

/* Zero-copy chunks are whole frames; without zero-copy ob1 is offered no get at all. */
static void params_verify_zcopy(void)
{
    mca_btl_tbrdma_component_t *c = &mca_btl_tbrdma_component;
    mca_btl_base_module_t *m = &mca_btl_tbrdma_module_template.super;
    char msg[TBRDMA_MSG_MAX];

    if (0 != c->zcopy_chunk % TBRDMA_FRAME_BYTES) {
        snprintf(msg, sizeof(msg), "btl_tbrdma_zcopy_chunk = %d is not a multiple of %d; using %d",
                 c->zcopy_chunk, TBRDMA_FRAME_BYTES, TBRDMA_ZCOPY_CHUNK_DEFAULT);
        mca_btl_tbrdma_show_help_all("invalid-param", msg);
        c->zcopy_chunk = TBRDMA_ZCOPY_CHUNK_DEFAULT;
    }
    if (!c->zcopy) {
        m->btl_flags &= ~MCA_BTL_FLAGS_GET;
        m->btl_get = NULL;
        m->btl_register_mem = NULL;
        m->btl_deregister_mem = NULL;
    }
}

int mca_btl_tbrdma_params_register(void)
{
    mca_btl_base_module_t *m = &mca_btl_tbrdma_module_template.super;
    int rc = params_register_own();

    if (OPAL_SUCCESS == rc) {
        rc = params_register_data_path();
    }
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    /* ob1's largest fragment is one bulk message (the base registers it with this default) */
    params_verify_ints();
    params_verify_zcopy();
    params_verify_agent();
    /* ob1's eager messages and largest fragments: one bulk message, so a message that fits
     * one goes one way, without a rendezvous's round trip (as a train up to the longest train,
     * as one padded bulk message above it) */
    m->btl_max_send_size = tbrdma_bulk_payload();
    m->btl_eager_limit = tbrdma_bulk_payload();
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
    mca_btl_tbrdma_show_help_all("invalid-param", msg);
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
    mca_btl_tbrdma_show_help_all("invalid-param", msg);
}

/* Flags whose functions tbrdma does not have: the base strips PUT, GET, flush and atomics;
 * tbrdma strips the send-side ones it lacks (SEND_INPLACE: it always copies into frames). */
static void params_verify_flags(void)
{
    mca_btl_base_module_t *m = &mca_btl_tbrdma_module_template.super;
    uint32_t unsupported = 0;
    char msg[TBRDMA_MSG_MAX];

    if (NULL == m->btl_send) {
        unsupported |= MCA_BTL_FLAGS_SEND;
    }
    unsupported |= MCA_BTL_FLAGS_SEND_INPLACE;
    if (0 == (m->btl_flags & unsupported)) {
        return;
    }
    snprintf(msg, sizeof(msg),
             "btl_tbrdma_flags = 0x%x asks for flags 0x%x that tbrdma does not support "
             "(it copies what it sends into registered frames, or sends large messages "
             "zero-copy through get); ignoring them",
             m->btl_flags, m->btl_flags & unsupported);
    mca_btl_tbrdma_show_help_all("invalid-param", msg);
    m->btl_flags &= ~unsupported;
}

/* ob1's sizes must fit the frames: eager messages and fragments in a bulk message, a
 * rendezvous's first fragment in the eager limit. */
static void params_verify_sizes(void)
{
    mca_btl_base_module_t *m = &mca_btl_tbrdma_module_template.super;
    size_t eager = tbrdma_eager_payload(), bulk = tbrdma_bulk_payload();
    char msg[TBRDMA_MSG_MAX];

    if (m->btl_eager_limit > bulk || m->btl_rndv_eager_limit > m->btl_eager_limit
        || m->btl_max_send_size > bulk || m->btl_max_send_size < m->btl_eager_limit) {
        snprintf(msg, sizeof(msg),
                 "btl_tbrdma_eager_limit = %zu, rndv_eager_limit = %zu and max_send_size = %zu "
                 "do not fit tbrdma's frames (rndv <= eager <= max_send <= %zu with "
                 "btl_tbrdma_bulk_frames = %d); using %zu, %zu and %zu",
                 m->btl_eager_limit, m->btl_rndv_eager_limit, m->btl_max_send_size, bulk,
                 mca_btl_tbrdma_component.bulk_frames, bulk, eager, bulk);
        mca_btl_tbrdma_show_help_all("invalid-param", msg);
        m->btl_eager_limit = bulk;
        m->btl_rndv_eager_limit = eager;
        m->btl_max_send_size = bulk;
    }
}

void mca_btl_tbrdma_params_verify(void)
{
    params_verify_verbose();
    params_verify_selection();
    params_verify_flags();
    params_verify_ints();
    params_verify_sizes();
}
