/* Bounds-checked reading of untrusted bytes.
 *
 * Every parser of input (perf.data records, features, perf maps, jitdumps)
 * reads through a ps_cursor. A read that would pass the end fails and
 * leaves the cursor marked as failed; later reads keep failing, so a parser
 * can do a run of reads and check once. Multi-byte values are converted
 * from the file's byte order (swap) to the host's.
 *
 * Fields whose place is computed rather than reached in order (an id at a
 * position counted from a record's end, the bytes a symbol's address
 * points to in an ELF file) are read with the peek readers: each checks
 * its own offset against the cursor's bounds and neither moves the cursor
 * nor marks it failed, so a bad offset is refused at the read that uses it.
 */
#ifndef PS_BASE_CURSOR_H
#define PS_BASE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ps_cursor {
	const uint8_t *start;
	const uint8_t *p;
	const uint8_t *end;
	bool swap;
	bool failed;
};

static inline struct ps_cursor ps_cursor_make(const void *data, size_t size, bool swap)
{
	struct ps_cursor c;
	c.start = (const uint8_t *)data;
	c.p = c.start;
	c.end = size ? c.start + size : c.start; /* NULL + 0 is undefined in C */
	c.swap = swap;
	c.failed = false;
	return c;
}

static inline size_t ps_cursor_left(const struct ps_cursor *c)
{
	return c->failed ? 0 : (size_t)(c->end - c->p);
}

static inline size_t ps_cursor_pos(const struct ps_cursor *c)
{
	return (size_t)(c->p - c->start);
}

static inline bool ps_cursor_ok(const struct ps_cursor *c)
{
	return !c->failed;
}

/* Take n bytes; returns NULL (and fails the cursor) when fewer are left. */
static inline const uint8_t *ps_cursor_take(struct ps_cursor *c, size_t n)
{
	const uint8_t *at;
	if (c->failed || n > (size_t)(c->end - c->p)) {
		c->failed = true;
		return NULL;
	}
	at = c->p;
	c->p += n;
	return at;
}

static inline bool ps_cursor_skip(struct ps_cursor *c, size_t n)
{
	return ps_cursor_take(c, n) != NULL;
}

static inline uint8_t ps_cursor_u8(struct ps_cursor *c)
{
	const uint8_t *at = ps_cursor_take(c, 1);
	return at ? *at : 0;
}

static inline uint16_t ps_cursor_u16(struct ps_cursor *c)
{
	uint16_t v = 0;
	const uint8_t *at = ps_cursor_take(c, 2);
	if (at) {
		memcpy(&v, at, 2);
		if (c->swap)
			v = __builtin_bswap16(v);
	}
	return v;
}

static inline uint32_t ps_cursor_u32(struct ps_cursor *c)
{
	uint32_t v = 0;
	const uint8_t *at = ps_cursor_take(c, 4);
	if (at) {
		memcpy(&v, at, 4);
		if (c->swap)
			v = __builtin_bswap32(v);
	}
	return v;
}

static inline uint64_t ps_cursor_u64(struct ps_cursor *c)
{
	uint64_t v = 0;
	const uint8_t *at = ps_cursor_take(c, 8);
	if (at) {
		memcpy(&v, at, 8);
		if (c->swap)
			v = __builtin_bswap64(v);
	}
	return v;
}

/* Read n u64 values into out (host order). */
static inline bool ps_cursor_u64_array(struct ps_cursor *c, uint64_t *out, size_t n)
{
	const uint8_t *at;
	if (n > SIZE_MAX / 8)
		n = SIZE_MAX / 8 + 1; /* forces failure below */
	at = ps_cursor_take(c, n * 8);
	if (!at)
		return false;
	memcpy(out, at, n * 8);
	if (c->swap)
		for (size_t i = 0; i < n; i++)
			out[i] = __builtin_bswap64(out[i]);
	return true;
}

/* A NUL-terminated string of at most `limit` bytes (terminator included)
 * that must lie within the cursor; advances by `limit` bytes when
 * fixed is true (fixed-size fields), else past the terminator. */
static inline const char *ps_cursor_string(struct ps_cursor *c, size_t limit, bool fixed)
{
	size_t left = ps_cursor_left(c);
	const uint8_t *nul;
	const char *s;
	if (c->failed)
		return NULL;
	if (limit > left) {
		if (fixed) {
			c->failed = true;
			return NULL;
		}
		limit = left;
	}
	nul = (const uint8_t *)memchr(c->p, 0, limit);
	if (!nul) {
		c->failed = true;
		return NULL;
	}
	s = (const char *)c->p;
	c->p = fixed ? c->p + limit : nul + 1;
	return s;
}

/* ---- peeking at an offset from the cursor's start ------------------ */

/* The whole span the cursor was made over. */
static inline size_t ps_cursor_size(const struct ps_cursor *c)
{
	return (size_t)(c->end - c->start);
}

/* n bytes at offset from the start, or NULL when they are not all inside
 * (written so that offset + n cannot wrap). */
static inline const uint8_t *ps_cursor_peek(const struct ps_cursor *c, size_t offset, size_t n)
{
	size_t size = ps_cursor_size(c);

	if (offset > size || n > size - offset)
		return NULL;
	return offset ? c->start + offset : c->start; /* NULL + 0 is undefined */
}

/* A cursor over n bytes at offset, with the same byte order; false (and
 * *out untouched) when they are not all inside. */
static inline bool ps_cursor_peek_cursor(const struct ps_cursor *c, size_t offset, size_t n,
                                         struct ps_cursor *out)
{
	const uint8_t *at = ps_cursor_peek(c, offset, n);

	if (!at)
		return false;
	*out = ps_cursor_make(at, n, c->swap);
	return true;
}

static inline bool ps_cursor_peek_u32(const struct ps_cursor *c, size_t offset, uint32_t *out)
{
	const uint8_t *at = ps_cursor_peek(c, offset, 4);
	uint32_t v;

	if (!at)
		return false;
	memcpy(&v, at, 4);
	*out = c->swap ? __builtin_bswap32(v) : v;
	return true;
}

static inline bool ps_cursor_peek_u64(const struct ps_cursor *c, size_t offset, uint64_t *out)
{
	const uint8_t *at = ps_cursor_peek(c, offset, 8);
	uint64_t v;

	if (!at)
		return false;
	memcpy(&v, at, 8);
	*out = c->swap ? __builtin_bswap64(v) : v;
	return true;
}

#endif /* PS_BASE_CURSOR_H */
