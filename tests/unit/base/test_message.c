/* Unit tests of src/base/message (Check): the error helper and log lines
 * every module writes its messages with, and how they cut. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/message.h"

START_TEST(test_fail_returns_err)
{
	char msg[PS_MSG_MAX] = "old";

	ck_assert_int_eq(ps_fail(msg, sizeof(msg), -EINVAL, "bad %s at %d", "thing", 7), -EINVAL);
	ck_assert_str_eq(msg, "bad thing at 7");
	/* no buffer: only the error */
	ck_assert_int_eq(ps_fail(NULL, 0, -ENOMEM, "out of memory"), -ENOMEM);
	ck_assert_int_eq(ps_fail(msg, 0, -EIO, "unseen"), -EIO);
	ck_assert_str_eq(msg, "bad thing at 7");
}
END_TEST

static int vfail(char *msg, size_t size, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = ps_vfail(msg, size, -EINVAL, prefix, fmt, ap);
	va_end(ap);
	return rc;
}

START_TEST(test_prefix_and_cut)
{
	char msg[8];

	ck_assert_int_eq(vfail(msg, sizeof(msg), "ab: ", "%d", 12), -EINVAL);
	ck_assert_str_eq(msg, "ab: 12");
	vfail(msg, sizeof(msg), "ab: ", "%s", "long text");
	ck_assert_str_eq(msg, "ab: lon");
	/* a prefix longer than the buffer is cut too */
	vfail(msg, sizeof(msg), "a prefix too long", "%s", "x");
	ck_assert_str_eq(msg, "a prefi");
	vfail(msg, sizeof(msg), NULL, "%s", "plain");
	ck_assert_str_eq(msg, "plain");
}
END_TEST

struct seen {
	enum ps_log_level level;
	char text[PS_MSG_MAX];
	int calls;
};

static void record(void *ctx, enum ps_log_level level, const char *msg)
{
	struct seen *seen = ctx;

	seen->level = level;
	strcpy(seen->text, msg);
	seen->calls++;
}

START_TEST(test_log_line)
{
	struct seen seen = { 0 };

	ps_log(record, &seen, PS_LOG_WARN, "%s: %u records", "file", 3u);
	ck_assert_int_eq(seen.calls, 1);
	ck_assert_int_eq(seen.level, PS_LOG_WARN);
	ck_assert_str_eq(seen.text, "file: 3 records");
	/* no callback, no line */
	ps_log(NULL, &seen, PS_LOG_WARN, "unseen");
	ck_assert_int_eq(seen.calls, 1);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("message");
	TCase *tc = tcase_create("message");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_fail_returns_err);
	tcase_add_test(tc, test_prefix_and_cut);
	tcase_add_test(tc, test_log_line);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
