/*
 * Device selection policy: the btl_tbrdma_if_include / btl_tbrdma_if_exclude lists. A list is
 * comma-separated shell globs (fnmatch(3): '*', '?', '[...]'; whitespace around items
 * ignored), each matched against the verbs device name and its paired interface name.
 */
#include "tbrdma_select.h"
#include "tbrdma_fmt.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#define SELECT_ITEM_MAX 128 /* a longer item matches nothing (names are < 32 bytes) */

/* Shell glob match (fnmatch(3): '*', '?', '[...]') of text against pat[0..plen). */
static int select_glob(const char *pat, size_t plen, const char *text)
{
    char item[SELECT_ITEM_MAX];

    if (plen >= sizeof(item)) {
        return 0;
    }
    memcpy(item, pat, plen);
    item[plen] = '\0';
    return 0 == fnmatch(item, text, 0);
}

static int select_is_empty(const char *list)
{
    if (NULL == list) {
        return 1;
    }
    while (isspace((unsigned char) *list) || ',' == *list) {
        list++;
    }
    return '\0' == *list;
}

/* 1 when any item of list matches device or ifname. */
static int select_list_matches(const char *list, const char *device, const char *ifname)
{
    const char *item = list, *end;
    size_t n;

    while ('\0' != *item) {
        while (isspace((unsigned char) *item) || ',' == *item) {
            item++;
        }
        end = item;
        while ('\0' != *end && ',' != *end) {
            end++;
        }
        n = (size_t) (end - item);
        while (0 < n && isspace((unsigned char) item[n - 1])) {
            n--;
        }
        if (0 < n
            && ((NULL != device && select_glob(item, n, device))
                || (NULL != ifname && '\0' != ifname[0] && select_glob(item, n, ifname)))) {
            return 1;
        }
        item = end;
    }
    return 0;
}

int tbrdma_select_validate(const char *include, const char *exclude, char *err, size_t errlen)
{
    tbrdma_fmt_t fmt;

    if (select_is_empty(include) || select_is_empty(exclude)) {
        return 0;
    }
    tbrdma_fmt_init(&fmt, err, errlen);
    tbrdma_fmt_add(&fmt,
                   "btl_tbrdma_if_include (\"%s\") and btl_tbrdma_if_exclude (\"%s\") are both "
                   "set; they are mutually exclusive: set only one of them",
                   include, exclude);
    return -EINVAL;
}

int tbrdma_select_device(const char *device, const char *ifname, const char *include,
                         const char *exclude)
{
    if (!select_is_empty(include)) {
        return select_list_matches(include, device, ifname);
    }
    if (!select_is_empty(exclude)) {
        return !select_list_matches(exclude, device, ifname);
    }
    return 1;
}
