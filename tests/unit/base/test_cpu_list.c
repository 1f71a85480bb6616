/* Unit tests of src/base/cpu_list.c: CPU lists read as libperf's
 * perf_cpu_map__new() reads them and printed back as perf's
 * cpu_map__snprint() prints them. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "base/cpu_list.h"

static void formats(const char *list, const char *want)
{
	struct ps_strbuf out = PS_STRBUF_INIT;

	ck_assert_msg(ps_cpu_list_format(list, &out) == 0, "\"%s\" refused", list);
	ck_assert_msg(out.buf && strcmp(out.buf, want) == 0, "\"%s\": \"%s\", not \"%s\"", list,
	              out.buf ? out.buf : "", want);
	ck_assert_int_eq(ps_cpu_list_format(list, NULL), 0);
	ps_strbuf_release(&out);
}

static void refused(const char *list)
{
	struct ps_strbuf out = PS_STRBUF_INIT;

	ck_assert_msg(ps_cpu_list_format(list, &out) == -EINVAL, "\"%s\" taken", list);
	ck_assert_uint_eq(out.len, 0);
	ck_assert_int_eq(ps_cpu_list_format(list, NULL), -EINVAL);
	ps_strbuf_release(&out);
}

START_TEST(test_formats)
{
	formats("0-3,8", "0-3,8");
	formats("0", "0");
	/* sorted, runs merged */
	formats("3,2", "2-3");
	formats("5-7,0-4", "0-7");
	formats("0,2,4", "0,2,4");
	formats("8,0-3,4", "0-4,8");
	/* no CPU: perf's map of CPU -1 */
	formats("", "-1");
	/* strtoul's base 0 */
	formats("0x10", "16");
	formats("010", "8");
	/* a range's end may be empty (0) or start with a sign or a space */
	formats("0-", "0");
	formats("1-+3", "1-3");
	formats("1- 3", "1-3");
	/* after a comma, what does not start with a digit is not read */
	formats("0-3,,5", "0-3");
	formats("0-3,x", "0-3");
	formats("1,", "1");
	formats("2147483646", "2147483646");
	/* no CPU per range: two billion cost nothing */
	formats("0-2000000000", "0-2000000000");
}
END_TEST

START_TEST(test_refused)
{
	refused("x");
	refused(" 1");
	refused("-1");
	refused("1 2");
	refused("1-0");
	refused("1-");
	refused("1--3");
	refused("1,1");
	refused("0-3,2");
	refused("2-4,0-2");
	refused("2147483647");
	refused("0-2147483647");
	refused("99999999999999999999");
	refused("0-3a");
	refused("0x");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu_list");
	TCase *tc = tcase_create("cpu_list");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_formats);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	runner = srunner_create(s);
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
