/*
 * Unit tests of plugin/base/btl_tbrdma_shmseg.c (the job's shared memory segment on one Mac):
 * names within macOS's 31 characters and apart per job and token, a segment created once and
 * seen by an attacher, and an attacher refusing what it must: no such segment, another user's,
 * one open to other users, one too small. The segment's name goes with its creator.
 */
#include "base/btl_tbrdma_shmseg.h"

#include "ut_run.h"

#include <CUnit/Basic.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh name for this test process. */
static void fresh_name(char *name, size_t len)
{
    uint64_t token = 0;

    CU_ASSERT_FATAL(0 == tbrdma_shmseg_token(&token));
    CU_ASSERT_FATAL(0 < tbrdma_shmseg_name(name, len, "test_shmseg", token));
}

static void test_shmseg_names(void)
{
    char a[64], b[64], c[64], tiny[8];
    uint64_t t1 = 0, t2 = 0;

    CU_ASSERT(0 == tbrdma_shmseg_token(&t1) && 0 == tbrdma_shmseg_token(&t2));
    CU_ASSERT(t1 != t2); /* 64 random bits twice: equal once in 2^64 */
    CU_ASSERT(30 == tbrdma_shmseg_name(a, sizeof(a), "[1234,1]", t1));
    CU_ASSERT(30 == tbrdma_shmseg_name(b, sizeof(b), "[1234,1]", t2));
    CU_ASSERT(30 == tbrdma_shmseg_name(c, sizeof(c), "[1234,2]", t1));
    CU_ASSERT(strlen(a) <= TBRDMA_SHMSEG_NAME_MAX && '/' == a[0] && NULL == strchr(a + 1, '/'));
    CU_ASSERT(0 != strcmp(a, b) && 0 != strcmp(a, c));
    CU_ASSERT(0 == strncmp(a, b, 13)); /* the same job's hash */
    CU_ASSERT(-1 == tbrdma_shmseg_name(tiny, sizeof(tiny), "[1234,1]", t1));
}

static void test_shmseg_create_and_attach(void)
{
    tbrdma_shmseg_t owner, rank;
    char name[64], err[256];

    fresh_name(name, sizeof(name));
    CU_ASSERT_FATAL(0 == tbrdma_shmseg_create(&owner, name, 8192, err, sizeof(err)));
    CU_ASSERT(EEXIST == tbrdma_shmseg_create(&rank, name, 8192, err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, name) && NULL != strstr(err, "cannot create it"));
    CU_ASSERT(0 == ((const char *) owner.base)[8191]); /* zeroed */
    memcpy(owner.base, "tbrdma", 7);
    CU_ASSERT_FATAL(0 == tbrdma_shmseg_attach(&rank, name, 4096, geteuid(), err, sizeof(err)));
    CU_ASSERT_STRING_EQUAL(rank.base, "tbrdma");
    tbrdma_shmseg_detach(&rank); /* an attacher leaves the name */
    CU_ASSERT(0 == tbrdma_shmseg_attach(&rank, name, 4096, geteuid(), err, sizeof(err)));
    tbrdma_shmseg_detach(&owner); /* the creator takes it away: attached mappings stay */
    CU_ASSERT_STRING_EQUAL(rank.base, "tbrdma");
    tbrdma_shmseg_detach(&rank);
    CU_ASSERT(ENOENT == tbrdma_shmseg_attach(&rank, name, 4096, geteuid(), err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, name) && NULL != strstr(err, "cannot open it"));
    CU_ASSERT(EINVAL
              == tbrdma_shmseg_create(&owner, "/a-name-longer-than-macos-allows-it", 4096, err,
                                      sizeof(err)));
}

static void test_shmseg_attach_refusals(void)
{
    tbrdma_shmseg_t owner, rank;
    char name[64], err[256];
    int fd;

    fresh_name(name, sizeof(name));
    CU_ASSERT_FATAL(0 == tbrdma_shmseg_create(&owner, name, 4096, err, sizeof(err)));
    CU_ASSERT(EPERM == tbrdma_shmseg_attach(&rank, name, 4096, geteuid() + 1, err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "belongs to user") && NULL != strstr(err, name));
    CU_ASSERT(EMSGSIZE == tbrdma_shmseg_attach(&rank, name, 8192, geteuid(), err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "fewer than 8192"));
    fd = shm_open(name, O_RDWR, 0);
    CU_ASSERT_FATAL(0 <= fd);
    CU_ASSERT(0 == fchmod(fd, 0640)); /* another user's bug, or a planted segment */
    close(fd);
    CU_ASSERT(EPERM == tbrdma_shmseg_attach(&rank, name, 4096, geteuid(), err, sizeof(err)));
    CU_ASSERT(NULL != strstr(err, "mode 0640, open to other users"));
    tbrdma_shmseg_detach(&owner);
}

int main(void)
{
    static const tbrdma_ut_test_t tests[] = {
        TBRDMA_UT_TEST(test_shmseg_names),
        TBRDMA_UT_TEST(test_shmseg_create_and_attach),
        TBRDMA_UT_TEST(test_shmseg_attach_refusals),
        TBRDMA_UT_END,
    };

    return tbrdma_ut_run("btl_tbrdma_shmseg", tests);
}
