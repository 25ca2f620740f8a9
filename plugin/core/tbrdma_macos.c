/*
 * Readers of macOS tool output (see tbrdma_macos.h). The line-based readers share one walker
 * (macos_lines) that hands each line, without its end-of-line characters, to a callback; the
 * JSON reader is core's strict one (tbrdma_json.h). Every reader tolerates CRLF, leading blank
 * lines and fields it does not know; a value that does not fit its buffer is cut, never
 * overflowed.
 */
#include "tbrdma_macos.h"
#include "tbrdma_fmt.h"
#include "tbrdma_gid.h"
#include "tbrdma_json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MACOS_LINE_MAX 512

/* Copies at most len - 1 bytes of s (n long) and terminates. */
static void macos_copy(char *dst, size_t len, const char *s, size_t n)
{
    if (n >= len) {
        n = len - 1;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Calls fn(line, arg) for every line of text, without "\r\n"; lines are cut at 511 bytes. */
static void macos_lines(const char *text, void (*fn)(const char *line, void *arg), void *arg)
{
    char line[MACOS_LINE_MAX];
    const char *p = text, *eol;
    size_t n;

    while (NULL != p && '\0' != *p) {
        eol = strchr(p, '\n');
        n = (NULL != eol) ? (size_t) (eol - p) : strlen(p);
        while (0 < n && '\r' == p[n - 1]) {
            n--;
        }
        macos_copy(line, sizeof(line), p, n);
        fn(line, arg);
        p = (NULL != eol) ? eol + 1 : NULL;
    }
}

/* The value after "key" at the start of line ("Device: en2" -> "en2"), or NULL. */
static const char *macos_value(const char *line, const char *key)
{
    size_t n = strlen(key);

    if (0 != strncmp(line, key, n)) {
        return NULL;
    }
    line += n;
    while (' ' == *line || '\t' == *line) {
        line++;
    }
    return line;
}

/* ------------------------------------------------------------------------------------------ */
/* system_profiler -json SPThunderboltDataType                                                */

/* "80 Gb/s", "Up to 120 Gb/s", "Up to 40 Gb/s x2": the number of Gb/s, and whether "Up to". */
static void tb_speed(const char *text, tbrdma_tb_bus_t *bus)
{
    const char *p = text;

    bus->speed_gbps = 0;
    bus->speed_is_max = 0;
    if (NULL == text) {
        return;
    }
    if (0 == strncmp(p, "Up to ", 6)) {
        bus->speed_is_max = 1;
        p += 6;
    }
    if (isdigit((unsigned char) *p) && NULL != strstr(p, "Gb/s")) {
        bus->speed_gbps = atoi(p);
    }
}

static void tb_copy_string(const tbrdma_json_doc_t *doc, int node, char *dst, size_t len)
{
    const char *s = tbrdma_json_string(doc, node);

    macos_copy(dst, len, (NULL != s) ? s : "", (NULL != s) ? strlen(s) : 0);
}

/* The first item under the bus with a domain UUID: the Mac at the other end. */
static void tb_peer(const tbrdma_json_doc_t *doc, int busnode, tbrdma_tb_bus_t *bus)
{
    int item, uuid;

    for (item = tbrdma_json_first(doc, tbrdma_json_member(doc, busnode, "_items")); 0 <= item;
         item = tbrdma_json_next(doc, item)) {
        uuid = tbrdma_json_member(doc, item, "domain_uuid_key");
        if (NULL != tbrdma_json_string(doc, uuid)) {
            tb_copy_string(doc, uuid, bus->peer_uuid, sizeof(bus->peer_uuid));
            tb_copy_string(doc, tbrdma_json_member(doc, item, "_name"), bus->peer_name,
                           sizeof(bus->peer_name));
            return;
        }
    }
}

static void tb_bus(const tbrdma_json_doc_t *doc, int node, tbrdma_tb_bus_t *bus)
{
    int tag = tbrdma_json_member(doc, node, "receptacle_1_tag");
    const char *id = tbrdma_json_string(doc, tbrdma_json_member(doc, tag, "receptacle_id_key"));
    const char *status =
        tbrdma_json_string(doc, tbrdma_json_member(doc, tag, "receptacle_status_key"));

    memset(bus, 0, sizeof(*bus));
    tb_copy_string(doc, tbrdma_json_member(doc, node, "_name"), bus->name, sizeof(bus->name));
    tb_copy_string(doc, tbrdma_json_member(doc, node, "domain_uuid_key"), bus->domain_uuid,
                   sizeof(bus->domain_uuid));
    bus->receptacle = (NULL != id) ? atoi(id) : 0;
    bus->connected = (NULL != status && 0 == strcmp(status, "receptacle_connected"));
    tb_speed(tbrdma_json_string(doc, tbrdma_json_member(doc, tag, "current_speed_key")), bus);
    tb_peer(doc, node, bus);
}

int tbrdma_macos_tb_buses(const char *json, tbrdma_tb_bus_t *buses, int max, char *err,
                          size_t errlen)
{
    tbrdma_json_doc_t *doc = NULL;
    tbrdma_fmt_t fmt;
    char why[256];
    int list, node, n = 0;

    tbrdma_fmt_init(&fmt, err, errlen);
    if (0 != tbrdma_json_parse(json, &doc, why, sizeof(why))) {
        tbrdma_fmt_add(&fmt, "system_profiler output: %s", why);
        return -EINVAL;
    }
    list = tbrdma_json_member(doc, tbrdma_json_root(doc), "SPThunderboltDataType");
    if (TBRDMA_JSON_ARRAY != tbrdma_json_kind(doc, list)) {
        tbrdma_fmt_add(&fmt, "system_profiler output: no SPThunderboltDataType array");
        tbrdma_json_free(doc);
        return -EINVAL;
    }
    for (node = tbrdma_json_first(doc, list); 0 <= node && n < max;
         node = tbrdma_json_next(doc, node)) {
        tb_bus(doc, node, &buses[n++]);
    }
    tbrdma_json_free(doc);
    return n;
}

int tbrdma_macos_tb_generation(const tbrdma_tb_bus_t *bus)
{
    if (0 >= bus->speed_gbps) {
        return 0;
    }
    return (80 <= bus->speed_gbps) ? 5 : 4;
}

/* ------------------------------------------------------------------------------------------ */
/* networksetup -listallhardwareports                                                         */

typedef struct hwport_walk {
    tbrdma_hwport_t *ports;
    int max, n;
} hwport_walk_t;

static void hwport_line(const char *line, void *arg)
{
    hwport_walk_t *w = arg;
    tbrdma_hwport_t *cur = (0 < w->n) ? &w->ports[w->n - 1] : NULL;
    const char *v;

    if (NULL != (v = macos_value(line, "Hardware Port:")) && w->n < w->max) {
        cur = &w->ports[w->n++];
        memset(cur, 0, sizeof(*cur));
        macos_copy(cur->port, sizeof(cur->port), v, strlen(v));
    } else if (NULL != cur && NULL != (v = macos_value(line, "Device:"))) {
        macos_copy(cur->device, sizeof(cur->device), v, strlen(v));
    } else if (NULL != cur && NULL != (v = macos_value(line, "Ethernet Address:"))
               && 0 != strcmp(v, "N/A")) {
        macos_copy(cur->mac, sizeof(cur->mac), v, strlen(v));
    }
}

int tbrdma_macos_hwports(const char *text, tbrdma_hwport_t *ports, int max)
{
    hwport_walk_t w = {ports, max, 0};

    macos_lines(text, hwport_line, &w);
    return w.n;
}

int tbrdma_macos_hwport_receptacle(const char *port)
{
    const char *v = macos_value(port, "Thunderbolt");
    char *end;
    long n;

    if (NULL == v || v == port + strlen("Thunderbolt") || !isdigit((unsigned char) *v)) {
        return 0;
    }
    n = strtol(v, &end, 10);
    return ('\0' == *end && 0 < n && 1000 > n) ? (int) n : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* networksetup -listnetworkserviceorder                                                      */

typedef struct svc_walk {
    tbrdma_netservice_t *svcs;
    int max, n;
} svc_walk_t;

/* "(Hardware Port: Thunderbolt 1, Device: en2)" for the service just read. */
static void svc_port_line(const char *line, tbrdma_netservice_t *svc)
{
    const char *port = strstr(line, "Hardware Port: "), *dev = strstr(line, ", Device: ");
    size_t n;

    if (NULL == port || NULL == dev || dev < port) {
        return;
    }
    port += strlen("Hardware Port: ");
    macos_copy(svc->port, sizeof(svc->port), port, (size_t) (dev - port));
    dev += strlen(", Device: ");
    n = strcspn(dev, ")");
    macos_copy(svc->device, sizeof(svc->device), dev, n);
}

/* "(3) " or "(*) " opens a service entry. */
static int svc_is_header(const char *line, const char *close)
{
    const char *p;

    if (' ' != close[1]) {
        return 0;
    }
    if (line + 2 == close && '*' == line[1]) {
        return 1;
    }
    for (p = line + 1; p < close; p++) {
        if (!isdigit((unsigned char) *p)) {
            return 0;
        }
    }
    return p > line + 1;
}

static void svc_line(const char *line, void *arg)
{
    svc_walk_t *w = arg;
    const char *close = strchr(line, ')');
    tbrdma_netservice_t *svc;

    if ('(' != line[0] || NULL == close) {
        return;
    }
    if (0 == strncmp(line, "(Hardware Port:", 15)) {
        if (0 < w->n) {
            svc_port_line(line, &w->svcs[w->n - 1]);
        }
        return;
    }
    if (w->n >= w->max || !svc_is_header(line, close)) {
        return;
    }
    svc = &w->svcs[w->n++];
    memset(svc, 0, sizeof(*svc));
    svc->enabled = ('*' != line[1]);
    macos_copy(svc->name, sizeof(svc->name), close + 2, strlen(close + 2));
}

int tbrdma_macos_services(const char *text, tbrdma_netservice_t *svcs, int max)
{
    svc_walk_t w = {svcs, max, 0};

    macos_lines(text, svc_line, &w);
    return w.n;
}

/* ------------------------------------------------------------------------------------------ */
/* networksetup -getinfo SERVICE                                                              */

/* Prefix length of a contiguous netmask, -1 otherwise. */
static int mask_prefix(uint32_t mask)
{
    int prefix = 0;

    while (prefix < 32 && (mask & (0x80000000u >> prefix))) {
        prefix++;
    }
    return (mask == ((0 == prefix) ? 0 : ~(0xffffffffu >> prefix))) ? prefix : -1;
}

typedef struct info_walk {
    tbrdma_svcinfo_t *info;
    int seen; /* a configuration line was read */
} info_walk_t;

static void info_line(const char *line, void *arg)
{
    info_walk_t *w = arg;
    uint32_t mask;
    const char *v;

    if (0 == strcmp(line, "Manual Configuration")) {
        w->info->config = TBRDMA_SVC_MANUAL;
        w->seen = 1;
    } else if (0 == strcmp(line, "DHCP Configuration")) {
        w->info->config = TBRDMA_SVC_DHCP;
        w->seen = 1;
    } else if (NULL != strstr(line, " Configuration") && !w->seen) {
        w->info->config = TBRDMA_SVC_OTHER;
        w->seen = 1;
    } else if (NULL != (v = macos_value(line, "IP address:"))) {
        w->info->has_ipv4 = (0 == tbrdma_ipv4_parse(v, &w->info->ipv4, NULL));
    } else if (NULL != (v = macos_value(line, "Subnet mask:"))
               && 0 == tbrdma_ipv4_parse(v, &mask, NULL)) {
        w->info->prefix = mask_prefix(mask);
    }
}

int tbrdma_macos_getinfo(const char *text, tbrdma_svcinfo_t *info_p)
{
    tbrdma_svcinfo_t info;
    info_walk_t w = {&info, 0};

    memset(&info, 0, sizeof(info));
    info.prefix = -1;
    macos_lines(text, info_line, &w);
    if (!w.seen) {
        return -EINVAL;
    }
    *info_p = info;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* socketfilterfw --getglobalstate                                                            */

int tbrdma_macos_firewall_state(const char *text)
{
    const char *p = (NULL != text) ? strstr(text, "(State = ") : NULL;

    if (NULL == p || !isdigit((unsigned char) p[9]) || ')' != p[10]) {
        return -1;
    }
    return p[9] - '0';
}
