/*
 * tbrdma's liveness thread (engine layer, btl_tbrdma_liveness.h): peers answer even while their
 * application computes outside MPI, because this thread runs a pass (without calling ob1)
 * whenever no application thread has progressed for TBRDMA_LIVENESS_TICK ms.
 */
#include "engine/btl_tbrdma_liveness.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "core/tbrdma_mutate.h"
#include "engine/btl_tbrdma_progress.h"

#include <signal.h>
#include <string.h>
#include <time.h>

static void *liveness_main(void *arg)
{
    mca_btl_tbrdma_module_t *module = arg;
    const uint64_t tick = TBRDMA_LIVENESS_TICK * 1000000ull;
    struct timespec nap = {0, TBRDMA_LIVENESS_TICK * 1000000L};
    sigset_t all;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals go to the application's threads */
    mca_btl_tbrdma_token_mark_liveness_thread();
    while (!atomic_load(&module->thread_stop)) {
        nanosleep(&nap, NULL);
        if (!module->verbs_live
            || mca_btl_tbrdma_now() - atomic_load(&module->last_app_progress) < tick) {
            continue;
        }
        if (!mca_btl_tbrdma_token_try(module)) {
            continue;
        }
        if (module->verbs_live && 0 == module->in_progress
            && !TBRDMA_MUTANT(LIVENESS_THREAD_IDLE)) {
            mca_btl_tbrdma_pass(module, true, mca_btl_tbrdma_now());
        }
        mca_btl_tbrdma_token_release(module);
    }
    return NULL;
}

int mca_btl_tbrdma_liveness_start(mca_btl_tbrdma_module_t *module)
{
    int rc;

    if (!mca_btl_tbrdma_component.liveness_thread || module->thread_running) {
        return OPAL_SUCCESS;
    }
    atomic_store(&module->thread_stop, 0);
    atomic_store(&module->last_app_progress, mca_btl_tbrdma_now());
    rc = pthread_create(&module->thread, NULL, liveness_main, module);
    if (0 != rc) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                       "cannot start the liveness thread (%s): peers computing outside MPI for "
                       "longer than btl_tbrdma_peer_timeout_ms will be declared lost",
                       strerror(rc));
        return OPAL_ERROR;
    }
    module->thread_running = true;
    return OPAL_SUCCESS;
}

void mca_btl_tbrdma_liveness_stop(mca_btl_tbrdma_module_t *module)
{
    if (!module->thread_running) {
        return;
    }
    atomic_store(&module->thread_stop, 1);
    pthread_join(module->thread, NULL);
    module->thread_running = false;
}
