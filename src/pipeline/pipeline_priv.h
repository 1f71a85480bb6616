/* Private to src/pipeline: the pipeline's state and what its files share.
 *  - pipeline.c: the handle, the rules, applying records;
 *  - maps.c: the DSO of each mapped object and the per-process unwinding
 *    state: maps as the unwinder sees them, unwinding one sample;
 *  - name.c: the frame(s) of one address;
 *  - lbr.c: the frames of an LBR call stack, and its stitching;
 *  - frames.c: building a stack of named frames.
 * frames.c uses lbr.c and name.c, lbr.c uses name.c, everything uses
 * maps.c; nothing calls back up.
 */
#ifndef PS_PIPELINE_PIPELINE_PRIV_H
#define PS_PIPELINE_PIPELINE_PRIV_H

#include "pipeline/pipeline.h"

#define PS_PIPELINE_SECTION_MAPS 16

#define PS_PIPELINE_HINTS 4

struct ps_pipeline {
	struct ps_machine *machine;
	struct ps_symbols *symbols;
	struct ps_unwind_opts unwind_opts;
	unsigned max_stack;
	bool no_inline, no_callchain;
	const struct ps_features *features; /* may be NULL */
	/* perf script --stitch-lbr, and the LBR depth of the capture's CPU
	 * (CPU_PMU_CAPS branches=, 0 when not recorded) it needs */
	bool stitch_lbr;
	unsigned max_lbr;
	bool warned_stitch_max, warned_lbr_depth;
	bool kernel_start_asked; /* see kernel_start() in name.c */
	bool show_kernel_path; /* perf script --show-kernel-path */
	/* the maps perf makes of a vmlinux's sections other than .text */
	struct ps_map section_maps[PS_PIPELINE_SECTION_MAPS];
	size_t nr_section_maps;
	ps_log_fn log;
	void *log_ctx;
	const struct ps_pipeline_rules *rules; /* never NULL */
	void *rules_ctx;

	/* the stack being built; notes, as long as frames, when one of its
	 * frames has a note */
	struct ps_frame *frames;
	size_t cap_frames;
	uint64_t *notes;
	size_t cap_notes;
	struct ps_unwind_frame_regs *frame_regs; /* PS_PIPELINE_MAX_PCS, on first use */
	struct ps_pipeline_stack stack;
	/* the maps of the last frames of this stack: neighbours mostly share
	 * one, and a Python stack goes back and forth between a few (maps do
	 * not change while a stack is built) */
	const struct ps_process *hint_process;
	const struct ps_map *hint_maps[PS_PIPELINE_HINTS];
	unsigned nr_hints, next_hint;
};

/* ---- maps.c --------------------------------------------------------- */

/* The name perf prints for an object: the kernel text map is recorded as
 * "[kernel.kallsyms]_text" but printed as "[kernel.kallsyms]". */
const char *ps_pipeline_object_name(const struct ps_mapped_object *object);
/* Whether an object is the kernel's text (not a module, not a section of
 * a vmlinux). */
bool ps_pipeline_is_kernel_text(const struct ps_mapped_object *object);
/* The name perf script prints for an object: its DSO's name, or with
 * --show-kernel-path its long name. */
const char *ps_pipeline_object_label(const struct ps_pipeline *pipeline,
                                     const struct ps_mapped_object *object);

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
/* The process's last thread exited: its unwinder keeps only what is not
 * a cache (ps_unwinder_trim()). */
void ps_pipeline_process_died(struct ps_process *process);
/* A map holding addr was inserted into the process (MMAP records), or a
 * FORK gave it a copy of its parent's maps (or a new thread): whether
 * Debian's perf unwinds its stacks from now on (ps_process_unwind_ready()). */
void ps_pipeline_map_inserted(struct ps_pipeline *pipeline, struct ps_process *process,
                              uint64_t addr);
void ps_pipeline_forked(struct ps_pipeline *pipeline, struct ps_process *process, bool new_process);

/* ---- name.c --------------------------------------------------------- */

/* Room for one more frame of the stack being built; NULL when out of
 * memory. The frame is zeroed. */
struct ps_frame *ps_pipeline_push_frame(struct ps_pipeline *pipeline);
/* Append the frame(s) for one address. cpumode picks the address space;
 * inlines expands inline chains (perf does so for DWARF-unwound frames).
 * 0 or -ENOMEM. */
int ps_pipeline_add_frames(struct ps_pipeline *pipeline, struct ps_process *process,
                           unsigned cpumode, uint64_t ip, bool inlines);
/* A callchain context marker (ip >= PERF_CONTEXT_MAX): the cpumode it
 * switches to, or false for a marker perf does not know (it then
 * discards the chain). */
bool ps_pipeline_switch_context(uint64_t marker, unsigned *cpumode);

/* ---- lbr.c ---------------------------------------------------------- */

/* The callchain of a sample of an event with LBR call stacks
 * (branch_sample_type CALL_STACK) as perf 6.1 builds it: 1 when the
 * stack was built, 0 when the recorded callchain is to be walked instead
 * (the stack is then empty), or -ENOMEM. thread (may be NULL) keeps the
 * stitching state. */
int ps_pipeline_add_lbr(struct ps_pipeline *pipeline, struct ps_thread *thread,
                        struct ps_process *process, const struct ps_event *event);
/* Free a thread's stitching state (ps_thread.state). */
void ps_pipeline_free_lbr(void *state);
/* The LBR depth CPU_PMU_CAPS records (its branches= value read as perf
 * reads it), 0 when it is not recorded. features may be NULL. */
unsigned ps_pipeline_max_lbr(const struct ps_features *features);

#endif /* PS_PIPELINE_PIPELINE_PRIV_H */
