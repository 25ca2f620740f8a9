/*
 * The JSON reader behind tbrdma_json.h: strict (RFC 8259 grammar), bounded in nesting depth,
 * and building a flat node table whose strings are decoded into one pool. Its first user is the
 * mesh spec parser (MLX's hostfile, tbrdma_mesh_spec.c), whose wording its error messages keep;
 * the operator tools read other programs' JSON with it.
 */
#include "tbrdma_json.h"
#include "tbrdma_fmt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define JSON_DEPTH_MAX 16 /* the hostfile nests 4 deep */

/* ------------------------------------------------------------------------------------------ */
/* Parsing                                                                                    */

/* In the order of tbrdma_json_kind_t, which tbrdma_json_kind() returns by a cast. */
typedef enum json_type {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type_t;

typedef struct json_node {
    json_type_t type;
    int next;  /* next sibling, -1 */
    int child; /* first element or member, -1 */
    int count; /* elements or members */
    int key;   /* pool offset of the member name, -1 outside objects */
    int str;   /* pool offset of the decoded string */
    int slen;  /* its length (it may hold no NUL: \u0000 is refused) */
} json_node_t;

typedef struct json {
    const char *text;
    size_t pos;
    json_node_t *nodes;
    int nnodes, maxnodes;
    char *pool;
    size_t pooled;
    tbrdma_fmt_t *err;
} json_t;

static int json_value(json_t *js, int depth);

static int json_fail(json_t *js, const char *what)
{
    size_t i;
    int line = 1, col = 1;

    for (i = 0; i < js->pos; i++) {
        col = ('\n' == js->text[i]) ? 1 : col + 1;
        line += ('\n' == js->text[i]);
    }
    tbrdma_fmt_add(js->err, "hostfile JSON line %d column %d: %s", line, col, what);
    return -EINVAL;
}

static void json_skip_ws(json_t *js)
{
    while (' ' == js->text[js->pos] || '\t' == js->text[js->pos] || '\n' == js->text[js->pos]
           || '\r' == js->text[js->pos]) {
        js->pos++;
    }
}

static int json_new_node(json_t *js, json_type_t type)
{
    json_node_t *node;

    if (js->nnodes >= js->maxnodes) {
        return -1;
    }
    node = &js->nodes[js->nnodes];
    memset(node, 0, sizeof(*node));
    node->type = type;
    node->next = node->child = node->key = -1;
    return js->nnodes++;
}

static int json_hex4(const char *s, unsigned *v_p)
{
    unsigned v = 0;
    int i;

    for (i = 0; i < 4; i++) {
        if (!isxdigit((unsigned char) s[i])) {
            return -1;
        }
        v = v * 16
            + (unsigned) (isdigit((unsigned char) s[i]) ? s[i] - '0' : (tolower(s[i]) - 'a' + 10));
    }
    *v_p = v;
    return 0;
}

static void json_put_utf8(json_t *js, unsigned cp)
{
    char *o = js->pool + js->pooled;

    if (cp < 0x80) {
        o[0] = (char) cp;
        js->pooled += 1;
    } else if (cp < 0x800) {
        o[0] = (char) (0xc0 | (cp >> 6));
        o[1] = (char) (0x80 | (cp & 0x3f));
        js->pooled += 2;
    } else if (cp < 0x10000) {
        o[0] = (char) (0xe0 | (cp >> 12));
        o[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char) (0x80 | (cp & 0x3f));
        js->pooled += 3;
    } else {
        o[0] = (char) (0xf0 | (cp >> 18));
        o[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
        o[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
        o[3] = (char) (0x80 | (cp & 0x3f));
        js->pooled += 4;
    }
}

/* \uXXXX (and its low surrogate); pos is on the 'u'. Output never exceeds the escape's length. */
static int json_unicode(json_t *js)
{
    const char *s = js->text + js->pos;
    unsigned cp, lo;

    if (0 != json_hex4(s + 1, &cp)) {
        return json_fail(js, "bad \\u escape");
    }
    js->pos += 5;
    if (0xdc00 <= cp && 0xdfff >= cp) {
        return json_fail(js, "lone low surrogate");
    }
    if (0xd800 <= cp && 0xdbff >= cp) {
        if ('\\' != s[5] || 'u' != s[6] || 0 != json_hex4(s + 7, &lo) || 0xdc00 > lo
            || 0xdfff < lo) {
            return json_fail(js, "high surrogate without its low half");
        }
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        js->pos += 6;
    }
    if (0 == cp) {
        return json_fail(js, "\\u0000 in a string");
    }
    json_put_utf8(js, cp);
    return 0;
}

static int json_escape(json_t *js)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit;
    char c = js->text[js->pos];

    if ('u' == c) {
        return json_unicode(js);
    }
    hit = ('\0' == c) ? NULL : strchr(from, c);
    if (NULL == hit) {
        return json_fail(js, "bad escape in a string");
    }
    js->pool[js->pooled++] = to[hit - from];
    js->pos++;
    return 0;
}

/* A string; pos is on the opening quote. Decodes into the pool at *off_p, *len_p long. */
static int json_string_raw(json_t *js, int *off_p, int *len_p)
{
    size_t start = js->pooled;
    unsigned char c;

    js->pos++;
    for (;;) {
        c = (unsigned char) js->text[js->pos];
        if ('"' == c) {
            break;
        }
        if ('\0' == c || 0x20 > c) {
            return json_fail(js,
                             ('\0' == c) ? "unterminated string" : "control character in a string");
        }
        js->pos++;
        if ('\\' == c && 0 != json_escape(js)) {
            return -EINVAL;
        }
        if ('\\' != c) {
            js->pool[js->pooled++] = (char) c;
        }
    }
    js->pos++;
    js->pool[js->pooled++] = '\0';
    *off_p = (int) start;
    *len_p = (int) (js->pooled - start - 1);
    return 0;
}

static int json_string(json_t *js)
{
    int idx = json_new_node(js, JSON_STRING);

    if (0 > idx) {
        return json_fail(js, "too many values");
    }
    if (0 != json_string_raw(js, &js->nodes[idx].str, &js->nodes[idx].slen)) {
        return -EINVAL;
    }
    return idx;
}

static int json_skip_digits(json_t *js)
{
    size_t start = js->pos;

    while (isdigit((unsigned char) js->text[js->pos])) {
        js->pos++;
    }
    return js->pos > start;
}

/* RFC 8259 number grammar; the value itself is not needed. */
static int json_number(json_t *js)
{
    int idx = json_new_node(js, JSON_NUMBER);

    if (0 > idx) {
        return json_fail(js, "too many values");
    }
    if ('-' == js->text[js->pos]) {
        js->pos++;
    }
    if ('0' == js->text[js->pos]) {
        js->pos++;
    } else if (!json_skip_digits(js)) {
        return json_fail(js, "bad number");
    }
    if ('.' == js->text[js->pos]) {
        js->pos++;
        if (!json_skip_digits(js)) {
            return json_fail(js, "bad number fraction");
        }
    }
    if ('e' == js->text[js->pos] || 'E' == js->text[js->pos]) {
        js->pos++;
        if ('+' == js->text[js->pos] || '-' == js->text[js->pos]) {
            js->pos++;
        }
        if (!json_skip_digits(js)) {
            return json_fail(js, "bad number exponent");
        }
    }
    return idx;
}

static int json_literal(json_t *js)
{
    static const struct {
        const char *word;
        json_type_t type;
    } words[] = {{"null", JSON_NULL}, {"true", JSON_TRUE}, {"false", JSON_FALSE}};
    size_t i, n;
    int idx;

    for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        n = strlen(words[i].word);
        if (0 == strncmp(js->text + js->pos, words[i].word, n)) {
            idx = json_new_node(js, words[i].type);
            if (0 > idx) {
                return json_fail(js, "too many values");
            }
            js->pos += n;
            return idx;
        }
    }
    return json_fail(js, "unexpected character");
}

/* Links child after *last in parent's list. */
static void json_link(json_t *js, int parent, int *last, int child)
{
    if (0 > *last) {
        js->nodes[parent].child = child;
    } else {
        js->nodes[*last].next = child;
    }
    *last = child;
    js->nodes[parent].count++;
}

/* One member "key": value; pos is on the key's opening quote. Returns the value node. */
static int json_member(json_t *js, int depth)
{
    int key, klen, val;

    if ('"' != js->text[js->pos]) {
        return json_fail(js, "expected a member name");
    }
    if (0 != json_string_raw(js, &key, &klen)) {
        return -EINVAL;
    }
    json_skip_ws(js);
    if (':' != js->text[js->pos]) {
        return json_fail(js, "expected ':'");
    }
    js->pos++;
    val = json_value(js, depth + 1);
    if (0 <= val) {
        js->nodes[val].key = key;
    }
    return val;
}

/* An array or object; pos is on '[' or '{'. */
static int json_container(json_t *js, int depth, json_type_t type)
{
    char close = (JSON_ARRAY == type) ? ']' : '}';
    int idx = json_new_node(js, type), last = -1, child;

    if (0 > idx) {
        return json_fail(js, "too many values");
    }
    js->pos++;
    json_skip_ws(js);
    if (close == js->text[js->pos]) {
        js->pos++;
        return idx;
    }
    for (;;) {
        json_skip_ws(js);
        child = (JSON_ARRAY == type) ? json_value(js, depth + 1) : json_member(js, depth);
        if (0 > child) {
            return -EINVAL;
        }
        json_link(js, idx, &last, child);
        json_skip_ws(js);
        if (close == js->text[js->pos]) {
            js->pos++;
            return idx;
        }
        if (',' != js->text[js->pos]) {
            return json_fail(js,
                             (JSON_ARRAY == type) ? "expected ',' or ']'" : "expected ',' or '}'");
        }
        js->pos++;
    }
}

static int json_value(json_t *js, int depth)
{
    char c;

    if (JSON_DEPTH_MAX < depth) {
        return json_fail(js, "nested too deeply");
    }
    json_skip_ws(js);
    c = js->text[js->pos];
    if ('{' == c) {
        return json_container(js, depth, JSON_OBJECT);
    }
    if ('[' == c) {
        return json_container(js, depth, JSON_ARRAY);
    }
    if ('"' == c) {
        return json_string(js);
    }
    if ('-' == c || isdigit((unsigned char) c)) {
        return json_number(js);
    }
    if ('\0' == c) {
        return json_fail(js, "unexpected end of text");
    }
    return json_literal(js);
}

/* Parses the whole text; returns the root node index or -EINVAL. */
static int json_parse(json_t *js)
{
    int root = json_value(js, 0);

    if (0 > root) {
        return -EINVAL;
    }
    json_skip_ws(js);
    if ('\0' != js->text[js->pos]) {
        return json_fail(js, "text after the JSON value");
    }
    return root;
}

/* ------------------------------------------------------------------------------------------ */
/* A parsed document kept whole (tbrdma_json.h)                                               */

struct tbrdma_json_doc {
    json_node_t *nodes;
    int nnodes;
    char *pool;
};

int tbrdma_json_parse(const char *text, tbrdma_json_doc_t **doc_p, char *err, size_t errlen)
{
    size_t len = (NULL != text) ? strlen(text) : 0;
    tbrdma_json_doc_t *doc = calloc(1, sizeof(*doc));
    tbrdma_fmt_t fmt;
    json_t js;

    tbrdma_fmt_init(&fmt, err, errlen);
    memset(&js, 0, sizeof(js));
    js.text = (NULL != text) ? text : "";
    js.err = &fmt;
    js.maxnodes = (int) len + 1; /* every value takes at least one character */
    js.nodes = malloc(sizeof(*js.nodes) * (len + 1));
    js.pool = malloc(len + 1); /* decoded strings never outgrow their quotes */
    if (NULL == doc || NULL == js.nodes || NULL == js.pool) {
        tbrdma_fmt_add(&fmt, "JSON: out of memory");
        free(js.pool);
        free(js.nodes);
        free(doc);
        return -ENOMEM;
    }
    if (0 > json_parse(&js)) {
        free(js.pool);
        free(js.nodes);
        free(doc);
        return -EINVAL;
    }
    doc->nodes = js.nodes;
    doc->nnodes = js.nnodes;
    doc->pool = js.pool;
    *doc_p = doc;
    return 0;
}

void tbrdma_json_free(tbrdma_json_doc_t *doc)
{
    if (NULL != doc) {
        free(doc->pool);
        free(doc->nodes);
        free(doc);
    }
}

int tbrdma_json_root(const tbrdma_json_doc_t *doc)
{
    return (NULL != doc && 0 < doc->nnodes) ? 0 : -1;
}

static int json_doc_valid(const tbrdma_json_doc_t *doc, int node)
{
    return NULL != doc && 0 <= node && node < doc->nnodes;
}

tbrdma_json_kind_t tbrdma_json_kind(const tbrdma_json_doc_t *doc, int node)
{
    if (!json_doc_valid(doc, node)) {
        return TBRDMA_JSON_NONE;
    }
    return (tbrdma_json_kind_t) doc->nodes[node].type;
}

int tbrdma_json_member(const tbrdma_json_doc_t *doc, int node, const char *key)
{
    int c;

    if (TBRDMA_JSON_OBJECT != tbrdma_json_kind(doc, node)) {
        return -1;
    }
    for (c = doc->nodes[node].child; 0 <= c; c = doc->nodes[c].next) {
        if (0 == strcmp(doc->pool + doc->nodes[c].key, key)) {
            return c;
        }
    }
    return -1;
}

int tbrdma_json_count(const tbrdma_json_doc_t *doc, int node)
{
    return json_doc_valid(doc, node) ? doc->nodes[node].count : 0;
}

int tbrdma_json_at(const tbrdma_json_doc_t *doc, int node, int i)
{
    int c = (0 <= i) ? tbrdma_json_first(doc, node) : -1;

    while (0 <= c && 0 < i--) {
        c = doc->nodes[c].next;
    }
    return c;
}

int tbrdma_json_first(const tbrdma_json_doc_t *doc, int node)
{
    return json_doc_valid(doc, node) ? doc->nodes[node].child : -1;
}

int tbrdma_json_next(const tbrdma_json_doc_t *doc, int node)
{
    return json_doc_valid(doc, node) ? doc->nodes[node].next : -1;
}

const char *tbrdma_json_string(const tbrdma_json_doc_t *doc, int node)
{
    if (TBRDMA_JSON_STRING != tbrdma_json_kind(doc, node)) {
        return NULL;
    }
    return doc->pool + doc->nodes[node].str;
}
