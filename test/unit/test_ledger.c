/*
 * Unit tests of plugin/core/tbrdma_ledger.c (the slot ledger's records): a record's line and
 * back, lines that are not records refused, the verdicts (another host, an earlier boot, live,
 * dead), and the sentence naming the slots dead processes hold.
 */
#include "tbrdma_ledger.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

static tbrdma_ledger_rec_t rec(const char *host, long pid, long long boot, int qps2, int qps3)
{
    tbrdma_ledger_rec_t r;

    memset(&r, 0, sizeof(r));
    snprintf(r.host, sizeof(r.host), "%s", host);
    snprintf(r.job, sizeof(r.job), "[1234,1]");
    r.pid = pid;
    r.boot = boot;
    r.ndevs = 2;
    snprintf(r.devs[0].name, sizeof(r.devs[0].name), "rdma_en2");
    r.devs[0].qps = qps2;
    snprintf(r.devs[1].name, sizeof(r.devs[1].name), "rdma_en3");
    r.devs[1].qps = qps3;
    return r;
}

static void test_ledger_round_trip(void)
{
    tbrdma_ledger_rec_t r = rec("mac-b", 4242, 1733000000, 3, 2), back;
    char line[TBRDMA_LEDGER_LINE];
    int n = tbrdma_ledger_format(&r, line, sizeof(line));

    CU_ASSERT_STRING_EQUAL(line, "tbrdma-ledger 1 host=mac-b pid=4242 boot=1733000000 "
                                 "job=[1234,1] rdma_en2=3 rdma_en3=2\n");
    CU_ASSERT(n == (int) strlen(line));
    CU_ASSERT(0 == tbrdma_ledger_parse(line, &back));
    CU_ASSERT_STRING_EQUAL(back.host, "mac-b");
    CU_ASSERT_STRING_EQUAL(back.job, "[1234,1]");
    CU_ASSERT(4242 == back.pid && 1733000000 == back.boot && 2 == back.ndevs);
    CU_ASSERT(3 == tbrdma_ledger_qps_on(&back, "rdma_en2"));
    CU_ASSERT(2 == tbrdma_ledger_qps_on(&back, "rdma_en3"));
    CU_ASSERT(0 == tbrdma_ledger_qps_on(&back, "rdma_en4"));
    line[n - 1] = '\0'; /* the newline is optional */
    CU_ASSERT(0 == tbrdma_ledger_parse(line, &back));
    CU_ASSERT(-ENOSPC == tbrdma_ledger_format(&r, line, 40));
}

static void test_ledger_refuses_what_is_not_a_record(void)
{
    static const char *bad[] = {
        "",
        "tbrdma-ledger 2 host=a pid=1 boot=1 job=j",             /* another version */
        "tbrdma-ledger 1 host=a pid=1 boot=1",                   /* no job */
        "tbrdma-ledger 1 host=a boot=1 job=j rdma_en2=1",        /* no pid */
        "tbrdma-ledger 1 host=a pid=0 boot=1 job=j",             /* pid 0 */
        "tbrdma-ledger 1 host=a pid=-5 boot=1 job=j",            /* negative */
        "tbrdma-ledger 1 host=a pid=1x boot=1 job=j",            /* not a number */
        "tbrdma-ledger 1 host= pid=1 boot=1 job=j",              /* empty host */
        "tbrdma-ledger 1 host=a pid=1 boot=1 job=j rdma_en2",    /* a device without count */
        "tbrdma-ledger 1 host=a pid=1 boot=1 job=j rdma_en2=-1", /* negative count */
        "tbrdma-ledger 1 host=a pid=1 boot=1 job=j  rdma_en2=1", /* two spaces: an empty field */
        "tbrdma-ledger 1 host=a pid=1 boot=1 job=j\nmore",       /* text after the line */
        "tbrdma-ledger 1 host=a pid=1 boot=1 job=j a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1 i=1",
    };
    tbrdma_ledger_rec_t r;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CU_ASSERT(-EINVAL == tbrdma_ledger_parse(bad[i], &r));
    }
    CU_ASSERT(0 == tbrdma_ledger_parse("tbrdma-ledger 1 host=a pid=1 boot=0 job=j", &r));
    CU_ASSERT(0 == r.ndevs);
    r = rec("two words", 1, 1, 1, 1); /* a name the line could not carry */
    CU_ASSERT(-EINVAL
              == tbrdma_ledger_format(&r, (char[TBRDMA_LEDGER_LINE]){0}, TBRDMA_LEDGER_LINE));
}

static void test_ledger_verdicts(void)
{
    tbrdma_ledger_rec_t r = rec("mac-b", 4242, 1000, 3, 0);

    CU_ASSERT(TBRDMA_LEDGER_OTHER_HOST == tbrdma_ledger_judge(&r, "mac-a", 1000, 0));
    CU_ASSERT(TBRDMA_LEDGER_STALE == tbrdma_ledger_judge(&r, "mac-b", 2000, 0));
    CU_ASSERT(TBRDMA_LEDGER_STALE == tbrdma_ledger_judge(&r, "mac-b", 2000, 1));
    CU_ASSERT(TBRDMA_LEDGER_LIVE == tbrdma_ledger_judge(&r, "mac-b", 1000, 1));
    CU_ASSERT(TBRDMA_LEDGER_DEAD == tbrdma_ledger_judge(&r, "mac-b", 1000, 0));
}

static void test_ledger_tally_and_sentence(void)
{
    tbrdma_ledger_tally_t t;
    tbrdma_ledger_rec_t a = rec("mac-b", 4242, 1, 3, 3), b = rec("mac-b", 4250, 1, 0, 2);
    char msg[512];

    memset(&t, 0, sizeof(t));
    CU_ASSERT(0 == tbrdma_ledger_explain(&t, "mac-b", "rdma_en3", msg, sizeof(msg)));
    CU_ASSERT_STRING_EQUAL(msg, "");
    tbrdma_ledger_tally_add(&t, &a, "rdma_en3");
    tbrdma_ledger_tally_add(&t, &b, "rdma_en2"); /* holds none there: not counted */
    CU_ASSERT(3 == t.qps && 1 == t.procs);
    tbrdma_ledger_tally_add(&t, &b, "rdma_en3");
    CU_ASSERT(5 == t.qps && 2 == t.procs);
    CU_ASSERT_STRING_EQUAL(t.who, "pid 4242 (job [1234,1]) 3, pid 4250 (job [1234,1]) 2");
    tbrdma_ledger_explain(&t, "mac-b", "rdma_en3", msg, sizeof(msg));
    CU_ASSERT(NULL
              != strstr(msg, "device rdma_en3: 5 of its queue pairs are held by 2 tbrdma "
                             "processes of mac-b that ended without releasing them"));
    CU_ASSERT(NULL != strstr(msg, "pid 4242 (job [1234,1]) 3"));
    CU_ASSERT(NULL != strstr(msg, "only when mac-b restarts; fix: restart mac-b"));
    for (int i = 0; i < 40; i++) { /* a long list is cut, never overrun */
        tbrdma_ledger_tally_add(&t, &a, "rdma_en3");
    }
    CU_ASSERT(strlen(t.who) < sizeof(t.who));
    CU_ASSERT(125 == t.qps && 42 == t.procs);
}

/* Other jobs' live slots: their own sentence, naming the processes, the limit and the fix. */
static void test_ledger_live_sentence(void)
{
    tbrdma_ledger_tally_t t;
    tbrdma_ledger_rec_t a = rec("mac-b", 4242, 1, 3, 3);
    char msg[512];

    memset(&t, 0, sizeof(t));
    CU_ASSERT(0 == tbrdma_ledger_explain_live(&t, "mac-b", "rdma_en3", msg, sizeof(msg)));
    CU_ASSERT_STRING_EQUAL(msg, "");
    tbrdma_ledger_tally_add(&t, &a, "rdma_en3");
    tbrdma_ledger_explain_live(&t, "mac-b", "rdma_en3", msg, sizeof(msg));
    CU_ASSERT(NULL
              != strstr(msg, "device rdma_en3: 3 of its queue pairs are in use by 1 tbrdma "
                             "process of other jobs running now on mac-b: pid 4242 (job "
                             "[1234,1]) 3; Apple allows 10 per device"));
    CU_ASSERT(NULL != strstr(msg, "fix: start this job when they have ended"));
    CU_ASSERT(NULL == strstr(msg, "restart")); /* live slots come back without a restart */
    tbrdma_ledger_explain_live(&t, "mac-b", "rdma_en3", msg, 40); /* cut, never overrun */
    CU_ASSERT(39 == strlen(msg));
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_ledger_round_trip),
        TBRDMA_UT_TEST(test_ledger_refuses_what_is_not_a_record),
        TBRDMA_UT_TEST(test_ledger_verdicts),
        TBRDMA_UT_TEST(test_ledger_tally_and_sentence),
        TBRDMA_UT_TEST(test_ledger_live_sentence),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_ledger", tests);
}
