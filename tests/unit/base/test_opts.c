/* Unit tests of src/base/opts (Check): the one check every options struct
 * of the library goes through, and PS_OPTS(). */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "pystitch/pystitch.h"

/* A struct as an older caller knew it, ours, and a newer caller's. */
struct old_opts {
	size_t sz;
	int a;
};
struct our_opts {
	size_t sz;
	int a;
	int b;
	long c;
};
struct new_opts {
	size_t sz;
	int a;
	int b;
	long c;
	long d;
};

START_TEST(test_null_is_defaults)
{
	struct our_opts o;

	memset(&o, 0x5a, sizeof(o));
	ck_assert_int_eq(ps_opts_copy(&o, sizeof(o), NULL), 0);
	ck_assert_uint_eq(o.sz, sizeof(o));
	ck_assert_int_eq(o.a, 0);
	ck_assert_int_eq(o.b, 0);
	ck_assert_int_eq(o.c, 0);
}
END_TEST

START_TEST(test_too_small)
{
	struct our_opts o, theirs = { .sz = 0, .a = 1 };

	/* sz = 0 used to drop every option silently */
	ck_assert_int_eq(ps_opts_copy(&o, sizeof(o), &theirs), -EINVAL);
	ck_assert_int_eq(o.a, 0);
	theirs.sz = sizeof(size_t) - 1;
	ck_assert_int_eq(ps_opts_copy(&o, sizeof(o), &theirs), -EINVAL);
}
END_TEST

START_TEST(test_older_caller)
{
	struct our_opts o;
	struct {
		struct old_opts old;
		int beyond; /* not the caller's: must not be read */
	} theirs;

	/* what PS_OPTS() gives: padding zero too */
	memset(&theirs, 0, sizeof(theirs));
	theirs.old.sz = sizeof(struct old_opts);
	theirs.old.a = 7;
	theirs.beyond = 99;

	ck_assert_int_eq(ps_opts_copy(&o, sizeof(o), &theirs.old), 0);
	ck_assert_uint_eq(o.sz, sizeof(o));
	ck_assert_int_eq(o.a, 7);
	ck_assert_int_eq(o.b, 0);
	ck_assert_int_eq(o.c, 0);
}
END_TEST

START_TEST(test_newer_caller)
{
	struct our_opts o;
	struct new_opts theirs;

	memset(&theirs, 0, sizeof(theirs));
	theirs.sz = sizeof(theirs);
	theirs.a = 1;
	theirs.c = 3;
	ck_assert_int_eq(ps_opts_copy(&o, sizeof(o), &theirs), 0);
	ck_assert_uint_eq(o.sz, sizeof(o));
	ck_assert_int_eq(o.a, 1);
	ck_assert_int_eq(o.c, 3);
	/* an option this build does not know */
	theirs.d = 4;
	ck_assert_int_eq(ps_opts_copy(&o, sizeof(o), &theirs), -EINVAL);
	ck_assert_int_eq(o.a, 0);
}
END_TEST

START_TEST(test_initialiser)
{
	PS_OPTS(ps_session_opts, session, .jobs = 2, .no_inline = true);
	PS_OPTS(ps_reader_opts, reader);
	struct ps_session_opts copy;

	ck_assert_uint_eq(session.sz, sizeof(session));
	ck_assert_uint_eq(session.jobs, 2);
	ck_assert(session.no_inline);
	ck_assert_ptr_null(session.log);
	ck_assert_uint_eq(reader.sz, sizeof(reader));
	ck_assert_int_eq(reader.order, PS_ORDER_FILE);
	ck_assert_int_eq(ps_opts_copy(&copy, sizeof(copy), &session), 0);
	ck_assert_uint_eq(copy.jobs, 2);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("opts");
	TCase *tc = tcase_create("opts");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_null_is_defaults);
	tcase_add_test(tc, test_too_small);
	tcase_add_test(tc, test_older_caller);
	tcase_add_test(tc, test_newer_caller);
	tcase_add_test(tc, test_initialiser);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
