/*
 * Reads one host's probe output (tools/tbrdma-probe, format in tools/README.md) into a
 * doc_host_t. Records are "KIND key=value ..." lines; command outputs come as begin/end blocks
 * whose lines start with "| ", handed whole to the reader of that command (tbrdma-info's
 * --parsable records here, the macOS readers of core/tbrdma_macos.c). Unknown records and
 * fields are skipped, so a newer probe still reads.
 */
#include "doctor.h"

#include "core/tbrdma_gid.h"

#include <stdlib.h>
#include <string.h>

#define PROBE_BLOCK_MAX (1024 * 1024)

/* The value of key=... in a record line (to the next blank; "text" runs to the line's end). */
static int kv(const char *line, const char *key, char *buf, size_t len)
{
    size_t klen = strlen(key), n;
    const char *p = line;

    while (NULL != (p = strstr(p, key))) {
        if ((p == line || ' ' == p[-1]) && '=' == p[klen]) {
            p += klen + 1;
            n = strcspn(p, (0 == strcmp(key, "text")) ? "\n" : " \n");
            if (n >= len) {
                n = len - 1;
            }
            memcpy(buf, p, n);
            buf[n] = '\0';
            return 0;
        }
        p += klen;
    }
    buf[0] = '\0';
    return -1;
}

static int kv_int(const char *line, const char *key, int dflt)
{
    char v[32];

    return (0 == kv(line, key, v, sizeof(v)) && '\0' != v[0] && '-' != v[0]) ? atoi(v) : dflt;
}

/* The port whose device (ifname NULL) or interface (device NULL) is the one named, or NULL. */
static doc_port_t *port_find(doc_host_t *h, const char *device, const char *ifname)
{
    int i;

    for (i = 0; i < h->nports; i++) {
        if (0
            == strcmp((NULL != device) ? h->ports[i].info.device : h->ports[i].info.ifname,
                      (NULL != device) ? device : ifname)) {
            return &h->ports[i];
        }
    }
    return NULL;
}

static int state_value(const char *name)
{
    static const char *const names[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
    int i;

    for (i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++) {
        if (0 == strcmp(names[i], name)) {
            return i;
        }
    }
    return 0;
}

/* "port host=H device=D port=N state=S ... ifname=I ipv4=A/P bridge=B gid_index=G diag=X". */
static void info_port(doc_host_t *h, const char *line)
{
    doc_port_t *p;
    char v[TBRDMA_NAME_MAX];

    if (TBRDMA_MAX_PORTS <= h->nports) {
        return;
    }
    p = &h->ports[h->nports++];
    memset(p, 0, sizeof(*p));
    p->bus = p->service = p->peer_host = p->peer_port = -1;
    kv(line, "host", h->hostname, sizeof(h->hostname));
    kv(line, "device", p->info.device, sizeof(p->info.device));
    p->info.port_num = kv_int(line, "port", 1);
    kv(line, "state", v, sizeof(v));
    p->info.state = state_value(v);
    p->info.link_layer = TBRDMA_LINK_LAYER_THUNDERBOLT;
    kv(line, "ifname", v, sizeof(v));
    snprintf(p->info.ifname, sizeof(p->info.ifname), "%s", (0 == strcmp(v, "-")) ? "" : v);
    kv(line, "ipv4", v, sizeof(v));
    p->info.has_ipv4 = (0 == tbrdma_ipv4_parse(v, &p->info.ipv4, &p->info.prefix));
    kv(line, "bridge", v, sizeof(v));
    snprintf(p->info.bridge, sizeof(p->info.bridge), "%s", (0 == strcmp(v, "-")) ? "" : v);
    p->info.gid_index = kv_int(line, "gid_index", -1);
    kv(line, "diag", p->diag, sizeof(p->diag));
    kv(line, "if_up", v, sizeof(v));
    p->info.if_up = (0 == strcmp(v, "yes"));
    p->info.active_mtu = 3; /* 1024, what Apple reports; the solver does not use it */
}

/* "gid ... device=D index=I gid=G": fills the port's table. */
static void info_gid(doc_host_t *h, const char *line)
{
    char dev[TBRDMA_NAME_MAX], text[64];
    doc_port_t *p;
    int idx = kv_int(line, "index", -1);

    kv(line, "device", dev, sizeof(dev));
    kv(line, "gid", text, sizeof(text));
    p = port_find(h, dev, NULL);
    if (NULL == p || 0 > idx || TBRDMA_GID_TBL_MAX <= idx
        || 0 != tbrdma_gid_parse(text, &p->info.gids[idx])) {
        return;
    }
    if (p->info.gid_count <= idx) {
        p->info.gid_count = idx + 1;
    }
}

/* "diag ... device=D name=N text=T": a port's message, or a host's (device=-). */
static void info_diag(doc_host_t *h, const char *line)
{
    char dev[TBRDMA_NAME_MAX];
    doc_port_t *p;

    kv(line, "device", dev, sizeof(dev));
    kv(line, "host", h->hostname, sizeof(h->hostname));
    if (0 == strcmp(dev, "-")) {
        kv(line, "name", h->host_diag, sizeof(h->host_diag));
        kv(line, "text", h->host_diag_text, sizeof(h->host_diag_text));
        return;
    }
    p = port_find(h, dev, NULL);
    if (NULL != p) {
        kv(line, "text", p->diag_text, sizeof(p->diag_text));
    }
}

/* "held ... device=D qps=N text=T": queue pairs of the port dead tbrdma processes hold. */
static void info_held(doc_host_t *h, const char *line)
{
    char dev[TBRDMA_NAME_MAX];
    doc_port_t *p;

    kv(line, "device", dev, sizeof(dev));
    p = port_find(h, dev, NULL);
    if (NULL != p) {
        p->held_qps = kv_int(line, "qps", 0);
        kv(line, "text", p->held_text, sizeof(p->held_text));
    }
}

static void block_info(doc_host_t *h, const char *text)
{
    const char *line = text;

    while (NULL != line && '\0' != *line) {
        if (0 == strncmp(line, "port ", 5)) {
            info_port(h, line);
        } else if (0 == strncmp(line, "gid ", 4)) {
            info_gid(h, line);
        } else if (0 == strncmp(line, "diag ", 5)) {
            info_diag(h, line);
        } else if (0 == strncmp(line, "held ", 5)) {
            info_held(h, line);
        }
        line = strchr(line, '\n');
        line = (NULL != line) ? line + 1 : NULL;
    }
}

/* "tbrdma-info (tbrdma) 0.1.0, built for Open MPI 4.1.4". */
static void block_info_version(doc_host_t *h, const char *text)
{
    const char *v = strstr(text, "(tbrdma) "), *b = strstr(text, "built for Open MPI ");

    if (NULL != v) {
        sscanf(v + 9, "%31[0-9A-Za-z.~+-]", h->tbrdma_version);
    }
    if (NULL != b) {
        sscanf(b + 19, "%31[0-9A-Za-z.~+-]", h->tbrdma_built_for);
    }
}

/* ompi_info --parsable lines: the version and the tbrdma component's. */
static void block_ompi(doc_host_t *h, const char *text)
{
    const char *v = strstr(text, "ompi:version:full:");
    const char *c = strstr(text, "mca:btl:tbrdma:version:\"component:");

    if (NULL != v) {
        sscanf(v + 18, "%31[0-9A-Za-z.~+-]", h->ompi_version);
    }
    h->component_found = (NULL != c);
    if (NULL != c) {
        sscanf(c + 34, "%31[0-9A-Za-z.~+-]", h->component_version);
    }
}

/* ...:mca_base_component_path:value:"DIR:DIR" */
static void block_component_path(doc_host_t *h, const char *text)
{
    const char *v = strstr(text, "component_path:value:\"");
    size_t n;

    if (NULL == v) {
        return;
    }
    v += strlen("component_path:value:\"");
    n = strcspn(v, "\"\n");
    snprintf(h->component_path, sizeof(h->component_path), "%.*s", (int) n, v);
}

/* The service whose -getinfo this is: "getinfo:NAME". */
static void block_getinfo(doc_host_t *h, const char *name, const char *text)
{
    int i;

    for (i = 0; i < h->nservices; i++) {
        if (0 == strcmp(h->services[i].svc.name, name)) {
            h->services[i].has_info = (0 == tbrdma_macos_getinfo(text, &h->services[i].info));
            return;
        }
    }
}

static void block_services(doc_host_t *h, const char *text)
{
    tbrdma_netservice_t svcs[DOC_SVC_MAX];
    int i, n = tbrdma_macos_services(text, svcs, DOC_SVC_MAX);

    for (i = 0; i < n; i++) {
        memset(&h->services[i], 0, sizeof(h->services[i]));
        h->services[i].svc = svcs[i];
    }
    h->nservices = n;
}

/* Hands a finished block to its reader. */
static void block_done(doc_host_t *h, const char *name, const char *path, int status,
                       const char *text)
{
    char err[256];
    int n;

    if (0 == strcmp(name, "tbrdma-info")) {
        snprintf(h->info_path, sizeof(h->info_path), "%s", (0 == strcmp(path, "-")) ? "" : path);
        h->info_status = status;
        block_info(h, text);
    } else if (0 == strcmp(name, "tbrdma-info-version")) {
        block_info_version(h, text);
    } else if (0 == strcmp(name, "ompi_info")) {
        snprintf(h->ompi_path, sizeof(h->ompi_path), "%s", (0 == strcmp(path, "-")) ? "" : path);
        block_ompi(h, text);
    } else if (0 == strcmp(name, "ompi_info-component-path")) {
        block_component_path(h, text);
    } else if (0 == strcmp(name, "system_profiler") && 0 == status) {
        n = tbrdma_macos_tb_buses(text, h->buses, DOC_BUS_MAX, err, sizeof(err));
        h->nbuses = (0 < n) ? n : 0;
    } else if (0 == strcmp(name, "hardwareports") && 0 == status) {
        h->nhwports = tbrdma_macos_hwports(text, h->hwports, DOC_HWPORT_MAX);
    } else if (0 == strcmp(name, "serviceorder") && 0 == status) {
        block_services(h, text);
    } else if (0 == strncmp(name, "getinfo:", 8) && 0 == status) {
        block_getinfo(h, name + 8, text);
    } else if (0 == strcmp(name, "firewall") && 0 == status) {
        h->firewall = tbrdma_macos_firewall_state(text);
    }
}

/*
 * "cores perf=N total=M source=S": the host's performance cores and all its cores ("-" or
 * absent: 0, unknown).
 */
static void record_cores(doc_host_t *h, const char *line)
{
    h->perf_cores = kv_int(line, "perf", 0);
    h->total_cores = kv_int(line, "total", 0);
    kv(line, "source", h->cores_source, sizeof(h->cores_source));
}

/* A record outside blocks (an older probe prints fewer kinds, a newer one more: skipped). */
static void record(doc_host_t *h, const char *line)
{
    char ifn[TBRDMA_NAME_MAX], addr[DOC_ADDR_MAX], v[16];
    doc_port_t *p;

    if (0 == strncmp(line, "probe ", 6)) {
        kv(line, "os", h->os, sizeof(h->os));
        kv(line, "fake_macos", v, sizeof(v));
        h->fake_macos = (0 == strcmp(v, "yes"));
        if ('\0' == h->hostname[0]) {
            kv(line, "host", h->hostname, sizeof(h->hostname));
        }
    } else if (0 == strncmp(line, "lladdr ", 7) && h->nll < DOC_LLADDR_MAX) {
        kv(line, "ifname", h->ll[h->nll].ifname, sizeof(h->ll[0].ifname));
        kv(line, "addr", h->ll[h->nll].addr, sizeof(h->ll[0].addr));
        p = port_find(h, NULL, h->ll[h->nll].ifname);
        if (NULL != p) {
            memcpy(p->lladdr, h->ll[h->nll].addr, sizeof(p->lladdr));
        }
        h->nll++;
    } else if (0 == strncmp(line, "neighbor ", 9)) {
        kv(line, "ifname", ifn, sizeof(ifn));
        kv(line, "addr", addr, sizeof(addr));
        p = port_find(h, NULL, ifn);
        if (NULL != p && DOC_NEIGH_MAX > p->nneigh) {
            snprintf(p->neigh[p->nneigh++], DOC_ADDR_MAX, "%s", addr);
        }
    } else if (0 == strncmp(line, "mgmt ", 5)) {
        kv(line, "ipv4", h->entry.ipv4, sizeof(h->entry.ipv4));
    } else if (0 == strncmp(line, "cores ", 6)) {
        record_cores(h, line);
    } else if (0 == strncmp(line, "file name=exo-daemon ", 21)) {
        kv(line, "exists", v, sizeof(v));
        h->exo_daemon = (0 == strcmp(v, "yes"));
    } else if (0 == strcmp(line, "done")) {
        h->probed = 1;
    }
}

/* State of the block being read. */
typedef struct probe_block {
    char name[TBRDMA_MACOS_TEXT_MAX + 16];
    char path[DOC_PATH_MAX];
    char *text;
    size_t used;
    int open;
} probe_block_t;

static void block_line(probe_block_t *b, const char *line, size_t n)
{
    if (b->used + n + 2 >= PROBE_BLOCK_MAX) {
        return;
    }
    memcpy(b->text + b->used, line, n);
    b->used += n;
    b->text[b->used++] = '\n';
    b->text[b->used] = '\0';
}

/* One line of output, without its newline. */
static void probe_line(doc_host_t *h, probe_block_t *b, const char *line)
{
    if (b->open && 0 == strncmp(line, "| ", 2)) {
        block_line(b, line + 2, strlen(line + 2));
    } else if (b->open && 0 == strcmp(line, "|")) {
        block_line(b, "", 0);
    } else if (0 == strncmp(line, "begin ", 6)) {
        kv(line, "name", b->name, sizeof(b->name));
        /* a name may hold blanks (a service): it runs up to " path=" */
        if (NULL != strstr(line, " path=")) {
            snprintf(b->name, sizeof(b->name), "%.*s", (int) (strstr(line, " path=") - line - 11),
                     line + 11);
        }
        kv(line, "path", b->path, sizeof(b->path));
        b->used = 0;
        b->text[0] = '\0';
        b->open = 1;
    } else if (b->open && 0 == strncmp(line, "end ", 4)) {
        b->open = 0;
        block_done(h, b->name, b->path, kv_int(line, "status", -1), b->text);
    } else {
        record(h, line);
    }
}

/* Keeps the end of what the host printed (for the message when the probe did not finish). */
static void keep_tail(doc_host_t *h, const char *output)
{
    size_t n = strlen(output), keep = sizeof(h->output_tail) - 1;

    snprintf(h->output_tail, sizeof(h->output_tail), "%s", output + ((n > keep) ? n - keep : 0));
}

void doc_probe_parse(const char *text, doc_host_t *host)
{
    probe_block_t b;
    char *line = malloc(PROBE_BLOCK_MAX);
    const char *p = text, *eol;
    size_t n;

    memset(&b, 0, sizeof(b));
    b.text = malloc(PROBE_BLOCK_MAX);
    host->firewall = -1;
    host->info_status = 127;
    if (NULL == line || NULL == b.text) {
        free(line);
        free(b.text);
        return;
    }
    b.text[0] = '\0';
    while (NULL != p && '\0' != *p) {
        eol = strchr(p, '\n');
        n = (NULL != eol) ? (size_t) (eol - p) : strlen(p);
        n = (n < PROBE_BLOCK_MAX - 1) ? n : PROBE_BLOCK_MAX - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        probe_line(host, &b, line);
        p = (NULL != eol) ? eol + 1 : NULL;
    }
    host->macos = (0 < host->nbuses || 0 < host->nhwports || 0 <= host->firewall);
    keep_tail(host, text);
    free(line);
    free(b.text);
}
