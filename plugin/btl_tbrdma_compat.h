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

/* Headers that moved; use as `#include TBRDMA_EVENT_HEADER`. */
#if BTL_VERSION >= 330
#define TBRDMA_EVENT_HEADER "opal/util/event.h"
#define TBRDMA_MUTEX_HEADER "opal/mca/threads/mutex.h"
#else
#define TBRDMA_EVENT_HEADER "opal/mca/event/event.h"
#define TBRDMA_MUTEX_HEADER "opal/threads/mutex.h"
#endif

#include TBRDMA_MUTEX_HEADER

#if BTL_VERSION >= 330
/* 5.0: the modex macros call PMIx directly (link -lpmix); scopes are PMIx's own. */
#include "opal/mca/pmix/pmix-internal.h"
#define TBRDMA_MODEX_SCOPE PMIX_GLOBAL
#else
/* 4.1: the modex macros go through opal_pmix in libopen-pal. */
#include "opal/mca/pmix/pmix.h"
#define TBRDMA_MODEX_SCOPE OPAL_PMIX_GLOBAL
#endif

/*
 * Both versions read help files from directories added with opal_show_help_add_dir(), which
 * the help wrapper (btl_tbrdma_output.c) uses to render its messages. 6.x compiles help text
 * into libopen-pal and ignores added directories: if 6.x is ever supported, this becomes 0
 * there and the wrapper prints plain "tbrdma: " lines.
 */
#define TBRDMA_HAVE_SHOW_HELP_DIR 1

/*
 * Flags 5.0 added (4.1 has no such capability: 0 there, so flag expressions compile on both).
 * 4.1's CUDA_* flags are ACCELERATOR_* in 5.0; tbrdma uses neither.
 */
#ifdef MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION
#define TBRDMA_BTL_FLAGS_RDMA_REMOTE_COMPLETION MCA_BTL_FLAGS_RDMA_REMOTE_COMPLETION
#else
#define TBRDMA_BTL_FLAGS_RDMA_REMOTE_COMPLETION 0
#endif

/*
 * Hands a received message to the upper layer registered for its tag: the one place that
 * knows both receive-callback signatures (4.1: cbfunc(btl, tag, descriptor, cbdata); 5.0:
 * cbfunc(btl, const receive descriptor *)). The segments are valid during the call only.
 * Compiled for both versions; the data path (a later issue) is its caller.
 */
static inline void tbrdma_compat_deliver(mca_btl_base_module_t *btl,
                                         struct mca_btl_base_endpoint_t *endpoint,
                                         mca_btl_base_tag_t tag, mca_btl_base_segment_t *segments,
                                         size_t nsegments)
{
    const mca_btl_active_message_callback_t *reg = &mca_btl_base_active_message_trigger[tag];
#if BTL_VERSION >= 330
    const mca_btl_base_receive_descriptor_t desc = {.endpoint = endpoint,
                                                    .des_segments = segments,
                                                    .des_segment_count = nsegments,
                                                    .tag = tag,
                                                    .cbdata = reg->cbdata};

    reg->cbfunc(btl, &desc);
#else
    mca_btl_base_descriptor_t desc;

    (void) endpoint; /* 4.1's descriptor has no endpoint */
    memset(&desc, 0, sizeof(desc));
    desc.des_segments = segments;
    desc.des_segment_count = nsegments;
    reg->cbfunc(btl, tag, &desc, reg->cbdata);
#endif
}

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

/*
 * Publishes what was put with OPAL_MODEX_SEND_STRING and waits until every process of names[]
 * did the same (a PMIx fence that collects the data). Returns 0 on success.
 */
static inline int tbrdma_compat_commit_fence(const opal_process_name_t *names, size_t n)
{
#if BTL_VERSION >= 330
    pmix_proc_t *procs = calloc(n, sizeof(*procs));
    pmix_info_t info;
    bool collect = true;
    int rc;

    if (NULL == procs) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < n; i++) {
        OPAL_PMIX_CONVERT_NAME(&procs[i], &names[i]);
    }
    rc = PMIx_Commit();
    if (PMIX_SUCCESS == rc) {
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
        rc = PMIx_Fence(procs, n, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
    }
    free(procs);
    return (PMIX_SUCCESS == rc) ? OPAL_SUCCESS : OPAL_ERROR;
#else
    opal_list_t list;
    int rc;

    OBJ_CONSTRUCT(&list, opal_list_t);
    for (size_t i = 0; i < n; i++) {
        opal_namelist_t *nm = OBJ_NEW(opal_namelist_t);

        if (NULL == nm) {
            OPAL_LIST_DESTRUCT(&list);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        nm->name = names[i];
        opal_list_append(&list, &nm->super);
    }
    rc = opal_pmix.commit();
    if (OPAL_SUCCESS == rc) {
        rc = opal_pmix.fence(&list, 1);
    }
    OPAL_LIST_DESTRUCT(&list);
    return rc;
#endif
}

/* The local rank on this node: int32_t in 4.1, uint16_t in 5.0. */
#define TBRDMA_MY_LOCAL_RANK() ((int) opal_process_info.my_local_rank)

#endif /* BTL_TBRDMA_COMPAT_H */
