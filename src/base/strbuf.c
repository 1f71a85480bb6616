/* Growable output buffer (see strbuf.h). */
#include "base/array.h"
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool ps_strbuf_grow(struct ps_strbuf *sb, size_t extra)
{
	size_t need;

	if (sb->failed)
		return false;
	if (extra > SIZE_MAX - sb->len - 1) {
		sb->failed = true;
		return false;
	}
	need = sb->len + extra + 1;
	if (!ps_array_reserve((void **)&sb->buf, &sb->cap, need, 1, 256)) {
		sb->failed = true;
		return false;
	}
	return true;
}

void ps_strbuf_addf(struct ps_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ps_strbuf_grow(sb, 64))
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->failed = true;
		return;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		if (!ps_strbuf_grow(sb, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

void ps_strbuf_add_padded(struct ps_strbuf *sb, const char *s, size_t len, int width)
{
	size_t span = width < 0 ? (size_t) - (int64_t)width : (size_t)width;
	size_t pad = span > len ? span - len : 0;
	char *out;

	if (!ps_strbuf_reserve(sb, len + pad))
		return;
	out = sb->buf + sb->len;
	if (width > 0) {
		memset(out, ' ', pad);
		out += pad;
	}
	memcpy(out, s, len);
	out += len;
	if (width < 0) {
		memset(out, ' ', pad);
		out += pad;
	}
	*out = 0;
	sb->len += len + pad;
}

/* Digits of value, written backwards ending at end; returns the first. */
static char *decimal(char *end, uint64_t value)
{
	do {
		*--end = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	return end;
}

static void add_number(struct ps_strbuf *sb, bool negative, const char *digits, size_t nr,
                       int width, bool zero_pad)
{
	size_t len = nr + negative;
	size_t span = width < 0 ? (size_t) - (int64_t)width : (size_t)width;
	size_t pad = span > len ? span - len : 0;
	char *out;

	if (!ps_strbuf_reserve(sb, len + pad))
		return;
	out = sb->buf + sb->len;
	if (width > 0 && !zero_pad) {
		memset(out, ' ', pad);
		out += pad;
	}
	if (negative)
		*out++ = '-';
	if (width > 0 && zero_pad) {
		memset(out, '0', pad);
		out += pad;
	}
	memcpy(out, digits, nr);
	out += nr;
	if (width < 0) {
		memset(out, ' ', pad);
		out += pad;
	}
	*out = 0;
	sb->len += len + pad;
}

void ps_strbuf_add_int(struct ps_strbuf *sb, int64_t value, int width, bool zero_pad)
{
	char digits[24], *end = digits + sizeof(digits);
	uint64_t magnitude = value < 0 ? -(uint64_t)value : (uint64_t)value;
	char *first = decimal(end, magnitude);

	add_number(sb, value < 0, first, (size_t)(end - first), width, zero_pad);
}

void ps_strbuf_add_uint(struct ps_strbuf *sb, uint64_t value, int width, bool zero_pad)
{
	char digits[24], *end = digits + sizeof(digits);
	char *first = decimal(end, value);

	add_number(sb, false, first, (size_t)(end - first), width, zero_pad);
}

void ps_strbuf_add_hex(struct ps_strbuf *sb, uint64_t value, int width)
{
	size_t digits = value ? (size_t)(67 - __builtin_clzll(value)) / 4 : 1;
	size_t span = width < 0 ? (size_t) - (int64_t)width : (size_t)width;
	size_t pad = span > digits ? span - digits : 0;
	char *out, all[16];

	if (!ps_strbuf_reserve(sb, digits + pad))
		return;
	out = sb->buf + sb->len;
	if (width > 0) {
		memset(out, ' ', pad);
		out += pad;
	}
	ps_hex16(all, value);
	memcpy(out, all + 16 - digits, digits);
	out += digits;
	if (width < 0) {
		memset(out, ' ', pad);
		out += pad;
	}
	*out = 0;
	sb->len += digits + pad;
}

void ps_strbuf_reset(struct ps_strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = 0;
}

void ps_strbuf_release(struct ps_strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->failed = false;
}

bool ps_strbuf_flush(struct ps_strbuf *sb, FILE *f)
{
	bool ok = true;
	if (sb->len && fwrite(sb->buf, 1, sb->len, f) != sb->len)
		ok = false;
	ps_strbuf_reset(sb);
	return ok;
}
