/*
 * What tbrdma-doctor prints: one line per finding and a summary line (text), or one JSON
 * document (--json); with --verbose, every host and cable first. And the files of the solved
 * cluster: Open MPI's hostfile, tbrdma's mesh file and MLX's hostfile JSON (core's writers).
 */
#include "doctor_report.h"
#include "doctor_topo.h"

#include "core/tbrdma_gid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *state_name(int state)
{
    return (TBRDMA_PORT_STATE_ACTIVE == state) ? "ACTIVE" : "DOWN";
}

static const char *source_name(doc_source_t source)
{
    switch (source) {
    case DOC_SOURCE_THUNDERBOLT:
        return "thunderbolt";
    case DOC_SOURCE_LINK_LOCAL:
        return "link-local";
    default:
        return "none";
    }
}

static void ipv4_text(const doc_port_t *p, char *buf, size_t len)
{
    char ip[16];

    if (!p->info.has_ipv4 || 0 != tbrdma_ipv4_to_string(p->info.ipv4, ip, sizeof(ip))) {
        snprintf(buf, len, "-");
        return;
    }
    snprintf(buf, len, "%s/%d", ip, p->info.prefix);
}

static int finding_cmp(const void *x, const void *y)
{
    const doc_finding_t *a = x, *b = y;
    int ha = (0 > a->host) ? TBRDMA_MAX_HOSTS : a->host;
    int hb = (0 > b->host) ? TBRDMA_MAX_HOSTS : b->host;

    if (a->problem != b->problem) {
        return b->problem - a->problem;
    }
    return (ha != hb) ? ha - hb : (a < b ? -1 : 1);
}

/* Problems first, by host; notes last. qsort is not stable: the address breaks ties. */
static void sort_findings(doc_cluster_t *cl)
{
    if (1 < cl->nfindings) { /* no findings may mean no array: qsort(NULL, ...) is undefined */
        qsort(cl->findings, (size_t) cl->nfindings, sizeof(*cl->findings), finding_cmp);
    }
}

static int total_ports(const doc_cluster_t *cl)
{
    int i, n = 0;

    for (i = 0; i < cl->nhosts; i++) {
        n += cl->hosts[i].nports;
    }
    return n;
}

/* The end of a host's --verbose line: its cores, when its probe reported them. */
static void print_cores(const doc_host_t *h, FILE *out)
{
    char total[32] = "";

    if (0 < h->perf_cores) {
        if (0 < h->total_cores) {
            snprintf(total, sizeof(total), " of %d", h->total_cores);
        }
        fprintf(out, ", %d performance cores%s (%s)", h->perf_cores, total, h->cores_source);
    }
    fprintf(out, "\n");
}

static void print_verbose(const doc_cluster_t *cl, FILE *out)
{
    const doc_host_t *h;
    const doc_port_t *p;
    char ip[32];
    int i, k;

    for (i = 0; i < cl->nhosts; i++) {
        h = &cl->hosts[i];
        fprintf(out, "host %s (%s): %s, Open MPI %s, tbrdma %s, %d port%s", doc_host_name(h),
                h->entry.login, h->probed ? h->os : "not reached",
                ('\0' != h->ompi_version[0]) ? h->ompi_version : "-",
                ('\0' != h->tbrdma_version[0]) ? h->tbrdma_version : "-", h->nports,
                (1 == h->nports) ? "" : "s");
        print_cores(h, out);
        for (k = 0; k < h->nports; k++) {
            p = &h->ports[k];
            ipv4_text(p, ip, sizeof(ip));
            fprintf(out, "  %s %s %s %s %s -> %s %s (%s)\n", p->info.device, p->info.ifname,
                    state_name(p->info.state), ip, p->diag,
                    (0 <= p->peer_host) ? doc_host_name(&cl->hosts[p->peer_host]) : "?",
                    ('\0' != p->peer_ifname[0]) ? p->peer_ifname : "?", source_name(p->source));
        }
    }
}

static void print_mesh(const doc_cluster_t *cl, FILE *out)
{
    char *text;
    size_t n;

    if (!cl->solved || NULL == cl->modex) {
        return;
    }
    n = tbrdma_mesh_describe(cl->modex, &cl->mesh, NULL, 0) + 1;
    text = malloc(n);
    if (NULL == text) {
        return;
    }
    tbrdma_mesh_describe(cl->modex, &cl->mesh, text, n);
    fprintf(out, "tbrdma's mesh (what each MPI process will use):\n%s", text);
    free(text);
}

/* The versions when every host agrees: "Open MPI 4.1.4 and tbrdma 0.1.0 on every host". */
static void print_summary(const doc_cluster_t *cl, int problems, FILE *out)
{
    const doc_host_t *h0 = &cl->hosts[0];

    if (0 < problems) {
        fprintf(out, "tbrdma-doctor: %d problem%s on %d host%s: a full-mesh job cannot run yet\n",
                problems, (1 == problems) ? "" : "s", cl->nhosts, (1 == cl->nhosts) ? "" : "s");
        return;
    }
    fprintf(out,
            "tbrdma-doctor: ready: %d host%s, %d ports, %d cable%s, full mesh; Open MPI %s and "
            "tbrdma %s on every host\n",
            cl->nhosts, (1 == cl->nhosts) ? "" : "s", total_ports(cl), cl->ncables,
            (1 == cl->ncables) ? "" : "s", h0->ompi_version, h0->tbrdma_version);
}

void doc_report_text(doc_cluster_t *cl, int problems, int verbose, FILE *out)
{
    int k;

    sort_findings(cl);
    if (verbose) {
        print_verbose(cl, out);
        print_mesh(cl, out);
    }
    for (k = 0; k < cl->nfindings; k++) {
        fprintf(out, "%s\n", cl->findings[k].text);
    }
    print_summary(cl, problems, out);
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                       */

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; NULL != s && '\0' != *s; s++) {
        if ('"' == *s || '\\' == *s) {
            fprintf(out, "\\%c", *s);
        } else if (0x20 > (unsigned char) *s) {
            fprintf(out, "\\u%04x", (unsigned) (unsigned char) *s);
        } else {
            fputc(*s, out);
        }
    }
    fputc('"', out);
}

/* "key": "value" or "key": null for "". */
static void json_kv(FILE *out, const char *key, const char *value, int comma)
{
    json_str(out, key);
    fputs(": ", out);
    if (NULL == value || '\0' == value[0]) {
        fputs("null", out);
    } else {
        json_str(out, value);
    }
    fputs(comma ? ", " : "", out);
}

static void json_port(const doc_cluster_t *cl, const doc_port_t *p, FILE *out)
{
    char ip[32];

    ipv4_text(p, ip, sizeof(ip));
    fputs("{", out);
    json_kv(out, "device", p->info.device, 1);
    json_kv(out, "ifname", p->info.ifname, 1);
    json_kv(out, "state", state_name(p->info.state), 1);
    json_kv(out, "ipv4", (0 == strcmp(ip, "-")) ? "" : ip, 1);
    json_kv(out, "bridge", p->info.bridge, 1);
    json_kv(out, "diag", p->diag, 1);
    fputs("\"peer\": ", out);
    if (0 > p->peer_host) {
        fputs("null}", out);
        return;
    }
    fputs("{", out);
    json_kv(out, "host", doc_host_name(&cl->hosts[p->peer_host]), 1);
    json_kv(out, "device",
            (0 <= p->peer_port) ? cl->hosts[p->peer_host].ports[p->peer_port].info.device : "", 1);
    json_kv(out, "ifname", p->peer_ifname, 1);
    json_kv(out, "source", source_name(p->source), 0);
    fputs("}}", out);
}

static void json_host(const doc_cluster_t *cl, const doc_host_t *h, FILE *out)
{
    int k;

    fputs("    {", out);
    json_kv(out, "name", doc_host_name(h), 1);
    json_kv(out, "login", h->entry.login, 1);
    fprintf(out, "\"reached\": %s, ", h->probed ? "true" : "false");
    json_kv(out, "os", h->os, 1);
    json_kv(out, "ompi", h->ompi_version, 1);
    json_kv(out, "tbrdma", h->tbrdma_version, 1);
    fprintf(out, "\"component\": %s, ", h->component_found ? "true" : "false");
    fputs("\"ports\": [", out);
    for (k = 0; k < h->nports; k++) {
        fputs((0 == k) ? "" : ", ", out);
        json_port(cl, &h->ports[k], out);
    }
    fputs("]}", out);
}

static void json_finding(const doc_cluster_t *cl, const doc_finding_t *f, FILE *out)
{
    fputs("    {", out);
    json_kv(out, "check", f->check, 1);
    fprintf(out, "\"problem\": %s, ", f->problem ? "true" : "false");
    json_kv(out, "host", (0 <= f->host) ? doc_host_name(&cl->hosts[f->host]) : "", 1);
    json_kv(out, "device", f->device, 1);
    json_kv(out, "ifname", f->ifname, 1);
    json_kv(out, "text", f->text, 0);
    fputs("}", out);
}

static void json_cable(const doc_cluster_t *cl, const doc_cable_t *c, FILE *out)
{
    int s;

    fputs("    {", out);
    for (s = 0; s < 2; s++) {
        fprintf(out, "\"%s\": {", (0 == s) ? "a" : "b");
        json_kv(out, "host", doc_host_name(&cl->hosts[c->host[s]]), 1);
        json_kv(out, "device", cl->hosts[c->host[s]].ports[c->port[s]].info.device, 1);
        json_kv(out, "ifname", cl->hosts[c->host[s]].ports[c->port[s]].info.ifname, 0);
        fputs("}, ", out);
    }
    json_kv(out, "source", source_name(c->source), 0);
    fputs("}", out);
}

/* The host of the cluster a spec names (exact name, else unique short name), else as written. */
static const char *spec_host(const doc_cluster_t *cl, const tbrdma_hostlist_t *names,
                             const char *host)
{
    int i = tbrdma_hostlist_find(names, host);

    return (0 <= i) ? doc_host_name(&cl->hosts[i]) : host;
}

/* "mesh_file": the cables the mesh file names (as tbrdma reads it: ours or MLX's JSON), or null. */
static void json_mesh_file(const doc_cluster_t *cl, FILE *out)
{
    tbrdma_hostlist_t *names = calloc(1, sizeof(*names));
    const tbrdma_mesh_cable_t *c;
    int i, k, s;

    fputs("  \"mesh_file\": ", out);
    if (NULL == cl->spec || NULL == names) {
        fputs("null,\n", out);
        free(names);
        return;
    }
    names->nhosts = cl->nhosts;
    for (i = 0; i < cl->nhosts; i++) {
        snprintf(names->hosts[i].name, sizeof(names->hosts[i].name), "%s",
                 doc_host_name(&cl->hosts[i]));
    }
    fputs("{", out);
    json_kv(out, "path", cl->spec_path, 1);
    fputs("\"cables\": [\n", out);
    for (k = 0; k < cl->spec->ncables; k++) {
        c = &cl->spec->cables[k];
        fputs("    {", out);
        for (s = 0; s < 2; s++) {
            fprintf(out, "\"%s\": {", (0 == s) ? "a" : "b");
            json_kv(out, "host", spec_host(cl, names, c->host[s]), 1);
            json_kv(out, "device", c->device[s], 0);
            fputs((0 == s) ? "}, " : "}", out);
        }
        fputs((k + 1 < cl->spec->ncables) ? "},\n" : "}\n", out);
    }
    fputs("  ]},\n", out);
    free(names);
}

void doc_report_json(doc_cluster_t *cl, int problems, FILE *out)
{
    int k;

    sort_findings(cl);
    fprintf(out, "{\n  \"ready\": %s,\n  \"problems\": %d,\n  \"hosts\": [\n",
            (0 == problems) ? "true" : "false", problems);
    for (k = 0; k < cl->nhosts; k++) {
        json_host(cl, &cl->hosts[k], out);
        fputs((k + 1 < cl->nhosts) ? ",\n" : "\n", out);
    }
    fputs("  ],\n  \"cables\": [\n", out);
    for (k = 0; k < cl->ncables; k++) {
        json_cable(cl, &cl->cables[k], out);
        fputs((k + 1 < cl->ncables) ? ",\n" : "\n", out);
    }
    fputs("  ],\n", out);
    json_mesh_file(cl, out);
    fputs("  \"findings\": [\n", out);
    for (k = 0; k < cl->nfindings; k++) {
        json_finding(cl, &cl->findings[k], out);
        fputs((k + 1 < cl->nfindings) ? ",\n" : "\n", out);
    }
    fputs("  ]\n}\n", out);
}

/* ------------------------------------------------------------------------------------------ */
/* Files                                                                                      */

/* Writes what writer produces for (list, spec) to path. 0 or -errno. */
static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    int rc = 0;

    if (NULL == f) {
        return -errno;
    }
    if (EOF == fputs(text, f)) {
        rc = -errno;
    }
    if (0 != fclose(f) && 0 == rc) {
        rc = -errno;
    }
    return rc;
}

/*
 * The hosts as the files name them: login as given, name as the host calls itself, slots its
 * performance cores (as listed when its probe did not report them).
 */
static void cluster_hostlist(const doc_cluster_t *cl, tbrdma_hostlist_t *list)
{
    int i;

    list->nhosts = cl->nhosts;
    for (i = 0; i < cl->nhosts; i++) {
        list->hosts[i] = cl->hosts[i].entry;
        snprintf(list->hosts[i].name, sizeof(list->hosts[i].name), "%s",
                 doc_host_name(&cl->hosts[i]));
        if (0 < cl->hosts[i].perf_cores) {
            list->hosts[i].slots = cl->hosts[i].perf_cores;
        }
    }
}

/* Open MPI's hostfile after a comment saying where its slots come from (snprintf contract). */
static size_t ompi_hostfile_text(const tbrdma_hostlist_t *list, char *buf, size_t len)
{
    size_t n = strlen(DOC_SLOTS_COMMENT);

    if (n >= len) {
        return n + tbrdma_hostfile_write_ompi(list, NULL, 0);
    }
    memcpy(buf, DOC_SLOTS_COMMENT, n);
    return n + tbrdma_hostfile_write_ompi(list, buf + n, len - n);
}

int doc_write_files(const doc_cluster_t *cl, const doc_files_t *files)
{
    tbrdma_hostlist_t *list = calloc(1, sizeof(*list));
    tbrdma_mesh_spec_t *spec = calloc(1, sizeof(*spec));
    size_t n = 1 << 20;
    char *buf = malloc(n);
    int rc = 0;

    if (NULL == list || NULL == spec || NULL == buf) {
        rc = -ENOMEM;
        goto out_free;
    }
    cluster_hostlist(cl, list);
    doc_cables_spec(cl, spec);
    if (NULL != files->ompi_hostfile && n > ompi_hostfile_text(list, buf, n)) {
        rc = write_file(files->ompi_hostfile, buf);
    }
    if (0 == rc && NULL != files->mesh_file && n > tbrdma_hostfile_write_mesh(spec, buf, n)) {
        rc = write_file(files->mesh_file, buf);
    }
    if (0 == rc && NULL != files->mlx_hostfile
        && n > tbrdma_hostfile_write_mlx(list, spec, files->mlx_backend, buf, n)) {
        rc = write_file(files->mlx_hostfile, buf);
    }
out_free:
    free(buf);
    free(spec);
    free(list);
    return rc;
}
