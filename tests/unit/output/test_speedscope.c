/* Unit tests of src/output/speedscope (Check): speedscope documents built
 * from hand-made stacks and compared as text (the writer's output is
 * fully determined by what was added): the frame table, the profiles and
 * their names per --per, weights and units, time order, frames of every
 * kind, JSON escapes of hostile names (control bytes, quotes, malformed
 * UTF-8), empty and failing writes, and tables that grow far past their
 * first size. Check's environment variables pick what runs: CK_RUN_CASE,
 * CK_VERBOSITY, CK_FORK=no. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/speedscope_priv.h"
#include "capture.h"

struct fake {
	struct ps_attr attr;
	struct ps_event event;
	struct ps_frame frames[8];
	struct ps_stack stack;
};

static const char *const LIBC = "/usr/lib/libc.so.6";
static const char *const KERNEL = "[kernel.kallsyms]";

/* A cpu-clock sample of thread tid of pid; frames are added leaf first. */
static void fake_init(struct fake *f, const char *comm, uint32_t pid, uint32_t tid, uint64_t period,
                      uint64_t time)
{
	memset(f, 0, sizeof(*f));
	f->attr.type = PERF_TYPE_SOFTWARE;
	f->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	f->attr.name = "cpu-clock:ppp";
	f->event.u.sample.sample_type = PERF_SAMPLE_TIME;
	f->event.u.sample.pid = pid;
	f->event.u.sample.tid = tid;
	f->event.u.sample.period = period;
	f->event.u.sample.time = time;
	f->event.attr = &f->attr;
	f->stack.event = &f->event;
	f->stack.comm = comm;
	f->stack.has_callchain = true;
	f->stack.frames = f->frames;
}

static struct ps_frame *frame(struct fake *f, const char *sym, const char *dso)
{
	struct ps_frame *fr = &f->frames[f->stack.nr_frames++];

	fr->sym = sym;
	fr->dso = dso;
	fr->kernel = dso == KERNEL;
	fr->python = sym && strncmp(sym, "py::", 4) == 0;
	return fr;
}

static struct ps_speedscope *open_writer(struct ps_speedscope_opts *opts)
{
	struct ps_speedscope *speedscope;

	opts->sz = sizeof(*opts);
	ck_assert_int_eq(ps_speedscope_open(opts, &speedscope), 0);
	ck_assert_ptr_nonnull(speedscope);
	return speedscope;
}

/* The whole document as a C string (free it). */
static char *write_all(struct ps_speedscope *speedscope)
{
	struct ps_strbuf out = PS_STRBUF_INIT;
	int64_t written = ps_speedscope_write(speedscope, capture_write, &out);

	ck_assert_int_ge(written, 0);
	ck_assert_uint_eq((uint64_t)written, out.len);
	ps_strbuf_addstr(&out, "");
	ck_assert(!ps_strbuf_failed(&out));
	return out.buf;
}

static void add(struct ps_speedscope *speedscope, struct fake *f)
{
	ck_assert_int_eq(ps_speedscope_add(speedscope, &f->stack), 0);
}

#define HEAD "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
#define EXPORTER "\"exporter\":\"pystitch " PS_VERSION_STRING "\","

START_TEST(two_threads)
{
	struct ps_speedscope_opts opts = { .period = true, .name = "perf.data" };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text;

	/* thread 10: main -> work; thread 11 (heavier): main -> work -> read */
	fake_init(&f, "app", 10, 10, 1000, 100);
	frame(&f, "work", "/bin/app");
	frame(&f, "main", "/bin/app");
	add(speedscope, &f);
	fake_init(&f, "app", 10, 11, 3000, 110);
	frame(&f, "read", LIBC);
	frame(&f, "work", "/bin/app");
	frame(&f, "main", "/bin/app");
	add(speedscope, &f);
	fake_init(&f, "app", 10, 10, 1000, 120);
	frame(&f, "main", "/bin/app");
	add(speedscope, &f);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->nr_added, 3);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->weight, 5000);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->profiles, 2);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->stacks, 3);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->frames, 3);
	text = write_all(speedscope);
	ck_assert_str_eq(text,
	                 HEAD EXPORTER "\"name\":\"perf.data\",\"activeProfileIndex\":1,\n"
	                               "\"shared\":{\"frames\":[\n"
	                               "{\"name\":\"main\",\"file\":\"/bin/app\"},\n"
	                               "{\"name\":\"work\",\"file\":\"/bin/app\"},\n"
	                               "{\"name\":\"read\",\"file\":\"/usr/lib/libc.so.6\"}\n"
	                               "]},\n"
	                               "\"profiles\":[\n"
	                               "{\"type\":\"sampled\",\"name\":\"app pid: 10 tid: 10\","
	                               "\"unit\":\"nanoseconds\",\"startValue\":0,"
	                               "\"endValue\":2000,\n"
	                               "\"samples\":[\n[0,1],\n[0]],\n"
	                               "\"weights\":[1000,1000]},\n"
	                               "{\"type\":\"sampled\",\"name\":\"app pid: 10 tid: 11\","
	                               "\"unit\":\"nanoseconds\",\"startValue\":0,"
	                               "\"endValue\":3000,\n"
	                               "\"samples\":[\n[0,1,2]],\n"
	                               "\"weights\":[3000]}\n"
	                               "]}\n");
	/* writing again gives the same document */
	char *again = write_all(speedscope);
	ck_assert_str_eq(again, text);
	free(again);
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

/* The name of the one profile a sample of "my app" (pid 7, tid 8) goes
 * to with per. */
static void check_profile_name(enum ps_speedscope_per per, const char *name, const char *want)
{
	struct ps_speedscope_opts opts = { .per = per, .name = name };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text, expected[128];

	fake_init(&f, "my app", 7, 8, 1, 1);
	frame(&f, "main", NULL);
	add(speedscope, &f);
	text = write_all(speedscope);
	snprintf(expected, sizeof(expected), "\"name\":\"%s\",", want);
	ck_assert_msg(strstr(text, expected), "no profile %s in %s", expected, text);
	ck_assert_msg(strstr(text, "\"type\":\"sampled\",") != NULL, "%s", text);
	free(text);
	ps_speedscope_close(speedscope);
}

START_TEST(profile_names)
{
	check_profile_name(PS_SPEEDSCOPE_PER_TID, NULL, "my app pid: 7 tid: 8");
	check_profile_name(PS_SPEEDSCOPE_PER_PID, NULL, "my app pid: 7");
	check_profile_name(PS_SPEEDSCOPE_PER_COMM, NULL, "my app");
	check_profile_name(PS_SPEEDSCOPE_PER_NONE, NULL, "all samples");
	check_profile_name(PS_SPEEDSCOPE_PER_NONE, "x.data", "x.data");
}
END_TEST

START_TEST(per_process_and_none)
{
	struct ps_speedscope_opts opts = { .per = PS_SPEEDSCOPE_PER_PID };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text;

	for (uint32_t tid = 1; tid <= 3; tid++) {
		fake_init(&f, "app", 1, tid, 5, tid);
		frame(&f, "main", NULL);
		add(speedscope, &f);
	}
	fake_init(&f, "other", 2, 2, 5, 9);
	frame(&f, "main", NULL);
	add(speedscope, &f);
	text = write_all(speedscope);
	/* the threads of a process are one profile, samples one weight each */
	ck_assert_msg(strstr(text, "\"name\":\"app pid: 1\",\"unit\":\"none\",\"startValue\":0,"
	                           "\"endValue\":3,\n\"samples\":[\n[0],\n[0],\n[0]],\n"
	                           "\"weights\":[1,1,1]}") != NULL,
	              "%s", text);
	ck_assert_msg(strstr(text, "\"name\":\"other pid: 2\",") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "\"activeProfileIndex\":0,") != NULL, "%s", text);
	/* no file for a frame without DSO */
	ck_assert_msg(strstr(text, "{\"name\":\"main\"}\n") != NULL, "%s", text);
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

START_TEST(units)
{
	struct ps_speedscope_opts opts = { .period = true };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text;

	/* task-clock counts nanoseconds too */
	fake_init(&f, "app", 1, 1, 250, 1);
	f.attr.config = PERF_COUNT_SW_TASK_CLOCK;
	frame(&f, "main", NULL);
	add(speedscope, &f);
	text = write_all(speedscope);
	ck_assert_msg(strstr(text, "\"unit\":\"nanoseconds\"") != NULL, "%s", text);
	free(text);
	/* one sample of another event: the weights are no time any more */
	fake_init(&f, "app", 1, 1, 100000, 2);
	f.attr.type = PERF_TYPE_HARDWARE;
	f.attr.config = PERF_COUNT_HW_CPU_CYCLES;
	frame(&f, "main", NULL);
	add(speedscope, &f);
	text = write_all(speedscope);
	ck_assert_msg(strstr(text, "\"unit\":\"none\",\"startValue\":0,\"endValue\":100250,") !=
	                      NULL,
	              "%s", text);
	ck_assert_msg(strstr(text, "\"weights\":[250,100000]}") != NULL, "%s", text);
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

START_TEST(frames_of_every_kind)
{
	struct ps_speedscope_opts opts = { .srcline = true };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct ps_frame *fr;
	struct fake f;
	char *text;

	fake_init(&f, "python3", 1, 1, 1, 1);
	frame(&f, "[truncated]", NULL)->truncated = true;
	frame(&f, "do_syscall_64", KERNEL);
	frame(&f, NULL, NULL); /* [unknown] */
	frame(&f, NULL, "/lib/libx.so"); /* [unknown] in a DSO */
	fr = frame(&f, "sin", "/lib/libm.so.6");
	fr->srcline = "s_sin.c:207";
	fr = frame(&f, "inlined_one", "/lib/libm.so.6");
	fr->inlined = true;
	fr->srcline = "??:0"; /* no line: the DSO stays the file */
	frame(&f, "py::Shape.area:/srv/app/shapes.py", "/tmp/perf-1.map");
	frame(&f, "py::<module>", "/tmp/perf-1.map"); /* no file after the name */
	add(speedscope, &f);
	text = write_all(speedscope);
	ck_assert_str_eq(text, HEAD EXPORTER
	                 "\"activeProfileIndex\":0,\n"
	                 "\"shared\":{\"frames\":[\n"
	                 "{\"name\":\"<module>\"},\n"
	                 "{\"name\":\"Shape.area\",\"file\":\"/srv/app/shapes.py\"},\n"
	                 "{\"name\":\"inlined_one\",\"file\":\"/lib/libm.so.6\"},\n"
	                 "{\"name\":\"sin\",\"file\":\"s_sin.c\",\"line\":207},\n"
	                 "{\"name\":\"[unknown]\",\"file\":\"/lib/libx.so\"},\n"
	                 "{\"name\":\"[unknown]\"},\n"
	                 "{\"name\":\"do_syscall_64\",\"file\":\"[kernel.kallsyms]\"},\n"
	                 "{\"name\":\"[truncated]\"}\n"
	                 "]},\n"
	                 "\"profiles\":[\n"
	                 "{\"type\":\"sampled\",\"name\":\"python3 pid: 1 tid: 1\","
	                 "\"unit\":\"none\",\"startValue\":0,\"endValue\":1,\n"
	                 "\"samples\":[\n[0,1,2,3,4,5,6,7]],\n"
	                 "\"weights\":[1]}\n"
	                 "]}\n");
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

START_TEST(frames_shared_and_distinct)
{
	struct ps_speedscope_opts opts = { 0 };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text;

	/* the same name in two DSOs is two frames; the same frame in two
	 * threads is one */
	fake_init(&f, "a", 1, 1, 1, 1);
	frame(&f, "init", "/lib/one.so");
	frame(&f, "init", "/lib/two.so");
	add(speedscope, &f);
	fake_init(&f, "b", 2, 2, 1, 1);
	frame(&f, "init", "/lib/two.so");
	add(speedscope, &f);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->frames, 2);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->stacks, 2);
	text = write_all(speedscope);
	ck_assert_msg(strstr(text, "\"samples\":[\n[0,1]],") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "\"samples\":[\n[0]],") != NULL, "%s", text);
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

START_TEST(time_order)
{
	struct ps_speedscope_opts opts = { .period = true };
	struct ps_speedscope *speedscope = open_writer(&opts);
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	/* arrival order; c and d share a time and keep their order */
	static const uint64_t times[] = { 50, 10, 30, 30, 20 };
	struct fake f;
	char *text;

	for (size_t i = 0; i < 5; i++) {
		fake_init(&f, "app", 1, 1, i + 1, times[i]);
		frame(&f, names[i], NULL);
		add(speedscope, &f);
	}
	text = write_all(speedscope);
	/* frames in order of first appearance: a=0 b=1 c=2 d=3 e=4; samples
	 * by time: b(10) e(20) c(30) d(30) a(50) */
	ck_assert_msg(strstr(text, "\"samples\":[\n[1],\n[4],\n[2],\n[3],\n[0]],\n"
	                           "\"weights\":[2,5,3,4,1]}") != NULL,
	              "%s", text);
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

/* One JSON string as the writer escapes it. */
static void check_escape(const char *raw, size_t len, const char *want)
{
	struct ps_strbuf out = PS_STRBUF_INIT;

	ps_speedscope_add_json_string(&out, raw, len);
	ps_strbuf_addstr(&out, "");
	ck_assert(!ps_strbuf_failed(&out));
	ck_assert_msg(strcmp(out.buf, want) == 0, "escaped %zu bytes as %s, want %s", len, out.buf,
	              want);
	ps_strbuf_release(&out);
}

#define ESCAPE(raw, want) check_escape(raw, sizeof(raw) - 1, want)

START_TEST(json_escapes)
{
	ESCAPE("", "\"\"");
	ESCAPE("plain name::x<y>", "\"plain name::x<y>\"");
	ESCAPE("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	ESCAPE("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
	ESCAPE("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	/* a NUL inside the given length */
	check_escape("a\0b", 3, "\"a\\u0000b\"");
	/* well-formed UTF-8 of 2, 3 and 4 bytes stays as it is */
	ESCAPE("\xc3\xa9\xe2\x82\xac\xf0\x9f\x90\x8d", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x90\x8d\"");
	ESCAPE("\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf",
	       "\"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\"");
	/* line and paragraph separators */
	ESCAPE("\xe2\x80\xa8|\xe2\x80\xa9", "\"\\u2028|\\u2029\"");
	/* malformed: a U+FFFD per byte that starts no well-formed sequence */
	ESCAPE("\x80", "\"\\ufffd\"");
	ESCAPE("\xbf\xc0\xc1\xf5\xff", "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ESCAPE("\xc0\xaf", "\"\\ufffd\\ufffd\""); /* overlong '/' */
	ESCAPE("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""); /* overlong */
	ESCAPE("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ESCAPE("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate */
	ESCAPE("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
	ESCAPE("x\xe2\x82", "\"x\\ufffd\\ufffd\""); /* cut at the end */
	ESCAPE("\xe2\x82x", "\"\\ufffd\\ufffdx\"");
	ESCAPE("\xc3\x22", "\"\\ufffd\\\"\""); /* a quote where a continuation belongs */
}
END_TEST

START_TEST(hostile_names)
{
	struct ps_speedscope_opts opts = { .name = "cap\"\n.data" };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text;

	fake_init(&f, "evil\"\x01\xff", 1, 1, 1, 1);
	frame(&f, "sym\\\"\n\xc0", "/tmp/\"x\"\t.so");
	frame(&f, "py::q\x1b:/srv/\xe2\x80\xa8.py", NULL);
	add(speedscope, &f);
	text = write_all(speedscope);
	ck_assert_msg(strstr(text, "\"name\":\"cap\\\"\\n.data\",") != NULL, "%s", text);
	ck_assert_msg(strstr(text, "\"name\":\"evil\\\"\\u0001\\ufffd pid: 1 tid: 1\",") != NULL,
	              "%s", text);
	ck_assert_msg(strstr(text, "{\"name\":\"sym\\\\\\\"\\n\\ufffd\","
	                           "\"file\":\"/tmp/\\\"x\\\"\\t.so\"}") != NULL,
	              "%s", text);
	ck_assert_msg(strstr(text, "{\"name\":\"q\\u001b\",\"file\":\"/srv/\\u2028.py\"}") != NULL,
	              "%s", text);
	/* nothing outside printable ASCII but well-formed UTF-8 reaches the
	 * document, and no raw control byte */
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		ck_assert_msg(*c == '\n' || (*c >= 0x20 && *c < 0x7f), "byte 0x%02x at %zu", *c,
		              (size_t)(c - (const unsigned char *)text));
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

START_TEST(empty_and_no_callchain)
{
	struct ps_speedscope_opts opts = { 0 };
	struct ps_speedscope *speedscope = open_writer(&opts);
	struct fake f;
	char *text;

	text = write_all(speedscope);
	ck_assert_str_eq(text, HEAD EXPORTER "\"activeProfileIndex\":0,\n"
	                                     "\"shared\":{\"frames\":[\n]},\n"
	                                     "\"profiles\":[\n]}\n");
	free(text);
	/* without a call chain only the sampled IP counts; an empty stack is
	 * a sample of the profile's root */
	fake_init(&f, "app", 1, 1, 1, 1);
	f.stack.has_callchain = false;
	frame(&f, "leaf", NULL);
	frame(&f, "not_shown", NULL);
	add(speedscope, &f);
	fake_init(&f, "app", 1, 1, 1, 2);
	add(speedscope, &f);
	text = write_all(speedscope);
	ck_assert_msg(strstr(text, "\"shared\":{\"frames\":[\n{\"name\":\"leaf\"}\n]},") != NULL,
	              "%s", text);
	ck_assert_msg(strstr(text, "\"samples\":[\n[0],\n[]],\n\"weights\":[1,1]}") != NULL, "%s",
	              text);
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

START_TEST(bad_opts_and_failing_writes)
{
	struct ps_speedscope_opts opts = { 0 };
	struct ps_speedscope *speedscope = (void *)1;
	struct fake f;

	ck_assert_int_eq(ps_speedscope_open(&opts, &speedscope), -EINVAL); /* sz 0 */
	ck_assert_ptr_null(speedscope);
	opts.sz = sizeof(opts);
	opts.per = (enum ps_speedscope_per)4;
	ck_assert_int_eq(ps_speedscope_open(&opts, &speedscope), -EINVAL);
	ck_assert_int_eq(ps_speedscope_open(NULL, &speedscope), 0);
	fake_init(&f, "app", 1, 1, 1, 1);
	frame(&f, "main", NULL);
	add(speedscope, &f);
	ck_assert_int_eq(ps_speedscope_write(speedscope, capture_fails, NULL), -EIO);
	ps_speedscope_close(speedscope);
	ps_speedscope_close(NULL);
}
END_TEST

START_TEST(many_samples)
{
	struct ps_speedscope_opts opts = { .per = PS_SPEEDSCOPE_PER_TID };
	struct ps_speedscope *speedscope = open_writer(&opts);
	char names[64][16];
	size_t nr_lines = 0;
	struct fake f;
	char *text;

	for (size_t i = 0; i < 64; i++)
		snprintf(names[i], sizeof(names[i]), "fn%zu", i);
	/* 200,000 samples over 5 threads, 4,096 stacks of 64 frames */
	for (size_t i = 0; i < 200000; i++) {
		fake_init(&f, "app", 1, 1 + (uint32_t)(i % 5), 1, i);
		frame(&f, names[i % 64], NULL);
		frame(&f, names[(i / 64) % 64], NULL);
		frame(&f, "main", NULL);
		add(speedscope, &f);
	}
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->nr_added, 200000);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->profiles, 5);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->stacks, 4096);
	ck_assert_uint_eq(ps_speedscope_stats(speedscope)->frames, 65);
	text = write_all(speedscope);
	/* by hand: ASan's strstr() measures the whole rest of the text at
	 * each call */
	for (const char *c = text; *c; c++)
		nr_lines += c[0] == '\n' && c[1] == '[';
	ck_assert_uint_eq(nr_lines, 200000);
	ck_assert_msg(strstr(text, "\"endValue\":40000,") != NULL, "no profile of 40000 samples");
	free(text);
	ps_speedscope_close(speedscope);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("speedscope");
	TCase *tc = tcase_create("speedscope");
	SRunner *runner;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, two_threads);
	tcase_add_test(tc, profile_names);
	tcase_add_test(tc, per_process_and_none);
	tcase_add_test(tc, units);
	tcase_add_test(tc, frames_of_every_kind);
	tcase_add_test(tc, frames_shared_and_distinct);
	tcase_add_test(tc, time_order);
	tcase_add_test(tc, json_escapes);
	tcase_add_test(tc, hostile_names);
	tcase_add_test(tc, empty_and_no_callchain);
	tcase_add_test(tc, bad_opts_and_failing_writes);
	tcase_add_test(tc, many_samples);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
