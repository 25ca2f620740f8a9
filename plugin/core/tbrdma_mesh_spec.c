/*
 * Mesh spec parsing: the list of cables a user names when addressing cannot identify them.
 * Two formats (docs/mesh.md):
 *   our mesh file, one cable per line: "hostA:rdma_en2 hostB:rdma_en3", '#' starts a comment;
 *   MLX's hostfile JSON, whose "rdma" matrix gives, for host i and peer j, the device(s) of
 *   host i cabled to host j (the k-th name on both sides being the same cable).
 * The JSON reader is strict (RFC 8259 grammar), bounded in input size and nesting depth, and
 * builds a flat node table; only "hosts", "ssh" and "rdma" are interpreted.
 */
#include "tbrdma_fmt.h"
#include "tbrdma_json.h"
#include "tbrdma_mesh.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_TEXT_MAX  (1024 * 1024) /* a mesh spec is a few KiB; refuse anything absurd */
#define JSON_DEPTH_MAX 16            /* the hostfile nests 4 deep */

/* ------------------------------------------------------------------------------------------ */
/* Cables common to both formats                                                              */

/* "host:dev" already used by an earlier cable? Returns its index or -1. */
static int spec_find_end(const tbrdma_mesh_spec_t *spec, const char *host, const char *dev)
{
    int i, s;

    for (i = 0; i < spec->ncables; i++) {
        for (s = 0; s < 2; s++) {
            if (0 == strcmp(spec->cables[i].host[s], host)
                && 0 == strcmp(spec->cables[i].device[s], dev)) {
                return i;
            }
        }
    }
    return -1;
}

static int spec_check_end(const char *where, const char *host, size_t hlen, const char *dev,
                          size_t dlen, tbrdma_fmt_t *err)
{
    if (0 == hlen || TBRDMA_HOST_MAX <= hlen) {
        tbrdma_fmt_add(err, "%s: host name \"%.*s\" is empty or longer than %d characters", where,
                       (int) hlen, host, TBRDMA_HOST_MAX - 1);
        return -EINVAL;
    }
    if (0 == dlen || TBRDMA_NAME_MAX <= dlen) {
        tbrdma_fmt_add(
            err, "%s: device name \"%.*s\" of host %.*s is empty or longer than %d characters",
            where, (int) dlen, dev, (int) hlen, host, TBRDMA_NAME_MAX - 1);
        return -EINVAL;
    }
    return 0;
}

/* Adds (h0, d0) <-> (h1, d1) after checking names, self-cables and ends used twice. */
static int spec_add_cable(tbrdma_mesh_spec_t *spec, const char *where, const char *h[2],
                          const size_t hl[2], const char *d[2], const size_t dl[2],
                          tbrdma_fmt_t *err)
{
    tbrdma_mesh_cable_t *cable;
    int s, other;

    for (s = 0; s < 2; s++) {
        if (0 != spec_check_end(where, h[s], hl[s], d[s], dl[s], err)) {
            return -EINVAL;
        }
    }
    if (hl[0] == hl[1] && 0 == memcmp(h[0], h[1], hl[0])) {
        tbrdma_fmt_add(err, "%s: cable from host %.*s to itself", where, (int) hl[0], h[0]);
        return -EINVAL;
    }
    if (TBRDMA_MESH_MAX_CABLES <= spec->ncables) {
        tbrdma_fmt_add(err, "%s: more than %d cables", where, TBRDMA_MESH_MAX_CABLES);
        return -EINVAL;
    }
    cable = &spec->cables[spec->ncables];
    memset(cable, 0, sizeof(*cable));
    for (s = 0; s < 2; s++) {
        memcpy(cable->host[s], h[s], hl[s]);
        memcpy(cable->device[s], d[s], dl[s]);
        other = spec_find_end(spec, cable->host[s], cable->device[s]);
        if (0 <= other) {
            tbrdma_fmt_add(err, "%s: %s:%s is the end of two cables", where, cable->host[s],
                           cable->device[s]);
            return -EINVAL;
        }
    }
    spec->ncables++;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Our mesh file                                                                              */

/* Splits "host:dev" at its last ':'. */
static int spec_split_end(const char *tok, size_t n, size_t *hlen_p, const char **dev_p,
                          size_t *dlen_p)
{
    size_t i = n;

    while (0 < i && ':' != tok[i - 1]) {
        i--;
    }
    if (0 == i) {
        return -EINVAL;
    }
    *hlen_p = i - 1;
    *dev_p = tok + i;
    *dlen_p = n - i;
    return 0;
}

/* Next whitespace-delimited token of [*p, end); returns its length, 0 at the end. */
static size_t spec_token(const char **p, const char *end, const char **tok_p)
{
    const char *s = *p, *e;

    while (s < end && isspace((unsigned char) *s)) {
        s++;
    }
    e = s;
    while (e < end && !isspace((unsigned char) *e)) {
        e++;
    }
    *tok_p = s;
    *p = e;
    return (size_t) (e - s);
}

static int spec_parse_line(const char *line, const char *end, int lineno, tbrdma_mesh_spec_t *spec,
                           tbrdma_fmt_t *err)
{
    const char *h[2], *d[2], *tok, *extra;
    char where[32];
    size_t hl[2], dl[2], n;
    int s;

    for (s = 0; s < 2; s++) {
        n = spec_token(&line, end, &tok);
        if (0 == n || 0 != spec_split_end(tok, n, &hl[s], &d[s], &dl[s])) {
            tbrdma_fmt_add(err, "mesh spec line %d: expected \"hostA:device hostB:device\"",
                           lineno);
            return -EINVAL;
        }
        h[s] = tok;
    }
    if (0 != spec_token(&line, end, &extra)) {
        tbrdma_fmt_add(err, "mesh spec line %d: unexpected \"%.*s\" after the second end", lineno,
                       (int) (end - extra), extra);
        return -EINVAL;
    }
    snprintf(where, sizeof(where), "mesh spec line %d", lineno);
    return spec_add_cable(spec, where, h, hl, d, dl, err);
}

static int spec_parse_lines(const char *text, tbrdma_mesh_spec_t *spec, tbrdma_fmt_t *err)
{
    const char *line = text, *eol, *end;
    int lineno = 1;

    while ('\0' != *line) {
        eol = strchr(line, '\n');
        if (NULL == eol) {
            eol = line + strlen(line);
        }
        end = memchr(line, '#', (size_t) (eol - line));
        if (NULL == end) {
            end = eol;
        }
        while (line < end && isspace((unsigned char) end[-1])) {
            end--;
        }
        while (line < end && isspace((unsigned char) *line)) {
            line++;
        }
        if (line < end && 0 != spec_parse_line(line, end, lineno, spec, err)) {
            return -EINVAL;
        }
        line = ('\0' == *eol) ? eol : eol + 1;
        lineno++;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* A small strict JSON reader                                                                 */

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

/* The member named key of object obj, or -1. */
static int json_get(const json_t *js, int obj, const char *key)
{
    int c;

    for (c = js->nodes[obj].child; 0 <= c; c = js->nodes[c].next) {
        if (0 == strcmp(js->pool + js->nodes[c].key, key)) {
            return c;
        }
    }
    return -1;
}

/* The i-th element of array arr, or -1. */
static int json_at(const json_t *js, int arr, int i)
{
    int c = js->nodes[arr].child;

    while (0 <= c && 0 < i--) {
        c = js->nodes[c].next;
    }
    return c;
}

/* ------------------------------------------------------------------------------------------ */
/* MLX hostfile                                                                               */

typedef struct hostfile {
    int nhosts;
    const char *name[TBRDMA_MAX_HOSTS]; /* ssh name without "user@", in the pool */
    int rdma[TBRDMA_MAX_HOSTS];         /* the "rdma" row node */
} hostfile_t;

static int hostfile_host(json_t *js, int node, int i, hostfile_t *hf)
{
    int ssh = -1, rdma = -1;
    const char *name, *at;

    if (JSON_OBJECT == js->nodes[node].type) {
        ssh = json_get(js, node, "ssh");
        rdma = json_get(js, node, "rdma");
    }
    if (0 > ssh || JSON_STRING != js->nodes[ssh].type) {
        tbrdma_fmt_add(js->err, "hostfile hosts[%d]: no \"ssh\" host name", i);
        return -EINVAL;
    }
    name = js->pool + js->nodes[ssh].str;
    at = strrchr(name, '@');
    hf->name[i] = (NULL != at) ? at + 1 : name;
    if (0 > rdma || JSON_ARRAY != js->nodes[rdma].type) {
        tbrdma_fmt_add(js->err, "hostfile host %s: no \"rdma\" device array", hf->name[i]);
        return -EINVAL;
    }
    hf->rdma[i] = rdma;
    return 0;
}

static int hostfile_hosts(json_t *js, int root, hostfile_t *hf)
{
    int hosts = -1, node, i;

    if (JSON_OBJECT == js->nodes[root].type) {
        hosts = json_get(js, root, "hosts");
    } else if (JSON_ARRAY == js->nodes[root].type) {
        hosts = root; /* MLX's launcher also takes a bare list of hosts */
    }
    if (0 > hosts || JSON_ARRAY != js->nodes[hosts].type) {
        tbrdma_fmt_add(js->err, "hostfile: no \"hosts\" array in the top-level object");
        return -EINVAL;
    }
    hf->nhosts = js->nodes[hosts].count;
    if (TBRDMA_MAX_HOSTS < hf->nhosts) {
        tbrdma_fmt_add(js->err, "hostfile: %d hosts, at most %d supported", hf->nhosts,
                       TBRDMA_MAX_HOSTS);
        return -EINVAL;
    }
    for (i = 0, node = js->nodes[hosts].child; 0 <= node; i++, node = js->nodes[node].next) {
        if (0 != hostfile_host(js, node, i, hf)) {
            return -EINVAL;
        }
    }
    return 0;
}

/* Names in one rdma entry: null -> 0, "x" -> 1, ["x","y"] -> 2. -1 when malformed. */
static int hostfile_names(const json_t *js, int entry, const char *names[TBRDMA_MAX_PORTS])
{
    int n = 0, c;

    if (JSON_NULL == js->nodes[entry].type) {
        return 0;
    }
    if (JSON_STRING == js->nodes[entry].type) {
        names[0] = js->pool + js->nodes[entry].str;
        return 1;
    }
    if (JSON_ARRAY != js->nodes[entry].type || TBRDMA_MAX_PORTS < js->nodes[entry].count) {
        return -1;
    }
    for (c = js->nodes[entry].child; 0 <= c; c = js->nodes[c].next) {
        if (JSON_STRING != js->nodes[c].type) {
            return -1;
        }
        names[n++] = js->pool + js->nodes[c].str;
    }
    return n;
}

static int hostfile_check_rows(json_t *js, const hostfile_t *hf)
{
    const char *names[TBRDMA_MAX_PORTS];
    int i, j;

    for (i = 0; i < hf->nhosts; i++) {
        if (js->nodes[hf->rdma[i]].count != hf->nhosts) {
            tbrdma_fmt_add(js->err,
                           "hostfile host %s: \"rdma\" has %d entries, expected %d (one per host)",
                           hf->name[i], js->nodes[hf->rdma[i]].count, hf->nhosts);
            return -EINVAL;
        }
        for (j = 0; j < i; j++) {
            if (0 == strcmp(hf->name[i], hf->name[j])) {
                tbrdma_fmt_add(js->err, "hostfile: host %s is listed twice", hf->name[i]);
                return -EINVAL;
            }
        }
        if (0 != hostfile_names(js, json_at(js, hf->rdma[i], i), names)) {
            tbrdma_fmt_add(js->err,
                           "hostfile host %s: its own \"rdma\" entry (index %d) must be null",
                           hf->name[i], i);
            return -EINVAL;
        }
    }
    return 0;
}

/* The cables between hosts i and j: the k-th names of both entries. */
static int hostfile_pair(json_t *js, tbrdma_mesh_spec_t *spec, const hostfile_t *hf, int i, int j)
{
    const char *ni[TBRDMA_MAX_PORTS], *nj[TBRDMA_MAX_PORTS], *h[2], *d[2];
    size_t hl[2], dl[2];
    int ci = hostfile_names(js, json_at(js, hf->rdma[i], j), ni);
    int cj = hostfile_names(js, json_at(js, hf->rdma[j], i), nj);
    int k;

    if (0 > ci || 0 > cj) {
        tbrdma_fmt_add(js->err,
                       "hostfile host %s: \"rdma\" entry for host %s must be null, a device name "
                       "or an array of names",
                       hf->name[(0 > ci) ? i : j], hf->name[(0 > ci) ? j : i]);
        return -EINVAL;
    }
    if (ci != cj) {
        tbrdma_fmt_add(
            js->err,
            "hostfile: host %s lists %d device(s) for host %s but host %s lists %d for host %s",
            hf->name[i], ci, hf->name[j], hf->name[j], cj, hf->name[i]);
        return -EINVAL;
    }
    h[0] = hf->name[i];
    h[1] = hf->name[j];
    hl[0] = strlen(h[0]);
    hl[1] = strlen(h[1]);
    for (k = 0; k < ci; k++) {
        d[0] = ni[k];
        d[1] = nj[k];
        dl[0] = strlen(d[0]);
        dl[1] = strlen(d[1]);
        if (0 != spec_add_cable(spec, "hostfile", h, hl, d, dl, js->err)) {
            return -EINVAL;
        }
    }
    return 0;
}

static int hostfile_cables(json_t *js, int root, tbrdma_mesh_spec_t *spec)
{
    hostfile_t hf;
    int i, j;

    memset(&hf, 0, sizeof(hf));
    if (0 != hostfile_hosts(js, root, &hf) || 0 != hostfile_check_rows(js, &hf)) {
        return -EINVAL;
    }
    for (i = 0; i < hf.nhosts; i++) {
        for (j = i + 1; j < hf.nhosts; j++) {
            if (0 != hostfile_pair(js, spec, &hf, i, j)) {
                return -EINVAL;
            }
        }
    }
    return 0;
}

static int spec_parse_hostfile(const char *text, tbrdma_mesh_spec_t *spec, tbrdma_fmt_t *err)
{
    size_t len = strlen(text);
    json_t js;
    int root, rc = -ENOMEM;

    memset(&js, 0, sizeof(js));
    js.text = text;
    js.err = err;
    js.maxnodes = (int) len + 1; /* every value takes at least one character */
    js.nodes = malloc(sizeof(*js.nodes) * (len + 1));
    js.pool = malloc(len + 1); /* decoded strings and their NULs never outgrow their quotes */
    if (NULL == js.nodes || NULL == js.pool) {
        tbrdma_fmt_add(err, "hostfile: out of memory");
        goto out_free;
    }
    root = json_parse(&js);
    rc = (0 > root) ? -EINVAL : hostfile_cables(&js, root, spec);
out_free:
    free(js.pool);
    free(js.nodes);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

int tbrdma_mesh_spec_parse(const char *text, tbrdma_mesh_spec_t *spec_p, char *err, size_t errlen)
{
    tbrdma_mesh_spec_t *spec;
    tbrdma_fmt_t fmt;
    const char *first = text;
    int rc;

    tbrdma_fmt_init(&fmt, err, errlen);
    if (NULL == text || SPEC_TEXT_MAX < strlen(text)) {
        tbrdma_fmt_add(&fmt, "mesh spec: missing or larger than %d bytes", SPEC_TEXT_MAX);
        return -EINVAL;
    }
    spec = calloc(1, sizeof(*spec));
    if (NULL == spec) {
        tbrdma_fmt_add(&fmt, "mesh spec: out of memory");
        return -ENOMEM;
    }
    while (isspace((unsigned char) *first)) {
        first++;
    }
    rc = ('{' == *first || '[' == *first) ? spec_parse_hostfile(text, spec, &fmt)
                                          : spec_parse_lines(text, spec, &fmt);
    if (0 == rc) {
        memcpy(spec_p, spec, sizeof(*spec));
    }
    free(spec);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* The JSON reader for other callers (tbrdma_json.h): a parsed document kept whole             */

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
    json_t js;

    if (TBRDMA_JSON_OBJECT != tbrdma_json_kind(doc, node)) {
        return -1;
    }
    memset(&js, 0, sizeof(js));
    js.nodes = doc->nodes;
    js.pool = doc->pool;
    return json_get(&js, node, key);
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
