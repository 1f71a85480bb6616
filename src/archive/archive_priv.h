/* Private to src/archive (tests/unit/archive reaches in here too): what
 * its files share and the manifest's text form (errors: base/message.h).
 * Other modules use archive/archive.h. */
#ifndef PS_ARCHIVE_ARCHIVE_PRIV_H
#define PS_ARCHIVE_ARCHIVE_PRIV_H

#include "archive/archive.h"

#define PS_ARCHIVE_MANIFEST_MAX (16u << 20)
#define PS_ARCHIVE_HEX_SIZE (2 * PS_ARCHIVE_SHA256_SIZE)

/* The manifest as text. NULL when out of memory; free() it. */
char *ps_manifest_format(const struct ps_manifest *manifest, size_t *len);
/* Parse and validate text: the version, every line, kinds, sizes within
 * the limits (one file, and the sum of distinct contents), one perf.data,
 * at most one kernel symbols file, no path twice, one size per digest.
 * 0, or -EINVAL/-EFBIG/-ENOMEM with a one-line reason in err. */
int ps_manifest_parse(const char *text, size_t len, const struct ps_archive_limits *limits,
                      struct ps_manifest *out, char *err, size_t errsz);
void ps_archive_hex(const uint8_t *sha256, char *hex /* PS_ARCHIVE_HEX_SIZE + 1 */);

/* A 64-bit hash of a stream of bytes (write.c), the same whatever the
 * sizes of the pieces they come in (read() may return less than asked):
 * 8-byte words as they complete, then what is left and the length. Not a
 * digest: the archive writer's second read of a file uses it to notice
 * that the file changed since the first. Start from all zeros. */
struct ps_stream_hash {
	uint64_t h, total;
	uint8_t tail[8];
	size_t nr_tail;
};

void ps_stream_hash_add(struct ps_stream_hash *s, const void *data, size_t n);
uint64_t ps_stream_hash_end(struct ps_stream_hash *s);

#endif /* PS_ARCHIVE_ARCHIVE_PRIV_H */
