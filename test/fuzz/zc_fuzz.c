/*
 * libFuzzer target for the zero-copy control message decoder (plugin/core/tbrdma_zc.c): a peer's
 * HELLO, GRANT or DONE must decode or be refused without crashing or reading past the input,
 * and whatever decodes must re-encode to exactly the bytes it came from (one encoding per value:
 * every field a type does not use is 0).
 * Not built by default; see README.md here for the build and run commands.
 */
#include "tbrdma_zc.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t out[TBRDMA_ZC_MSG_BYTES];
    tbrdma_zc_msg_t m;

    if (0 != tbrdma_zc_decode(data, size, &m)) {
        return 0;
    }
    tbrdma_zc_encode(&m, out);
    if (0 != memcmp(out, data, sizeof(out))) {
        abort();
    }
    return 0;
}
