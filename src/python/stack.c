/* A stack's Python frames: which of its frames are Python ones, and the
 * stack in the Python mode, from the merger (merge.c) fed with the user
 * frames and what they are (the eval loop, the interpreter's own code, the
 * module that gives 3.8-3.11 their trampolines).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "python/python_priv.h"

#define TRUNCATED_NAME "[truncated]"
#define UNNAMED_NAME "[python: unnamed]"

bool ps_python_mark_frames(struct ps_frame *frames, size_t nr_frames, bool *eval)
{
	bool python = false;

	*eval = false;
	for (size_t i = 0; i < nr_frames; i++) {
		struct ps_frame *f = &frames[i];

		/* CPython's trampolines in the ELF files `perf inject --jit`
		 * makes of a jitdump (jitted-PID-N.so) */
		if (!f->python && f->sym && f->sym[0] == 'p' && strncmp(f->sym, "py::", 4) == 0 &&
		    !f->kernel)
			f->python = true;
		python |= f->python;
		/* the eval loop: Python ran here, named or not */
		if (!*eval && !f->python && !f->kernel && f->sym &&
		    ps_py_eval_name_kind(f->sym) != PS_PY_EVAL_NONE)
			*eval = true;
	}
	return python;
}

/* The merge's questions about a symbol name, answered once per name: a
 * frame's name is a string of the symbol tables or the JIT maps, which
 * stay as long as the session, so one address is one name. */
static struct python_name_class name_class(struct ps_python *python, const char *name)
{
	struct python_name_class *slot = NULL, answer;

	if (!python->name_classes)
		python->name_classes =
		        calloc((size_t)1 << PS_PY_NAME_CLASSES_BITS, sizeof(*python->name_classes));
	/* out of memory: answered each time */
	if (python->name_classes) {
		slot = &python->name_classes[ps_hash_u64((uint64_t)(uintptr_t)name) >>
		                             (64 - PS_PY_NAME_CLASSES_BITS)];
		if (slot->name == name)
			return *slot;
	}
	answer = (struct python_name_class){ .name = name,
		                             .eval = ps_py_eval_name_kind(name),
		                             .internal = ps_py_is_internal_name(name) };
	if (slot)
		*slot = answer;
	return answer;
}

/* The file of the pystitch_perf module when the process's trampolines come
 * from it, else NULL. The interpreter is looked up only in processes the
 * pipeline unwinds (DWARF stacks), as the unwinder did for their
 * trampolines; frame-pointer stacks merge without it. */
static const char *module_dso(struct ps_python *python, struct ps_process *process)
{
	struct python_process *state;

	if (!process || !ps_pipeline_unwinds(process))
		return NULL;
	state = ps_python_process(process);
	if (!state)
		return NULL;
	/* with unwinding workers this pipeline did not unwind, so it is
	 * looked up here (a no-op when already found for these maps) */
	ps_python_find_interpreter(python, state);
	if (state->template_object && state->template_object != state->interp_object)
		return state->template_object->name;
	return NULL;
}

/* The "FILE:LINE" text of a Python frame named name ("py::qualname:file")
 * at line, made once per name and line; NULL without memory. */
static const char *python_srcline(struct ps_python *python, const char *name, uint32_t line)
{
	uint64_t hash = ps_hash_string(name, line);
	struct python_srcline *slot;
	const char *file = strchr(name + 4, ':'), *base;
	size_t mask, len;
	char *text;

	file = file ? file + 1 : "??";
	if (2 * (python->srcline_used + 1) > python->srcline_cap) {
		size_t cap = python->srcline_cap ? 2 * python->srcline_cap : 256;
		struct python_srcline *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t i = 0; i < python->srcline_cap; i++) {
			struct python_srcline *old = &python->srcline_slots[i];
			size_t k;

			if (!old->text)
				continue;
			for (k = old->hash & (cap - 1); slots[k].text; k = (k + 1) & (cap - 1))
				;
			slots[k] = *old;
		}
		free(python->srcline_slots);
		python->srcline_slots = slots;
		python->srcline_cap = cap;
	}
	mask = python->srcline_cap - 1;
	for (size_t k = hash & mask;; k = (k + 1) & mask) {
		slot = &python->srcline_slots[k];
		if (!slot->text)
			break;
		if (slot->hash == hash && slot->line == line && strcmp(slot->name, name) == 0)
			return slot->text;
	}
	/* perf's srcline keeps the base name unless --full-source-path */
	base = python->full_source_path ? NULL : strrchr(file, '/');
	base = base ? base + 1 : file;
	len = strlen(base) + 12;
	text = ps_arena_alloc(&python->srclines, len);
	slot->name = ps_arena_strndup(&python->srclines, name, strlen(name));
	if (!text || !slot->name)
		return NULL;
	snprintf(text, len, "%s:%u", base, (unsigned)line);
	slot->hash = hash;
	slot->line = line;
	slot->text = text;
	python->srcline_used++;
	return text;
}

/* The line of a merged Python frame from the note of its trampoline's
 * frame, and the count of its process's Python frames. */
static void set_line(struct ps_python *python, struct python_process *state, struct ps_frame *f,
                     uint64_t note)
{
	unsigned source = (unsigned)(note >> PS_PY_NOTE_SOURCE_SHIFT);

	f->line = (uint32_t)note;
	if (state) {
		state->python_frames++;
		if (f->line && source < PS_PY_LINE_SOURCES)
			state->lined[source]++;
	}
	if (f->line && python->srcline && f->sym)
		f->srcline = python_srcline(python, f->sym, f->line);
}

size_t ps_python_chain_before_break(const struct ps_frame *user, size_t nr_user, bool *cut)
{
	for (size_t i = 1; i < nr_user; i++) {
		if (!user[i].dso && !user[i].python) {
			*cut = true;
			return i;
		}
	}
	return nr_user;
}

bool ps_python_chain_reaches_root(const struct ps_frame *user, size_t nr_user)
{
	/* where glibc enters a process's main and a thread's start routine
	 * (the frames a walk ends at: _start clears the frame pointer, as
	 * clone does for a new thread), and the entry points themselves */
	static const char *const roots[] = {
		"_start",
		"__libc_start_main",
		"__libc_start_main_impl",
		"__libc_start_call_main",
		"start_thread",
		"clone",
		"clone3",
		"__clone",
		"__clone3",
		"__clone_internal",
		"thread_start",
		"libc_start_main_stage2",
		"_dl_start_user",
		"_dl_start", /* ld.so, before the program's _start */
	};
	const char *sym;

	if (!nr_user)
		return true;
	sym = user[nr_user - 1].sym;
	for (size_t i = 0; sym && i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strcmp(sym, roots[i]) == 0)
			return true;
	return false;
}

int ps_python_merge(struct ps_python *python, struct ps_process *process,
                    const struct ps_pipeline_stack *stack, const struct ps_frame **frames,
                    size_t *nr_frames)
{
	const struct ps_frame *user = stack->frames + stack->user_first;
	size_t nr_user = stack->nr_frames - stack->user_first, nr_kernel = stack->user_first, n;
	struct ps_py_merge_input in = { 0 };
	struct ps_py_merge_result res;
	const char *interp_dso, *module;
	struct python_process *state;
	int rc;

	in.native_truncated = stack->unwound && stack->stop == PS_UNWIND_STOP_STACK_CUT;
	/* Debian perf's bogus last frame at a cut stack: the marker says it */
	if (in.native_truncated && nr_user && user[nr_user - 1].addr == UINT64_MAX &&
	    !user[nr_user - 1].sym)
		nr_user--;
	/* a walk that stopped at code in no ELF file it had no rule for (a
	 * trampoline of a process whose perf map is missing) did not reach
	 * the stack's root either */
	if (stack->unwound && stack->stop == PS_UNWIND_STOP_NO_MODULE)
		in.native_truncated = true;
	if (!stack->unwound) {
		nr_user = ps_python_chain_before_break(user, nr_user, &in.native_truncated);
		if (!in.native_truncated && !ps_python_chain_reaches_root(user, nr_user))
			in.native_truncated = true;
	}
	module = module_dso(python, process);
	if (!ps_array_reserve((void **)&python->native, &python->cap_native, nr_user,
	                      sizeof(*python->native), 64))
		return -ENOMEM;
	/* the object name the interpreter's frames carry: that of the
	 * leaf-most frame running the eval loop itself (a Python frame's
	 * "py::" name is never the eval loop's) */
	interp_dso = NULL;
	for (size_t i = 0; i < nr_user; i++) {
		const struct ps_frame *f = &user[i];
		struct ps_py_native_frame *nf = &python->native[i];

		nf->sym = f->sym;
		nf->python_name = f->python ? f->sym : NULL;
		nf->eval = PS_PY_EVAL_NONE;
		nf->internal = false;
		if (f->sym && !f->python) {
			struct python_name_class c = name_class(python, f->sym);

			nf->eval = c.eval;
			nf->internal = c.internal;
		}
		if (!interp_dso && nf->eval == PS_PY_EVAL_MAIN)
			interp_dso = f->dso;
	}
	for (size_t i = 0; i < nr_user; i++) {
		const struct ps_frame *f = &user[i];
		struct ps_py_native_frame *nf = &python->native[i];

		nf->in_interpreter = interp_dso && f->dso == interp_dso;
		/* the module that gives 3.8-3.11 trampolines is call machinery
		 * between Python frames, whatever its functions are called */
		if (module && f->dso == module) {
			nf->in_interpreter = true;
			nf->sym = NULL;
		}
	}
	in.native = python->native;
	in.nr_native = nr_user;
	rc = ps_py_merge(python->merger, &in, python->mode, &res);
	if (rc)
		return rc;
	if (python->mode == PS_PYTHON_ONLY)
		nr_kernel = 0;
	if (!ps_array_reserve((void **)&python->merged, &python->cap_merged,
	                      nr_kernel + res.nr_frames, sizeof(*python->merged), 64))
		return -ENOMEM;
	if (nr_kernel)
		memcpy(python->merged, stack->frames, nr_kernel * sizeof(*python->merged));
	n = nr_kernel;
	state = process ? ps_python_process(process) : NULL;
	for (size_t i = 0; i < res.nr_frames; i++) {
		struct ps_frame *f = &python->merged[n++];

		if (res.frames[i].kind == PS_PY_OUT_NATIVE) {
			*f = user[res.frames[i].index];
			if (res.frames[i].is_python)
				set_line(python, state, f,
				         stack->notes ? stack->notes[stack->user_first +
				                                     res.frames[i].index]
				                      : 0);
			continue;
		}
		/* Python frames are native ones: only the markers are new */
		memset(f, 0, sizeof(*f));
		if (res.frames[i].kind == PS_PY_OUT_UNNAMED) {
			f->sym = UNNAMED_NAME;
			f->python_unnamed = true;
		} else {
			f->sym = TRUNCATED_NAME;
			f->truncated = true;
		}
	}
	*frames = python->merged;
	*nr_frames = n;
	return 0;
}
