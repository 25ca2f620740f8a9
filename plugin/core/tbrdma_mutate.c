/*
 * The run-time choice of a mutation (see tbrdma_mutate.h). Empty in a normal build.
 */
#include "tbrdma_mutate.h"

#ifdef TBRDMA_MUTATIONS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Also the mark test/mutate/plugin.sh looks for in a mutable build ("tbrdma mutants: ..."). */
#define TBRDMA_MUT_NAME(name) " " #name
static const char mutate_names[] = "tbrdma mutants:" TBRDMA_MUTATIONS_LIST(TBRDMA_MUT_NAME);
#undef TBRDMA_MUT_NAME

/* The index of name (upper case) in mutate_names, from 1; 0 when it is not there. */
static int mutate_lookup(const char *name)
{
    const char *p = mutate_names + strlen("tbrdma mutants:");
    size_t len = strlen(name);
    int i = 1;

    while (' ' == *p) {
        const char *end = strchr(p + 1, ' ');
        size_t n = (NULL != end) ? (size_t) (end - p - 1) : strlen(p + 1);

        if (n == len && 0 == strncmp(p + 1, name, n)) {
            return i;
        }
        p = (NULL != end) ? end : p + 1 + n;
        i++;
    }
    return 0;
}

int tbrdma_mutation(void)
{
    static int which = -1;
    const char *env;
    char upper[64];

    if (0 <= which) {
        return which;
    }
    env = getenv("TBRDMA_MUTANT");
    if (NULL == env || '\0' == env[0]) {
        which = TBRDMA_MUT_NONE;
        return which;
    }
    for (size_t i = 0; i < sizeof(upper); i++) {
        upper[i] = (char) ((env[i] >= 'a' && env[i] <= 'z') ? env[i] - 'a' + 'A' : env[i]);
        if ('\0' == env[i]) {
            break;
        }
    }
    upper[sizeof(upper) - 1] = '\0';
    which = mutate_lookup(upper);
    if (TBRDMA_MUT_NONE == which) {
        fprintf(stderr, "tbrdma: unknown mutant '%s' (%s)\n", env, mutate_names);
        abort();
    }
    return which;
}
#else
typedef int tbrdma_mutate_empty_t; /* ISO C wants a translation unit to declare something */
#endif
