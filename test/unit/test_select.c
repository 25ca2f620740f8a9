/*
 * Unit tests of plugin/core/tbrdma_select.c: include and exclude lists of device or interface
 * names with shell globs, empty lists, and the error when both lists are set.
 */
#include "tbrdma_select.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <string.h>

static void test_select_device_empty_lists_select_all(void)
{
    CU_ASSERT(1 == tbrdma_select_device("rdma_en2", "en2", NULL, NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en2", "en2", "", ""));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en2", NULL, " , ", NULL));
}

static void test_select_device_include(void)
{
    CU_ASSERT(1 == tbrdma_select_device("rdma_en2", "en2", "rdma_en2,rdma_en3", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en3", "en3", "rdma_en2, rdma_en3", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en4", "en4", "rdma_en2,rdma_en3", NULL));
    /* The interface name selects too. */
    CU_ASSERT(1 == tbrdma_select_device("rdma_en4", "en4", "en4", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en4", NULL, "en4", NULL));
    /* Whole-name matches only. */
    CU_ASSERT(0 == tbrdma_select_device("rdma_en22", "en22", "rdma_en2,en2", NULL));
}

static void test_select_device_exclude(void)
{
    CU_ASSERT(0 == tbrdma_select_device("rdma_en2", "en2", NULL, "rdma_en2"));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en3", "en3", NULL, "rdma_en2"));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en3", "en3", "", "en3 ,en5"));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en5", "en5", "", "en3 ,en5"));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en4", "en4", "", "en3 ,en5"));
}

static void test_select_device_globs(void)
{
    CU_ASSERT(1 == tbrdma_select_device("rdma_en3", "en3", "rdma_en*", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en3", "en3", "rdma_en?", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en13", "en13", "rdma_en?", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en13", "en13", "en1*", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rxe0", NULL, "*", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en3", "en3", "*en*3", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en3", "en3", "*en*4", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en3", "en3", "r**a_*", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en3", "en3", NULL, "rdma_*"));
    CU_ASSERT(1 == tbrdma_select_device("rxe0", "eth0", NULL, "rdma_*"));
    /* Backtracking: the first '*' must not swallow what the tail needs. */
    CU_ASSERT(1 == tbrdma_select_device("aaab", NULL, "*a?b", NULL));
    CU_ASSERT(0 == tbrdma_select_device("aaab", NULL, "*a?c", NULL));
    /* bracket classes, as in the shell */
    CU_ASSERT(1 == tbrdma_select_device("rdma_en2", "en2", "rdma_en[23]", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en4", "en4", "rdma_en[23]", NULL));
    CU_ASSERT(1 == tbrdma_select_device("rdma_en5", "en5", "en[4-6]", NULL));
    CU_ASSERT(0 == tbrdma_select_device("rdma_en5", "en5", NULL, "rdma_en[!2-4]"));
    CU_ASSERT(0 == tbrdma_select_device("", NULL, "?", NULL));
}

static void test_select_validate_one_list(void)
{
    char err[256] = "untouched";

    CU_ASSERT(0 == tbrdma_select_validate("rdma_en2", NULL, err, sizeof(err)));
    CU_ASSERT(0 == tbrdma_select_validate(NULL, "rdma_en2", err, sizeof(err)));
    CU_ASSERT(0 == tbrdma_select_validate("", "", err, sizeof(err)));
    CU_ASSERT(0 == tbrdma_select_validate("rdma_en2", " ", err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "untouched");
}

static void test_select_validate_both_set(void)
{
    char err[256], small[20];

    CU_ASSERT(-EINVAL == tbrdma_select_validate("rdma_en2", "en3", err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(err, "btl_tbrdma_if_include (\"rdma_en2\") and btl_tbrdma_if_exclude "
                                "(\"en3\") are both set; they are mutually exclusive: set only "
                                "one of them");
    CU_ASSERT(-EINVAL == tbrdma_select_validate("rdma_en2", "en3", small, sizeof(small)));
    CU_ASSERT(sizeof(small) - 1 == strlen(small));
    CU_ASSERT(-EINVAL == tbrdma_select_validate("rdma_en2", "en3", NULL, 0));
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_select_device_empty_lists_select_all),
    TBRDMA_UT_TEST(test_select_device_include),
    TBRDMA_UT_TEST(test_select_device_exclude),
    TBRDMA_UT_TEST(test_select_device_globs),
    TBRDMA_UT_TEST(test_select_validate_one_list),
    TBRDMA_UT_TEST(test_select_validate_both_set),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("tbrdma_select", tests);
}
