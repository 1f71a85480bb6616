/* Unit tests of the merger (src/python/merge.c): synthetic native stacks,
 * leaf first, one table row per case, with the expected output of each
 * mode written as "frame | frame | ...". Native mode must always give the
 * input back. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/python_priv.h"

/* ---- how frames are written in the table ----------------------------- */

/* a frame outside the interpreter (libc, an extension module, main's DSO) */
#define C(text)                                                                                    \
	{                                                                                          \
		.sym = text                                                                        \
	}
/* a frame in libpython (or the interpreter binary) */
#define LIB(text)                                                                                  \
	{                                                                                          \
		.sym = text, .in_interpreter = true                                                \
	}
#define LIB_UNKNOWN                                                                                \
	{                                                                                          \
		.sym = NULL, .in_interpreter = true                                                \
	}
#define UNKNOWN                                                                                    \
	{                                                                                          \
		.sym = NULL                                                                        \
	}
#define EVAL                                                                                       \
	{                                                                                          \
		.sym = "_PyEval_EvalFrameDefault", .eval = PS_PY_EVAL_MAIN, .in_interpreter = true \
	}
#define CLONE(suffix)                                                                              \
	{                                                                                          \
		.sym = "_PyEval_EvalFrameDefault" suffix, .eval = PS_PY_EVAL_CLONE,                \
		.in_interpreter = true                                                             \
	}
/* a -X perf trampoline frame from the perf map */
#define TRAMPOLINE(text)                                                                           \
	{                                                                                          \
		.sym = NULL, .python_name = text                                                   \
	}
#define EVALUATOR LIB("py_trampoline_evaluator")

#define NATIVE(...)                                                                                \
	.native = (const struct ps_py_native_frame[]){ __VA_ARGS__ },                              \
	.nr_native = sizeof((const struct ps_py_native_frame[]){ __VA_ARGS__ }) /                  \
	             sizeof(struct ps_py_native_frame)

struct merge_case {
	const char *title;
	bool truncated;
	const struct ps_py_native_frame *native;
	size_t nr_native;
	/* expected output; NULL: not checked */
	const char *merged, *all, *only;
	size_t activations, matched; /* checked when merged is */
};

/* The startup part of a python3 process, root end. */
#define STARTUP C("main"), C("__libc_start_main"), C("_start")

static const struct merge_case cases[] = {
	{
	        .title = "trampolines (-X perf): each py:: frame is the caller of its eval",
	        NATIVE(LIB("long_add"), LIB("PyNumber_Add"), EVAL, TRAMPOLINE("py::f:a.py"),
	               EVALUATOR, LIB("_PyEval_Vector"), LIB("PyObject_Vectorcall"), EVAL,
	               TRAMPOLINE("py::<module>:a.py"), EVALUATOR, LIB("PyEval_EvalCode"),
	               LIB("run_eval_code_obj"), LIB("run_mod"), STARTUP),
	        .merged = "long_add | PyNumber_Add | py::f:a.py | py::<module>:a.py | "
	                  "run_eval_code_obj | run_mod | main | __libc_start_main | _start",
	        .all = "long_add | PyNumber_Add | _PyEval_EvalFrameDefault | py::f:a.py | "
	               "py_trampoline_evaluator | _PyEval_Vector | PyObject_Vectorcall | "
	               "_PyEval_EvalFrameDefault | py::<module>:a.py | py_trampoline_evaluator | "
	               "PyEval_EvalCode | run_eval_code_obj | run_mod | main | "
	               "__libc_start_main | _start",
	        .only = "py::f:a.py | py::<module>:a.py",
	        .activations = 2,
	        .matched = 2,
	},
	{
	        .title = "unwinding cut at the first trampoline",
	        .truncated = true,
	        NATIVE(LIB("long_add"), EVAL, TRAMPOLINE("py::leaf:a.py")),
	        .merged = "long_add | py::leaf:a.py | [truncated]",
	        .all = "long_add | _PyEval_EvalFrameDefault | py::leaf:a.py | [truncated]",
	        .only = "py::leaf:a.py | [truncated]",
	        .activations = 1,
	        .matched = 1,
	},
	{
	        .title = "an eval called without a trampoline (none compiled for it): its marker",
	        NATIVE(EVAL, LIB("_PyEval_Vector"), LIB("PyObject_Vectorcall"), EVAL,
	               TRAMPOLINE("py::g:a.py"), EVALUATOR, LIB("PyEval_EvalCode"), LIB("run_mod"),
	               STARTUP),
	        .merged = "[python: unnamed] | py::g:a.py | run_mod | main | __libc_start_main | "
	                  "_start",
	        .all = "_PyEval_EvalFrameDefault | _PyEval_Vector | PyObject_Vectorcall | "
	               "_PyEval_EvalFrameDefault | py::g:a.py | py_trampoline_evaluator | "
	               "PyEval_EvalCode | run_mod | main | __libc_start_main | _start",
	        .only = "[python: unnamed] | py::g:a.py",
	        .activations = 2,
	        .matched = 1,
	},
	{
	        .title = "trampolines turned on while running: the frames already running are one "
	                 "marker, the machinery around it dropped",
	        NATIVE(LIB("long_add"), EVAL, TRAMPOLINE("py::f:a.py"), EVALUATOR,
	               LIB("_PyFunction_Vectorcall"), EVAL, LIB("_PyEval_Vector"),
	               LIB("PyEval_EvalCode"), LIB("run_eval_code_obj"), LIB("run_mod"), STARTUP),
	        .merged =
	                "long_add | py::f:a.py | [python: unnamed] | run_eval_code_obj | run_mod | "
	                "main | __libc_start_main | _start",
	        .only = "py::f:a.py | [python: unnamed]",
	        .activations = 2,
	        .matched = 1,
	},
	{
	        .title = "trampolines off: extension frames between markers stay",
	        NATIVE(LIB("list_append"), EVAL, LIB("_PyObject_Call"), C("ext_callback"),
	               LIB("PyObject_Call"), CLONE(".cold"), EVAL, LIB("PyEval_EvalCode"),
	               LIB("run_mod"), STARTUP),
	        .merged = "list_append | [python: unnamed] | ext_callback | [python: unnamed] | "
	                  "run_mod | main | __libc_start_main | _start",
	        .all = "list_append | _PyEval_EvalFrameDefault | _PyObject_Call | ext_callback | "
	               "PyObject_Call | _PyEval_EvalFrameDefault.cold | _PyEval_EvalFrameDefault | "
	               "PyEval_EvalCode | run_mod | main | __libc_start_main | _start",
	        .only = "[python: unnamed] | [python: unnamed]",
	        .activations = 2,
	        .matched = 0,
	},
	{
	        .title = "markers alone, truncated",
	        .truncated = true,
	        NATIVE(EVAL, LIB("_PyEval_Vector")),
	        .merged = "[python: unnamed] | [truncated]",
	        .all = "_PyEval_EvalFrameDefault | _PyEval_Vector | [truncated]",
	        .only = "[python: unnamed] | [truncated]",
	        .activations = 1,
	        .matched = 0,
	},
	{
	        .title = "a .cold clone alone is the activation",
	        NATIVE(CLONE(".cold"), TRAMPOLINE("py::f:a.py"), EVALUATOR, LIB("_PyEval_Vector"),
	               EVAL, TRAMPOLINE("py::g:a.py"), C("main")),
	        .merged = "py::f:a.py | py::g:a.py | main",
	        .activations = 2,
	        .matched = 2,
	},
	{
	        .title = ".part clone next to its parent: one activation",
	        NATIVE(C("ext_leaf"), CLONE(".part.0"), EVAL, TRAMPOLINE("py::f:a.py"),
	               C("ext_mid"), EVAL, TRAMPOLINE("py::g:a.py"), C("main")),
	        .merged = "ext_leaf | py::f:a.py | ext_mid | py::g:a.py | main",
	        .all = "ext_leaf | _PyEval_EvalFrameDefault.part.0 | _PyEval_EvalFrameDefault | "
	               "py::f:a.py | ext_mid | _PyEval_EvalFrameDefault | py::g:a.py | main",
	        .activations = 2,
	        .matched = 2,
	},
	{
	        .title = "two adjacent main eval frames are two activations",
	        NATIVE(EVAL, EVAL, TRAMPOLINE("py::g:a.py"), C("main")),
	        .merged = "[python: unnamed] | py::g:a.py | main",
	        .activations = 2,
	        .matched = 1,
	},
	{
	        .title = "between Python frames: extension and unknown non-libpython frames stay",
	        NATIVE(EVAL, TRAMPOLINE("py::cb:a.py"), LIB_UNKNOWN, C("__pyx_pw_mod_func"),
	               UNKNOWN, C("PyArray_Sum"), LIB("PyObject_Call"), LIB("slot_tp_call"), EVAL,
	               TRAMPOLINE("py::<module>:a.py"), EVALUATOR, C("main")),
	        .merged = "py::cb:a.py | __pyx_pw_mod_func | [unknown] | PyArray_Sum | "
	                  "py::<module>:a.py | main",
	        .activations = 2,
	        .matched = 2,
	},
	{
	        .title = "a thread: the bootstrap below the root-most frame's caller stays",
	        NATIVE(LIB("time_sleep"), EVAL, TRAMPOLINE("py::run:threading.py"), EVALUATOR,
	               LIB("_PyEval_Vector"), LIB("_PyObject_VectorcallTstate"), LIB("thread_run"),
	               LIB("pythread_wrapper"), C("start_thread"), C("clone3")),
	        .merged = "time_sleep | py::run:threading.py | thread_run | pythread_wrapper | "
	                  "start_thread | clone3",
	        .activations = 1,
	        .matched = 1,
	},
	{
	        .title = "no Python frames (an interpreter without perf support): a marker",
	        NATIVE(LIB("PyNumber_Add"), EVAL, LIB("_PyEval_Vector"), C("main")),
	        .merged = "PyNumber_Add | [python: unnamed] | main",
	        .all = "PyNumber_Add | _PyEval_EvalFrameDefault | _PyEval_Vector | main",
	        .only = "[python: unnamed]",
	        .activations = 1,
	        .matched = 0,
	},
	{
	        .title = "no Python frames, truncated: only the marker is added",
	        .truncated = true,
	        NATIVE(C("f"), C("g")),
	        .merged = "f | g | [truncated]",
	        .all = "f | g | [truncated]",
	        .only = "",
	},
};

/* ---- running a case -------------------------------------------------- */

static void describe(const struct ps_py_merge_result *result, char *text, size_t size)
{
	size_t used = 0;

	text[0] = '\0';
	for (size_t i = 0; i < result->nr_frames && used < size; i++) {
		const char *name = result->frames[i].name ? result->frames[i].name : "[unknown]";

		used += (size_t)snprintf(text + used, size - used, "%s%s", i ? " | " : "", name);
	}
}

/* ps_py_merge() on a copy of the input whose frames carry what the
 * caller classifies by name (ps_python_merge() does it in the pipeline). */
static int merge(struct ps_py_merger *merger, const struct ps_py_merge_input *input,
                 enum ps_python_mode mode, struct ps_py_merge_result *result)
{
	static struct ps_py_native_frame *copy;
	static size_t cap;
	struct ps_py_merge_input classified;

	if (!input || !input->native)
		return ps_py_merge(merger, input, mode, result);
	if (input->nr_native > cap) {
		free(copy);
		cap = input->nr_native;
		copy = calloc(cap, sizeof(*copy));
		ck_assert_ptr_nonnull(copy);
	}
	for (size_t i = 0; i < input->nr_native; i++) {
		copy[i] = input->native[i];
		copy[i].internal = copy[i].sym && ps_py_is_internal_name(copy[i].sym);
	}
	classified = *input;
	classified.native = copy;
	return ps_py_merge(merger, &classified, mode, result);
}

static void check_mode(struct ps_py_merger *merger, const struct merge_case *c,
                       enum ps_python_mode mode, const char *expected)
{
	struct ps_py_merge_input input = {
		.native = c->native,
		.nr_native = c->nr_native,
		.native_truncated = c->truncated,
	};
	struct ps_py_merge_result result;
	char text[4096];

	ck_assert_int_eq(merge(merger, &input, mode, &result), 0);
	if (mode == PS_PYTHON_NATIVE) {
		ck_assert_uint_eq(result.nr_frames, c->nr_native);
		for (size_t i = 0; i < c->nr_native; i++) {
			ck_assert_int_eq(result.frames[i].kind, PS_PY_OUT_NATIVE);
			ck_assert_uint_eq(result.frames[i].index, i);
		}
		return;
	}
	if (!expected)
		return;
	describe(&result, text, sizeof(text));
	ck_assert_msg(!strcmp(text, expected), "%s (mode %d):\n  got      %s\n  expected %s",
	              c->title, (int)mode, text, expected);
	if (mode == PS_PYTHON_MERGED) {
		ck_assert_msg(result.nr_activations == c->activations, "%s: %zu activations",
		              c->title, result.nr_activations);
		ck_assert_msg(result.nr_matched == c->matched, "%s: %zu matched", c->title,
		              result.nr_matched);
	}
}

START_TEST(test_case)
{
	const struct merge_case *c = &cases[_i];
	struct ps_py_merger *merger;

	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	check_mode(merger, c, PS_PYTHON_MERGED, c->merged);
	check_mode(merger, c, PS_PYTHON_ALL, c->all);
	check_mode(merger, c, PS_PYTHON_ONLY, c->only);
	check_mode(merger, c, PS_PYTHON_NATIVE, NULL);
	ps_py_merger_free(merger);
}
END_TEST

/* ---- output details -------------------------------------------------- */

START_TEST(test_output_frames)
{
	static const struct ps_py_native_frame native[] = {
		C("ext"),
		EVAL,
		TRAMPOLINE("py::f:a.py"),
		C("main"),
	};
	struct ps_py_merge_input input = { .native = native,
		                           .nr_native = 4,
		                           .native_truncated = true };
	struct ps_py_merge_result result;
	struct ps_py_merger *merger;

	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_MERGED, &result), 0);
	ck_assert(result.trampolines);
	ck_assert_uint_eq(result.nr_frames, 4);
	ck_assert_int_eq(result.frames[0].kind, PS_PY_OUT_NATIVE);
	ck_assert(!result.frames[0].is_python);
	/* a trampoline is a native frame printed as a Python one */
	ck_assert_int_eq(result.frames[1].kind, PS_PY_OUT_NATIVE);
	ck_assert_uint_eq(result.frames[1].index, 2);
	ck_assert(result.frames[1].is_python);
	ck_assert_str_eq(result.frames[1].name, "py::f:a.py");
	ck_assert_int_eq(result.frames[3].kind, PS_PY_OUT_TRUNCATED);
	ck_assert_str_eq(result.frames[3].name, "[truncated]");

	/* without the trampoline the activation is a marker; in all mode
	 * every frame is native */
	input.native = (const struct ps_py_native_frame[]){ C("ext"), EVAL, C("main") };
	input.nr_native = 3;
	input.native_truncated = false;
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_MERGED, &result), 0);
	ck_assert(!result.trampolines);
	ck_assert_uint_eq(result.nr_frames, 3);
	ck_assert_int_eq(result.frames[1].kind, PS_PY_OUT_UNNAMED);
	ck_assert_uint_eq(result.frames[1].index, 1);
	ck_assert_str_eq(result.frames[1].name, "[python: unnamed]");
	ck_assert(!result.frames[1].is_python);
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_ALL, &result), 0);
	ck_assert_uint_eq(result.nr_frames, 3);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(result.frames[i].kind, PS_PY_OUT_NATIVE);
		ck_assert_uint_eq(result.frames[i].index, i);
		ck_assert(!result.frames[i].is_python);
	}
	ps_py_merger_free(merger);
}
END_TEST

START_TEST(test_big_stack)
{
	enum { DEPTH = 3000 };
	struct ps_py_native_frame *native = calloc(3 * DEPTH + 1, sizeof(*native));
	struct ps_py_merge_input input = { .native = native, .nr_native = 3 * DEPTH + 1 };
	struct ps_py_merge_result result;
	struct ps_py_merger *merger;

	ck_assert_ptr_nonnull(native);
	for (size_t i = 0; i < DEPTH; i++) {
		native[3 * i] = (struct ps_py_native_frame)EVAL;
		native[3 * i + 1] = (struct ps_py_native_frame)TRAMPOLINE("py::recurse:a.py");
		native[3 * i + 2] = (struct ps_py_native_frame)EVALUATOR;
	}
	native[3 * DEPTH] = (struct ps_py_native_frame)C("main");
	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(merge(merger, &input, PS_PYTHON_MERGED, &result), 0);
		ck_assert_uint_eq(result.nr_matched, DEPTH);
		ck_assert_uint_eq(result.nr_frames, DEPTH + 1);
		ck_assert_str_eq(result.frames[DEPTH].name, "main");
	}
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_ALL, &result), 0);
	ck_assert_uint_eq(result.nr_frames, 3 * DEPTH + 1);
	ps_py_merger_free(merger);
	free(native);
}
END_TEST

START_TEST(test_invalid)
{
	struct ps_py_merge_input input = { .nr_native = 1 };
	struct ps_py_merge_result result;
	struct ps_py_merger *merger;

	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_MERGED, &result), -EINVAL);
	input.nr_native = 0;
	ck_assert_int_eq(merge(merger, &input, (enum ps_python_mode)7, &result), -EINVAL);
	ck_assert_int_eq(merge(NULL, &input, PS_PYTHON_MERGED, &result), -EINVAL);
	ck_assert_int_eq(merge(merger, NULL, PS_PYTHON_MERGED, &result), -EINVAL);
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_MERGED, NULL), -EINVAL);
	/* empty in, empty out */
	ck_assert_int_eq(merge(merger, &input, PS_PYTHON_ALL, &result), 0);
	ck_assert_uint_eq(result.nr_frames, 0);
	ps_py_merger_free(merger);
	ps_py_merger_free(NULL);
}
END_TEST

/* ---- recorded call chains that break ---------------------------------- */

START_TEST(test_chain_breaks)
{
	const char *lib = "/usr/lib/libsqlite3.so.0", *map = "/tmp/perf-7.map";
	/* leaf first: a Python callback called from a library built without
	 * frame pointers, whose caller the walk read as garbage */
	struct ps_frame broken[] = {
		{ .sym = "py::cb:/app.py", .dso = map, .python = true },
		{ .sym = "func_callback", .dso = "/usr/lib/_sqlite3.so" },
		{ .sym = "sqlite3VdbeExec", .dso = lib },
		{ .addr = 0x7f5e205b7040 },
		{ .addr = 0 },
	};
	struct ps_frame whole[] = {
		{ .addr = 0x7f00 }, /* the sampled IP, in no mapping: still whole */
		{ .sym = "py::run:/app.py", .dso = map, .python = true },
		{ .sym = "__libc_start_call_main", .dso = "/usr/lib/libc.so.6" },
	};
	bool cut = false;

	ck_assert_uint_eq(ps_python_chain_before_break(broken, 5, &cut), 3);
	ck_assert(cut);
	cut = false;
	ck_assert_uint_eq(ps_python_chain_before_break(whole, 3, &cut), 3);
	ck_assert(!cut);
	ck_assert_uint_eq(ps_python_chain_before_break(whole, 0, &cut), 0);
	ck_assert(!cut);
}
END_TEST

/* A frame-pointer walk that stops without garbage: whole only when it
 * ends where a process or thread is entered. */
START_TEST(test_chain_roots)
{
	const char *libc = "/usr/lib/libc.so.6", *map = "/tmp/perf-7.map";
	struct ps_frame main_thread[] = {
		{ .sym = "py::run:/app.py", .dso = map, .python = true },
		{ .sym = "main", .dso = "/usr/bin/python3.14" },
		{ .sym = "__libc_start_call_main", .dso = libc },
	};
	struct ps_frame thread[] = {
		{ .sym = "py::work:/app.py", .dso = map, .python = true },
		{ .sym = "start_thread", .dso = libc },
		{ .sym = "clone3", .dso = libc },
	};
	/* a futex wait in libc, built without frame pointers: the walk
	 * stopped at once */
	struct ps_frame stopped[] = {
		{ .sym = "__futex_abstimed_wait_common", .dso = libc },
		{ .sym = "__pthread_cond_wait", .dso = libc },
	};
	struct ps_frame unknown[] = { { .addr = 0x7f00 } };

	ck_assert(ps_python_chain_reaches_root(main_thread, 3));
	ck_assert(ps_python_chain_reaches_root(thread, 3));
	ck_assert(ps_python_chain_reaches_root(thread, 0));
	ck_assert(!ps_python_chain_reaches_root(main_thread, 2));
	ck_assert(!ps_python_chain_reaches_root(stopped, 2));
	ck_assert(!ps_python_chain_reaches_root(unknown, 1));
}
END_TEST

/* ---- names ----------------------------------------------------------- */

START_TEST(test_internal_names)
{
	static const struct {
		const char *name;
		bool internal;
	} names[] = {
		{ "_PyEval_EvalFrameDefault", true },
		{ "_PyEval_Vector", true },
		{ "PyObject_Call", true },
		{ "PyObject_Vectorcall", true },
		{ "Py_RunMain", true },
		{ "py_trampoline_evaluator", true },
		{ "method_vectorcall_O", true },
		{ "cfunction_call", true },
		{ "cfunction_vectorcall_FASTCALL_KEYWORDS", true },
		{ "slot_tp_call", true },
		{ "vectorcall_method", true },
		{ "_TAIL_CALL_BINARY_OP.llvm.123", true },
		{ "call_function", true },
		{ "gen_send_ex2", true },
		{ "gen_iternext", true },
		{ "function_code_fastcall", true },
		{ "do_call_core", true },
		{ "object_vacall", true },
		{ "callmethod", true },
		{ "type_call", true },
		{ "_Py", true },
		{ "_P", false },
		{ "P", false },
		{ "_TAIL", false },
		{ "callme", false },
		{ "generator", false },
		{ "PyInit__socket", false },
		{ "builtin_exec", false },
		{ "run_mod", false },
		{ "long_add", false },
		{ "main", false },
		{ "__pyx_pw_4mod_1f", false },
		{ "", false },
		{ NULL, false },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(ps_py_is_internal_name(names[i].name) == names[i].internal, "%s",
		              names[i].name ? names[i].name : "NULL");
}
END_TEST

static Suite *merge_suite(void)
{
	Suite *suite = suite_create("merge");
	TCase *tc = tcase_create("cases");

	tcase_add_loop_test(tc, test_case, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_output_frames);
	tcase_add_test(tc, test_big_stack);
	tcase_add_test(tc, test_invalid);
	tcase_add_test(tc, test_internal_names);
	tcase_add_test(tc, test_chain_breaks);
	tcase_add_test(tc, test_chain_roots);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	SRunner *runner = srunner_create(merge_suite());
	int failed;

	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
