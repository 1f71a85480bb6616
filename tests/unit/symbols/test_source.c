/* perf script -F srccode's lookups: the source file and line addr2line
 * gives an address (ps_dso_source()), and a line of a source file as
 * perf's find_sourceline() finds it (ps_symbols_source_text()). */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ps_symbols *open_symbols(void)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .buildid_dir = "/nonexistent",
		                        .srccode = true };
	struct ps_symbols *symbols;

	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	return symbols;
}

static void has_line(struct ps_symbols *symbols, const char *path, unsigned line, const char *want)
{
	const char *text;
	size_t len;

	if (!want) {
		ck_assert_msg(!ps_symbols_source_text(symbols, path, line, &text, &len),
		              "line %u: found", line);
		return;
	}
	ck_assert_msg(ps_symbols_source_text(symbols, path, line, &text, &len), "line %u: none",
	              line);
	ck_assert_msg(len == strlen(want) && memcmp(text, want, len) == 0,
	              "line %u: \"%.*s\", not \"%s\"", line, (int)len, text, want);
}

START_TEST(test_lines)
{
	struct ps_symbols *symbols = open_symbols();
	char dir[512], path[600], big[600];
	FILE *f;

	make_dir(dir, sizeof(dir), "sources");
	fmt(path, sizeof(path), "%s/a.c", dir);
	write_file(path, "first\n\nthird\nlast without newline");
	has_line(symbols, path, 1, "first");
	has_line(symbols, path, 2, "");
	has_line(symbols, path, 3, "third");
	/* perf prints the rest of the file after the last newline */
	has_line(symbols, path, 4, "last without newline");
	has_line(symbols, path, 0, NULL);
	has_line(symbols, path, 5, NULL);
	fmt(path, sizeof(path), "%s/empty.c", dir);
	write_file(path, "");
	has_line(symbols, path, 1, NULL);
	fmt(path, sizeof(path), "%s/missing.c", dir);
	has_line(symbols, path, 1, NULL);
	/* past the index's marks; a NUL ends a line as it ends printf's */
	fmt(big, sizeof(big), "%s/big.c", dir);
	f = fopen(big, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 1; i <= 1000; i++) {
		fprintf(f, "line %d", i);
		if (i == 700) {
			fputc(0, f);
			fputs(" after", f);
		}
		fputc('\n', f);
	}
	fputs("line 1001", f);
	fputc(0, f);
	fputs("hidden", f);
	fclose(f);
	has_line(symbols, big, 1, "line 1");
	has_line(symbols, big, 257, "line 257");
	has_line(symbols, big, 700, "line 700");
	has_line(symbols, big, 1000, "line 1000");
	has_line(symbols, big, 1001, "line 1001");
	has_line(symbols, big, 1002, NULL);
	/* more files than are kept: the first ones go, and come back */
	for (int i = 0; i < 70; i++) {
		fmt(path, sizeof(path), "%s/f%d.c", dir, i);
		write_file(path, "x\ny\n");
		has_line(symbols, path, 2, "y");
	}
	has_line(symbols, big, 999, "line 999");
	ps_symbols_free(symbols);
}
END_TEST

START_TEST(test_dso_source)
{
	struct ps_symbols *symbols = open_symbols();
	struct ps_dso *dso = ps_symbols_dso(symbols, fixture.so, NULL, 0);
	uint64_t size, start = fixture_symbol("inl_outer", &size);
	char path[4096];
	unsigned line = 0;

	ck_assert_msg(fixture.ok, "fixture: %s", fixture.why);
	ck_assert(start != UINT64_MAX);
	ck_assert_msg(ps_dso_source(dso, start, path, sizeof(path), &line), "no source");
	ck_assert_msg(strlen(path) > 10 && strcmp(path + strlen(path) - 10, "/fixture.c") == 0,
	              "path %s", path);
	ck_assert_uint_gt(line, 0);
	/* no addr2line on the kernel or "[...]" names */
	ck_assert(!ps_dso_source(ps_symbols_dso(symbols, "[vdso]", NULL, 0), 0x100, path,
	                         sizeof(path), &line));
	ck_assert(!ps_dso_source(ps_symbols_dso(symbols, "[kernel.kallsyms]", NULL, 0),
	                         0xffffffff81000000ull, path, sizeof(path), &line));
	ps_symbols_free(symbols);
}
END_TEST

Suite *suite_source(void)
{
	Suite *s = suite_create("source");
	TCase *tc = tcase_create("source");

	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_dso_source);
	suite_add_tcase(s, tc);
	return s;
}
