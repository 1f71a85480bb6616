/* Unit tests of CPython's line tables (src/python/linetable.c): the tables
 * of real code objects written by tests/unit/python/linetables.py with each
 * interpreter it was run with (tests/unit/python/linetables/3.X.txt, and
 * the files named in PS_LINETABLES, space-separated), every code unit's
 * line against the interpreter's own answer; then damaged tables. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/python_priv.h"

#define MAX_LINE (1 << 20)

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One line of a file: check every code unit; returns how many. */
static size_t check_code(const char *file, size_t number, char *text)
{
	char version[16], *hex, *lines, *save = NULL;
	int format, first_line;
	unsigned long size;
	uint8_t *table;
	size_t table_size, unit = 0;

	ck_assert_msg(sscanf(text, "%15s %d %d %lu", version, &format, &first_line, &size) == 4,
	              "%s:%zu: bad line", file, number);
	hex = strtok_r(text, " ", &save);
	for (int i = 0; i < 4; i++)
		hex = strtok_r(NULL, " ", &save);
	lines = strtok_r(NULL, " \n", &save);
	ck_assert_ptr_nonnull(hex);
	ck_assert_ptr_nonnull(lines);
	table_size = strcmp(hex, "-") == 0 ? 0 : strlen(hex) / 2;
	table = malloc(table_size + 1);
	ck_assert_ptr_nonnull(table);
	for (size_t i = 0; i < table_size; i++) {
		int high = hex_value(hex[2 * i]), low = hex_value(hex[2 * i + 1]);

		ck_assert(high >= 0 && low >= 0);
		table[i] = (uint8_t)(high << 4 | low);
	}
	for (char *run = strtok_r(lines, ",", &save); run; run = strtok_r(NULL, ",", &save)) {
		long expected, count;

		ck_assert_msg(sscanf(run, "%ld*%ld", &expected, &count) == 2, "%s:%zu: bad run",
		              file, number);
		for (long k = 0; k < count; k++, unit++) {
			int32_t line = 0;
			int rc = ps_py_line_at((enum ps_py_line_format)format, table, table_size,
			                       first_line, unit * 2, &line);

			ck_assert_msg(rc >= 0, "%s:%zu: unit %zu: %d", file, number, unit, rc);
			ck_assert_msg(
			        (rc ? line : 0) == expected,
			        "%s:%zu (CPython %s): code unit %zu: line %d, CPython says %ld",
			        file, number, version, unit, rc ? line : 0, expected);
		}
	}
	ck_assert_uint_eq(unit * 2, size);
	free(table);
	return unit;
}

static size_t check_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = malloc(MAX_LINE);
	size_t number = 0, units = 0;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_ptr_nonnull(text);
	while (fgets(text, MAX_LINE, f)) {
		number++;
		ck_assert_msg(strchr(text, '\n'), "%s:%zu: line too long", path, number);
		units += check_code(path, number, text);
	}
	fclose(f);
	free(text);
	ck_assert_msg(number > 0, "%s: empty", path);
	return units;
}

START_TEST(test_real_tables)
{
	DIR *dir = opendir(PS_TEST_LINETABLES);
	struct dirent *entry;
	size_t files = 0, units = 0;
	char path[4096];

	ck_assert_ptr_nonnull(dir);
	while ((entry = readdir(dir))) {
		size_t len = strlen(entry->d_name);

		if (len < 5 || strcmp(entry->d_name + len - 4, ".txt") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", PS_TEST_LINETABLES, entry->d_name);
		units += check_file(path);
		files++;
	}
	closedir(dir);
	/* 3.8 to 3.14 */
	ck_assert_uint_ge(files, 7);
	ck_assert_uint_gt(units, 10000);
}
END_TEST

/* The tables of interpreters found at test time (tests/e2e/python_linetables.sh). */
START_TEST(test_more_tables)
{
	const char *more = getenv("PS_LINETABLES");
	char *list, *save = NULL;

	if (!more || !*more)
		return;
	list = strdup(more);
	ck_assert_ptr_nonnull(list);
	for (char *path = strtok_r(list, " ", &save); path; path = strtok_r(NULL, " ", &save))
		ck_assert_uint_gt(check_file(path), 0);
	free(list);
}
END_TEST

START_TEST(test_formats)
{
	/* co_lnotab: +2 bytes +1 line, +4 bytes -2 lines (signed) */
	static const uint8_t lnotab[] = { 2, 1, 4, 0xfe };
	/* 3.10: 4 bytes line+1, 2 bytes no line, 2 bytes line+2 */
	static const uint8_t linetable_310[] = { 4, 1, 2, 0x80, 2, 2 };
	/* 3.11+: short form (1 unit, line 0 delta), one-line form +2 (2 units),
	 * no location (1 unit), no columns -3 (1 unit), long form +5 */
	static const uint8_t location[] = {
		0x80 | 0 << 3 | 0,  0x05, /* short, 1 unit */
		0x80 | 12 << 3 | 1, 4,    9, /* one line +2, 2 units */
		0x80 | 15 << 3 | 0, /* none, 1 unit */
		0x80 | 13 << 3 | 0, 7, /* no columns, -3 (svarint 7) */
		0x80 | 14 << 3 | 0, 10,   0, 1, 1, /* long, +5 */
	};
	int32_t line;

	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_LNOTAB, lnotab, 4, 10, 0, &line), 1);
	ck_assert_int_eq(line, 10);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_LNOTAB, lnotab, 4, 10, 2, &line), 1);
	ck_assert_int_eq(line, 11);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_LNOTAB, lnotab, 4, 10, 6, &line), 1);
	ck_assert_int_eq(line, 9);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_LNOTAB, lnotab, 4, 10, 100, &line), 1);
	ck_assert_int_eq(line, 9);

	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_310, linetable_310, 6, 10, 2, &line), 1);
	ck_assert_int_eq(line, 11);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_310, linetable_310, 6, 10, 4, &line), 0);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_310, linetable_310, 6, 10, 6, &line), 1);
	ck_assert_int_eq(line, 13);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_310, linetable_310, 6, 10, 8, &line), 0);

	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 0, &line),
	                 1);
	ck_assert_int_eq(line, 10);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 2, &line),
	                 1);
	ck_assert_int_eq(line, 12);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 4, &line),
	                 1);
	ck_assert_int_eq(line, 12);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 6, &line),
	                 0);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 8, &line),
	                 1);
	ck_assert_int_eq(line, 9);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 10, &line),
	                 1);
	ck_assert_int_eq(line, 14);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, sizeof(location), 10, 12, &line),
	                 0);
	ck_assert_int_eq(ps_py_line_at((enum ps_py_line_format)9, location, 1, 10, 0, &line),
	                 -EINVAL);
}
END_TEST

/* Tables cut anywhere, or made of any bytes, are refused or read within
 * their bounds (ASan checks the latter). */
START_TEST(test_damaged)
{
	static const uint8_t location[] = { 0x80 | 14 << 3 | 0, 10, 0, 1, 1, 0x80, 1 };
	static const uint8_t overflow[] = { 0x80 | 13 << 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		                            0xff,           0xff, 0xff, 0xff, 0xff, 0x3f };
	static const uint8_t continuation[] = { 0x05 };
	uint8_t noise[64];
	int32_t line;

	for (size_t cut = 1; cut < 5; cut++)
		ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, location, cut, 1, 100, &line),
		                 -EINVAL);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, overflow, sizeof(overflow), 1, 0, &line),
	                 -EINVAL);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_311, continuation, 1, 1, 0, &line), -EINVAL);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_LNOTAB, location, 3, 1, 1000, &line), -EINVAL);
	ck_assert_int_eq(ps_py_line_at(PS_PY_LINES_310, location, 3, 1, 1000, &line), -EINVAL);
	/* a line that leaves an int */
	{
		static const uint8_t up[] = { 2, 0x7f, 2, 0x7f };

		ck_assert_int_eq(
		        ps_py_line_at(PS_PY_LINES_LNOTAB, up, 4, INT32_MAX - 100, 4, &line),
		        -EINVAL);
	}
	srand(15);
	for (int round = 0; round < 20000; round++) {
		size_t size = (size_t)rand() % sizeof(noise);

		for (size_t i = 0; i < size; i++)
			noise[i] = (uint8_t)rand();
		for (int format = PS_PY_LINES_LNOTAB; format <= PS_PY_LINES_311; format++)
			ps_py_line_at((enum ps_py_line_format)format, noise, size, rand() % 1000,
			              (uint64_t)(rand() % 200), &line);
	}
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("linetable");
	TCase *tc = tcase_create("linetable");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_real_tables);
	tcase_add_test(tc, test_more_tables);
	tcase_add_test(tc, test_formats);
	tcase_add_test(tc, test_damaged);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
