/* Helpers of the feature tests: bytes in either byte order, perf's header
 * strings, and readers to decode sections into. */
#include "feature_bytes.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/perf_format_priv.h"

void put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->data = realloc(b->data, b->cap);
		ck_assert_ptr_nonnull(b->data);
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

void put_uint(struct buf *b, uint64_t v, size_t n)
{
	uint8_t bytes[8];

	for (size_t i = 0; i < n; i++) {
		size_t shift = b->be ? (n - 1 - i) * 8 : i * 8;
		bytes[i] = (uint8_t)(v >> shift);
	}
	put(b, bytes, n);
}

void put_u8(struct buf *b, uint8_t v)
{
	put_uint(b, v, 1);
}
void put_u16(struct buf *b, uint16_t v)
{
	put_uint(b, v, 2);
}
void put_u32(struct buf *b, uint32_t v)
{
	put_uint(b, v, 4);
}
void put_u64(struct buf *b, uint64_t v)
{
	put_uint(b, v, 8);
}
void put_zeros(struct buf *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_u8(b, 0);
}

void put_u64_at(struct buf *b, size_t pos, uint64_t v)
{
	size_t len = b->len;

	b->len = pos;
	put_u64(b, v);
	b->len = len;
}

/* perf_header_string: u32 len, then the string padded to 64 */
void put_hstring(struct buf *b, const char *s)
{
	size_t len = (strlen(s) + 1 + 63) / 64 * 64;

	put_u32(b, (uint32_t)len);
	put(b, s, strlen(s));
	put_zeros(b, len - strlen(s));
}

void buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ---- a reader to decode into ---------------------------------------- */

char last_warning[512], open_error[512];

void log_capture(void *ctx, enum ps_log_level level, const char *msg)
{
	(void)ctx;
	if (level == PS_LOG_WARN)
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
	else if (level == PS_LOG_ERROR)
		snprintf(open_error, sizeof(open_error), "%s", msg);
}

/* Write b to a temporary file of file_size bytes (at least b->len; the
 * rest is a hole), open it by path and remove the name. */
int open_image_sized(const struct buf *b, uint64_t file_size, struct ps_reader **r)
{
	struct ps_reader_opts opts = { .sz = sizeof(opts), .log = log_capture };
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/pystitch-features-XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b->data, b->len), (ssize_t)b->len);
	if (file_size > b->len)
		ck_assert_int_eq(ftruncate(fd, (off_t)file_size), 0);
	close(fd);
	open_error[0] = '\0';
	err = ps_reader_open(path, &opts, r);
	unlink(path);
	/* a handle, or none and what went wrong */
	ck_assert((err == 0) == (*r != NULL));
	ck_assert(err == 0 || open_error[0]);
	return err;
}

int open_image(const struct buf *b, struct ps_reader **r)
{
	return open_image_sized(b, b->len, r);
}

/* A pipe-mode reader with nothing read yet: feature sections and tracing
 * blobs are handed to it directly. */
struct ps_reader *pipe_reader(bool be)
{
	struct buf b = { .be = be };
	struct ps_reader *r;

	put_u64(&b, PS_PERF_MAGIC2);
	put_u64(&b, PS_PIPE_HEADER_SIZE);
	ck_assert_int_eq(open_image(&b, &r), 0);
	ck_assert(r->swap == be);
	buf_free(&b);
	last_warning[0] = 0;
	return r;
}

/* Forget a failure so the next decode can report its own. */
void clear_failure(struct ps_reader *r)
{
	r->failed = false;
	r->errmsg[0] = 0;
}

int decode(struct ps_reader *r, unsigned bit, const struct buf *b)
{
	return ps_feature_decode(r, bit, b->data, b->len, 0x1000);
}
