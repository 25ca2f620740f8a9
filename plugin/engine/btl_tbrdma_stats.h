/*
 * This process's counters (engine layer, btl_tbrdma_stats.c).
 */
#ifndef BTL_TBRDMA_STATS_H
#define BTL_TBRDMA_STATS_H

#include "btl_tbrdma.h"

/* btl_tbrdma_stats_interval_s: the counters, when the interval has passed since the last time. */
void mca_btl_tbrdma_stats_tick(mca_btl_tbrdma_module_t *module, uint64_t now);

/* At finalize, when btl_tbrdma_stats or verbosity 5 asks for them. */
void mca_btl_tbrdma_print_final_stats(const mca_btl_tbrdma_module_t *module);

#endif /* BTL_TBRDMA_STATS_H */
