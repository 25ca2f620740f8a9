/*
 * Zero-copy large messages (docs/design.md, "Zero-copy large messages"): ob1's get, emulated
 * over SEND on a third UC queue pair per peer, from and into user memory registered through
 * Open MPI's registration cache (rcache grdma). The pure rules are core/tbrdma_zc.h; the files,
 * from the bottom up (each calls only the ones above it in this list):
 *   btl_tbrdma_rcache.c     (fabric layer) registrations: the device's rcache, the memory
 *                           region budget, register_mem/deregister_mem, the owner's check of a
 *                           peer's grant
 *   btl_tbrdma_zcopy_qp.c   the zero-copy queue pair of an endpoint and its state, setup,
 *                           release, control messages (HELLO, GRANT, DONE)
 *   btl_tbrdma_zcopy_get.c  the receiver (ob1's get): operations, chunks, grants, verdicts
 *   btl_tbrdma_zcopy_send.c the data owner: grants served from user memory, DONE
 *   btl_tbrdma_zcopy.c      the plan (which endpoints get a queue pair), the epochs, and the
 *                           dispatch of completions, messages and progress
 * Everything but btl_get's queueing and the registration calls runs with the token held, on an
 * application thread (the liveness thread only records completions).
 */
#ifndef BTL_TBRDMA_ZCOPY_H
#define BTL_TBRDMA_ZCOPY_H

#include "base/btl_tbrdma_job.h"
#include "proto/zcopy/btl_tbrdma_zcopy_qp.h"

/* Defaults of btl_tbrdma_zcopy_min (the switch point), _chunk and _window: every rendezvous
 * message goes zero-copy, in 512 KiB chunks, 4 in flight. A pair's all-reduce from 72 KiB to
 * 16 MiB was measured faster so on both cables than the copy path and than 1 MiB chunks, 2 in
 * flight (docs/design.md, "The switch point"; bench/zcopy_bench.sh). */
#define TBRDMA_ZCOPY_MIN_DEFAULT    65536
#define TBRDMA_ZCOPY_CHUNK_DEFAULT  524288
#define TBRDMA_ZCOPY_WINDOW_DEFAULT 4
#define TBRDMA_STR_(x)              #x
#define TBRDMA_STR(x)               TBRDMA_STR_(x)

/* Decides, for every endpoint, whether the budget leaves room for its zero-copy queue pair. */
void mca_btl_tbrdma_zc_plan(mca_btl_tbrdma_module_t *module, const mca_btl_tbrdma_job_t *job,
                            size_t nprocs);

/* ob1's register_mem: a registration for a peer zero-copy serves, of at least
 * btl_tbrdma_zcopy_min bytes; else NULL (ob1 copies). */
mca_btl_base_registration_handle_t *mca_btl_tbrdma_register_mem(struct mca_btl_base_module_t *btl,
                                                                struct mca_btl_base_endpoint_t *ep,
                                                                void *base, size_t size,
                                                                uint32_t flags);

/* A zero-copy completion (token; any thread: it is only recorded). */
void mca_btl_tbrdma_zc_complete(mca_btl_tbrdma_module_t *module, const tbrdma_vwc_t *wc);

/* A control message (tag TBRDMA_TAG_ZCOPY) from ep (token, application thread). */
void mca_btl_tbrdma_zc_recv(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                            const uint8_t *buf, size_t len);

/* The endpoint's zero-copy work: HELLO, verdicts, grants, sends (token, application thread). */
void mca_btl_tbrdma_zc_progress(mca_btl_tbrdma_module_t *module, mca_btl_tbrdma_endpoint_t *ep,
                                uint64_t now);

/* Every operation not finished fails with status (ob1 called unless finalizing; token). */
void mca_btl_tbrdma_zc_fail_all(mca_btl_tbrdma_module_t *module, int status);

/* Prints the zero-copy counters ("tbrdma zcopy: ..." line; finalize, with the others). */
void mca_btl_tbrdma_zc_print_stats(const mca_btl_tbrdma_module_t *module, const char *when);

#endif /* BTL_TBRDMA_ZCOPY_H */
