/* Checks of the event formats in a capture's tracing data, made before
 * libtraceevent sees them (tracing_check.c says why). Private to
 * src/reader. */
#ifndef PS_READER_TRACING_CHECK_PRIV_H
#define PS_READER_TRACING_CHECK_PRIV_H

#include <stdbool.h>
#include <stddef.h>

/* 0 when the format text is one libtraceevent may parse: printable
 * ASCII, field lines of the kernel's form, a print format that is a
 * string and C expressions using only declared fields. Else -1 with why
 * in out ("line 4 is not a field declaration of the kernel's form").
 * ftrace: the format is one of the ftrace system's own. */
int ps_tracing_check_format(const char *text, size_t size, bool ftrace, char *out, size_t outsz);
/* The first "field:" line of text (numbered from 1) that is not of the
 * kernel's form, or 0; for header_page, which has no print format. */
size_t ps_tracing_odd_field_line(const char *text, size_t size, bool ftrace);

#endif /* PS_READER_TRACING_CHECK_PRIV_H */
