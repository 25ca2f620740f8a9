/*
 * Mesh spec parsing: the list of cables a user names when addressing cannot identify them.
 * Two formats (docs/mesh.md):
 *   our mesh file, one cable per line: "hostA:rdma_en2 hostB:rdma_en3", '#' starts a comment;
 *   MLX's hostfile JSON, whose "rdma" matrix gives, for host i and peer j, the device(s) of
 *   host i cabled to host j (the k-th name on both sides being the same cable).
 * The text is bounded in size; the JSON is read by core's strict reader (tbrdma_json.h), and
 * only "hosts", "ssh" and "rdma" are interpreted.
 */
#include "tbrdma_fmt.h"
#include "tbrdma_json.h"
#include "tbrdma_mesh.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_TEXT_MAX (1024 * 1024) /* a mesh spec is a few KiB; refuse anything absurd */

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
/* MLX hostfile                                                                               */

typedef struct hostfile {
    const tbrdma_json_doc_t *doc;
    tbrdma_fmt_t *err;
    int nhosts;
    const char *name[TBRDMA_MAX_HOSTS]; /* ssh name without "user@", in the document */
    int rdma[TBRDMA_MAX_HOSTS];         /* the "rdma" row node */
} hostfile_t;

static int hostfile_host(hostfile_t *hf, int node, int i)
{
    int ssh = tbrdma_json_member(hf->doc, node, "ssh");
    int rdma = tbrdma_json_member(hf->doc, node, "rdma");
    const char *name = tbrdma_json_string(hf->doc, ssh), *at;

    if (NULL == name) {
        tbrdma_fmt_add(hf->err, "hostfile hosts[%d]: no \"ssh\" host name", i);
        return -EINVAL;
    }
    at = strrchr(name, '@');
    hf->name[i] = (NULL != at) ? at + 1 : name;
    if (TBRDMA_JSON_ARRAY != tbrdma_json_kind(hf->doc, rdma)) {
        tbrdma_fmt_add(hf->err, "hostfile host %s: no \"rdma\" device array", hf->name[i]);
        return -EINVAL;
    }
    hf->rdma[i] = rdma;
    return 0;
}

static int hostfile_hosts(hostfile_t *hf)
{
    int root = tbrdma_json_root(hf->doc), hosts, node, i;

    hosts = tbrdma_json_member(hf->doc, root, "hosts");
    if (TBRDMA_JSON_ARRAY == tbrdma_json_kind(hf->doc, root)) {
        hosts = root; /* MLX's launcher also takes a bare list of hosts */
    }
    if (TBRDMA_JSON_ARRAY != tbrdma_json_kind(hf->doc, hosts)) {
        tbrdma_fmt_add(hf->err, "hostfile: no \"hosts\" array in the top-level object");
        return -EINVAL;
    }
    hf->nhosts = tbrdma_json_count(hf->doc, hosts);
    if (TBRDMA_MAX_HOSTS < hf->nhosts) {
        tbrdma_fmt_add(hf->err, "hostfile: %d hosts, at most %d supported", hf->nhosts,
                       TBRDMA_MAX_HOSTS);
        return -EINVAL;
    }
    for (i = 0, node = tbrdma_json_first(hf->doc, hosts); 0 <= node;
         i++, node = tbrdma_json_next(hf->doc, node)) {
        if (0 != hostfile_host(hf, node, i)) {
            return -EINVAL;
        }
    }
    return 0;
}

/* Names in row i's entry for host j: null -> 0, "x" -> 1, ["x","y"] -> 2. -1 when malformed. */
static int hostfile_names(const hostfile_t *hf, int i, int j, const char *names[TBRDMA_MAX_PORTS])
{
    int entry = tbrdma_json_at(hf->doc, hf->rdma[i], j);
    tbrdma_json_kind_t kind = tbrdma_json_kind(hf->doc, entry);
    int n = 0, c;

    if (TBRDMA_JSON_NULL == kind) {
        return 0;
    }
    if (TBRDMA_JSON_STRING == kind) {
        names[0] = tbrdma_json_string(hf->doc, entry);
        return 1;
    }
    if (TBRDMA_JSON_ARRAY != kind || TBRDMA_MAX_PORTS < tbrdma_json_count(hf->doc, entry)) {
        return -1;
    }
    for (c = tbrdma_json_first(hf->doc, entry); 0 <= c; c = tbrdma_json_next(hf->doc, c)) {
        names[n] = tbrdma_json_string(hf->doc, c);
        if (NULL == names[n++]) {
            return -1;
        }
    }
    return n;
}

static int hostfile_check_rows(const hostfile_t *hf)
{
    const char *names[TBRDMA_MAX_PORTS];
    int i, j, n;

    for (i = 0; i < hf->nhosts; i++) {
        n = tbrdma_json_count(hf->doc, hf->rdma[i]);
        if (n != hf->nhosts) {
            tbrdma_fmt_add(hf->err,
                           "hostfile host %s: \"rdma\" has %d entries, expected %d (one per host)",
                           hf->name[i], n, hf->nhosts);
            return -EINVAL;
        }
        for (j = 0; j < i; j++) {
            if (0 == strcmp(hf->name[i], hf->name[j])) {
                tbrdma_fmt_add(hf->err, "hostfile: host %s is listed twice", hf->name[i]);
                return -EINVAL;
            }
        }
        if (0 != hostfile_names(hf, i, i, names)) {
            tbrdma_fmt_add(hf->err,
                           "hostfile host %s: its own \"rdma\" entry (index %d) must be null",
                           hf->name[i], i);
            return -EINVAL;
        }
    }
    return 0;
}

/* The cables between hosts i and j: the k-th names of both entries. */
static int hostfile_pair(const hostfile_t *hf, tbrdma_mesh_spec_t *spec, int i, int j)
{
    const char *ni[TBRDMA_MAX_PORTS], *nj[TBRDMA_MAX_PORTS], *h[2], *d[2];
    size_t hl[2], dl[2];
    int ci = hostfile_names(hf, i, j, ni);
    int cj = hostfile_names(hf, j, i, nj);
    int k;

    if (0 > ci || 0 > cj) {
        tbrdma_fmt_add(hf->err,
                       "hostfile host %s: \"rdma\" entry for host %s must be null, a device name "
                       "or an array of names",
                       hf->name[(0 > ci) ? i : j], hf->name[(0 > ci) ? j : i]);
        return -EINVAL;
    }
    if (ci != cj) {
        tbrdma_fmt_add(
            hf->err,
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
        if (0 != spec_add_cable(spec, "hostfile", h, hl, d, dl, hf->err)) {
            return -EINVAL;
        }
    }
    return 0;
}

static int hostfile_cables(hostfile_t *hf, tbrdma_mesh_spec_t *spec)
{
    int i, j;

    if (0 != hostfile_hosts(hf) || 0 != hostfile_check_rows(hf)) {
        return -EINVAL;
    }
    for (i = 0; i < hf->nhosts; i++) {
        for (j = i + 1; j < hf->nhosts; j++) {
            if (0 != hostfile_pair(hf, spec, i, j)) {
                return -EINVAL;
            }
        }
    }
    return 0;
}

static int spec_parse_hostfile(const char *text, tbrdma_mesh_spec_t *spec, tbrdma_fmt_t *err)
{
    char why[160]; /* the reader's errors (a line, a column, a short phrase) fit */
    tbrdma_json_doc_t *doc = NULL;
    hostfile_t hf;
    int rc;

    rc = tbrdma_json_parse(text, &doc, why, sizeof(why));
    if (0 != rc) {
        tbrdma_fmt_add(err, "%s", (-ENOMEM == rc) ? "hostfile: out of memory" : why);
        return rc;
    }
    memset(&hf, 0, sizeof(hf));
    hf.doc = doc;
    hf.err = err;
    rc = hostfile_cables(&hf, spec);
    tbrdma_json_free(doc);
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
