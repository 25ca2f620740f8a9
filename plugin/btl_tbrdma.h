/*
 * mca_btl_tbrdma: the component and module of tbrdma, Open MPI's BTL for RDMA over Thunderbolt.
 *
 * One component, at most one module per process (all of a host's Thunderbolt ports belong to
 * one module: the mesh decides which port reaches which peer host, and when several cables
 * join two hosts, large messages are striped over all of them). add_procs solves the mesh,
 * opens the devices it needs, creates two UC queue pairs per peer process on another host (one
 * per channel: 1-frame messages, bulk messages), exchanges queue pair numbers through PMIx and
 * connects them; after that, send/sendi/progress move ob1's fragments over them with tbrdma's
 * own credits, acknowledgements, retransmission and liveness (docs/design.md).
 *
 * Threads: the data path is serialized by a token (base/btl_tbrdma_token.c) that the application
 * thread(s) and tbrdma's liveness thread take; ob1 is only ever called back from an application
 * thread.
 */
#ifndef BTL_TBRDMA_H
#define BTL_TBRDMA_H

#include "btl_tbrdma_compat.h"

#include "opal/class/opal_list.h"

#include "core/tbrdma_live.h"
#include "core/tbrdma_mesh.h"
#include "core/tbrdma_modex.h"
#include "core/tbrdma_rel.h"
#include "core/tbrdma_types.h"
#include "core/tbrdma_wire.h"
#include "core/tbrdma_zc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define MCA_BTL_TBRDMA_LATENCY     10    /* below tcp's 100: first fragments go here */
#define MCA_BTL_TBRDMA_BANDWIDTH   40000 /* Mbit/s, what one TB5 cable carries with RDMA */
#define MCA_BTL_TBRDMA_VERBOSE_MAX 100

/* Apple's limits and tbrdma's fixed choices (docs/design.md has the arithmetic). */
#define TBRDMA_WR_MAX        63 /* work requests really accepted in flight per queue (Apple) */
#define TBRDMA_CTRL_RESERVE  4  /* 1-frame receives kept for control frames */
#define TBRDMA_CTRL_BYTES    64 /* a control frame's buffer: header only */
#define TBRDMA_POLL_BATCH    32 /* completions taken per poll */
#define TBRDMA_LIVENESS_TICK 10 /* ms between two looks of the liveness thread */
/* frames of a bulk message by default: 17, so that a 64 KiB MPI message with ob1's header is
 * one bulk message (docs/design.md, "Why K = 17") */
#define TBRDMA_BULK_FRAMES_DEFAULT 17

struct mca_btl_tbrdma_frag_t;
struct mca_btl_tbrdma_device_t;
struct mca_btl_tbrdma_module_t;
struct tbrdma_vwc;

/*
 * What the completions (the channel layer) hand up without knowing who takes it: the upper
 * layers fill the table when the module is created, as Open MPI's btl/uct and btl/ofi dispatch
 * their completions. Both run with the token held.
 */
typedef struct mca_btl_tbrdma_upcalls_t {
    /* a completion whose work request is no frame (core/tbrdma_zc.h: zero-copy's user memory) */
    void (*wc)(struct mca_btl_tbrdma_module_t *module, const struct tbrdma_vwc *wc);
    /* a message of tbrdma's own BTL tag, delivered in order (application thread) */
    uint8_t tag;
    void (*msg)(struct mca_btl_tbrdma_module_t *module, struct mca_btl_base_endpoint_t *ep,
                const uint8_t *buf, size_t len);
} mca_btl_tbrdma_upcalls_t;

/* Counters of one process, printed at finalize (btl_tbrdma_stats) and on failure. */
typedef struct mca_btl_tbrdma_stats {
    uint64_t tx_data, tx_bytes, tx_ctrl, tx_forced, retransmits, timeouts, nacks_sent, nacks_rcvd;
    uint64_t rx_data, rx_bytes, rx_dup, rx_gap, rx_ctrl, rx_wc_err, rx_unknown_tag;
    uint64_t rx_bad[TBRDMA_FRAME_VERDICTS]; /* refused frames by verdict */
    uint64_t tx_wc_err, credit_stalls, credit_probes, held, bogus_acks, no_frame;
    uint64_t held_other; /* held for causal order while their own peer had no callback waiting */
    uint64_t tx_striped; /* data frames sent on a pair's second or later cable */
    uint64_t tx_trains, rx_trains;  /* messages sent and delivered as trains of 1-frame pieces */
    uint64_t abandoned;             /* send frames never acknowledged, dropped at finalize */
    uint64_t heap_lent, heap_waits; /* heap frames lent (no free frame), transmissions that waited
                                       for a pool frame to carry one (fabric/btl_tbrdma_frag.h) */
    /* zero-copy (btl_tbrdma_zcopy*.c): gets, chunks, epochs and why they changed */
    uint64_t zc_gets, zc_refused, zc_failed, zc_rx_chunks, zc_rx_bytes, zc_tx_chunks, zc_tx_bytes;
    uint64_t zc_epochs, zc_why[TBRDMA_ZC_REASONS], zc_noreg, zc_post_err, zc_tx_wc_err, zc_bad_msg;
} mca_btl_tbrdma_stats_t;

typedef struct mca_btl_tbrdma_component_t {
    mca_btl_base_component_t super;

    /* MCA parameters (btl_tbrdma_params.c); strings are owned by the MCA var system. */
    int verbose;
    char *verbs_lib;
    char *if_include;
    char *if_exclude;
    char *mesh_file;
    char *ledger_dir; /* the slot ledger's directory (base/btl_tbrdma_ledger.h); "": off */
    bool allow_partial_mesh;
    bool checksum;        /* payload CRC32C on every frame */
    int eager_depth;      /* 1-frame receives posted per peer */
    int bulk_depth;       /* bulk receives posted per peer */
    int bulk_frames;      /* frames per bulk message (TBRDMA_BULK_FRAMES_DEFAULT) */
    int train_frames;     /* longest train of 1-frame messages instead of a padded bulk one */
    int send_frames;      /* 1-frame send buffers per device */
    int bulk_send_frames; /* bulk send buffers per device */
    int max_qps_per_device;
    int peer_timeout_ms;    /* silence after which a peer is declared lost */
    int rto_us;             /* first retransmission timeout */
    int ack_delay_us;       /* an owed acknowledgement waits at most this long */
    bool liveness_thread;   /* answer peers while the application computes */
    bool release_on_signal; /* free queue pairs and memory on SIGTERM/SIGINT/SIGHUP */
    bool stats;             /* print the counters at finalize */
    int stats_interval_s;   /* print them every this many seconds while running (0: never) */
    bool stripe;            /* use every cable of a pair of hosts for large messages */
    int stripe_min_size;    /* bytes: smaller messages stay on the pair's first cable */
    bool zcopy;             /* zero-copy gets for large messages */
    int zcopy_min;          /* bytes: smaller messages are copied (the switch point) */
    int zcopy_chunk;        /* bytes: the largest zero-copy SEND (whole frames) */
    int zcopy_window;       /* chunks in flight per peer */
    int zcopy_max_regs;     /* memory regions of user memory per device and process */
    char *agent;            /* "auto", "on" or "off": the per-Mac agent (btl_tbrdma_agent.h) */
    char *agent_path;       /* the tbrdma-agent program ("": beside the plugin, then bindir) */
    int agent_timeout_ms;   /* how long a rank waits for its agent to answer */

    int output; /* opal_output stream of btl_tbrdma_verbose, -1 when closed */

    /* What init found; freed by close. */
    bool verbs_open;
    struct mca_btl_tbrdma_module_t *module;
} mca_btl_tbrdma_component_t;

OPAL_DECLSPEC extern mca_btl_tbrdma_component_t mca_btl_tbrdma_component;

typedef struct mca_btl_tbrdma_module_t {
    mca_btl_base_module_t super;

    tbrdma_modex_t local;      /* this host and its usable ports, as published */
    tbrdma_port_info_t *ports; /* discovery of local.ports[i], same order */
    tbrdma_mesh_spec_t *spec;  /* btl_tbrdma_mesh_file, NULL when not set */
    opal_list_t endpoints;     /* mca_btl_tbrdma_endpoint_t, one per peer on another host */
    opal_mutex_t lock;         /* add_procs/del_procs may run from several threads */

    /* The data path (btl_tbrdma_connect.c creates it, btl_tbrdma_module.c frees it). */
    struct mca_btl_tbrdma_device_t *devices[TBRDMA_MAX_PORTS]; /* by local port, NULL = unused */
    struct mca_btl_base_endpoint_t **eps; /* connected endpoints, for the progress loop */
    int neps;
    bool verbs_live;   /* queue pairs and memory exist (released at finalize, error or signal) */
    bool connect_done; /* the job's one connection step ran */
    bool agent_mode;   /* the cables' queue pairs are the per-Mac agent's (btl_tbrdma_agent.h) */
    bool agent_lost;   /* that agent died or stopped: every endpoint failed with it */
    mca_btl_base_module_error_cb_fn_t error_cb;
    tbrdma_rel_timing_t timing;
    uint64_t peer_timeout_ns, ack_delay_ns, force_ns;
    tbrdma_live_cfg_t live;      /* the peers' liveness rules (core/tbrdma_live.h) */
    mca_btl_tbrdma_upcalls_t up; /* what the completions hand up (module_create fills it) */
    uint64_t last_pass_ns;       /* ns: the last progress pass (a longer gap was a stall) */

    /* The token that serializes the data path, and who holds it (base/btl_tbrdma_token.c). */
    _Atomic uintptr_t token_owner;
    int token_depth;
    int in_progress; /* a progress pass is running (ob1 callbacks may not start another) */
    bool async_pass; /* the running pass belongs to the liveness thread */
    _Atomic uint64_t last_app_progress; /* ns: the last progress call of an application thread */
    uint64_t clock_ns; /* ns: the time of the last pass (zero-copy work inside a pass uses it) */
    uint64_t stats_start_ns, stats_next_ns; /* btl_tbrdma_stats_interval_s: counted from, next */

    /* Work the liveness thread leaves for an application thread (token-protected). */
    struct mca_btl_tbrdma_frag_t *deferred;          /* frames to return to their pools */
    struct mca_btl_tbrdma_frag_t *cb_head, *cb_tail; /* send completions ob1 must hear of */
    bool failure_pending;
    bool finalizing; /* ob1 is gone: sends finish without its callbacks */

    /* Fragments ob1 handed over while another thread held the token (submit_lock). */
    pthread_mutex_t submit_lock;
    struct mca_btl_tbrdma_frag_t *submit_head, *submit_tail;
    _Atomic int submit_count;

    /* The liveness thread. */
    pthread_t thread;
    bool thread_running;
    _Atomic int thread_stop;

    mca_btl_tbrdma_stats_t stats;
} mca_btl_tbrdma_module_t;

/* The function table and defaults every module starts from (registered with the MCA base). */
extern mca_btl_tbrdma_module_t mca_btl_tbrdma_module_template;

/* btl_tbrdma_params.c: register every MCA variable of tbrdma; warn about and reset bad ones. */
int mca_btl_tbrdma_params_register(void);
void mca_btl_tbrdma_params_verify(void);

/* btl_tbrdma_module.c: a module for the usable ports; takes ownership of ports and spec. */
mca_btl_tbrdma_module_t *mca_btl_tbrdma_module_create(const tbrdma_modex_t *local,
                                                      tbrdma_port_info_t *ports,
                                                      tbrdma_mesh_spec_t *spec);

/* engine/btl_tbrdma_progress.c: the component's progress function (registered with opal_progress).
 */
int mca_btl_tbrdma_component_progress(void);

#endif /* BTL_TBRDMA_H */
