/*
 * Unit tests of plugin/core/tbrdma_hostfile.c: host lists (Open MPI's hostfile and --host
 * syntax, MLX's hostfile), and the three files written from a mesh's cables, each read back:
 * the mesh file and MLX's hostfile by tbrdma_mesh_spec_parse (what the plugin reads), MLX's
 * hostfile also checked against the rules mlx.launch documents (one "rdma" entry per host, null
 * on the diagonal, the k-th device of both rows of a pair being the same cable).
 */
#include "tbrdma_hostfile.h"
#include "tbrdma_json.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define BUF_MAX (64 * 1024)

static tbrdma_hostlist_t list;
static tbrdma_mesh_spec_t spec, back;
static char buf[BUF_MAX], err[512];

static void test_hostlist_ompi_hostfile(void)
{
    static const char text[] = "# four Macs\n"
                               "mac-a slots=2\n"
                               "\n"
                               "admin@mac-b   slots=4 max_slots=8   # a comment\n"
                               "mac-c\n"
                               "mac-a slots=1\n";

    CU_ASSERT_EQUAL_FATAL(tbrdma_hostlist_parse(text, &list, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(list.nhosts, 3);
    CU_ASSERT_STRING_EQUAL(list.hosts[0].name, "mac-a");
    CU_ASSERT_EQUAL(list.hosts[0].slots, 3); /* listed twice: the slots add up */
    CU_ASSERT_STRING_EQUAL(list.hosts[1].login, "admin@mac-b");
    CU_ASSERT_STRING_EQUAL(list.hosts[1].name, "mac-b");
    CU_ASSERT_EQUAL(list.hosts[1].slots, 4);
    CU_ASSERT_EQUAL(list.hosts[2].slots, 0);
}

static void test_hostlist_errors(void)
{
    list.nhosts = 99;
    CU_ASSERT_EQUAL(tbrdma_hostlist_parse("mac-a\nmac-b slots=x\n", &list, err, sizeof(err)),
                    -EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "hostfile line 2"));
    CU_ASSERT_EQUAL(list.nhosts, 99);
    CU_ASSERT_EQUAL(tbrdma_hostlist_parse("# nothing\n", &list, err, sizeof(err)), -EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no host"));
    CU_ASSERT_EQUAL(tbrdma_hostlist_parse("{\"hosts\": [{\"ips\": []}]}", &list, err, sizeof(err)),
                    -EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "hosts[0]: no \"ssh\""));
    CU_ASSERT_EQUAL(tbrdma_hostlist_parse_arg("mac-a,mac-b:0", &list, err, sizeof(err)), -EINVAL);
    CU_ASSERT_EQUAL(list.nhosts, 99);
}

static void test_hostlist_arg_and_find(void)
{
    CU_ASSERT_EQUAL_FATAL(
        tbrdma_hostlist_parse_arg("mac-a.local,mac-b:2,mac-c", &list, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(list.nhosts, 3);
    CU_ASSERT_STRING_EQUAL(list.hosts[1].name, "mac-b");
    CU_ASSERT_EQUAL(list.hosts[1].slots, 2);
    CU_ASSERT_EQUAL(tbrdma_hostlist_find(&list, "mac-a"), 0); /* short name */
    CU_ASSERT_EQUAL(tbrdma_hostlist_find(&list, "mac-c.local"), 2);
    CU_ASSERT_EQUAL(tbrdma_hostlist_find(&list, "mac-d"), -1);
}

/* MLX's documented 4x M3 Ultra hostfile: the hosts, and rank 0's coordinator address. */
static void test_hostlist_mlx_hostfile(void)
{
    static const char text[] =
        "{\"backend\": \"jaccl\", \"hosts\": [\n"
        "  {\"ssh\": \"m3-ultra-1\", \"ips\": [\"123.123.123.1\"], \"rdma\": [null, \"rdma_en5\", "
        "\"rdma_en4\", \"rdma_en3\"]},\n"
        "  {\"ssh\": \"m3-ultra-2\", \"ips\": [], \"rdma\": [\"rdma_en5\", null, \"rdma_en3\", "
        "\"rdma_en4\"]},\n"
        "  {\"ssh\": \"m3-ultra-3\", \"ips\": [], \"rdma\": [\"rdma_en4\", \"rdma_en3\", null, "
        "\"rdma_en5\"]},\n"
        "  {\"ssh\": \"m3-ultra-4\", \"ips\": [], \"rdma\": [\"rdma_en3\", \"rdma_en4\", "
        "\"rdma_en5\", null]}\n"
        "]}";

    CU_ASSERT_EQUAL_FATAL(tbrdma_hostlist_parse(text, &list, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(list.nhosts, 4);
    CU_ASSERT_STRING_EQUAL(list.hosts[0].login, "m3-ultra-1");
    CU_ASSERT_STRING_EQUAL(list.hosts[0].ipv4, "123.123.123.1");
    CU_ASSERT_STRING_EQUAL(list.hosts[3].name, "m3-ultra-4");
    CU_ASSERT_STRING_EQUAL(list.hosts[3].ipv4, "");
}

/* MLX's launcher also takes the hosts as a bare JSON list (no "backend", no "hosts"). */
static void test_hostlist_mlx_bare_list(void)
{
    static const char text[] =
        " [{\"ssh\": \"mac-a\", \"ips\": [\"10.0.0.1\"], \"rdma\": [null, "
        "\"rdma_en2\"]}, {\"ssh\": \"mac-b\", \"rdma\": [\"rdma_en2\", null]}]";

    CU_ASSERT_EQUAL_FATAL(tbrdma_hostlist_parse(text, &list, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(list.nhosts, 2);
    CU_ASSERT_STRING_EQUAL(list.hosts[0].ipv4, "10.0.0.1");
    CU_ASSERT_STRING_EQUAL(list.hosts[1].name, "mac-b");
    CU_ASSERT_NOT_EQUAL(tbrdma_hostlist_parse("[1, 2]", &list, err, sizeof(err)), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no \"ssh\" host name"));
}

/* 3 Macs: a-b joined by two cables (listed with mac-b's end first), a-c, b-c. */
static void make_cluster(void)
{
    static const char mesh[] = "mac-b:rdma_en4 mac-a:rdma_en3\n"
                               "mac-a:rdma_en2 mac-b:rdma_en2\n"
                               "mac-a:rdma_en4 mac-c:rdma_en2\n"
                               "mac-b:rdma_en3 mac-c:rdma_en3\n";

    CU_ASSERT_EQUAL_FATAL(tbrdma_mesh_spec_parse(mesh, &spec, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(
        tbrdma_hostlist_parse_arg("mac-a:2,mac-b,admin@mac-c", &list, err, sizeof(err)), 0);
    strcpy(list.hosts[0].ipv4, "10.0.1.11");
}

/* Every cable of spec is in back (either orientation), and the counts agree. */
static void assert_same_cables(void)
{
    int i, k, found;

    CU_ASSERT_EQUAL_FATAL(back.ncables, spec.ncables);
    for (i = 0; i < spec.ncables; i++) {
        const tbrdma_mesh_cable_t *c = &spec.cables[i];

        for (found = 0, k = 0; k < back.ncables && !found; k++) {
            const tbrdma_mesh_cable_t *b = &back.cables[k];

            found =
                (0 == strcmp(c->host[0], b->host[0]) && 0 == strcmp(c->device[0], b->device[0])
                 && 0 == strcmp(c->host[1], b->host[1]) && 0 == strcmp(c->device[1], b->device[1]))
                || (0 == strcmp(c->host[0], b->host[1]) && 0 == strcmp(c->device[0], b->device[1])
                    && 0 == strcmp(c->host[1], b->host[0])
                    && 0 == strcmp(c->device[1], b->device[0]));
        }
        CU_ASSERT(found);
        if (!found) {
            printf("\n    cable %s:%s %s:%s not read back\n", c->host[0], c->device[0], c->host[1],
                   c->device[1]);
        }
    }
}

static void test_write_ompi_hostfile(void)
{
    make_cluster();
    CU_ASSERT_EQUAL(tbrdma_hostfile_write_ompi(&list, buf, sizeof(buf)), strlen(buf));
    CU_ASSERT_STRING_EQUAL(buf, "mac-a slots=2\nmac-b\nadmin@mac-c\n");
    CU_ASSERT_EQUAL(tbrdma_hostlist_parse(buf, &list, err, sizeof(err)), 0);
    CU_ASSERT(3 == list.nhosts && 2 == list.hosts[0].slots);
    /* snprintf contract: the length needed, nothing written past the buffer */
    memset(buf, 'x', 8);
    CU_ASSERT_EQUAL(tbrdma_hostfile_write_ompi(&list, buf, 5), strlen("mac-a slots=2\nmac-b\n"
                                                                      "admin@mac-c\n"));
    CU_ASSERT_STRING_EQUAL(buf, "mac-");
    CU_ASSERT_EQUAL(buf[5], 'x');
}

static void test_write_mesh_file_round_trip(void)
{
    make_cluster();
    tbrdma_hostfile_write_mesh(&spec, buf, sizeof(buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\nmac-a:rdma_en2 mac-b:rdma_en2\n"));
    CU_ASSERT_EQUAL_FATAL(tbrdma_mesh_spec_parse(buf, &back, err, sizeof(err)), 0);
    assert_same_cables();
}

/* The "rdma" entry [row][col] of an MLX hostfile, as a JSON node. */
static int mlx_entry(const tbrdma_json_doc_t *doc, int row, int col)
{
    int h = tbrdma_json_first(doc, tbrdma_json_member(doc, tbrdma_json_root(doc), "hosts"));
    int e;

    while (0 <= h && 0 < row--) {
        h = tbrdma_json_next(doc, h);
    }
    e = tbrdma_json_first(doc, tbrdma_json_member(doc, h, "rdma"));
    while (0 <= e && 0 < col--) {
        e = tbrdma_json_next(doc, e);
    }
    return e;
}

static void test_write_mlx_hostfile(void)
{
    tbrdma_json_doc_t *doc = NULL;
    int ab, ba, i;

    make_cluster();
    tbrdma_hostfile_write_mlx(&list, &spec, "jaccl", buf, sizeof(buf));
    CU_ASSERT_EQUAL_FATAL(tbrdma_json_parse(buf, &doc, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_member(doc, 0, "backend")), "jaccl");
    for (i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(tbrdma_json_kind(doc, mlx_entry(doc, i, i)), TBRDMA_JSON_NULL);
        CU_ASSERT_EQUAL(tbrdma_json_kind(doc, mlx_entry(doc, i, 3)), TBRDMA_JSON_NONE);
    }
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, mlx_entry(doc, 0, 2)), "rdma_en4");
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, mlx_entry(doc, 2, 0)), "rdma_en2");
    /* two cables a-b: arrays in the same cable order, by mac-a's device (en2, then en3) */
    ab = mlx_entry(doc, 0, 1);
    ba = mlx_entry(doc, 1, 0);
    CU_ASSERT_EQUAL_FATAL(tbrdma_json_kind(doc, ab), TBRDMA_JSON_ARRAY);
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_first(doc, ab)), "rdma_en2");
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_first(doc, ba)), "rdma_en2");
    CU_ASSERT_STRING_EQUAL(
        tbrdma_json_string(doc, tbrdma_json_next(doc, tbrdma_json_first(doc, ab))), "rdma_en3");
    CU_ASSERT_STRING_EQUAL(
        tbrdma_json_string(doc, tbrdma_json_next(doc, tbrdma_json_first(doc, ba))), "rdma_en4");
    tbrdma_json_free(doc);
    /* read back by the plugin's parser (logins "admin@mac-c" are matched as mac-c) */
    CU_ASSERT_EQUAL_FATAL(tbrdma_mesh_spec_parse(buf, &back, err, sizeof(err)), 0);
    for (i = 0; i < back.ncables; i++) {
        CU_ASSERT_PTR_NULL(strchr(back.cables[i].host[0], '@'));
    }
    assert_same_cables();
    /* and by the host list reader: logins and rank 0's address */
    CU_ASSERT_EQUAL_FATAL(tbrdma_hostlist_parse(buf, &list, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(list.hosts[2].login, "admin@mac-c");
    CU_ASSERT_STRING_EQUAL(list.hosts[0].ipv4, "10.0.1.11");
}

static void test_write_mlx_hostfile_ring_and_missing_pair(void)
{
    make_cluster();
    spec.ncables = 1; /* only mac-b:rdma_en4 <-> mac-a:rdma_en3 */
    tbrdma_hostfile_write_mlx(&list, &spec, "jaccl-ring", buf, sizeof(buf));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"backend\": \"jaccl-ring\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"rdma\": [null, \"rdma_en3\", null]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"rdma\": [\"rdma_en4\", null, null]"));
    CU_ASSERT_EQUAL_FATAL(tbrdma_mesh_spec_parse(buf, &back, err, sizeof(err)), 0);
    assert_same_cables();
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_hostlist_ompi_hostfile),
    TBRDMA_UT_TEST(test_hostlist_errors),
    TBRDMA_UT_TEST(test_hostlist_arg_and_find),
    TBRDMA_UT_TEST(test_hostlist_mlx_hostfile),
    TBRDMA_UT_TEST(test_hostlist_mlx_bare_list),
    TBRDMA_UT_TEST(test_write_ompi_hostfile),
    TBRDMA_UT_TEST(test_write_mesh_file_round_trip),
    TBRDMA_UT_TEST(test_write_mlx_hostfile),
    TBRDMA_UT_TEST(test_write_mlx_hostfile_ring_and_missing_pair),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("hostfile", tests);
}
