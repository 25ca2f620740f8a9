/*
 * tbrdma frame headers: encode, seal, check (see tbrdma_wire.h and docs/design.md). Explicit
 * little-endian loads and stores (tbrdma_le.h). Hot path: seal once per transmission, check once
 * per received frame (one CRC32C of 36 bytes each, plus the payload's when checksums are on).
 */
#include "tbrdma_wire.h"
#include "tbrdma_crc32c.h"
#include "tbrdma_le.h"
#include "tbrdma_mutate.h"

#include <string.h>

#define WIRE_HCRC_SPAN 36 /* bytes covered by hcrc: everything before it */

void tbrdma_wire_seal(uint8_t *frame, const tbrdma_hdr_t *h)
{
    frame[0] = TBRDMA_WIRE_MAGIC;
    frame[1] = (uint8_t) ((TBRDMA_WIRE_VERSION << 4) | (h->type & 0x0f));
    frame[2] = h->tag;
    frame[3] = h->flags;
    tbrdma_put32(frame + 4, h->conn);
    tbrdma_put32(frame + 8, h->seq);
    tbrdma_put32(frame + 12, h->len);
    tbrdma_put32(frame + 16, h->ack[0]);
    tbrdma_put32(frame + 20, h->ack[1]);
    tbrdma_put16(frame + 24, h->lim[0]);
    tbrdma_put16(frame + 26, h->lim[1]);
    tbrdma_put16(frame + 28, h->tx);
    frame[30] = h->chan;
    frame[31] = 0;
    tbrdma_put32(frame + 32, h->pcrc);
    tbrdma_put32(frame + 36, tbrdma_crc32c(frame, WIRE_HCRC_SPAN));
}

uint32_t tbrdma_wire_payload_crc(const uint8_t *frame, uint32_t len)
{
    return tbrdma_crc32c(frame + TBRDMA_HDR_BYTES,
                         (TBRDMA_MUTANT(CRC_ONE_SHORT) && len > 0) ? len - 1 : len);
}

static void wire_decode(const uint8_t *frame, tbrdma_hdr_t *h)
{
    h->type = frame[1] & 0x0f;
    h->tag = frame[2];
    h->flags = frame[3];
    h->conn = tbrdma_get32(frame + 4);
    h->seq = tbrdma_get32(frame + 8);
    h->len = tbrdma_get32(frame + 12);
    h->ack[0] = tbrdma_get32(frame + 16);
    h->ack[1] = tbrdma_get32(frame + 20);
    h->lim[0] = tbrdma_get16(frame + 24);
    h->lim[1] = tbrdma_get16(frame + 26);
    h->tx = tbrdma_get16(frame + 28);
    h->chan = frame[30];
    h->pcrc = tbrdma_get32(frame + 32);
}

/* Magic, version, type, flags, channel and reserved byte, then the header CRC. */
static int wire_header_sane(const uint8_t *frame, uint8_t chan)
{
    uint8_t type = frame[1] & 0x0f;

    if (TBRDMA_WIRE_MAGIC != frame[0] || TBRDMA_WIRE_VERSION != (frame[1] >> 4)) {
        return 0;
    }
    if (type < TBRDMA_MSG_DATA || TBRDMA_MSG_TYPE_MAX < type || 0 != (frame[3] & ~TBRDMA_HF_MASK)) {
        return 0;
    }
    if (chan != frame[30] || 0 != frame[31]) {
        return 0;
    }
    /* trains are data on the 1-frame channel only */
    if ((frame[3] & TBRDMA_HF_MORE) && (TBRDMA_MSG_DATA != type || TBRDMA_CHAN_EAGER != chan)) {
        return 0;
    }
    return tbrdma_get32(frame + 36) == tbrdma_crc32c(frame, WIRE_HCRC_SPAN);
}

tbrdma_frame_verdict_t tbrdma_wire_check_frames(uint32_t byte_len, uint32_t frames)
{
    if (tbrdma_wire_frames(byte_len) != frames && !TBRDMA_MUTANT(FRAME_COUNT_UNCHECKED)) {
        return TBRDMA_FRAME_BAD_LEN;
    }
    return TBRDMA_FRAME_OK;
}

tbrdma_frame_verdict_t tbrdma_wire_check(const uint8_t *frame, uint32_t byte_len, uint8_t chan,
                                         uint32_t conn, int csum, tbrdma_hdr_t *h)
{
    tbrdma_hdr_t d;

    if (byte_len < TBRDMA_HDR_BYTES) {
        return TBRDMA_FRAME_SHORT;
    }
    if (!wire_header_sane(frame, chan)) {
        return TBRDMA_FRAME_BAD_HDR;
    }
    wire_decode(frame, &d);
    if (d.len > byte_len - TBRDMA_HDR_BYTES) {
        return TBRDMA_FRAME_BAD_LEN;
    }
    if (d.conn != conn) {
        return TBRDMA_FRAME_BAD_CONN;
    }
    if (csum && !TBRDMA_MUTANT(CRC_ACCEPTED)
        && (0 == (d.flags & TBRDMA_HF_CSUM) || d.pcrc != tbrdma_wire_payload_crc(frame, d.len))) {
        return TBRDMA_FRAME_BAD_CRC;
    }
    *h = d;
    return TBRDMA_FRAME_OK;
}

uint8_t tbrdma_wire_peek_type(const uint8_t *frame, uint32_t len)
{
    return (len < TBRDMA_HDR_BYTES) ? 0 : (uint8_t) (frame[1] & 0x0f);
}

tbrdma_frame_verdict_t tbrdma_wire_peek_conn(const uint8_t *frame, uint32_t byte_len, uint8_t chan,
                                             uint32_t *conn)
{
    if (byte_len < TBRDMA_HDR_BYTES) {
        return TBRDMA_FRAME_SHORT;
    }
    if (!wire_header_sane(frame, chan)) {
        return TBRDMA_FRAME_BAD_HDR;
    }
    *conn = tbrdma_get32(frame + 4);
    return TBRDMA_FRAME_OK;
}

const char *tbrdma_wire_verdict_name(tbrdma_frame_verdict_t v)
{
    static const char *names[TBRDMA_FRAME_VERDICTS] = {
        [TBRDMA_FRAME_OK] = "ok",
        [TBRDMA_FRAME_SHORT] = "short frame",
        [TBRDMA_FRAME_BAD_HDR] = "bad header",
        [TBRDMA_FRAME_BAD_LEN] = "impossible length",
        [TBRDMA_FRAME_BAD_CONN] = "stale connection",
        [TBRDMA_FRAME_BAD_CRC] = "bad payload checksum",
    };

    return (v < TBRDMA_FRAME_VERDICTS) ? names[v] : "unknown verdict";
}
