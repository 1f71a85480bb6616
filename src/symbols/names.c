/* Recorded symbol answers: what a separate debug file said about the
 * addresses a capture reached, so that an archive can carry these answers
 * in place of the debug file itself (which is often larger than all the
 * rest of the archive) and still print the same names.
 *
 * For each address the table keeps the ELF symbol perf chose (from the
 * debug file's .symtab) and addr2line's records (functions of the inline
 * chain, with file and line), the two inputs from which dso.c builds the
 * printed frames; so --no-inline, -F +srcline and the Python modes print
 * from the archive what they print next to the debug file.
 *
 * The text format (fields as in base/textline.h):
 *
 *   pystitch-names 1
 *   dso <string>                           the DSO, for people reading it
 *   a <addr> <records> <sym start> <sym>   an address (lower-case hex) and
 *   r <line> <function> <file>             as many records as it says
 *   end
 *
 * A table is untrusted input when read: lines are bounded, every count and
 * string is checked, and addresses must ascend. */
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/textline.h"

#define NAMES_MAGIC "pystitch-names 1\n"
#define NAMES_LINE_MAX 65536

struct ps_names {
	struct ps_names_entry *entries;
	size_t nr, cap;
	bool sorted; /* by address, one entry each (a table read back) */
	struct ps_arena arena;
};

struct ps_names *ps_names_new(void)
{
	return calloc(1, sizeof(struct ps_names));
}

void ps_names_free(struct ps_names *names)
{
	if (!names)
		return;
	free(names->entries);
	ps_arena_free(&names->arena);
	free(names);
}

size_t ps_names_count(const struct ps_names *names)
{
	return names->nr;
}

const struct ps_names_entry *ps_names_entry_at(const struct ps_names *names, size_t i)
{
	return i < names->nr ? &names->entries[i] : NULL;
}

static const char *arena_copy(struct ps_arena *arena, const char *s, bool *failed)
{
	char *copy;

	if (!s)
		return NULL;
	copy = ps_arena_strndup(arena, s, SIZE_MAX);
	if (!copy)
		*failed = true;
	return copy;
}

int ps_names_add(struct ps_names *names, uint64_t addr, const char *sym, uint64_t sym_start,
                 const struct ps_addr2line_record *records, size_t nr_records)
{
	struct ps_names_entry *e;
	bool failed = false;

	if (nr_records > PS_INLINE_MAX)
		nr_records = PS_INLINE_MAX;
	if (!ps_array_reserve((void **)&names->entries, &names->cap, names->nr + 1,
	                      sizeof(*names->entries), 256))
		return -ENOMEM;
	e = &names->entries[names->nr];
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->sym_start = sym ? sym_start : 0;
	e->sym = arena_copy(&names->arena, sym, &failed);
	if (nr_records) {
		e->records = ps_arena_alloc(&names->arena, nr_records * sizeof(*e->records));
		if (!e->records)
			return -ENOMEM;
		for (size_t i = 0; i < nr_records; i++) {
			e->records[i].function =
			        arena_copy(&names->arena, records[i].function, &failed);
			e->records[i].file = arena_copy(&names->arena, records[i].file, &failed);
			e->records[i].line = records[i].line;
		}
	}
	if (failed)
		return -ENOMEM;
	e->nr_records = (uint32_t)nr_records;
	names->nr++;
	names->sorted = false;
	return 0;
}

/* By address; among equal addresses the first recorded comes first. */
static int compare_entries(const void *a, const void *b)
{
	const struct ps_names_entry *const *x = a, *const *y = b;

	if ((*x)->addr != (*y)->addr)
		return (*x)->addr < (*y)->addr ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

int ps_names_format(const struct ps_names *names, const char *dso_name, struct ps_strbuf *out)
{
	const struct ps_names_entry **order = NULL;

	if (names->nr && !(order = malloc(names->nr * sizeof(*order))))
		return -ENOMEM;
	for (size_t i = 0; i < names->nr; i++)
		order[i] = &names->entries[i];
	if (names->nr)
		qsort(order, names->nr, sizeof(*order), compare_entries);
	ps_strbuf_addstr(out, NAMES_MAGIC "dso ");
	ps_textline_add_string(out, dso_name);
	ps_strbuf_addch(out, '\n');
	for (size_t i = 0; i < names->nr; i++) {
		const struct ps_names_entry *e = order[i];

		/* the first answer is the one the session printed */
		if (i && order[i - 1]->addr == e->addr)
			continue;
		ps_strbuf_addf(out, "a %" PRIx64 " %" PRIu32 " %" PRIx64 " ", e->addr,
		               e->nr_records, e->sym_start);
		ps_textline_add_string(out, e->sym);
		ps_strbuf_addch(out, '\n');
		for (uint32_t r = 0; r < e->nr_records; r++) {
			ps_strbuf_addf(out, "r %u ", e->records[r].line);
			ps_textline_add_string(out, e->records[r].function);
			ps_strbuf_addch(out, ' ');
			ps_textline_add_string(out, e->records[r].file);
			ps_strbuf_addch(out, '\n');
		}
	}
	ps_strbuf_addstr(out, "end\n");
	free(order);
	return ps_strbuf_failed(out) ? -ENOMEM : 0;
}

const struct ps_names_entry *ps_names_find(const struct ps_names *names, uint64_t addr)
{
	size_t lo = 0, hi = names->nr;

	if (!names->sorted)
		return NULL; /* a table being recorded is not looked up */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (names->entries[mid].addr == addr)
			return &names->entries[mid];
		if (names->entries[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

bool ps_names_detect(const char *file)
{
	char head[sizeof(NAMES_MAGIC) - 1];
	FILE *f = fopen(file, "rb");
	bool is_names = f && fread(head, 1, sizeof(head), f) == sizeof(head) &&
	                memcmp(head, NAMES_MAGIC, sizeof(head)) == 0;

	if (f)
		fclose(f);
	return is_names;
}

struct names_parse {
	const char *path;
	uint64_t offset; /* of the line being read */
	char *err;
	size_t errsz;
	/* scratch space for one address's records and their strings */
	struct ps_addr2line_record *records;
	char **strings;
};

static int names_fail(const struct names_parse *p, const char *what)
{
	snprintf(p->err, p->errsz, "%s: offset %" PRIu64 ": %s", p->path, p->offset, what);
	return -EINVAL;
}

/* One line into buf without its newline; 0 at the end of the file, 1 for a
 * line, or a negative errno. */
static int read_line(FILE *f, struct names_parse *p, char *buf, size_t size, size_t *len)
{
	if (!fgets(buf, (int)size, f))
		return ferror(f) ? names_fail(p, "read error") : 0;
	*len = strlen(buf);
	if (*len == 0 || buf[*len - 1] != '\n')
		return names_fail(p, *len + 1 == size ? "line longer than 64 KiB"
		                                      : "no newline at the end, or a NUL byte");
	buf[--*len] = 0;
	return 1;
}

static void free_strings(char **strings, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
}

/* A copy of a decoded string field (NULL stays NULL); false when out of
 * memory. */
static bool keep(const char *s, char **strings, size_t *n, const char **out)
{
	*out = NULL;
	if (!s)
		return true;
	strings[*n] = strdup(s);
	if (!strings[*n])
		return false;
	*out = strings[(*n)++];
	return true;
}

/* An address line (split into fields) and its records; p->offset moves
 * past them. */
static int parse_entry(struct names_parse *p, FILE *f, char **fields, struct ps_names *names,
                       char *buf, size_t len)
{
	struct ps_addr2line_record *records = p->records;
	char **strings = p->strings;
	uint64_t addr, nr, start;
	const char *sym, *s, *why = NULL;
	size_t nr_strings = 0;
	int rc = 0;

	if (ps_textline_parse_x64(fields[1], &addr) || ps_textline_parse_u64(fields[2], &nr) ||
	    ps_textline_parse_x64(fields[3], &start))
		return names_fail(p, "bad number in an address line");
	if (nr > PS_INLINE_MAX)
		return names_fail(p, "more records than an inline chain holds");
	if (names->nr && addr <= names->entries[names->nr - 1].addr)
		return names_fail(p, "addresses not in ascending order");
	if (ps_textline_decode_string(fields[4], &s, &why))
		return names_fail(p, why);
	if (s ? start > addr : start != 0)
		return names_fail(p, "a symbol that starts after the address");
	/* buf is reused for the records: keep copies */
	if (!keep(s, strings, &nr_strings, &sym))
		return names_fail(p, "out of memory");
	for (uint64_t i = 0; i < nr && !rc; i++) {
		char *rf[4];
		uint64_t line = 0;
		const char *function, *file;

		p->offset += len + 1;
		rc = read_line(f, p, buf, NAMES_LINE_MAX, &len);
		if (rc <= 0) {
			rc = rc ? rc : names_fail(p, "cut short in a record list");
			break;
		}
		rc = 0;
		if (ps_textline_split(buf, rf, 4) != 4 || strcmp(rf[0], "r") != 0)
			rc = names_fail(p, "fewer records than the address line says");
		else if (ps_textline_parse_u64(rf[1], &line) || line > UINT32_MAX)
			rc = names_fail(p, "bad line number");
		else if (ps_textline_decode_string(rf[2], &function, &why) ||
		         ps_textline_decode_string(rf[3], &file, &why))
			rc = names_fail(p, why);
		else if (!keep(function, strings, &nr_strings, &records[i].function) ||
		         !keep(file, strings, &nr_strings, &records[i].file))
			rc = names_fail(p, "out of memory");
		records[i].line = (unsigned)line;
	}
	if (!rc && ps_names_add(names, addr, sym, start, records, (size_t)nr))
		rc = names_fail(p, "out of memory");
	free_strings(strings, nr_strings);
	p->offset += len + 1;
	return rc;
}

int ps_names_load(const char *path, const char *file, struct ps_names **out, char *err,
                  size_t errsz)
{
	struct names_parse p = { path, 0, err, errsz, NULL, NULL };
	struct ps_names *names = ps_names_new();
	char *buf = malloc(NAMES_LINE_MAX);
	FILE *f = fopen(file, "rb");
	bool ended = false;
	size_t len = 0;
	int rc = 0;

	*out = NULL;
	p.records = malloc(PS_INLINE_MAX * sizeof(*p.records));
	p.strings = malloc((2 * PS_INLINE_MAX + 1) * sizeof(*p.strings));
	if (!names || !buf || !f || !p.records || !p.strings) {
		rc = !f ? -errno : -ENOMEM;
		snprintf(err, errsz, "%s: offset 0: %s", path, strerror(-rc));
		goto out;
	}
	for (unsigned line = 1;; line++) {
		char *fields[6];
		size_t n;

		rc = read_line(f, &p, buf, NAMES_LINE_MAX, &len);
		if (rc <= 0)
			break;
		if (ended) {
			rc = names_fail(&p, "text after 'end'");
			break;
		}
		if (line == 1 && strcmp(buf, "pystitch-names 1") != 0) {
			rc = names_fail(&p, "not a pystitch symbol answers file");
			break;
		}
		n = line == 1 ? 0 : ps_textline_split(buf, fields, 5);
		if (line == 1) {
			p.offset += len + 1;
		} else if (line == 2) {
			const char *dso, *why = NULL;

			if (n != 2 || strcmp(fields[0], "dso") != 0) {
				rc = names_fail(&p, "expected 'dso'");
				break;
			}
			if (ps_textline_decode_string(fields[1], &dso, &why)) {
				rc = names_fail(&p, why);
				break;
			}
			p.offset += len + 1;
		} else if (n == 1 && strcmp(fields[0], "end") == 0) {
			ended = true;
			p.offset += len + 1;
		} else if (n == 5 && strcmp(fields[0], "a") == 0) {
			rc = parse_entry(&p, f, fields, names, buf, len);
			if (rc)
				break;
		} else {
			rc = names_fail(&p, "not a line of a symbol answers file");
			break;
		}
	}
	if (rc == 0 && !ended)
		rc = names_fail(&p, "cut short: no 'end' line");
out:
	if (f)
		fclose(f);
	free(buf);
	free(p.records);
	free(p.strings);
	if (rc) {
		ps_names_free(names);
		return rc;
	}
	names->sorted = true;
	*out = names;
	return 0;
}
