/*
 * Host lists (Open MPI's hostfile and --host syntax, MLX's hostfile JSON) and the writers of
 * Open MPI's hostfile, tbrdma's mesh file and MLX's hostfile JSON (see tbrdma_hostfile.h).
 * Invariant of the MLX writer: the k-th device of host i's entry for host j and the k-th device
 * of host j's entry for host i are the two ends of the same cable.
 */
#include "tbrdma_hostfile.h"
#include "tbrdma_fmt.h"
#include "tbrdma_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOSTLIST_SLOTS_MAX 1000000

/* ------------------------------------------------------------------------------------------ */
/* Reading                                                                                    */

/* Length of the short host name (up to the first '.'). */
static size_t host_short_len(const char *name)
{
    const char *dot = strchr(name, '.');

    return (NULL != dot) ? (size_t) (dot - name) : strlen(name);
}

int tbrdma_hostlist_find(const tbrdma_hostlist_t *list, const char *name)
{
    size_t n = host_short_len(name);
    int i, found = -1, nfound = 0;

    for (i = 0; i < list->nhosts; i++) {
        if (0 == strcmp(list->hosts[i].name, name)) {
            return i;
        }
        if (host_short_len(list->hosts[i].name) == n
            && 0 == strncmp(list->hosts[i].name, name, n)) {
            found = i;
            nfound++;
        }
    }
    return (1 == nfound) ? found : -1;
}

/* Adds login (length n) with slots, merging a host listed twice. */
static int hostlist_add(tbrdma_hostlist_t *list, const char *login, size_t n, int slots,
                        const char *where, tbrdma_fmt_t *err)
{
    tbrdma_host_entry_t *h;
    const char *at = memchr(login, '@', n);
    const char *name = (NULL != at) ? at + 1 : login;
    size_t nlen = n - (size_t) (name - login);
    int i;

    if (0 == nlen || TBRDMA_HOST_MAX <= nlen || TBRDMA_LOGIN_MAX <= n) {
        tbrdma_fmt_add(err, "%s: host \"%.*s\" is empty or too long", where, (int) n, login);
        return -EINVAL;
    }
    for (i = 0; i < list->nhosts; i++) {
        if (strlen(list->hosts[i].login) == n && 0 == strncmp(list->hosts[i].login, login, n)) {
            list->hosts[i].slots += slots;
            return 0;
        }
    }
    if (TBRDMA_MAX_HOSTS <= list->nhosts) {
        tbrdma_fmt_add(err, "%s: more than %d hosts", where, TBRDMA_MAX_HOSTS);
        return -EINVAL;
    }
    h = &list->hosts[list->nhosts++];
    memset(h, 0, sizeof(*h));
    memcpy(h->login, login, n);
    memcpy(h->name, name, nlen);
    h->slots = slots;
    return 0;
}

/* "slots=N" (or "slots:N"); returns N, 0 when word is another key, -1 when N is malformed. */
static int hostlist_slots_word(const char *word, size_t n)
{
    char num[16];
    long v;
    char *end;

    if (6 > n || 0 != strncmp(word, "slots", 5) || ('=' != word[5] && ':' != word[5])) {
        return 0;
    }
    if (n - 6 == 0 || n - 6 >= sizeof(num)) {
        return -1;
    }
    memcpy(num, word + 6, n - 6);
    num[n - 6] = '\0';
    v = strtol(num, &end, 10);
    if ('\0' != *end || 1 > v || HOSTLIST_SLOTS_MAX < v) {
        return -1;
    }
    return (int) v;
}

/* One hostfile line [p, end): the host, then key=value words. */
static int hostlist_line(tbrdma_hostlist_t *list, const char *p, const char *end, int lineno,
                         tbrdma_fmt_t *err)
{
    const char *host = p, *w;
    size_t hlen;
    char where[32];
    int slots = 0, v;

    while (p < end && !isspace((unsigned char) *p)) {
        p++;
    }
    hlen = (size_t) (p - host);
    snprintf(where, sizeof(where), "hostfile line %d", lineno);
    while (p < end) {
        while (p < end && isspace((unsigned char) *p)) {
            p++;
        }
        for (w = p; p < end && !isspace((unsigned char) *p); p++) {
        }
        if (p == w) {
            break;
        }
        v = hostlist_slots_word(w, (size_t) (p - w));
        if (0 > v) {
            tbrdma_fmt_add(err, "%s: \"%.*s\" is not slots=N with N a positive number", where,
                           (int) (p - w), w);
            return -EINVAL;
        }
        slots = (0 < v) ? v : slots;
    }
    return hostlist_add(list, host, hlen, slots, where, err);
}

static int hostlist_parse_lines(const char *text, tbrdma_hostlist_t *list, tbrdma_fmt_t *err)
{
    const char *line = text, *eol, *end;
    int lineno = 1;

    while ('\0' != *line) {
        eol = strchr(line, '\n');
        eol = (NULL != eol) ? eol : line + strlen(line);
        end = memchr(line, '#', (size_t) (eol - line));
        end = (NULL != end) ? end : eol;
        while (line < end && isspace((unsigned char) *line)) {
            line++;
        }
        if (line < end && 0 != hostlist_line(list, line, end, lineno, err)) {
            return -EINVAL;
        }
        line = ('\0' == *eol) ? eol : eol + 1;
        lineno++;
    }
    return 0;
}

/* MLX's hostfile: every hosts[].ssh, with the first of its "ips". */
static int hostlist_parse_mlx(const char *text, tbrdma_hostlist_t *list, tbrdma_fmt_t *err)
{
    tbrdma_json_doc_t *doc = NULL;
    const char *ssh, *ip;
    char where[32], why[256];
    int hosts, h, i = 0, rc;

    rc = tbrdma_json_parse(text, &doc, why, sizeof(why));
    if (0 != rc) {
        tbrdma_fmt_add(err, "%s", why);
        return rc;
    }
    hosts = tbrdma_json_root(doc);
    if (TBRDMA_JSON_ARRAY != tbrdma_json_kind(doc, hosts)) {
        hosts = tbrdma_json_member(doc, hosts, "hosts"); /* else a bare list, which MLX takes */
    }
    if (TBRDMA_JSON_ARRAY != tbrdma_json_kind(doc, hosts)) {
        tbrdma_fmt_add(err, "hostfile: no \"hosts\" array in the top-level object");
        rc = -EINVAL;
    }
    for (h = tbrdma_json_first(doc, hosts); 0 == rc && 0 <= h; h = tbrdma_json_next(doc, h)) {
        snprintf(where, sizeof(where), "hostfile hosts[%d]", i++);
        ssh = tbrdma_json_string(doc, tbrdma_json_member(doc, h, "ssh"));
        if (NULL == ssh) {
            tbrdma_fmt_add(err, "%s: no \"ssh\" host name", where);
            rc = -EINVAL;
            break;
        }
        rc = hostlist_add(list, ssh, strlen(ssh), 0, where, err);
        ip = tbrdma_json_string(doc, tbrdma_json_first(doc, tbrdma_json_member(doc, h, "ips")));
        if (0 == rc && NULL != ip && TBRDMA_IPV4_MAX > strlen(ip)) {
            strcpy(list->hosts[list->nhosts - 1].ipv4, ip);
        }
    }
    tbrdma_json_free(doc);
    return rc;
}

/* Runs parse on a zeroed list and copies it out when it found at least one host. */
static int hostlist_finish(int rc, tbrdma_hostlist_t *list, tbrdma_hostlist_t *list_p,
                           tbrdma_fmt_t *err)
{
    if (0 == rc && 0 == list->nhosts) {
        tbrdma_fmt_add(err, "host list: no host");
        rc = -EINVAL;
    }
    if (0 == rc) {
        memcpy(list_p, list, sizeof(*list));
    }
    free(list);
    return rc;
}

int tbrdma_hostlist_parse(const char *text, tbrdma_hostlist_t *list_p, char *err, size_t errlen)
{
    tbrdma_hostlist_t *list = calloc(1, sizeof(*list));
    const char *first = text;
    tbrdma_fmt_t fmt;
    int rc;

    tbrdma_fmt_init(&fmt, err, errlen);
    if (NULL == list) {
        tbrdma_fmt_add(&fmt, "host list: out of memory");
        return -ENOMEM;
    }
    while (isspace((unsigned char) *first)) {
        first++;
    }
    rc = ('{' == *first || '[' == *first) ? hostlist_parse_mlx(text, list, &fmt)
                                          : hostlist_parse_lines(text, list, &fmt);
    return hostlist_finish(rc, list, list_p, &fmt);
}

int tbrdma_hostlist_parse_arg(const char *arg, tbrdma_hostlist_t *list_p, char *err, size_t errlen)
{
    tbrdma_hostlist_t *list = calloc(1, sizeof(*list));
    const char *p = arg, *comma, *colon;
    char word[32];
    tbrdma_fmt_t fmt;
    size_t n;
    int rc = 0, slots;

    tbrdma_fmt_init(&fmt, err, errlen);
    if (NULL == list) {
        tbrdma_fmt_add(&fmt, "host list: out of memory");
        return -ENOMEM;
    }
    while (0 == rc && '\0' != *p) {
        comma = strchr(p, ',');
        n = (NULL != comma) ? (size_t) (comma - p) : strlen(p);
        colon = memchr(p, ':', n);
        slots = 0;
        if (NULL != colon) {
            snprintf(word, sizeof(word), "slots=%.*s", (int) (n - (size_t) (colon - p) - 1),
                     colon + 1);
            slots = hostlist_slots_word(word, strlen(word));
        }
        if (0 > slots) {
            tbrdma_fmt_add(&fmt, "--host: \"%.*s\" is not HOST or HOST:SLOTS", (int) n, p);
            rc = -EINVAL;
            break;
        }
        rc = hostlist_add(list, p, (NULL != colon) ? (size_t) (colon - p) : n, slots, "--host",
                          &fmt);
        p += n + (NULL != comma);
    }
    return hostlist_finish(rc, list, list_p, &fmt);
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                    */

size_t tbrdma_hostfile_write_ompi(const tbrdma_hostlist_t *list, char *buf, size_t len)
{
    tbrdma_fmt_t fmt;
    int i;

    tbrdma_fmt_init(&fmt, buf, len);
    for (i = 0; i < list->nhosts; i++) {
        tbrdma_fmt_add(&fmt, "%s", list->hosts[i].login);
        if (0 < list->hosts[i].slots) {
            tbrdma_fmt_add(&fmt, " slots=%d", list->hosts[i].slots);
        }
        tbrdma_fmt_add(&fmt, "\n");
    }
    return fmt.used;
}

size_t tbrdma_hostfile_write_mesh(const tbrdma_mesh_spec_t *spec, char *buf, size_t len)
{
    const tbrdma_mesh_cable_t *c;
    tbrdma_fmt_t fmt;
    int k;

    tbrdma_fmt_init(&fmt, buf, len);
    tbrdma_fmt_add(&fmt, "# tbrdma mesh file (btl_tbrdma_mesh_file): one cable per line, "
                         "\"hostA:device hostB:device\"\n");
    for (k = 0; k < spec->ncables; k++) {
        c = &spec->cables[k];
        tbrdma_fmt_add(&fmt, "%s:%s %s:%s\n", c->host[0], c->device[0], c->host[1], c->device[1]);
    }
    return fmt.used;
}

/* A JSON string (host names and devices hold no control characters, but quote what needs it). */
static void mlx_add_string(tbrdma_fmt_t *fmt, const char *s)
{
    tbrdma_fmt_add(fmt, "\"");
    for (; '\0' != *s; s++) {
        if ('"' == *s || '\\' == *s) {
            tbrdma_fmt_add(fmt, "\\%c", *s);
        } else if (0x20 > (unsigned char) *s) {
            tbrdma_fmt_add(fmt, "\\u%04x", (unsigned) (unsigned char) *s);
        } else {
            tbrdma_fmt_add(fmt, "%c", *s);
        }
    }
    tbrdma_fmt_add(fmt, "\"");
}

/* One cable between list hosts a and b: its device on each. */
typedef struct mlx_cable {
    const char *dev_a; /* on the lower-named of the two hosts */
    const char *dev_b;
} mlx_cable_t;

static int mlx_cable_cmp(const void *x, const void *y)
{
    return strcmp(((const mlx_cable_t *) x)->dev_a, ((const mlx_cable_t *) y)->dev_a);
}

/*
 * The cables between list hosts i and j, ordered by the device on the lower-named host; fills
 * names with host i's devices in that order. Returns the count.
 */
static int mlx_pair_devices(const tbrdma_hostlist_t *list, const tbrdma_mesh_spec_t *spec, int i,
                            int j, const char *names[TBRDMA_MAX_PORTS])
{
    int lo = (0 > strcmp(list->hosts[i].name, list->hosts[j].name)) ? i : j;
    int hi = (lo == i) ? j : i, n = 0, k, s;
    mlx_cable_t cables[TBRDMA_MAX_PORTS];

    for (k = 0; k < spec->ncables && n < TBRDMA_MAX_PORTS; k++) {
        for (s = 0; s < 2; s++) {
            if (lo == tbrdma_hostlist_find(list, spec->cables[k].host[s])
                && hi == tbrdma_hostlist_find(list, spec->cables[k].host[1 - s])) {
                cables[n].dev_a = spec->cables[k].device[s];
                cables[n++].dev_b = spec->cables[k].device[1 - s];
                break;
            }
        }
    }
    qsort(cables, (size_t) n, sizeof(cables[0]), mlx_cable_cmp);
    for (k = 0; k < n; k++) {
        names[k] = (lo == i) ? cables[k].dev_a : cables[k].dev_b;
    }
    return n;
}

/* Entry j of host i's "rdma" row. */
static void mlx_add_entry(tbrdma_fmt_t *fmt, const tbrdma_hostlist_t *list,
                          const tbrdma_mesh_spec_t *spec, int i, int j)
{
    const char *names[TBRDMA_MAX_PORTS];
    int n = (i == j) ? 0 : mlx_pair_devices(list, spec, i, j, names), k;

    if (0 == n) {
        tbrdma_fmt_add(fmt, "null");
        return;
    }
    if (1 == n) {
        mlx_add_string(fmt, names[0]);
        return;
    }
    tbrdma_fmt_add(fmt, "[");
    for (k = 0; k < n; k++) {
        tbrdma_fmt_add(fmt, "%s", (0 == k) ? "" : ", ");
        mlx_add_string(fmt, names[k]);
    }
    tbrdma_fmt_add(fmt, "]");
}

size_t tbrdma_hostfile_write_mlx(const tbrdma_hostlist_t *list, const tbrdma_mesh_spec_t *spec,
                                 const char *backend, char *buf, size_t len)
{
    const tbrdma_host_entry_t *h;
    tbrdma_fmt_t fmt;
    int i, j;

    tbrdma_fmt_init(&fmt, buf, len);
    tbrdma_fmt_add(&fmt, "{\n  \"backend\": ");
    mlx_add_string(&fmt, backend);
    tbrdma_fmt_add(&fmt, ",\n  \"hosts\": [\n");
    for (i = 0; i < list->nhosts; i++) {
        h = &list->hosts[i];
        tbrdma_fmt_add(&fmt, "    {\"ssh\": ");
        mlx_add_string(&fmt, h->login);
        tbrdma_fmt_add(&fmt, ", \"ips\": [");
        if ('\0' != h->ipv4[0]) {
            mlx_add_string(&fmt, h->ipv4);
        }
        tbrdma_fmt_add(&fmt, "], \"rdma\": [");
        for (j = 0; j < list->nhosts; j++) {
            tbrdma_fmt_add(&fmt, "%s", (0 == j) ? "" : ", ");
            mlx_add_entry(&fmt, list, spec, i, j);
        }
        tbrdma_fmt_add(&fmt, "]}%s\n", (i + 1 < list->nhosts) ? "," : "");
    }
    tbrdma_fmt_add(&fmt, "  ]\n}\n");
    return fmt.used;
}
