/* Unit tests of src/output/collapse (Check): folded-stack lines built from
 * hand-made stacks, their counts, prefixes, escapes and sort order, and a
 * table that grows far past its first size. Check's environment variables
 * pick what runs: CK_RUN_CASE, CK_VERBOSITY, CK_FORK=no. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "capture.h"

struct fake {
	struct ps_event event;
	struct ps_frame frames[12];
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

static struct ps_collapse *open_collapse(struct ps_collapse_opts *opts)
{
	struct ps_collapse *collapse;

	opts->sz = sizeof(*opts);
	ck_assert_int_eq(ps_collapse_open(opts, &collapse), 0);
	return collapse;
}

/* The whole output of a collapse, for comparing as text; *nr_lines (when
 * not NULL) is how many lines it has. */
static char *write_all(struct ps_collapse *collapse, int64_t *nr_lines)
{
	struct ps_strbuf out = PS_STRBUF_INIT;
	int64_t nr = ps_collapse_write(collapse, capture_write, &out);

	ck_assert_int_ge(nr, 0);
	if (nr_lines)
		*nr_lines = nr;
	ps_strbuf_addstr(&out, "");
	ck_assert(!ps_strbuf_failed(&out));
	return out.buf;
}

static char *print_all(struct ps_collapse *collapse)
{
	return write_all(collapse, NULL);
}

START_TEST(counts_and_order)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_COMM };
	struct ps_collapse *collapse = open_collapse(&opts);
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
	ps_collapse_close(collapse);
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
		struct ps_collapse *collapse = open_collapse(&opts);
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
		ps_collapse_close(collapse);
	}
}
END_TEST

START_TEST(names_and_marks)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_NONE, .annotate = true };
	struct ps_collapse *collapse = open_collapse(&opts);
	const char *names[] = { "irq",         "inl",  "a;b",    NULL,  "py::f:x.py",
		                "[truncated]", "vdso", "mod_fn", "main" };
	struct fake f;
	char *text;

	/* the marks of stackcollapse-perf.pl --all, read from the DSO as
	 * perf script prints it: kernel ([...] but [unknown], or a vmlinux),
	 * JIT (a perf map); none on inlined frames (printed "(inlined)") */
	make_stack(&f, "app", 1, 1, 1, 9, names);
	f.frames[0].kernel = true;
	f.frames[0].dso = "[kernel.kallsyms]";
	f.frames[1].inlined = true;
	f.frames[1].dso = "[kernel.kallsyms]";
	f.frames[4].python = true;
	f.frames[4].dso = "/tmp/perf-42.map";
	f.frames[5].truncated = true;
	f.frames[6].dso = "[vdso]";
	f.frames[7].dso = "/boot/vmlinux";
	f.frames[8].dso = "/tmp/perf-x.map";
	ck_assert_int_eq(ps_collapse_add(collapse, &f.stack), 0);
	/* no frames at all, and only the sampled IP without a call chain */
	ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, 1, 1, 0, NULL)), 0);
	make_stack(&f, "app", 1, 1, 1, 2, names);
	f.stack.has_callchain = false;
	ck_assert_int_eq(ps_collapse_add(collapse, &f.stack), 0);
	text = print_all(collapse);
	ck_assert_str_eq(text, "[unknown] 1\n"
	                       "irq 1\n"
	                       "main;mod_fn_[k];vdso_[k];[truncated];py::f:x.py_[j];[unknown];a:b;"
	                       "inl;irq_[k] 1\n");
	free(text);
	ps_collapse_close(collapse);
}
END_TEST

/* sort(1) compares whole lines: "f 9" sorts after "f 10..." by the count
 * when one stack is a prefix of the other ending in a space */
START_TEST(sort_as_sort)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_NONE };
	struct ps_collapse *collapse = open_collapse(&opts);
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
	ps_collapse_close(collapse);
}
END_TEST

START_TEST(many_stacks)
{
	struct ps_collapse_opts opts = { .per = PS_COLLAPSE_PER_TID };
	struct ps_collapse *collapse = open_collapse(&opts);
	const char *names[] = { "leaf", "root" };
	struct fake f;
	int64_t nr;
	char *text, *last;

	for (int round = 0; round < 3; round++)
		for (uint32_t tid = 0; tid < 50000; tid++)
			ck_assert_int_eq(ps_collapse_add(collapse, make_stack(&f, "app", 1, tid, 1,
			                                                      2, names)),
			                 0);
	text = write_all(collapse, &nr);
	ck_assert_int_eq(nr, 50000);
	ck_assert_int_eq(strncmp(text, "app-1/0;root;leaf 3\n", 20), 0);
	last = text + strlen(text) - 1;
	while (last > text && last[-1] != '\n')
		last--;
	/* ";" sorts after the digits */
	ck_assert_str_eq(last, "app-1/9;root;leaf 3\n");
	free(text);
	/* a write that fails stops the writer with its error */
	ck_assert_int_eq(ps_collapse_write(collapse, capture_fails, NULL), -EIO);
	ps_collapse_close(collapse);
}
END_TEST

/* the options convention every writer shares (base/opts.h) */
START_TEST(options_checked)
{
	struct {
		struct ps_collapse_opts opts;
		char newer[16]; /* fields of a later version */
	} bigger = { .opts = { .sz = sizeof(bigger) } };
	struct ps_collapse_opts zero = { .sz = 0 };
	struct ps_collapse *collapse = (struct ps_collapse *)&zero;

	ck_assert_int_eq(ps_collapse_open(&zero, &collapse), -EINVAL);
	ck_assert_ptr_null(collapse);
	/* larger but with nothing set past what is known: taken */
	ck_assert_int_eq(ps_collapse_open(&bigger.opts, &collapse), 0);
	ps_collapse_close(collapse);
	bigger.newer[3] = 1;
	ck_assert_int_eq(ps_collapse_open(&bigger.opts, &collapse), -EINVAL);
	ck_assert_ptr_null(collapse);
	/* no options: the defaults */
	ck_assert_int_eq(ps_collapse_open(NULL, &collapse), 0);
	ps_collapse_close(collapse);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("collapse");
	TCase *tc = tcase_create("collapse");
	SRunner *runner;
	int failed;

	/* a fraction of a second alone; on a loaded machine, more than
	 * check's default of 4 s */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, counts_and_order);
	tcase_add_test(tc, prefixes_and_weights);
	tcase_add_test(tc, names_and_marks);
	tcase_add_test(tc, sort_as_sort);
	tcase_add_test(tc, many_stacks);
	tcase_add_test(tc, options_checked);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
