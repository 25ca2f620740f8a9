/*
 * tbrdma's progress pass (engine layer, btl_tbrdma_progress.c). The engine's other files: the
 * endpoints' timers (btl_tbrdma_timers.c), the liveness thread (btl_tbrdma_liveness.c), the
 * counters (btl_tbrdma_stats.c) and the release of the verbs resources (btl_tbrdma_teardown.c).
 * The component's progress function, registered with opal_progress, is declared in btl_tbrdma.h.
 */
#ifndef BTL_TBRDMA_PROGRESS_H
#define BTL_TBRDMA_PROGRESS_H

#include "btl_tbrdma.h"

/* One pass over the data path (token) at time now: completions, transmissions, timers. async:
 * the liveness thread runs it (nothing may call ob1). Returns the completions handled. */
int mca_btl_tbrdma_pass(mca_btl_tbrdma_module_t *module, bool async, uint64_t now);

#endif /* BTL_TBRDMA_PROGRESS_H */
