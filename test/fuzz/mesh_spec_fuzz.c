/*
 * libFuzzer target for the mesh spec parser (plugin/core/tbrdma_mesh_spec.c): our line format
 * and the strict JSON reader for MLX's hostfile must accept or refuse any text without
 * crashing, over-reading or unbounded recursion, and always leave err NUL-terminated.
 * Not built by default; see README.md here for the build and run commands.
 */
#include "tbrdma_mesh.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tbrdma_mesh_spec_t spec;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[128];
    char *text = malloc(size + 1);

    if (NULL == text) {
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    memset(err, 'x', sizeof(err));
    tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err));
    if (NULL == memchr(err, '\0', sizeof(err))) {
        abort();
    }
    free(text);
    return 0;
}
