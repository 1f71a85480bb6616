/* Line-based text formats that untrusted readers parse (the archive
 * manifest, the symbol answers an archive carries in place of a debug
 * file): one fact per line, fields split at single spaces, and strings
 * written so that any bytes survive and never contain a space.
 *
 * A string field is "-" for none, else "=" followed by its bytes, with
 * every byte outside [A-Za-z0-9/._+,:@~[]-] written as %XX. */
#ifndef PS_BASE_TEXTLINE_H
#define PS_BASE_TEXTLINE_H

#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

/* Append s (NULL: "-") as a string field. */
void ps_textline_add_string(struct ps_strbuf *out, const char *s);
/* Decode a string field in place: *out is NULL for "-", else points into
 * field. 0, or -EINVAL with the reason in *why (a static string). */
int ps_textline_decode_string(char *field, const char **out, const char **why);
/* A decimal number without sign or leading zeros that fits 64 bits:
 * 0 or -EINVAL. */
int ps_textline_parse_u64(const char *s, uint64_t *out);
/* Lower-case hex without leading zeros (1 to 16 digits): 0 or -EINVAL. */
int ps_textline_parse_x64(const char *s, uint64_t *out);
/* The value of a hex digit (either case), or -1. Inline: kallsyms and
 * perf maps parse it for every character of every address. */
static inline int ps_textline_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
/* Split line (NUL-terminated, modified) at single spaces into at most max
 * fields; the number found, or max + 1 when there are more. */
size_t ps_textline_split(char *line, char **fields, size_t max);

#endif /* PS_BASE_TEXTLINE_H */
