/* Unit tests of src/output/flamegraph (Check): the call tree built from
 * hand-made stacks (weights through and ending at each path, process
 * labels, frame kinds), and the SVG drawn from it: escaped and trimmed
 * names, colours by kind, --minwidth, --icicle, the same bytes from the
 * same input, an empty graph, and a writer that fails. Check's
 * environment variables pick what runs: CK_RUN_CASE, CK_VERBOSITY,
 * CK_FORK=no. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "capture.h"

struct fake {
	struct ps_event event;
	struct ps_frame frames[8];
	struct ps_stack stack;
};

/* A stack of names given leaf first; NULL names are [unknown]. Names
 * starting "py::" are Python frames, "k:" kernel ones. */
static const struct ps_stack *make_stack(struct fake *f, const char *comm, uint32_t pid,
                                         uint64_t period, size_t nr, const char *const *names)
{
	memset(f, 0, sizeof(*f));
	f->event.u.sample.pid = pid;
	f->event.u.sample.tid = pid + 1;
	f->event.u.sample.period = period;
	for (size_t i = 0; i < nr; i++) {
		f->frames[i].sym = names[i];
		f->frames[i].python = names[i] && strncmp(names[i], "py::", 4) == 0;
		f->frames[i].kernel = names[i] && strncmp(names[i], "k:", 2) == 0;
	}
	f->stack.event = &f->event;
	f->stack.comm = comm;
	f->stack.has_callchain = true;
	f->stack.nr_frames = nr;
	f->stack.frames = f->frames;
	return &f->stack;
}

static struct ps_flamegraph *open_flamegraph(struct ps_flamegraph_opts *opts)
{
	struct ps_flamegraph *fg;

	opts->sz = sizeof(*opts);
	ck_assert_int_eq(ps_flamegraph_open(opts, &fg), 0);
	return fg;
}

/* The whole SVG as one string (free it). */
static char *render(struct ps_flamegraph *fg)
{
	struct ps_strbuf all = PS_STRBUF_INIT;

	ck_assert_int_eq(ps_flamegraph_write(fg, capture_write, &all), 0);
	ck_assert(!ps_strbuf_failed(&all));
	return all.buf;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

START_TEST(tree_weights)
{
	struct ps_flamegraph_opts opts = { .per = PS_COLLAPSE_PER_NONE };
	struct ps_flamegraph *fg = open_flamegraph(&opts);
	const char *ab[] = { "b", "a" }, *a[] = { "a" }, *ac[] = { "c", "a" }, *db[] = { "b", "d" };
	const char *path_a[] = { "a" }, *path_ab[] = { "a", "b" }, *path_db[] = { "d", "b" };
	const char *path_ba[] = { "b", "a" };
	struct fake f;

	ck_assert_ptr_nonnull(fg);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 10, 2, ab)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 20, 1, a)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 30, 2, ac)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 40, 2, ab)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 50, 2, db)), 0);
	/* root, a, a;b, a;c, d, d;b: the second a;b made nothing new */
	ck_assert_uint_eq(ps_flamegraph_nr_nodes(fg), 6);
	ck_assert_uint_eq(ps_flamegraph_total(fg), 5);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_a, 1, false), 4);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_a, 1, true), 1);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_ab, 2, true), 2);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_db, 2, false), 1);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_ba, 2, false), 0);
	/* a sample added after the tree was summed is counted too */
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 60, 2, ab)), 0);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_a, 1, false), 5);
	ps_flamegraph_close(fg);

	opts.period = true;
	fg = open_flamegraph(&opts);
	ck_assert_ptr_nonnull(fg);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 10, 2, ab)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 30, 2, ac)), 0);
	ck_assert_uint_eq(ps_flamegraph_total(fg), 40);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_a, 1, false), 40);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path_ab, 2, false), 10);
	ps_flamegraph_close(fg);
}
END_TEST

START_TEST(process_labels)
{
	static const struct {
		enum ps_collapse_per per;
		const char *label;
	} cases[] = {
		{ PS_COLLAPSE_PER_COMM, "my app" },
		{ PS_COLLAPSE_PER_PID, "my app-42" },
		{ PS_COLLAPSE_PER_TID, "my app-42/43" },
	};
	const char *work[] = { "work", "main" }, *empty[] = { NULL };
	struct fake f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ps_flamegraph_opts opts = { .per = cases[i].per };
		struct ps_flamegraph *fg = open_flamegraph(&opts);
		const char *path[] = { cases[i].label, "main", "work" };
		ck_assert_ptr_nonnull(fg);
		ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "my app", 42, 1, 2, work)),
		                 0);
		ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path, 3, true), 1);
		ps_flamegraph_close(fg);
	}
	/* an empty stack is "[unknown]", as collapse counts it */
	struct ps_flamegraph_opts opts = { .per = PS_COLLAPSE_PER_NONE };
	struct ps_flamegraph *fg = open_flamegraph(&opts);
	const char *unknown[] = { "[unknown]" };
	ck_assert_ptr_nonnull(fg);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, NULL, 1, 1, 0, empty)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, NULL, 1, 1, 1, empty)), 0);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, unknown, 1, true), 2);
	ps_flamegraph_close(fg);
}
END_TEST

START_TEST(frame_kinds)
{
	struct ps_frame frame = { .sym = "f", .dso = "/usr/lib/libc.so.6" };

	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_NATIVE);
	frame.dso = "/opt/py/lib/libpython3.12.so.1.0";
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_INTERPRETER);
	frame.dso = "/usr/bin/python3.11";
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_INTERPRETER);
	frame.dso = "python3";
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_INTERPRETER);
	frame.dso = "/usr/bin/python3-config";
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_NATIVE);
	frame.dso = "/home/me/python/app";
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_NATIVE);
	frame.dso = NULL;
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_NATIVE);
	frame.sym = NULL;
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_OTHER);
	frame.kernel = true;
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_KERNEL);
	frame.python = true;
	frame.kernel = false;
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_PYTHON);
	frame.truncated = true;
	ck_assert_int_eq(ps_flame_frame_kind(&frame), PS_FLAME_OTHER);
}
END_TEST

START_TEST(svg_text)
{
	struct ps_flamegraph_opts opts = { .per = PS_COLLAPSE_PER_NONE, .title = "T&<>" };
	struct ps_flamegraph *fg = open_flamegraph(&opts);
	/* markup, a control character, invalid and valid UTF-8, and a name
	 * too long for its box */
	const char *odd[] = { "py::<lambda>:a&b.py", "bad\x01\xff\xc3(\"q\"\xc3\xa9", "k:irq" };
	/* a 4-byte character kept; an encoded surrogate, an overlong '/' and
	 * a sequence cut short replaced */
	const char *unicode[] = { "f\xf0\x9f\x94\xa5\xed\xa0\x80\xc0\xaf\xe2\x82" };
	char long_name[200];
	const char *wide[] = { long_name, NULL };
	struct fake f;
	char *svg;

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	ck_assert_ptr_nonnull(fg);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 3, odd)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 2, wide)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, unicode)), 0);
	svg = render(fg);
	ck_assert_ptr_nonnull(strstr(svg, "data-n=\"f\xf0\x9f\x94\xa5??????\x3f\""));
	/* depth 3 of 3 stacked on the root's row 112: row 64; offset 2 of 3 in
	 * 1180 px: x 796.7; where the frames before it say, so no data-o */
	ck_assert_ptr_nonnull(strstr(svg,
	                             "<rect class=\"py\" data-n=\"py::&lt;lambda&gt;:a&amp;b.py\" "
	                             "data-w=\"1\" x=\"796.7\" y=\"64\" "));
	/* \x01, \xff and a \xc3 that starts no character: 3 '?' */
	ck_assert_ptr_nonnull(
	        strstr(svg, "<rect class=\"nat\" data-n=\"bad?\?\?(&quot;q&quot;\xc3\xa9\""));
	ck_assert_ptr_nonnull(strstr(svg, "<rect class=\"root\" data-n=\"all\" data-w=\"3\""));
	ck_assert_ptr_nonnull(strstr(svg, " data-row-height=\"16\" "));
	ck_assert_ptr_nonnull(strstr(svg, ">T&amp;&lt;&gt;</text>"));
	/* the box is 393 px wide: 53 characters fit, the last two ".." */
	ck_assert_ptr_nonnull(strstr(svg, "xxx..</text>"));
	ck_assert_ptr_null(strstr(svg, "xxxxxxxx</text>"));
	/* kinds: class and colour family */
	ck_assert_ptr_nonnull(strstr(svg, "<rect class=\"k\" data-n=\"k:irq\" data-w="));
	ck_assert_ptr_nonnull(strstr(svg, "<rect class=\"oth\" data-n=\"[unknown]\" data-w="));
	/* Python frames are green: #rrggbb with g the largest */
	{
		const char *py = strstr(svg, "<rect class=\"py\"");
		const char *fill = py ? strstr(py, "fill=\"#") : NULL;
		unsigned r, g, b;
		ck_assert_ptr_nonnull(fill);
		ck_assert_int_eq(sscanf(fill, "fill=\"#%2x%2x%2x", &r, &g, &b), 3);
		ck_assert_uint_gt(g, r);
		ck_assert_uint_gt(g, b);
	}
	ck_assert_ptr_nonnull(strstr(svg, "id=\"search\""));
	ck_assert_ptr_nonnull(strstr(svg, "<script><![CDATA["));
	ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));
	ck_assert_uint_eq(count(svg, "<rect class="), 7);
	free(svg);
	ps_flamegraph_close(fg);
}
END_TEST

START_TEST(svg_layout)
{
	struct ps_flamegraph_opts opts = { .per = PS_COLLAPSE_PER_NONE, .width = 120 };
	const char *big[] = { "big" }, *small[] = { "small" }, *under[] = { "deep", "small" };
	const char *tiny[] = { "a_tiny" };
	struct ps_flamegraph *fg;
	char *svg, *again;
	struct fake f;

	/* 100 px of graph: "small" gets 1 px of 100, "deep" 0.5 px */
	fg = open_flamegraph(&opts);
	ck_assert_ptr_nonnull(fg);
	for (int i = 0; i < 198; i++)
		ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, big)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, small)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 2, under)), 0);
	svg = render(fg);
	ck_assert_uint_eq(count(svg, "<rect class="), 4);
	/* names too narrow for 3 characters get no text element: only all,
	 * big and the 4 of the legend have one */
	ck_assert_uint_eq(count(svg, "<text x="), 6);
	/* callees in name order, left to right: big at 0, small right after
	 * it, where the frames before it put it: no data-o */
	ck_assert_ptr_nonnull(strstr(svg, "data-n=\"big\" data-w=\"198\""));
	ck_assert_ptr_nonnull(strstr(svg, "data-n=\"small\" data-w=\"2\""));
	ck_assert_ptr_null(strstr(svg, "data-o="));
	/* flame: the root at the bottom (64 + 3 * 16 = 112 high, 32 below) */
	ck_assert_ptr_nonnull(strstr(svg, "height=\"144\""));
	ck_assert_ptr_nonnull(strstr(svg, "data-w=\"200\" x=\"10.0\" y=\"96\" width=\"100.0\""));
	again = render(fg);
	ck_assert_str_eq(svg, again);
	free(again);
	free(svg);
	ps_flamegraph_close(fg);

	opts.min_width = 0.75;
	opts.icicle = true;
	fg = open_flamegraph(&opts);
	ck_assert_ptr_nonnull(fg);
	for (int i = 0; i < 198; i++)
		ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, big)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, small)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 2, under)), 0);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, tiny)), 0);
	svg = render(fg);
	/* "deep" and "a_tiny" are left out; small keeps its weight of 2; big
	 * starts after a_tiny's gap, so it says where (data-o), and small
	 * after big does not */
	ck_assert_uint_eq(count(svg, "<rect class="), 3);
	ck_assert_ptr_null(strstr(svg, "data-n=\"deep"));
	ck_assert_ptr_null(strstr(svg, "data-n=\"a_tiny"));
	ck_assert_ptr_nonnull(strstr(svg, "data-n=\"big\" data-o=\"1\" data-w=\"198\""));
	ck_assert_ptr_nonnull(strstr(svg, "data-n=\"small\" data-w=\"2\""));
	/* icicle: the root on top; 2 levels drawn */
	ck_assert_ptr_nonnull(strstr(svg, "height=\"128\""));
	ck_assert_ptr_nonnull(strstr(svg, "data-w=\"201\" x=\"10.0\" y=\"64\" width=\"100.0\""));
	ck_assert_ptr_nonnull(strstr(svg, ">Icicle Graph</text>"));
	free(svg);
	ps_flamegraph_close(fg);
}
END_TEST

START_TEST(svg_empty_and_failing)
{
	struct ps_flamegraph_opts opts = { .per = PS_COLLAPSE_PER_COMM };
	struct ps_flamegraph *fg = open_flamegraph(&opts);
	const char *one[] = { "main" };
	struct fake f;
	char *svg;

	ck_assert_ptr_nonnull(fg);
	svg = render(fg);
	ck_assert_ptr_nonnull(strstr(svg, ">No samples</text>"));
	ck_assert_uint_eq(count(svg, "<g class="), 0);
	ck_assert_ptr_nonnull(strstr(svg, ">Flame Graph</text>"));
	free(svg);
	ck_assert_int_eq(ps_flamegraph_add(fg, make_stack(&f, "app", 1, 1, 1, one)), 0);
	ck_assert_int_eq(ps_flamegraph_write(fg, capture_fails, NULL), -EIO);
	ps_flamegraph_close(fg);
}
END_TEST

/* far past the first table size: every path distinct, two levels */
START_TEST(many_paths)
{
	struct ps_flamegraph_opts opts = { .per = PS_COLLAPSE_PER_PID };
	struct ps_flamegraph *fg = open_flamegraph(&opts);
	char leaf[32], mid[32];
	const char *names[] = { leaf, mid };
	const char *path[] = { "app-7", mid, leaf };
	struct fake f;

	ck_assert_ptr_nonnull(fg);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(leaf, sizeof(leaf), "leaf%d", i);
			snprintf(mid, sizeof(mid), "mid%d", i % 100);
			ck_assert_int_eq(
			        ps_flamegraph_add(fg, make_stack(&f, "app", 7, 1, 2, names)), 0);
		}
	ck_assert_uint_eq(ps_flamegraph_nr_nodes(fg), 1 + 1 + 100 + 5000);
	ck_assert_uint_eq(ps_flamegraph_total(fg), 10000);
	snprintf(leaf, sizeof(leaf), "leaf%d", 4321);
	snprintf(mid, sizeof(mid), "mid%d", 21);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path, 3, true), 2);
	ck_assert_uint_eq(ps_flamegraph_path_weight(fg, path, 2, false), 100);
	ps_flamegraph_close(fg);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("flamegraph");
	TCase *tc = tcase_create("flamegraph");
	SRunner *runner;
	int failed;

	/* a fraction of a second alone; on a loaded machine, more than
	 * check's default of 4 s */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tree_weights);
	tcase_add_test(tc, process_labels);
	tcase_add_test(tc, frame_kinds);
	tcase_add_test(tc, svg_text);
	tcase_add_test(tc, svg_layout);
	tcase_add_test(tc, svg_empty_and_failing);
	tcase_add_test(tc, many_paths);
	suite_add_tcase(suite, tc);
	runner = srunner_create(suite);
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
