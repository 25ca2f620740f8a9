/*
 * Releasing the verbs resources when the process is told to end (btl_tbrdma_signal.c).
 */
#ifndef BTL_TBRDMA_SIGNAL_H
#define BTL_TBRDMA_SIGNAL_H

/*
 * Releases the verbs resources on SIGTERM/SIGINT/SIGHUP (btl_tbrdma_release_on_signal), for
 * each of them whose disposition is still the default one (the application's own handlers and
 * ignored signals are left alone).
 */
void mca_btl_tbrdma_signal_install(void);

/* Puts the previous handlers back (finalize). */
void mca_btl_tbrdma_signal_restore(void);

#endif /* BTL_TBRDMA_SIGNAL_H */
