/* Perf maps (perf-PID.map: "START SIZE NAME" lines), read in chunks and
 * damage-tolerant; the sorted table of named code ranges that both readers
 * fill (ps_jit_names, in jitnames.c, picks the files of a process). */
#include "python/python_priv.h"

#include "base/array.h"
#include "base/message.h"
#include "base/opts.h"

#include "base/textline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_MAX_ENTRIES ((size_t)16 << 20)
#define DEFAULT_MAX_NAME_BYTES ((size_t)256 << 20)
#define DEFAULT_MAX_UNWIND_BYTES ((size_t)64 << 20)
#define MAP_LINE_MAX ((size_t)64 << 10) /* a longer line is damaged */
#define MAP_CHUNK ((size_t)64 << 10)

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

struct table_entry {
	uint64_t start, size;
	uint64_t order;
	uint64_t code_index;
	uint32_t name; /* offset in table->names */
	uint32_t unwind; /* index in table->unwinds or PS_JIT_NO_UNWIND */
};

/* Where to find the entries of one code_index (for JIT_CODE_MOVE). */
struct code_index_ref {
	uint64_t code_index, order;
	size_t entry;
};

struct table_unwind {
	size_t offset; /* in table->unwind_bytes */
	size_t eh_frame_size, hdr_size;
};

struct ps_jit_table {
	enum ps_jit_source source;
	struct ps_jit_limits limits; /* defaults applied */
	char *path;
	struct table_entry *entries;
	size_t nr_entries, cap_entries;
	char *names;
	size_t names_len, names_cap;
	uint8_t *unwind_bytes;
	size_t unwind_len, unwind_cap;
	struct table_unwind *unwinds;
	size_t nr_unwinds, cap_unwinds;
	/* sorted by (code_index, order), built for the first JIT_CODE_MOVE */
	struct code_index_ref *by_code_index;
	size_t nr_by_code_index;
	/* for lookups (lookup_index()): the entries are cut into buckets of
	 * 1 << index_shift bytes from the first start; index[b] is the first
	 * entry starting in bucket b or later, index[nr_buckets] is
	 * nr_entries. Built by ps_jit_table_finish() for indexed_entries
	 * entries: any other count means none. */
	uint32_t *index;
	size_t nr_buckets, indexed_entries;
	unsigned index_shift;
	struct ps_jit_file_stats stats;
	char errmsg[PS_MSG_MAX];
};

struct ps_jit_table *ps_jit_table_new(enum ps_jit_source source, const char *path,
                                      const struct ps_jit_limits *limits)
{
	struct ps_jit_table *table = calloc(1, sizeof(*table));

	if (!table)
		return NULL;
	table->path = strdup(path ? path : "");
	if (!table->path) {
		free(table);
		return NULL;
	}
	table->source = source;
	if (limits)
		table->limits = *limits;
	if (!table->limits.max_entries)
		table->limits.max_entries = DEFAULT_MAX_ENTRIES;
	if (!table->limits.max_name_bytes)
		table->limits.max_name_bytes = DEFAULT_MAX_NAME_BYTES;
	if (!table->limits.max_unwind_bytes)
		table->limits.max_unwind_bytes = DEFAULT_MAX_UNWIND_BYTES;
	/* names and unwinding infos are indexed by uint32_t */
	if (table->limits.max_name_bytes > UINT32_MAX)
		table->limits.max_name_bytes = UINT32_MAX;
	if (table->limits.max_entries > UINT32_MAX - 1)
		table->limits.max_entries = UINT32_MAX - 1;
	return table;
}

void ps_jit_table_free(struct ps_jit_table *table)
{
	if (!table)
		return;
	free(table->path);
	free(table->entries);
	free(table->names);
	free(table->unwind_bytes);
	free(table->unwinds);
	free(table->by_code_index);
	free(table->index);
	free(table);
}

int64_t ps_jit_table_add_unwind(struct ps_jit_table *table, const uint8_t *data,
                                size_t eh_frame_size, size_t hdr_size)
{
	size_t size = eh_frame_size + hdr_size;
	struct table_unwind *last;

	if (size < eh_frame_size)
		return -ENOSPC;
	/* CPython writes the same bytes for every trampoline: share them */
	if (table->nr_unwinds) {
		last = &table->unwinds[table->nr_unwinds - 1];
		if (last->eh_frame_size == eh_frame_size && last->hdr_size == hdr_size &&
		    memcmp(table->unwind_bytes + last->offset, data, size) == 0)
			return (int64_t)(table->nr_unwinds - 1);
	}
	if (size > table->limits.max_unwind_bytes - table->unwind_len ||
	    table->nr_unwinds >= UINT32_MAX - 1)
		return -ENOSPC;
	if (!ps_array_reserve((void **)&table->unwind_bytes, &table->unwind_cap,
	                      table->unwind_len + size, 1, 64) ||
	    !ps_array_reserve((void **)&table->unwinds, &table->cap_unwinds, table->nr_unwinds + 1,
	                      sizeof(*table->unwinds), 64))
		return -ENOMEM;
	memcpy(table->unwind_bytes + table->unwind_len, data, size);
	table->unwinds[table->nr_unwinds] = (struct table_unwind){
		.offset = table->unwind_len,
		.eh_frame_size = eh_frame_size,
		.hdr_size = hdr_size,
	};
	table->unwind_len += size;
	return (int64_t)table->nr_unwinds++;
}

static int add_entry(struct ps_jit_table *table, const struct table_entry *entry)
{
	if (table->nr_entries >= table->limits.max_entries)
		return -ENOSPC;
	if (!ps_array_reserve((void **)&table->entries, &table->cap_entries, table->nr_entries + 1,
	                      sizeof(*table->entries), 64))
		return -ENOMEM;
	table->entries[table->nr_entries++] = *entry;
	return 0;
}

int ps_jit_table_add(struct ps_jit_table *table, uint64_t start, uint64_t size, const char *name,
                     size_t name_len, uint32_t unwind, uint64_t code_index, uint64_t order)
{
	struct table_entry entry = {
		.start = start,
		.size = size,
		.order = order,
		.code_index = code_index,
		.name = (uint32_t)table->names_len,
		.unwind = unwind < table->nr_unwinds ? unwind : PS_JIT_NO_UNWIND,
	};
	int err;

	if (table->nr_entries >= table->limits.max_entries ||
	    name_len >= table->limits.max_name_bytes - table->names_len)
		return -ENOSPC;
	if (!ps_array_reserve((void **)&table->names, &table->names_cap,
	                      table->names_len + name_len + 1, 1, 64))
		return -ENOMEM;
	err = add_entry(table, &entry);
	if (err)
		return err;
	memcpy(table->names + table->names_len, name, name_len);
	table->names[table->names_len + name_len] = '\0';
	table->names_len += name_len + 1;
	return 0;
}

static int compare_by_code_index(const void *a, const void *b)
{
	const struct code_index_ref *x = a, *y = b;

	if (x->code_index != y->code_index)
		return x->code_index < y->code_index ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int ps_jit_table_add_moved(struct ps_jit_table *table, uint64_t code_index, uint64_t start,
                           uint64_t size, uint64_t order)
{
	size_t low = 0, high;
	struct table_entry entry;

	if (!table->by_code_index && table->nr_entries) {
		table->by_code_index = malloc(table->nr_entries * sizeof(*table->by_code_index));
		if (!table->by_code_index)
			return -ENOMEM;
		for (size_t i = 0; i < table->nr_entries; i++)
			table->by_code_index[i] = (struct code_index_ref){
				.code_index = table->entries[i].code_index,
				.order = table->entries[i].order,
				.entry = i,
			};
		table->nr_by_code_index = table->nr_entries;
		qsort(table->by_code_index, table->nr_by_code_index, sizeof(*table->by_code_index),
		      compare_by_code_index);
	}
	/* one past the last reference whose code_index <= the one asked */
	high = table->nr_by_code_index;
	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (table->by_code_index[mid].code_index <= code_index)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0 || table->by_code_index[low - 1].code_index != code_index)
		return -ENOENT;
	entry = table->entries[table->by_code_index[low - 1].entry];
	entry.start = start;
	entry.size = size;
	entry.order = order;
	return add_entry(table, &entry);
}

static int compare_by_start(const void *a, const void *b)
{
	const struct table_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The buckets of lookup_index(): at most two per entry, so that a lookup
 * searches a few entries, not all of them; none when out of memory (the
 * lookups then search them all). */
static void build_index(struct ps_jit_table *table)
{
	size_t n = table->nr_entries, entry = 0;
	uint64_t span;
	unsigned shift = 0;

	free(table->index);
	table->index = NULL;
	table->indexed_entries = 0;
	if (n < 16 || n > UINT32_MAX - 1)
		return;
	span = table->entries[n - 1].start - table->entries[0].start;
	while (shift < 63 && (span >> shift) >= 2 * n)
		shift++;
	table->nr_buckets = (size_t)(span >> shift) + 1;
	table->index = malloc((table->nr_buckets + 1) * sizeof(*table->index));
	if (!table->index)
		return;
	for (size_t b = 0; b < table->nr_buckets; b++) {
		uint64_t from = (uint64_t)b << shift;

		while (entry < n && table->entries[entry].start - table->entries[0].start < from)
			entry++;
		table->index[b] = (uint32_t)entry;
	}
	table->index[table->nr_buckets] = (uint32_t)n;
	table->index_shift = shift;
	table->indexed_entries = n;
}

/* Where ps_jit_table_lookup() searches for the first entry starting past
 * addr, given that the first entry starts at or below it: the entries
 * starting in addr's bucket, and the one after them (past the last
 * bucket: the end). */
static void index_range(const struct ps_jit_table *table, uint64_t addr, size_t *low, size_t *high)
{
	uint64_t b = (addr - table->entries[0].start) >> table->index_shift;

	if (b >= table->nr_buckets) {
		*low = *high = table->nr_entries;
		return;
	}
	*low = table->index[b];
	*high = table->index[b + 1];
}

void ps_jit_table_finish(struct ps_jit_table *table)
{
	size_t kept = 0;

	free(table->by_code_index);
	table->by_code_index = NULL;
	table->nr_by_code_index = 0;
	if (table->nr_entries)
		qsort(table->entries, table->nr_entries, sizeof(*table->entries), compare_by_start);
	/* of a run with one start keep the last written */
	for (size_t i = 0; i < table->nr_entries; i++) {
		if (i + 1 < table->nr_entries &&
		    table->entries[i + 1].start == table->entries[i].start)
			continue;
		table->entries[kept++] = table->entries[i];
	}
	table->nr_entries = kept;
	/* an entry ends at the latest where the next one starts */
	for (size_t i = 0; i + 1 < table->nr_entries; i++) {
		struct table_entry *entry = &table->entries[i];
		uint64_t room = table->entries[i + 1].start - entry->start;

		if (entry->size > room)
			entry->size = room;
	}
	table->stats.entries = table->nr_entries;
	build_index(table);
}

static void fill_symbol(const struct ps_jit_table *table, const struct table_entry *entry,
                        struct ps_jit_symbol *out)
{
	memset(out, 0, sizeof(*out));
	out->name = table->names + entry->name;
	out->start = entry->start;
	out->size = entry->size;
	out->source = table->source;
	out->code_index = entry->code_index;
	if (entry->unwind != PS_JIT_NO_UNWIND) {
		const struct table_unwind *unwind = &table->unwinds[entry->unwind];

		out->eh_frame = table->unwind_bytes + unwind->offset;
		out->eh_frame_size = unwind->eh_frame_size;
		out->eh_frame_hdr = out->eh_frame + unwind->eh_frame_size;
		out->eh_frame_hdr_size = unwind->hdr_size;
		/* perf's genelf puts .eh_frame at ALIGN_8(text offset + code
		 * size); the text offset is a multiple of 8 */
		out->eh_frame_addr = entry->start + ((entry->size + 7) & ~(uint64_t)7);
	}
}

bool ps_jit_table_lookup(const struct ps_jit_table *table, uint64_t addr, struct ps_jit_symbol *out)
{
	size_t low = 0, high;
	const struct table_entry *entry;

	if (!table)
		return false;
	/* the last entry starting at or below addr */
	high = table->nr_entries;
	if (table->index && table->indexed_entries == table->nr_entries && high &&
	    addr >= table->entries[0].start)
		index_range(table, addr, &low, &high);
	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (table->entries[mid].start <= addr)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0)
		return false;
	entry = &table->entries[low - 1];
	if (addr - entry->start >= entry->size)
		return false;
	if (out)
		fill_symbol(table, entry, out);
	return true;
}

size_t ps_jit_table_count(const struct ps_jit_table *table)
{
	return table ? table->nr_entries : 0;
}

bool ps_jit_table_at(const struct ps_jit_table *table, size_t index, struct ps_jit_symbol *out)
{
	if (!table || index >= table->nr_entries)
		return false;
	fill_symbol(table, &table->entries[index], out);
	return true;
}

const char *ps_jit_table_path(const struct ps_jit_table *table)
{
	return table->path;
}

const struct ps_jit_file_stats *ps_jit_table_stats(const struct ps_jit_table *table)
{
	return &table->stats;
}

struct ps_jit_file_stats *ps_jit_table_counters(struct ps_jit_table *table)
{
	return &table->stats;
}

const char *ps_jit_table_errmsg(const struct ps_jit_table *table)
{
	return table->errmsg[0] ? table->errmsg : NULL;
}

void ps_jit_table_note(struct ps_jit_table *table, const char *fmt, ...)
{
	va_list ap;

	if (table->errmsg[0])
		return;
	va_start(ap, fmt);
	ps_vformat(table->errmsg, sizeof(table->errmsg), NULL, fmt, ap);
	va_end(ap);
}

int ps_jit_table_fail(struct ps_jit_table *table, int err, const char *fmt, ...)
{
	va_list ap;

	/* a file that failed is not used at all */
	table->nr_entries = 0;
	table->stats.entries = 0;
	va_start(ap, fmt);
	ps_vfail(table->errmsg, sizeof(table->errmsg), err, NULL, fmt, ap);
	va_end(ap);
	return err;
}

/* ------------------------------------------------------------------ */
/* Perf maps                                                           */
/* ------------------------------------------------------------------ */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hex number (an optional 0x as perf's strtoull accepts) ending at a
 * blank; false on no digits, another character, or overflow. */
static bool parse_hex(const char **at, const char *end, uint64_t *out)
{
	const char *p = *at;
	uint64_t value = 0;
	int digit;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    ps_textline_hex_value(p[2]) >= 0)
		p += 2;
	if (p == end || ps_textline_hex_value(*p) < 0)
		return false;
	for (; p < end && (digit = ps_textline_hex_value(*p)) >= 0; p++) {
		if (value > UINT64_MAX >> 4)
			return false;
		value = value << 4 | (uint64_t)digit;
	}
	if (p < end && !is_blank(*p))
		return false;
	*out = value;
	*at = p;
	return true;
}

/* One line without its newline; NULL when it is good, else what is wrong. */
static const char *parse_map_line(const char *line, size_t len, uint64_t *start, uint64_t *size,
                                  const char **name, size_t *name_len)
{
	const char *p = line, *end = line + len;

	if (len > MAP_LINE_MAX)
		return "longer than 64 KiB";
	if (memchr(line, '\0', len))
		return "NUL byte";
	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return "empty line";
	if (!parse_hex(&p, end, start))
		return "bad start address";
	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return "missing size";
	if (!parse_hex(&p, end, size))
		return "bad size";
	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return "missing name";
	if (*size == 0)
		return "size 0";
	if (*start + *size < *start)
		return "start + size overflows";
	*name = p;
	*name_len = (size_t)(end - p);
	return NULL;
}

static int map_line(struct ps_jit_table *table, const char *line, size_t len, uint64_t line_no)
{
	uint64_t start = 0, size = 0;
	const char *name = NULL;
	size_t name_len = 0;
	const char *damage = parse_map_line(line, len, &start, &size, &name, &name_len);
	int err;

	if (damage) {
		table->stats.damaged++;
		ps_jit_table_note(table, "%s: line %llu: %s", table->path,
		                  (unsigned long long)line_no, damage);
		return 0;
	}
	err = ps_jit_table_add(table, start, size, name, name_len, PS_JIT_NO_UNWIND, 0, line_no);
	if (err == -ENOSPC) {
		table->stats.over_limit++;
		return 0;
	}
	return err;
}

static int read_map_lines(struct ps_jit_table *table, int fd)
{
	size_t cap = MAP_LINE_MAX + MAP_CHUNK, len = 0;
	char *buf = malloc(cap);
	bool skipping = false; /* inside a line already found too long */
	uint64_t line_no = 1;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - len);
		char *p = buf, *end, *newline;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = ps_jit_table_fail(table, -errno, "%s: line %llu: read: %s",
			                        table->path, (unsigned long long)line_no,
			                        strerror(errno));
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		end = buf + len;
		while (!err && (newline = memchr(p, '\n', (size_t)(end - p)))) {
			if (!skipping)
				err = map_line(table, p, (size_t)(newline - p), line_no);
			skipping = false;
			line_no++;
			p = newline + 1;
		}
		if (err)
			break;
		len = (size_t)(end - p);
		if (!skipping && len > MAP_LINE_MAX) {
			table->stats.damaged++;
			ps_jit_table_note(table, "%s: line %llu: longer than 64 KiB", table->path,
			                  (unsigned long long)line_no);
			skipping = true;
		}
		if (skipping)
			len = 0;
		memmove(buf, p, len);
	}
	if (!err && len > 0) {
		/* perhaps cut while the process was writing: its name may be too */
		table->stats.damaged++;
		ps_jit_table_note(table, "%s: line %llu: no newline at the end of the file",
		                  table->path, (unsigned long long)line_no);
	}
	free(buf);
	return err;
}

/* Open a file to parse: regular files only (O_NONBLOCK so a FIFO put in
 * its place cannot block us). */
static int open_regular(struct ps_jit_table *table, const char *path, const char *file, int *fd_out)
{
	struct stat st;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return ps_jit_table_fail(table, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return ps_jit_table_fail(table, -EINVAL, "%s: not a regular file", path);
	}
	*fd_out = fd;
	return 0;
}

int ps_perf_map_read(const char *path, const struct ps_jit_limits *limits,
                     struct ps_jit_table **out)
{
	return ps_perf_map_read_file(path, path, limits, out);
}

int ps_perf_map_read_file(const char *path, const char *file, const struct ps_jit_limits *limits,
                          struct ps_jit_table **out)
{
	struct ps_jit_table *table = ps_jit_table_new(PS_JIT_SOURCE_MAP, path, limits);
	int fd = -1, err;

	*out = table;
	if (!table)
		return -ENOMEM;
	err = open_regular(table, path, file, &fd);
	if (err)
		return err;
	err = read_map_lines(table, fd);
	close(fd);
	if (err == -ENOMEM)
		ps_jit_table_fail(table, err, "%s: out of memory", path);
	if (err)
		return err;
	ps_jit_table_finish(table);
	return 0;
}
