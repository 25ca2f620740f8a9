/*
 * This process's counters (engine layer, btl_tbrdma_stats.h): printed at finalize
 * (btl_tbrdma_stats, or verbosity 5) and every btl_tbrdma_stats_interval_s while a job runs.
 */
#include "engine/btl_tbrdma_stats.h"
#include "base/btl_tbrdma_output.h"
#include "fabric/btl_tbrdma_device.h"
#include "proto/zcopy/btl_tbrdma_zcopy.h"

#include <stdio.h>

/* One "tbrdma stats" and one "tbrdma zcopy" line; WHEN follows the word ("" at finalize,
 * " after 30 s" while running). */
static void stats_print(const mca_btl_tbrdma_module_t *module, const char *when)
{
    const mca_btl_tbrdma_stats_t *s = &module->stats;
    uint64_t bad = 0, out = 0;

    for (int v = 1; v < TBRDMA_FRAME_VERDICTS; v++) {
        bad += s->rx_bad[v];
    }
    for (int p = 0; p < TBRDMA_MAX_PORTS; p++) {
        out +=
            (NULL != module->devices[p]) ? mca_btl_tbrdma_device_frames_out(module->devices[p]) : 0;
    }
    opal_output(
        mca_btl_tbrdma_component.output,
        "tbrdma stats%s: host %s %s: sent %llu data frames (%llu bytes, %llu on striped cables), "
        "%llu control "
        "(%llu forced), %llu retransmitted, %llu timeouts, %llu nacks sent, %llu nacks "
        "received, %llu credit stalls, %llu credit probes, %llu times no free frame, %llu heap "
        "frames lent (%llu waits for a carrier), %llu trains sent; received %llu "
        "data frames (%llu bytes), %llu "
        "control, %llu duplicates, %llu after a gap, %llu refused (%llu bad checksum, "
        "%llu bad header), %llu completion errors, %llu unknown tags, %llu held (%llu for another "
        "peer's callback), %llu trains "
        "received; %llu frames never acknowledged, %llu frames not returned",
        when, module->local.host, OPAL_NAME_PRINT(OPAL_PROC_MY_NAME),
        (unsigned long long) s->tx_data, (unsigned long long) s->tx_bytes,
        (unsigned long long) s->tx_striped, (unsigned long long) s->tx_ctrl,
        (unsigned long long) s->tx_forced, (unsigned long long) s->retransmits,
        (unsigned long long) s->timeouts, (unsigned long long) s->nacks_sent,
        (unsigned long long) s->nacks_rcvd, (unsigned long long) s->credit_stalls,
        (unsigned long long) s->credit_probes, (unsigned long long) s->no_frame,
        (unsigned long long) s->heap_lent, (unsigned long long) s->heap_waits,
        (unsigned long long) s->tx_trains, (unsigned long long) s->rx_data,
        (unsigned long long) s->rx_bytes, (unsigned long long) s->rx_ctrl,
        (unsigned long long) s->rx_dup, (unsigned long long) s->rx_gap, (unsigned long long) bad,
        (unsigned long long) s->rx_bad[TBRDMA_FRAME_BAD_CRC],
        (unsigned long long) s->rx_bad[TBRDMA_FRAME_BAD_HDR],
        (unsigned long long) (s->rx_wc_err + s->tx_wc_err), (unsigned long long) s->rx_unknown_tag,
        (unsigned long long) s->held, (unsigned long long) s->held_other,
        (unsigned long long) s->rx_trains, (unsigned long long) s->abandoned,
        (unsigned long long) out);
    mca_btl_tbrdma_zc_print_stats(module, when);
}

void mca_btl_tbrdma_print_final_stats(const mca_btl_tbrdma_module_t *module)
{
    if (mca_btl_tbrdma_component.stats || TBRDMA_VERBOSE_PEER <= mca_btl_tbrdma_component.verbose) {
        stats_print(module, "");
    }
}

void mca_btl_tbrdma_stats_tick(mca_btl_tbrdma_module_t *module, uint64_t now)
{
    uint64_t every = mca_btl_tbrdma_component.stats_interval_s * 1000000000ull;
    char when[40];

    if (0 == every || now < module->stats_next_ns) {
        return;
    }
    module->stats_next_ns = now + every;
    snprintf(when, sizeof(when), " after %llu s",
             (unsigned long long) ((now - module->stats_start_ns) / 1000000000ull));
    stats_print(module, when);
}
