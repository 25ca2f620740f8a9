/*
 * The token that serializes tbrdma's data path, the clock it runs on, and which thread is
 * running (base layer: calls nothing of the plugin above it).
 *
 * The token serializes everything that touches queue pairs, channels and endpoints: an
 * application thread takes it (recursively: ob1 callbacks may send), the liveness thread only
 * tries it. Functions of the layers above marked "token" must be called with it held.
 */
#ifndef BTL_TBRDMA_TOKEN_H
#define BTL_TBRDMA_TOKEN_H

#include "btl_tbrdma.h"

#include <signal.h>

/* CLOCK_MONOTONIC in ns. */
uint64_t mca_btl_tbrdma_now(void);

/*
 * ns from then to now, 0 when then is later: a pass runs with the time its caller read, which
 * another thread's pass may have overtaken when it stamped then.
 */
static inline uint64_t mca_btl_tbrdma_elapsed(uint64_t now, uint64_t then)
{
    return (now > then) ? now - then : 0;
}

/* 1 on tbrdma's liveness thread. */
int mca_btl_tbrdma_on_liveness_thread(void);

/* Marks the calling thread as tbrdma's liveness thread (its first step). */
void mca_btl_tbrdma_token_mark_liveness_thread(void);

/* Set while the signal handler runs (checking builds assert it touches no frame or ob1). */
extern volatile sig_atomic_t mca_btl_tbrdma_in_signal;

/* Takes the token if it is free or already this thread's; 1 on success. */
int mca_btl_tbrdma_token_try(mca_btl_tbrdma_module_t *module);

/* Takes the token, waiting for another holder to release it. */
void mca_btl_tbrdma_token_take(mca_btl_tbrdma_module_t *module);

/* Releases one level of the token. */
void mca_btl_tbrdma_token_release(mca_btl_tbrdma_module_t *module);

#endif /* BTL_TBRDMA_TOKEN_H */
