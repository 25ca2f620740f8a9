/*
 * Unit tests of plugin/base/btl_tbrdma_procwatch.c (how the per-Mac agent sees a local rank die):
 * a running process is not gone; one killed with SIGKILL is seen gone while still a zombie; one
 * that is not the watcher's child (a grandchild, as the ranks are to the agent) is seen gone when
 * killed; a process that exits normally too; a pid that has exited already is refused with a
 * message naming it; the kill(pid, 0) fallback does the same, except for zombies (a guess that
 * errs towards "alive", as its header says). No timing is asserted: waits are bounded only so that
 * a broken watch fails instead of hanging.
 */
#include "base/btl_tbrdma_procwatch.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 10000 /* the longest any exit may take to be seen: a failure, not a timing */

/* A child that sleeps until it is killed. */
static pid_t sleeper(void)
{
    pid_t pid = fork();

    if (0 == pid) {
        for (;;) {
            pause();
        }
    }
    return pid;
}

static void test_procwatch_sigkill_seen(void)
{
    tbrdma_procwatch_t w;
    char err[256] = "";
    pid_t pid = sleeper();
    int status = 0;

    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_FATAL(0 == tbrdma_procwatch_open(&w, pid, err, sizeof(err)));
    CU_ASSERT(tbrdma_procwatch_fd(&w) >= 0);
    CU_ASSERT(0 == tbrdma_procwatch_gone(&w, 0));
    CU_ASSERT(0 == tbrdma_procwatch_gone(&w, 50)); /* still running after a wait */
    kill(pid, SIGKILL);
    CU_ASSERT(1 == tbrdma_procwatch_gone(&w, WAIT_MS)); /* a zombie: not reaped yet */
    CU_ASSERT(1 == tbrdma_procwatch_gone(&w, 0));       /* and stays gone */
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFSIGNALED(status) && SIGKILL == WTERMSIG(status));
    tbrdma_procwatch_close(&w);
    CU_ASSERT(-1 == tbrdma_procwatch_fd(&w));
    tbrdma_procwatch_close(&w); /* twice: a no-op */
}

/* The watcher is not the parent: a grandchild, reparented when its parent exits. */
static void test_procwatch_not_a_child(void)
{
    int fds[2];
    pid_t mid, grand = 0;
    tbrdma_procwatch_t w;
    char err[256] = "";
    int rc;

    CU_ASSERT_FATAL(0 == pipe(fds));
    mid = fork();
    CU_ASSERT_FATAL(mid >= 0);
    if (0 == mid) {
        pid_t g = sleeper();

        (void) !write(fds[1], &g, sizeof(g));
        _exit(0);
    }
    CU_ASSERT_FATAL(sizeof(grand) == read(fds[0], &grand, sizeof(grand)));
    waitpid(mid, NULL, 0);
    close(fds[0]);
    close(fds[1]);
    CU_ASSERT_FATAL(grand > 0);
    rc = tbrdma_procwatch_open(&w, grand, err, sizeof(err));
    CU_ASSERT(0 == rc && 0 == tbrdma_procwatch_gone(&w, 0));
    kill(grand, SIGKILL); /* whatever happened: no sleeper is left behind */
    CU_ASSERT(0 == rc && 1 == tbrdma_procwatch_gone(&w, WAIT_MS));
    tbrdma_procwatch_close(&w);
}

static void test_procwatch_normal_exit_and_gone_already(void)
{
    tbrdma_procwatch_t w;
    char err[256] = "";
    pid_t pid = fork();

    CU_ASSERT_FATAL(pid >= 0);
    if (0 == pid) {
        usleep(100 * 1000);
        _exit(3);
    }
    CU_ASSERT_FATAL(0 == tbrdma_procwatch_open(&w, pid, err, sizeof(err)));
    CU_ASSERT(1 == tbrdma_procwatch_gone(&w, WAIT_MS));
    tbrdma_procwatch_close(&w);
    waitpid(pid, NULL, 0);
    /* reaped: no such process any more */
    CU_ASSERT(ESRCH == tbrdma_procwatch_open(&w, pid, err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "process ") && NULL != strstr(err, "it has exited"));
    CU_ASSERT(EINVAL == tbrdma_procwatch_open(&w, 0, err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "process 0: no such process"));
}

static void test_procwatch_polling_fallback(void)
{
    tbrdma_procwatch_t w;
    char err[256] = "";
    pid_t pid = sleeper();

    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_FATAL(0 == tbrdma_procwatch_open_polling(&w, pid, err, sizeof(err)));
    CU_ASSERT(-1 == tbrdma_procwatch_fd(&w));
    CU_ASSERT(0 == tbrdma_procwatch_gone(&w, 0));
    kill(pid, SIGKILL);
    usleep(100 * 1000);
    CU_ASSERT(0 == tbrdma_procwatch_gone(&w, 0)); /* a zombie still answers kill(pid, 0) */
    waitpid(pid, NULL, 0);
    CU_ASSERT(1 == tbrdma_procwatch_gone(&w, WAIT_MS));
    CU_ASSERT(ESRCH == tbrdma_procwatch_open_polling(&w, pid, err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "kill(pid, 0): it has exited"));
    tbrdma_procwatch_close(&w);
    CU_ASSERT(-EBADF == tbrdma_procwatch_gone(&w, 0));
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_procwatch_sigkill_seen),
        TBRDMA_UT_TEST(test_procwatch_not_a_child),
        TBRDMA_UT_TEST(test_procwatch_normal_exit_and_gone_already),
        TBRDMA_UT_TEST(test_procwatch_polling_fallback),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("tbrdma_procwatch", tests);
}
