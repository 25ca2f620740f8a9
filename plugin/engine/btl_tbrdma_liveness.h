/*
 * tbrdma's liveness thread (engine layer, btl_tbrdma_liveness.c).
 */
#ifndef BTL_TBRDMA_LIVENESS_H
#define BTL_TBRDMA_LIVENESS_H

#include "btl_tbrdma.h"

/* Starts the liveness thread (btl_tbrdma_liveness_thread); OPAL_ERROR when it cannot (said). */
int mca_btl_tbrdma_liveness_start(mca_btl_tbrdma_module_t *module);

/* Stops it and waits for it to end. */
void mca_btl_tbrdma_liveness_stop(mca_btl_tbrdma_module_t *module);

#endif /* BTL_TBRDMA_LIVENESS_H */
