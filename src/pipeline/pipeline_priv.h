/* Private to src/pipeline: the pipeline's state and what its files share.
 *  - pipeline.c: the handle, the rules, applying records;
 *  - maps.c: the DSO of each mapped object and the per-process unwinding
 *    state: maps as the unwinder sees them, unwinding one sample;
 *  - frames.c: building a stack of named frames.
 * pipeline.c and frames.c use maps.c; nothing calls back up.
 */
#ifndef PS_PIPELINE_PIPELINE_PRIV_H
#define PS_PIPELINE_PIPELINE_PRIV_H

#include "pipeline/pipeline.h"

struct ps_pipeline {
	struct ps_machine *machine;
	struct ps_symbols *symbols;
	struct ps_unwind_opts unwind_opts;
	unsigned max_stack;
	bool no_inline, no_callchain;
	const struct ps_features *features; /* may be NULL */
	const struct ps_pipeline_rules *rules; /* never NULL */
	void *rules_ctx;

	/* the stack being built */
	struct ps_frame *frames;
	size_t cap_frames;
	struct ps_pipeline_stack stack;
	/* the map of the previous frame of this stack: neighbours mostly
	 * share one (maps do not change while a stack is built) */
	const struct ps_process *hint_process;
	const struct ps_map *hint_map;
};

/* ---- maps.c --------------------------------------------------------- */

/* The name perf prints for an object: the kernel text map is recorded as
 * "[kernel.kallsyms]_text" but printed as "[kernel.kallsyms]". */
const char *ps_pipeline_object_name(const struct ps_mapped_object *object);

/* Unwinding state hung on a process of the machine model
 * (PS_PROCESS_SLOT_UNWIND). */
struct pipeline_process;

/* The process's unwinding state, created on first use; NULL only when out
 * of memory. */
struct pipeline_process *ps_pipeline_process(struct ps_pipeline *pipeline,
                                             struct ps_process *process);
/* A map of the process appeared or changed (MMAP records). */
void ps_pipeline_map_changed(struct pipeline_process *state, uint64_t addr);
/* The process exec'd: its unwinder forgets every module, and with flush
 * libunwind's cache too. */
void ps_pipeline_exec(struct pipeline_process *state, bool flush);
/* A map holding addr was inserted into the process (MMAP records), or a
 * FORK gave it a copy of its parent's maps (or a new thread): whether
 * Debian's perf unwinds its stacks from now on (ps_process_unwind_ready()). */
void ps_pipeline_map_inserted(struct ps_pipeline *pipeline, struct ps_process *process,
                              uint64_t addr);
void ps_pipeline_forked(struct ps_pipeline *pipeline, struct ps_process *process, bool new_process);

#endif /* PS_PIPELINE_PIPELINE_PRIV_H */
