/* Writing an archive: every file is read twice, once to learn its size
 * and digest for the manifest (which comes first so readers can check
 * everything that follows), once to store it; a file that changes in
 * between fails the archive rather than giving it a wrong digest. The
 * second read checks the bytes against a fast 64-bit hash of the first
 * (ps_stream_hash), not SHA-256 again: it has to notice a file that changed,
 * not resist one made to collide.
 */
#include "archive/archive_priv.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/message.h"

#define CHUNK 65536
/* zstd's compression threads, at most */
#define MAX_THREADS 16

static void stream_hash_word(struct ps_stream_hash *s, uint64_t word)
{
	s->h = ((s->h << 27 | s->h >> 37) ^ word) * 0x9e3779b97f4a7c15ull;
}

void ps_stream_hash_add(struct ps_stream_hash *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	uint64_t word;

	s->total += n;
	while (n && s->nr_tail) {
		s->tail[s->nr_tail++] = *p++;
		n--;
		if (s->nr_tail == 8) {
			memcpy(&word, s->tail, 8);
			stream_hash_word(s, word);
			s->nr_tail = 0;
		}
	}
	if (s->nr_tail)
		return; /* all taken into the tail */
	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&word, p, 8);
		stream_hash_word(s, word);
	}
	memcpy(s->tail, p, n);
	s->nr_tail = n;
}

uint64_t ps_stream_hash_end(struct ps_stream_hash *s)
{
	uint64_t word = 0;

	memcpy(&word, s->tail, s->nr_tail);
	stream_hash_word(s, word);
	stream_hash_word(s, s->total);
	return s->h ^ (s->h >> 29);
}

/* What a read of a file learns of its contents: its SHA-256 into sha256
 * unless NULL, always the fast hash into *check. */
struct content {
	uint8_t *sha256;
	uint64_t *check;
	struct sha256_ctx sha;
	struct ps_stream_hash fast;
};

static void content_begin(struct content *c)
{
	if (c->sha256)
		sha256_init(&c->sha);
	memset(&c->fast, 0, sizeof(c->fast));
}

static void content_add(struct content *c, const void *buf, size_t len)
{
	if (c->sha256)
		sha256_update(&c->sha, len, buf);
	ps_stream_hash_add(&c->fast, buf, len);
}

static void content_end(struct content *c)
{
	if (c->sha256)
		sha256_digest(&c->sha, SHA256_DIGEST_SIZE, c->sha256);
	*c->check = ps_stream_hash_end(&c->fast);
}

int ps_archive_open_regular(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Read file to its end (files in /proc say size 0), hashing it, and hand
 * each chunk to sink when given. At most max bytes. */
static int read_file(const char *file, uint64_t max, struct content *content, uint64_t *size,
                     int (*sink)(void *ctx, const void *buf, size_t len), void *ctx)
{
	uint8_t *buf = malloc(CHUNK);
	/* a FIFO or device at a recorded path is not what was read */
	int fd = ps_archive_open_regular(file);
	int rc = 0;

	*size = 0;
	content_begin(content);
	if (fd < 0 || !buf) {
		rc = fd < 0 ? fd : -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		if ((uint64_t)n > max - *size) {
			rc = -EFBIG;
			break;
		}
		content_add(content, buf, (size_t)n);
		*size += (uint64_t)n;
		if (sink && (rc = sink(ctx, buf, (size_t)n)) != 0)
			break;
	}
	content_end(content);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* read_file() for a file whose contents are in memory. */
static int read_blob(const struct ps_archive_blob *blob, uint64_t max, struct content *content,
                     uint64_t *size, int (*sink)(void *ctx, const void *buf, size_t len), void *ctx)
{
	int rc = 0;

	*size = 0;
	content_begin(content);
	for (size_t done = 0; done < blob->size && !rc;) {
		size_t n = blob->size - done < CHUNK ? blob->size - done : CHUNK;
		const uint8_t *chunk = (const uint8_t *)blob->data + done;

		if ((uint64_t)n > max - *size) {
			rc = -EFBIG;
			break;
		}
		content_add(content, chunk, n);
		*size += (uint64_t)n;
		done += n;
		if (sink)
			rc = sink(ctx, chunk, n);
	}
	content_end(content);
	return rc;
}

/* The contents of the manifest's file i: from memory or from its file. */
static int read_source(const char *const *files, const struct ps_archive_blob *blobs, size_t i,
                       uint64_t max, struct content *content, uint64_t *size,
                       int (*sink)(void *ctx, const void *buf, size_t len), void *ctx)
{
	if (blobs && blobs[i].data)
		return read_blob(&blobs[i], max, content, size, sink, ctx);
	return read_file(files[i], max, content, size, sink, ctx);
}

struct member_sink {
	struct archive *ar;
	uint64_t left; /* bytes the header announced and not yet written */
};

static int write_chunk(void *ctx, const void *buf, size_t len)
{
	struct member_sink *m = ctx;

	if (len > m->left)
		return -ESTALE; /* grew since it was measured */
	if (archive_write_data(m->ar, buf, len) != (la_ssize_t)len)
		return -EIO;
	m->left -= len;
	return 0;
}

static int add_member(struct archive *ar, const char *name, uint64_t size, int64_t mtime)
{
	struct archive_entry *entry = archive_entry_new();
	int rc;

	if (!entry)
		return -ENOMEM;
	archive_entry_set_pathname(entry, name);
	archive_entry_set_filetype(entry, AE_IFREG);
	archive_entry_set_perm(entry, 0600);
	archive_entry_set_size(entry, (la_int64_t)size);
	archive_entry_set_mtime(entry, (time_t)mtime, 0);
	rc = archive_write_header(ar, entry) == ARCHIVE_OK ? 0 : -EIO;
	archive_entry_free(entry);
	return rc;
}

/* The file as messages name it: a file the writer held open since it was
 * read (/proc/self/fd/N) by the path it was looked up at. */
static const char *shown(const struct ps_manifest *m, const char *const *files, size_t i)
{
	bool held = files[i] && strncmp(files[i], "/proc/self/fd/", 14) == 0;

	return held && m->files[i].path ? m->files[i].path : files[i];
}

/* Pass one: sizes and digests into the manifest, and each file's fast
 * hash into checks[]. */
static int measure(struct ps_manifest *m, const char *const *files,
                   const struct ps_archive_blob *blobs, uint64_t *checks, char *err, size_t errsz)
{
	uint64_t total = 0;

	/* what the reader would refuse is not written (identical contents
	 * count twice here, so this errs on the safe side) */
	if (m->nr_files > PS_ARCHIVE_MAX_FILES)
		return ps_fail(err, errsz, -EFBIG, "%zu files, more than an archive holds (%u)",
		               m->nr_files, PS_ARCHIVE_MAX_FILES);
	for (size_t i = 0; i < m->nr_files; i++) {
		struct content content = { .sha256 = m->files[i].sha256, .check = &checks[i] };
		int rc = read_source(files, blobs, i, PS_ARCHIVE_MAX_ENTRY, &content,
		                     &m->files[i].size, NULL, NULL);

		if (rc == -EFBIG)
			return ps_fail(
			        err, errsz, rc, "%s: more than %llu bytes, too large to archive",
			        shown(m, files, i), (unsigned long long)PS_ARCHIVE_MAX_ENTRY);
		if (rc)
			return ps_fail(err, errsz, rc, "%s: %s", shown(m, files, i),
			               rc == -EINVAL ? "not a regular file" : strerror(-rc));
		total += m->files[i].size;
		if (total > PS_ARCHIVE_MAX_TOTAL)
			return ps_fail(
			        err, errsz, -EFBIG,
			        "%s: the files come to more than %llu bytes, too much to archive",
			        shown(m, files, i), (unsigned long long)PS_ARCHIVE_MAX_TOTAL);
	}
	return 0;
}

static int write_members(struct archive *ar, struct ps_manifest *m, const char *const *files,
                         const struct ps_archive_blob *blobs, const uint64_t *checks, char *err,
                         size_t errsz)
{
	char hex[PS_ARCHIVE_HEX_SIZE + 1];
	size_t len;
	char *text = ps_manifest_format(m, &len);
	int rc;

	if (!text)
		return ps_fail(err, errsz, -ENOMEM, "out of memory");
	rc = add_member(ar, PS_ARCHIVE_MANIFEST_NAME, len, m->perf_data_mtime);
	if (!rc && archive_write_data(ar, text, len) != (la_ssize_t)len)
		rc = -EIO;
	free(text);
	if (rc)
		return ps_fail(err, errsz, rc, "cannot write: %s", archive_error_string(ar));
	for (size_t i = 0; i < m->nr_files; i++) {
		const struct ps_archive_file *f = &m->files[i];
		struct member_sink sink = { .ar = ar, .left = f->size };
		uint64_t size, check;
		struct content content = { .check = &check };
		bool stored = false;

		/* each content once */
		for (size_t j = 0; j < i && !stored; j++)
			stored = memcmp(m->files[j].sha256, f->sha256, PS_ARCHIVE_SHA256_SIZE) == 0;
		if (stored)
			continue;
		ps_archive_hex(f->sha256, hex);
		rc = add_member(ar, hex, f->size, m->perf_data_mtime);
		if (rc)
			return ps_fail(err, errsz, rc, "cannot write: %s",
			               archive_error_string(ar));
		rc = read_source(files, blobs, i, f->size, &content, &size, write_chunk, &sink);
		if (rc == -EIO)
			return ps_fail(err, errsz, rc, "cannot write: %s",
			               archive_error_string(ar));
		if (rc == -ESTALE || rc == -EFBIG ||
		    (!rc && (size != f->size || check != checks[i])))
			return ps_fail(err, errsz, -ESTALE, "%s: changed while being archived",
			               shown(m, files, i));
		if (rc)
			return ps_fail(err, errsz, rc, "%s: %s", shown(m, files, i),
			               rc == -EINVAL ? "not a regular file" : strerror(-rc));
	}
	return 0;
}

/* zstd compresses on every CPU (up to MAX_THREADS). Its output is the
 * same for any number of worker threads, one included, but not in its
 * single-threaded mode: at least one worker always, so that one capture
 * makes the same archive on any machine. Where libarchive lacks the
 * option, single-threaded. */
static void zstd_threads(struct archive *ar)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char text[16];

	if (cpus < 1)
		cpus = 1;
	snprintf(text, sizeof(text), "%ld", cpus < MAX_THREADS ? cpus : MAX_THREADS);
	(void)archive_write_set_filter_option(ar, "zstd", "threads", text);
}

static int write_archive(const char *out_path, struct ps_manifest *m, const char *const *files,
                         const struct ps_archive_blob *blobs, const uint64_t *checks, char *err,
                         size_t errsz)
{
	struct ps_output_file *out;
	struct archive *ar;
	/* a regular file is replaced only once the archive is whole, so a
	 * failure never leaves a partial archive (or clobbers an old one) */
	int rc = ps_output_file_open(out_path, &out);

	if (rc)
		return ps_fail(err, errsz, rc, "%s: %s", out_path, strerror(-rc));
	ar = archive_write_new();
	if (!ar) {
		ps_output_file_abort(out);
		return ps_fail(err, errsz, -ENOMEM, "out of memory");
	}
	if (archive_write_set_format_pax_restricted(ar) != ARCHIVE_OK ||
	    archive_write_add_filter_zstd(ar) != ARCHIVE_OK) {
		rc = ps_fail(err, errsz, -ENOTSUP,
		             "libarchive cannot write zstd-compressed tar: %s",
		             archive_error_string(ar));
		goto out;
	}
	zstd_threads(ar);
	if (archive_write_open_fd(ar, ps_output_file_fd(out)) != ARCHIVE_OK) {
		rc = ps_fail(err, errsz, -EIO, "%s: %s", out_path, archive_error_string(ar));
		goto out;
	}
	rc = write_members(ar, m, files, blobs, checks, err, errsz);
	if (archive_write_close(ar) != ARCHIVE_OK && !rc)
		rc = ps_fail(err, errsz, -EIO, "%s: %s", out_path, archive_error_string(ar));
out:
	archive_write_free(ar);
	if (rc) {
		ps_output_file_abort(out);
		return rc;
	}
	rc = ps_output_file_commit(out);
	if (rc)
		return ps_fail(err, errsz, rc, "%s: %s", out_path, strerror(-rc));
	return 0;
}

int ps_archive_write(const char *out_path, struct ps_manifest *m, const char *const *files,
                     const struct ps_archive_blob *blobs, char *err, size_t errsz)
{
	uint64_t *checks = calloc(m->nr_files ? m->nr_files : 1, sizeof(*checks));
	int rc;

	if (!checks)
		return ps_fail(err, errsz, -ENOMEM, "out of memory");
	rc = measure(m, files, blobs, checks, err, errsz);
	if (!rc)
		rc = write_archive(out_path, m, files, blobs, checks, err, errsz);
	free(checks);
	return rc;
}
