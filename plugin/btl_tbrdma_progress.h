/*
 * The internal interface of tbrdma's data path, shared by its files:
 *   btl_tbrdma_progress.c  the token, the progress pass, timers, liveness, failure reports
 *   btl_tbrdma_send.c      ob1's send/sendi, channel send lists, control frames
 *   btl_tbrdma_recv.c      completions: receives (checks, delivery) and sends
 *   btl_tbrdma_connect.c   add_procs' data path: budget, queue pairs, PMIx exchange, handshake
 *
 * The token serializes everything that touches queue pairs, channels and endpoints: an
 * application thread takes it (recursively: ob1 callbacks may send), the liveness thread only
 * tries it. Functions below marked "token" must be called with it held.
 */
#ifndef BTL_TBRDMA_PROGRESS_H
#define BTL_TBRDMA_PROGRESS_H

#include "btl_tbrdma.h"
#include "btl_tbrdma_endpoint.h"
#include "btl_tbrdma_frag.h"
#include "btl_tbrdma_teardown.h"
#include "btl_tbrdma_token.h"

#include <signal.h>

/* ---- btl_tbrdma_progress.c ------------------------------------------------------------- */

/* One pass over the data path (token) at time now: completions, transmissions, timers. async:
 * the liveness thread runs it (nothing may call ob1). Returns the completions handled. */
int mca_btl_tbrdma_pass(mca_btl_tbrdma_module_t *module, bool async, uint64_t now);

/* Starts and stops the liveness thread. */
int mca_btl_tbrdma_liveness_start(mca_btl_tbrdma_module_t *module);
void mca_btl_tbrdma_liveness_stop(mca_btl_tbrdma_module_t *module);

/* btl_tbrdma_module.c: this process's counters, one "tbrdma stats" and one "tbrdma zcopy" line;
 * WHEN follows the word ("" at finalize, " after 30 s" while running). */
void mca_btl_tbrdma_print_stats(const mca_btl_tbrdma_module_t *module, const char *when);

/* ---- btl_tbrdma_signal.c --------------------------------------------------------------- */

/*
 * Releases the verbs resources on SIGTERM/SIGINT/SIGHUP (btl_tbrdma_release_on_signal), for
 * each of them whose disposition is still the default one (the application's own handlers and
 * ignored signals are left alone).
 */
void mca_btl_tbrdma_signal_install(void);

/* Puts the previous handlers back (finalize). */
void mca_btl_tbrdma_signal_restore(void);

/* ---- btl_tbrdma_send.c ----------------------------------------------------------------- */

int mca_btl_tbrdma_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                        struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_tbrdma_sendi(struct mca_btl_base_module_t *btl,
                         struct mca_btl_base_endpoint_t *endpoint,
                         struct opal_convertor_t *convertor, void *header, size_t header_size,
                         size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                         mca_btl_base_descriptor_t **descriptor);

/* Queues a data frame on its channel (token): sequence number, send list. */
void mca_btl_tbrdma_ep_enqueue(mca_btl_tbrdma_endpoint_t *ep, mca_btl_tbrdma_frag_t *frag);

/* Transmits what credits and send queues allow on both channels (token). */
void mca_btl_tbrdma_ep_push(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint64_t now);

/* Sends a control frame of type (ACK or CLOSE) if one is owed or forced (token). */
void mca_btl_tbrdma_ep_ctrl(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            uint8_t type, bool force);

/* Sends an acknowledgement when one is owed: threshold, NACK, request, or delay (token). */
void mca_btl_tbrdma_ep_flush_owed(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                  uint64_t now);

/* Returns a control frame to its device's pool (token). */
void mca_btl_tbrdma_ctrl_put(mca_btl_tbrdma_frag_t *frag);

/* Queues the fragments ob1 handed over while the token was busy (token). */
void mca_btl_tbrdma_submit_drain(mca_btl_tbrdma_module_t *module);

/* ---- btl_tbrdma_recv.c ----------------------------------------------------------------- */

/* Polls one device's completions and handles them (token). Returns how many. */
int mca_btl_tbrdma_poll_device(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev,
                               uint64_t now);

/* Delivers the frames the liveness thread held, in order (token, application thread). */
int mca_btl_tbrdma_deliver_held(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep);

/*
 * After the queue pairs of dev's endpoints were destroyed: the frames whose send completion
 * will never come are finished as if it had (token).
 */
void mca_btl_tbrdma_reclaim_posted(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_device_t *dev);

/* Calls ob1's completion callbacks the liveness thread left (token, application thread). */
int mca_btl_tbrdma_run_callbacks(mca_btl_tbrdma_module_t *module);

/* The transport is done with a send frame (acknowledged, no work request outstanding). */
void mca_btl_tbrdma_send_done(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_frag_t *frag);

#endif /* BTL_TBRDMA_PROGRESS_H */
