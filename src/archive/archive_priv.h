/* Private to src/archive (tests/unit/archive reaches in here too): what
 * its files share, the manifest's text form and the one way they fail.
 * Other modules use archive/archive.h. */
#ifndef PS_ARCHIVE_ARCHIVE_PRIV_H
#define PS_ARCHIVE_ARCHIVE_PRIV_H

#include "archive/archive.h"

#define PS_ARCHIVE_MANIFEST_MAX (16u << 20)
#define PS_ARCHIVE_HEX_SIZE (2 * PS_ARCHIVE_SHA256_SIZE)

/* Write the message to err (errsz bytes) and return rc: the errors of
 * this module are a negative errno and one line. */
int ps_archive_fail(char *err, size_t errsz, int rc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The manifest as text. NULL when out of memory; free() it. */
char *ps_manifest_format(const struct ps_manifest *manifest, size_t *len);
/* Parse and validate text: the version, every line, kinds, sizes within
 * the limits (one file, and the sum of distinct contents), one perf.data,
 * at most one kernel symbols file, no path twice, one size per digest.
 * 0, or -EINVAL/-EFBIG/-ENOMEM with a one-line reason in err. */
int ps_manifest_parse(const char *text, size_t len, const struct ps_archive_limits *limits,
                      struct ps_manifest *out, char *err, size_t errsz);
void ps_archive_hex(const uint8_t *sha256, char *hex /* PS_ARCHIVE_HEX_SIZE + 1 */);

#endif /* PS_ARCHIVE_ARCHIVE_PRIV_H */
