/*
 * libFuzzer target for the modex decoder (plugin/core/tbrdma_modex.c): any input must decode
 * or be refused without crashing or reading past it, and whatever decodes must re-encode to
 * exactly the bytes it came from (the version-1 layout has one encoding per value).
 * Not built by default; see README.md here for the build and run commands.
 */
#include "tbrdma_modex.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t out[8192];
    tbrdma_modex_t m;
    size_t used = 0;

    if (0 != tbrdma_modex_decode(data, size, &m)) {
        return 0;
    }
    if (0 != tbrdma_modex_encode(&m, out, sizeof(out), &used)) {
        abort(); /* a decoded blob is always in range */
    }
    /* The decoder ignores bytes after the declared total length. */
    if (used > size || 0 != memcmp(out, data, used)) {
        abort();
    }
    return 0;
}
