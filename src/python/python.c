/* The Python side of a pipeline: the handle, and the frame rules it plugs
 * into the pipeline (naming JIT code; in the Python modes also the unwind
 * rules of CPython's trampolines). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "python/python_priv.h"

/* perf's behaviour: JIT code named from the perf map, nothing more */
static const struct ps_pipeline_rules native_rules = {
	.name_jit = ps_python_name_jit,
	.process_gone = ps_python_process_gone,
};

/* the Python modes unwind through CPython's trampolines; the processes
 * that ran JIT code (the trampolines) print stacks perf never prints, so
 * they get the best walk, not Debian perf's ends of stacks */
static const struct ps_pipeline_rules python_rules = {
	.name_jit = ps_python_name_jit,
	.frame_rule = ps_python_frame_rule,
	.recover_popped = ps_python_recover_popped,
	.no_quirks = ps_python_recover_popped,
	.process_gone = ps_python_process_gone,
	.inspects = ps_python_inspects,
	.inspect_frames = ps_python_inspect_frames,
};

/* The merged and only modes mark a CPython process's eval-loop
 * activations, so its stacks are pystitch's own text even without JIT
 * code: it gets the best walk too. */
static bool unwind_best(void *ctx, struct ps_process *process)
{
	struct python_process *state;

	if (ps_python_recover_popped(ctx, process))
		return true;
	state = ps_python_process(process);
	if (!state)
		return false;
	ps_python_find_interpreter(ctx, state);
	return state->interp != NULL;
}

static const struct ps_pipeline_rules merged_rules = {
	.name_jit = ps_python_name_jit,
	.frame_rule = ps_python_frame_rule,
	.recover_popped = ps_python_recover_popped,
	.no_quirks = unwind_best,
	.process_gone = ps_python_process_gone,
	.inspects = ps_python_inspects,
	.inspect_frames = ps_python_inspect_frames,
};

/* The pool of candidate files: perf_map_dir, then perf_map_dirs. */
static int make_pool(struct ps_python *python, const struct ps_python_opts *o)
{
	const char **dirs = calloc(o->nr_perf_map_dirs + 1, sizeof(*dirs));
	size_t nr = 0;
	int err;

	if (!dirs)
		return -ENOMEM;
	if (o->perf_map_dir)
		dirs[nr++] = o->perf_map_dir;
	for (size_t i = 0; i < o->nr_perf_map_dirs; i++)
		if (o->perf_map_dirs[i])
			dirs[nr++] = o->perf_map_dirs[i];
	err = ps_jit_pool_new(dirs, nr, o->files, NULL, o->log, o->log_ctx, &python->pool);
	free(dirs);
	return err;
}

int ps_python_new(const struct ps_python_opts *opts, struct ps_pipeline *pipeline,
                  struct ps_python **out)
{
	struct ps_python_opts o;
	struct ps_python *python;

	*out = NULL;
	if (ps_opts_copy(&o, sizeof(o), opts) || !pipeline)
		return -EINVAL;
	python = calloc(1, sizeof(*python));
	if (!python)
		return -ENOMEM;
	python->pipeline = pipeline;
	python->mode = o.mode;
	python->srcline = o.srcline;
	python->full_source_path = o.full_source_path;
	python->log = o.log;
	python->log_ctx = o.log_ctx;
	if (o.perf_data_path && strcmp(o.perf_data_path, "-") != 0) {
		python->data_path = strdup(o.perf_data_path);
		if (!python->data_path)
			goto nomem;
	}
	if (make_pool(python, &o))
		goto nomem;
	python->names_opts = (struct ps_jit_names_opts){
		.sz = sizeof(python->names_opts),
		.perf_map_dir = o.perf_map_dir,
		.perf_map_dirs = o.perf_map_dirs,
		.nr_perf_map_dirs = o.nr_perf_map_dirs,
		.perf_data_path = python->data_path,
		.files = o.files,
		.pool = python->pool,
		.log = o.log,
		.log_ctx = o.log_ctx,
	};
	if (ps_py_registry_new(&python->registry) || ps_py_merger_new(&python->merger))
		goto nomem;
	ps_pipeline_set_rules(pipeline,
	                      python->mode == PS_PYTHON_NATIVE ? &native_rules
	                      : python->mode == PS_PYTHON_ALL  ? &python_rules
	                                                       : &merged_rules,
	                      python);
	*out = python;
	return 0;
nomem:
	ps_python_free(python);
	return -ENOMEM;
}

void ps_python_free(struct ps_python *python)
{
	if (!python)
		return;
	ps_python_sources_free(python);
	ps_jit_pool_free(python->pool);
	ps_python_trampolines_free(python);
	ps_python_gone_free(python);
	ps_py_registry_free(python->registry);
	ps_py_merger_free(python->merger);
	free(python->native);
	free(python->merged);
	free(python->name_classes);
	free(python->srcline_slots);
	ps_arena_free(&python->srclines);
	free(python->data_path);
	free(python);
}
