/* A growable byte buffer for building output (after git's strbuf).
 * Printers append to it; the owner flushes it to a descriptor in large
 * blocks. Allocation failure is sticky: later appends are dropped and
 * ps_strbuf_failed() reports it. */
#ifndef PS_BASE_STRBUF_H
#define PS_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct ps_strbuf {
	char *buf;
	size_t len, cap;
	bool failed;
};

#define PS_STRBUF_INIT {NULL, 0, 0, false}

bool ps_strbuf_grow(struct ps_strbuf *sb, size_t extra);
void ps_strbuf_add(struct ps_strbuf *sb, const void *data, size_t len);
void ps_strbuf_addstr(struct ps_strbuf *sb, const char *s);
void ps_strbuf_addch(struct ps_strbuf *sb, char c);
void ps_strbuf_addf(struct ps_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ps_strbuf_reset(struct ps_strbuf *sb);
void ps_strbuf_release(struct ps_strbuf *sb);
static inline bool ps_strbuf_failed(const struct ps_strbuf *sb) { return sb->failed; }
/* Write the contents to f and empty the buffer; returns false on a write error. */
bool ps_strbuf_flush(struct ps_strbuf *sb, FILE *f);

#endif /* PS_BASE_STRBUF_H */
