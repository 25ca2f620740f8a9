/*
 * Everything that differs between the Open MPI versions tbrdma supports, in one place:
 * 4.1 (BTL API 3.1.0, BTL_VERSION 310) and 5.0 (BTL API 3.3.0, BTL_VERSION 330).
 * The rest of the plugin includes this header instead of the version-dependent Open MPI
 * headers and uses only the names defined here for what changed (research: openmpi-btl.md
 * section 1.9). configure refuses other versions, so the #else branches mean 4.1.
 */
#ifndef BTL_TBRDMA_COMPAT_H
#define BTL_TBRDMA_COMPAT_H

#include "opal_config.h"

#include "opal/mca/btl/btl.h"
#include "opal/runtime/opal.h"
#include "opal/util/proc.h"

#include <stdlib.h>
#include <string.h>

#if BTL_VERSION >= 330
/* 5.0: the modex macros call PMIx directly (link -lpmix); scopes are PMIx's own. */
#include "opal/mca/pmix/pmix-internal.h"
#include "opal/mca/threads/mutex.h"
#define TBRDMA_MODEX_SCOPE PMIX_GLOBAL
#else
/* 4.1: the modex macros go through opal_pmix in libopen-pal. */
#include "opal/mca/pmix/pmix.h"
#include "opal/threads/mutex.h"
#define TBRDMA_MODEX_SCOPE OPAL_PMIX_GLOBAL
#endif

/*
 * Both versions read help files from directories added with opal_show_help_add_dir() and
 * render them in the calling process (4.1: orte_show_help forwards the rendered text to
 * mpirun; 5.0: PMIx_Log). 6.x compiles help text into libopen-pal and ignores added
 * directories: if it is ever supported, this becomes 0 there and the wrapper falls back to
 * opal_output.
 */
#define TBRDMA_HAVE_SHOW_HELP_DIR 1

/*
 * The receive callback changed signature in 5.0; tbrdma has no data path yet, so nothing
 * calls it. TBRDMA_RECV_CB_DESCRIPTOR says which form the future data path must use:
 * 1 = cbfunc(btl, const mca_btl_base_receive_descriptor_t *), 0 = cbfunc(btl, tag, des, cbdata).
 */
#if BTL_VERSION >= 330
#define TBRDMA_RECV_CB_DESCRIPTOR 1
#else
#define TBRDMA_RECV_CB_DESCRIPTOR 0
#endif

/*
 * A peer's host name as a string the caller frees (NULL when out of memory): 4.1's
 * opal_get_proc_hostname lends Open MPI's own string, 5.0's returns a copy.
 */
static inline char *tbrdma_proc_hostname(const opal_proc_t *proc)
{
#if BTL_VERSION >= 330
    return opal_get_proc_hostname(proc);
#else
    return strdup(opal_get_proc_hostname(proc));
#endif
}

/* The local rank on this node: int32_t in 4.1, uint16_t in 5.0. */
#define TBRDMA_MY_LOCAL_RANK() ((int) opal_process_info.my_local_rank)

#endif /* BTL_TBRDMA_COMPAT_H */
