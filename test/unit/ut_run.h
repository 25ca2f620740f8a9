/*
 * ut_run.h: the one main() body of the CUnit unit tests in test/unit. Each test program lists
 * its tests in a NULL-terminated table and hands it to tbrdma_ut_run, which registers one suite,
 * runs it verbosely (every test printed) and turns the outcome into the automake exit status.
 */
#ifndef TBRDMA_UT_RUN_H
#define TBRDMA_UT_RUN_H

/** One test of a suite: the name CUnit prints and the function it runs. */
typedef struct tbrdma_ut_test {
    const char *name;
    void (*fn)(void);
} tbrdma_ut_test_t;

/* Kept on one line each: clang-format would split the braces over several. */
/* clang-format off */
/** Table entry for test function FN, named as CU_ADD_TEST would name it. */
#define TBRDMA_UT_TEST(fn) {#fn, fn}

/** Last entry of every table. */
#define TBRDMA_UT_END {NULL, NULL}
/* clang-format on */

/**
 * Runs the tests of TESTS (ended by TBRDMA_UT_END) as one CUnit suite named SUITE_NAME, printing
 * each test and the run summary. Returns the exit status for main(): 0 when every assertion
 * passed, 1 when any failed, 99 (automake's hard error) when CUnit could not be set up.
 */
int tbrdma_ut_run(const char *suite_name, const tbrdma_ut_test_t *tests);

#endif /* TBRDMA_UT_RUN_H */
