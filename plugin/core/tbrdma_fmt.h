/*
 * Bounded text building for core/ messages: appends printf-style pieces to a caller's buffer,
 * never overflowing it and always NUL-terminated, while counting the length the whole text
 * needs, so every message function can keep the snprintf contract (returns the full length).
 * Private to core/.
 */
#ifndef TBRDMA_FMT_H
#define TBRDMA_FMT_H

#include <stddef.h>

typedef struct tbrdma_fmt {
    char *buf;   /* may be NULL when len is 0 */
    size_t len;  /* capacity including the NUL */
    size_t used; /* length the text needs so far, excluding the NUL (may exceed len) */
} tbrdma_fmt_t;

/* Starts an empty text in buf (buf[0] = '\0' when len > 0). */
void tbrdma_fmt_init(tbrdma_fmt_t *fmt, char *buf, size_t len);

/* Appends; what does not fit is cut, used still grows by the full piece length. */
void tbrdma_fmt_add(tbrdma_fmt_t *fmt, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* TBRDMA_FMT_H */
