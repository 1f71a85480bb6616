/* Reading an archive: every member is checked before and while it is
 * unpacked (type, name, size, digest), files are created only under names
 * made here from validated digests inside a fresh 0700 directory, and any
 * failure removes everything unpacked so far. Then paths the session asks
 * for are looked up in the manifest.
 *
 * Each unpacked file is made without a name (O_TMPFILE) and kept open; the
 * session opens it again through /proc/self/fd/N. So nothing is left on
 * disk however the process ends (a signal, SIGKILL, a crash). Where the
 * file system cannot make unnamed files, each file is made in a fresh
 * 0700 directory and unlinked at once, and the directory is removed once
 * all members are in.
 */
#define _GNU_SOURCE 1 /* O_TMPFILE */
#include "archive/archive_priv.h"

#include <archive.h>
#include <archive_entry.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/message.h"

struct lookup {
	const char *path; /* the manifest's */
	char *local;
};

/* One distinct content. */
struct blob {
	uint8_t sha256[PS_ARCHIVE_SHA256_SIZE];
	uint64_t size;
	bool unpacked;
	int fd; /* the unpacked (and unlinked) file, open until close */
};

struct ps_archive {
	const char *tmpdir; /* $TMPDIR or /tmp */
	char *dir; /* only where unnamed files (O_TMPFILE) cannot be made */
	struct ps_manifest manifest;
	struct blob *blobs;
	size_t nr_blobs;
	struct lookup *lookups; /* sorted by path */
	const char *perf_data;
	const char *kernel;
	enum ps_archive_kind kernel_kind;
};

bool ps_archive_detect(int fd)
{
	static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	uint8_t head[4];

	return pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
	       memcmp(head, zstd_magic, sizeof(head)) == 0;
}

static char *blob_path(const struct ps_archive *a, const uint8_t *sha256)
{
	char hex[PS_ARCHIVE_HEX_SIZE + 1];
	char *path = malloc(strlen(a->dir) + 1 + PS_ARCHIVE_HEX_SIZE + 1);

	if (!path)
		return NULL;
	ps_archive_hex(sha256, hex);
	sprintf(path, "%s/%s", a->dir, hex);
	return path;
}

/* How the session opens an unpacked file: through its descriptor. */
static char *blob_fd_path(const struct blob *blob)
{
	char *path = malloc(sizeof("/proc/self/fd/") + 11);

	if (path)
		sprintf(path, "/proc/self/fd/%d", blob->fd);
	return path;
}

void ps_archive_close(struct ps_archive *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr_blobs; i++)
		if (a->blobs[i].unpacked)
			close(a->blobs[i].fd);
	if (a->dir) {
		rmdir(a->dir);
		free(a->dir);
	}
	if (a->lookups)
		for (size_t i = 0; i < a->manifest.nr_files; i++)
			free(a->lookups[i].local);
	free(a->lookups);
	free(a->blobs);
	ps_manifest_release(&a->manifest);
	free(a);
}

static int compare_blobs(const void *x, const void *y)
{
	return memcmp(((const struct blob *)x)->sha256, ((const struct blob *)y)->sha256,
	              PS_ARCHIVE_SHA256_SIZE);
}

static int compare_lookups(const void *x, const void *y)
{
	return strcmp(((const struct lookup *)x)->path, ((const struct lookup *)y)->path);
}

/* The distinct contents the manifest lists, sorted by digest. */
static int collect_blobs(struct ps_archive *a)
{
	const struct ps_manifest *m = &a->manifest;
	size_t n = 0;

	a->blobs = calloc(m->nr_files ? m->nr_files : 1, sizeof(*a->blobs));
	if (!a->blobs)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_files; i++) {
		memcpy(a->blobs[n].sha256, m->files[i].sha256, PS_ARCHIVE_SHA256_SIZE);
		a->blobs[n++].size = m->files[i].size;
	}
	qsort(a->blobs, n, sizeof(*a->blobs), compare_blobs);
	a->nr_blobs = 0;
	for (size_t i = 0; i < n; i++)
		if (!a->nr_blobs || compare_blobs(&a->blobs[a->nr_blobs - 1], &a->blobs[i]) != 0)
			a->blobs[a->nr_blobs++] = a->blobs[i];
	return 0;
}

/* The blob a member name stands for: exactly 64 lower-case hex digits of
 * a digest the manifest lists. */
static struct blob *blob_by_name(struct ps_archive *a, const char *name)
{
	struct blob key;

	if (strlen(name) != PS_ARCHIVE_HEX_SIZE)
		return NULL;
	for (size_t i = 0; i < PS_ARCHIVE_SHA256_SIZE; i++) {
		char pair[3] = { name[2 * i], name[2 * i + 1], 0 };
		char *end;

		if (!strchr("0123456789abcdef", pair[0]) || !strchr("0123456789abcdef", pair[1]) ||
		    !pair[0] || !pair[1])
			return NULL;
		key.sha256[i] = (uint8_t)strtoul(pair, &end, 16);
	}
	return bsearch(&key, a->blobs, a->nr_blobs, sizeof(*a->blobs), compare_blobs);
}

static bool unsafe_name(const char *name)
{
	if (name[0] == '/' || strcmp(name, "..") == 0 || strncmp(name, "../", 3) == 0)
		return true;
	return strstr(name, "/../") != NULL ||
	       (strlen(name) >= 3 && strcmp(name + strlen(name) - 3, "/..") == 0);
}

/* Why a member's header makes it unacceptable (anything but a regular
 * file of known size), or NULL. */
static const char *member_problem(struct archive_entry *entry)
{
	if (archive_entry_hardlink(entry))
		return "a hard link";
	switch (archive_entry_filetype(entry)) {
	case AE_IFREG:
		break;
	case AE_IFLNK:
		return "a symbolic link";
	case AE_IFDIR:
		return "a directory";
	default:
		return "a device, FIFO or socket";
	}
	if (archive_entry_sparse_count(entry) > 0)
		return "a sparse file";
	if (!archive_entry_size_is_set(entry))
		return "of unknown size";
	return NULL;
}

/* Copy the member's data to fd, hashing it; no more than limit bytes. */
static int unpack_data(struct archive *ar, int fd, uint64_t limit, uint8_t *digest, uint64_t *size,
                       const char **why)
{
	struct sha256_ctx sha;
	uint8_t buf[65536];

	sha256_init(&sha);
	*size = 0;
	for (;;) {
		la_ssize_t n = archive_read_data(ar, buf, sizeof(buf));

		if (n == 0)
			break;
		if (n < 0) {
			*why = archive_error_string(ar);
			return -EINVAL;
		}
		if ((uint64_t)n > limit - *size) {
			*why = "more data than the manifest says";
			return -EFBIG;
		}
		sha256_update(&sha, (size_t)n, buf);
		*size += (uint64_t)n;
		for (size_t done = 0; done < (size_t)n;) {
			ssize_t w = write(fd, buf + done, (size_t)n - done);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 && errno ? -errno : -ENOSPC;
			done += (size_t)w;
		}
	}
	sha256_digest(&sha, SHA256_DIGEST_SIZE, digest);
	return 0;
}

static int read_manifest(struct archive *ar, const char *path,
                         const struct ps_archive_limits *limits, struct ps_manifest *m, char *err,
                         size_t errsz)
{
	struct archive_entry *entry;
	char why[384];
	const char *problem;
	char *text;
	la_int64_t size;
	size_t got = 0;
	int rc = archive_read_next_header(ar, &entry);

	if (rc != ARCHIVE_OK)
		return ps_fail(err, errsz, -EINVAL,
		               "%s: entry %s at offset 0: not a pystitch archive: %s", path,
		               PS_ARCHIVE_MANIFEST_NAME,
		               rc == ARCHIVE_EOF ? "empty" : archive_error_string(ar));
	if (strcmp(archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "",
	           PS_ARCHIVE_MANIFEST_NAME) != 0)
		return ps_fail(err, errsz, -EINVAL,
		               "%s: not a pystitch archive: first entry is not %s", path,
		               PS_ARCHIVE_MANIFEST_NAME);
	if ((problem = member_problem(entry)) != NULL)
		return ps_fail(err, errsz, -EINVAL, "%s: entry %s: %s", path,
		               PS_ARCHIVE_MANIFEST_NAME, problem);
	size = archive_entry_size(entry);
	if (size < 0 || (uint64_t)size > PS_ARCHIVE_MANIFEST_MAX)
		return ps_fail(err, errsz, -EFBIG, "%s: entry %s: %" PRId64 " bytes, more than %u",
		               path, PS_ARCHIVE_MANIFEST_NAME, (int64_t)size,
		               PS_ARCHIVE_MANIFEST_MAX);
	text = malloc((size_t)size + 1);
	if (!text)
		return ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
	while (got < (size_t)size) {
		la_ssize_t n = archive_read_data(ar, text + got, (size_t)size - got);

		if (n <= 0) {
			free(text);
			return ps_fail(err, errsz, -EINVAL, "%s: entry %s at offset 0: %s", path,
			               PS_ARCHIVE_MANIFEST_NAME,
			               n < 0 ? archive_error_string(ar) : "truncated");
		}
		got += (size_t)n;
	}
	rc = ps_manifest_parse(text, got, limits, m, why, sizeof(why));
	free(text);
	if (rc)
		return ps_fail(err, errsz, rc, "%s: %s", path, why);
	return 0;
}

/* A file for blob's content with no name on disk; a descriptor or a
 * negative errno (the message in err). */
static int create_unnamed(struct ps_archive *a, const struct blob *blob, const char *path,
                          char *err, size_t errsz)
{
	char *local;
	int fd, rc;

	if (!a->dir) {
		fd = open(a->tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return ps_fail(err, errsz, -errno, "%s: cannot create a file in %s: %s",
			               path, a->tmpdir, strerror(errno));
		/* this file system has no O_TMPFILE: a private directory */
		a->dir = malloc(strlen(a->tmpdir) + sizeof("/pystitch-archive-XXXXXX"));
		if (!a->dir)
			return ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
		sprintf(a->dir, "%s/pystitch-archive-XXXXXX", a->tmpdir);
		if (!mkdtemp(a->dir)) {
			rc = -errno;
			free(a->dir);
			a->dir = NULL;
			return ps_fail(err, errsz, rc, "%s: cannot create a directory in %s: %s",
			               path, a->tmpdir, strerror(-rc));
		}
	}
	local = blob_path(a, blob->sha256);
	if (!local)
		return ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
	fd = open(local, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		ps_fail(err, errsz, rc, "%s: cannot create %s: %s", path, local, strerror(-rc));
		free(local);
		return rc;
	}
	unlink(local);
	free(local);
	return fd;
}

static int unpack_members(struct ps_archive *a, struct archive *ar, const char *path, char *err,
                          size_t errsz)
{
	struct archive_entry *entry;
	/* the entry before the next, for a damaged header's message */
	char last[PS_ARCHIVE_HEX_SIZE + 1] = PS_ARCHIVE_MANIFEST_NAME;
	int rc;

	while ((rc = archive_read_next_header(ar, &entry)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(entry);
		int64_t at = archive_read_header_position(ar);
		const char *problem = member_problem(entry), *why = NULL;
		uint8_t digest[PS_ARCHIVE_SHA256_SIZE];
		struct blob *blob;
		uint64_t size;
		int fd;

		if (!name)
			name = "";
		if (unsafe_name(name))
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%.200s' at offset %" PRId64 ": unsafe path",
			               path, name, at);
		if (problem)
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%.200s' at offset %" PRId64 ": %s", path, name,
			               at, problem);
		blob = blob_by_name(a, name);
		if (!blob)
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%.200s' at offset %" PRId64
			               ": not in the manifest",
			               path, name, at);
		if (blob->unpacked)
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%.200s' at offset %" PRId64 ": appears twice",
			               path, name, at);
		if ((uint64_t)archive_entry_size(entry) != blob->size)
			return ps_fail(err, errsz, -EFBIG,
			               "%s: entry '%.200s' at offset %" PRId64 ": %" PRId64
			               " bytes, the manifest says %" PRIu64,
			               path, name, at, (int64_t)archive_entry_size(entry),
			               blob->size);
		fd = create_unnamed(a, blob, path, err, errsz);
		if (fd < 0)
			return fd;
		/* from now on only the descriptor holds it (closed by
		 * ps_archive_close()) */
		blob->fd = fd;
		blob->unpacked = true;
		rc = unpack_data(ar, fd, blob->size, digest, &size, &why);
		if (rc == -EINVAL || rc == -EFBIG)
			return ps_fail(err, errsz, rc,
			               "%s: entry '%.200s' at offset %" PRId64 ": %s", path, name,
			               at, why ? why : "cannot read");
		if (rc) /* this machine's fault (a full disk), not the archive's */
			return ps_fail(err, errsz, rc,
			               "%s: entry '%.200s' at offset %" PRId64
			               ": cannot unpack: %s",
			               path, name, at, strerror(-rc));
		if (size != blob->size)
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%.200s' at offset %" PRId64 ": %" PRIu64
			               " of %" PRIu64 " bytes (truncated)",
			               path, name, at, size, blob->size);
		if (memcmp(digest, blob->sha256, PS_ARCHIVE_SHA256_SIZE) != 0)
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%.200s' at offset %" PRId64
			               ": SHA-256 differs from the manifest's",
			               path, name, at);
		snprintf(last, sizeof(last), "%s", name);
	}
	/* offsets in the tar stream, as for the entries */
	if (rc != ARCHIVE_EOF)
		return ps_fail(err, errsz, -EINVAL,
		               "%s: the entry after '%s', at offset %" PRId64 ": %s", path, last,
		               (int64_t)archive_filter_bytes(ar, 0), archive_error_string(ar));
	for (size_t i = 0; i < a->nr_blobs; i++) {
		if (!a->blobs[i].unpacked) {
			char hex[PS_ARCHIVE_HEX_SIZE + 1];

			ps_archive_hex(a->blobs[i].sha256, hex);
			return ps_fail(err, errsz, -EINVAL,
			               "%s: entry '%s' listed in the manifest is "
			               "missing",
			               path, hex);
		}
	}
	return 0;
}

static int build_lookups(struct ps_archive *a)
{
	const struct ps_manifest *m = &a->manifest;

	a->lookups = calloc(m->nr_files ? m->nr_files : 1, sizeof(*a->lookups));
	if (!a->lookups)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_files; i++) {
		a->lookups[i].path = m->files[i].path;
		struct blob key = { 0 }, *blob;

		memcpy(key.sha256, m->files[i].sha256, PS_ARCHIVE_SHA256_SIZE);
		blob = bsearch(&key, a->blobs, a->nr_blobs, sizeof(key), compare_blobs);
		/* unpack_members() unpacked a blob for every file */
		assert(blob && blob->unpacked);
		a->lookups[i].local = blob_fd_path(blob);
		if (!a->lookups[i].local)
			return -ENOMEM;
		if (m->files[i].kind == PS_ARCHIVE_PERF_DATA && !a->perf_data)
			a->perf_data = a->lookups[i].local;
		if (m->files[i].kind == PS_ARCHIVE_KALLSYMS ||
		    m->files[i].kind == PS_ARCHIVE_VMLINUX) {
			a->kernel = m->files[i].path;
			a->kernel_kind = m->files[i].kind;
		}
	}
	qsort(a->lookups, m->nr_files, sizeof(*a->lookups), compare_lookups);
	return 0;
}

/* Refuse before writing anything when the files would not fit where they
 * are unpacked: a small archive can claim gigabytes. */
static int check_space(const struct ps_archive *a, const char *path, char *err, size_t errsz)
{
	uint64_t total = 0, avail;
	struct statvfs vfs;

	for (size_t i = 0; i < a->nr_blobs; i++)
		total += a->blobs[i].size; /* bounded by the manifest's limit */
	if (statvfs(a->tmpdir, &vfs) != 0)
		return 0; /* cannot tell: the writes will say */
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (total > avail)
		return ps_fail(err, errsz, -ENOSPC,
		               "%s: its files need %" PRIu64 " bytes, %s has %" PRIu64
		               " free (set TMPDIR to a larger place)",
		               path, total, a->tmpdir, avail);
	return 0;
}

int ps_archive_open(const char *path, const struct ps_archive_limits *limits,
                    struct ps_archive **out, char *err, size_t errsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	*out = NULL;
	if (fd < 0)
		return ps_fail(err, errsz, -errno, "%s: cannot open: %s", path, strerror(errno));
	rc = ps_archive_open_fd(fd, path, limits, out, err, errsz);
	close(fd);
	return rc;
}

int ps_archive_open_fd(int fd, const char *path, const struct ps_archive_limits *limits,
                       struct ps_archive **out, char *err, size_t errsz)
{
	const char *tmpdir = getenv("TMPDIR");
	struct ps_archive *a = calloc(1, sizeof(*a));
	struct archive *ar = NULL;
	int rc;

	*out = NULL;
	if (!a)
		return ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	ar = archive_read_new();
	if (!ar) {
		rc = ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	/* only what pystitch writes: zstd-compressed tar */
	if (archive_read_support_filter_zstd(ar) != ARCHIVE_OK ||
	    archive_read_support_format_tar(ar) != ARCHIVE_OK) {
		rc = ps_fail(err, errsz, -ENOTSUP, "%s: libarchive cannot read zstd-compressed tar",
		             path);
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		rc = ps_fail(err, errsz, -errno, "%s: cannot seek: %s", path, strerror(errno));
		goto out;
	}
	if (archive_read_open_fd(ar, fd, 65536) != ARCHIVE_OK) {
		rc = ps_fail(err, errsz, -EINVAL,
		             "%s: entry %s at offset 0: not a pystitch archive: %s", path,
		             PS_ARCHIVE_MANIFEST_NAME, archive_error_string(ar));
		goto out;
	}
	rc = read_manifest(ar, path, limits, &a->manifest, err, errsz);
	if (rc)
		goto out;
	if (collect_blobs(a)) {
		rc = ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
	a->tmpdir = tmpdir;
	rc = check_space(a, path, err, errsz);
	if (rc)
		goto out;
	rc = unpack_members(a, ar, path, err, errsz);
	if (rc)
		goto out;
	/* empty now (if made at all): every file in it was unlinked once open */
	if (a->dir) {
		rmdir(a->dir);
		free(a->dir);
		a->dir = NULL;
	}
	if (build_lookups(a)) {
		rc = ps_fail(err, errsz, -ENOMEM, "%s: out of memory", path);
		goto out;
	}
out:
	if (ar)
		archive_read_free(ar);
	if (rc) {
		ps_archive_close(a);
		return rc;
	}
	*out = a;
	return 0;
}

const struct ps_manifest *ps_archive_manifest(const struct ps_archive *a)
{
	return &a->manifest;
}

const char *ps_archive_perf_data(const struct ps_archive *a)
{
	return a->perf_data;
}

bool ps_archive_perf_data_is_folder(const struct ps_archive *a)
{
	/* the manifest's check put the capture or PATH/data first */
	return ps_manifest_is_folder(&a->manifest);
}

const char *ps_archive_resolve(void *ctx, const char *path)
{
	const struct ps_archive *a = ctx;
	struct lookup key = { .path = path };
	const struct lookup *found =
	        bsearch(&key, a->lookups, a->manifest.nr_files, sizeof(key), compare_lookups);

	return found ? found->local : NULL;
}

const char *ps_archive_path_at(void *ctx, size_t index)
{
	const struct ps_archive *a = ctx;

	return index < a->manifest.nr_files ? a->manifest.files[index].path : NULL;
}

const char *ps_archive_kernel(const struct ps_archive *a, enum ps_archive_kind *kind)
{
	*kind = a->kernel_kind;
	return a->kernel;
}
