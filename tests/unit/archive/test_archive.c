/* Unit tests of src/archive (Check): the manifest's text format (round
 * trip of awkward paths, every rejection), and reading archives built here
 * with libarchive, well formed and hostile: unsafe names, links, members
 * the manifest does not list or lists once, sizes and digests that
 * disagree, truncation and size limits. Every failure must leave nothing
 * behind in $TMPDIR. Check's environment variables pick what runs:
 * CK_RUN_CASE, CK_VERBOSITY, CK_FORK=no. */
#include <archive.h>
#include <archive_entry.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_priv.h"

static char work[256], tmpdir[300];

static void setup(void)
{
	snprintf(work, sizeof(work), "%s/ps-archive-test.XXXXXX",
	         getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(work));
	snprintf(tmpdir, sizeof(tmpdir), "%s/tmp", work);
	ck_assert_int_eq(mkdir(tmpdir, 0700), 0);
	setenv("TMPDIR", tmpdir, 1);
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[600];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

static void teardown(void)
{
	remove_tree(work);
}

static size_t entries_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void digest_hex(const char *data, size_t len, char *hex)
{
	struct sha256_ctx sha;
	uint8_t digest[SHA256_DIGEST_SIZE];

	sha256_init(&sha);
	sha256_update(&sha, len, (const uint8_t *)data);
	sha256_digest(&sha, sizeof(digest), digest);
	ps_archive_hex(digest, hex);
}

/* ---- the manifest ----------------------------------------------------- */

START_TEST(test_manifest_round_trip)
{
	static const char *const paths[] = { "perf data/with space", "/usr/lib/x.so",
		                             "/tmp/a%b\nnew line", "/x/\xc3\xa9t\xc3\xa9", "-" };
	struct ps_manifest m = { .perf_data_mtime = 1700000000 }, back;
	char err[256], *text;
	size_t len;

	m.perf_data_path = strdup(paths[0]);
	m.symfs = strdup("");
	m.buildid_dir = strdup("/root/.debug");
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		ck_assert_int_eq(
		        ps_manifest_add(&m, i ? PS_ARCHIVE_ELF : PS_ARCHIVE_PERF_DATA, paths[i]),
		        0);
		m.files[i].size = 10 + i;
		m.files[i].sha256[0] = (uint8_t)i;
	}
	text = ps_manifest_format(&m, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(ps_manifest_parse(text, len, NULL, &back, err, sizeof(err)), 0);
	ck_assert_int_eq(back.perf_data_mtime, 1700000000);
	ck_assert_str_eq(back.perf_data_path, paths[0]);
	ck_assert_str_eq(back.symfs, "");
	ck_assert_str_eq(back.buildid_dir, "/root/.debug");
	ck_assert_ptr_null(back.perf_map_dir);
	ck_assert_uint_eq(back.nr_files, m.nr_files);
	for (size_t i = 0; i < m.nr_files; i++) {
		ck_assert_str_eq(back.files[i].path, paths[i]);
		ck_assert_uint_eq(back.files[i].size, 10 + i);
		ck_assert_int_eq(back.files[i].kind, m.files[i].kind);
		ck_assert_mem_eq(back.files[i].sha256, m.files[i].sha256, PS_ARCHIVE_SHA256_SIZE);
	}
	free(text);
	ps_manifest_release(&m);
	ps_manifest_release(&back);
}
END_TEST

/* A folder's files round-trip in their order, in format 3 (older
 * readers say the version instead of misreading them); a file capture
 * stays in the oldest format. */
START_TEST(test_manifest_folder)
{
	static const char *const paths[] = { "cap.data/data", "cap.data/data.3",
		                             "cap.data/data.0" };
	struct ps_manifest m = { .perf_data_mtime = 7 }, back;
	char err[256], *text;
	size_t len;

	m.perf_data_path = strdup("cap.data");
	m.buildid_dir = strdup("/d");
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(ps_manifest_add(&m, PS_ARCHIVE_PERF_DATA, paths[i]), 0);
		m.files[i].size = 1;
		m.files[i].sha256[0] = (uint8_t)i;
	}
	text = ps_manifest_format(&m, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert(strncmp(text, "pystitch-archive 3\n", 19) == 0);
	ck_assert_msg(ps_manifest_parse(text, len, NULL, &back, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(back.nr_files, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_str_eq(back.files[i].path, paths[i]);
	free(text);
	ps_manifest_release(&back);
	ps_manifest_release(&m);

	memset(&m, 0, sizeof(m));
	m.perf_data_path = strdup("cap.data");
	m.buildid_dir = strdup("/d");
	ck_assert_int_eq(ps_manifest_add(&m, PS_ARCHIVE_PERF_DATA, "cap.data"), 0);
	text = ps_manifest_format(&m, &len);
	ck_assert_ptr_nonnull(text);
	ck_assert(strncmp(text, "pystitch-archive 1\n", 19) == 0);
	free(text);
	ps_manifest_release(&m);
}
END_TEST

#define HEAD                                                                                       \
	"pystitch-archive 1\nmtime 5\nperf-data-path =p\nsymfs -\nbuildid-dir =/d\nperf-map-dir "  \
	"-\n"
#define HEAD3                                                                                      \
	"pystitch-archive 3\nmtime 5\nperf-data-path =p\nsymfs -\nbuildid-dir =/d\nperf-map-dir "  \
	"-\n"
#define D0 "0000000000000000000000000000000000000000000000000000000000000000"
#define D1 "1111111111111111111111111111111111111111111111111111111111111111"
#define PERF "file perf.data 4 " D0 " =p\n"

static const struct {
	const char *text, *why;
	int rc;
} bad_manifests[] = {
	{ "", "no 'end' line", -EINVAL },
	{ "pystitch-archive 4\n", "format version 4", -EINVAL },
	{ "tar\n", "not a pystitch archive manifest", -EINVAL },
	{ HEAD PERF "end", "no newline at the end", -EINVAL },
	{ HEAD PERF, "no 'end' line", -EINVAL },
	{ HEAD "end\n", "no perf.data listed", -EINVAL },
	{ HEAD PERF "end\nfile elf 1 " D1 " =x\n", "text after 'end'", -EINVAL },
	{ HEAD PERF PERF "end\n", "a second perf.data", -EINVAL },
	/* a folder's files (format 3): PATH/data, then PATH/data.N */
	{ HEAD "file perf.data 4 " D0 " =p/data\nend\n", "out of place", -EINVAL },
	{ HEAD3 "file perf.data 4 " D0 " =p/data.0\nend\n", "out of place", -EINVAL },
	{ HEAD3 "file perf.data 4 " D0 " =q/data\nend\n", "out of place", -EINVAL },
	{ HEAD3 "file perf.data 4 " D0 " =p/data\nfile perf.data 4 " D1 " =p/other\nend\n",
	  "out of place", -EINVAL },
	{ HEAD3 "file perf.data 4 " D0 " =p/data\nfile perf.data 4 " D1 " =p/data.\nend\n",
	  "out of place", -EINVAL },
	{ HEAD3 "file perf.data 4 " D0 " =p/data\nfile perf.data 4 " D1 " =p/data.0/x\nend\n",
	  "out of place", -EINVAL },
	{ HEAD3 "file perf.data 4 " D0 " =p/data\nfile perf.data 4 " D1 " =p\nend\n",
	  "out of place", -EINVAL },
	{ HEAD3 PERF PERF "end\n", "out of place", -EINVAL },
	{ HEAD3 PERF "file perf.data 4 " D1 " =p/data.0\nend\n", "out of place", -EINVAL },
	{ HEAD PERF "file elf 4 " D1 " =p\nend\n", "path listed twice", -EINVAL },
	{ HEAD PERF "file elf 5 " D0 " =q\nend\n", "one digest with two sizes", -EINVAL },
	{ HEAD PERF "file kallsyms 1 " D1 " =k\nfile vmlinux 1 " D1 " =v\nend\n",
	  "a second kernel symbols file", -EINVAL },
	{ HEAD PERF "file core 1 " D1 " =x\nend\n", "unknown file kind", -EINVAL },
	{ HEAD PERF "file elf 01 " D1 " =x\nend\n", "bad size", -EINVAL },
	{ HEAD PERF "file elf -1 " D1 " =x\nend\n", "bad size", -EINVAL },
	{ HEAD PERF "file elf 99999999999999999999 " D1 " =x\nend\n", "bad size", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 "A =x\nend\n", "bad SHA-256", -EINVAL },
	{ HEAD PERF
	  "file elf 1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA =x\nend\n",
	  "bad SHA-256", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 " x\nend\n", "must start with '='", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 " =a%2\nend\n", "bad %-escape", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 " =a%00b\nend\n", "bad %-escape", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 " =a\tb\nend\n", "not escaped", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 " -\nend\n", "file without a path", -EINVAL },
	{ HEAD PERF "file elf 1 " D1 " =x extra\nend\n", "not a manifest line", -EINVAL },
	{ HEAD PERF "file  elf 1 " D1 " =x\nend\n", "not a manifest line", -EINVAL },
	{ HEAD PERF "file elf 5000000000 " D1 " =x\nend\n", "more than 4294967296", -EFBIG },
	{ "pystitch-archive 1\nmtime x\n", "bad mtime", -EINVAL },
	{ "pystitch-archive 1\nsymfs -\n", "expected 'mtime'", -EINVAL },
};

START_TEST(test_manifest_rejects)
{
	const char *text = bad_manifests[_i].text;
	struct ps_manifest m;
	char err[256] = "";
	int rc = ps_manifest_parse(text, strlen(text), NULL, &m, err, sizeof(err));

	ck_assert_msg(rc == bad_manifests[_i].rc, "case %d: rc %d, want %d (%s)", _i, rc,
	              bad_manifests[_i].rc, err);
	ck_assert_msg(strstr(err, bad_manifests[_i].why) != NULL, "case %d: '%s' lacks '%s'", _i,
	              err, bad_manifests[_i].why);
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_uint_eq(m.nr_files, 0);
}
END_TEST

/* A NUL byte is reported on its own line, with its byte. */
START_TEST(test_manifest_nul)
{
	static const char text[] = HEAD PERF "file elf 1 " D1 " =x\0y\nend\n";
	struct ps_manifest m;
	char err[256] = "";

	ck_assert_int_eq(ps_manifest_parse(text, sizeof(text) - 1, NULL, &m, err, sizeof(err)),
	                 -EINVAL);
	ck_assert_msg(strstr(err, "MANIFEST line 8: NUL byte at byte"), "%s", err);
}
END_TEST

START_TEST(test_manifest_total_limit)
{
	static const char text[] = HEAD PERF "file elf 4 " D1 " =x\nfile elf 4 " D1 " =y\nend\n";
	struct ps_archive_limits limits = { .max_total = 8 };
	struct ps_manifest m;
	char err[256];

	/* one content listed twice counts once */
	ck_assert_int_eq(ps_manifest_parse(text, strlen(text), &limits, &m, err, sizeof(err)), 0);
	ps_manifest_release(&m);
	limits.max_total = 7;
	ck_assert_int_eq(ps_manifest_parse(text, strlen(text), &limits, &m, err, sizeof(err)),
	                 -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, "files total more than 7 bytes"));
}
END_TEST

/* ---- archives ------------------------------------------------------- */

struct member {
	const char *name;
	const char *data;
	long long declared; /* header size; -1: strlen(data) */
	int type; /* 0: regular */
	const char *link; /* symlink target or hard link name */
};

static void write_tar(const char *path, const struct member *members, size_t n)
{
	struct archive *ar = archive_write_new();

	ck_assert_int_eq(archive_write_set_format_pax_restricted(ar), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_add_filter_zstd(ar), ARCHIVE_OK);
	ck_assert_int_eq(archive_write_open_filename(ar, path), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		size_t len = members[i].data ? strlen(members[i].data) : 0;

		archive_entry_set_pathname(e, members[i].name);
		archive_entry_set_perm(e, 0644);
		if (members[i].type == AE_IFLNK) {
			archive_entry_set_filetype(e, AE_IFLNK);
			archive_entry_set_symlink(e, members[i].link);
		} else {
			archive_entry_set_filetype(e, AE_IFREG);
			if (members[i].type == -1)
				archive_entry_set_hardlink(e, members[i].link);
			archive_entry_set_size(e, members[i].declared >= 0 ? members[i].declared
			                                                   : (long long)len);
		}
		ck_assert_int_eq(archive_write_header(ar, e), ARCHIVE_OK);
		if (len && members[i].type == 0)
			archive_write_data(ar, members[i].data, len);
		archive_entry_free(e);
	}
	ck_assert_int_eq(archive_write_close(ar), ARCHIVE_OK);
	archive_write_free(ar);
}

/* A manifest for perf.data "PERFDATA" and two paths sharing "ELFELF". */
static char manifest[1024], hex_perf[65], hex_elf[65];

static void make_manifest(void)
{
	digest_hex("PERFDATA", 8, hex_perf);
	digest_hex("ELFELF", 6, hex_elf);
	snprintf(manifest, sizeof(manifest),
	         "pystitch-archive 1\nmtime 42\nperf-data-path =run/perf.data\nsymfs -\n"
	         "buildid-dir =/root/.debug\nperf-map-dir -\n"
	         "file perf.data 8 %s =run/perf.data\n"
	         "file elf 6 %s =/usr/lib/libx.so\n"
	         "file perf-map 6 %s =/tmp/perf-7.map\n"
	         "end\n",
	         hex_perf, hex_elf, hex_elf);
}

static char *read_all(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = 0;
	return buf;
}

static uint64_t stream_hash_in_pieces(const uint8_t *data, size_t len, size_t piece)
{
	struct ps_stream_hash s;

	memset(&s, 0, sizeof(s));
	for (size_t done = 0; done < len; done += piece)
		ps_stream_hash_add(&s, data + done, len - done < piece ? len - done : piece);
	return ps_stream_hash_end(&s);
}

/* The writer's check of a file's second read: the same bytes in pieces of
 * any size hash the same, and a change of one byte, or of the length,
 * does not. */
START_TEST(test_stream_hash)
{
	static const size_t pieces[] = { 1, 3, 7, 8, 9, 64, 4093, 65536 };
	uint8_t data[10007];
	uint64_t state = 1, whole;

	for (size_t i = 0; i < sizeof(data); i++) {
		state = state * 6364136223846793005ull + 1442695040888963407ull;
		data[i] = (uint8_t)(state >> 56);
	}
	whole = stream_hash_in_pieces(data, sizeof(data), sizeof(data));
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
		ck_assert_uint_eq(stream_hash_in_pieces(data, sizeof(data), pieces[i]), whole);
	for (size_t at = 0; at < sizeof(data); at += 997) {
		data[at] ^= 0x10;
		ck_assert_uint_ne(stream_hash_in_pieces(data, sizeof(data), 4093), whole);
		data[at] ^= 0x10;
	}
	ck_assert_uint_ne(stream_hash_in_pieces(data, sizeof(data) - 1, 64), whole);
	/* zeros past the end are not the same as no bytes */
	memset(data, 0, 16);
	ck_assert_uint_ne(stream_hash_in_pieces(data, 8, 8), stream_hash_in_pieces(data, 16, 8));
}
END_TEST

START_TEST(test_archive_round_trip)
{
	struct member members[] = {
		{ PS_ARCHIVE_MANIFEST_NAME, manifest, -1, 0, NULL },
		{ hex_perf, "PERFDATA", -1, 0, NULL },
		{ hex_elf, "ELFELF", -1, 0, NULL },
	};
	char path[600], err[512] = "";
	struct ps_archive *a;
	enum ps_archive_kind kind;
	struct stat st;

	make_manifest();
	snprintf(path, sizeof(path), "%s/ok.pst", work);
	write_tar(path, members, 3);
	int fd = open(path, O_RDONLY);
	ck_assert(ps_archive_detect(fd));
	close(fd);
	ck_assert_msg(ps_archive_open(path, NULL, &a, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(read_all(ps_archive_perf_data(a)), "PERFDATA");
	ck_assert_str_eq(read_all(ps_archive_resolve(a, "/usr/lib/libx.so")), "ELFELF");
	ck_assert_str_eq(ps_archive_resolve(a, "/tmp/perf-7.map"),
	                 ps_archive_resolve(a, "/usr/lib/libx.so"));
	ck_assert_ptr_null(ps_archive_resolve(a, "/usr/lib/liby.so"));
	ck_assert_ptr_null(ps_archive_resolve(a, "/usr/lib/libx.so/"));
	ck_assert_ptr_null(ps_archive_kernel(a, &kind));
	ck_assert_int_eq(ps_archive_manifest(a)->perf_data_mtime, 42);
	/* private: the directory is the owner's only */
	ck_assert_int_eq(stat(ps_archive_perf_data(a), &st), 0);
	ck_assert_uint_eq(st.st_mode & 077, 0);
	/* nothing on disk while it is open: the unpacked files are unlinked
	 * and held by descriptor, so no signal can leave them behind */
	ck_assert_uint_eq(entries_in(tmpdir), 0);
	ck_assert_msg(strncmp(ps_archive_perf_data(a), "/proc/self/fd/", 14) == 0, "%s",
	              ps_archive_perf_data(a));
	ps_archive_close(a);
	ck_assert_uint_eq(entries_in(tmpdir), 0);
}
END_TEST

static const struct hostile {
	const char *label;
	struct member extra; /* appended after the good members */
	int drop; /* 0, or 1 + index of a good member left out */
	const char *why;
	int rc;
} hostile[] = {
	{ "parent", { "../evil", "x", -1, 0, NULL }, 0, "'../evil' at offset", -EINVAL },
	{ "inner parent", { "a/../../evil", "x", -1, 0, NULL }, 0, "unsafe path", -EINVAL },
	{ "absolute", { "/tmp/evil", "x", -1, 0, NULL }, 0, "unsafe path", -EINVAL },
	{ "symlink",
	  { "HEX_ELF", NULL, 0, AE_IFLNK, "/etc/passwd" },
	  3,
	  "a symbolic link",
	  -EINVAL },
	{ "hard link", { "HEX_ELF", NULL, 0, -1, "MANIFEST" }, 3, "a hard link", -EINVAL },
	{ "not listed", { D1, "x", -1, 0, NULL }, 0, "not in the manifest", -EINVAL },
	{ "plain name", { "evil", "x", -1, 0, NULL }, 0, "not in the manifest", -EINVAL },
	{ "twice", { "HEX_ELF", "ELFELF", -1, 0, NULL }, 0, "appears twice", -EINVAL },
	{ "bigger",
	  { "HEX_ELF", "ELFELF", 4096, 0, NULL },
	  3,
	  "4096 bytes, the manifest says 6",
	  -EFBIG },
	{ "digest", { "HEX_ELF", "ELFELG", -1, 0, NULL }, 3, "SHA-256 differs", -EINVAL },
	{ "missing", { "HEX_PERF", "PERFDATA", -1, 0, NULL }, 3, "is missing", -EINVAL },
};

START_TEST(test_archive_hostile)
{
	const struct hostile *h = &hostile[_i];
	struct member members[4] = {
		{ PS_ARCHIVE_MANIFEST_NAME, manifest, -1, 0, NULL },
		{ hex_perf, "PERFDATA", -1, 0, NULL },
		{ hex_elf, "ELFELF", -1, 0, NULL },
	};
	struct member kept[4];
	size_t n = 0;
	char path[600], err[512] = "", outside[600];
	struct ps_archive *a = (struct ps_archive *)1;
	int rc;

	make_manifest();
	members[3] = h->extra;
	if (strcmp(members[3].name, "HEX_ELF") == 0)
		members[3].name = hex_elf;
	if (strcmp(members[3].name, "HEX_PERF") == 0)
		members[3].name = hex_perf;
	for (size_t i = 0; i < 4; i++) {
		/* drop 3: the good member the extra one replaces */
		if (h->drop == 3 && i == 2)
			continue;
		if (h->drop == 3 && strcmp(h->label, "missing") == 0 && i == 1)
			continue;
		kept[n++] = members[i];
	}
	snprintf(path, sizeof(path), "%s/hostile.pst", work);
	write_tar(path, kept, n);
	rc = ps_archive_open(path, NULL, &a, err, sizeof(err));
	ck_assert_msg(rc == h->rc, "%s: rc %d (%s)", h->label, rc, err);
	ck_assert_ptr_null(a);
	ck_assert_msg(strstr(err, h->why) != NULL, "%s: '%s' lacks '%s'", h->label, err, h->why);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s: '%s' does not name the archive",
	              h->label, err);
	ck_assert_ptr_null(strchr(err, '\n'));
	ck_assert_uint_eq(entries_in(tmpdir), 0);
	snprintf(outside, sizeof(outside), "%s/evil", work);
	ck_assert_int_ne(access(outside, F_OK), 0);
}
END_TEST

START_TEST(test_archive_truncated_and_limits)
{
	struct member members[] = {
		{ PS_ARCHIVE_MANIFEST_NAME, manifest, -1, 0, NULL },
		{ hex_perf, "PERFDATA", -1, 0, NULL },
		{ hex_elf, "ELFELF", -1, 0, NULL },
	};
	struct ps_archive_limits limits = { .max_entry = 7 };
	char path[600], err[512];
	struct ps_archive *a;
	struct stat st;

	make_manifest();
	snprintf(path, sizeof(path), "%s/cut.pst", work);
	write_tar(path, members, 3);
	ck_assert_int_eq(ps_archive_open(path, &limits, &a, err, sizeof(err)), -EFBIG);
	ck_assert_ptr_nonnull(strstr(err, "8 bytes, more than 7"));
	ck_assert_int_eq(stat(path, &st), 0);
	for (off_t cut = st.st_size - 1; cut > 0; cut = cut * 2 / 3) {
		ck_assert_int_eq(truncate(path, cut), 0);
		ck_assert_int_lt(ps_archive_open(path, NULL, &a, err, sizeof(err)), 0);
		ck_assert_ptr_null(strchr(err, '\n'));
		ck_assert_uint_eq(entries_in(tmpdir), 0);
	}
	/* not the manifest first */
	write_tar(path, members + 1, 2);
	ck_assert_int_eq(ps_archive_open(path, NULL, &a, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "first entry is not MANIFEST"));
}
END_TEST

START_TEST(test_archive_write_read)
{
	struct ps_manifest m = { .perf_data_mtime = 7 };
	const char *files[3];
	char a_path[600], b_path[600], out[600], err[512] = "";
	struct ps_archive *a;
	FILE *f;

	snprintf(a_path, sizeof(a_path), "%s/a", work);
	snprintf(b_path, sizeof(b_path), "%s/b", work);
	snprintf(out, sizeof(out), "%s/w.pst", work);
	f = fopen(a_path, "w");
	fputs("capture", f);
	fclose(f);
	f = fopen(b_path, "w");
	fputs("same", f);
	fclose(f);
	m.perf_data_path = strdup("perf.data");
	m.buildid_dir = strdup("/b");
	ck_assert_int_eq(ps_manifest_add(&m, PS_ARCHIVE_PERF_DATA, "perf.data"), 0);
	ck_assert_int_eq(ps_manifest_add(&m, PS_ARCHIVE_KALLSYMS, "/proc/kallsyms"), 0);
	ck_assert_int_eq(ps_manifest_add(&m, PS_ARCHIVE_ELF, "/lib/b.so"), 0);
	files[0] = a_path;
	files[1] = b_path;
	files[2] = b_path;
	ck_assert_msg(ps_archive_write(out, &m, files, NULL, err, sizeof(err)) == 0, "%s", err);
	ps_manifest_release(&m);
	ck_assert_msg(ps_archive_open(out, NULL, &a, err, sizeof(err)) == 0, "%s", err);
	enum ps_archive_kind kind;
	ck_assert_str_eq(ps_archive_kernel(a, &kind), "/proc/kallsyms");
	ck_assert_int_eq(kind, PS_ARCHIVE_KALLSYMS);
	ck_assert_str_eq(read_all(ps_archive_resolve(a, "/lib/b.so")), "same");
	ck_assert_str_eq(read_all(ps_archive_perf_data(a)), "capture");
	ck_assert_uint_eq(entries_in(tmpdir), 0);
	ps_archive_close(a);
	/* an unreadable file fails the archive and leaves the old one alone */
	m = (struct ps_manifest){ .perf_data_path = strdup("p") };
	ck_assert_int_eq(ps_manifest_add(&m, PS_ARCHIVE_PERF_DATA, "p"), 0);
	files[0] = "/nonexistent/p";
	ck_assert_int_eq(ps_archive_write(out, &m, files, NULL, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/p"));
	ck_assert_uint_eq(entries_in(work), 4); /* a, b, w.pst and tmp */
	ck_assert_msg(ps_archive_open(out, NULL, &a, err, sizeof(err)) == 0, "%s", err);
	ps_archive_close(a);
	ps_manifest_release(&m);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("archive");
	TCase *manifest_case = tcase_create("manifest");
	TCase *archive_case = tcase_create("archive");
	SRunner *runner;
	int failed;

	tcase_add_test(manifest_case, test_manifest_round_trip);
	tcase_add_test(manifest_case, test_manifest_folder);
	tcase_add_loop_test(manifest_case, test_manifest_rejects, 0,
	                    sizeof(bad_manifests) / sizeof(bad_manifests[0]));
	tcase_add_test(manifest_case, test_manifest_nul);
	tcase_add_test(manifest_case, test_manifest_total_limit);
	tcase_add_checked_fixture(archive_case, setup, teardown);
	tcase_add_test(archive_case, test_stream_hash);
	tcase_add_test(archive_case, test_archive_round_trip);
	tcase_add_loop_test(archive_case, test_archive_hostile, 0,
	                    sizeof(hostile) / sizeof(hostile[0]));
	tcase_add_test(archive_case, test_archive_truncated_and_limits);
	tcase_add_test(archive_case, test_archive_write_read);
	suite_add_tcase(suite, manifest_case);
	suite_add_tcase(suite, archive_case);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
