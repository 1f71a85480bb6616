/* Unit tests of src/output/collapse (Check): folded-stack lines built from
 * hand-made stacks, their counts, prefixes, escapes and sort order, and a
 * table that grows far past its first size. Check's environment variables
 * pick what runs: CK_RUN_CASE, CK_VERBOSITY, CK_FORK=no. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

struct fake {
	struct ps_event event;
	struct ps_frame frames[8];
	struct ps_stack stack;
};

/* A stack of names given leaf first; NULL names are [unknown]. */
static const struct ps_stack *make_stack(struct fake *f, const char *comm, uint32_t pid,
                                         uint32_t tid, uint64_t period, size_t nr,
                                         const char *const *names)
{
	memset(f, 0, sizeof(*f));
	f->event.u.sample.pid = pid;
	f->event.u.sample.tid = tid;
	f->event.u.sample.period = period;
	for (size_t i = 0; i < nr; i++)
		f->frames[i].sym = names[i];
	f->stack.event = &f->event;
	f->stack.comm = comm;
	f->stack.has_callchain = true;
	f->stack.nr_frames = nr;
	f->stack.frames = f->frames;
	return &f->stack;
}

/* The whole output of a collapse, for comparing as text. */
static char *print_all(struct ps_collapse *collapse)
{
	struct ps_strbuf out = PS_STRBUF_INIT;
	int64_t nr = ps_collapse_sort(collapse);

	ck_assert_int_ge(nr, 0);
	for (int64_t i = 0; i < nr; i++)
		ps_collapse_print_line(&out, collapse, (size_t)i);
	ps_strbuf_addstr(&out, "");
	ck_assert(!ps_strbuf_failed(&out));
	return out.buf;
}

START_TEST(counts_and_order)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_COMM };
	struct ps_collapse *collapse = ps_collapse_new(&opts);
	const char *ab[] = { "b", "a" }, *a[] = { "a" }, *ac[] = { "c", "a" };
	struct fake f;
	char *text;

	ck_assert_ptr_nonnull(collapse);
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 7, 2, ab)), 0);
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 7, 1, a)), 0);
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 2, 7, 2, ac)), 0);
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 7, 2, ab)), 0);
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 7, 2, ab)), 0);
	text = print_all(collapse);
	ck_assert_str_eq(text, "app;a 1\napp;a;b 3\napp;a;c 1\n");
	free(text);
	ps_collapse_free(collapse);
}
END_TEST

START_TEST(prefixes_and_weights)
{
	static const struct {
		enum ps_collapse_per per;
		const char *want;
	} cases[] = {
		{ PS_COLLAPSE_PER_COMM, "my_app;main;work 30\n" },
		{ PS_COLLAPSE_PER_PID, "my_app-42;main;work 30\n" },
		{ PS_COLLAPSE_PER_TID, "my_app-42/43;main;work 10\nmy_app-42/44;main;work 20\n" },
		{ PS_COLLAPSE_PER_NONE, "main;work 30\n" },
	};
	const char *names[] = { "work", "main" };
	struct fake f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ps_collapse_opts opts = { .per = cases[i].per, .period = true };
		struct ps_collapse *collapse = ps_collapse_new(&opts);
		char *text;

		ck_assert_int_eq(
		        ps_collapse_add(collapse, make_stack(&f, "my app", 42, 43, 10, 2, names)),
		        0);
		ck_assert_int_eq(
		        ps_collapse_add(collapse, make_stack(&f, "my app", 42, 44, 20, 2, names)),
		        0);
		text = print_all(collapse);
		ck_assert_str_eq(text, cases[i].want);
		free(text);
		ps_collapse_free(collapse);
	}
}
END_TEST

START_TEST(names_and_marks)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_NONE, .annotate = true };
	struct ps_collapse *collapse = ps_collapse_new(&opts);
	const char *names[] = { "irq", "inl", "a;b", NULL, "py::f:x.py", "[truncated]" };
	struct fake f;
	char *text;

	make_stack(&f, "app", 1, 1, 1, 6, names);
	f.frames[0].kernel = true;
	f.frames[1].inlined = true;
	f.frames[4].python = true;
	f.frames[5].truncated = true;
	ck_assert_int_eq(ps_collapse_add(collapse, &f.stack), 0);
	/* no frames at all, and only the sampled IP without a call chain */
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 1, 0, NULL)), 0);
	make_stack(&f, "app", 1, 1, 1, 2, names);
	f.stack.has_callchain = false;
	ck_assert_int_eq(ps_collapse_add(collapse, &f.stack), 0);
	text = print_all(collapse);
	ck_assert_str_eq(text, "[truncated];py::f:x.py;[unknown];a:b;inl_[i];irq_[k] 1\n"
	                       "[unknown] 1\n"
	                       "irq 1\n");
	free(text);
	ps_collapse_free(collapse);
}
END_TEST

/* sort(1) compares whole lines: "f 9" sorts after "f 10..." by the count
 * when one stack is a prefix of the other ending in a space */
START_TEST(sort_as_sort)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_NONE };
	struct ps_collapse *collapse = ps_collapse_new(&opts);
	const char *short_name[] = { "f" }, *long_name[] = { "f 1" };
	struct fake f;
	char *text;

	for (int i = 0; i < 9; i++)
		ck_assert_int_eq(
		        ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 1, 1, short_name)),
		        0);
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 1, 1, long_name)),
	                 0);
	text = print_all(collapse);
	ck_assert_str_eq(text, "f 1 1\nf 9\n");
	free(text);
	ps_collapse_free(collapse);
}
END_TEST

START_TEST(many_stacks)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_TID };
	struct ps_collapse *collapse = ps_collapse_new(&opts);
	const char *names[] = { "leaf", "root" };
	struct ps_strbuf line = PS_STRBUF_INIT;
	struct fake f;
	int64_t nr;

	for (int round = 0; round < 3; round++)
		for (uint32_t tid = 0; tid < 50000; tid++)
			ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, tid, 1,
			                                                      2, names)),
			                 0);
	nr = ps_collapse_sort(collapse);
	ck_assert_int_eq(nr, 50000);
	ps_collapse_print_line(&line, collapse, 0);
	ck_assert_str_eq(line.buf, "app-1/0;root;leaf 3\n");
	ps_strbuf_reset(&line);
	ps_collapse_print_line(&line, collapse, (size_t)nr - 1);
	/* ";" sorts after the digits */
	ck_assert_str_eq(line.buf, "app-1/9;root;leaf 3\n");
	ps_strbuf_release(&line);
	ps_collapse_free(collapse);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("collapse");
	TCase *tc = tcase_create("collapse");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, counts_and_order);
	tcase_add_test(tc, prefixes_and_weights);
	tcase_add_test(tc, names_and_marks);
	tcase_add_test(tc, sort_as_sort);
	tcase_add_test(tc, many_stacks);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
