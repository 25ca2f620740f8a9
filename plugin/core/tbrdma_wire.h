/*
 * The frame header of tbrdma's data path: 40 bytes at the start of every message a tbrdma QP
 * sends, little-endian, followed by `len` payload bytes. docs/design.md ("Wire header") has the
 * layout and the meaning of each field. Encoding, sealing (header and payload CRC32C) and the
 * checks a receiver makes before it trusts a frame live here; opal-free and verbs-free.
 *
 *   0 u8  magic 0xB7          16 u32 ack[0]     28 u16 tx
 *   1 u8  version<<4 | type   20 u32 ack[1]     30 u8  chan
 *   2 u8  tag                 24 u16 lim[0]     31 u8  0 (reserved)
 *   3 u8  flags               26 u16 lim[1]     32 u32 pcrc (payload CRC32C, 0 without checksum)
 *   4 u32 conn                                  36 u32 hcrc (CRC32C of bytes 0..35)
 *   8 u32 seq
 *  12 u32 len
 */
#ifndef TBRDMA_WIRE_H
#define TBRDMA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_FRAME_BYTES   4096     /* one Thunderbolt RDMA frame (Apple TN3205) */
#define TBRDMA_MSG_MAX_BYTES 16773120 /* 4095 frames, the largest message Apple sends */
#define TBRDMA_HDR_BYTES     40
#define TBRDMA_WIRE_MAGIC    0xB7
#define TBRDMA_WIRE_VERSION  1
#define TBRDMA_NCHAN         2 /* channel 0: 1-frame messages; channel 1: bulk messages */
#define TBRDMA_CHAN_EAGER    0
#define TBRDMA_CHAN_BULK     1

/* Message types (low nibble of byte 1). */
enum tbrdma_msg_type {
    TBRDMA_MSG_DATA = 1,  /* sequenced, acknowledged, delivered to the tag's callback */
    TBRDMA_MSG_ACK = 2,   /* acks and credit limits only */
    TBRDMA_MSG_PING = 3,  /* liveness probe: answered with PONG */
    TBRDMA_MSG_PONG = 4,  /* answer to PING */
    TBRDMA_MSG_CLOSE = 5, /* the sender finalized: no more messages, stop liveness checks */
    TBRDMA_MSG_TYPE_MAX = 5
};

/* Header flags. */
#define TBRDMA_HF_CSUM  0x01 /* pcrc holds the payload's CRC32C */
#define TBRDMA_HF_NACK0 0x02 /* the sender of this frame saw a gap on channel 0 at ack[0] */
#define TBRDMA_HF_NACK1 0x04 /* ... on channel 1 at ack[1] */
#define TBRDMA_HF_AREQ  0x08 /* answer at once with acks and grants (a sender out of credit) */
#define TBRDMA_HF_MORE \
    0x10 /* DATA: a piece of a train, the next frame of the channel continues it */
#define TBRDMA_HF_MASK 0x1f

typedef struct tbrdma_hdr {
    uint8_t type;               /* enum tbrdma_msg_type */
    uint8_t tag;                /* DATA: the BTL tag of the message */
    uint8_t flags;              /* TBRDMA_HF_* */
    uint8_t chan;               /* the channel (queue pair) the frame travels on */
    uint32_t conn;              /* the receiver's connection id (stale frames are refused) */
    uint32_t seq;               /* DATA: sequence number on its channel */
    uint32_t len;               /* payload bytes after the header */
    uint32_t ack[TBRDMA_NCHAN]; /* per channel: next sequence number the sender expects */
    uint16_t lim[TBRDMA_NCHAN]; /* per channel: the sender's credit limit (see tbrdma_rel.h) */
    uint16_t tx;                /* transmission index of this frame on its queue pair */
    uint32_t pcrc;              /* payload CRC32C when TBRDMA_HF_CSUM */
} tbrdma_hdr_t;

/* What a receiver concluded about a frame. TBRDMA_FRAME_OK is the only trusted outcome. */
typedef enum tbrdma_frame_verdict {
    TBRDMA_FRAME_OK = 0,
    TBRDMA_FRAME_SHORT,    /* fewer bytes than a header */
    TBRDMA_FRAME_BAD_HDR,  /* magic, version, type, channel, reserved bits or header CRC */
    TBRDMA_FRAME_BAD_LEN,  /* len larger than what arrived */
    TBRDMA_FRAME_BAD_CONN, /* another connection's frame (stale peer) */
    TBRDMA_FRAME_BAD_CRC,  /* checksum expected and missing or wrong */
    TBRDMA_FRAME_VERDICTS
} tbrdma_frame_verdict_t;

/* Writes h as the header of frame and seals it (hcrc). h->pcrc is written as given. */
void tbrdma_wire_seal(uint8_t *frame, const tbrdma_hdr_t *h);

/* The CRC32C of a frame's payload (len bytes after the header). */
uint32_t tbrdma_wire_payload_crc(const uint8_t *frame, uint32_t len);

/*
 * Apple's frame rule seen from the receiver: a message of byte_len bytes on a channel whose
 * messages span frames frames. TBRDMA_FRAME_OK, or TBRDMA_FRAME_BAD_LEN when it spans another
 * count (on Apple's device the receive fails first; on a device without the rule, such as rxe, only
 * this check refuses it).
 */
tbrdma_frame_verdict_t tbrdma_wire_check_frames(uint32_t byte_len, uint32_t frames);

/*
 * Reads and checks a received frame of byte_len bytes that arrived on channel chan of the
 * connection whose id is conn. csum: the connection checksums payloads (a frame without a
 * valid payload CRC is then refused). Fills *h only when the verdict is TBRDMA_FRAME_OK.
 * Never reads past byte_len.
 */
tbrdma_frame_verdict_t tbrdma_wire_check(const uint8_t *frame, uint32_t byte_len, uint8_t chan,
                                         uint32_t conn, int csum, tbrdma_hdr_t *h);

/*
 * What a switch may read of a frame of byte_len bytes that arrived on channel chan before it
 * hands it on (the per-Mac agent, core/tbrdma_route.h): the header's sanity and CRC, then the
 * connection id into *conn. TBRDMA_FRAME_OK, TBRDMA_FRAME_SHORT or TBRDMA_FRAME_BAD_HDR; the
 * payload, its length and its checksum are the receiving rank's to check (tbrdma_wire_check).
 */
tbrdma_frame_verdict_t tbrdma_wire_peek_conn(const uint8_t *frame, uint32_t byte_len, uint8_t chan,
                                             uint32_t *conn);

/*
 * The message type (enum tbrdma_msg_type) in the header of a frame of len bytes, unchecked (for
 * scheduling only, never for trust: tbrdma_wire_check decides that), or 0 when len is shorter
 * than a header.
 */
uint8_t tbrdma_wire_peek_type(const uint8_t *frame, uint32_t len);

/* Short name of a verdict ("bad header crc", ...), for counters and messages. */
const char *tbrdma_wire_verdict_name(tbrdma_frame_verdict_t v);

/* Frames a message of len bytes spans on the wire (0 bytes is 1 frame, as on Apple's device). */
static inline uint32_t tbrdma_wire_frames(uint32_t len)
{
    return (0 == len) ? 1 : (len + TBRDMA_FRAME_BYTES - 1) / TBRDMA_FRAME_BYTES;
}

/*
 * The length to post for a message of len bytes on a channel whose receives are class_frames
 * frames long: Apple fails a receive whose frame count differs from the send's, so a short
 * message is padded up to (class_frames - 1) frames plus one byte. Returns 0 when len does not
 * fit the class.
 */
static inline uint32_t tbrdma_wire_post_len(uint32_t len, uint32_t class_frames)
{
    uint32_t min = (class_frames - 1) * TBRDMA_FRAME_BYTES + 1;

    if (len > class_frames * TBRDMA_FRAME_BYTES) {
        return 0;
    }
    return (len < min) ? min : len;
}

#endif /* TBRDMA_WIRE_H */
