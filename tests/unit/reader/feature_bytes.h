/* Helpers shared by the feature tests (test_features.c,
 * test_features_machine.c). */
#ifndef PS_TESTS_FEATURE_BYTES_H
#define PS_TESTS_FEATURE_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cursor.h"
#include "reader/reader_priv.h"

/* bytes in either byte order */
struct buf {
	uint8_t *data;
	size_t len, cap;
	bool be;
};

void put(struct buf *b, const void *p, size_t n);
void put_uint(struct buf *b, uint64_t v, size_t n);
void put_u8(struct buf *b, uint8_t v);
void put_u16(struct buf *b, uint16_t v);
void put_u32(struct buf *b, uint32_t v);
void put_u64(struct buf *b, uint64_t v);
void put_zeros(struct buf *b, size_t n);
void put_u64_at(struct buf *b, size_t pos, uint64_t v);
/* perf_header_string: u32 len, then the string padded to 64 */
void put_hstring(struct buf *b, const char *s);
void buf_free(struct buf *b);

/* the last warning a reader opened here logged, and why its open failed */
extern char last_warning[512], open_error[512];
void log_capture(void *ctx, enum ps_log_level level, const char *msg);
/* Write b to a temporary file of file_size bytes (at least b->len; the
 * rest is a hole), open it by path and remove the name. */
int open_image_sized(const struct buf *b, uint64_t file_size, struct ps_reader **r);
int open_image(const struct buf *b, struct ps_reader **r);
/* A pipe-mode reader with nothing read yet: feature sections and tracing
 * blobs are handed to it directly. */
struct ps_reader *pipe_reader(bool be);
/* Forget a failure so the next decode can report its own. */
void clear_failure(struct ps_reader *r);
/* ps_feature_decode() of b's bytes at offset 0x1000 */
int decode(struct ps_reader *r, unsigned bit, const struct buf *b);

/* A damaged feature: decoding goes on (0), the feature is marked damaged
 * and one warning names it and what was wrong. */
#define ck_assert_damaged(r, bit, err, text)                                                       \
	do {                                                                                       \
		ck_assert_int_eq(err, 0);                                                          \
		ck_assert(ps_reader_features(r)->damaged[(bit) / 64] & (1ull << ((bit) % 64)));    \
		ck_assert_msg(strstr(last_warning, text) &&                                        \
		                      strstr(last_warning, "; the feature is ignored"),            \
		              "warning '%s' lacks '%s'", last_warning, text);                      \
		ck_assert_str_eq(ps_reader_errmsg(r), "");                                         \
		r->features.damaged[(bit) / 64] = 0;                                               \
		last_warning[0] = 0;                                                               \
	} while (0)

struct Suite *features_machine_suite(void);

#endif /* PS_TESTS_FEATURE_BYTES_H */
