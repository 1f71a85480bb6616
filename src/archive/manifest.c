/* The archive manifest: a text file, one fact per line, which every
 * reader checks in full before any other member is unpacked.
 *
 *   pystitch-archive 1
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
#include "archive/archive.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static const char *const kind_names[PS_ARCHIVE_KIND_COUNT] = {
	[PS_ARCHIVE_PERF_DATA] = "perf.data", [PS_ARCHIVE_ELF] = "elf",
	[PS_ARCHIVE_DEBUGINFO] = "debuginfo", [PS_ARCHIVE_KALLSYMS] = "kallsyms",
	[PS_ARCHIVE_VMLINUX] = "vmlinux",     [PS_ARCHIVE_PERF_MAP] = "perf-map",
	[PS_ARCHIVE_JITDUMP] = "jitdump",
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
	if (m->nr_files == m->cap_files) {
		size_t cap = m->cap_files ? m->cap_files * 2 : 32;
		struct ps_archive_file *files = realloc(m->files, cap * sizeof(*files));

		if (!files)
			return -ENOMEM;
		m->files = files;
		m->cap_files = cap;
	}
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

static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("/._+,:@~[]-", c) != NULL;
}

static void add_string(struct ps_strbuf *out, const char *s)
{
	if (!s) {
		ps_strbuf_addstr(out, "-");
		return;
	}
	ps_strbuf_addstr(out, "=");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (plain_byte(*p))
			ps_strbuf_add(out, (const char *)p, 1);
		else
			ps_strbuf_addf(out, "%%%02X", *p);
	}
}

char *ps_manifest_format(const struct ps_manifest *m, size_t *len)
{
	struct ps_strbuf out = PS_STRBUF_INIT;
	char hex[PS_ARCHIVE_HEX_SIZE + 1];

	ps_strbuf_addf(&out, "pystitch-archive %d\nmtime %" PRId64 "\nperf-data-path ",
	               PS_ARCHIVE_FORMAT_VERSION, m->perf_data_mtime);
	add_string(&out, m->perf_data_path);
	ps_strbuf_addstr(&out, "\nsymfs ");
	add_string(&out, m->symfs);
	ps_strbuf_addstr(&out, "\nbuildid-dir ");
	add_string(&out, m->buildid_dir);
	ps_strbuf_addstr(&out, "\nperf-map-dir ");
	add_string(&out, m->perf_map_dir);
	ps_strbuf_addstr(&out, "\n");
	for (size_t i = 0; i < m->nr_files; i++) {
		const struct ps_archive_file *f = &m->files[i];

		ps_archive_hex(f->sha256, hex);
		ps_strbuf_addf(&out, "file %s %" PRIu64 " %s ", ps_archive_kind_name(f->kind),
		               f->size, hex);
		add_string(&out, f->path);
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
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errsz, "%s line %u: %s", PS_ARCHIVE_MANIFEST_NAME, p->line, what);
	return rc;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A <string> field; *out NULL for "-". -EINVAL for anything else. */
static int parse_string(struct parse *p, const char *field, char **out)
{
	size_t len = strlen(field), n = 0;
	char *s;

	*out = NULL;
	if (strcmp(field, "-") == 0)
		return 0;
	if (field[0] != '=')
		return parse_fail(p, -EINVAL, "a string must start with '=' or be '-'");
	s = malloc(len);
	if (!s)
		return parse_fail(p, -ENOMEM, "out of memory");
	for (size_t i = 1; i < len; i++) {
		unsigned char c = (unsigned char)field[i];

		if (c == '%') {
			int hi = i + 2 < len ? hex_value(field[i + 1]) : -1;
			int lo = hi >= 0 ? hex_value(field[i + 2]) : -1;

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(s);
				return parse_fail(p, -EINVAL, "bad %%-escape in a string");
			}
			s[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (plain_byte(c)) {
			s[n++] = (char)c;
		} else {
			free(s);
			return parse_fail(p, -EINVAL, "byte 0x%02x not escaped in a string", c);
		}
	}
	s[n] = 0;
	*out = s;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 20)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* Split line (NUL-terminated, modified) at single spaces into at most max
 * fields; the number found, or max + 1 when there are more. */
static size_t split(char *line, char **fields, size_t max)
{
	size_t n = 0;

	for (char *p = line;;) {
		char *space = strchr(p, ' ');

		if (n == max)
			return max + 1;
		fields[n++] = p;
		if (!space)
			return n;
		*space = 0;
		p = space + 1;
	}
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
	if (parse_u64(fields[2], &f->size))
		return parse_fail(p, -EINVAL, "bad size");
	if (f->size > max_entry)
		return parse_fail(p, -EFBIG, "file of %" PRIu64 " bytes, more than %" PRIu64,
		                  f->size, max_entry);
	if (strlen(fields[3]) != PS_ARCHIVE_HEX_SIZE)
		return parse_fail(p, -EINVAL, "bad SHA-256");
	for (size_t i = 0; i < PS_ARCHIVE_SHA256_SIZE; i++) {
		int hi = hex_value(fields[3][2 * i]), lo = hex_value(fields[3][2 * i + 1]);

		/* lower case only, so one digest has one member name */
		if (hi < 0 || lo < 0 || (fields[3][2 * i] >= 'A' && fields[3][2 * i] <= 'F') ||
		    (fields[3][2 * i + 1] >= 'A' && fields[3][2 * i + 1] <= 'F'))
			return parse_fail(p, -EINVAL, "bad SHA-256");
		f->sha256[i] = (uint8_t)(hi * 16 + lo);
	}
	return 0;
}

static int parse_lines(struct parse *p, char *text, const struct ps_archive_limits *limits,
                       struct ps_manifest *m)
{
	static const char *const header_keys[] = { "mtime", "perf-data-path", "symfs",
		                                   "buildid-dir", "perf-map-dir" };
	uint64_t max_entry = limits && limits->max_entry ? limits->max_entry : PS_ARCHIVE_MAX_ENTRY;
	uint64_t max_total = limits && limits->max_total ? limits->max_total : PS_ARCHIVE_MAX_TOTAL;
	size_t perf_data = 0, kernel = 0;
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
		n = split(line, fields, 5);
		if (p->line == 1) {
			if (n != 2 || strcmp(fields[0], "pystitch-archive") != 0)
				return parse_fail(p, -EINVAL, "not a pystitch archive manifest");
			if (strcmp(fields[1], "1") != 0)
				return parse_fail(p, -EINVAL,
				                  "format version %.20s, this pystitch reads 1",
				                  fields[1]);
		} else if (p->line <= 6) {
			if (n != 2 || strcmp(fields[0], header_keys[p->line - 2]) != 0)
				return parse_fail(p, -EINVAL, "expected '%s'",
				                  header_keys[p->line - 2]);
			if (p->line == 2) {
				uint64_t mtime;

				if (parse_u64(fields[1], &mtime) || mtime > INT64_MAX)
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
			if (kind == PS_ARCHIVE_PERF_DATA && ++perf_data > 1)
				return parse_fail(p, -EINVAL, "a second perf.data");
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
	if (memchr(text, 0, len))
		return parse_fail(&p, -EINVAL, "NUL byte");
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
