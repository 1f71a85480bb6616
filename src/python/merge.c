/* The merger of native and Python frames (after Perforator's substack
 * mapping): eval activations in the native stack are matched with Python
 * segments, then printed in one of four modes. Pure data in, data out.
 *
 * Native side. An eval activation is a run of adjacent eval frames holding
 * at most one _PyEval_EvalFrameDefault: its .cold/.part/... clones next to it
 * are the same C activation (a .cold frame alone is one too).
 *
 * Python side, leaf first. 3.12+: a segment is the frames leafward of a stub
 * (the entry frame, owner >= 3), so a stub closes one; 3.11: a frame with
 * is_entry is the root-most frame of its segment; before 3.11 every frame is
 * a segment of its own (one PyFrameObject per eval call). A stub with no
 * frames leafward of it is an empty segment: an eval that has pushed its
 * stub but not yet its first frame.
 *
 * Matching. A complete native stack is matched from the root: extra
 * activations end up at the leaf, where an eval that has started but not yet
 * pushed its stub (or, before 3.11, linked its frame) is, and stay native.
 * A stack cut by the stack-copy limit is matched from the leaf, after
 * leaf-most activations whose stub the stack scan did not find; segments
 * left over belong above the cut and are printed after the "[truncated]"
 * marker. When the counts differ, an activation entered through the import
 * system (import_find_and_load, PyImport_Import*, __import__ between it and
 * its caller) is left out if its segment partner is not an importlib one,
 * and an importlib-only segment (<frozen importlib._bootstrap>) is left out
 * if its partner was not entered through import: importlib frames may be
 * missing from one side. Segments left out are printed with their nearest
 * matched neighbour, so the Python order is kept. With no match at all on a
 * complete stack the Python frames lead the output (Perforator's fallback).
 *
 * Trampolines (-X perf, 3.12+). With a frame evaluator installed every
 * Python call is a C call, and leaf to root the native stack reads
 *   _PyEval_EvalFrameDefault, py::f, py_trampoline_evaluator, _PyEval_Vector,
 *   ..., _PyEval_EvalFrameDefault, py::g, py_trampoline_evaluator, ...
 * py_trampoline_evaluator calls the trampoline, which calls the eval loop:
 * the trampoline named py::f is the caller of the activation running f, so
 * each eval activation pairs with the py:: frame right rootward of it. Then
 * the Python frames are the py:: frames themselves and nothing is matched.
 *
 * Modes. merged: each matched activation's eval frames are replaced by its
 * Python frames (a trampoline pair by its py:: frame); the call machinery
 * between a Python frame and the next one, or its first real caller for the
 * root-most one (frames in the interpreter that are unnamed or named like
 * it: ps_py_is_internal_name) is dropped; extension frames stay; everything
 * leafward of the leaf-most Python frame (the C code running now) and
 * rootward of the root-most one's caller (the interpreter's startup, a
 * thread's bootstrap) is kept as it is. all:
 * every native frame, each segment just leafward of its eval frame. native:
 * the input. only: the Python frames. A truncated stack ends with the
 * "[truncated]" marker in merged, all and only (trampoline) modes. */
#include "python/python.h"

#include "base/array.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NOTHING SIZE_MAX
#define TRUNCATED_NAME "[truncated]"

struct activation {
	size_t first, last; /* native indices of its eval frames, leaf first */
	size_t trampoline; /* native index of its py:: caller, or NOTHING */
	size_t segment; /* matched segment, or NOTHING */
	bool import_entered; /* the import system called it */
	enum ps_py_stub_seen stub;
};

struct segment {
	size_t first, last; /* python indices (stubs included), inclusive */
	size_t nr_frames; /* printable frames */
	size_t activation; /* matched activation, or NOTHING */
	size_t group_end; /* last segment printed with this one */
	bool importlib; /* only importlib frames */
};

struct ps_py_merger {
	struct activation *activations;
	size_t activations_cap;
	struct segment *segments;
	size_t segments_cap;
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
	free(merger->segments);
	free(merger->out);
	free(merger);
}

/* ---- names ----------------------------------------------------------- */

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

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
		NAME_PREFIX("_Py"),           NAME_PREFIX("py_trampoline_evaluator"),
		NAME_PREFIX("_TAIL_CALL_"),   NAME_PREFIX("cfunction_"),
		NAME_PREFIX("slot_tp_"),      NAME_PREFIX("method_vectorcall"),
		NAME_PREFIX("call_function"), NAME_PREFIX("function_code_fastcall"),
		NAME_PREFIX("do_call_core"),  NAME_PREFIX("object_vacall"),
		NAME_PREFIX("callmethod"),    NAME_PREFIX("type_call"),
		NAME_PREFIX("gen_send"),      NAME_PREFIX("gen_iternext"),
	};

	if (!name)
		return false;
	if (name[0] == 'P' && name[1] == 'y')
		return strncmp(name, "PyInit_", 7) != 0; /* an extension's module init */
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (name[0] == prefixes[i].text[0] &&
		    strncmp(name, prefixes[i].text, prefixes[i].len) == 0)
			return true;
	return strstr(name, "ectorcall") &&
	       (strstr(name, "Vectorcall") || strstr(name, "vectorcall"));
}

static bool import_name(const char *name)
{
	/* the first byte first: it runs for every native frame */
	return name && (name[0] == 'i' || name[0] == 'P' || name[0] == 'b') &&
	       (starts_with(name, "import_find_and_load") || starts_with(name, "PyImport_Import") ||
	        starts_with(name, "builtin___import__"));
}

static bool importlib_name(const char *name)
{
	return name && (strstr(name, "<frozen importlib") || strstr(name, "importlib._bootstrap") ||
	                strstr(name, "importlib/_bootstrap"));
}

/* ---- the two sides --------------------------------------------------- */

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
		memset(act, 0, sizeof(*act));
		act->first = i;
		act->last = end - 1;
		act->segment = NOTHING;
		act->trampoline =
		        end < in->nr_native && in->native[end].python_name ? end : NOTHING;
		act->stub = PS_PY_STUB_UNKNOWN;
		for (size_t k = i; k < end; k++)
			if (in->native[k].stub != PS_PY_STUB_UNKNOWN &&
			    act->stub != PS_PY_STUB_FOUND)
				act->stub = in->native[k].stub;
		i = end;
	}
	/* entered through import: the frames between it and the next one */
	for (size_t a = 0; a < nr; a++) {
		size_t stop = a + 1 < nr ? m->activations[a + 1].first : in->nr_native;

		for (size_t k = m->activations[a].last + 1; k < stop; k++)
			m->activations[a].import_entered |= import_name(in->native[k].sym);
	}
	*nr_out = nr;
	return 0;
}

static int close_segment(struct ps_py_merger *m, size_t *nr, size_t first, size_t last,
                         size_t nr_frames)
{
	struct segment *seg;
	bool importlib = nr_frames > 0;

	if (!ps_array_reserve((void **)&m->segments, &m->segments_cap, *nr + 1,
	                      sizeof(*m->segments), 16))
		return -ENOMEM;
	for (size_t k = first; k <= last && k < m->in->nr_python; k++)
		if (!m->in->python[k].is_stub && !importlib_name(m->in->python[k].name))
			importlib = false;
	seg = &m->segments[(*nr)++];
	seg->first = first;
	seg->last = last;
	seg->nr_frames = nr_frames;
	seg->activation = NOTHING;
	seg->group_end = NOTHING;
	seg->importlib = importlib;
	return 0;
}

static int find_segments(struct ps_py_merger *m, size_t *nr_out)
{
	const struct ps_py_merge_input *in = m->in;
	bool per_frame = in->major < 3 || (in->major == 3 && in->minor < 11);
	size_t nr = 0, first = 0, nr_frames = 0;
	int rc;

	for (size_t i = 0; i < in->nr_python; i++) {
		const struct ps_py_python_frame *frame = &in->python[i];
		bool closes;

		if (frame->is_stub) {
			closes = !per_frame;
		} else {
			nr_frames++;
			closes = per_frame || frame->is_entry;
		}
		if (!closes)
			continue;
		rc = close_segment(m, &nr, first, i, nr_frames);
		if (rc < 0)
			return rc;
		first = i + 1;
		nr_frames = 0;
	}
	if (nr_frames) {
		rc = close_segment(m, &nr, first, in->nr_python - 1, nr_frames);
		if (rc < 0)
			return rc;
	}
	*nr_out = nr;
	return 0;
}

/* ---- matching -------------------------------------------------------- */

static void match(struct ps_py_merger *m, size_t nr_acts, size_t nr_segs)
{
	bool from_leaf = m->in->native_truncated;
	size_t a_lo = 0, s_lo = 0, a_hi = nr_acts, s_hi = nr_segs;

	/* leaf-most activations the stack scan saw without a stub have no
	 * Python frames yet */
	while (a_lo < nr_acts && m->activations[a_lo].stub == PS_PY_STUB_ABSENT)
		a_lo++;
	while (a_lo < a_hi && s_lo < s_hi) {
		size_t a = from_leaf ? a_lo : a_hi - 1, s = from_leaf ? s_lo : s_hi - 1;
		size_t left_acts = a_hi - a_lo, left_segs = s_hi - s_lo;
		struct activation *act = &m->activations[a];
		struct segment *seg = &m->segments[s];
		bool skip_act = left_acts > left_segs && act->import_entered && !seg->importlib;
		/* a cut stack always has segments left over: they are above it */
		bool skip_seg = !from_leaf && left_segs > left_acts && seg->importlib &&
		                !act->import_entered;

		if (!skip_act && !skip_seg) {
			act->segment = s;
			seg->activation = a;
		}
		if (!skip_seg) { /* the activation is used up */
			if (from_leaf)
				a_lo++;
			else
				a_hi--;
		}
		if (!skip_act) { /* the segment is used up */
			if (from_leaf)
				s_lo++;
			else
				s_hi--;
		}
	}
}

/* Each matched segment prints the unmatched ones rootward of it up to the
 * next matched one; the first also those leafward of it; the last those
 * rootward of it unless the stack is cut (they go after the marker).
 * Returns the first segment printed after the marker (nr_segs if none). */
static size_t group_segments(struct ps_py_merger *m, size_t nr_segs, size_t *first_group)
{
	size_t previous = NOTHING;

	*first_group = NOTHING;
	for (size_t s = 0; s < nr_segs; s++) {
		if (m->segments[s].activation == NOTHING)
			continue;
		if (previous == NOTHING)
			*first_group = s;
		else
			m->segments[previous].group_end = s - 1;
		previous = s;
	}
	if (previous == NOTHING)
		return m->in->native_truncated ? 0 : nr_segs;
	m->segments[previous].group_end = m->in->native_truncated ? previous : nr_segs - 1;
	return m->segments[previous].group_end + 1;
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
	} else if (kind == PS_PY_OUT_PYTHON) {
		frame->is_python = true;
		frame->name = in->python[index].name;
	} else {
		frame->name = TRUNCATED_NAME;
	}
	return 0;
}

static int put_segments(struct ps_py_merger *m, size_t first, size_t last)
{
	for (size_t s = first; s <= last; s++) {
		for (size_t k = m->segments[s].first; k <= m->segments[s].last; k++) {
			int rc;

			if (m->in->python[k].is_stub)
				continue;
			rc = put(m, PS_PY_OUT_PYTHON, k);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* The segments an activation prints in its place, or false. */
static bool printed_group(const struct ps_py_merger *m, const struct activation *act,
                          size_t first_group, size_t *lo, size_t *hi)
{
	const struct segment *seg;
	size_t frames = 0;

	if (act->segment == NOTHING)
		return false;
	seg = &m->segments[act->segment];
	*lo = act->segment == first_group ? 0 : act->segment;
	*hi = seg->group_end;
	for (size_t s = *lo; s <= *hi; s++)
		frames += m->segments[s].nr_frames;
	return frames > 0;
}

struct plan {
	size_t nr_acts, nr_segs;
	size_t first_group, after_cut; /* segments */
	bool trampolines, fallback;
};

static bool between_drop(const struct ps_py_native_frame *frame)
{
	return frame->in_interpreter && !frame->python_name &&
	       (!frame->sym || ps_py_is_internal_name(frame->sym));
}

static int emit_native_walk(struct ps_py_merger *m, const struct plan *plan, bool merged)
{
	const struct ps_py_merge_input *in = m->in;
	size_t leaf_python = NOTHING, root_end = NOTHING, drop_to, a = 0;
	int rc;

	/* where Python frames land, leaf to root: trampolines, or the eval
	 * frames of each activation that prints Python frames; root_end is
	 * the last native frame the root-most of them stands for */
	for (size_t i = 0; plan->trampolines && i < in->nr_native; i++) {
		if (!in->native[i].python_name)
			continue;
		if (leaf_python == NOTHING)
			leaf_python = i;
		root_end = i;
	}
	for (size_t i = 0; !plan->trampolines && i < plan->nr_acts; i++) {
		const struct activation *act = &m->activations[i];
		size_t lo, hi;

		if (!printed_group(m, act, plan->first_group, &lo, &hi))
			continue;
		if (leaf_python == NOTHING)
			leaf_python = act->first;
		root_end = act->last;
	}
	/* the root-most Python frame's segment runs on over the call
	 * machinery that called it, up to its first real caller */
	drop_to = root_end == NOTHING ? 0 : root_end + 1;
	while (drop_to && drop_to < in->nr_native && between_drop(&in->native[drop_to]))
		drop_to++;
	for (size_t i = 0; i < in->nr_native; i++) {
		const struct activation *act = NULL;
		size_t lo, hi;

		while (a < plan->nr_acts && m->activations[a].last < i)
			a++;
		if (a < plan->nr_acts && m->activations[a].first <= i)
			act = &m->activations[a];
		if (act && plan->trampolines && act->trampoline != NOTHING) {
			if (!merged && (rc = put(m, PS_PY_OUT_NATIVE, i)) < 0)
				return rc;
			continue; /* merged: the py:: frame stands for it */
		}
		if (act && !plan->trampolines &&
		    printed_group(m, act, plan->first_group, &lo, &hi)) {
			if (i == act->first && (rc = put_segments(m, lo, hi)) < 0)
				return rc;
			if (!merged && (rc = put(m, PS_PY_OUT_NATIVE, i)) < 0)
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

static int emit(struct ps_py_merger *m, const struct plan *plan, enum ps_py_mode mode)
{
	const struct ps_py_merge_input *in = m->in;
	int rc;

	if (mode == PS_PY_MODE_NATIVE) {
		for (size_t i = 0; i < in->nr_native; i++)
			if ((rc = put(m, PS_PY_OUT_NATIVE, i)) < 0)
				return rc;
		return 0;
	}
	if (mode == PS_PY_MODE_ONLY) {
		if (plan->trampolines) {
			for (size_t i = 0; i < in->nr_native; i++)
				if (in->native[i].python_name &&
				    (rc = put(m, PS_PY_OUT_NATIVE, i)) < 0)
					return rc;
			return in->native_truncated ? put(m, PS_PY_OUT_TRUNCATED, 0) : 0;
		}
		/* the Python stack is whole even when the native one is cut */
		return plan->nr_segs ? put_segments(m, 0, plan->nr_segs - 1) : 0;
	}
	if (plan->fallback && plan->nr_segs && (rc = put_segments(m, 0, plan->nr_segs - 1)) < 0)
		return rc;
	rc = emit_native_walk(m, plan, mode == PS_PY_MODE_MERGED && !plan->fallback);
	if (rc < 0)
		return rc;
	if (in->native_truncated && (rc = put(m, PS_PY_OUT_TRUNCATED, 0)) < 0)
		return rc;
	if (!plan->fallback && plan->after_cut < plan->nr_segs)
		return put_segments(m, plan->after_cut, plan->nr_segs - 1);
	return 0;
}

int ps_py_merge(struct ps_py_merger *merger, const struct ps_py_merge_input *input,
                enum ps_py_mode mode, struct ps_py_merge_result *result)
{
	struct plan plan = { 0 };
	size_t nr_matched = 0;
	int rc;

	if (!merger || !input || !result || (input->nr_native && !input->native) ||
	    (input->nr_python && !input->python) || (unsigned)mode > PS_PY_MODE_ONLY)
		return -EINVAL;
	memset(result, 0, sizeof(*result));
	merger->in = input;
	merger->nr_out = 0;
	for (size_t i = 0; i < input->nr_native && !plan.trampolines; i++)
		plan.trampolines = input->native[i].python_name != NULL;
	rc = find_activations(merger, &plan.nr_acts);
	if (rc == 0 && !plan.trampolines)
		rc = find_segments(merger, &plan.nr_segs);
	if (rc < 0)
		return rc;
	plan.after_cut = plan.nr_segs;
	plan.first_group = NOTHING;
	if (!plan.trampolines) {
		match(merger, plan.nr_acts, plan.nr_segs);
		plan.after_cut = group_segments(merger, plan.nr_segs, &plan.first_group);
		for (size_t s = 0; s < plan.nr_segs; s++)
			nr_matched += merger->segments[s].activation != NOTHING;
		plan.fallback = plan.nr_segs && !nr_matched && !input->native_truncated;
	} else {
		for (size_t a = 0; a < plan.nr_acts; a++)
			nr_matched += merger->activations[a].trampoline != NOTHING;
	}
	rc = emit(merger, &plan, mode);
	if (rc < 0)
		return rc;
	result->frames = merger->out;
	result->nr_frames = merger->nr_out;
	result->nr_activations = plan.nr_acts;
	result->nr_segments = plan.nr_segs;
	result->nr_matched = nr_matched;
	result->trampolines = plan.trampolines;
	result->unmatched = plan.fallback;
	return 0;
}
