/* The merger of native and Python frames: which native frames a Python
 * frame stands for, printed in one of four modes. Pure data in, data out.
 *
 * Python frames come from CPython's trampolines (-X perf, 3.12+; the
 * pystitch_perf module for 3.8-3.11): with a frame evaluator installed
 * every Python call is a C call, and leaf to root the native stack reads
 *   _PyEval_EvalFrameDefault, py::f, py_trampoline_evaluator, _PyEval_Vector,
 *   ..., _PyEval_EvalFrameDefault, py::g, py_trampoline_evaluator, ...
 * py_trampoline_evaluator calls the trampoline, which calls the eval loop:
 * the trampoline named py::f is the caller of the activation running f, so
 * each eval activation pairs with the py:: frame right rootward of it, and
 * the py:: frames are the Python frames themselves: nothing is guessed. An
 * eval activation is a run of adjacent eval frames holding at most one
 * _PyEval_EvalFrameDefault: its .cold/.part/... clones next to it are the
 * same C activation (a .cold frame alone is one too).
 *
 * Modes. merged: each activation that has its trampoline is dropped (the
 * py:: frame stands for it); an activation without one (Python code run
 * before the trampolines were turned on or after they were turned off,
 * frames already running when they were turned on, an interpreter without
 * perf support) is printed as one "[python: unnamed]" marker, which stands
 * for its frames as a py:: frame does: no name is guessed, and the eval
 * loop's own frames are not passed off as the program; the call machinery
 * between a Python frame (or marker) and the next one, or its first real
 * caller for the root-most one (frames in the interpreter that are unnamed
 * or named like it: ps_py_is_internal_name) is dropped; extension frames
 * stay; everything leafward of the leaf-most Python frame (the C code
 * running now) and rootward of the root-most one's caller (the
 * interpreter's startup, a thread's bootstrap) is kept as it is. all:
 * every native frame. native: the input. only: the py:: frames and the
 * markers. A truncated stack ends with the "[truncated]" marker in merged
 * and all modes, and in only mode when it has Python frames or markers.
 * (docs/architecture.md says why there is no matching of eval activations
 * with Python frames read from memory.) */
#include "python/python_priv.h"

#include "base/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NOTHING SIZE_MAX
#define TRUNCATED_NAME "[truncated]"
#define UNNAMED_NAME "[python: unnamed]"

struct activation {
	size_t first, last; /* native indices of its eval frames, leaf first */
	size_t trampoline; /* native index of its py:: caller, or NOTHING */
};

struct ps_py_merger {
	struct activation *activations;
	size_t activations_cap;
	struct ps_py_out_frame *out;
	size_t out_cap, nr_out;
	const struct ps_py_merge_input *in;
};

int ps_py_merger_new(struct ps_py_merger **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void ps_py_merger_free(struct ps_py_merger *merger)
{
	if (!merger)
		return;
	free(merger->activations);
	free(merger->out);
	free(merger);
}

/* ---- names ----------------------------------------------------------- */

/* A prefix and its length: the test runs for most native frames of every
 * Python stack, so it looks at the first byte before comparing. */
struct name_prefix {
	const char *text;
	size_t len;
};

#define NAME_PREFIX(s)                                                                             \
	{                                                                                          \
		s, sizeof(s) - 1                                                                   \
	}

bool ps_py_is_internal_name(const char *name)
{
	static const struct name_prefix prefixes[] = {
		NAME_PREFIX("py_trampoline_evaluator"),
		NAME_PREFIX("_TAIL_CALL_"),
		NAME_PREFIX("cfunction_"),
		NAME_PREFIX("slot_tp_"),
		NAME_PREFIX("method_vectorcall"),
		NAME_PREFIX("call_function"),
		NAME_PREFIX("function_code_fastcall"),
		NAME_PREFIX("do_call_core"),
		NAME_PREFIX("object_vacall"),
		NAME_PREFIX("callmethod"),
		NAME_PREFIX("type_call"),
		NAME_PREFIX("gen_send"),
		NAME_PREFIX("gen_iternext"),
	};

	if (!name)
		return false;
	/* most of them: CPython's own "_Py..." and "Py..." functions, but
	 * an extension's module init */
	if (name[0] == '_' && name[1] == 'P' && name[2] == 'y')
		return true;
	if (name[0] == 'P' && name[1] == 'y')
		return name[2] != 'I' || strncmp(name, "PyInit_", 7) != 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (name[0] == prefixes[i].text[0] && name[1] == prefixes[i].text[1] &&
		    strncmp(name, prefixes[i].text, prefixes[i].len) == 0)
			return true;
	return strstr(name, "ectorcall") &&
	       (strstr(name, "Vectorcall") || strstr(name, "vectorcall"));
}

/* ---- eval activations ------------------------------------------------ */

static int find_activations(struct ps_py_merger *m, size_t *nr_out)
{
	const struct ps_py_merge_input *in = m->in;
	size_t nr = 0;

	for (size_t i = 0; i < in->nr_native;) {
		struct activation *act;
		bool has_main;
		size_t end = i + 1;

		if (in->native[i].eval == PS_PY_EVAL_NONE) {
			i++;
			continue;
		}
		has_main = in->native[i].eval == PS_PY_EVAL_MAIN;
		while (end < in->nr_native && in->native[end].eval != PS_PY_EVAL_NONE &&
		       !(in->native[end].eval == PS_PY_EVAL_MAIN && has_main))
			has_main |= in->native[end++].eval == PS_PY_EVAL_MAIN;
		if (!ps_array_reserve((void **)&m->activations, &m->activations_cap, nr + 1,
		                      sizeof(*m->activations), 16))
			return -ENOMEM;
		act = &m->activations[nr++];
		act->first = i;
		act->last = end - 1;
		act->trampoline =
		        end < in->nr_native && in->native[end].python_name ? end : NOTHING;
		i = end;
	}
	*nr_out = nr;
	return 0;
}

/* ---- output ---------------------------------------------------------- */

static int put(struct ps_py_merger *m, enum ps_py_out_kind kind, size_t index)
{
	const struct ps_py_merge_input *in = m->in;
	struct ps_py_out_frame *frame;

	if (!ps_array_reserve((void **)&m->out, &m->out_cap, m->nr_out + 1, sizeof(*m->out), 16))
		return -ENOMEM;
	frame = &m->out[m->nr_out++];
	frame->kind = kind;
	frame->index = index;
	frame->is_python = false;
	if (kind == PS_PY_OUT_NATIVE) {
		frame->is_python = in->native[index].python_name != NULL;
		frame->name =
		        frame->is_python ? in->native[index].python_name : in->native[index].sym;
	} else {
		frame->name = kind == PS_PY_OUT_UNNAMED ? UNNAMED_NAME : TRUNCATED_NAME;
	}
	return 0;
}

static bool between_drop(const struct ps_py_native_frame *frame)
{
	return frame->in_interpreter && !frame->python_name && (!frame->sym || frame->internal);
}

/* Every native frame in order, in merged mode without the eval frames
 * their trampolines stand for, each activation without one as its marker,
 * and the call machinery between Python frames. */
static int emit_native_walk(struct ps_py_merger *m, size_t nr_acts, bool merged)
{
	const struct ps_py_merge_input *in = m->in;
	size_t leaf_python = NOTHING, root_end = NOTHING, drop_to, a = 0;
	int rc;

	/* where Python frames are, leaf to root; root_end is the root-most
	 * (in merged mode an activation without a trampoline is one, its
	 * marker standing for its eval frames) */
	for (size_t i = 0; i < in->nr_native; i++) {
		if (!in->native[i].python_name)
			continue;
		if (leaf_python == NOTHING)
			leaf_python = i;
		root_end = i;
	}
	for (size_t k = 0; merged && k < nr_acts; k++) {
		const struct activation *act = &m->activations[k];

		if (act->trampoline != NOTHING)
			continue;
		if (leaf_python == NOTHING || act->first < leaf_python)
			leaf_python = act->first;
		if (root_end == NOTHING || act->last > root_end)
			root_end = act->last;
	}
	/* the root-most Python frame runs on over the call machinery that
	 * called it, up to its first real caller */
	drop_to = root_end == NOTHING ? 0 : root_end + 1;
	while (drop_to && drop_to < in->nr_native && between_drop(&in->native[drop_to]))
		drop_to++;
	for (size_t i = 0; i < in->nr_native; i++) {
		const struct activation *act = NULL;

		while (a < nr_acts && m->activations[a].last < i)
			a++;
		if (a < nr_acts && m->activations[a].first <= i)
			act = &m->activations[a];
		if (act && act->trampoline != NOTHING) {
			if (!merged && (rc = put(m, PS_PY_OUT_NATIVE, i)) < 0)
				return rc;
			continue; /* merged: the py:: frame stands for it */
		}
		if (act && merged) {
			/* Python ran here, and nothing names it */
			if (i == act->first && (rc = put(m, PS_PY_OUT_UNNAMED, i)) < 0)
				return rc;
			continue;
		}
		if (merged && leaf_python != NOTHING && i > leaf_python && i < drop_to &&
		    between_drop(&in->native[i]))
			continue;
		rc = put(m, PS_PY_OUT_NATIVE, i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Only mode: the py:: frames and a marker for each activation without a
 * trampoline, in stack order. */
static int emit_python_only(struct ps_py_merger *m, size_t nr_acts)
{
	const struct ps_py_merge_input *in = m->in;
	size_t a = 0, nr_before = m->nr_out;
	int rc;

	for (size_t i = 0; i < in->nr_native; i++) {
		while (a < nr_acts && m->activations[a].last < i)
			a++;
		if (a < nr_acts && m->activations[a].first == i &&
		    m->activations[a].trampoline == NOTHING)
			rc = put(m, PS_PY_OUT_UNNAMED, i);
		else if (in->native[i].python_name)
			rc = put(m, PS_PY_OUT_NATIVE, i);
		else
			continue;
		if (rc < 0)
			return rc;
	}
	if (in->native_truncated && m->nr_out > nr_before)
		return put(m, PS_PY_OUT_TRUNCATED, 0);
	return 0;
}

static int emit(struct ps_py_merger *m, size_t nr_acts, enum ps_python_mode mode)
{
	const struct ps_py_merge_input *in = m->in;
	int rc;

	if (mode == PS_PYTHON_NATIVE) {
		for (size_t i = 0; i < in->nr_native; i++)
			if ((rc = put(m, PS_PY_OUT_NATIVE, i)) < 0)
				return rc;
		return 0;
	}
	if (mode == PS_PYTHON_ONLY)
		return emit_python_only(m, nr_acts);
	rc = emit_native_walk(m, nr_acts, mode == PS_PYTHON_MERGED);
	if (rc < 0)
		return rc;
	if (in->native_truncated)
		return put(m, PS_PY_OUT_TRUNCATED, 0);
	return 0;
}

int ps_py_merge(struct ps_py_merger *merger, const struct ps_py_merge_input *input,
                enum ps_python_mode mode, struct ps_py_merge_result *result)
{
	size_t nr_acts = 0, nr_matched = 0;
	bool trampolines = false;
	int rc;

	if (!merger || !input || !result || (input->nr_native && !input->native) ||
	    (unsigned)mode > PS_PYTHON_ONLY)
		return -EINVAL;
	memset(result, 0, sizeof(*result));
	merger->in = input;
	merger->nr_out = 0;
	for (size_t i = 0; i < input->nr_native && !trampolines; i++)
		trampolines = input->native[i].python_name != NULL;
	rc = find_activations(merger, &nr_acts);
	if (rc < 0)
		return rc;
	for (size_t a = 0; a < nr_acts; a++)
		nr_matched += merger->activations[a].trampoline != NOTHING;
	rc = emit(merger, nr_acts, mode);
	if (rc < 0)
		return rc;
	result->frames = merger->out;
	result->nr_frames = merger->nr_out;
	result->nr_activations = nr_acts;
	result->nr_matched = nr_matched;
	result->trampolines = trampolines;
	return 0;
}
