/* Samples whose user callchain the kernel deferred (Linux 6.19+): the
 * session delivers them as perf script 6.19+ does (session.c:
 * evlist__deliver_deferred_callchain, session__flush_deferred_samples).
 * The captures are built with the reader's builder; perf 6.1 cannot read
 * them, so the expected stacks follow perf's code. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../reader/builder.h"
#include "pystitch/pystitch.h"

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN)
#define KERNEL_IP 0xffffffff81000100ULL
#define COOKIE(n) (0x1000ULL + (n))

static struct bld_attr deferred_attr(bool sample_id_all)
{
	struct bld_attr a = { .type = PERF_TYPE_SOFTWARE,
		              .size = 128,
		              .config = PERF_COUNT_SW_CPU_CLOCK,
		              .sample_period = 1000,
		              .sample_type = ST,
		              .flags = PS_ATTR_DEFER_CALLCHAIN };
	if (sample_id_all)
		a.flags |= PS_ATTR_SAMPLE_ID_ALL;
	return a;
}

/* A sample of tid at time t whose user part was deferred with cookie. */
static void deferred_sample(struct bld_buf *b, const struct bld_attr *a, uint32_t tid, uint64_t t,
                            uint64_t cookie)
{
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, KERNEL_IP + t, PS_CONTEXT_USER_DEFERRED, cookie };
	struct bld_sample s = bld_sample_empty();

	s.ip = KERNEL_IP + t;
	s.pid = tid;
	s.tid = tid;
	s.time = t;
	s.callchain = chain;
	s.callchain_nr = 4;
	bld_sample(b, a, PERF_RECORD_MISC_KERNEL, &s);
}

/* The deferred user part: user frames 0x400000 + 16 * t + k. */
static void deferred_record(struct bld_buf *b, const struct bld_attr *a, uint32_t tid, uint64_t t,
                            uint64_t cookie, unsigned nr_user)
{
	size_t pos = bld_rec_begin(b, PS_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	struct bld_sid sid = { .pid = tid, .tid = tid, .time = t };

	bld_u64(b, cookie);
	bld_u64(b, 1 + nr_user);
	bld_u64(b, PERF_CONTEXT_USER);
	for (unsigned k = 0; k < nr_user; k++)
		bld_u64(b, 0x400000 + 16 * t + k);
	if (a->flags & PS_ATTR_SAMPLE_ID_ALL)
		bld_sample_id(b, a->sample_type, &sid);
	bld_rec_end(b, pos);
}

struct got {
	uint32_t tid;
	uint64_t time;
	size_t nr;
	uint64_t addr[8];
	bool kernel[8];
};

/* Every stack of the capture, in delivery order. */
static size_t run(const struct bld_file *f, struct got *got, size_t max)
{
	struct bld_buf img;
	struct bld_layout layout;
	struct ps_session *s = NULL;
	const struct ps_stack *stack;
	size_t n = 0;
	int ret;

	bld_buf_init(&img, false);
	bld_file_assemble(f, &img, &layout);
	char *path = bld_write_temp(&img);
	struct ps_session_opts opts = { .sz = sizeof(opts), .python = PS_PYTHON_NATIVE };
	ck_assert_int_eq(ps_session_open(path, &opts, &s), 0);
	while ((ret = ps_session_next(s, &stack)) > 0) {
		ck_assert_uint_lt(n, max);
		got[n].tid = stack->event->u.sample.tid;
		got[n].time = stack->event->u.sample.time;
		got[n].nr = stack->nr_frames < 8 ? stack->nr_frames : 8;
		for (size_t i = 0; i < got[n].nr; i++) {
			got[n].addr[i] = stack->frames[i].addr;
			got[n].kernel[i] = stack->frames[i].kernel;
		}
		n++;
	}
	ck_assert_msg(ret == 0, "%s", ps_session_errmsg(s));
	ps_session_close(s);
	unlink(path);
	free(path);
	bld_buf_free(&img);
	return n;
}

/* Merged: the kernel frame, then the user part of the record made at t_rec. */
static void check_merged(const struct got *g, uint32_t tid, uint64_t t, uint64_t t_rec,
                         unsigned nr_user)
{
	ck_assert_uint_eq(g->tid, tid);
	ck_assert_uint_eq(g->time, t);
	ck_assert_uint_eq(g->nr, 1 + nr_user);
	ck_assert(g->kernel[0]);
	ck_assert_uint_eq(g->addr[0], KERNEL_IP + t);
	for (unsigned k = 0; k < nr_user; k++) {
		ck_assert(!g->kernel[1 + k]);
		ck_assert_uint_eq(g->addr[1 + k], 0x400000 + 16 * t_rec + k);
	}
}

/* Unmerged: the kernel frame, then the cookie read as a user address. */
static void check_unmerged(const struct got *g, uint32_t tid, uint64_t t, uint64_t cookie)
{
	ck_assert_uint_eq(g->tid, tid);
	ck_assert_uint_eq(g->time, t);
	ck_assert_uint_eq(g->nr, 2);
	ck_assert(g->kernel[0]);
	ck_assert(!g->kernel[1]);
	ck_assert_uint_eq(g->addr[1], cookie);
}

START_TEST(test_merged_in_release_order)
{
	struct bld_file f;
	struct bld_attr a = deferred_attr(true);
	struct got got[8];

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	/* tid 10 and 20 interleave; 20's user part comes first */
	deferred_sample(&f.data, &a, 10, 1, COOKIE(1));
	deferred_sample(&f.data, &a, 20, 2, COOKIE(2));
	deferred_sample(&f.data, &a, 10, 3, COOKIE(1));
	deferred_record(&f.data, &a, 20, 4, COOKIE(2), 3);
	deferred_record(&f.data, &a, 10, 5, COOKIE(1), 2);
	ck_assert_uint_eq(run(&f, got, 8), 3);
	check_merged(&got[0], 20, 2, 4, 3);
	/* both of tid 10's samples carry cookie 1: both take its chain, in
	 * the order they came */
	check_merged(&got[1], 10, 1, 5, 2);
	check_merged(&got[2], 10, 3, 5, 2);
	bld_file_free(&f);
}
END_TEST

START_TEST(test_other_cookie_goes_out_unmerged)
{
	struct bld_file f;
	struct bld_attr a = deferred_attr(true);
	struct got got[8];

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	/* the record of cookie 1 was lost: the next record of the thread
	 * releases the old sample as it is */
	deferred_sample(&f.data, &a, 10, 1, COOKIE(1));
	deferred_sample(&f.data, &a, 10, 2, COOKIE(2));
	deferred_record(&f.data, &a, 10, 3, COOKIE(2), 1);
	ck_assert_uint_eq(run(&f, got, 8), 2);
	check_unmerged(&got[0], 10, 1, COOKIE(1));
	check_merged(&got[1], 10, 2, 3, 1);
	bld_file_free(&f);
}
END_TEST

START_TEST(test_end_flushes_unmerged_last)
{
	struct bld_file f;
	struct bld_attr a = deferred_attr(true);
	struct got got[8];
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, KERNEL_IP, PERF_CONTEXT_USER, 0x401000 };
	struct bld_sample s = bld_sample_empty();

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	deferred_sample(&f.data, &a, 10, 1, COOKIE(1));
	/* a sample that was not deferred goes out at once */
	s.ip = KERNEL_IP;
	s.pid = s.tid = 30;
	s.time = 2;
	s.callchain = chain;
	s.callchain_nr = 4;
	bld_sample(&f.data, &a, PERF_RECORD_MISC_KERNEL, &s);
	ck_assert_uint_eq(run(&f, got, 8), 2);
	ck_assert_uint_eq(got[0].tid, 30);
	ck_assert_uint_eq(got[0].nr, 2);
	check_unmerged(&got[1], 10, 1, COOKIE(1));
	bld_file_free(&f);
}
END_TEST

START_TEST(test_record_without_tid_matches_nothing)
{
	struct bld_file f;
	struct bld_attr a = deferred_attr(false);
	struct got got[8];

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	deferred_sample(&f.data, &a, 10, 1, COOKIE(1));
	deferred_record(&f.data, &a, 10, 2, COOKIE(1), 2);
	ck_assert_uint_eq(run(&f, got, 8), 1);
	check_unmerged(&got[0], 10, 1, COOKIE(1));
	bld_file_free(&f);
}
END_TEST

START_TEST(test_without_the_attr_bit_nothing_waits)
{
	struct bld_file f;
	struct bld_attr a = deferred_attr(true);
	struct got got[8];

	a.flags &= ~PS_ATTR_DEFER_CALLCHAIN;
	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	deferred_sample(&f.data, &a, 10, 1, COOKIE(1));
	deferred_sample(&f.data, &a, 20, 2, COOKIE(2));
	deferred_record(&f.data, &a, 20, 3, COOKIE(2), 2);
	ck_assert_uint_eq(run(&f, got, 8), 2);
	check_unmerged(&got[0], 10, 1, COOKIE(1));
	check_unmerged(&got[1], 20, 2, COOKIE(2));
	bld_file_free(&f);
}
END_TEST

START_TEST(test_held_samples_are_bounded)
{
	struct bld_file f;
	struct bld_attr a = deferred_attr(true);
	struct ps_session *s = NULL;
	const struct ps_stack *stack;
	struct bld_buf img;
	struct bld_layout layout;
	size_t n = 0;

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &a);
	/* one more than may wait, none ever released: the first goes out
	 * unmerged as soon as the last arrives, the rest at the end */
	for (uint64_t t = 1; t <= 65537; t++)
		deferred_sample(&f.data, &a, 10, t, COOKIE(t));
	bld_buf_init(&img, false);
	bld_file_assemble(&f, &img, &layout);
	char *path = bld_write_temp(&img);
	struct ps_session_opts opts = { .sz = sizeof(opts), .python = PS_PYTHON_NATIVE };
	ck_assert_int_eq(ps_session_open(path, &opts, &s), 0);
	while (ps_session_next(s, &stack) > 0) {
		ck_assert_uint_eq(stack->event->u.sample.time, n + 1);
		n++;
	}
	ck_assert_uint_eq(n, 65537);
	ps_session_close(s);
	unlink(path);
	free(path);
	bld_buf_free(&img);
	bld_file_free(&f);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("session");
	TCase *tc = tcase_create("deferred");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_merged_in_release_order);
	tcase_add_test(tc, test_other_cookie_goes_out_unmerged);
	tcase_add_test(tc, test_end_flushes_unmerged_last);
	tcase_add_test(tc, test_record_without_tid_matches_nothing);
	tcase_add_test(tc, test_without_the_attr_bit_nothing_waits);
	tcase_add_test(tc, test_held_samples_are_bounded);
	suite_add_tcase(suite, tc);
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
