/* Checks of the event formats in a capture's tracing data, made before
 * libtraceevent sees them (tracing_check.c says why), and the one rewrite
 * (tracing_sizeof.c). Private to src/reader. */
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

/* The format text with every sizeof() of its print format that
 * libtraceevent 1.7.1 would double free on replaced by the number it
 * computes (tracing_sizeof.c), for a format that passed
 * ps_tracing_check_format(); long_size is the tracing data's. 0 with *out
 * NULL when nothing is replaced, 0 with *out the new text (*out_size
 * bytes and a NUL; free() it), or -EINVAL (a sizeof it would double free
 * on with no value to put there) or -ENOMEM with why in msg. */
int ps_tracing_replace_sizeof(const char *text, size_t size, int long_size, char **out,
                              size_t *out_size, char *msg, size_t msgsz);

/* NULL when the conversions of the print format's string s (len bytes,
 * quotes included) are ones libtraceevent prints in bounded space: widths
 * and precisions of at most 1024, '*' only in %.*s and %*pb. Else why not,
 * with *at the offset in s of the conversion (tracing_conversions.c). */
const char *ps_tracing_check_conversions(const char *s, size_t len, size_t *at);

#endif /* PS_READER_TRACING_CHECK_PRIV_H */
