/*
 * The modex blob codec: encodes what a process publishes about its usable ports and decodes
 * what its peers published. The layout (docs/wire-format.md) is big-endian, versioned and
 * length-prefixed at every level. The decoder treats its input as hostile: every read is
 * checked against the buffer and the declared lengths, and *m_p is written only on success.
 */
#include "tbrdma_modex.h"

#include <errno.h>
#include <string.h>

#define MODEX_FIXED_LEN  12 /* magic u32, version u16, header length u16, total length u32 */
#define MODEX_PORT_FIXED 29 /* record len u16, dev len u8, gid 16, idx u16, ipv4 u32, 1+1+2 */
#define MODEX_U16_MAX    65535
#define MODEX_U8_MAX     255
#define MODEX_PREFIX_MAX 32

/* A bounded read cursor: pos never passes end; failed reads set bad. */
typedef struct modex_cursor {
    const uint8_t *buf;
    size_t pos;
    size_t end;
    int bad;
} modex_cursor_t;

/* A bounded write cursor over a buffer known to be large enough. */
typedef struct modex_writer {
    uint8_t *buf;
    size_t pos;
} modex_writer_t;

static void put_u8(modex_writer_t *w, unsigned v)
{
    w->buf[w->pos++] = (uint8_t) v;
}

static void put_u16(modex_writer_t *w, unsigned v)
{
    put_u8(w, (v >> 8) & 0xff);
    put_u8(w, v & 0xff);
}

static void put_u32(modex_writer_t *w, uint32_t v)
{
    put_u16(w, (unsigned) (v >> 16));
    put_u16(w, (unsigned) (v & 0xffff));
}

static void put_bytes(modex_writer_t *w, const void *p, size_t n)
{
    memcpy(w->buf + w->pos, p, n);
    w->pos += n;
}

/* Advances over n bytes, returning where they start, or NULL (and bad) when they don't fit. */
static const uint8_t *get_bytes(modex_cursor_t *c, size_t n)
{
    const uint8_t *p;

    if (c->bad || n > c->end - c->pos) {
        c->bad = 1;
        return NULL;
    }
    p = c->buf + c->pos;
    c->pos += n;
    return p;
}

static uint32_t get_be(modex_cursor_t *c, size_t n)
{
    const uint8_t *p = get_bytes(c, n);
    uint32_t v = 0;
    size_t i;

    if (NULL == p) {
        return 0;
    }
    for (i = 0; i < n; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* A u8-length-prefixed name into dst (size max): non-empty, shorter than max, no NUL inside. */
static void get_name(modex_cursor_t *c, char *dst, size_t max)
{
    size_t n = get_be(c, 1);
    const uint8_t *p;

    if (0 == n || n >= max) {
        c->bad = 1;
        return;
    }
    p = get_bytes(c, n);
    if (NULL == p || NULL != memchr(p, '\0', n)) {
        c->bad = 1;
        return;
    }
    memcpy(dst, p, n);
    dst[n] = '\0';
}

void tbrdma_modex_port_from_info(const tbrdma_port_info_t *info, tbrdma_modex_port_t *port_p)
{
    memset(port_p, 0, sizeof(*port_p));
    memcpy(port_p->device, info->device, sizeof(port_p->device));
    port_p->device[sizeof(port_p->device) - 1] = '\0';
    if (0 <= info->gid_index && info->gid_index < TBRDMA_GID_TBL_MAX) {
        port_p->gid = info->gids[info->gid_index];
    }
    port_p->gid_index = info->gid_index;
    port_p->ipv4 = info->ipv4;
    port_p->prefix = info->prefix;
    port_p->active_mtu = info->active_mtu;
    port_p->link_layer = info->link_layer;
}

static size_t modex_header_size(const tbrdma_modex_t *m)
{
    return MODEX_FIXED_LEN + 1 + strlen(m->host) + 1 + 2; /* host, nports, bulk_frames */
}

static size_t modex_port_size(const tbrdma_modex_port_t *port)
{
    return MODEX_PORT_FIXED + strlen(port->device);
}

size_t tbrdma_modex_encoded_size(const tbrdma_modex_t *m)
{
    size_t size = modex_header_size(m);
    int i;

    for (i = 0; i < m->nports && i < TBRDMA_MAX_PORTS; i++) {
        size += modex_port_size(&m->ports[i]);
    }
    return size;
}

/* 1 when two ports share a device name: the mesh names ports by (host, device). */
static int modex_has_duplicate(const tbrdma_modex_t *m)
{
    int i, j;

    for (i = 0; i < m->nports; i++) {
        for (j = 0; j < i; j++) {
            if (0 == strcmp(m->ports[i].device, m->ports[j].device)) {
                return 1;
            }
        }
    }
    return 0;
}

static int modex_port_valid(const tbrdma_modex_port_t *port)
{
    size_t n = strnlen(port->device, TBRDMA_NAME_MAX);

    return 0 < n && TBRDMA_NAME_MAX > n && 0 <= port->gid_index && MODEX_U16_MAX >= port->gid_index
           && 0 <= port->prefix && MODEX_PREFIX_MAX >= port->prefix && 0 <= port->active_mtu
           && MODEX_U8_MAX >= port->active_mtu && 0 <= port->link_layer
           && MODEX_U16_MAX >= port->link_layer;
}

static int modex_valid(const tbrdma_modex_t *m)
{
    size_t n = strnlen(m->host, TBRDMA_HOST_MAX);
    int i;

    if (0 == n || TBRDMA_HOST_MAX <= n || 0 > m->nports || TBRDMA_MAX_PORTS < m->nports
        || 0 > m->bulk_frames || MODEX_U16_MAX < m->bulk_frames) {
        return 0;
    }
    for (i = 0; i < m->nports; i++) {
        if (!modex_port_valid(&m->ports[i])) {
            return 0;
        }
    }
    return !modex_has_duplicate(m);
}

static void modex_put_port(modex_writer_t *w, const tbrdma_modex_port_t *port)
{
    size_t n = strlen(port->device);

    put_u16(w, (unsigned) modex_port_size(port));
    put_u8(w, (unsigned) n);
    put_bytes(w, port->device, n);
    put_bytes(w, port->gid.raw, sizeof(port->gid.raw));
    put_u16(w, (unsigned) port->gid_index);
    put_u32(w, port->ipv4);
    put_u8(w, (unsigned) port->prefix);
    put_u8(w, (unsigned) port->active_mtu);
    put_u16(w, (unsigned) port->link_layer);
}

int tbrdma_modex_encode(const tbrdma_modex_t *m, void *buf, size_t len, size_t *used_p)
{
    modex_writer_t w = {buf, 0};
    size_t total;
    int i;

    if (!modex_valid(m)) {
        return -EINVAL;
    }
    total = tbrdma_modex_encoded_size(m);
    if (NULL == buf || len < total) {
        return -ENOSPC;
    }
    put_u32(&w, TBRDMA_MODEX_MAGIC);
    put_u16(&w, TBRDMA_MODEX_VERSION);
    put_u16(&w, (unsigned) modex_header_size(m));
    put_u32(&w, (uint32_t) total);
    put_u8(&w, (unsigned) strlen(m->host));
    put_bytes(&w, m->host, strlen(m->host));
    put_u8(&w, (unsigned) m->nports);
    put_u16(&w, (unsigned) m->bulk_frames);
    for (i = 0; i < m->nports; i++) {
        modex_put_port(&w, &m->ports[i]);
    }
    if (NULL != used_p) {
        *used_p = w.pos;
    }
    return 0;
}

/*
 * One port record. Version 2 requires the record length to match its fields exactly (a later
 * version may append fields; its decoder uses the length to read older, shorter records).
 */
static void modex_get_port(modex_cursor_t *c, tbrdma_modex_port_t *port)
{
    size_t start = c->pos, reclen = get_be(c, 2);
    const uint8_t *gid;

    if (c->bad || reclen < MODEX_PORT_FIXED || reclen > c->end - start) {
        c->bad = 1;
        return;
    }
    get_name(c, port->device, sizeof(port->device));
    gid = get_bytes(c, sizeof(port->gid.raw));
    if (NULL != gid) {
        memcpy(port->gid.raw, gid, sizeof(port->gid.raw));
    }
    port->gid_index = (int) get_be(c, 2);
    port->ipv4 = get_be(c, 4);
    port->prefix = (int) get_be(c, 1);
    port->active_mtu = (int) get_be(c, 1);
    port->link_layer = (int) get_be(c, 2);
    if (c->bad || MODEX_PREFIX_MAX < port->prefix || c->pos - start != reclen) {
        c->bad = 1;
    }
}

/* Host and ports, after the fixed part; version 2 requires the header length to match exactly. */
static int modex_get_body(modex_cursor_t *c, size_t hdrlen, tbrdma_modex_t *m)
{
    int i;

    get_name(c, m->host, sizeof(m->host));
    m->nports = (int) get_be(c, 1);
    m->bulk_frames = (int) get_be(c, 2);
    if (c->bad || TBRDMA_MAX_PORTS < m->nports || c->pos != hdrlen) {
        return -EBADMSG;
    }
    for (i = 0; i < m->nports; i++) {
        modex_get_port(c, &m->ports[i]);
    }
    if (c->bad || c->pos != c->end || modex_has_duplicate(m)) {
        return -EBADMSG;
    }
    return 0;
}

int tbrdma_modex_decode(const void *buf, size_t len, tbrdma_modex_t *m_p)
{
    modex_cursor_t c = {buf, 0, len, 0};
    tbrdma_modex_t m;
    size_t hdrlen, total;
    int rc;

    if (NULL == buf || MODEX_FIXED_LEN > len || TBRDMA_MODEX_MAGIC != get_be(&c, 4)) {
        return -EBADMSG;
    }
    if (TBRDMA_MODEX_VERSION != get_be(&c, 2)) {
        return -EPROTONOSUPPORT;
    }
    hdrlen = get_be(&c, 2);
    total = get_be(&c, 4);
    if (total > len || hdrlen > total || MODEX_FIXED_LEN + 5 > hdrlen) {
        return -EBADMSG;
    }
    c.end = total;
    memset(&m, 0, sizeof(m));
    rc = modex_get_body(&c, hdrlen, &m);
    if (0 != rc) {
        return rc;
    }
    *m_p = m;
    return 0;
}

const char *tbrdma_modex_strerror(int rc)
{
    switch (rc) {
    case 0:
        return "success";
    case -EBADMSG:
        return "short or corrupt blob";
    case -EPROTONOSUPPORT:
        return "foreign wire version";
    case -EINVAL:
        return "value out of range";
    case -ENOSPC:
        return "buffer too small";
    default:
        return "unknown error";
    }
}
