/* Unit tests of the python module's frame-name sources: perf maps and
 * jitdumps written to a temporary directory (valid, damaged in every way the
 * readers know, both byte orders, over the caps), the per-process search and
 * merge, and the files a real CPython 3.12/3.13 writes for -X perf and
 * -X perf_jit when one is installed. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "python/python_priv.h"

#define MAGIC 0x4A695444u

/* A directory per test case, made and removed by the runner's process so
 * that a failed test (whose process ends at the failed assertion, before
 * its checked teardown) leaves nothing behind; a fresh subdirectory per
 * test. */
static char case_dir[64];
static char test_dir[128];

static void case_setup(void)
{
	strcpy(case_dir, "/tmp/ps_sources.XXXXXX");
	if (!mkdtemp(case_dir)) {
		perror("mkdtemp");
		abort();
	}
}

static void setup(void)
{
	snprintf(test_dir, sizeof(test_dir), "%s/test.XXXXXX", case_dir);
	ck_assert_ptr_nonnull(mkdtemp(test_dir));
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	char path[512];

	if (!d)
		return;
	while ((ent = readdir(d))) {
		struct stat st;

		if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
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
	remove_tree(test_dir);
}

static void case_teardown(void)
{
	remove_tree(case_dir);
}

/* test_dir/name, in a buffer that lives until the next call with the same slot */
static const char *in_dir(const char *name)
{
	static char paths[4][512];
	static int slot;
	char *path = paths[slot++ % 4];

	snprintf(path, sizeof(paths[0]), "%s/%s", test_dir, name);
	return path;
}

static const char *write_file(const char *name, const void *data, size_t len)
{
	const char *path = in_dir(name);
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	if (len)
		ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

static struct ps_jit_table *read_map_text(const char *text, const struct ps_jit_limits *limits)
{
	struct ps_jit_table *table;
	const char *path = write_file("perf-1.map", text, strlen(text));

	ck_assert_int_eq(ps_perf_map_read(path, limits, &table), 0);
	return table;
}

static void assert_symbol(const struct ps_jit_table *table, uint64_t addr, const char *name,
                          uint64_t start, uint64_t size)
{
	struct ps_jit_symbol sym;

	ck_assert_msg(ps_jit_table_lookup(table, addr, &sym), "no symbol at %#llx",
	              (unsigned long long)addr);
	ck_assert_str_eq(sym.name, name);
	ck_assert_uint_eq(sym.start, start);
	ck_assert_uint_eq(sym.size, size);
}

static void assert_none(const struct ps_jit_table *table, uint64_t addr)
{
	ck_assert_msg(!ps_jit_table_lookup(table, addr, NULL), "a symbol at %#llx",
	              (unsigned long long)addr);
}

/* ------------------------------------------------------------------ */
/* perf maps                                                           */
/* ------------------------------------------------------------------ */

/* Lookups in a big table go through its bucket index: they must find
 * what a walk over every entry finds (the last entry starting at or below
 * the address, if the address is within it), for addresses around every
 * entry, in gaps, before the first and past the last, with entries close
 * together and far apart (a few buckets hold most of them). */
START_TEST(test_table_index_lookups)
{
	static const uint64_t bases[] = { 0x1000, 0x7f0000000000ull, 0xffffffffff000000ull };
	struct ps_jit_limits limits = { 0 };
	struct ps_jit_symbol sym;
	uint64_t state = 7, starts[600], sizes[600];
	size_t n = 0;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		uint64_t at = bases[b];

		for (size_t i = 0; i < 200; i++) {
			state = state * 6364136223846793005ull + 1442695040888963407ull;
			starts[n] = at;
			sizes[n] = 1 + (state >> 58); /* 1 to 64 bytes */
			at += sizes[n] + ((state >> 40) % 3 == 0 ? (state >> 44) % 4096 : 0);
			n++;
		}
	}
	struct ps_jit_table *table = ps_jit_table_new(PS_JIT_SOURCE_MAP, "test", &limits);
	ck_assert_ptr_nonnull(table);
	/* added out of order, as a file may list them */
	for (size_t i = 0; i < n; i++) {
		size_t k = (i * 7) % n;

		ck_assert_int_eq(ps_jit_table_add(table, starts[k], sizes[k], "f", 1,
		                                  PS_JIT_NO_UNWIND, 0, k),
		                 0);
	}
	ps_jit_table_finish(table);
	for (size_t i = 0; i < n; i++) {
		const int64_t deltas[] = {
			-1, 0, 1, (int64_t)sizes[i] - 1, (int64_t)sizes[i], (int64_t)sizes[i] + 100
		};

		for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
			uint64_t addr = starts[i] + (uint64_t)deltas[d];
			bool want = false;
			uint64_t want_start = 0;

			for (size_t k = 0; k < n; k++)
				if (starts[k] <= addr && addr - starts[k] < sizes[k]) {
					want = true;
					want_start = starts[k];
				}
			ck_assert_msg(ps_jit_table_lookup(table, addr, &sym) == want, "%#llx",
			              (unsigned long long)addr);
			if (want)
				ck_assert_uint_eq(sym.start, want_start);
		}
	}
	ck_assert(!ps_jit_table_lookup(table, 0, NULL));
	ck_assert(!ps_jit_table_lookup(table, UINT64_MAX, NULL));
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_valid)
{
	struct ps_jit_table *table = read_map_text("7f9638bed79b b py::bar:<string>\n"
	                                           "7f9638bed7a6 b py::foo:/x/a b.py\n"
	                                           "0x1000 0x10 with_prefix\n"
	                                           "2000\t20\ttabs and spaces  \n"
	                                           "ABCD0 F upper\n",
	                                           NULL);
	struct ps_jit_symbol sym;

	ck_assert_uint_eq(ps_jit_table_count(table), 5);
	ck_assert_uint_eq(ps_jit_table_stats(table)->entries, 5);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 0);
	ck_assert_ptr_null(ps_jit_table_errmsg(table));
	assert_symbol(table, 0x7f9638bed79b, "py::bar:<string>", 0x7f9638bed79b, 0xb);
	assert_symbol(table, 0x7f9638bed7a5, "py::bar:<string>", 0x7f9638bed79b, 0xb);
	assert_symbol(table, 0x7f9638bed7a6, "py::foo:/x/a b.py", 0x7f9638bed7a6, 0xb);
	assert_symbol(table, 0x7f9638bed7b0, "py::foo:/x/a b.py", 0x7f9638bed7a6, 0xb);
	assert_none(table, 0x7f9638bed7b1);
	assert_none(table, 0x7f9638bed79a);
	assert_symbol(table, 0x1000, "with_prefix", 0x1000, 0x10);
	assert_none(table, 0x1010);
	assert_none(table, 0xfff);
	assert_none(table, 0);
	assert_none(table, UINT64_MAX);
	assert_symbol(table, 0x2013, "tabs and spaces  ", 0x2000, 0x20);
	assert_symbol(table, 0xabcd0, "upper", 0xabcd0, 0xf);
	/* in address order */
	ck_assert(ps_jit_table_at(table, 0, &sym));
	ck_assert_str_eq(sym.name, "with_prefix");
	ck_assert_int_eq(sym.source, PS_JIT_SOURCE_MAP);
	ck_assert_ptr_null(sym.eh_frame);
	ck_assert(ps_jit_table_at(table, 4, &sym));
	ck_assert_str_eq(sym.name, "py::foo:/x/a b.py");
	ck_assert(!ps_jit_table_at(table, 5, &sym));
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_damaged_lines)
{
	static const char *const bad[] = {
		"zz12 10 bad_hex",
		"7f00g 10 trailing_junk_in_start",
		"1000",
		"1000 ",
		"1000 20",
		"1000 20   ",
		"",
		"   ",
		"1000 0 size_zero",
		"ffffffffffffff00 200 overflow",
		"10000000000000000 10 seventeen_digits",
		"2000 1x bad_size",
		"2000 10000000000000000 size_too_big",
		"0x 10 bare_prefix",
		"-1000 10 negative",
	};
	struct ps_jit_table *table;
	size_t nr_bad = sizeof(bad) / sizeof(bad[0]);
	char nul_line[] = "3000 10 na\0me\n";
	char *overlong;

	/* good lines around every damaged one */
	{
		FILE *f = fopen(in_dir("perf-1.map"), "wb");

		ck_assert_ptr_nonnull(f);
		fprintf(f, "100 10 first\n");
		for (size_t i = 0; i < nr_bad; i++)
			fprintf(f, "%s\n%zx 8 good%zu\n", bad[i], 0x10000 + i * 0x10, i);
		fwrite(nul_line, 1, sizeof(nul_line) - 1, f);
		overlong = malloc(70000);
		memset(overlong, 'a', 70000);
		fprintf(f, "4000 10 ");
		fwrite(overlong, 1, 70000, f);
		fprintf(f, "\n5000 10 after_overlong\n6000 10 unterminated");
		free(overlong);
		ck_assert_int_eq(fclose(f), 0);
	}
	ck_assert_int_eq(ps_perf_map_read(in_dir("perf-1.map"), NULL, &table), 0);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, nr_bad + 3);
	ck_assert_uint_eq(ps_jit_table_count(table), nr_bad + 2);
	assert_symbol(table, 0x100, "first", 0x100, 0x10);
	for (size_t i = 0; i < nr_bad; i++) {
		char name[32];

		snprintf(name, sizeof(name), "good%zu", i);
		assert_symbol(table, 0x10000 + i * 0x10 + 7, name, 0x10000 + i * 0x10, 8);
	}
	assert_none(table, 0x3000);
	assert_none(table, 0x4000);
	assert_symbol(table, 0x5000, "after_overlong", 0x5000, 0x10);
	assert_none(table, 0x6000);
	ck_assert_pstr_eq(ps_jit_table_errmsg(table) + strlen(test_dir),
	                  "/perf-1.map: line 2: bad start address");
	ps_jit_table_free(table);
}
END_TEST

/* Each kind of damage on its own, with the message it gives. */
START_TEST(test_map_damage_messages)
{
	static const struct {
		const char *text;
		size_t len; /* 0: strlen(text) */
		const char *what;
	} cases[] = {
		{ "zz 10 x\n", 0, "line 1: bad start address" },
		{ "10\n", 0, "line 1: missing size" },
		{ "10 g x\n", 0, "line 1: bad size" },
		{ "10 10\n", 0, "line 1: missing name" },
		{ "\n", 0, "line 1: empty line" },
		{ "10 0 x\n", 0, "line 1: size 0" },
		{ "ffffffffffffffff 1 x\n", 0, "line 1: start + size overflows" },
		{ "10 10 x", 0, "line 1: no newline at the end of the file" },
		{ "1 1 y\n10 1\0 x\n", 14, "line 2: NUL byte" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ps_jit_table *table;
		const char *path;
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		char expected[600];

		path = write_file("perf-1.map", cases[i].text, len);
		ck_assert_int_eq(ps_perf_map_read(path, NULL, &table), 0);
		ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 1);
		snprintf(expected, sizeof(expected), "%s: %s", path, cases[i].what);
		ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
		ps_jit_table_free(table);
	}
}
END_TEST

START_TEST(test_map_line_length_limit)
{
	/* a line of exactly 64 KiB is read; one byte more is damaged, and a
	 * line spanning several read chunks is skipped to its end */
	size_t limit = 64 << 10, huge = 300 << 10;
	char *text = malloc(limit * 2 + huge + 100);
	size_t len = 0;
	struct ps_jit_table *table;
	struct ps_jit_symbol sym;

	len += (size_t)sprintf(text + len, "1000 10 ");
	memset(text + len, 'a', limit - 8);
	len += limit - 8;
	text[len++] = '\n';
	len += (size_t)sprintf(text + len, "2000 10 ");
	memset(text + len, 'b', limit - 7);
	len += limit - 7;
	text[len++] = '\n';
	len += (size_t)sprintf(text + len, "3000 10 ");
	memset(text + len, 'c', huge);
	len += huge;
	len += (size_t)sprintf(text + len, "\n4000 10 last\n");
	write_file("perf-1.map", text, len);
	free(text);
	ck_assert_int_eq(ps_perf_map_read(in_dir("perf-1.map"), NULL, &table), 0);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 2);
	ck_assert_uint_eq(ps_jit_table_count(table), 2);
	ck_assert(ps_jit_table_lookup(table, 0x1000, &sym));
	ck_assert_uint_eq(strlen(sym.name), limit - 8);
	assert_none(table, 0x2000);
	assert_none(table, 0x3000);
	assert_symbol(table, 0x4000, "last", 0x4000, 0x10);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_empty)
{
	struct ps_jit_table *table = read_map_text("", NULL);

	ck_assert_uint_eq(ps_jit_table_count(table), 0);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 0);
	ck_assert_ptr_null(ps_jit_table_errmsg(table));
	assert_none(table, 0);
	assert_none(table, 0x1000);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_huge)
{
	/* 300k lines written backwards: several read chunks, sorted on load */
	const size_t lines = 300000;
	const uint64_t base = 0x7f0000000000, stride = 0x10;
	FILE *f = fopen(in_dir("perf-1.map"), "wb");
	struct ps_jit_table *table;
	char name[64];

	ck_assert_ptr_nonnull(f);
	for (size_t i = lines; i-- > 0;)
		fprintf(f, "%llx b py::function_%zu:/src/module_%zu.py\n",
		        (unsigned long long)(base + i * stride), i, i % 97);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(ps_perf_map_read(in_dir("perf-1.map"), NULL, &table), 0);
	ck_assert_uint_eq(ps_jit_table_count(table), lines);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 0);
	for (size_t i = 0; i < lines; i += 997) {
		snprintf(name, sizeof(name), "py::function_%zu:/src/module_%zu.py", i, i % 97);
		assert_symbol(table, base + i * stride, name, base + i * stride, 0xb);
		assert_symbol(table, base + i * stride + 0xa, name, base + i * stride, 0xb);
		assert_none(table, base + i * stride + 0xb);
		assert_none(table, base + i * stride + 0xf);
	}
	assert_none(table, base - 1);
	snprintf(name, sizeof(name), "py::function_%zu:/src/module_%zu.py", lines - 1,
	         (lines - 1) % 97);
	assert_symbol(table, base + (lines - 1) * stride, name, base + (lines - 1) * stride, 0xb);
	assert_none(table, base + lines * stride);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_caps)
{
	struct ps_jit_limits entries = { .max_entries = 3 };
	struct ps_jit_limits names = { .max_name_bytes = 12 };
	const char *text = "10 1 aaaa\n20 1 bbbb\n30 1 cccc\n40 1 dddd\n50 1 eeee\n";
	struct ps_jit_table *table = read_map_text(text, &entries);

	ck_assert_uint_eq(ps_jit_table_count(table), 3);
	ck_assert_uint_eq(ps_jit_table_stats(table)->over_limit, 2);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 0);
	assert_symbol(table, 0x30, "cccc", 0x30, 1);
	assert_none(table, 0x40);
	ps_jit_table_free(table);

	/* "aaaa\0bbbb\0" fits in 12 bytes, a third name does not */
	table = read_map_text(text, &names);
	ck_assert_uint_eq(ps_jit_table_count(table), 2);
	ck_assert_uint_eq(ps_jit_table_stats(table)->over_limit, 3);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_overlaps)
{
	struct ps_jit_table *table = read_map_text("1000 10 old\n"
	                                           "2000 100 outer\n"
	                                           "2050 10 inner\n"
	                                           "1000 8 new\n"
	                                           "3000 10 a\n"
	                                           "3008 10 b\n",
	                                           NULL);

	/* the same start: the later line wins, with its own size */
	assert_symbol(table, 0x1000, "new", 0x1000, 8);
	assert_none(table, 0x1008);
	/* an entry ends where the next one starts */
	assert_symbol(table, 0x204f, "outer", 0x2000, 0x50);
	assert_symbol(table, 0x2050, "inner", 0x2050, 0x10);
	assert_none(table, 0x2060);
	assert_symbol(table, 0x3007, "a", 0x3000, 8);
	assert_symbol(table, 0x3008, "b", 0x3008, 0x10);
	ck_assert_uint_eq(ps_jit_table_count(table), 5);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_map_open_errors)
{
	struct ps_jit_table *table;
	char expected[600];

	ck_assert_int_eq(ps_perf_map_read(in_dir("missing.map"), NULL, &table), -ENOENT);
	snprintf(expected, sizeof(expected), "%s: %s", in_dir("missing.map"), strerror(ENOENT));
	ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
	ck_assert(!ps_jit_table_lookup(table, 0, NULL));
	ps_jit_table_free(table);

	ck_assert_int_eq(ps_perf_map_read(test_dir, NULL, &table), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ps_jit_table_errmsg(table), "not a regular file"));
	ps_jit_table_free(table);

	/* a FIFO in the file's place is refused without blocking */
	ck_assert_int_eq(mkfifo(in_dir("fifo.map"), 0600), 0);
	ck_assert_int_eq(ps_perf_map_read(in_dir("fifo.map"), NULL, &table), -EINVAL);
	ps_jit_table_free(table);
	ck_assert_int_eq(ps_jitdump_read(in_dir("fifo.map"), NULL, &table), -EINVAL);
	ps_jit_table_free(table);
}
END_TEST

/* ------------------------------------------------------------------ */
/* jitdumps                                                            */
/* ------------------------------------------------------------------ */

struct dump {
	uint8_t *buf;
	size_t len, cap;
	bool big; /* written by a big-endian process */
};

static void put(struct dump *d, const void *data, size_t len)
{
	if (d->len + len > d->cap) {
		d->cap = (d->len + len) * 2 + 256;
		d->buf = realloc(d->buf, d->cap);
		ck_assert_ptr_nonnull(d->buf);
	}
	memcpy(d->buf + d->len, data, len);
	d->len += len;
}

static void put_u(struct dump *d, uint64_t value, size_t bytes)
{
	uint8_t out[8];

	for (size_t i = 0; i < bytes; i++) {
		size_t shift = d->big ? bytes - 1 - i : i;

		out[i] = (uint8_t)(value >> (8 * shift));
	}
	put(d, out, bytes);
}

static void put32(struct dump *d, uint32_t value)
{
	put_u(d, value, 4);
}

static void put64(struct dump *d, uint64_t value)
{
	put_u(d, value, 8);
}

static void patch32(struct dump *d, size_t offset, uint32_t value)
{
	size_t len = d->len;

	d->len = offset;
	put32(d, value);
	d->len = len;
}

static void patch64(struct dump *d, size_t offset, uint64_t value)
{
	size_t len = d->len;

	d->len = offset;
	put64(d, value);
	d->len = len;
}

static void put_header(struct dump *d)
{
	put32(d, MAGIC);
	put32(d, 1); /* version */
	put32(d, 40); /* total_size */
	put32(d, 62); /* EM_X86_64 */
	put32(d, 0);
	put32(d, 4242);
	put64(d, 123456789);
	put64(d, 0);
}

static size_t put_record_header(struct dump *d, uint32_t id, uint32_t total_size)
{
	size_t at = d->len;

	put32(d, id);
	put32(d, total_size);
	put64(d, 1000 + at);
	return at;
}

/* A JIT_CODE_LOAD of size bytes of code at addr; returns its offset. */
static size_t put_load(struct dump *d, uint64_t addr, uint64_t size, uint64_t index,
                       const char *name)
{
	size_t name_size = strlen(name) + 1;
	size_t at = put_record_header(d, 0, (uint32_t)(16 + 40 + name_size + size));

	put32(d, 4242);
	put32(d, 4243);
	put64(d, addr);
	put64(d, addr);
	put64(d, size);
	put64(d, index);
	put(d, name, name_size);
	for (uint64_t i = 0; i < size; i++)
		put_u(d, 0xc3, 1);
	return at;
}

/* A JIT_CODE_UNWINDING_INFO as CPython writes it: .eh_frame, then
 * .eh_frame_hdr, padded to 8 bytes. */
static size_t put_unwind(struct dump *d, const uint8_t *eh_frame, size_t eh_size,
                         const uint8_t *hdr, size_t hdr_size)
{
	size_t content = 16 + 24 + eh_size + hdr_size, padding = (8 - content % 8) % 8;
	size_t at = put_record_header(d, 4, (uint32_t)(content + padding));

	put64(d, eh_size + hdr_size);
	put64(d, hdr_size);
	put64(d, (eh_size + hdr_size + 15) & ~(size_t)15);
	put(d, eh_frame, eh_size);
	put(d, hdr, hdr_size);
	for (size_t i = 0; i < padding; i++)
		put_u(d, 0, 1);
	return at;
}

/* The .eh_frame CPython 3.13 wrote for a trampoline here (CIE + FDE), and
 * its .eh_frame_hdr. */
static const uint8_t eh_frame_bytes[48] = {
	0x14, 0,    0,    0,    0,    0,    0, 0, 0x01, 0x7a, 0x52, 0,    0x01, 0x78, 0x10, 0x01,
	0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0, 0x14, 0,    0,    0,    0x1c, 0,    0,    0,
	0xd0, 0xff, 0xff, 0xff, 0x0b, 0,    0, 0, 0,    0x44, 0x0e, 0x10, 0x46, 0x0e, 0x08, 0,
};
static const uint8_t eh_frame_hdr_bytes[20] = {
	0x01, 0x1b, 0x03, 0x3b, 0xcc, 0xff, 0xff, 0xff, 0x01, 0,
	0,    0,    0xc0, 0xff, 0xff, 0xff, 0xe8, 0xff, 0xff, 0xff,
};

static const char *write_dump(struct dump *d)
{
	const char *path = write_file("jit-1.dump", d->buf, d->len);

	free(d->buf);
	memset(d, 0, sizeof(*d));
	return path;
}

static struct ps_jit_table *read_dump(struct dump *d, const struct ps_jit_limits *limits)
{
	struct ps_jit_table *table;
	const char *path = write_dump(d);

	ck_assert_int_eq(ps_jitdump_read(path, limits, &table), 0);
	return table;
}

static void assert_dump_symbol(const struct ps_jit_table *table, uint64_t addr, const char *name,
                               uint64_t start, uint64_t size, bool unwind)
{
	struct ps_jit_symbol sym;

	assert_symbol(table, addr, name, start, size);
	ck_assert(ps_jit_table_lookup(table, addr, &sym));
	ck_assert_int_eq(sym.source, PS_JIT_SOURCE_DUMP);
	if (!unwind) {
		ck_assert_ptr_null(sym.eh_frame);
		ck_assert_uint_eq(sym.eh_frame_size, 0);
		return;
	}
	ck_assert_uint_eq(sym.eh_frame_size, sizeof(eh_frame_bytes));
	ck_assert_mem_eq(sym.eh_frame, eh_frame_bytes, sizeof(eh_frame_bytes));
	ck_assert_uint_eq(sym.eh_frame_hdr_size, sizeof(eh_frame_hdr_bytes));
	ck_assert_mem_eq(sym.eh_frame_hdr, eh_frame_hdr_bytes, sizeof(eh_frame_hdr_bytes));
	ck_assert_uint_eq(sym.eh_frame_addr, start + ((size + 7) & ~(uint64_t)7));
}

/* _i: 0 little-endian, 1 big-endian */
START_TEST(test_dump_valid)
{
	struct dump d = { .big = _i == 1 };
	static const uint8_t other_eh_frame[16] = { 12, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1 };
	struct ps_jit_table *table;
	struct ps_jit_symbol sym;
	size_t at;

	put_header(&d);
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	           sizeof(eh_frame_hdr_bytes));
	put_load(&d, 0x7f0000001000, 0xb, 1, "py::first:/app/a.py");
	put_load(&d, 0x7f0000001010, 0xb, 2, "py::no_unwind:/app/a.py");
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	           sizeof(eh_frame_hdr_bytes));
	put_load(&d, 0x7f0000001020, 0xb, 3, "py::third:<string>");
	/* a debug-info record with two entries, ignored */
	at = put_record_header(&d, 2, 0);
	put64(&d, 0x7f0000001020);
	put64(&d, 2);
	put64(&d, 0x7f0000001020);
	put32(&d, 10);
	put32(&d, 0);
	put(&d, "a.py", 5);
	put64(&d, 0x7f0000001024);
	put32(&d, 11);
	put32(&d, 0);
	put(&d, "a.py", 5);
	patch32(&d, at + 4, (uint32_t)(d.len - at));
	/* an unknown record type */
	at = put_record_header(&d, 77, 24);
	put64(&d, 0);
	/* unwinding info of other bytes, then an empty function, which
	 * takes it */
	put_unwind(&d, other_eh_frame, sizeof(other_eh_frame), eh_frame_hdr_bytes, 4);
	put_load(&d, 0x7f0000001030, 0, 4, "py::empty:x");
	put_load(&d, 0x7f0000002000, 0x100, 5, "py::big:/app/b.py");
	put_record_header(&d, 3, 16); /* JIT_CODE_CLOSE */
	table = read_dump(&d, NULL);

	ck_assert_ptr_null(ps_jit_table_errmsg(table));
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 0);
	ck_assert_uint_eq(ps_jit_table_stats(table)->unknown, 1);
	ck_assert_uint_eq(ps_jit_table_count(table), 4);
	assert_dump_symbol(table, 0x7f0000001000, "py::first:/app/a.py", 0x7f0000001000, 0xb, true);
	assert_dump_symbol(table, 0x7f000000100a, "py::first:/app/a.py", 0x7f0000001000, 0xb, true);
	assert_none(table, 0x7f000000100b);
	assert_dump_symbol(table, 0x7f0000001010, "py::no_unwind:/app/a.py", 0x7f0000001010, 0xb,
	                   false);
	assert_dump_symbol(table, 0x7f000000102a, "py::third:<string>", 0x7f0000001020, 0xb, true);
	assert_none(table, 0x7f0000001030);
	assert_dump_symbol(table, 0x7f00000020ff, "py::big:/app/b.py", 0x7f0000002000, 0x100,
	                   false);
	ck_assert(ps_jit_table_lookup(table, 0x7f0000001020, &sym));
	ck_assert_uint_eq(sym.code_index, 3);
	ps_jit_table_free(table);
}
END_TEST

static void expect_header_error(struct dump *d, int err, const char *what)
{
	struct ps_jit_table *table;
	const char *path = write_dump(d);
	char expected[600];

	ck_assert_int_eq(ps_jitdump_read(path, NULL, &table), err);
	snprintf(expected, sizeof(expected), "%s: %s", path, what);
	ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
	ck_assert_uint_eq(ps_jit_table_count(table), 0);
	ps_jit_table_free(table);
}

START_TEST(test_dump_bad_header)
{
	struct dump d = { 0 };
	struct ps_jit_table *table;

	put_header(&d);
	d.len = 20;
	expect_header_error(&d, -EINVAL,
	                    "offset 0x0: header cut by the end of the file (20 of 40 bytes)");
	expect_header_error(&d, -EINVAL,
	                    "offset 0x0: header cut by the end of the file (0 of 40 bytes)");
	put(&d, "ELF\x7f and some more bytes to fill a header!!", 44);
	expect_header_error(&d, -EINVAL, "offset 0x0: not a jitdump (magic 0x7f464c45)");

	put_header(&d);
	patch32(&d, 4, 2);
	expect_header_error(&d, -ENOTSUP, "offset 0x4: jitdump version 2 (perf reads 1)");
	put_header(&d);
	patch32(&d, 8, 39);
	expect_header_error(&d, -EINVAL, "offset 0x8: bad header total_size 39");
	put_header(&d);
	patch32(&d, 8, 48);
	expect_header_error(&d, -EINVAL, "offset 0x8: bad header total_size 48");
	put_header(&d);
	patch32(&d, 8, 1u << 30);
	put_load(&d, 0x1000, 1, 1, "x");
	expect_header_error(&d, -EINVAL, "offset 0x8: bad header total_size 1073741824");

	/* a longer header (a newer writer's fields) is skipped */
	put_header(&d);
	patch32(&d, 8, 48);
	put64(&d, 0);
	put_load(&d, 0x1000, 1, 1, "x");
	table = read_dump(&d, NULL);
	assert_symbol(table, 0x1000, "x", 0x1000, 1);
	ps_jit_table_free(table);

	/* only a header: valid and empty */
	put_header(&d);
	table = read_dump(&d, NULL);
	ck_assert_uint_eq(ps_jit_table_count(table), 0);
	ck_assert_ptr_null(ps_jit_table_errmsg(table));
	ps_jit_table_free(table);
}
END_TEST

/* A load before and after a record whose total_size is set to total,
 * which leaves nothing to skip by: reading goes on at the next record,
 * which runs to the end of the file. */
START_TEST(test_dump_bad_total_size)
{
	static const struct {
		uint32_t total; /* 1: one past the end of the file */
		const char *what;
	} cases[] = {
		{ 0, "record total_size smaller than its header" },
		{ 8, "record total_size smaller than its header" },
		{ 15, "record total_size smaller than its header" },
		{ 0xffffffff, "record passes the end of the file" },
		{ 1, "record passes the end of the file" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct dump d = { .big = i % 2 };
		struct ps_jit_table *table;
		const struct ps_jit_file_stats *stats;
		char expected[600];
		size_t at, after, rest;

		put_header(&d);
		put_load(&d, 0x1000, 0x10, 1, "py::before:x");
		at = put_load(&d, 0x2000, 0x10, 2, "py::damaged:x");
		after = put_load(&d, 0x3000, 0x10, 3, "py::after:x");
		rest = d.len - at;
		patch32(&d, at + 4, cases[i].total == 1 ? (uint32_t)rest + 1 : cases[i].total);
		table = read_dump(&d, NULL);
		stats = ps_jit_table_stats(table);
		assert_symbol(table, 0x1000, "py::before:x", 0x1000, 0x10);
		assert_none(table, 0x2000);
		assert_symbol(table, 0x3000, "py::after:x", 0x3000, 0x10);
		ck_assert_uint_eq(stats->damaged, 1);
		ck_assert_uint_eq(stats->bytes_dropped, after - at);
		snprintf(expected, sizeof(expected), "%s: offset %#zx: %s", in_dir("jit-1.dump"),
		         at, cases[i].what);
		ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
		ps_jit_table_free(table);
	}
}
END_TEST

/* Records whose total_size is sane but too small for their type are
 * skipped by it, and reading goes on. */
START_TEST(test_dump_short_records)
{
	struct dump d = { .big = _i == 1 };
	struct ps_jit_table *table;
	size_t first;

	put_header(&d);
	first = put_record_header(&d, 0, 16); /* a JIT_CODE_LOAD without body */
	put_record_header(&d, 0, 20);
	put32(&d, 1);
	put_record_header(&d, 0, 56); /* fixed fields only, code_size 16 */
	put32(&d, 1);
	put32(&d, 1);
	put64(&d, 0x2000);
	put64(&d, 0x2000);
	put64(&d, 16);
	put64(&d, 9);
	put_record_header(&d, 1, 40); /* JIT_CODE_MOVE, needs 16 + 48 */
	put64(&d, 1);
	put64(&d, 2);
	put64(&d, 3);
	put_record_header(&d, 4, 24); /* JIT_CODE_UNWINDING_INFO */
	put64(&d, 1);
	put_record_header(&d, 2, 20); /* JIT_CODE_DEBUG_INFO */
	put32(&d, 1);
	put_load(&d, 0x3000, 0x10, 3, "py::after:x");
	table = read_dump(&d, NULL);
	assert_symbol(table, 0x3000, "py::after:x", 0x3000, 0x10);
	ck_assert_uint_eq(ps_jit_table_count(table), 1);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 6);
	ck_assert_uint_eq(ps_jit_table_stats(table)->bytes_dropped, 0);
	ck_assert_ptr_nonnull(strstr(ps_jit_table_errmsg(table),
	                             "offset 0x28: JIT_CODE_LOAD shorter than its fixed fields"));
	ck_assert_uint_eq(first, 0x28);
	ps_jit_table_free(table);

	put_header(&d);
	put_record_header(&d, 0, 56);
	put32(&d, 1);
	put32(&d, 1);
	put64(&d, 0x2000);
	put64(&d, 0x2000);
	put64(&d, 16);
	put64(&d, 9);
	table = read_dump(&d, NULL);
	ck_assert_ptr_nonnull(strstr(
	        ps_jit_table_errmsg(table),
	        "offset 0x28: JIT_CODE_LOAD code_size 16 larger than the record (56 bytes)"));
	ps_jit_table_free(table);
}
END_TEST

/* What a forked CPython child does to its parent's jitdump: the tail of
 * one record written into the middle of another (both share the file),
 * then whole records again. Reading goes on at the first of them; past
 * RESYNC_SCAN bytes of garbage it stops. */
START_TEST(test_dump_spliced)
{
	struct dump d = { .big = _i == 1 };
	struct ps_jit_table *table;
	size_t cut, resumed;

	put_header(&d);
	put_load(&d, 0x1000, 0x10, 1, "py::before:x");
	cut = put_load(&d, 0x2000, 0x10, 2, "py::cut:x");
	/* the record loses its last 30 bytes: the fragment of another one
	 * (from its code_size field on) follows */
	d.len -= 30;
	put64(&d, 0x10);
	put64(&d, 7);
	put(&d, "py::fragment:x", 15);
	resumed = d.len;
	for (uint64_t i = 0; i < 6; i++)
		put_load(&d, 0x3000 + 0x100 * i, 0x10, 10 + i, "py::after:x");
	table = read_dump(&d, NULL);
	assert_symbol(table, 0x1000, "py::before:x", 0x1000, 0x10);
	for (uint64_t i = 0; i < 6; i++)
		assert_symbol(table, 0x3000 + 0x100 * i, "py::after:x", 0x3000 + 0x100 * i, 0x10);
	/* the cut record's total_size leads into the fragment, whose bytes
	 * are no record header: dropped up to the next whole record (the cut
	 * record itself may read as damaged too) */
	ck_assert_uint_ge(ps_jit_table_stats(table)->damaged, 1);
	ck_assert_uint_ge(ps_jit_table_stats(table)->bytes_dropped, 1);
	ck_assert_uint_lt(ps_jit_table_stats(table)->bytes_dropped, resumed - cut);
	ck_assert_ptr_nonnull(ps_jit_table_errmsg(table));
	ps_jit_table_free(table);

	/* more garbage than the scan reaches: the rest is dropped */
	put_header(&d);
	put_load(&d, 0x1000, 0x10, 1, "py::before:x");
	cut = put_record_header(&d, 0, 0xffffff);
	for (size_t i = 0; i < (65 << 10) / 8; i++)
		put64(&d, 0xffffffffffffffffull);
	put_load(&d, 0x3000, 0x10, 3, "py::lost:x");
	resumed = d.len; /* the end */
	table = read_dump(&d, NULL);
	assert_symbol(table, 0x1000, "py::before:x", 0x1000, 0x10);
	assert_none(table, 0x3000);
	ck_assert_uint_eq(ps_jit_table_stats(table)->bytes_dropped, resumed - cut);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_dump_truncated)
{
	struct dump d = { 0 };
	struct ps_jit_table *table;

	char expected[600];
	size_t at, rest;

	/* a record cut in its body */
	put_header(&d);
	put_load(&d, 0x1000, 0x10, 1, "py::kept:x");
	at = put_load(&d, 0x2000, 0x10, 2, "py::cut:x");
	d.len -= 5;
	rest = d.len - at;
	table = read_dump(&d, NULL);
	assert_symbol(table, 0x1000, "py::kept:x", 0x1000, 0x10);
	assert_none(table, 0x2000);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 1);
	ck_assert_uint_eq(ps_jit_table_stats(table)->bytes_dropped, rest);
	snprintf(expected, sizeof(expected), "%s: offset %#zx: record passes the end of the file",
	         in_dir("jit-1.dump"), at);
	ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
	ps_jit_table_free(table);

	/* a record cut in its header */
	put_header(&d);
	put_load(&d, 0x1000, 0x10, 1, "py::kept:x");
	at = put_record_header(&d, 0, 100);
	d.len -= 6;
	table = read_dump(&d, NULL);
	assert_symbol(table, 0x1000, "py::kept:x", 0x1000, 0x10);
	ck_assert_uint_eq(ps_jit_table_stats(table)->bytes_dropped, 10);
	snprintf(expected, sizeof(expected),
	         "%s: offset %#zx: record header cut by the end of the file", in_dir("jit-1.dump"),
	         at);
	ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_dump_damaged_loads)
{
	struct dump d = { .big = _i == 1 };
	struct ps_jit_table *table;
	size_t at;

	put_header(&d);
	/* name without NUL: the terminator is overwritten with code */
	at = put_load(&d, 0x1000, 4, 1, "py::nonul:x");
	d.buf[at + 56 + 11] = 'z';
	/* code_size larger than the record */
	at = put_load(&d, 0x2000, 4, 2, "py::big:x");
	patch64(&d, at + 40, 1000);
	/* code_size that leaves the name no room for its terminator */
	at = put_load(&d, 0x3000, 4, 3, "py::tight:x");
	patch64(&d, at + 40, 5);
	/* an empty name */
	put_load(&d, 0x4000, 4, 4, "");
	/* code_addr + code_size overflows */
	put_load(&d, UINT64_MAX - 2, 4, 5, "py::wrap:x");
	/* unwinding info for a damaged load is not passed to the next one */
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	           sizeof(eh_frame_hdr_bytes));
	at = put_load(&d, 0x5000, 4, 6, "py::damaged:x");
	d.buf[at + 56 + 13] = 'z';
	put_load(&d, 0x6000, 4, 7, "py::good:x");
	table = read_dump(&d, NULL);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 6);
	ck_assert_uint_eq(ps_jit_table_count(table), 1);
	assert_dump_symbol(table, 0x6000, "py::good:x", 0x6000, 4, false);
	ck_assert_ptr_nonnull(
	        strstr(ps_jit_table_errmsg(table), "offset 0x28: JIT_CODE_LOAD name without NUL"));
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_dump_damaged_unwinding)
{
	struct dump d = { .big = _i == 1 };
	struct ps_jit_table *table;
	size_t at;

	put_header(&d);
	/* eh_frame_hdr_size larger than unwind_data_size */
	at = put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	                sizeof(eh_frame_hdr_bytes));
	patch64(&d, at + 24, 100);
	put_load(&d, 0x1000, 4, 1, "py::a:x");
	/* unwind_data_size larger than the record */
	at = put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	                sizeof(eh_frame_hdr_bytes));
	patch64(&d, at + 16, 1000);
	put_load(&d, 0x2000, 4, 2, "py::b:x");
	/* shorter than its fixed fields */
	put_record_header(&d, 4, 24);
	put64(&d, 0);
	put_load(&d, 0x3000, 4, 3, "py::c:x");
	/* a good one after a damaged one still counts */
	put_record_header(&d, 4, 40);
	put64(&d, 8);
	put64(&d, 9);
	put64(&d, 0);
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	           sizeof(eh_frame_hdr_bytes));
	put_load(&d, 0x4000, 4, 4, "py::d:x");
	table = read_dump(&d, NULL);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 4);
	ck_assert_uint_eq(ps_jit_table_count(table), 4);
	assert_dump_symbol(table, 0x1000, "py::a:x", 0x1000, 4, false);
	assert_dump_symbol(table, 0x2000, "py::b:x", 0x2000, 4, false);
	assert_dump_symbol(table, 0x3000, "py::c:x", 0x3000, 4, false);
	assert_dump_symbol(table, 0x4000, "py::d:x", 0x4000, 4, true);
	ck_assert_ptr_nonnull(strstr(ps_jit_table_errmsg(table),
	                             "offset 0x28: JIT_CODE_UNWINDING_INFO eh_frame_hdr_size 100 "
	                             "larger than unwind_data_size 68"));
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_dump_move_and_debug_info)
{
	struct dump d = { .big = _i == 1 };
	struct ps_jit_table *table;
	char expected[600];
	size_t at;

	put_header(&d);
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	           sizeof(eh_frame_hdr_bytes));
	put_load(&d, 0x1000, 0x10, 7, "py::moved:x");
	/* JIT_CODE_MOVE of code_index 7 to 0x9000 */
	put_record_header(&d, 1, 16 + 48);
	put32(&d, 1);
	put32(&d, 1);
	put64(&d, 0x9000);
	put64(&d, 0x1000);
	put64(&d, 0x9000);
	put64(&d, 0x10);
	put64(&d, 7);
	/* a move of a code_index never loaded */
	at = put_record_header(&d, 1, 16 + 48);
	put32(&d, 1);
	put32(&d, 1);
	put64(&d, 0xa000);
	put64(&d, 0x1000);
	put64(&d, 0xa000);
	put64(&d, 0x10);
	put64(&d, 8);
	/* debug info claiming more entries than it holds */
	put_record_header(&d, 2, 16 + 16 + 17);
	put64(&d, 0x1000);
	put64(&d, 1000000);
	put64(&d, 0x1000);
	put32(&d, 1);
	put32(&d, 0);
	put(&d, "", 1);
	table = read_dump(&d, NULL);
	assert_dump_symbol(table, 0x1000, "py::moved:x", 0x1000, 0x10, true);
	assert_dump_symbol(table, 0x900f, "py::moved:x", 0x9000, 0x10, true);
	assert_none(table, 0xa000);
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 2);
	/* the move's damage is found after the debug info's, at the end */
	ck_assert_ptr_nonnull(strstr(ps_jit_table_errmsg(table),
	                             "JIT_CODE_DEBUG_INFO entries pass the end of the record"));
	ps_jit_table_free(table);

	put_header(&d);
	at = put_record_header(&d, 1, 16 + 48);
	put32(&d, 1);
	put32(&d, 1);
	put64(&d, 0xa000);
	put64(&d, 0x1000);
	put64(&d, 0xa000);
	put64(&d, 0x10);
	put64(&d, 8);
	table = read_dump(&d, NULL);
	snprintf(expected, sizeof(expected),
	         "%s: offset %#zx: JIT_CODE_MOVE of code_index 8, never loaded",
	         in_dir("jit-1.dump"), at);
	ck_assert_pstr_eq(ps_jit_table_errmsg(table), expected);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_dump_caps)
{
	struct ps_jit_limits unwind_cap = { .max_unwind_bytes = 60 };
	struct ps_jit_limits entry_cap = { .max_entries = 2 };
	static const uint8_t other[48] = { 1 };
	struct ps_jit_table *table;
	struct dump d = { 0 };

	/* the first unwinding info fits, a different second one does not;
	 * identical ones are stored once */
	put_header(&d);
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes, 4);
	put_load(&d, 0x1000, 4, 1, "py::a:x");
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes, 4);
	put_load(&d, 0x2000, 4, 2, "py::b:x");
	put_unwind(&d, other, sizeof(other), eh_frame_hdr_bytes, 4);
	put_load(&d, 0x3000, 4, 3, "py::c:x");
	table = read_dump(&d, &unwind_cap);
	ck_assert_uint_eq(ps_jit_table_stats(table)->unwind_dropped, 1);
	ck_assert_uint_eq(ps_jit_table_count(table), 3);
	{
		struct ps_jit_symbol a, b, c;

		ck_assert(ps_jit_table_lookup(table, 0x1000, &a));
		ck_assert(ps_jit_table_lookup(table, 0x2000, &b));
		ck_assert(ps_jit_table_lookup(table, 0x3000, &c));
		ck_assert_ptr_nonnull(a.eh_frame);
		ck_assert_ptr_eq(a.eh_frame, b.eh_frame);
		ck_assert_ptr_null(c.eh_frame);
	}
	ps_jit_table_free(table);

	put_header(&d);
	put_load(&d, 0x1000, 4, 1, "py::a:x");
	put_load(&d, 0x2000, 4, 2, "py::b:x");
	put_load(&d, 0x3000, 4, 3, "py::c:x");
	table = read_dump(&d, &entry_cap);
	ck_assert_uint_eq(ps_jit_table_count(table), 2);
	ck_assert_uint_eq(ps_jit_table_stats(table)->over_limit, 1);
	ps_jit_table_free(table);
}
END_TEST

START_TEST(test_dump_garbage)
{
	/* random bytes after a valid header: never a crash, never an
	 * entry past a record that could not be trusted */
	unsigned int seed = 12345;

	for (int round = 0; round < 200; round++) {
		struct dump d = { .big = round % 2 };
		struct ps_jit_table *table;
		size_t len = (size_t)(rand_r(&seed) % 600);

		put_header(&d);
		if (round % 3 == 0)
			put_load(&d, 0x1000, 4, 1, "py::a:x");
		for (size_t i = 0; i < len; i++) {
			uint8_t byte = (uint8_t)rand_r(&seed);

			/* in half the rounds, words of known ids and small
			 * sizes, so that every parser runs */
			if (round % 4 < 2 && i % 8 == 0)
				byte %= 5;
			else if (round % 4 < 2 && i % 8 == 4)
				byte = (uint8_t)(16 + byte % 80);
			else if (round % 4 < 2)
				byte = i % 8 < 4 || byte > 0x40 ? 0 : byte;
			put(&d, &byte, 1);
		}
		table = read_dump(&d, NULL);
		if (round % 3 == 0)
			assert_symbol(table, 0x1000, "py::a:x", 0x1000, 4);
		ps_jit_table_free(table);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* one process's sources                                               */
/* ------------------------------------------------------------------ */

/* a pid no process here has (pid_max is at most 4 Mi) */
#define FAKE_PID 2147483000

static const char *pid_file(const char *dir, const char *pattern)
{
	static char path[1024];
	char name[64];

	snprintf(name, sizeof(name), pattern, FAKE_PID);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void write_path(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static void make_dump_file(const char *path, uint64_t addr, const char *name)
{
	struct dump d = { 0 };

	put_header(&d);
	put_unwind(&d, eh_frame_bytes, sizeof(eh_frame_bytes), eh_frame_hdr_bytes,
	           sizeof(eh_frame_hdr_bytes));
	put_load(&d, addr, 0x10, 1, name);
	write_path(path, d.buf, d.len);
	free(d.buf);
}

START_TEST(test_names_search_order)
{
	char dir_a[600], dir_b[600], data_path[700];
	struct ps_jit_names_opts opts = { .sz = sizeof(opts) };
	struct ps_jit_names *names;
	struct ps_jit_symbol sym;
	const char *text_b = "1000 10 py::from_b:x\n", *text_a = "1000 10 py::from_a:x\n";

	snprintf(dir_a, sizeof(dir_a), "%s/a", test_dir);
	snprintf(dir_b, sizeof(dir_b), "%s/b", test_dir);
	snprintf(data_path, sizeof(data_path), "%s/perf.data", dir_b);
	ck_assert_int_eq(mkdir(dir_a, 0700), 0);
	ck_assert_int_eq(mkdir(dir_b, 0700), 0);
	opts.perf_map_dir = dir_a;
	opts.perf_data_path = data_path;

	/* each file from the first directory holding it */
	write_path(pid_file(dir_b, "perf-%d.map"), text_b, strlen(text_b));
	make_dump_file(pid_file(dir_a, "jit-%d.dump"), 0x5000, "py::dump_a:x");
	make_dump_file(pid_file(dir_b, "jit-%d.dump"), 0x6000, "py::dump_b:x");
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), 2);
	ck_assert_int_eq(ps_jit_names_load(names), 2);
	ck_assert_ptr_null(ps_jit_names_where(names));
	ck_assert_ptr_null(ps_jit_names_errmsg(names));
	ck_assert_str_eq(ps_jit_table_path(ps_jit_names_table(names, PS_JIT_SOURCE_MAP)),
	                 pid_file(dir_b, "perf-%d.map"));
	ck_assert_str_eq(ps_jit_table_path(ps_jit_names_table(names, PS_JIT_SOURCE_DUMP)),
	                 pid_file(dir_a, "jit-%d.dump"));
	ck_assert(ps_jit_names_lookup(names, 0x1000, &sym));
	ck_assert_str_eq(sym.name, "py::from_b:x");
	ck_assert(ps_jit_names_lookup(names, 0x5000, &sym));
	ck_assert_str_eq(sym.name, "py::dump_a:x");
	ck_assert(!ps_jit_names_lookup(names, 0x6000, &sym));
	ps_jit_names_free(names);

	/* the --perf-map-dir copy first; the lookup loads on its own */
	write_path(pid_file(dir_a, "perf-%d.map"), text_a, strlen(text_a));
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert(ps_jit_names_lookup(names, 0x100f, &sym));
	ck_assert_str_eq(sym.name, "py::from_a:x");
	ck_assert_int_eq(sym.source, PS_JIT_SOURCE_MAP);
	ck_assert_int_eq(ps_jit_names_load(names), 2);
	ps_jit_names_free(names);
}
END_TEST

/* Through a resolver (an archive's contents): only the paths it knows
 * exist, tables keep the path as looked up, and the observer is told. */
struct names_resolver {
	char logical[700], local[700];
	int used;
};

static const char *names_resolve(void *ctx, const char *path)
{
	const struct names_resolver *r = ctx;

	return strcmp(path, r->logical) == 0 ? r->local : NULL;
}

static void names_used(void *ctx, const char *path, const char *file, enum ps_file_kind kind)
{
	struct names_resolver *r = ctx;

	ck_assert_str_eq(path, r->logical);
	ck_assert_str_eq(file, r->local);
	ck_assert_int_eq(kind, PS_FILE_PERF_MAP);
	r->used++;
}

START_TEST(test_names_resolver)
{
	struct names_resolver r = { 0 };
	struct ps_file_hooks files = {
		.resolve = names_resolve, .resolve_ctx = &r, .used = names_used, .used_ctx = &r
	};
	struct ps_jit_names_opts opts = { .sz = sizeof(opts), .files = &files };
	struct ps_jit_names *names;
	struct ps_jit_symbol sym;
	const char *text = "1000 10 py::archived:x\n";
	char data_path[700];

	snprintf(r.logical, sizeof(r.logical), "/recorded/dir/perf-%d.map", FAKE_PID);
	snprintf(r.local, sizeof(r.local), "%s/copy", test_dir);
	write_path(r.local, text, strlen(text));
	/* on disk but unknown to the resolver: not there */
	make_dump_file(pid_file(test_dir, "jit-%d.dump"), 0x5000, "py::on_disk:x");
	snprintf(data_path, sizeof(data_path), "%s/perf.data", test_dir);
	opts.perf_map_dir = "/recorded/dir";
	opts.perf_data_path = data_path;
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), 1);
	ck_assert_int_eq(r.used, 1);
	ck_assert_str_eq(ps_jit_table_path(ps_jit_names_table(names, PS_JIT_SOURCE_MAP)),
	                 r.logical);
	ck_assert_ptr_null(ps_jit_names_table(names, PS_JIT_SOURCE_DUMP));
	ck_assert(ps_jit_names_lookup(names, 0x1004, &sym));
	ck_assert_str_eq(sym.name, "py::archived:x");
	ps_jit_names_free(names);
	unlink(pid_file(test_dir, "jit-%d.dump"));
	unlink(r.local);
}
END_TEST

/* Files of other names in the --perf-map-dir folders (containers name
 * theirs by their namespace pid): the one whose entries cover the pid's
 * looked-up addresses is taken, whatever its name or folder; a file of
 * the pid's name that covers none of them is refused. */
struct said {
	char text[4][1024];
	int nr;
};

static void note_said(void *ctx, enum ps_log_level level, const char *msg)
{
	struct said *said = ctx;

	(void)level;
	if (said->nr < 4)
		snprintf(said->text[said->nr], sizeof(said->text[0]), "%s", msg);
	said->nr++;
}

START_TEST(test_names_match_by_content)
{
	char dir_a[600], dir_b[600], capture[700], path[800];
	const char *dirs[2] = { dir_a, dir_b };
	const char *map_a = "1000 100 py::in_a:x\n", *map_b = "7000 100 py::in_b:x\n";
	const char *stale = "40000 100 py::stale:x\n";
	struct said said = { 0 };
	struct ps_jit_names_opts opts = { .sz = sizeof(opts),
		                          .perf_map_dirs = dirs,
		                          .nr_perf_map_dirs = 2,
		                          .log = note_said,
		                          .log_ctx = &said };
	struct ps_jit_names *names;
	struct ps_jit_symbol sym;
	uint64_t addr;

	snprintf(dir_a, sizeof(dir_a), "%s/ca", test_dir);
	snprintf(dir_b, sizeof(dir_b), "%s/cb", test_dir);
	snprintf(capture, sizeof(capture), "%s/perf.data", test_dir);
	ck_assert_int_eq(mkdir(dir_a, 0700), 0);
	ck_assert_int_eq(mkdir(dir_b, 0700), 0);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir_a);
	write_path(path, map_a, strlen(map_a));
	snprintf(path, sizeof(path), "%s/perf-1.map", dir_b);
	write_path(path, map_b, strlen(map_b));
	/* beside the capture, by the pid's name: another process's */
	write_path(pid_file(test_dir, "perf-%d.map"), stale, strlen(stale));
	opts.perf_data_path = capture;

	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), 1); /* the file by name */
	for (addr = 0; addr < PS_JIT_MATCH_EVIDENCE; addr++) {
		ck_assert(ps_jit_names_lookup(names, 0x7000 + addr, &sym));
		ck_assert_str_eq(sym.name, "py::in_b:x");
	}
	ck_assert(!ps_jit_names_lookup(names, 0x1000, &sym));
	ck_assert(!ps_jit_names_lookup(names, 0x40000, &sym)); /* refused */
	snprintf(path, sizeof(path), "%s/perf-1.map", dir_b);
	ck_assert_str_eq(ps_jit_table_path(ps_jit_names_table(names, PS_JIT_SOURCE_MAP)), path);
	ck_assert_int_eq(said.nr, 2);
	ck_assert_msg(strstr(said.text[0], ": taken for pid ") && strstr(said.text[0], path), "%s",
	              said.text[0]);
	ck_assert_msg(strstr(said.text[1], "refused for pid") &&
	                      strstr(said.text[1], pid_file(test_dir, "perf-%d.map")),
	              "%s", said.text[1]);
	/* native mode's file is still the one by name */
	ck_assert_str_eq(ps_jit_table_path(ps_jit_names_by_name(names, PS_JIT_SOURCE_MAP)),
	                 pid_file(test_dir, "perf-%d.map"));
	ps_jit_names_free(names);

	/* a few addresses (the end of the capture decides), the other map */
	said.nr = 0;
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert(ps_jit_names_lookup(names, 0x1010, &sym));
	ck_assert_str_eq(sym.name, "py::in_a:x");
	ps_jit_names_decide(names);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir_a);
	ck_assert_str_eq(ps_jit_table_path(ps_jit_names_table(names, PS_JIT_SOURCE_MAP)), path);
	ck_assert(!ps_jit_names_lookup(names, 0x7000, &sym));
	ck_assert_int_eq(said.nr, 2);
	ps_jit_names_free(names);

	unlink(pid_file(test_dir, "perf-%d.map"));
	snprintf(path, sizeof(path), "%s/perf-1.map", dir_a);
	unlink(path);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir_b);
	unlink(path);
	rmdir(dir_a);
	rmdir(dir_b);
}
END_TEST

START_TEST(test_names_not_found)
{
	struct ps_jit_names_opts opts = { .sz = sizeof(opts) };
	struct ps_jit_names *names;
	char expected[1400], map_dir[600];

	snprintf(map_dir, sizeof(map_dir), "%s/maps//", test_dir);
	opts.perf_map_dir = map_dir;
	opts.perf_data_path = in_dir("perf.data");
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_ptr_null(ps_jit_names_where(names));
	ck_assert(!ps_jit_names_lookup(names, 0x1000, NULL));
	ck_assert_int_eq(ps_jit_names_load(names), -ENOENT);
	snprintf(expected, sizeof(expected), "no perf-%d.map or jit-%d.dump in %s/maps, %s, /tmp",
	         FAKE_PID, FAKE_PID, test_dir, test_dir);
	ck_assert_pstr_eq(ps_jit_names_where(names), expected);
	ck_assert_ptr_null(ps_jit_names_errmsg(names));
	ck_assert_ptr_null(ps_jit_names_table(names, PS_JIT_SOURCE_MAP));
	ps_jit_names_free(names);

	/* directories are listed once; "-" (a pipe) and a bare file name */
	opts.perf_map_dir = "/tmp/";
	opts.perf_data_path = "-";
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), -ENOENT);
	snprintf(expected, sizeof(expected), "no perf-%d.map or jit-%d.dump in /tmp", FAKE_PID,
	         FAKE_PID);
	ck_assert_pstr_eq(ps_jit_names_where(names), expected);
	ps_jit_names_free(names);

	opts.perf_map_dir = NULL;
	opts.perf_data_path = "perf.data";
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), -ENOENT);
	snprintf(expected, sizeof(expected), "no perf-%d.map or jit-%d.dump in ., /tmp", FAKE_PID,
	         FAKE_PID);
	ck_assert_pstr_eq(ps_jit_names_where(names), expected);
	ps_jit_names_free(names);

	/* no options at all: /tmp only */
	ck_assert_int_eq(ps_jit_names_new(NULL, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), -ENOENT);
	snprintf(expected, sizeof(expected), "no perf-%d.map or jit-%d.dump in /tmp", FAKE_PID,
	         FAKE_PID);
	ck_assert_pstr_eq(ps_jit_names_where(names), expected);
	ps_jit_names_free(names);
	ck_assert_int_eq(ps_jit_names_new(NULL, -1, &names), -EINVAL);
	ck_assert_ptr_null(names);
}
END_TEST

START_TEST(test_names_merge_and_errors)
{
	struct ps_jit_names_opts opts = { .sz = sizeof(opts), .perf_map_dir = test_dir };
	struct ps_jit_names *names;
	struct ps_jit_symbol sym;
	const char *text = "1000 100 py::map_outer:x\n8000 10 py::map_only:x\n";
	char expected[1200];

	write_path(pid_file(test_dir, "perf-%d.map"), text, strlen(text));
	make_dump_file(pid_file(test_dir, "jit-%d.dump"), 0x1040, "py::dump:x");
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	/* the jitdump wins where both have a range */
	ck_assert(ps_jit_names_lookup(names, 0x1040, &sym));
	ck_assert_str_eq(sym.name, "py::dump:x");
	ck_assert_int_eq(sym.source, PS_JIT_SOURCE_DUMP);
	ck_assert_ptr_nonnull(sym.eh_frame);
	ck_assert(ps_jit_names_lookup(names, 0x1050, &sym));
	ck_assert_str_eq(sym.name, "py::map_outer:x");
	ck_assert_int_eq(sym.source, PS_JIT_SOURCE_MAP);
	ck_assert(ps_jit_names_lookup(names, 0x8000, &sym));
	ck_assert_str_eq(sym.name, "py::map_only:x");
	ck_assert(!ps_jit_names_lookup(names, 0x8010, &sym));
	ps_jit_names_free(names);

	/* a jitdump that exists but is not one: the map is still used */
	write_path(pid_file(test_dir, "jit-%d.dump"), "not a jitdump, but long enough to be one.",
	           40);
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), 1);
	snprintf(expected, sizeof(expected), "%s: offset 0x0: not a jitdump (magic 0x20746f6e)",
	         pid_file(test_dir, "jit-%d.dump"));
	ck_assert_pstr_eq(ps_jit_names_errmsg(names), expected);
	ck_assert_ptr_null(ps_jit_names_where(names));
	ck_assert(ps_jit_names_lookup(names, 0x8000, &sym));
	ps_jit_names_free(names);

	/* and alone it is the load's error */
	unlink(pid_file(test_dir, "perf-%d.map"));
	ck_assert_int_eq(ps_jit_names_new(&opts, FAKE_PID, &names), 0);
	ck_assert_int_eq(ps_jit_names_load(names), -EINVAL);
	ck_assert_pstr_eq(ps_jit_names_errmsg(names), expected);
	ck_assert_ptr_null(ps_jit_names_where(names));
	ck_assert(!ps_jit_names_lookup(names, 0x8000, &sym));
	ps_jit_names_free(names);
}
END_TEST

/* ------------------------------------------------------------------ */
/* files a real CPython wrote                                          */
/* ------------------------------------------------------------------ */

#define KNOWN_FUNCTION "pystitch_known_function"
/* exits 3 when the interpreter has no perf trampoline */
static const char script[] = "import sys\n"
                             "def " KNOWN_FUNCTION "():\n"
                             "    return sum(range(10))\n" KNOWN_FUNCTION "()\n"
                             "sys.exit(0 if sys.is_stack_trampoline_active() else 3)\n";

static void skip_loudly(const char *why)
{
	const char *ci = getenv("CI");

	fprintf(stderr, "\n*** test_real_cpython SKIPPED: %s ***\n\n", why);
	if (ci && strcmp(ci, "true") == 0)
		ck_abort_msg("CI=true and %s", why);
}

/* pyenv's root: `pyenv root`, else $PYENV_ROOT, else ~/.pyenv */
static void pyenv_root(char *out, size_t size)
{
	FILE *p = popen("pyenv root 2>/dev/null", "r");
	const char *env;

	out[0] = '\0';
	if (p) {
		if (fgets(out, (int)size, p))
			out[strcspn(out, "\n")] = '\0';
		pclose(p);
	}
	if (out[0])
		return;
	env = getenv("PYENV_ROOT");
	if (env && env[0]) {
		snprintf(out, size, "%s", env);
		return;
	}
	env = getenv("HOME");
	snprintf(out, size, "%s/.pyenv", env ? env : "");
}

/* Run python with -X mode; returns its pid, or -1 (skip) when it has no
 * trampoline. */
static pid_t run_python(const char *python, const char *mode)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		execl(python, python, "-X", mode, "-c", script, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3)
		return -1;
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	return pid;
}

static void check_python(const char *python, const char *mode, enum ps_jit_source source)
{
	char map_path[64], dump_path[64], name[128];
	struct ps_jit_names *names;
	struct ps_jit_symbol sym, found = { 0 };
	const struct ps_jit_table *table;
	pid_t pid = run_python(python, mode);
	int loaded;

	if (pid < 0) {
		char why[700];

		snprintf(why, sizeof(why), "%s -X %s has no perf trampoline", python, mode);
		skip_loudly(why);
		return;
	}
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)pid);
	snprintf(dump_path, sizeof(dump_path), "/tmp/jit-%d.dump", (int)pid);
	ck_assert_int_eq(ps_jit_names_new(NULL, pid, &names), 0);
	loaded = ps_jit_names_load(names);
	/* the tables are in memory now: clean up before any assertion */
	unlink(map_path);
	unlink(dump_path);
	ck_assert_msg(loaded >= 1, "%s -X %s: %s", python, mode,
	              ps_jit_names_where(names) ? ps_jit_names_where(names)
	                                        : ps_jit_names_errmsg(names));
	table = ps_jit_names_table(names, source);
	ck_assert_msg(table, "%s -X %s wrote no %s", python, mode,
	              source == PS_JIT_SOURCE_MAP ? map_path : dump_path);
	ck_assert_ptr_null(ps_jit_table_errmsg(table));
	ck_assert_uint_eq(ps_jit_table_stats(table)->damaged, 0);
	snprintf(name, sizeof(name), "py::%s:<string>", KNOWN_FUNCTION);
	for (size_t i = 0; ps_jit_table_at(table, i, &sym); i++) {
		ck_assert_msg(strncmp(sym.name, "py::", 4) == 0, "%s", sym.name);
		if (strcmp(sym.name, name) == 0)
			found = sym;
	}
	ck_assert_msg(found.name, "%s -X %s: no %s among %zu entries", python, mode, name,
	              ps_jit_table_count(table));
	ck_assert_uint_gt(found.size, 0);
	ck_assert(ps_jit_names_lookup(names, found.start + found.size - 1, &sym));
	ck_assert_str_eq(sym.name, name);
	ck_assert_int_eq(sym.source, source);
	if (source == PS_JIT_SOURCE_DUMP) {
		uint32_t cie_id;

		/* a CIE first: length, then id 0 */
		ck_assert_uint_ge(found.eh_frame_size, 8);
		memcpy(&cie_id, found.eh_frame + 4, 4);
		ck_assert_uint_eq(cie_id, 0);
		ck_assert_uint_gt(found.eh_frame_hdr_size, 0);
	}
	fprintf(stderr, "test_real_cpython: %s -X %s: %zu entries, %s at %#llx\n", python, mode,
	        ps_jit_table_count(table), name, (unsigned long long)found.start);
	ps_jit_names_free(names);
}

/* The highest patch release among root/versions/X.Y.N/bin/python3. */
static const char *newest(const glob_t *found, const char *root, const char *version)
{
	size_t prefix = strlen(root) + strlen("/versions/") + strlen(version) + 1;
	const char *best = found->gl_pathv[0];
	long best_patch = -1;

	for (size_t i = 0; i < found->gl_pathc; i++) {
		long patch = strtol(found->gl_pathv[i] + prefix, NULL, 10);

		if (patch > best_patch) {
			best_patch = patch;
			best = found->gl_pathv[i];
		}
	}
	return best;
}

START_TEST(test_real_cpython)
{
	char root[512], pattern[600];
	static const char *const versions[] = { "3.12", "3.13" };
	const char *python;
	int ran = 0;

	pyenv_root(root, sizeof(root));
	for (size_t v = 0; v < 2; v++) {
		glob_t found;

		snprintf(pattern, sizeof(pattern), "%s/versions/%s.*/bin/python3", root,
		         versions[v]);
		if (glob(pattern, 0, NULL, &found) != 0)
			continue;
		python = newest(&found, root, versions[v]);
		check_python(python, "perf", PS_JIT_SOURCE_MAP);
		if (v == 1)
			check_python(python, "perf_jit", PS_JIT_SOURCE_DUMP);
		ran++;
		globfree(&found);
	}
	if (!ran) {
		char why[700];

		snprintf(why, sizeof(why), "no CPython 3.12 or 3.13 under %s/versions", root);
		skip_loudly(why);
	}
}
END_TEST

static Suite *sources_suite(void)
{
	Suite *suite = suite_create("python frame-name sources");
	TCase *maps = tcase_create("perf maps");
	TCase *dumps = tcase_create("jitdumps");
	TCase *names = tcase_create("per process");
	TCase *real = tcase_create("real CPython");

	tcase_add_unchecked_fixture(maps, case_setup, case_teardown);
	tcase_add_checked_fixture(maps, setup, teardown);
	tcase_add_test(maps, test_map_valid);
	tcase_add_test(maps, test_table_index_lookups);
	tcase_add_test(maps, test_map_damaged_lines);
	tcase_add_test(maps, test_map_damage_messages);
	tcase_add_test(maps, test_map_line_length_limit);
	tcase_add_test(maps, test_map_empty);
	tcase_add_test(maps, test_map_huge);
	tcase_add_test(maps, test_map_caps);
	tcase_add_test(maps, test_map_overlaps);
	tcase_add_test(maps, test_map_open_errors);
	tcase_set_timeout(maps, 60);
	suite_add_tcase(suite, maps);

	tcase_add_unchecked_fixture(dumps, case_setup, case_teardown);
	tcase_add_checked_fixture(dumps, setup, teardown);
	tcase_add_loop_test(dumps, test_dump_valid, 0, 2);
	tcase_add_test(dumps, test_dump_bad_header);
	tcase_add_test(dumps, test_dump_bad_total_size);
	tcase_add_loop_test(dumps, test_dump_short_records, 0, 2);
	tcase_add_loop_test(dumps, test_dump_spliced, 0, 2);
	tcase_add_test(dumps, test_dump_truncated);
	tcase_add_loop_test(dumps, test_dump_damaged_loads, 0, 2);
	tcase_add_loop_test(dumps, test_dump_damaged_unwinding, 0, 2);
	tcase_add_loop_test(dumps, test_dump_move_and_debug_info, 0, 2);
	tcase_add_test(dumps, test_dump_caps);
	tcase_add_test(dumps, test_dump_garbage);
	suite_add_tcase(suite, dumps);

	tcase_add_unchecked_fixture(names, case_setup, case_teardown);
	tcase_add_checked_fixture(names, setup, teardown);
	tcase_add_test(names, test_names_search_order);
	tcase_add_test(names, test_names_not_found);
	tcase_add_test(names, test_names_match_by_content);
	tcase_add_test(names, test_names_merge_and_errors);
	tcase_add_test(names, test_names_resolver);
	suite_add_tcase(suite, names);

	tcase_add_test(real, test_real_cpython);
	tcase_set_timeout(real, 120);
	suite_add_tcase(suite, real);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(sources_suite());
	int failed;

	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
