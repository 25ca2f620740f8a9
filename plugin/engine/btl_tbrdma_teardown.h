/*
 * Releasing a module's verbs resources (btl_tbrdma_teardown.c).
 */
#ifndef BTL_TBRDMA_TEARDOWN_H
#define BTL_TBRDMA_TEARDOWN_H

#include "btl_tbrdma.h"

/*
 * Destroys every queue pair, memory region and device of the module, then finishes the frames
 * their queue pairs held (ob1 hears of the acknowledged ones). Token. Idempotent.
 */
void mca_btl_tbrdma_release_verbs(mca_btl_tbrdma_module_t *module);

/*
 * Only the verbs objects: queue pairs, memory regions, devices. No frame, no pool, no ob1
 * callback: what a signal handler may do before the process ends. Idempotent.
 */
void mca_btl_tbrdma_release_verbs_only(mca_btl_tbrdma_module_t *module);

#endif /* BTL_TBRDMA_TEARDOWN_H */
