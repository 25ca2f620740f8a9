/*
 * Unit tests of plugin/core/tbrdma_modex.c: encode/decode round trips (0, 1 and the maximum
 * number of ports), the exact byte layout of docs/wire-format.md, and a decoder fed hostile
 * input: every truncation, every bit flip of every length field, foreign versions, wrong magic
 * and oversized names must be refused without reading past the buffer.
 */
#include "tbrdma_gid.h"
#include "tbrdma_modex.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_MAX 4096

static void make_modex(tbrdma_modex_t *m, const char *host, int nports)
{
    int p;

    memset(m, 0, sizeof(*m));
    snprintf(m->host, sizeof(m->host), "%s", host);
    m->nports = nports;
    m->bulk_frames = 17;
    for (p = 0; p < nports; p++) {
        snprintf(m->ports[p].device, sizeof(m->ports[p].device), "rdma_en%d", p + 1);
        m->ports[p].ipv4 = 0xc0a80001u + (uint32_t) (4 * p);
        tbrdma_gid_from_ipv4(m->ports[p].ipv4, &m->ports[p].gid);
        m->ports[p].gid_index = 1 + p;
        m->ports[p].prefix = 30;
        m->ports[p].active_mtu = 5;
        m->ports[p].link_layer = TBRDMA_LINK_LAYER_THUNDERBOLT;
    }
}

static int modex_equal(const tbrdma_modex_t *a, const tbrdma_modex_t *b)
{
    int p;

    if (0 != strcmp(a->host, b->host) || a->nports != b->nports
        || a->bulk_frames != b->bulk_frames) {
        return 0;
    }
    for (p = 0; p < a->nports; p++) {
        const tbrdma_modex_port_t *x = &a->ports[p], *y = &b->ports[p];

        if (0 != strcmp(x->device, y->device) || 0 != memcmp(&x->gid, &y->gid, sizeof(x->gid))
            || x->gid_index != y->gid_index || x->ipv4 != y->ipv4 || x->prefix != y->prefix
            || x->active_mtu != y->active_mtu || x->link_layer != y->link_layer) {
            return 0;
        }
    }
    return 1;
}

static size_t encode_ok(const tbrdma_modex_t *m, uint8_t *buf)
{
    size_t used = 0;

    CU_ASSERT(0 == tbrdma_modex_encode(m, buf, BLOB_MAX, &used));
    CU_ASSERT(used == tbrdma_modex_encoded_size(m));
    return used;
}

static void roundtrip(const char *host, int nports)
{
    tbrdma_modex_t in, out;
    uint8_t buf[BLOB_MAX];
    size_t used;

    make_modex(&in, host, nports);
    used = encode_ok(&in, buf);
    memset(&out, 0x5a, sizeof(out));
    CU_ASSERT(0 == tbrdma_modex_decode(buf, used, &out));
    CU_ASSERT(modex_equal(&in, &out));
}

static void test_modex_roundtrip_zero_ports(void)
{
    roundtrip("mac-a", 0);
}

static void test_modex_roundtrip_one_port(void)
{
    roundtrip("m3-ultra-1.local", 1);
}

static void test_modex_roundtrip_max_ports(void)
{
    char host[TBRDMA_HOST_MAX];

    memset(host, 'h', sizeof(host) - 1); /* the longest host name */
    host[sizeof(host) - 1] = '\0';
    roundtrip(host, TBRDMA_MAX_PORTS);
}

/* The layout of docs/wire-format.md, byte for byte. */
static void test_modex_encode_layout(void)
{
    static const uint8_t want[48] = {
        'T',  'B',  'R', 'D', 0, 2, 0, 18, 0, 0, 0,    48, /* magic, version 2, header 18, total 48
                                                            */
        2,    'm',  'a',                                   /* host "ma" */
        1,                                                 /* nports */
        0x01, 0x03,                                        /* bulk_frames 259 */
        0,    30,                                          /* record length 29 + 1 */
        1,    'r',                                         /* device "r" */
        0,    0,    0,   0,   0, 0, 0, 0,  0, 0, 0xff, 0xff, 192,
        168,  0,    1,      /* gid ::ffff:192.168.0.1 */
        0x01, 0x02,         /* gid_index 258 */
        192,  168,  0,   1, /* ipv4 */
        30,                 /* prefix */
        3,                  /* active_mtu */
        0,    100,          /* link_layer Thunderbolt */
    };
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used;

    make_modex(&m, "ma", 1);
    strcpy(m.ports[0].device, "r");
    m.ports[0].gid_index = 0x0102;
    m.ports[0].ipv4 = 0xc0a80001u;
    tbrdma_gid_from_ipv4(m.ports[0].ipv4, &m.ports[0].gid);
    m.ports[0].active_mtu = 3;
    m.bulk_frames = 0x0103;
    used = encode_ok(&m, buf);
    CU_ASSERT(sizeof(want) == used);
    CU_ASSERT(0 == memcmp(buf, want, sizeof(want)));
}

static void test_modex_encode_invalid(void)
{
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used = 1234;

    make_modex(&m, "mac-a", 2);
    CU_ASSERT(-ENOSPC == tbrdma_modex_encode(&m, buf, tbrdma_modex_encoded_size(&m) - 1, &used));
    CU_ASSERT(1234 == used);
    m.ports[1].prefix = 33;
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "mac-a", 2);
    m.ports[0].gid_index = 65536;
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "mac-a", 2);
    strcpy(m.ports[1].device, m.ports[0].device); /* duplicate device name */
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "", 1);
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "mac-a", 1);
    m.nports = TBRDMA_MAX_PORTS + 1;
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "mac-a", 1);
    m.bulk_frames = 65536; /* does not fit its u16 */
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    m.bulk_frames = -1;
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "mac-a", 1);
    memset(m.host, 'h', sizeof(m.host)); /* no NUL: oversized */
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
    make_modex(&m, "mac-a", 1);
    memset(m.ports[0].device, 'd', sizeof(m.ports[0].device));
    CU_ASSERT(-EINVAL == tbrdma_modex_encode(&m, buf, sizeof(buf), &used));
}

/* Decoding must fail and leave the output untouched. */
static void assert_decode_fails(const uint8_t *buf, size_t len, int want)
{
    tbrdma_modex_t out, before;
    uint8_t *copy = malloc(len ? len : 1);

    /* An exact-size heap copy lets ASan/valgrind catch any read past len. */
    memcpy(copy, buf, len);
    memset(&before, 0x5a, sizeof(before));
    out = before;
    CU_ASSERT(want == tbrdma_modex_decode(copy, len, &out));
    CU_ASSERT(0 == memcmp(&out, &before, sizeof(out)));
    free(copy);
}

static void test_modex_decode_every_truncation(void)
{
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used, len;
    int nports[] = {0, 1, 3}, k;

    for (k = 0; k < 3; k++) {
        make_modex(&m, "mac-b", nports[k]);
        used = encode_ok(&m, buf);
        for (len = 0; len < used; len++) {
            assert_decode_fails(buf, len, -EBADMSG);
        }
    }
    CU_ASSERT(-EBADMSG == tbrdma_modex_decode(NULL, 0, &m));
}

/* Offsets of every length field of a blob made by make_modex(host, nports). */
static int length_fields(const uint8_t *buf, int nports, size_t off[], size_t width[])
{
    size_t pos = 12 + 1 + buf[12] + 1 + 2; /* header: host, nports, bulk_frames */
    int n = 0, p;

    off[n] = 6, width[n++] = 2;            /* header length */
    off[n] = 8, width[n++] = 4;            /* total length */
    off[n] = 12, width[n++] = 1;           /* host name length */
    off[n] = 13 + buf[12], width[n++] = 1; /* nports */
    for (p = 0; p < nports; p++) {
        off[n] = pos, width[n++] = 2;     /* record length */
        off[n] = pos + 2, width[n++] = 1; /* device name length */
        pos += ((size_t) buf[pos] << 8) | buf[pos + 1];
    }
    return n;
}

static void test_modex_decode_length_bitflips(void)
{
    size_t off[4 + 2 * TBRDMA_MAX_PORTS], width[4 + 2 * TBRDMA_MAX_PORTS], used, bit;
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    int n, f, nflips = 0;

    make_modex(&m, "mac-c", 3);
    used = encode_ok(&m, buf);
    n = length_fields(buf, 3, off, width);
    CU_ASSERT(10 == n);
    for (f = 0; f < n; f++) {
        for (bit = 0; bit < 8 * width[f]; bit++) {
            buf[off[f] + bit / 8] ^= (uint8_t) (1u << (bit % 8));
            assert_decode_fails(buf, used, -EBADMSG);
            buf[off[f] + bit / 8] ^= (uint8_t) (1u << (bit % 8));
            nflips++;
        }
    }
    CU_ASSERT(8 * (2 + 4 + 1 + 1 + 3 * 3) == nflips);
    CU_ASSERT(0 == tbrdma_modex_decode(buf, used, &m)); /* restored blob still decodes */
}

static void test_modex_decode_foreign_version(void)
{
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used;

    make_modex(&m, "mac-d", 1);
    used = encode_ok(&m, buf);
    buf[5] = TBRDMA_MODEX_VERSION + 1;
    assert_decode_fails(buf, used, -EPROTONOSUPPORT);
    buf[4] = 0xff;
    assert_decode_fails(buf, used, -EPROTONOSUPPORT);
    /* Only the fixed part is needed to tell the version. */
    assert_decode_fails(buf, 12, -EPROTONOSUPPORT);
    CU_ASSERT_STRING_EQUAL(tbrdma_modex_strerror(-EPROTONOSUPPORT), "foreign wire version");
}

static void test_modex_decode_wrong_magic(void)
{
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used;
    int i;

    make_modex(&m, "mac-e", 1);
    used = encode_ok(&m, buf);
    for (i = 0; i < 4; i++) {
        buf[i] ^= 0x20;
        assert_decode_fails(buf, used, -EBADMSG);
        buf[i] ^= 0x20;
    }
    CU_ASSERT_STRING_EQUAL(tbrdma_modex_strerror(-EBADMSG), "short or corrupt blob");
}

/* Hand-built blobs with names as long as the field (no room for the NUL) or containing NUL. */
static void test_modex_decode_oversized_names(void)
{
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used, hostlen;

    make_modex(&m, "mac-f", 0);
    used = encode_ok(&m, buf);
    /* Rewrite the host as TBRDMA_HOST_MAX 'h' with all lengths consistent. */
    hostlen = TBRDMA_HOST_MAX;
    buf[12] = (uint8_t) hostlen;
    memset(buf + 13, 'h', hostlen);
    buf[13 + hostlen] = 0;                         /* nports */
    buf[14 + hostlen] = 0, buf[15 + hostlen] = 17; /* bulk_frames */
    used = 13 + hostlen + 3;
    buf[6] = 0, buf[7] = (uint8_t) used;
    buf[8] = buf[9] = buf[10] = 0, buf[11] = (uint8_t) used;
    assert_decode_fails(buf, used, -EBADMSG);
    /* One shorter fits (63 characters + NUL): the same framing then decodes. */
    buf[12] = (uint8_t) (hostlen - 1);
    buf[13 + hostlen - 1] = 0;
    buf[14 + hostlen - 1] = 0, buf[15 + hostlen - 1] = 17;
    used--;
    buf[7] = (uint8_t) used, buf[11] = (uint8_t) used;
    CU_ASSERT(0 == tbrdma_modex_decode(buf, used, &m));
    CU_ASSERT(TBRDMA_HOST_MAX - 1 == strlen(m.host));
    /* A NUL inside the name is corrupt. */
    buf[20] = '\0';
    assert_decode_fails(buf, used, -EBADMSG);

    /* A device name of TBRDMA_NAME_MAX characters. */
    make_modex(&m, "mac-f", 1);
    strcpy(m.ports[0].device, "rdma_en1");
    used = encode_ok(&m, buf);
    {
        uint8_t big[BLOB_MAX];
        size_t rec = 12 + 1 + 5 + 1 + 2, extra = TBRDMA_NAME_MAX - 8, total = used + extra;

        memcpy(big, buf, rec + 3);                   /* through the device length byte */
        memset(big + rec + 3, 'd', TBRDMA_NAME_MAX); /* the oversized name */
        memcpy(big + rec + 3 + TBRDMA_NAME_MAX, buf + rec + 3 + 8, used - (rec + 3 + 8));
        big[rec + 2] = TBRDMA_NAME_MAX;
        big[rec + 1] = (uint8_t) (buf[rec + 1] + extra); /* record length */
        big[11] = (uint8_t) total;
        assert_decode_fails(big, total, -EBADMSG);
        big[rec + 2] = TBRDMA_NAME_MAX - 1; /* 31 characters fit */
        big[rec + 1]--;
        memmove(big + rec + 3 + TBRDMA_NAME_MAX - 1, big + rec + 3 + TBRDMA_NAME_MAX,
                total - (rec + 3 + TBRDMA_NAME_MAX));
        big[11] = (uint8_t) (total - 1);
        CU_ASSERT(0 == tbrdma_modex_decode(big, total - 1, &m));
        CU_ASSERT(TBRDMA_NAME_MAX - 1 == strlen(m.ports[0].device));
    }
}

static void test_modex_decode_bad_values(void)
{
    tbrdma_modex_t m;
    uint8_t buf[BLOB_MAX];
    size_t used, port0 = 12 + 1 + 5 + 1 + 2; /* after the header: host, nports, bulk_frames */

    make_modex(&m, "mac-g", 2);
    used = encode_ok(&m, buf);
    buf[port0 + 2 + 1 + 8 + 16 + 2 + 4] = 33; /* prefix of port 0 */
    assert_decode_fails(buf, used, -EBADMSG);
    make_modex(&m, "mac-g", 2);
    used = encode_ok(&m, buf);
    buf[port0 + 3 + 7] = '2'; /* rdma_en1 -> rdma_en2: duplicate of port 1 */
    assert_decode_fails(buf, used, -EBADMSG);
    /* nports above the maximum, with no ports following. */
    make_modex(&m, "mac-g", 0);
    used = encode_ok(&m, buf);
    buf[used - 3] = TBRDMA_MAX_PORTS + 1; /* nports, before bulk_frames */
    assert_decode_fails(buf, used, -EBADMSG);
}

/* Trailing bytes after the declared total are not part of the blob. */
static void test_modex_decode_trailing_bytes(void)
{
    tbrdma_modex_t in, out;
    uint8_t buf[BLOB_MAX];
    size_t used;

    make_modex(&in, "mac-h", 2);
    used = encode_ok(&in, buf);
    memset(buf + used, 0xee, 8);
    CU_ASSERT(0 == tbrdma_modex_decode(buf, used + 8, &out));
    CU_ASSERT(modex_equal(&in, &out));
}

static void test_modex_port_from_info_copies(void)
{
    tbrdma_port_info_t info;
    tbrdma_modex_port_t port;

    memset(&info, 0, sizeof(info));
    strcpy(info.device, "rdma_en7");
    info.ipv4 = 0xa9fe0a0bu;
    info.prefix = 16;
    info.active_mtu = 5;
    info.link_layer = TBRDMA_LINK_LAYER_THUNDERBOLT;
    info.gid_count = 3;
    tbrdma_gid_parse("fe80::1", &info.gids[0]);
    tbrdma_gid_from_ipv4(info.ipv4, &info.gids[2]);
    info.gid_index = 2;
    tbrdma_modex_port_from_info(&info, &port);
    CU_ASSERT_STRING_EQUAL(port.device, "rdma_en7");
    CU_ASSERT(0 == memcmp(&port.gid, &info.gids[2], sizeof(port.gid)));
    CU_ASSERT(2 == port.gid_index);
    CU_ASSERT(0xa9fe0a0bu == port.ipv4);
    CU_ASSERT(16 == port.prefix);
    CU_ASSERT(5 == port.active_mtu);
    CU_ASSERT(TBRDMA_LINK_LAYER_THUNDERBOLT == port.link_layer);
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_modex_roundtrip_zero_ports),
    TBRDMA_UT_TEST(test_modex_roundtrip_one_port),
    TBRDMA_UT_TEST(test_modex_roundtrip_max_ports),
    TBRDMA_UT_TEST(test_modex_encode_layout),
    TBRDMA_UT_TEST(test_modex_encode_invalid),
    TBRDMA_UT_TEST(test_modex_decode_every_truncation),
    TBRDMA_UT_TEST(test_modex_decode_length_bitflips),
    TBRDMA_UT_TEST(test_modex_decode_foreign_version),
    TBRDMA_UT_TEST(test_modex_decode_wrong_magic),
    TBRDMA_UT_TEST(test_modex_decode_oversized_names),
    TBRDMA_UT_TEST(test_modex_decode_bad_values),
    TBRDMA_UT_TEST(test_modex_decode_trailing_bytes),
    TBRDMA_UT_TEST(test_modex_port_from_info_copies),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("tbrdma_modex", tests);
}
