/*
 * Unit tests of tbrdma_mesh_spec_parse (plugin/core/tbrdma_mesh_spec.c): our line format with
 * comments and line-numbered errors, MLX's hostfile JSON (the documented 4x M3 Ultra example,
 * multi-cable arrays, inconsistent matrices) and malformed JSON the strict reader must refuse.
 */
#include "tbrdma_mesh.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ERR_MAX 1024

static tbrdma_mesh_spec_t spec;
static char err[ERR_MAX];

/* 1 when spec holds the cable h0:d0 <-> h1:d1 (either orientation). */
static int has_cable(const char *h0, const char *d0, const char *h1, const char *d1)
{
    const tbrdma_mesh_cable_t *c;
    int i;

    for (i = 0; i < spec.ncables; i++) {
        c = &spec.cables[i];
        if ((0 == strcmp(c->host[0], h0) && 0 == strcmp(c->device[0], d0)
             && 0 == strcmp(c->host[1], h1) && 0 == strcmp(c->device[1], d1))
            || (0 == strcmp(c->host[1], h0) && 0 == strcmp(c->device[1], d0)
                && 0 == strcmp(c->host[0], h1) && 0 == strcmp(c->device[0], d1))) {
            return 1;
        }
    }
    return 0;
}

/* Parsing must fail with -EINVAL, leave spec untouched and say what (part of err). */
static void assert_parse_fails(const char *text, const char *want)
{
    spec.ncables = 12345;
    err[0] = '\0';
    CU_ASSERT(-EINVAL == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
    CU_ASSERT(12345 == spec.ncables);
    CU_ASSERT(NULL != strstr(err, want));
    if (NULL == strstr(err, want)) {
        printf("\n    expected \"%s\" in \"%s\"\n", want, err);
    }
}

static void test_mesh_spec_parse_lines(void)
{
    static const char text[] = "# three Macs, self-assigned addresses\n"
                               "\n"
                               "mac-a:rdma_en2 mac-b:rdma_en3\n"
                               "   mac-a:rdma_en3\tmac-c:rdma_en2   # second cable\n"
                               "mac-b:rdma_en2 mac-c.local:rdma_en3";

    CU_ASSERT(0 == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
    CU_ASSERT(3 == spec.ncables);
    CU_ASSERT(has_cable("mac-a", "rdma_en2", "mac-b", "rdma_en3"));
    CU_ASSERT(has_cable("mac-a", "rdma_en3", "mac-c", "rdma_en2"));
    CU_ASSERT(has_cable("mac-b", "rdma_en2", "mac-c.local", "rdma_en3"));
    CU_ASSERT_STRING_EQUAL(spec.cables[0].host[0], "mac-a");
    CU_ASSERT_STRING_EQUAL(spec.cables[0].device[1], "rdma_en3");
}

static void test_mesh_spec_parse_empty(void)
{
    CU_ASSERT(0 == tbrdma_mesh_spec_parse("", &spec, err, sizeof(err)));
    CU_ASSERT(0 == spec.ncables);
    CU_ASSERT(0 == tbrdma_mesh_spec_parse("# nothing\n\n  \n", &spec, err, sizeof(err)));
    CU_ASSERT(0 == spec.ncables);
}

static void test_mesh_spec_parse_line_errors(void)
{
    char longname[128];

    assert_parse_fails("mac-a:rdma_en2 mac-b:rdma_en3\nmac-a:rdma_en3\n",
                       "mesh spec line 2: expected \"hostA:device hostB:device\"");
    assert_parse_fails("\n\nmac-a rdma_en2 mac-b:rdma_en3\n",
                       "mesh spec line 3: expected \"hostA:device hostB:device\"");
    assert_parse_fails("mac-a:rdma_en2 mac-b:rdma_en3 mac-c:rdma_en4\n",
                       "mesh spec line 1: unexpected \"mac-c:rdma_en4\" after the second end");
    assert_parse_fails("mac-a:rdma_en2 mac-a:rdma_en3\n",
                       "mesh spec line 1: cable from host mac-a to itself");
    assert_parse_fails("mac-a:rdma_en2 mac-b:rdma_en3\n# x\nmac-c:rdma_en2 mac-b:rdma_en3\n",
                       "mesh spec line 3: mac-b:rdma_en3 is the end of two cables");
    assert_parse_fails(":rdma_en2 mac-b:rdma_en3", "mesh spec line 1: host name \"\" is empty");
    assert_parse_fails("mac-a: mac-b:rdma_en3", "mesh spec line 1: device name \"\" of host mac-a");
    snprintf(longname, sizeof(longname), "mac-a:rdma_%040d mac-b:rdma_en2", 0);
    assert_parse_fails(longname, "mesh spec line 1: device name \"rdma_000");
    memset(longname, 'h', 64);
    snprintf(longname + 64, sizeof(longname) - 64, ":rdma_en2 mac-b:rdma_en2");
    assert_parse_fails(longname, "mesh spec line 1: host name \"hhhh");
}

/* The M3 Ultra cluster of MLX's docs (4 Macs, one cable per pair). */
static const char mlx_example[] =
    "{\n"
    "  \"backend\": \"jaccl\",\n"
    "  \"envs\": [\"MLX_METAL_FAST_SYNCH=1\"],\n"
    "  \"hosts\": [\n"
    "    {\"ssh\": \"m3-ultra-1\", \"ips\": [\"123.123.123.1\"],\n"
    "     \"rdma\": [null, \"rdma_en5\", \"rdma_en4\", \"rdma_en3\"]},\n"
    "    {\"ssh\": \"m3-ultra-2\", \"ips\": [], \"rdma\": [\"rdma_en5\", null, \"rdma_en3\", "
    "\"rdma_en4\"]},\n"
    "    {\"ssh\": \"m3-ultra-3\", \"ips\": [], \"rdma\": [\"rdma_en4\", \"rdma_en3\", null, "
    "\"rdma_en5\"]},\n"
    "    {\"ssh\": \"m3-ultra-4\", \"ips\": [], \"rdma\": [\"rdma_en3\", \"rdma_en4\", "
    "\"rdma_en5\", null]}\n"
    "  ]\n"
    "}\n";

static void test_mesh_spec_parse_mlx_example(void)
{
    CU_ASSERT(0 == tbrdma_mesh_spec_parse(mlx_example, &spec, err, sizeof(err)));
    CU_ASSERT(6 == spec.ncables);
    CU_ASSERT(has_cable("m3-ultra-1", "rdma_en5", "m3-ultra-2", "rdma_en5"));
    CU_ASSERT(has_cable("m3-ultra-1", "rdma_en4", "m3-ultra-3", "rdma_en4"));
    CU_ASSERT(has_cable("m3-ultra-1", "rdma_en3", "m3-ultra-4", "rdma_en3"));
    CU_ASSERT(has_cable("m3-ultra-2", "rdma_en3", "m3-ultra-3", "rdma_en3"));
    CU_ASSERT(has_cable("m3-ultra-2", "rdma_en4", "m3-ultra-4", "rdma_en4"));
    CU_ASSERT(has_cable("m3-ultra-3", "rdma_en5", "m3-ultra-4", "rdma_en5"));
}

/* jaccl-ring style: two cables per neighbour, k-th names paired; user@ stripped; escapes. */
static void test_mesh_spec_parse_mlx_arrays(void)
{
    static const char text[] =
        "  {\"hosts\": [{\"ssh\": \"admin@mac-a\", \"rdma\": [null, [\"rdma_en2\", \"rdma_en3\"], "
        "null]}, {\"ssh\": \"mac-\\u0062\", \"rdma\": [[\"rdma_en4\", \"rdma_en5\"], null, "
        "\"rdma_en6\"]}, {\"ssh\": \"mac-c\", \"rdma\": [[], \"rdma_en\\/7\", null], "
        "\"x\": {\"n\": -1.5e+3, \"t\": true, \"f\": false, \"s\": \"\\\"\\\\\\b\\f\\n\\r\\t"
        "\\ud83d\\ude00\"}}]}";

    CU_ASSERT(0 == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
    CU_ASSERT(3 == spec.ncables);
    CU_ASSERT(has_cable("mac-a", "rdma_en2", "mac-b", "rdma_en4"));
    CU_ASSERT(has_cable("mac-a", "rdma_en3", "mac-b", "rdma_en5"));
    CU_ASSERT(has_cable("mac-b", "rdma_en6", "mac-c", "rdma_en/7"));
}

/* The same hosts as a bare JSON list, which MLX's launcher also takes. */
static void test_mesh_spec_parse_mlx_bare_list(void)
{
    static const char text[] = "\n[{\"ssh\": \"mac-a\", \"rdma\": [null, \"rdma_en2\"]},"
                               " {\"ssh\": \"mac-b\", \"rdma\": [\"rdma_en3\", null]}]";

    CU_ASSERT(0 == tbrdma_mesh_spec_parse(text, &spec, err, sizeof(err)));
    CU_ASSERT(1 == spec.ncables);
    CU_ASSERT(has_cable("mac-a", "rdma_en2", "mac-b", "rdma_en3"));
    assert_parse_fails("[\"mac-a\"]", "hostfile hosts[0]");
}

static void test_mesh_spec_parse_mlx_inconsistent(void)
{
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [null, \"rdma_en2\"]},"
                       "{\"ssh\": \"b\", \"rdma\": [null, null]}]}",
                       "hostfile: host a lists 1 device(s) for host b but host b lists 0 for "
                       "host a");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [null, [\"x\", \"y\"]]},"
                       "{\"ssh\": \"b\", \"rdma\": [\"z\", null]}]}",
                       "hostfile: host a lists 2 device(s) for host b but host b lists 1 for "
                       "host a");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [null, \"x\", null]},"
                       "{\"ssh\": \"b\", \"rdma\": [\"z\", null]}]}",
                       "hostfile host a: \"rdma\" has 3 entries, expected 2 (one per host)");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [\"w\", \"x\"]},"
                       "{\"ssh\": \"b\", \"rdma\": [\"z\", null]}]}",
                       "hostfile host a: its own \"rdma\" entry (index 0) must be null");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [null, 5]},"
                       "{\"ssh\": \"b\", \"rdma\": [\"z\", null]}]}",
                       "hostfile host a: \"rdma\" entry for host b must be null, a device name "
                       "or an array of names");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [null, \"x\"]},"
                       "{\"ssh\": \"a\", \"rdma\": [\"z\", null]}]}",
                       "hostfile: host a is listed twice");
    assert_parse_fails("{\"hosts\": [{\"ips\": [], \"rdma\": [null]}]}",
                       "hostfile hosts[0]: no \"ssh\" host name");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"ips\": []}]}",
                       "hostfile host a: no \"rdma\" device array");
    assert_parse_fails("{\"backend\": \"jaccl\"}", "hostfile: no \"hosts\" array");
    assert_parse_fails("{\"hosts\": [{\"ssh\": \"a\", \"rdma\": [null, \"x\"]},"
                       "{\"ssh\": \"b\", \"rdma\": [\"x\", null]},"
                       "{\"ssh\": \"c\", \"rdma\": [\"x\", null, null]}]}",
                       "hostfile host a: \"rdma\" has 2 entries, expected 3");
}

static void test_mesh_spec_parse_json_malformed(void)
{
    char deep[256];
    int i;

    assert_parse_fails("{\"hosts\": [", "hostfile JSON line 1 column 12: unexpected end of text");
    assert_parse_fails("{\"hosts\": [],}", "expected a member name");
    assert_parse_fails("{\"hosts\": [1,]}", "unexpected character");
    assert_parse_fails("{\"hosts\" [] }", "expected ':'");
    assert_parse_fails("{\"hosts\": []} x", "text after the JSON value");
    assert_parse_fails("{\"hosts\": [\"abc]}", "unterminated string");
    assert_parse_fails("{\"hosts\": [\"a\tb\"]}", "control character in a string");
    assert_parse_fails("{\"hosts\": [\"\\x\"]}", "bad escape in a string");
    assert_parse_fails("{\"hosts\": [\"\\u12g4\"]}", "bad \\u escape");
    assert_parse_fails("{\"hosts\": [\"\\u0000\"]}", "\\u0000 in a string");
    assert_parse_fails("{\"hosts\": [\"\\ud800x\"]}", "high surrogate without its low half");
    assert_parse_fails("{\"hosts\": [\"\\udc00\"]}", "lone low surrogate");
    assert_parse_fails("{\"hosts\": [01]}", "expected ',' or ']'");
    assert_parse_fails("{\"hosts\": [1.]}", "bad number fraction");
    assert_parse_fails("{\"hosts\": [1e]}", "bad number exponent");
    assert_parse_fails("{\"hosts\": [-]}", "bad number");
    assert_parse_fails("{\"hosts\": [nul]}", "unexpected character");
    assert_parse_fails("{\"hosts\": {\"a\": 1 \"b\": 2}}", "expected ',' or '}'");
    assert_parse_fails("{\n  \"hosts\": [\n    tru\n  ]\n}", "hostfile JSON line 3 column 5");
    /* Nesting beyond the bound is refused, not recursed into. */
    deep[0] = '{';
    strcpy(deep + 1, "\"hosts\": ");
    for (i = 0; i < 40; i++) {
        strcat(deep, "[");
    }
    assert_parse_fails(deep, "nested too deeply");
}

static void test_mesh_spec_parse_err_truncation(void)
{
    char small[16];

    memset(small, 'x', sizeof(small));
    CU_ASSERT(-EINVAL == tbrdma_mesh_spec_parse("a:b\n", &spec, small, 10));
    CU_ASSERT_STRING_EQUAL(small, "mesh spec");
    CU_ASSERT('x' == small[10]);
    CU_ASSERT(-EINVAL == tbrdma_mesh_spec_parse("a:b\n", &spec, NULL, 0));
    CU_ASSERT(-EINVAL == tbrdma_mesh_spec_parse(NULL, &spec, NULL, 0));
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_mesh_spec_parse_lines),
    TBRDMA_UT_TEST(test_mesh_spec_parse_empty),
    TBRDMA_UT_TEST(test_mesh_spec_parse_line_errors),
    TBRDMA_UT_TEST(test_mesh_spec_parse_mlx_example),
    TBRDMA_UT_TEST(test_mesh_spec_parse_mlx_arrays),
    TBRDMA_UT_TEST(test_mesh_spec_parse_mlx_bare_list),
    TBRDMA_UT_TEST(test_mesh_spec_parse_mlx_inconsistent),
    TBRDMA_UT_TEST(test_mesh_spec_parse_json_malformed),
    TBRDMA_UT_TEST(test_mesh_spec_parse_err_truncation),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("tbrdma_mesh_spec", tests);
}
