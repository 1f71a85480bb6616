/* The sizeof()s of an event's print format, replaced by their values before
 * libtraceevent sees the format.
 *
 * libtraceevent 1.7.1's process_sizeof() frees the last token of
 * sizeof(int), sizeof(unsigned int), sizeof(long long), sizeof(unsigned
 * long long) and sizeof(REC->field), reads the next one into another
 * pointer and then compares and frees the freed one again: a use after free
 * and a double free, which glibc stops the program on (fixed in 1.7.2,
 * commit a4b1ba5 "Fix double free in parsing sizeof()"). Linux 6.x writes
 * such formats: the dma events' "/ sizeof(unsigned int)". So each sizeof
 * libtraceevent understands is replaced by the number it computes itself,
 * the atom its parser would build: 4 for int, unsigned int and unsigned, 8
 * for long long and unsigned long long, the tracing data's long size for
 * long and unsigned long, and the "size:" of the first field line naming
 * the field for REC->field (not an array). The event then prints as a
 * fixed libtraceevent prints it.
 *
 * A sizeof libtraceevent does not understand (sizeof(u64), sizeof(char),
 * sizeof(REC->array), sizeof(long *)) is left as it is: libtraceevent gives
 * up on that print format before the double free, frees what it read, and
 * prints the event's fields raw, as perf does. One that it would take to
 * the double free without a value to replace it with (sizeof(int *),
 * sizeof(REC->field + 1), a quoted word) refuses the format.
 */
#include "reader/tracing_check_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libtraceevent's token types, as far as process_sizeof() tells them apart */
enum sizeof_token_kind { SIZEOF_END, SIZEOF_ITEM, SIZEOF_QUOTED, SIZEOF_DELIM, SIZEOF_OP };

struct sizeof_token {
	enum sizeof_token_kind kind;
	const char *p; /* the token's text in the format, quotes included */
	size_t len;
};

/* What to do with one sizeof. The paths of process_sizeof() that do not
 * end in the double free are those that fail before the last free or read
 * no token past the value: "unsigned" and "long" alone. */
enum sizeof_verdict { SIZEOF_LEAVE, SIZEOF_REPLACE, SIZEOF_REFUSE };

struct sizeof_fields {
	const char *text, *print; /* the field lines are in [text, print) */
};

static bool is_item_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* The token at p, as libtraceevent's __read_token() cuts it (spaces and
 * newlines skipped, as read_token_item() does). */
static struct sizeof_token next_token(const char *p, const char *end)
{
	struct sizeof_token t = { SIZEOF_END, p, 0 };

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
		p++;
	t.p = p;
	if (p == end)
		return t;
	if (*p == '"' || *p == '\'') {
		const char *q = p + 1;

		while (q < end && *q != *p)
			q += *q == '\\' && q + 1 < end ? 2 : 1;
		t.kind = SIZEOF_QUOTED;
		t.len = (size_t)(q - p) + (q < end);
		return t;
	}
	if (is_item_char(*p)) {
		const char *q = p;

		while (q < end && is_item_char(*q))
			q++;
		t.kind = SIZEOF_ITEM;
		t.len = (size_t)(q - p);
		return t;
	}
	t.kind = *p == '(' || *p == ')' || *p == ',' ? SIZEOF_DELIM : SIZEOF_OP;
	/* "->" is the one operator of two characters that matters here */
	t.len = *p == '-' && end - p >= 2 && p[1] == '>' ? 2 : 1;
	return t;
}

static bool token_is(const struct sizeof_token *t, const char *word)
{
	return t->kind != SIZEOF_END && t->len == strlen(word) && memcmp(t->p, word, t->len) == 0;
}

/* The value of size:N of a field line, as libtraceevent reads it
 * (strtoul base 0, into an int); false when the line has none. */
static bool field_size(const char *semicolon, const char *eol, int *out)
{
	const char *p = semicolon, *digits;
	char number[32];

	while (p < eol && !(eol - p >= 5 && memcmp(p, "size:", 5) == 0))
		p++;
	if (p == eol)
		return false;
	for (digits = p += 5; p < eol && *p >= '0' && *p <= '9'; p++)
		;
	if (p == digits)
		return false;
	/* a number too long for the buffer is too large for strtoul too */
	if ((size_t)(p - digits) >= sizeof(number)) {
		*out = (int)(unsigned long)-1;
		return true;
	}
	memcpy(number, digits, (size_t)(p - digits));
	number[p - digits] = 0;
	*out = (int)strtoul(number, NULL, 0);
	return true;
}

/* The size libtraceevent gives sizeof(REC->name): the first field line that
 * declares name, unless it is an array (brackets, or a 2-byte __data_loc
 * or __rel_loc). false when libtraceevent has no size for it. */
static bool record_field_size(const struct sizeof_fields *fields, const char *name, size_t len,
                              int *out)
{
	for (const char *line = fields->text; line < fields->print;) {
		const char *eol = memchr(line, '\n', (size_t)(fields->print - line));
		const char *p = line, *decl, *semicolon, *q, *start;

		if (!eol)
			eol = fields->print;
		line = eol + 1;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (eol - p < 6 || memcmp(p, "field:", 6) != 0 ||
		    !(semicolon = memchr(p, ';', (size_t)(eol - p))))
			continue;
		for (decl = p + 6; decl < semicolon && *decl == ' ';)
			decl++;
		/* the name: the last word, after any brackets ("char comm[16]")
		 * or before them ("__data_loc char[] name") */
		q = semicolon;
		while (q > decl && q[-1] == ' ')
			q--;
		if (q > decl && q[-1] == ']') {
			while (q > decl && q[-1] != '[')
				q--;
			if (q > decl)
				q--;
		}
		while (q > decl && q[-1] == ' ')
			q--;
		for (start = q; start > decl && is_item_char(start[-1]);)
			start--;
		if ((size_t)(q - start) != len || memcmp(start, name, len) != 0)
			continue;
		if (!field_size(semicolon, eol, out) ||
		    memchr(decl, '[', (size_t)(semicolon - decl)))
			return false;
		if (*out == 2 &&
		    (((size_t)(semicolon - decl) >= 10 && !memcmp(decl, "__data_loc", 10)) ||
		     ((size_t)(semicolon - decl) >= 9 && !memcmp(decl, "__rel_loc", 9))))
			return false;
		return true;
	}
	return false;
}

/* After the value, libtraceevent reads one more token: SIZEOF_REPLACE when
 * it is ")" (its end in *end), else otherwise. */
static enum sizeof_verdict closed_after(struct sizeof_token t, const char *text_end,
                                        const char **end, enum sizeof_verdict otherwise)
{
	t = next_token(t.p + t.len, text_end);
	*end = t.p + t.len;
	return token_is(&t, ")") ? SIZEOF_REPLACE : otherwise;
}

/* What libtraceevent 1.7.1's process_sizeof() does with the tokens after
 * "sizeof(" at p: its value in *value and the end of the ")" in *end for
 * SIZEOF_REPLACE. Quoted tokens are compared by their contents there, so
 * any the parser looks at refuses the format. */
static enum sizeof_verdict judge(const char *p, const char *text_end,
                                 const struct sizeof_fields *fields, int long_size, int *value,
                                 const char **end)
{
	struct sizeof_token t = next_token(p, text_end);

	if (t.kind == SIZEOF_QUOTED || t.kind == SIZEOF_END) /* (strcmp of NULL) */
		return SIZEOF_REFUSE;
	if (token_is(&t, "unsigned")) {
		t = next_token(t.p + t.len, text_end);
		if (t.kind == SIZEOF_QUOTED)
			return SIZEOF_REFUSE;
		if (t.kind != SIZEOF_ITEM) {
			/* "unsigned" alone: 4, and this token must be ")" */
			*value = 4;
			*end = t.p + t.len;
			return token_is(&t, ")") ? SIZEOF_REPLACE : SIZEOF_LEAVE;
		}
	}
	if (token_is(&t, "int")) {
		*value = 4;
		return closed_after(t, text_end, end, SIZEOF_REFUSE);
	}
	if (token_is(&t, "long")) {
		t = next_token(t.p + t.len, text_end);
		if (t.kind == SIZEOF_QUOTED)
			return SIZEOF_REFUSE;
		if (token_is(&t, "long")) {
			*value = 8;
			return closed_after(t, text_end, end, SIZEOF_REFUSE);
		}
		/* long alone: the long size, and this token must be ")"; an
		 * unknown long size fails the format */
		*value = long_size;
		*end = t.p + t.len;
		return token_is(&t, ")") && (long_size == 4 || long_size == 8) ? SIZEOF_REPLACE
		                                                               : SIZEOF_LEAVE;
	}
	if (token_is(&t, "REC")) {
		t = next_token(t.p + t.len, text_end);
		if (t.kind == SIZEOF_QUOTED)
			return SIZEOF_REFUSE;
		if (!token_is(&t, "->"))
			return SIZEOF_LEAVE;
		t = next_token(t.p + t.len, text_end);
		if (t.kind == SIZEOF_QUOTED)
			return SIZEOF_REFUSE;
		if (t.kind != SIZEOF_ITEM || !record_field_size(fields, t.p, t.len, value))
			return SIZEOF_LEAVE;
		return closed_after(t, text_end, end, SIZEOF_REFUSE);
	}
	return SIZEOF_LEAVE;
}

static int refuse(char *msg, size_t msgsz, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int refuse(char *msg, size_t msgsz, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msgsz, fmt, ap);
	va_end(ap);
	return err;
}

/* the "print fmt:" line's text, or NULL */
static const char *find_print_format(const char *text, const char *end)
{
	for (const char *line = text; line < end;) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));
		const char *p = line;

		if (!eol)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		if (eol - p >= 10 && memcmp(p, "print fmt:", 10) == 0)
			return p;
		line = eol + 1;
	}
	return NULL;
}

int ps_tracing_replace_sizeof(const char *text, size_t size, int long_size, char **out,
                              size_t *out_size, char *msg, size_t msgsz)
{
	const char *end = text + size, *print = find_print_format(text, end), *copied = text;
	struct sizeof_fields fields = { text, print };
	char *result = NULL;
	size_t len = 0, cap = 0;

	*out = NULL;
	*out_size = 0;
	if (!print)
		return 0;
	for (const char *p = print + 10; p < end;) {
		struct sizeof_token t = next_token(p, end), open;
		const char *close = NULL;
		char number[16];
		int value = 0, n;

		if (t.kind == SIZEOF_END)
			break;
		p = t.p + t.len;
		if (!token_is(&t, "sizeof"))
			continue;
		open = next_token(p, end);
		if (!token_is(&open, "("))
			continue;
		switch (judge(open.p + 1, end, &fields, long_size, &value, &close)) {
		case SIZEOF_LEAVE:
			continue;
		case SIZEOF_REFUSE:
			free(result);
			return refuse(msg, msgsz, -EINVAL,
			              "print fmt: a sizeof libtraceevent cannot take at byte %zu",
			              (size_t)(t.p - text));
		case SIZEOF_REPLACE:
		default:
			break;
		}
		n = snprintf(number, sizeof(number), "%d", value);
		/* what precedes the sizeof, then its value */
		if (len + (size_t)(t.p - copied) + (size_t)n + (size_t)(end - close) + 1 > cap) {
			size_t want = len + (size_t)(t.p - copied) + (size_t)n +
			              (size_t)(end - close) + 1;
			char *grown = realloc(result, want);

			if (!grown) {
				free(result);
				return refuse(msg, msgsz, -ENOMEM, "out of memory");
			}
			result = grown;
			cap = want;
		}
		memcpy(result + len, copied, (size_t)(t.p - copied));
		len += (size_t)(t.p - copied);
		memcpy(result + len, number, (size_t)n);
		len += (size_t)n;
		copied = p = close;
	}
	if (!result)
		return 0;
	/* the rest; cap holds it (reserved with the last value) */
	memcpy(result + len, copied, (size_t)(end - copied));
	len += (size_t)(end - copied);
	result[len] = 0;
	*out = result;
	*out_size = len;
	return 0;
}
