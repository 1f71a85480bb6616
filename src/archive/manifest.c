/* The archive manifest: a text file, one fact per line, which every
 * reader checks in full before any other member is unpacked.
 *
 *   pystitch-archive 2       (1 when no file is of the "names" kind)
 *   mtime <seconds>
 *   perf-data-path <string>
 *   symfs <string>            (also buildid-dir, perf-map-dir)
 *   file <kind> <size> <sha256 hex> <string>
 *   end
 *
 * A <string> is "-" for none, else "=" followed by the bytes with every
 * byte outside [A-Za-z0-9/._+,:@~[]-] written as %XX, so paths with spaces
 * or newlines survive and a line is always split by single spaces.
 */
#include "archive/archive_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/message.h"
#include "base/strbuf.h"
#include "base/textline.h"

static const char *const kind_names[PS_ARCHIVE_KIND_COUNT] = {
	[PS_ARCHIVE_PERF_DATA] = "perf.data", [PS_ARCHIVE_ELF] = "elf",
	[PS_ARCHIVE_DEBUGINFO] = "debuginfo", [PS_ARCHIVE_KALLSYMS] = "kallsyms",
	[PS_ARCHIVE_VMLINUX] = "vmlinux",     [PS_ARCHIVE_PERF_MAP] = "perf-map",
	[PS_ARCHIVE_JITDUMP] = "jitdump",     [PS_ARCHIVE_NAMES] = "names",
};

const char *ps_archive_kind_name(enum ps_archive_kind kind)
{
	return (unsigned)kind < PS_ARCHIVE_KIND_COUNT ? kind_names[kind] : NULL;
}

void ps_archive_hex(const uint8_t *sha256, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < PS_ARCHIVE_SHA256_SIZE; i++) {
		hex[2 * i] = digits[sha256[i] >> 4];
		hex[2 * i + 1] = digits[sha256[i] & 15];
	}
	hex[PS_ARCHIVE_HEX_SIZE] = 0;
}

void ps_manifest_release(struct ps_manifest *m)
{
	for (size_t i = 0; i < m->nr_files; i++)
		free(m->files[i].path);
	free(m->files);
	free(m->perf_data_path);
	free(m->symfs);
	free(m->buildid_dir);
	free(m->perf_map_dir);
	memset(m, 0, sizeof(*m));
}

int ps_manifest_add(struct ps_manifest *m, enum ps_archive_kind kind, const char *path)
{
	if (!ps_array_reserve((void **)&m->files, &m->cap_files, m->nr_files + 1, sizeof(*m->files),
	                      32))
		return -ENOMEM;
	struct ps_archive_file *f = &m->files[m->nr_files];

	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	m->nr_files++;
	return 0;
}

/* ---- writing -------------------------------------------------------- */

char *ps_manifest_format(const struct ps_manifest *m, size_t *len)
{
	struct ps_strbuf out = PS_STRBUF_INIT;
	char hex[PS_ARCHIVE_HEX_SIZE + 1];
	int version = 1;

	/* the oldest format that holds it, so older readers take what they can:
	 * 2 for the names kind, 3 for a folder's files */
	for (size_t i = 0; i < m->nr_files; i++)
		if (m->files[i].kind == PS_ARCHIVE_NAMES)
			version = 2;
	if (ps_manifest_is_folder(m))
		version = PS_ARCHIVE_FORMAT_VERSION;
	ps_strbuf_addf(&out, "pystitch-archive %d\nmtime %" PRId64 "\nperf-data-path ", version,
	               m->perf_data_mtime);
	ps_textline_add_string(&out, m->perf_data_path);
	ps_strbuf_addstr(&out, "\nsymfs ");
	ps_textline_add_string(&out, m->symfs);
	ps_strbuf_addstr(&out, "\nbuildid-dir ");
	ps_textline_add_string(&out, m->buildid_dir);
	ps_strbuf_addstr(&out, "\nperf-map-dir ");
	ps_textline_add_string(&out, m->perf_map_dir);
	ps_strbuf_addstr(&out, "\n");
	for (size_t i = 0; i < m->nr_files; i++) {
		const struct ps_archive_file *f = &m->files[i];

		ps_archive_hex(f->sha256, hex);
		ps_strbuf_addf(&out, "file %s %" PRIu64 " %s ", ps_archive_kind_name(f->kind),
		               f->size, hex);
		ps_textline_add_string(&out, f->path);
		ps_strbuf_addstr(&out, "\n");
	}
	ps_strbuf_addstr(&out, "end\n");
	if (ps_strbuf_failed(&out)) {
		ps_strbuf_release(&out);
		return NULL;
	}
	*len = out.len;
	return out.buf;
}

/* ---- parsing -------------------------------------------------------- */

struct parse {
	char *err;
	size_t errsz;
	unsigned line;
};

static int parse_fail(struct parse *p, int rc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int parse_fail(struct parse *p, int rc, const char *fmt, ...)
{
	char what[PS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	ps_vformat(what, sizeof(what), NULL, fmt, ap);
	va_end(ap);
	return ps_fail(p->err, p->errsz, rc, "%s line %u: %s", PS_ARCHIVE_MANIFEST_NAME, p->line,
	               what);
}

/* A <string> field, copied; *out NULL for "-". -EINVAL for anything else. */
static int parse_string(struct parse *p, char *field, char **out)
{
	const char *why = NULL, *s;

	*out = NULL;
	if (ps_textline_decode_string(field, &s, &why))
		return parse_fail(p, -EINVAL, "%s", why);
	if (s && !(*out = strdup(s)))
		return parse_fail(p, -ENOMEM, "out of memory");
	return 0;
}

static int compare_paths(const void *a, const void *b)
{
	const struct ps_archive_file *const *x = a, *const *y = b;
	return strcmp((*x)->path, (*y)->path);
}

static int compare_digests(const void *a, const void *b)
{
	const struct ps_archive_file *const *x = a, *const *y = b;
	return memcmp((*x)->sha256, (*y)->sha256, PS_ARCHIVE_SHA256_SIZE);
}

/* Checks across lines: unique paths, one size per digest, the total. */
static int check_files(struct parse *p, const struct ps_manifest *m, uint64_t max_total)
{
	const struct ps_archive_file **order;
	uint64_t total = 0;
	int rc = 0;

	p->line = 0;
	if (!m->nr_files)
		return 0;
	order = malloc(m->nr_files * sizeof(*order));
	if (!order)
		return parse_fail(p, -ENOMEM, "out of memory");
	for (size_t i = 0; i < m->nr_files; i++)
		order[i] = &m->files[i];
	qsort(order, m->nr_files, sizeof(*order), compare_paths);
	for (size_t i = 1; i < m->nr_files && !rc; i++)
		if (strcmp(order[i - 1]->path, order[i]->path) == 0)
			rc = parse_fail(p, -EINVAL, "path listed twice");
	qsort(order, m->nr_files, sizeof(*order), compare_digests);
	for (size_t i = 0; i < m->nr_files && !rc; i++) {
		if (i &&
		    memcmp(order[i - 1]->sha256, order[i]->sha256, PS_ARCHIVE_SHA256_SIZE) == 0) {
			if (order[i - 1]->size != order[i]->size)
				rc = parse_fail(p, -EINVAL, "one digest with two sizes");
			continue;
		}
		if (order[i]->size > max_total - total)
			rc = parse_fail(p, -EFBIG, "files total more than %" PRIu64 " bytes",
			                max_total);
		else
			total += order[i]->size;
	}
	free(order);
	return rc;
}

static int parse_file_line(struct parse *p, char **fields, uint64_t max_entry,
                           struct ps_manifest *m)
{
	struct ps_archive_file *f;
	enum ps_archive_kind kind = PS_ARCHIVE_KIND_COUNT;
	char *path;
	int rc;

	for (unsigned k = 0; k < PS_ARCHIVE_KIND_COUNT; k++)
		if (strcmp(fields[1], kind_names[k]) == 0)
			kind = (enum ps_archive_kind)k;
	if (kind == PS_ARCHIVE_KIND_COUNT)
		return parse_fail(p, -EINVAL, "unknown file kind");
	if (m->nr_files >= PS_ARCHIVE_MAX_FILES)
		return parse_fail(p, -EFBIG, "more than %u files", PS_ARCHIVE_MAX_FILES);
	rc = parse_string(p, fields[4], &path);
	if (rc)
		return rc;
	if (!path || !path[0]) {
		free(path);
		return parse_fail(p, -EINVAL, "file without a path");
	}
	rc = ps_manifest_add(m, kind, path);
	free(path);
	if (rc)
		return parse_fail(p, rc, "out of memory");
	f = &m->files[m->nr_files - 1];
	if (ps_textline_parse_u64(fields[2], &f->size))
		return parse_fail(p, -EINVAL, "bad size");
	if (f->size > max_entry)
		return parse_fail(p, -EFBIG, "file of %" PRIu64 " bytes, more than %" PRIu64,
		                  f->size, max_entry);
	if (strlen(fields[3]) != PS_ARCHIVE_HEX_SIZE)
		return parse_fail(p, -EINVAL, "bad SHA-256");
	for (size_t i = 0; i < PS_ARCHIVE_SHA256_SIZE; i++) {
		int hi = ps_textline_hex_value(fields[3][2 * i]),
		    lo = ps_textline_hex_value(fields[3][2 * i + 1]);

		/* lower case only, so one digest has one member name */
		if (hi < 0 || lo < 0 || (fields[3][2 * i] >= 'A' && fields[3][2 * i] <= 'F') ||
		    (fields[3][2 * i + 1] >= 'A' && fields[3][2 * i + 1] <= 'F'))
			return parse_fail(p, -EINVAL, "bad SHA-256");
		f->sha256[i] = (uint8_t)(hi * 16 + lo);
	}
	return 0;
}

bool ps_manifest_is_folder(const struct ps_manifest *m)
{
	for (size_t i = 0; i < m->nr_files; i++)
		if (m->files[i].kind == PS_ARCHIVE_PERF_DATA)
			return strcmp(m->files[i].path, m->perf_data_path) != 0;
	return false;
}

/* The index-th perf.data entry is where it may be: the capture itself, or
 * (format 3) a folder's files, PATH/data first, then PATH/data.N files,
 * where PATH is the perf-data-path. */
static bool perf_data_in_place(const struct ps_manifest *m, const char *path, size_t index,
                               int version)
{
	size_t n = m->perf_data_path ? strlen(m->perf_data_path) : 0;
	const char *name;

	if (!m->perf_data_path)
		return false;
	if (strcmp(path, m->perf_data_path) == 0)
		return index == 0;
	if (version < 3 || strncmp(path, m->perf_data_path, n) != 0 || path[n] != '/')
		return false;
	name = path + n + 1;
	if (index == 0)
		return strcmp(name, "data") == 0;
	/* after PATH/data only: a capture file has no data.N beside it */
	return ps_manifest_is_folder(m) && strncmp(name, "data.", 5) == 0 && name[5] &&
	       !strchr(name, '/');
}

static int parse_lines(struct parse *p, char *text, const struct ps_archive_limits *limits,
                       struct ps_manifest *m)
{
	static const char *const header_keys[] = { "mtime", "perf-data-path", "symfs",
		                                   "buildid-dir", "perf-map-dir" };
	uint64_t max_entry = limits && limits->max_entry ? limits->max_entry : PS_ARCHIVE_MAX_ENTRY;
	uint64_t max_total = limits && limits->max_total ? limits->max_total : PS_ARCHIVE_MAX_TOTAL;
	size_t perf_data = 0, kernel = 0;
	int version = 1;
	bool ended = false;
	char *line = text, *fields[6];
	int rc;

	for (p->line = 1; *line; p->line++) {
		char *nl = strchr(line, '\n');
		size_t n;

		if (!nl)
			return parse_fail(p, -EINVAL, "no newline at the end");
		*nl = 0;
		if (ended)
			return parse_fail(p, -EINVAL, "text after 'end'");
		n = ps_textline_split(line, fields, 5);
		if (p->line == 1) {
			if (n != 2 || strcmp(fields[0], "pystitch-archive") != 0)
				return parse_fail(p, -EINVAL, "not a pystitch archive manifest");
			/* one digit, 1 to the newest this build writes */
			if (fields[1][0] < '1' || fields[1][0] > '0' + PS_ARCHIVE_FORMAT_VERSION ||
			    fields[1][1])
				return parse_fail(
				        p, -EINVAL,
				        "format version %.20s, this pystitch reads 1 to %d",
				        fields[1], PS_ARCHIVE_FORMAT_VERSION);
			version = fields[1][0] - '0';
		} else if (p->line <= 6) {
			if (n != 2 || strcmp(fields[0], header_keys[p->line - 2]) != 0)
				return parse_fail(p, -EINVAL, "expected '%s'",
				                  header_keys[p->line - 2]);
			if (p->line == 2) {
				uint64_t mtime;

				if (ps_textline_parse_u64(fields[1], &mtime) || mtime > INT64_MAX)
					return parse_fail(p, -EINVAL, "bad mtime");
				m->perf_data_mtime = (int64_t)mtime;
			} else {
				char **slot[] = { &m->perf_data_path, &m->symfs, &m->buildid_dir,
					          &m->perf_map_dir };
				rc = parse_string(p, fields[1], slot[p->line - 3]);
				if (rc)
					return rc;
			}
		} else if (n == 1 && strcmp(fields[0], "end") == 0) {
			ended = true;
		} else if (n == 5 && strcmp(fields[0], "file") == 0) {
			rc = parse_file_line(p, fields, max_entry, m);
			if (rc)
				return rc;
			enum ps_archive_kind kind = m->files[m->nr_files - 1].kind;
			if (kind == PS_ARCHIVE_PERF_DATA &&
			    !perf_data_in_place(m, m->files[m->nr_files - 1].path, perf_data++,
			                        version))
				return parse_fail(p, -EINVAL,
				                  perf_data > 1 && version < 3
				                          ? "a second perf.data"
				                          : "a perf.data file out of place: a "
				                            "folder's are PATH/data, then "
				                            "PATH/data.N");
			if ((kind == PS_ARCHIVE_KALLSYMS || kind == PS_ARCHIVE_VMLINUX) &&
			    ++kernel > 1)
				return parse_fail(p, -EINVAL, "a second kernel symbols file");
		} else {
			return parse_fail(p, -EINVAL, "not a manifest line");
		}
		line = nl + 1;
	}
	if (!ended)
		return parse_fail(p, -EINVAL, "no 'end' line (truncated?)");
	if (!perf_data || !m->perf_data_path)
		return parse_fail(p, -EINVAL, "no perf.data listed");
	return check_files(p, m, max_total);
}

int ps_manifest_parse(const char *text, size_t len, const struct ps_archive_limits *limits,
                      struct ps_manifest *out, char *err, size_t errsz)
{
	struct parse p = { .err = err, .errsz = errsz, .line = 0 };
	char *copy;
	int rc;

	memset(out, 0, sizeof(*out));
	const char *nul = memchr(text, 0, len);
	if (nul) {
		/* the line it is on, and where */
		p.line = 1;
		for (const char *c = text; c < nul; c++)
			p.line += *c == '\n';
		return parse_fail(&p, -EINVAL, "NUL byte at byte %zu", (size_t)(nul - text));
	}
	copy = malloc(len + 1);
	if (!copy)
		return parse_fail(&p, -ENOMEM, "out of memory");
	if (len)
		memcpy(copy, text, len);
	copy[len] = 0;
	rc = parse_lines(&p, copy, limits, out);
	free(copy);
	if (rc)
		ps_manifest_release(out);
	return rc;
}
