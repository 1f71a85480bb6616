/* Unit tests of the merger (src/python/merge.c): synthetic native and Python
 * stacks, leaf first, one table row per case, with the expected output of
 * each mode written as "frame | frame | ...". Native mode must always give
 * the input back. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/python.h"

/* ---- how frames are written in the table ----------------------------- */

/* a frame outside the interpreter (libc, an extension module, main's DSO) */
#define C(text) { .sym = text }
/* a frame in libpython (or the interpreter binary) */
#define LIB(text) { .sym = text, .in_interpreter = true }
#define LIB_UNKNOWN { .sym = NULL, .in_interpreter = true }
#define UNKNOWN { .sym = NULL }
#define EVAL { .sym = "_PyEval_EvalFrameDefault", .eval = PS_PY_EVAL_MAIN, .in_interpreter = true }
#define EVAL_STUB(seen)                                                                  \
	{ .sym = "_PyEval_EvalFrameDefault", .eval = PS_PY_EVAL_MAIN, .in_interpreter = true, \
	  .stub = seen }
#define CLONE(suffix)                                                         \
	{ .sym = "_PyEval_EvalFrameDefault" suffix, .eval = PS_PY_EVAL_CLONE, \
	  .in_interpreter = true }
/* a -X perf trampoline frame from the perf map */
#define TRAMPOLINE(text) { .sym = NULL, .python_name = text }

#define PY(text) { .name = text }
#define ENTRY(text) { .name = text, .is_entry = true }
#define STUB { .name = NULL, .is_stub = true }

#define NATIVE(...)                                                          \
	.native = (const struct ps_py_native_frame[]){ __VA_ARGS__ },          \
	.nr_native = sizeof((const struct ps_py_native_frame[]){ __VA_ARGS__ }) / \
		     sizeof(struct ps_py_native_frame)
#define PYTHON(...)                                                          \
	.python = (const struct ps_py_python_frame[]){ __VA_ARGS__ },          \
	.nr_python = sizeof((const struct ps_py_python_frame[]){ __VA_ARGS__ }) / \
		     sizeof(struct ps_py_python_frame)

struct merge_case {
	const char *title;
	int minor; /* 3.minor */
	bool truncated;
	const struct ps_py_native_frame *native;
	size_t nr_native;
	const struct ps_py_python_frame *python;
	size_t nr_python;
	/* expected output; NULL: not checked */
	const char *merged, *all, *only;
	size_t activations, matched; /* checked when merged is */
	bool unmatched;
};

/* The startup part of a python3 process, root end. */
#define STARTUP C("main"), C("__libc_start_main"), C("_start")

static const struct merge_case cases[] = {
	{
		.title = "3.12 segments from stubs, complete stack: matched from the root",
		.minor = 12,
		NATIVE(LIB("long_add"), LIB("PyNumber_Add"), EVAL, LIB("_PyEval_Vector"),
		       LIB("_PyFunction_Vectorcall"), C("ext_func"), LIB("cfunction_call"),
		       LIB("_PyObject_MakeTpCall"), EVAL, LIB("PyEval_EvalCode"),
		       LIB("run_eval_code_obj"), LIB("run_mod"), LIB("Py_RunMain"), STARTUP),
		PYTHON(PY("py::f:a.py"), PY("py::g:a.py"), STUB, PY("py::<module>:a.py"), STUB),
		.merged = "long_add | PyNumber_Add | py::f:a.py | py::g:a.py | ext_func | "
			  "py::<module>:a.py | run_eval_code_obj | run_mod | Py_RunMain | main | "
			  "__libc_start_main | _start",
		.all = "long_add | PyNumber_Add | py::f:a.py | py::g:a.py | "
		       "_PyEval_EvalFrameDefault | _PyEval_Vector | _PyFunction_Vectorcall | "
		       "ext_func | cfunction_call | _PyObject_MakeTpCall | py::<module>:a.py | "
		       "_PyEval_EvalFrameDefault | PyEval_EvalCode | run_eval_code_obj | run_mod | "
		       "Py_RunMain | main | __libc_start_main | _start",
		.only = "py::f:a.py | py::g:a.py | py::<module>:a.py",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "eval started, stub not pushed yet: the extra leaf-most eval stays native",
		.minor = 13,
		NATIVE(EVAL, LIB("_PyEval_Vector"), LIB("PyObject_Vectorcall"), EVAL,
		       LIB("PyEval_EvalCode"), LIB("run_mod"), STARTUP),
		PYTHON(PY("py::g:a.py"), STUB),
		.merged = "_PyEval_EvalFrameDefault | _PyEval_Vector | PyObject_Vectorcall | "
			  "py::g:a.py | run_mod | main | __libc_start_main | _start",
		.only = "py::g:a.py",
		.activations = 2,
		.matched = 1,
	},
	{
		.title = "a stub at the leaf (frame 0 is a shim): an empty segment, eval kept",
		.minor = 12,
		NATIVE(EVAL, LIB("_PyEval_Vector"), EVAL, LIB("PyEval_EvalCode"), C("main")),
		PYTHON(STUB, PY("py::f:a.py"), STUB),
		.merged = "_PyEval_EvalFrameDefault | _PyEval_Vector | py::f:a.py | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "truncated stack: matched from the leaf, the rest after the marker",
		.minor = 12,
		.truncated = true,
		NATIVE(LIB("long_add"), EVAL, LIB("_PyEval_Vector"), EVAL, LIB("PyObject_Call")),
		PYTHON(PY("py::f:a.py"), STUB, PY("py::g:a.py"), STUB, PY("py::h:a.py"), STUB,
		       PY("py::<module>:a.py"), STUB),
		.merged = "long_add | py::f:a.py | py::g:a.py | [truncated] | py::h:a.py | "
			  "py::<module>:a.py",
		.all = "long_add | py::f:a.py | _PyEval_EvalFrameDefault | _PyEval_Vector | "
		       "py::g:a.py | _PyEval_EvalFrameDefault | PyObject_Call | [truncated] | "
		       "py::h:a.py | py::<module>:a.py",
		.only = "py::f:a.py | py::g:a.py | py::h:a.py | py::<module>:a.py",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "truncated, leaf-most eval without its stub (stack scan): skipped",
		.minor = 12,
		.truncated = true,
		NATIVE(EVAL_STUB(PS_PY_STUB_ABSENT), LIB("_PyEval_Vector"),
		       EVAL_STUB(PS_PY_STUB_FOUND), C("ext_func"), EVAL_STUB(PS_PY_STUB_FOUND)),
		PYTHON(PY("py::g:a.py"), STUB, PY("py::h:a.py"), STUB, PY("py::<module>:a.py"),
		       STUB),
		.merged = "_PyEval_EvalFrameDefault | _PyEval_Vector | py::g:a.py | ext_func | "
			  "py::h:a.py | [truncated] | py::<module>:a.py",
		.activations = 3,
		.matched = 2,
	},
	{
		.title = "no Python frames: nothing to merge, nothing dropped",
		.minor = 12,
		NATIVE(LIB("PyNumber_Add"), EVAL, LIB("_PyEval_Vector"), C("main")),
		.merged = "PyNumber_Add | _PyEval_EvalFrameDefault | _PyEval_Vector | main",
		.all = "PyNumber_Add | _PyEval_EvalFrameDefault | _PyEval_Vector | main",
		.only = "",
		.activations = 1,
		.matched = 0,
	},
	{
		.title = "no Python frames, truncated: only the marker is added",
		.minor = 12,
		.truncated = true,
		NATIVE(C("f"), C("g")),
		.merged = "f | g | [truncated]",
		.all = "f | g | [truncated]",
		.only = "",
	},
	{
		.title = "no eval frame on a complete stack: Python frames lead (Perforator)",
		.minor = 12,
		NATIVE(C("worker"), C("start_thread"), C("clone3")),
		PYTHON(PY("py::f:a.py"), STUB),
		.merged = "py::f:a.py | worker | start_thread | clone3",
		.all = "py::f:a.py | worker | start_thread | clone3",
		.only = "py::f:a.py",
		.activations = 0,
		.matched = 0,
		.unmatched = true,
	},
	{
		.title = "no eval frame on a truncated stack: Python frames after the cut",
		.minor = 12,
		.truncated = true,
		NATIVE(C("memcpy"), C("ext_func")),
		PYTHON(PY("py::f:a.py"), STUB, PY("py::<module>:a.py"), STUB),
		.merged = "memcpy | ext_func | [truncated] | py::f:a.py | py::<module>:a.py",
		.activations = 0,
		.matched = 0,
	},
	{
		.title = "trampolines (-X perf): each py:: frame is the caller of its eval",
		.minor = 12,
		NATIVE(LIB("long_add"), LIB("PyNumber_Add"), EVAL, TRAMPOLINE("py::f:a.py"),
		       LIB("py_trampoline_evaluator"), LIB("_PyEval_Vector"),
		       LIB("PyObject_Vectorcall"), EVAL, TRAMPOLINE("py::<module>:a.py"),
		       LIB("py_trampoline_evaluator"), LIB("PyEval_EvalCode"),
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
		.title = "trampolines, unwinding cut at the first trampoline",
		.minor = 12,
		.truncated = true,
		NATIVE(LIB("long_add"), EVAL, TRAMPOLINE("py::leaf:a.py")),
		.merged = "long_add | py::leaf:a.py | [truncated]",
		.all = "long_add | _PyEval_EvalFrameDefault | py::leaf:a.py | [truncated]",
		.only = "py::leaf:a.py | [truncated]",
		.activations = 1,
		.matched = 1,
	},
	{
		.title = "trampolines: the separate Python frames are not used",
		.minor = 13,
		NATIVE(EVAL, TRAMPOLINE("py::f:a.py"), LIB("py_trampoline_evaluator"),
		       C("main")),
		PYTHON(PY("py::f:a.py"), STUB),
		.merged = "py::f:a.py | main",
		.only = "py::f:a.py",
		.activations = 1,
		.matched = 1,
	},
	{
		.title = "trampolines: a .cold clone alone is the activation",
		.minor = 12,
		NATIVE(CLONE(".cold"), TRAMPOLINE("py::f:a.py"), LIB("py_trampoline_evaluator"),
		       LIB("_PyEval_Vector"), EVAL, TRAMPOLINE("py::g:a.py"), C("main")),
		.merged = "py::f:a.py | py::g:a.py | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = ".part clone next to its parent: one activation",
		.minor = 12,
		NATIVE(C("ext_leaf"), CLONE(".part.0"), EVAL, C("ext_mid"), EVAL, C("main")),
		PYTHON(PY("py::f:a.py"), STUB, PY("py::g:a.py"), STUB),
		.merged = "ext_leaf | py::f:a.py | ext_mid | py::g:a.py | main",
		.all = "ext_leaf | py::f:a.py | _PyEval_EvalFrameDefault.part.0 | "
		       "_PyEval_EvalFrameDefault | ext_mid | py::g:a.py | "
		       "_PyEval_EvalFrameDefault | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "two adjacent main eval frames are two activations",
		.minor = 12,
		NATIVE(EVAL, EVAL, C("main")),
		PYTHON(PY("py::f:a.py"), STUB, PY("py::g:a.py"), STUB),
		.merged = "py::f:a.py | py::g:a.py | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "3.11: is_entry closes a segment",
		.minor = 11,
		NATIVE(EVAL, LIB("_PyFunction_Vectorcall"), LIB("PyObject_Call"), EVAL,
		       LIB("PyEval_EvalCode"), LIB("run_mod"), C("main")),
		PYTHON(PY("py::f:a.py"), ENTRY("py::g:a.py"), ENTRY("py::<module>:a.py")),
		.merged = "py::f:a.py | py::g:a.py | py::<module>:a.py | run_mod | main",
		.only = "py::f:a.py | py::g:a.py | py::<module>:a.py",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "3.9: one frame per eval, the extra leaf eval stays native",
		.minor = 9,
		NATIVE(EVAL, LIB("function_code_fastcall"), LIB("_PyFunction_Vectorcall"), EVAL,
		       LIB("call_function"), EVAL, LIB("PyEval_EvalCode"), LIB("run_mod"),
		       C("main")),
		PYTHON(PY("py::g:a.py"), PY("py::<module>:a.py")),
		.merged = "_PyEval_EvalFrameDefault | function_code_fastcall | "
			  "_PyFunction_Vectorcall | py::g:a.py | py::<module>:a.py | run_mod | main",
		.activations = 3,
		.matched = 2,
	},
	{
		.title = "3.9 generator: PyEval_EvalFrameEx is not a second activation",
		.minor = 9,
		NATIVE(EVAL, LIB("PyEval_EvalFrameEx"), LIB("gen_send_ex"), LIB("gen_iternext"),
		       EVAL, C("main")),
		PYTHON(PY("py::gen:a.py"), PY("py::<module>:a.py")),
		.merged = "py::gen:a.py | py::<module>:a.py | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "importlib frames missing from the Python side",
		.minor = 12,
		NATIVE(EVAL, LIB("PyEval_EvalCode"), LIB("builtin_exec"),
		       LIB("cfunction_vectorcall_FASTCALL_KEYWORDS"), EVAL,
		       LIB("_PyFunction_Vectorcall"), LIB("object_vacall"),
		       LIB("PyObject_CallMethodObjArgs"), LIB("import_find_and_load"),
		       LIB("PyImport_ImportModuleLevelObject"), LIB("import_name"), EVAL,
		       LIB("PyEval_EvalCode"), C("main")),
		PYTHON(PY("py::<module>:mod.py"), STUB, PY("py::<module>:main.py"), STUB),
		.merged = "py::<module>:mod.py | builtin_exec | import_find_and_load | import_name | "
			  "py::<module>:main.py | main",
		.activations = 3,
		.matched = 2,
	},
	{
		.title = "importlib frames missing from the native side",
		.minor = 12,
		NATIVE(EVAL, LIB("PyEval_EvalCode"), LIB("builtin_exec"), EVAL,
		       LIB("PyEval_EvalCode"), C("main")),
		PYTHON(PY("py::<module>:mod.py"), STUB,
		       PY("py::_call_with_frames_removed:<frozen importlib._bootstrap>"),
		       PY("py::_find_and_load:<frozen importlib._bootstrap>"), STUB,
		       PY("py::<module>:main.py"), STUB),
		.merged = "py::<module>:mod.py | "
			  "py::_call_with_frames_removed:<frozen importlib._bootstrap> | "
			  "py::_find_and_load:<frozen importlib._bootstrap> | builtin_exec | "
			  "py::<module>:main.py | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "truncated: importlib segments are not skipped, the rest is above the cut",
		.minor = 12,
		.truncated = true,
		NATIVE(EVAL, LIB("builtin_exec"), EVAL, LIB("_PyFunction_Vectorcall")),
		PYTHON(PY("py::<module>:mod.py"), STUB,
		       PY("py::_find_and_load:<frozen importlib._bootstrap>"), STUB,
		       PY("py::<module>:main.py"), STUB),
		.merged = "py::<module>:mod.py | builtin_exec | "
			  "py::_find_and_load:<frozen importlib._bootstrap> | [truncated] | "
			  "py::<module>:main.py",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "importlib on both sides: plain one-to-one",
		.minor = 12,
		NATIVE(EVAL, LIB("builtin_exec"), EVAL, LIB("import_find_and_load"), EVAL,
		       C("main")),
		PYTHON(PY("py::<module>:mod.py"), STUB,
		       PY("py::_find_and_load:<frozen importlib._bootstrap>"), STUB,
		       PY("py::<module>:main.py"), STUB),
		.merged = "py::<module>:mod.py | builtin_exec | "
			  "py::_find_and_load:<frozen importlib._bootstrap> | import_find_and_load | "
			  "py::<module>:main.py | main",
		.activations = 3,
		.matched = 3,
	},
	{
		.title = "between Python frames: extension and unknown non-libpython frames stay",
		.minor = 12,
		NATIVE(EVAL, LIB_UNKNOWN, C("__pyx_pw_mod_func"), UNKNOWN, C("PyArray_Sum"),
		       LIB("PyObject_Call"), LIB("slot_tp_call"), EVAL, C("main")),
		PYTHON(PY("py::cb:a.py"), STUB, PY("py::<module>:a.py"), STUB),
		.merged = "py::cb:a.py | __pyx_pw_mod_func | [unknown] | PyArray_Sum | "
			  "py::<module>:a.py | main",
		.activations = 2,
		.matched = 2,
	},
	{
		.title = "a thread: the bootstrap below the root-most frame's caller stays",
		.minor = 13,
		NATIVE(LIB("time_sleep"), EVAL, LIB("_PyEval_Vector"),
		       LIB("_PyObject_VectorcallTstate"), LIB("thread_run"), LIB("pythread_wrapper"),
		       C("start_thread"), C("clone3")),
		PYTHON(PY("py::run:threading.py"), STUB),
		.merged = "time_sleep | py::run:threading.py | thread_run | pythread_wrapper | "
			  "start_thread | clone3",
		.activations = 1,
		.matched = 1,
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

static void check_mode(struct ps_py_merger *merger, const struct merge_case *c,
		       enum ps_py_mode mode, const char *expected)
{
	struct ps_py_merge_input input = {
		.native = c->native, .nr_native = c->nr_native,
		.python = c->python, .nr_python = c->nr_python,
		.native_truncated = c->truncated, .major = 3, .minor = c->minor,
	};
	struct ps_py_merge_result result;
	char text[4096];

	ck_assert_int_eq(ps_py_merge(merger, &input, mode, &result), 0);
	if (mode == PS_PY_MODE_NATIVE) {
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
	if (mode == PS_PY_MODE_MERGED) {
		ck_assert_msg(result.nr_activations == c->activations, "%s: %zu activations",
			      c->title, result.nr_activations);
		ck_assert_msg(result.nr_matched == c->matched, "%s: %zu matched", c->title,
			      result.nr_matched);
		ck_assert_msg(result.unmatched == c->unmatched, "%s: unmatched", c->title);
	}
}

START_TEST(test_case)
{
	const struct merge_case *c = &cases[_i];
	struct ps_py_merger *merger;

	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	check_mode(merger, c, PS_PY_MODE_MERGED, c->merged);
	check_mode(merger, c, PS_PY_MODE_ALL, c->all);
	check_mode(merger, c, PS_PY_MODE_ONLY, c->only);
	check_mode(merger, c, PS_PY_MODE_NATIVE, NULL);
	ps_py_merger_free(merger);
}
END_TEST

/* ---- output details -------------------------------------------------- */

START_TEST(test_output_frames)
{
	static const struct ps_py_native_frame native[] = {
		C("ext"), EVAL, TRAMPOLINE("py::f:a.py"), C("main"),
	};
	static const struct ps_py_python_frame python[] = { PY("py::f:a.py"), STUB };
	struct ps_py_merge_input input = { .native = native, .nr_native = 4, .python = python,
					   .nr_python = 2, .native_truncated = true, .major = 3,
					   .minor = 12 };
	struct ps_py_merge_result result;
	struct ps_py_merger *merger;

	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_MERGED, &result), 0);
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

	/* without the trampoline: Python frames point into python[] */
	input.native = (const struct ps_py_native_frame[]){ C("ext"), EVAL, C("main") };
	input.nr_native = 3;
	input.native_truncated = false;
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_MERGED, &result), 0);
	ck_assert(!result.trampolines);
	ck_assert_uint_eq(result.nr_segments, 1);
	ck_assert_int_eq(result.frames[1].kind, PS_PY_OUT_PYTHON);
	ck_assert_uint_eq(result.frames[1].index, 0);
	ck_assert(result.frames[1].is_python);
	ps_py_merger_free(merger);
}
END_TEST

START_TEST(test_big_stack)
{
	enum { DEPTH = 3000 };
	struct ps_py_native_frame *native = calloc(2 * DEPTH + 1, sizeof(*native));
	struct ps_py_python_frame *python = calloc(2 * DEPTH, sizeof(*python));
	struct ps_py_merge_input input = { .native = native, .nr_native = 2 * DEPTH + 1,
					   .python = python, .nr_python = 2 * DEPTH, .major = 3,
					   .minor = 12 };
	struct ps_py_merge_result result;
	struct ps_py_merger *merger;

	ck_assert_ptr_nonnull(native);
	ck_assert_ptr_nonnull(python);
	for (size_t i = 0; i < DEPTH; i++) {
		native[2 * i] = (struct ps_py_native_frame)EVAL;
		native[2 * i + 1] = (struct ps_py_native_frame)LIB("_PyEval_Vector");
		python[2 * i] = (struct ps_py_python_frame)PY("py::recurse:a.py");
		python[2 * i + 1] = (struct ps_py_python_frame)STUB;
	}
	native[2 * DEPTH] = (struct ps_py_native_frame)C("main");
	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_MERGED, &result), 0);
		ck_assert_uint_eq(result.nr_matched, DEPTH);
		ck_assert_uint_eq(result.nr_frames, DEPTH + 1);
		ck_assert_str_eq(result.frames[DEPTH].name, "main");
	}
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_ALL, &result), 0);
	ck_assert_uint_eq(result.nr_frames, 3 * DEPTH + 1);
	ps_py_merger_free(merger);
	free(native);
	free(python);
}
END_TEST

START_TEST(test_invalid)
{
	struct ps_py_merge_input input = { .nr_native = 1, .major = 3, .minor = 12 };
	struct ps_py_merge_result result;
	struct ps_py_merger *merger;

	ck_assert_int_eq(ps_py_merger_new(&merger), 0);
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_MERGED, &result), -EINVAL);
	input.nr_native = 0;
	input.nr_python = 2;
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_MERGED, &result), -EINVAL);
	input.nr_python = 0;
	ck_assert_int_eq(ps_py_merge(merger, &input, (enum ps_py_mode)7, &result), -EINVAL);
	ck_assert_int_eq(ps_py_merge(NULL, &input, PS_PY_MODE_MERGED, &result), -EINVAL);
	ck_assert_int_eq(ps_py_merge(merger, NULL, PS_PY_MODE_MERGED, &result), -EINVAL);
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_MERGED, NULL), -EINVAL);
	/* empty in, empty out */
	ck_assert_int_eq(ps_py_merge(merger, &input, PS_PY_MODE_ALL, &result), 0);
	ck_assert_uint_eq(result.nr_frames, 0);
	ps_py_merger_free(merger);
	ps_py_merger_free(NULL);
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
