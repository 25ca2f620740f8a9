/*
 * The token, the clock and the thread flags (btl_tbrdma_token.h). The token is a recursive
 * owner word: the owner is named by the address of a thread-local byte, so a thread can tell
 * whether it already holds it without a system call.
 */
#include "base/btl_tbrdma_token.h"

#include <sched.h>
#include <time.h>

#define TOKEN_SPINS 64 /* tries between two yields while another thread holds it */

static __thread int token_is_liveness_thread;
static __thread char token_thread_id; /* its address names the thread */

volatile sig_atomic_t mca_btl_tbrdma_in_signal;

uint64_t mca_btl_tbrdma_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

int mca_btl_tbrdma_on_liveness_thread(void)
{
    return token_is_liveness_thread;
}

void mca_btl_tbrdma_token_mark_liveness_thread(void)
{
    token_is_liveness_thread = 1;
}

int mca_btl_tbrdma_token_try(mca_btl_tbrdma_module_t *module)
{
    uintptr_t me = (uintptr_t) &token_thread_id, free_ = 0;

    if (me == atomic_load_explicit(&module->token_owner, memory_order_relaxed)) {
        module->token_depth++;
        return 1;
    }
    if (atomic_compare_exchange_strong_explicit(&module->token_owner, &free_, me,
                                                memory_order_acquire, memory_order_relaxed)) {
        module->token_depth = 1;
        return 1;
    }
    return 0;
}

void mca_btl_tbrdma_token_take(mca_btl_tbrdma_module_t *module)
{
    int spins = 0;

    while (!mca_btl_tbrdma_token_try(module)) {
        if (++spins == TOKEN_SPINS) {
            sched_yield();
            spins = 0;
        }
    }
}

void mca_btl_tbrdma_token_release(mca_btl_tbrdma_module_t *module)
{
    if (0 == --module->token_depth) {
        atomic_store_explicit(&module->token_owner, 0, memory_order_release);
    }
}
