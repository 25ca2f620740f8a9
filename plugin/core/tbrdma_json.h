/*
 * Read-only access to a JSON document, for the operator tools that read JSON written by other
 * programs (macOS's `system_profiler -json`), and for the mesh spec parser (MLX's hostfile,
 * tbrdma_mesh_spec.c). The reader (tbrdma_json.c) is strict: RFC 8259 grammar, nesting bounded
 * to 16 levels, errors naming the line and column. Values are named by node indexes; -1 means
 * "no such value" and every accessor accepts it, so lookups chain without checks in between.
 */
#ifndef TBRDMA_JSON_H
#define TBRDMA_JSON_H

#include <stddef.h>

typedef struct tbrdma_json_doc tbrdma_json_doc_t;

typedef enum tbrdma_json_kind {
    TBRDMA_JSON_NONE = -1, /* the -1 node */
    TBRDMA_JSON_NULL,
    TBRDMA_JSON_FALSE,
    TBRDMA_JSON_TRUE,
    TBRDMA_JSON_NUMBER,
    TBRDMA_JSON_STRING,
    TBRDMA_JSON_ARRAY,
    TBRDMA_JSON_OBJECT
} tbrdma_json_kind_t;

/*
 * Parses text into *doc_p (free with tbrdma_json_free). Returns 0, -EINVAL with err naming the
 * line and column at fault, or -ENOMEM.
 */
int tbrdma_json_parse(const char *text, tbrdma_json_doc_t **doc_p, char *err, size_t errlen);

void tbrdma_json_free(tbrdma_json_doc_t *doc);

/* The top-level value (0). */
int tbrdma_json_root(const tbrdma_json_doc_t *doc);

tbrdma_json_kind_t tbrdma_json_kind(const tbrdma_json_doc_t *doc, int node);

/* The member named key of an object, or -1 (also when node is not an object). */
int tbrdma_json_member(const tbrdma_json_doc_t *doc, int node, const char *key);

/* First element (array) or member value (object), and the next sibling; -1 at the end. */
int tbrdma_json_first(const tbrdma_json_doc_t *doc, int node);
int tbrdma_json_next(const tbrdma_json_doc_t *doc, int node);

/* The number of elements (array) or members (object); 0 for any other value. */
int tbrdma_json_count(const tbrdma_json_doc_t *doc, int node);

/* The i-th element (array) or member value (object), counted from 0, or -1. */
int tbrdma_json_at(const tbrdma_json_doc_t *doc, int node, int i);

/* The decoded text of a string value, or NULL when node is not a string. */
const char *tbrdma_json_string(const tbrdma_json_doc_t *doc, int node);

#endif /* TBRDMA_JSON_H */
