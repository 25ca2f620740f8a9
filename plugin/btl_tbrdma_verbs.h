/*
 * The verbs backend: the only code of tbrdma that calls ibv_*. It loads the verbs library at
 * run time (librdma.dylib on macOS, libibverbs.so.1 on Linux, or the path given by the
 * btl_tbrdma_verbs_lib parameter: that is how the fabric simulator plugs in) and resolves the
 * functions tbrdma uses. Opal-free, so the tools link it too.
 */
#ifndef BTL_TBRDMA_VERBS_H
#define BTL_TBRDMA_VERBS_H

#include "core/tbrdma_types.h"

/* The platform's verbs library: "librdma.dylib" or "libibverbs.so.1". */
const char *tbrdma_verbs_default_lib(void);

/*
 * Loads the library (NULL or "" = the platform default) and resolves every symbol.
 * Returns 0; -ENOENT when the library cannot be loaded; -ENOSYS when a symbol is missing.
 * On failure err holds the reason (the loader's text). Idempotent for the same path.
 */
int tbrdma_verbs_open(const char *lib, char *err, size_t errlen);

/* Unloads the library. Safe to call when nothing is loaded. */
void tbrdma_verbs_close(void);

/*
 * Discovers every device and port: state, link layer, MTU, GID table and the index of the
 * IPv4-mapped GID, then the paired interface's facts (through btl_tbrdma_netif). Fills up to
 * max entries and sets *nports_p (0 when the library lists no device). Returns 0, or a
 * negative errno with err set when the device list itself cannot be read.
 */
int tbrdma_verbs_discover(tbrdma_port_info_t *ports, int max, int *nports_p, char *err,
                          size_t errlen);

#endif /* BTL_TBRDMA_VERBS_H */
