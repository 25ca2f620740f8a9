/*
 * Releasing Thunderbolt RDMA resources when the process is told to end. Apple's stack is
 * reported to keep queue pairs and protection domains of processes that died without releasing
 * them, until a reboot (exo#1847); the simulator keeps them too. mpirun ends the other ranks of
 * a failed job with SIGTERM, and users press Ctrl-C: on SIGTERM, SIGINT and SIGHUP tbrdma
 * destroys its queue pairs, memory regions and devices, then lets the signal do what it would
 * have done (the previous handler, or the default action). SIGKILL cannot be caught.
 * btl_tbrdma_release_on_signal turns it off.
 */
#include "btl_tbrdma_output.h"
#include "btl_tbrdma_progress.h"

#include <sched.h>
#include <signal.h>
#include <string.h>

#define SIGNAL_COUNT       3
#define SIGNAL_WAIT_YIELDS 20000 /* how long the handler waits for another thread's pass */

static const int signal_numbers[SIGNAL_COUNT] = {SIGTERM, SIGINT, SIGHUP};
static struct sigaction signal_saved[SIGNAL_COUNT];
static volatile sig_atomic_t signal_installed;

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
 * pass never resumes (the process ends), so releasing is safe; if another thread holds it, the
 * handler waits a little for it, then releases anyway: the process is ending.
 */
static void signal_handler(int sig)
{
    mca_btl_tbrdma_module_t *module = mca_btl_tbrdma_component.module;
    int i = signal_index(sig), waited = 0;

    if (NULL != module && module->verbs_live) {
        while (!mca_btl_tbrdma_token_try(module) && waited++ < SIGNAL_WAIT_YIELDS) {
            sched_yield();
        }
        mca_btl_tbrdma_release_verbs(module);
    }
    if (0 > i) {
        return;
    }
    sigaction(sig, &signal_saved[i], NULL);
    if (SIG_IGN == signal_saved[i].sa_handler) {
        return;
    }
    raise(sig); /* delivered once this handler returns: the previous handler or the default */
}

void mca_btl_tbrdma_signal_install(void)
{
    struct sigaction sa;

    if (!mca_btl_tbrdma_component.release_on_signal || signal_installed) {
        return;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = signal_handler;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < SIGNAL_COUNT; i++) {
        sigaction(signal_numbers[i], &sa, &signal_saved[i]);
    }
    signal_installed = 1;
}

void mca_btl_tbrdma_signal_restore(void)
{
    if (!signal_installed) {
        return;
    }
    for (int i = 0; i < SIGNAL_COUNT; i++) {
        sigaction(signal_numbers[i], &signal_saved[i], NULL);
    }
    signal_installed = 0;
}
