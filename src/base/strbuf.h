/* A growable byte buffer for building output (after git's strbuf).
 * Printers append to it; the owner flushes it to a descriptor in large
 * blocks. Allocation failure is sticky: later appends are dropped and
 * ps_strbuf_failed() reports it.
 *
 * The appends are inline with an out-of-line slow path, and numbers have
 * their own formatters: `perf script` output is millions of short fields,
 * where a call to vsnprintf per field would cost more than everything
 * else that formats a frame. */
#ifndef PS_BASE_STRBUF_H
#define PS_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct ps_strbuf {
	char *buf;
	size_t len, cap;
	bool failed;
};

#define PS_STRBUF_INIT                                                                             \
	{                                                                                          \
		NULL, 0, 0, false                                                                  \
	}

/* Room for extra more bytes and the NUL; false after a failed allocation. */
bool ps_strbuf_grow(struct ps_strbuf *sb, size_t extra);
static inline bool ps_strbuf_reserve(struct ps_strbuf *sb, size_t extra)
{
	if (!sb->failed && sb->cap - sb->len > extra)
		return true;
	return ps_strbuf_grow(sb, extra);
}

static inline void ps_strbuf_add(struct ps_strbuf *sb, const void *data, size_t len)
{
	if (!ps_strbuf_reserve(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

static inline void ps_strbuf_addstr(struct ps_strbuf *sb, const char *s)
{
	ps_strbuf_add(sb, s, strlen(s));
}

static inline void ps_strbuf_addch(struct ps_strbuf *sb, char c)
{
	if (!ps_strbuf_reserve(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = 0;
}

void ps_strbuf_addf(struct ps_strbuf *sb, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* printf's "%*s" (width > 0: right-aligned) and "%-*s" (width < 0). */
void ps_strbuf_add_padded(struct ps_strbuf *sb, const char *s, size_t len, int width);
/* printf's "%*" PRId64, "%-*" PRId64 (width < 0) and "%0*" PRId64 (zero_pad). */
void ps_strbuf_add_int(struct ps_strbuf *sb, int64_t value, int width, bool zero_pad);
/* printf's "%*" PRIu64 and "%0*" PRIu64 (zero_pad). */
void ps_strbuf_add_uint(struct ps_strbuf *sb, uint64_t value, int width, bool zero_pad);
/* printf's "%*" PRIx64 and "%-*" PRIx64 (width < 0): lowercase hex. */
void ps_strbuf_add_hex(struct ps_strbuf *sb, uint64_t value, int width);

/* The 8 lowercase hex digits of a 32-bit value, most significant first,
 * as the bytes of a little-endian word: every nibble spread to a byte,
 * then turned into its digit in all bytes at once. */
static inline uint64_t ps_hex8_word(uint32_t value)
{
	uint64_t x = value;

	x = ((x & 0xffff0000ULL) << 16) | (x & 0xffffULL);
	x = ((x & 0x0000ff000000ff00ULL) << 8) | (x & 0x000000ff000000ffULL);
	x = ((x & 0x00f000f000f000f0ULL) << 4) | (x & 0x000f000f000f000fULL);
	/* 1 in the bytes of the nibbles 10-15 */
	uint64_t letters = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;

	x += 0x3030303030303030ULL + letters * ('a' - '0' - 10);
	return __builtin_bswap64(x);
}

/* The 16 hex digits of value, zeros in front, at out (no NUL); returns
 * how many of them are significant (1 for 0). */
static inline size_t ps_hex16(char *out, uint64_t value)
{
#ifdef __SSE2__
	/* the bytes most significant first, each split into its two
	 * nibbles, high one first; digits past 9 moved on to the letters */
	__m128i bytes = _mm_cvtsi64_si128((long long)__builtin_bswap64(value));
	__m128i mask = _mm_set1_epi8(0x0f);
	__m128i nibbles = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), mask),
	                                    _mm_and_si128(bytes, mask));
	__m128i letters = _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)),
	                                _mm_set1_epi8('a' - '0' - 10));

	_mm_storeu_si128((__m128i *)(void *)out,
	                 _mm_add_epi8(nibbles, _mm_add_epi8(letters, _mm_set1_epi8('0'))));
#else
	uint64_t high = ps_hex8_word((uint32_t)(value >> 32)), low = ps_hex8_word((uint32_t)value);

	memcpy(out, &high, 8);
	memcpy(out + 8, &low, 8);
#endif
	return value ? (size_t)(67 - __builtin_clzll(value)) / 4 : 1;
}

void ps_strbuf_reset(struct ps_strbuf *sb);
void ps_strbuf_release(struct ps_strbuf *sb);
static inline bool ps_strbuf_failed(const struct ps_strbuf *sb)
{
	return sb->failed;
}
/* Write the contents to f and empty the buffer; returns false on a write error. */
bool ps_strbuf_flush(struct ps_strbuf *sb, FILE *f);

#endif /* PS_BASE_STRBUF_H */
