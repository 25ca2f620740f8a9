/*
 * Unit tests of plugin/core/tbrdma_gid.c: IPv4-mapped GID recognition and construction, RFC 5952
 * text, parsing, and finding the mapped entry in a GID table like Apple's (fe80::, mapped, 0).
 */
#include "tbrdma_gid.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

static void test_gid_from_ipv4_roundtrip(void)
{
    tbrdma_gid_t gid;
    static const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 7, 1};

    tbrdma_gid_from_ipv4(0xc0a80701u, &gid);
    CU_ASSERT(0 == memcmp(gid.raw, want, 16));
    CU_ASSERT(1 == tbrdma_gid_is_ipv4_mapped(&gid));
    CU_ASSERT(0xc0a80701u == tbrdma_gid_ipv4(&gid));
    CU_ASSERT(0 == tbrdma_gid_is_zero(&gid));
}

static void test_gid_is_ipv4_mapped_rejects_others(void)
{
    tbrdma_gid_t gid;

    memset(&gid, 0, sizeof(gid));
    CU_ASSERT(0 == tbrdma_gid_is_ipv4_mapped(&gid));
    CU_ASSERT(1 == tbrdma_gid_is_zero(&gid));
    CU_ASSERT(0 == tbrdma_gid_parse("fe80::1", &gid));
    CU_ASSERT(0 == tbrdma_gid_is_ipv4_mapped(&gid));
    /* IPv4-compatible (deprecated ::a.b.c.d) is not mapped. */
    CU_ASSERT(0 == tbrdma_gid_parse("::10.0.0.1", &gid));
    CU_ASSERT(0 == tbrdma_gid_is_ipv4_mapped(&gid));
    /* 0:0:0:0:0:ffff:0:0 with a non-zero first byte is not mapped. */
    CU_ASSERT(0 == tbrdma_gid_parse("1::ffff:10.0.0.1", &gid));
    CU_ASSERT(0 == tbrdma_gid_is_ipv4_mapped(&gid));
}

static void test_gid_to_string_rfc5952(void)
{
    static const char *const texts[] = {"fe80::1", "::ffff:10.0.0.1", "::", "2001:db8::1:0:0:1",
                                        "fe80::b0c3:8aff:fe12:3456"};
    static const char *const canon_in[] = {"FE80:0:0:0:0:0:0:1", "2001:db8:0:0:1:0:0:1",
                                           "0:0:0:0:0:ffff:a9fe:102"};
    static const char *const canon_out[] = {"fe80::1", "2001:db8::1:0:0:1", "::ffff:169.254.1.2"};
    char buf[TBRDMA_GID_STR_MAX];
    tbrdma_gid_t gid;
    size_t i;

    for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        CU_ASSERT(0 == tbrdma_gid_parse(texts[i], &gid));
        CU_ASSERT(0 == tbrdma_gid_to_string(&gid, buf, sizeof(buf)));
        CU_ASSERT_STRING_EQUAL(buf, texts[i]);
    }
    for (i = 0; i < sizeof(canon_in) / sizeof(canon_in[0]); i++) {
        CU_ASSERT(0 == tbrdma_gid_parse(canon_in[i], &gid));
        CU_ASSERT(0 == tbrdma_gid_to_string(&gid, buf, sizeof(buf)));
        CU_ASSERT_STRING_EQUAL(buf, canon_out[i]);
    }
}

static void test_gid_to_string_nospace(void)
{
    char buf[16];
    tbrdma_gid_t gid;

    tbrdma_gid_from_ipv4(0x0a000001u, &gid);
    /* "::ffff:10.0.0.1" is 15 characters: fits in 16, not in 15. */
    CU_ASSERT(0 == tbrdma_gid_to_string(&gid, buf, 16));
    CU_ASSERT_STRING_EQUAL(buf, "::ffff:10.0.0.1");
    CU_ASSERT(-ENOSPC == tbrdma_gid_to_string(&gid, buf, 15));
    CU_ASSERT(-ENOSPC == tbrdma_gid_to_string(&gid, buf, 0));
}

static void test_gid_parse_invalid(void)
{
    static const char *const bad[] = {"",        "fe80::1::2",        "10.0.0.1",
                                      "fe80::g", "1:2:3:4:5:6:7:8:9", "::ffff:10.0.0.256",
                                      " fe80::1"};
    tbrdma_gid_t gid, before;
    size_t i;

    memset(&before, 0xab, sizeof(before));
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gid = before;
        CU_ASSERT(-EINVAL == tbrdma_gid_parse(bad[i], &gid));
        CU_ASSERT(0 == memcmp(&gid, &before, sizeof(gid))); /* untouched on failure */
    }
    CU_ASSERT(-EINVAL == tbrdma_gid_parse(NULL, &gid));
}

/* Apple's table: gid[0] link-local fe80::, gid[1] the mapped address, gid[2] empty. */
static void test_gid_find_ipv4_mapped_apple_table(void)
{
    tbrdma_gid_t table[3];

    memset(table, 0, sizeof(table));
    CU_ASSERT(0 == tbrdma_gid_parse("fe80::1c2b:3aff:fe4d:5e6f", &table[0]));
    tbrdma_gid_from_ipv4(0xc0a80001u, &table[1]);
    CU_ASSERT(1 == tbrdma_gid_find_ipv4_mapped(table, 3, 0));
    CU_ASSERT(1 == tbrdma_gid_find_ipv4_mapped(table, 3, 0xc0a80001u));
    CU_ASSERT(-1 == tbrdma_gid_find_ipv4_mapped(table, 3, 0xc0a80002u));
    CU_ASSERT(-1 == tbrdma_gid_find_ipv4_mapped(table, 1, 0));
    CU_ASSERT(-1 == tbrdma_gid_find_ipv4_mapped(table, 0, 0));
}

static void test_gid_find_ipv4_mapped_several(void)
{
    tbrdma_gid_t table[4];

    memset(table, 0, sizeof(table));
    tbrdma_gid_from_ipv4(0xa9fe0102u, &table[1]);             /* 169.254.1.2 */
    tbrdma_gid_from_ipv4(0xc0a80005u, &table[3]);             /* 192.168.0.5 */
    CU_ASSERT(1 == tbrdma_gid_find_ipv4_mapped(table, 4, 0)); /* first mapped entry */
    CU_ASSERT(3 == tbrdma_gid_find_ipv4_mapped(table, 4, 0xc0a80005u));
    CU_ASSERT(1 == tbrdma_gid_find_ipv4_mapped(table, 4, 0xa9fe0102u));
}

static void test_ipv4_to_string_cases(void)
{
    char buf[16];

    CU_ASSERT(0 == tbrdma_ipv4_to_string(0xc0a80001u, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(buf, "192.168.0.1");
    CU_ASSERT(0 == tbrdma_ipv4_to_string(0xffffffffu, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(buf, "255.255.255.255");
    CU_ASSERT(0 == tbrdma_ipv4_to_string(0, buf, sizeof(buf)));
    CU_ASSERT_STRING_EQUAL(buf, "0.0.0.0");
    CU_ASSERT(-ENOSPC == tbrdma_ipv4_to_string(0xffffffffu, buf, 15));
    CU_ASSERT(-ENOSPC == tbrdma_ipv4_to_string(0, buf, 0));
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_gid_from_ipv4_roundtrip),
    TBRDMA_UT_TEST(test_gid_is_ipv4_mapped_rejects_others),
    TBRDMA_UT_TEST(test_gid_to_string_rfc5952),
    TBRDMA_UT_TEST(test_gid_to_string_nospace),
    TBRDMA_UT_TEST(test_gid_parse_invalid),
    TBRDMA_UT_TEST(test_gid_find_ipv4_mapped_apple_table),
    TBRDMA_UT_TEST(test_gid_find_ipv4_mapped_several),
    TBRDMA_UT_TEST(test_ipv4_to_string_cases),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("tbrdma_gid", tests);
}
