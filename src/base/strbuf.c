/* Growable output buffer (see strbuf.h). */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool ps_strbuf_grow(struct ps_strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *nb;

	if (sb->failed)
		return false;
	if (extra > SIZE_MAX - sb->len - 1) {
		sb->failed = true;
		return false;
	}
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return true;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	nb = realloc(sb->buf, cap);
	if (!nb) {
		sb->failed = true;
		return false;
	}
	sb->buf = nb;
	sb->cap = cap;
	return true;
}

void ps_strbuf_add(struct ps_strbuf *sb, const void *data, size_t len)
{
	if (!ps_strbuf_grow(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

void ps_strbuf_addstr(struct ps_strbuf *sb, const char *s)
{
	ps_strbuf_add(sb, s, strlen(s));
}

void ps_strbuf_addch(struct ps_strbuf *sb, char c)
{
	if (!ps_strbuf_grow(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = 0;
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
