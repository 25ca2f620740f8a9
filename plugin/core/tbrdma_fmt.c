/*
 * Bounded text building for core/ messages (see tbrdma_fmt.h). The invariant: buf always holds
 * a NUL-terminated prefix of the text, and used is the length of the whole text.
 */
#include "tbrdma_fmt.h"

#include <stdarg.h>
#include <stdio.h>

void tbrdma_fmt_init(tbrdma_fmt_t *fmt, char *buf, size_t len)
{
    fmt->buf = buf;
    fmt->len = (NULL == buf) ? 0 : len;
    fmt->used = 0;
    if (0 < fmt->len) {
        buf[0] = '\0';
    }
}

void tbrdma_fmt_add(tbrdma_fmt_t *fmt, const char *format, ...)
{
    va_list ap;
    int n;

    va_start(ap, format);
    if (fmt->used < fmt->len) {
        n = vsnprintf(fmt->buf + fmt->used, fmt->len - fmt->used, format, ap);
    } else {
        n = vsnprintf(NULL, 0, format, ap);
    }
    va_end(ap);
    if (0 < n) {
        fmt->used += (size_t) n;
    }
}
