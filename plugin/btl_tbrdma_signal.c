/*
 * Releasing Thunderbolt RDMA resources when the process is told to end. Apple's stack is
 * reported to keep queue pairs and protection domains of processes that died without releasing
 * them, until a reboot (exo#1847); the simulator keeps them too. mpirun ends the other ranks of
 * a failed job with SIGTERM, and users press Ctrl-C: on SIGTERM, SIGINT and SIGHUP tbrdma
 * destroys its queue pairs, memory regions and devices, then lets the signal take its default
 * action. SIGKILL cannot be caught. btl_tbrdma_release_on_signal turns it off.
 *
 * Only signals whose disposition is the default (ending the process) are taken. A signal the
 * application handles itself or ignores (set before MPI_Init: a code that checkpoints on
 * SIGTERM, a job under nohup) stays the application's: its process goes on, with its transport.
 * The handler touches only verbs objects (mca_btl_tbrdma_release_verbs_only): no frame, no pool
 * lock, no ob1 callback, which another thread of the process may be in the middle of.
 */
#include "btl_tbrdma_signal.h"
#include "base/btl_tbrdma_output.h"
#include "base/btl_tbrdma_token.h"
#include "core/tbrdma_mutate.h"
#include "engine/btl_tbrdma_teardown.h"

#include <signal.h>
#include <string.h>
#include <time.h>

#define SIGNAL_COUNT 3
/* How long the handler waits for another thread's pass: half the second Open MPI's launchers
 * leave between their SIGTERM and their SIGKILL. */
#define SIGNAL_WAIT_NS 500000000ull
#define SIGNAL_NAP_NS  20000L

static const int signal_numbers[SIGNAL_COUNT] = {SIGTERM, SIGINT, SIGHUP};
static struct sigaction signal_saved[SIGNAL_COUNT];
static int signal_taken[SIGNAL_COUNT]; /* ours is installed for this signal */

static int signal_index(int sig)
{
    for (int i = 0; i < SIGNAL_COUNT; i++) {
        if (signal_numbers[i] == sig) {
            return i;
        }
    }
    return -1;
}

/*
 * Runs on the thread the signal interrupted. If that thread holds the token, its interrupted
 * pass never resumes (the process ends), so releasing is safe, and a release it was in the
 * middle of is finished; if another thread holds it (a pass, or a release after a lost peer),
 * the handler sleeps until it is free, for at most SIGNAL_WAIT_NS by the clock (sleeps, so that
 * thread gets the CPU on a loaded machine), then releases what is left anyway: the process is
 * ending. A bounded count of sched_yield()s, and skipping the release when another thread's
 * was under way, let the process end before that one had finished.
 */
static void signal_handler(int sig)
{
    mca_btl_tbrdma_module_t *module = mca_btl_tbrdma_component.module;
    const struct timespec nap = {0, SIGNAL_NAP_NS};
    int i = signal_index(sig);

    mca_btl_tbrdma_in_signal = 1;
    if (NULL != module) {
        uint64_t until = mca_btl_tbrdma_now() + SIGNAL_WAIT_NS;

        while (!mca_btl_tbrdma_token_try(module) && mca_btl_tbrdma_now() < until) {
            nanosleep(&nap, NULL);
        }
        mca_btl_tbrdma_release_verbs_only(module);
    }
    if (0 > i) {
        return;
    }
    sigaction(sig, &signal_saved[i], NULL); /* the default action */
    raise(sig);                             /* delivered once this handler returns */
}

/* The signal's disposition is its default one (it would end the process). */
static int signal_is_default(int sig)
{
    struct sigaction now;

    return TBRDMA_MUTANT(SIGNAL_ANY_DISPOSITION)
           || (0 == sigaction(sig, NULL, &now) && 0 == (now.sa_flags & SA_SIGINFO)
               && SIG_DFL == now.sa_handler);
}

void mca_btl_tbrdma_signal_install(void)
{
    struct sigaction sa;

    if (!mca_btl_tbrdma_component.release_on_signal) {
        return;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = signal_handler;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < SIGNAL_COUNT; i++) {
        if (signal_taken[i]) {
            continue;
        }
        if (!signal_is_default(signal_numbers[i])) {
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_DECLINE,
                           "the application handles or ignores %s itself: tbrdma leaves it so "
                           "(its queue pairs are released at MPI_Finalize, not on that signal)",
                           strsignal(signal_numbers[i]));
            continue;
        }
        signal_taken[i] = (0 == sigaction(signal_numbers[i], &sa, &signal_saved[i]));
    }
}

void mca_btl_tbrdma_signal_restore(void)
{
    struct sigaction now;

    for (int i = 0; i < SIGNAL_COUNT; i++) {
        if (!signal_taken[i]) {
            continue;
        }
        signal_taken[i] = 0;
        /* the application may have installed its own since: that one stays */
        if (0 == sigaction(signal_numbers[i], NULL, &now) && signal_handler == now.sa_handler) {
            sigaction(signal_numbers[i], &signal_saved[i], NULL);
        }
    }
}
