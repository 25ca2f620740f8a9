/*
 * Unit tests of plugin/core/tbrdma_crc32c.c and tbrdma_wire.c: CRC32C against its published
 * check value, and the software loop, the CPU's instruction and three interleaved streams of it
 * against each other at every short length, around the 3-stream block sizes, at every alignment;
 * the frame header's exact bytes, a round trip, and a receiver that refuses every flipped bit of
 * a header, a truncated frame, a frame of another connection or channel, and a payload whose
 * checksum does not match. Also the frame-rule arithmetic (post lengths of each class).
 */
#include "tbrdma_crc32c.h"
#include "tbrdma_wire.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_CAP (2 * TBRDMA_FRAME_BYTES)

static void test_crc32c_check_value(void)
{
    CU_ASSERT(0xE3069283u == tbrdma_crc32c("123456789", 9));
    CU_ASSERT(0 == tbrdma_crc32c("", 0));
    /* iSCSI test vector (RFC 3720 B.4): 32 bytes of zeros */
    {
        uint8_t z[32] = {0};
        CU_ASSERT(0x8A9136AAu == tbrdma_crc32c(z, sizeof(z)));
    }
}

static void test_crc32c_extend_equals_whole(void)
{
    const char *s = "The quick brown fox jumps over the lazy dog";
    size_t n = strlen(s);

    for (size_t cut = 0; cut <= n; cut++) {
        CU_ASSERT(tbrdma_crc32c(s, n)
                  == tbrdma_crc32c_extend(tbrdma_crc32c(s, cut), s + cut, n - cut));
    }
}

/* Lengths around the 3-stream blocks (768 B and 24 KiB) and every short one, at every offset. */
static size_t crc_test_len(size_t i)
{
    static const size_t edges[] = {767,   768,   769,   1535,  1536,  4056,  24575, 24576,
                                   24577, 25344, 26112, 49159, 65536, 73728, 100003};
    size_t n_edges = sizeof(edges) / sizeof(edges[0]);

    return (i < n_edges) ? edges[i] : (i - n_edges) * 13 + (i - n_edges > 40 ? 900 : 0);
}

#define CRC_TEST_LENS 79 /* 15 edges and 64 short ones */

static void crc_test_all(const uint8_t *buf, uint32_t out[CRC_TEST_LENS][8])
{
    for (size_t i = 0; i < CRC_TEST_LENS; i++) {
        for (size_t off = 0; off < 8; off++) {
            out[i][off] = tbrdma_crc32c(buf + off, crc_test_len(i));
        }
    }
}

static void test_crc32c_every_way_agrees(void)
{
    static uint32_t best[CRC_TEST_LENS][8], one[CRC_TEST_LENS][8], soft[CRC_TEST_LENS][8];
    uint8_t *buf = malloc(100003 + 8);
    int mismatches = 0;

    CU_ASSERT_FATAL(NULL != buf);
    for (size_t i = 0; i < 100003 + 8; i++) {
        buf[i] = (uint8_t) (i * 131 + 7 + (i >> 9));
    }
    crc_test_all(buf, best);
    tbrdma_crc32c_force(TBRDMA_CRC32C_ONE_STREAM);
    crc_test_all(buf, one);
    tbrdma_crc32c_force(TBRDMA_CRC32C_SOFTWARE);
    CU_ASSERT(0 == strcmp("software", tbrdma_crc32c_impl()));
    crc_test_all(buf, soft);
    tbrdma_crc32c_force(TBRDMA_CRC32C_BEST);
    for (size_t i = 0; i < CRC_TEST_LENS; i++) {
        for (size_t off = 0; off < 8; off++) {
            mismatches += best[i][off] != soft[i][off];
            mismatches += one[i][off] != soft[i][off];
        }
    }
    CU_ASSERT(0 == mismatches);
    free(buf);
}

static tbrdma_hdr_t sample_hdr(void)
{
    tbrdma_hdr_t h;

    memset(&h, 0, sizeof(h));
    h.type = TBRDMA_MSG_DATA;
    h.tag = 0x41;
    h.flags = TBRDMA_HF_CSUM | TBRDMA_HF_NACK1;
    h.chan = TBRDMA_CHAN_BULK;
    h.conn = 0x01020304u;
    h.seq = 0x05060708u;
    h.len = 100;
    h.ack[0] = 0x11121314u;
    h.ack[1] = 0x21222324u;
    h.lim[0] = 0x3132;
    h.lim[1] = 0x4142;
    h.tx = 0x5152;
    return h;
}

/* A sealed frame of sample_hdr() with 100 payload bytes. */
static void sample_frame(uint8_t *frame)
{
    tbrdma_hdr_t h = sample_hdr();

    memset(frame, 0, FRAME_CAP);
    for (int i = 0; i < 100; i++) {
        frame[TBRDMA_HDR_BYTES + i] = (uint8_t) (i ^ 0x5a);
    }
    h.pcrc = tbrdma_wire_payload_crc(frame, h.len);
    tbrdma_wire_seal(frame, &h);
}

static void test_wire_layout_is_documented_bytes(void)
{
    static const uint8_t want[32] = {
        0xB7, 0x11, 0x41, 0x05, 4,    3,    2,    1,    8,    7,    6,    5,    100,  0,    0, 0,
        0x14, 0x13, 0x12, 0x11, 0x24, 0x23, 0x22, 0x21, 0x32, 0x31, 0x42, 0x41, 0x52, 0x51, 1, 0};
    uint8_t frame[FRAME_CAP];

    sample_frame(frame);
    CU_ASSERT(0 == memcmp(frame, want, sizeof(want)));
    CU_ASSERT(
        tbrdma_crc32c(frame + TBRDMA_HDR_BYTES, 100)
        == (uint32_t) (frame[32] | frame[33] << 8 | frame[34] << 16 | (uint32_t) frame[35] << 24));
    CU_ASSERT(
        tbrdma_crc32c(frame, 36)
        == (uint32_t) (frame[36] | frame[37] << 8 | frame[38] << 16 | (uint32_t) frame[39] << 24));
}

static void test_wire_roundtrip(void)
{
    uint8_t frame[FRAME_CAP];
    tbrdma_hdr_t want = sample_hdr(), got;

    sample_frame(frame);
    memset(&got, 0, sizeof(got));
    CU_ASSERT(TBRDMA_FRAME_OK
              == tbrdma_wire_check(frame, TBRDMA_HDR_BYTES + 100, TBRDMA_CHAN_BULK, 0x01020304u, 1,
                                   &got));
    want.pcrc = got.pcrc;
    CU_ASSERT(0 == memcmp(&want, &got, sizeof(want)));
    /* padding after the payload (the frame rule) is allowed and ignored */
    CU_ASSERT(TBRDMA_FRAME_OK
              == tbrdma_wire_check(frame, FRAME_CAP, TBRDMA_CHAN_BULK, 0x01020304u, 1, &got));
}

static void test_wire_every_header_bit_flip_is_refused(void)
{
    uint8_t frame[FRAME_CAP];
    tbrdma_hdr_t h;
    int accepted = 0;

    for (int bit = 0; bit < TBRDMA_HDR_BYTES * 8; bit++) {
        sample_frame(frame);
        frame[bit / 8] ^= (uint8_t) (1u << (bit % 8));
        accepted += TBRDMA_FRAME_OK
                    == tbrdma_wire_check(frame, FRAME_CAP, TBRDMA_CHAN_BULK, 0x01020304u, 0, &h);
    }
    CU_ASSERT(0 == accepted);
}

static void test_wire_refusals_are_named(void)
{
    uint8_t frame[FRAME_CAP];
    tbrdma_hdr_t h;

    sample_frame(frame);
    for (uint32_t n = 0; n < TBRDMA_HDR_BYTES; n++) {
        CU_ASSERT(TBRDMA_FRAME_SHORT == tbrdma_wire_check(frame, n, 1, 0x01020304u, 0, &h));
    }
    CU_ASSERT(TBRDMA_FRAME_BAD_LEN
              == tbrdma_wire_check(frame, TBRDMA_HDR_BYTES + 99, 1, 0x01020304u, 0, &h));
    CU_ASSERT(TBRDMA_FRAME_BAD_CONN == tbrdma_wire_check(frame, FRAME_CAP, 1, 0x01020305u, 0, &h));
    CU_ASSERT(TBRDMA_FRAME_BAD_HDR == tbrdma_wire_check(frame, FRAME_CAP, 0, 0x01020304u, 0, &h));
    frame[TBRDMA_HDR_BYTES + 50] ^= 0x10;
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check(frame, FRAME_CAP, 1, 0x01020304u, 0, &h));
    CU_ASSERT(TBRDMA_FRAME_BAD_CRC == tbrdma_wire_check(frame, FRAME_CAP, 1, 0x01020304u, 1, &h));
    CU_ASSERT(0 == strcmp("bad payload checksum", tbrdma_wire_verdict_name(TBRDMA_FRAME_BAD_CRC)));
}

/* A message must span its channel's frame count (Apple's frame rule, checked here too). */
static void test_wire_frame_count_is_the_channels(void)
{
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check_frames(40, 1));
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check_frames(4096, 1));
    CU_ASSERT(TBRDMA_FRAME_BAD_LEN == tbrdma_wire_check_frames(4097, 1));
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check_frames(15 * 4096 + 1, 16));
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check_frames(16 * 4096, 16));
    CU_ASSERT(TBRDMA_FRAME_BAD_LEN == tbrdma_wire_check_frames(15 * 4096, 16));
    CU_ASSERT(TBRDMA_FRAME_BAD_LEN == tbrdma_wire_check_frames(4096, 16));
}

/* The payload checksum covers every payload byte, the first and the last included. */
static void test_wire_checksum_covers_every_payload_byte(void)
{
    uint8_t frame[FRAME_CAP];
    tbrdma_hdr_t h;
    int accepted = 0;

    for (int i = 0; i < 100; i++) {
        sample_frame(frame);
        frame[TBRDMA_HDR_BYTES + i] ^= 0x01;
        accepted += TBRDMA_FRAME_BAD_CRC
                    != tbrdma_wire_check(frame, FRAME_CAP, TBRDMA_CHAN_BULK, 0x01020304u, 1, &h);
    }
    CU_ASSERT(0 == accepted);
}

static void test_wire_checksum_required_when_negotiated(void)
{
    uint8_t frame[FRAME_CAP];
    tbrdma_hdr_t h = sample_hdr();

    memset(frame, 0, sizeof(frame));
    h.flags = 0; /* a sender that does not checksum */
    h.pcrc = 0;
    tbrdma_wire_seal(frame, &h);
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check(frame, FRAME_CAP, 1, h.conn, 0, &h));
    CU_ASSERT(TBRDMA_FRAME_BAD_CRC == tbrdma_wire_check(frame, FRAME_CAP, 1, h.conn, 1, &h));
}

/* A train's pieces (MORE) are data frames of the 1-frame channel; anywhere else a bad header. */
static void test_wire_more_only_on_eager_data(void)
{
    uint8_t frame[FRAME_CAP];
    tbrdma_hdr_t h = sample_hdr(), got;

    memset(frame, 0, sizeof(frame));
    h.flags = TBRDMA_HF_MORE;
    h.chan = TBRDMA_CHAN_EAGER;
    tbrdma_wire_seal(frame, &h);
    CU_ASSERT(TBRDMA_FRAME_OK == tbrdma_wire_check(frame, FRAME_CAP, 0, h.conn, 0, &got));
    CU_ASSERT(TBRDMA_HF_MORE == got.flags);
    h.chan = TBRDMA_CHAN_BULK;
    tbrdma_wire_seal(frame, &h);
    CU_ASSERT(TBRDMA_FRAME_BAD_HDR == tbrdma_wire_check(frame, FRAME_CAP, 1, h.conn, 0, &got));
    h.chan = TBRDMA_CHAN_EAGER;
    h.type = TBRDMA_MSG_ACK;
    tbrdma_wire_seal(frame, &h);
    CU_ASSERT(TBRDMA_FRAME_BAD_HDR == tbrdma_wire_check(frame, FRAME_CAP, 0, h.conn, 0, &got));
}

static void test_wire_frame_rule_lengths(void)
{
    CU_ASSERT(1 == tbrdma_wire_frames(0));
    CU_ASSERT(1 == tbrdma_wire_frames(4096));
    CU_ASSERT(2 == tbrdma_wire_frames(4097));
    CU_ASSERT(4095 == tbrdma_wire_frames(TBRDMA_MSG_MAX_BYTES));
    /* 1-frame class: anything from 0 to 4096 bytes is posted as is */
    CU_ASSERT(1 == tbrdma_wire_post_len(1, 1));
    CU_ASSERT(4096 == tbrdma_wire_post_len(4096, 1));
    CU_ASSERT(0 == tbrdma_wire_post_len(4097, 1));
    /* 16-frame class: a short tail is padded to 15 frames + 1 byte, a full one kept */
    CU_ASSERT(15 * 4096 + 1 == tbrdma_wire_post_len(40, 16));
    CU_ASSERT(16 == tbrdma_wire_frames(tbrdma_wire_post_len(40, 16)));
    CU_ASSERT(15 * 4096 + 1 == tbrdma_wire_post_len(15 * 4096 + 1, 16));
    CU_ASSERT(16 * 4096 == tbrdma_wire_post_len(16 * 4096, 16));
    CU_ASSERT(0 == tbrdma_wire_post_len(16 * 4096 + 1, 16));
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_crc32c_check_value),
        TBRDMA_UT_TEST(test_crc32c_extend_equals_whole),
        TBRDMA_UT_TEST(test_crc32c_every_way_agrees),
        TBRDMA_UT_TEST(test_wire_layout_is_documented_bytes),
        TBRDMA_UT_TEST(test_wire_roundtrip),
        TBRDMA_UT_TEST(test_wire_every_header_bit_flip_is_refused),
        TBRDMA_UT_TEST(test_wire_refusals_are_named),
        TBRDMA_UT_TEST(test_wire_frame_count_is_the_channels),
        TBRDMA_UT_TEST(test_wire_checksum_covers_every_payload_byte),
        TBRDMA_UT_TEST(test_wire_checksum_required_when_negotiated),
        TBRDMA_UT_TEST(test_wire_more_only_on_eager_data),
        TBRDMA_UT_TEST(test_wire_frame_rule_lengths),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("wire", tests);
}
