/*
 * Loading the verbs library (base layer; defined in btl_tbrdma_verbs_load.c, declared apart so
 * that neither half of the verbs backend includes the other's header: btl_tbrdma_verbs.h hands
 * these on to its users).
 */
#ifndef BTL_TBRDMA_VERBS_LIB_H
#define BTL_TBRDMA_VERBS_LIB_H

#include <stddef.h>

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

#endif /* BTL_TBRDMA_VERBS_LIB_H */
