/* A stack's Python frames: which of its frames are Python ones, and the
 * stack in the Python mode, from the merger (merge.c) fed with the user
 * frames and what they are (the eval loop, the interpreter's own code, the
 * module that gives 3.8-3.11 their trampolines).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/array.h"
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

/* The object name the interpreter's frames carry: that of a frame running
 * the eval loop itself. */
static const char *interpreter_dso(const struct ps_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (frames[i].sym && ps_py_eval_name_kind(frames[i].sym) == PS_PY_EVAL_MAIN)
			return frames[i].dso;
	return NULL;
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
	interp_dso = interpreter_dso(user, nr_user);
	for (size_t i = 0; i < nr_user; i++) {
		const struct ps_frame *f = &user[i];
		struct ps_py_native_frame *nf = &python->native[i];

		nf->sym = f->sym;
		nf->python_name = f->python ? f->sym : NULL;
		nf->eval = f->sym && !f->python ? ps_py_eval_name_kind(f->sym) : PS_PY_EVAL_NONE;
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
	for (size_t i = 0; i < res.nr_frames; i++) {
		struct ps_frame *f = &python->merged[n++];

		if (res.frames[i].kind == PS_PY_OUT_NATIVE) {
			*f = user[res.frames[i].index];
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
