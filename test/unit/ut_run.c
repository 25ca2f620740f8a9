/*
 * ut_run.c: the CUnit runner shared by the unit test programs of test/unit (see ut_run.h).
 * Owns the registry for the duration of one run; nothing else in a test program touches it.
 */
#include "ut_run.h"

#include <CUnit/Basic.h>
#include <stddef.h>

/* Automake's exit status for "the test could not run at all" (not a failed assertion). */
#define UT_HARD_ERROR 99

/* Registers the suite and its tests; 0, or -1 when CUnit refused one of them. */
static int suite_register(const char *suite_name, const tbrdma_ut_test_t *tests)
{
    CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
    const tbrdma_ut_test_t *t;

    if (NULL == suite) {
        return -1;
    }
    for (t = tests; NULL != t->name; t++) {
        if (NULL == CU_add_test(suite, t->name, t->fn)) {
            return -1;
        }
    }
    return 0;
}

int tbrdma_ut_run(const char *suite_name, const tbrdma_ut_test_t *tests)
{
    unsigned int failures;

    if (CUE_SUCCESS != CU_initialize_registry()) {
        return UT_HARD_ERROR;
    }
    if (0 != suite_register(suite_name, tests)) {
        CU_cleanup_registry();
        return UT_HARD_ERROR;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    /* 1, not the count: 77 and 99 mean skip and hard error to automake, and 256 wraps to 0. */
    return (0 == failures) ? 0 : 1;
}
