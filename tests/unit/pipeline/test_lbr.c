/* LBR call stacks (src/pipeline/lbr.c) through the public session API, on
 * synthetic captures of tests/programs/deep (tests/e2e/lbr_capture.h, the
 * reader's builder): what each stack must hold follows perf 6.1's rules
 * (util/machine.c: resolve_lbr_callchain_sample, has_stitched_lbr), worked
 * out here from the calls each sample's LBR holds. script_lbr.sh checks
 * the same rules against perf itself; these tests reach what perf cannot
 * read (it crashes) and pystitch's own bounds.
 */
#include <check.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../e2e/lbr_capture.h"
#include "pystitch/pystitch.h"

#define MAX_SAMPLES 512
#define MAX_FRAMES 1200

static struct lbr_program prog;
static char deep_path[4096], kallsyms_path[4096];

/* ---- deep's addresses, from nm --------------------------------------- */

static uint64_t nm_address(const char *name)
{
	char cmd[4200], line[512];
	uint64_t addr = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", deep_path);
	p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "cannot run nm");
	while (fgets(line, sizeof(line), p)) {
		char sym[256], type;
		uint64_t a;
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, sym) == 3 &&
		    strcmp(sym, name) == 0)
			addr = a;
	}
	pclose(p);
	ck_assert_msg(addr != 0, "nm found no %s in %s", name, deep_path);
	return addr;
}

/* The executable segment, from readelf -l. */
static void text_segment(void)
{
	char cmd[4200], line[512];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s'", deep_path);
	p = popen(cmd, "r");
	ck_assert_msg(p != NULL, "cannot run readelf");
	while (fgets(line, sizeof(line), p)) {
		uint64_t offset, vaddr, paddr, filesz, memsz;
		if (!found && strstr(line, " R E ") &&
		    sscanf(line,
		           " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64
		           " 0x%" SCNx64,
		           &offset, &vaddr, &paddr, &filesz, &memsz) == 5) {
			prog.text_offset = offset;
			prog.text_vaddr = vaddr;
			prog.text_size = memsz;
			found = true;
		}
	}
	pclose(p);
	ck_assert_msg(found, "readelf found no executable segment in %s", deep_path);
}

static void setup(void)
{
	const char *top = getenv("abs_top_builddir");
	FILE *f;

	snprintf(deep_path, sizeof(deep_path), "%s/tests/programs/deep", top ? top : ".");
	ck_assert_msg(access(deep_path, R_OK) == 0, "no %s (make check builds it)", deep_path);
	prog = (struct lbr_program){ .path = deep_path };
	prog.run = nm_address("run");
	prog.even = nm_address("descend_even");
	prog.odd = nm_address("descend_odd");
	prog.bottom = nm_address("bottom");
	text_segment();
	/* call sites: anywhere in the caller names the caller */
	prog.main_calls_run = nm_address("main") + 0x1d;
	prog.run_calls_even = prog.run + 0x60;
	prog.even_calls_odd = prog.even + 0x60;
	prog.odd_calls_even = prog.odd + 0x60;
	prog.even_calls_bottom = prog.even + 0x80;
	prog.odd_calls_bottom = prog.odd + 0x80;
	snprintf(kallsyms_path, sizeof(kallsyms_path), "%s/pystitch-lbr-kallsyms-%d",
	         getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	f = fopen(kallsyms_path, "w");
	ck_assert(f && fputs(lbr_kallsyms, f) >= 0 && fclose(f) == 0);
}

static void teardown(void)
{
	unlink(kallsyms_path);
}

/* ---- reading a capture ------------------------------------------------ */

struct run {
	size_t nr_samples;
	size_t nr_frames[MAX_SAMPLES];
	uint64_t ips[MAX_SAMPLES][MAX_FRAMES];
	bool kernel[MAX_SAMPLES][MAX_FRAMES];
	char sym0[MAX_SAMPLES][64]; /* the name of each stack's first user frame */
	size_t nr_warnings;
	char warning[4096];
};

static void on_log(void *ctx, enum ps_log_level level, const char *msg)
{
	struct run *r = ctx;

	if (level != PS_LOG_WARN)
		return;
	if (!r->nr_warnings++)
		snprintf(r->warning, sizeof(r->warning), "%s", msg);
}

/* Read the capture: every sample's frames into r (calloc'ed). */
static struct run *read_capture(struct bld_file *file, bool stitch_lbr, unsigned max_stack)
{
	struct run *r = calloc(1, sizeof(*r));
	struct bld_buf image;
	struct ps_session *session;
	const struct ps_stack *stack;
	char *path;
	int ret;

	ck_assert(r != NULL);
	bld_buf_init(&image, false);
	bld_file_assemble(file, &image, NULL);
	path = bld_write_temp(&image);
	PS_OPTS(ps_session_opts, opts, .kallsyms = kallsyms_path, .stitch_lbr = stitch_lbr,
	        .max_stack = max_stack, .python = PS_PYTHON_NATIVE, .log = on_log, .log_ctx = r);
	ck_assert_int_eq(ps_session_open(path, &opts, &session), 0);
	while ((ret = ps_session_next(session, &stack)) > 0) {
		size_t i = r->nr_samples++;
		ck_assert_uint_lt(i, MAX_SAMPLES);
		ck_assert(stack->has_callchain);
		ck_assert_uint_le(stack->nr_frames, MAX_FRAMES);
		r->nr_frames[i] = stack->nr_frames;
		for (size_t k = 0; k < stack->nr_frames; k++) {
			r->ips[i][k] = stack->frames[k].ip;
			r->kernel[i][k] = stack->frames[k].kernel;
			if (!stack->frames[k].kernel && !r->sym0[i][0])
				snprintf(r->sym0[i], sizeof(r->sym0[i]), "%s+0x%" PRIx64,
				         stack->frames[k].sym ? stack->frames[k].sym : "[unknown]",
				         stack->frames[k].symoff);
		}
	}
	ck_assert_int_eq(ret, 0);
	ps_session_close(session);
	unlink(path);
	free(path);
	bld_buf_free(&image);
	return r;
}

/* ---- what perf's rules give ------------------------------------------- */

struct expect {
	size_t nr;
	uint64_t ips[MAX_FRAMES];
};

static void expect_add(struct expect *e, uint64_t ip)
{
	ck_assert_uint_lt(e->nr, MAX_FRAMES);
	e->ips[e->nr++] = ip;
}

static void expect_kernel(struct expect *e)
{
	expect_add(e, LBR_KERNEL_TEXT + 0x400 + 0x1b);
	expect_add(e, LBR_KERNEL_TEXT + 0x300 + 0x4c);
	expect_add(e, LBR_KERNEL_TEXT + 0x100 + 0x16);
}

/* The LBR part of a recursion of depth calls whose LBR holds calls
 * oldest..depth - 1: the latest call's target, then every call site, the
 * latest first. */
static void expect_lbr(struct expect *e, unsigned depth, unsigned oldest)
{
	uint64_t from, to;

	lbr_call(&prog, depth - 1, depth, &from, &to);
	expect_add(e, to);
	for (unsigned k = depth; k-- > oldest;) {
		lbr_call(&prog, k, depth, &from, &to);
		expect_add(e, from);
	}
}

/* Stitched frames: the call sites of calls last..first (last > first) of
 * a recursion of depth calls, the latest first. */
static void expect_calls(struct expect *e, unsigned depth, unsigned last, unsigned first)
{
	for (unsigned k = last + 1; k-- > first;) {
		uint64_t from, to;
		lbr_call(&prog, k, depth, &from, &to);
		expect_add(e, from);
	}
}

static void check_sample(const struct run *r, size_t i, const struct expect *e)
{
	ck_assert_uint_lt(i, r->nr_samples);
	ck_assert_msg(r->nr_frames[i] == e->nr, "sample %zu: %zu frames, %zu expected", i,
	              r->nr_frames[i], e->nr);
	for (size_t k = 0; k < e->nr; k++)
		ck_assert_msg(r->ips[i][k] == e->ips[k],
		              "sample %zu frame %zu: ip 0x%" PRIx64 ", 0x%" PRIx64 " expected", i,
		              k, r->ips[i][k], e->ips[k]);
}

static uint64_t t_now;

static void add(struct bld_file *f, struct lbr_spec sp)
{
	lbr_sample(&f->data, &prog, &sp, t_now += 1000000);
}

static void begin(struct bld_file *f, bool pmu_caps)
{
	t_now = 5000000000ull;
	lbr_capture_begin(f, &prog, pmu_caps, t_now);
	t_now += 3000;
}

/* ---- tests ------------------------------------------------------------ */

START_TEST(user_part_from_lbr)
{
	struct bld_file f;
	struct expect e = { 0 };
	struct run *r;

	begin(&f, true);
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 20, .oldest = 0 });
	r = read_capture(&f, false, 0);
	ck_assert_uint_eq(r->nr_samples, 1);
	/* the target of the latest call (bottom's entry), then call sites
	 * as they are: not the sampled ip, not return addresses */
	expect_lbr(&e, 20, 0);
	check_sample(r, 0, &e);
	ck_assert_str_eq(r->sym0[0], "bottom+0x0");
	ck_assert(!r->kernel[0][0]);
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(kernel_and_user)
{
	struct bld_file f;
	struct expect e = { 0 }, k = { 0 };
	struct run *r;

	begin(&f, true);
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 40, .oldest = 8, .kernel = true });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .kernel_only = true });
	r = read_capture(&f, false, 0);
	expect_kernel(&e);
	expect_lbr(&e, 40, 8);
	check_sample(r, 0, &e);
	ck_assert(r->kernel[0][2] && !r->kernel[0][3]);
	/* no user marker: the recorded chain, walked as without LBR */
	expect_add(&k, LBR_KERNEL_TEXT + 0x400 + 0x1b);
	expect_add(&k, LBR_KERNEL_TEXT + 0x300 + 0x4c);
	check_sample(r, 1, &k);
	free(r);
	bld_file_free(&f);
}
END_TEST

/* The frame-pointer chain's user part lbr_sample() writes. */
static void expect_fp(struct expect *e, unsigned depth)
{
	expect_add(e, LBR_BASE + prog.bottom + 0x20);
	for (unsigned k = depth; k-- > 0 && k + 3 >= depth;) {
		uint64_t from, to;
		lbr_call(&prog, k, depth, &from, &to);
		expect_add(e, from + 5);
	}
}

START_TEST(recorded_chain_instead)
{
	struct bld_file f;
	struct expect e = { 0 }, cut = { 0 };
	struct run *r;

	begin(&f, true);
	/* an unknown context marker among the entries */
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 40, .oldest = 8, .marker_at = 4 });
	/* CALL_STACK sampling without a branch stack (perf crashes) */
	add(&f,
	    (struct lbr_spec){ .event = LBR_EVENT_NO_BRANCH_STACK, .tid = LBR_PID, .depth = 40 });
	/* the user marker past max_stack */
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 40, .oldest = 8, .kernel = true });
	r = read_capture(&f, true, 3);
	expect_fp(&e, 40);
	e.nr = 3; /* --max-stack 3 */
	check_sample(r, 0, &e);
	check_sample(r, 1, &e);
	expect_add(&cut, LBR_KERNEL_TEXT + 0x400 + 0x1b);
	expect_add(&cut, LBR_KERNEL_TEXT + 0x300 + 0x4c);
	expect_add(&cut, LBR_KERNEL_TEXT + 0x100 + 0x16);
	check_sample(r, 2, &cut);
	free(r);
	r = read_capture(&f, true, 0);
	e.nr = 0;
	expect_fp(&e, 40);
	check_sample(r, 0, &e);
	check_sample(r, 1, &e);
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(stitching)
{
	struct bld_file f;
	struct expect e1 = { 0 }, e2 = { 0 }, e3 = { 0 }, e4 = { 0 }, e5 = { 0 }, e6 = { 0 };
	struct run *r;

	begin(&f, true);
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 20, .oldest = 0 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 40, .oldest = 8, .kernel = true });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 44, .oldest = 12 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID + 1, .depth = 44, .oldest = 12 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 10, .oldest = 0 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 36, .oldest = 4 });
	r = read_capture(&f, true, 0);
	ck_assert_uint_eq(r->nr_samples, 6);
	ck_assert_uint_eq(r->nr_warnings, 0);
	expect_lbr(&e1, 20, 0);
	check_sample(r, 0, &e1);
	/* calls 8..19 are where the first sample had them: its calls 0..7
	 * join, after the kernel part and the LBR's own */
	expect_kernel(&e2);
	expect_lbr(&e2, 40, 8);
	expect_calls(&e2, 20, 7, 0);
	check_sample(r, 1, &e2);
	/* calls 8..11 join, before the ones kept from before */
	expect_lbr(&e3, 44, 12);
	expect_calls(&e3, 40, 11, 8);
	expect_calls(&e3, 20, 7, 0);
	check_sample(r, 2, &e3);
	/* another thread has nothing of the first one's */
	expect_lbr(&e4, 44, 12);
	check_sample(r, 3, &e4);
	/* nothing matches: what was stitched goes */
	expect_lbr(&e5, 10, 0);
	check_sample(r, 4, &e5);
	expect_lbr(&e6, 36, 4);
	expect_calls(&e6, 10, 3, 0);
	check_sample(r, 5, &e6);
	free(r);

	/* without --stitch-lbr, or without the CPU's LBR depth: none */
	r = read_capture(&f, false, 0);
	e2.nr = 0;
	expect_kernel(&e2);
	expect_lbr(&e2, 40, 8);
	check_sample(r, 1, &e2);
	free(r);
	bld_file_free(&f);
	begin(&f, false);
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 20, .oldest = 0 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 40, .oldest = 8, .kernel = true });
	r = read_capture(&f, true, 0);
	check_sample(r, 1, &e2);
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(no_hw_idx_keeps_frames)
{
	struct bld_file f;
	struct expect e = { 0 };
	struct run *r;

	begin(&f, true);
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 20, .oldest = 0 });
	add(&f, (struct lbr_spec){ .event = LBR_EVENT_NO_HW_IDX, .tid = LBR_PID, .depth = 30 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 40, .oldest = 8 });
	r = read_capture(&f, true, 0);
	expect_lbr(&e, 30, 0);
	check_sample(r, 1, &e);
	/* checked against the first sample (entries 12..19 lie below the
	 * third one's oldest), but the frames are the ones the second
	 * sample's entries 12..19 gave, as perf keeps them: calls 17..10 */
	e.nr = 0;
	expect_lbr(&e, 40, 8);
	expect_calls(&e, 30, 17, 10);
	check_sample(r, 2, &e);
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(exit_frees_state)
{
	struct bld_file f;
	struct expect e = { 0 };
	struct run *r;

	begin(&f, true);
	add(&f, (struct lbr_spec){ .tid = LBR_PID + 1, .depth = 20, .oldest = 0 });
	lbr_task(&f.data, PERF_RECORD_EXIT, LBR_PID + 1, t_now += 1000000);
	add(&f, (struct lbr_spec){ .tid = LBR_PID + 1, .depth = 40, .oldest = 8 });
	r = read_capture(&f, true, 0);
	expect_lbr(&e, 40, 8);
	check_sample(r, 1, &e);
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(stitched_frames_bounded)
{
	struct bld_file f;
	struct run *r;
	unsigned depth = 40;

	begin(&f, true);
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 20, .oldest = 0 });
	/* each sample 4 calls deeper than the one before: 4 more frames */
	for (int i = 0; i < 300; i++, depth += 4)
		add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = depth, .oldest = depth - 32 });
	r = read_capture(&f, true, 0);
	ck_assert_uint_eq(r->nr_samples, 301);
	/* 8, then 4 more each time, up to the bound */
	ck_assert_uint_eq(r->nr_frames[1], 33 + 8);
	ck_assert_uint_eq(r->nr_frames[2], 33 + 12);
	ck_assert_uint_eq(r->nr_frames[254], 33 + 1020);
	ck_assert_uint_eq(r->nr_frames[255], 33 + 1024);
	ck_assert_uint_eq(r->nr_frames[300], 33 + 1024);
	ck_assert_uint_eq(r->nr_warnings, 1);
	ck_assert_msg(strstr(r->warning, "1024 frames") != NULL, "%s", r->warning);
	/* what stays is the innermost: the frame below the LBR's own is the
	 * call just older than its oldest entry */
	{
		unsigned d = 40 + 4 * 299;
		uint64_t from, to;
		lbr_call(&prog, d - 33, d, &from, &to);
		ck_assert_uint_eq(r->ips[300][33], from);
	}
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(deeper_than_the_lbr)
{
	struct bld_file f;
	struct expect e = { 0 };
	struct run *r;

	begin(&f, true);
	/* 60 entries: perf's array of max_lbr + 1 overflows (it crashes) */
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 60, .oldest = 0 });
	add(&f, (struct lbr_spec){ .tid = LBR_PID, .depth = 60, .oldest = 0 });
	r = read_capture(&f, true, 0);
	expect_lbr(&e, 60, 0);
	check_sample(r, 0, &e);
	check_sample(r, 1, &e);
	ck_assert_uint_eq(r->nr_warnings, 1);
	ck_assert_msg(strstr(r->warning, "60 entries") != NULL, "%s", r->warning);
	free(r);
	bld_file_free(&f);
}
END_TEST

START_TEST(switched_off_without_lbr)
{
	struct bld_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = 128,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.flags = 1ull << 18,
	};
	struct bld_sample s = bld_sample_empty();
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_USER, 0x1234 };
	struct bld_file f;
	struct run *r;

	bld_file_init(&f, false);
	bld_file_add_attr(&f, &attr);
	s.ip = 0x1234;
	s.pid = s.tid = LBR_PID;
	s.callchain = chain;
	s.callchain_nr = 2;
	bld_sample(&f.data, &attr, PERF_RECORD_MISC_USER, &s);
	r = read_capture(&f, true, 0);
	ck_assert_uint_eq(r->nr_warnings, 1);
	ck_assert_str_eq(r->warning, "Can't find LBR callchain. Switch off --stitch-lbr. "
	                             "Please apply --call-graph lbr when recording.");
	free(r);
	r = read_capture(&f, false, 0);
	ck_assert_uint_eq(r->nr_warnings, 0);
	free(r);
	bld_file_free(&f);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("lbr");
	TCase *tc = tcase_create("lbr");
	SRunner *runner;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, user_part_from_lbr);
	tcase_add_test(tc, kernel_and_user);
	tcase_add_test(tc, recorded_chain_instead);
	tcase_add_test(tc, stitching);
	tcase_add_test(tc, no_hw_idx_keeps_frames);
	tcase_add_test(tc, exit_frees_state);
	tcase_add_test(tc, stitched_frames_bounded);
	tcase_add_test(tc, deeper_than_the_lbr);
	tcase_add_test(tc, switched_off_without_lbr);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
