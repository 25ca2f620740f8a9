/*
 * Connection record codec (see tbrdma_conn.h). Layout, big-endian, no padding:
 *   header (16 bytes): magic u32, version u16, flags u8, reserved u8, total length u32,
 *                      status u16, entries u16
 *   entry (32 bytes):  peer jobid u32, peer vpid u32, conn id u32, qpn[0] u32, qpn[1] u32,
 *                      psn u32, depth[0] u16, depth[1] u16, bulk frames u16, stripe u16
 */
#include "tbrdma_conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CONN_HDR_BYTES   16
#define CONN_ENTRY_BYTES 32
#define CONN_ENTRIES_MAX 65535

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
    return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    return put16(put16(p, (uint16_t) (v >> 16)), (uint16_t) v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t) ((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t) get16(p) << 16) | get16(p + 2);
}

size_t tbrdma_conn_encoded_size(const tbrdma_conn_record_t *rec)
{
    return CONN_HDR_BYTES + rec->nentries * CONN_ENTRY_BYTES;
}

static uint8_t *conn_encode_entry(uint8_t *p, const tbrdma_conn_entry_t *e)
{
    p = put32(p, e->peer_jobid);
    p = put32(p, e->peer_vpid);
    p = put32(p, e->conn_id);
    p = put32(p, e->qpn[0]);
    p = put32(p, e->qpn[1]);
    p = put32(p, e->psn);
    p = put16(p, e->depth[0]);
    p = put16(p, e->depth[1]);
    p = put16(p, e->bulk_frames);
    return put16(p, e->stripe);
}

int tbrdma_conn_encode(const tbrdma_conn_record_t *rec, void *buf, size_t len, size_t *used_p)
{
    size_t size = tbrdma_conn_encoded_size(rec);
    uint8_t *p = buf;

    if (len < size || CONN_ENTRIES_MAX < rec->nentries || rec->status < 0 || 65535 < rec->status) {
        return -ENOSPC;
    }
    p = put32(p, TBRDMA_CONN_MAGIC);
    p = put16(p, TBRDMA_CONN_VERSION);
    *p++ = rec->flags;
    *p++ = 0;
    p = put32(p, (uint32_t) size);
    p = put16(p, (uint16_t) rec->status);
    p = put16(p, (uint16_t) rec->nentries);
    for (size_t i = 0; i < rec->nentries; i++) {
        p = conn_encode_entry(p, &rec->entries[i]);
    }
    *used_p = size;
    return 0;
}

static void conn_decode_entry(const uint8_t *p, tbrdma_conn_entry_t *e)
{
    e->peer_jobid = get32(p);
    e->peer_vpid = get32(p + 4);
    e->conn_id = get32(p + 8);
    e->qpn[0] = get32(p + 12);
    e->qpn[1] = get32(p + 16);
    e->psn = get32(p + 20);
    e->depth[0] = get16(p + 24);
    e->depth[1] = get16(p + 26);
    e->bulk_frames = get16(p + 28);
    e->stripe = get16(p + 30);
}

/* The header's checks (magic, version, lengths): its status and entry count. 0 or -errno. */
static int conn_header(const uint8_t *p, size_t len, int *status_p, size_t *n_p)
{
    if (len < CONN_HDR_BYTES || TBRDMA_CONN_MAGIC != get32(p)) {
        return -EBADMSG;
    }
    if (TBRDMA_CONN_VERSION != get16(p + 4)) {
        return -EPROTONOSUPPORT;
    }
    *status_p = get16(p + 12);
    *n_p = get16(p + 14);
    if (get32(p + 8) != len || len != CONN_HDR_BYTES + *n_p * CONN_ENTRY_BYTES || 0 != p[7]
        || (0 != *status_p && 0 != *n_p)) {
        return -EBADMSG;
    }
    return 0;
}

int tbrdma_conn_status(const void *buf, size_t len)
{
    int status = 0;
    size_t n;
    int rc = conn_header(buf, len, &status, &n);

    return (0 != rc) ? rc : status;
}

int tbrdma_conn_decode(const void *buf, size_t len, tbrdma_conn_record_t *rec_p)
{
    const uint8_t *p = buf;
    tbrdma_conn_record_t rec;
    size_t n = 0;
    int rc;

    memset(&rec, 0, sizeof(rec));
    rc = conn_header(p, len, &rec.status, &n);
    if (0 != rc) {
        return rc;
    }
    rec.flags = p[6];
    if (0 < n) {
        rec.entries = calloc(n, sizeof(*rec.entries));
        if (NULL == rec.entries) {
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < n; i++) {
        conn_decode_entry(p + CONN_HDR_BYTES + i * CONN_ENTRY_BYTES, &rec.entries[i]);
    }
    rec.nentries = n;
    *rec_p = rec;
    return 0;
}

void tbrdma_conn_record_free(tbrdma_conn_record_t *rec)
{
    free(rec->entries);
    rec->entries = NULL;
    rec->nentries = 0;
}

const tbrdma_conn_entry_t *tbrdma_conn_find(const tbrdma_conn_record_t *rec, uint32_t jobid,
                                            uint32_t vpid, uint16_t stripe)
{
    for (size_t i = 0; i < rec->nentries; i++) {
        const tbrdma_conn_entry_t *e = &rec->entries[i];

        if (e->peer_jobid == jobid && e->peer_vpid == vpid && e->stripe == stripe) {
            return e;
        }
    }
    return NULL;
}
