/*
 * Device selection policy: which discovered devices tbrdma may use, from the
 * btl_tbrdma_if_include / btl_tbrdma_if_exclude parameters (comma-separated device or
 * interface names, shell globs allowed: "rdma_en*").
 */
#ifndef TBRDMA_SELECT_H
#define TBRDMA_SELECT_H

#include <stddef.h>

/* Both lists set is an error (as btl_tcp_if_include/exclude). Returns 0 or -EINVAL + err. */
int tbrdma_select_validate(const char *include, const char *exclude, char *err, size_t errlen);

/*
 * 1 when the device (or its paired interface ifname, may be NULL) is selected: listed in a
 * non-empty include list, or not listed in the exclude list. Empty/NULL lists select all.
 */
int tbrdma_select_device(const char *device, const char *ifname, const char *include,
                         const char *exclude);

#endif /* TBRDMA_SELECT_H */
