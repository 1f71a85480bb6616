/* The record-to-stack pipeline: it applies a capture's records to the
 * machine model, finds the map of each address, unwinds user stacks and
 * names every frame as perf script prints it.
 *
 * One pipeline per reading of the capture: the session owns one, and each
 * unwinding worker (session/jobs.c) another; they share nothing, so each
 * is used from one thread. It knows nothing of CPython: frames of code
 * without CFI and of JIT code are left to the frame rules plugged in
 * (struct ps_pipeline_rules, which the Python side provides).
 *
 * The interface of src/pipeline to the other modules (see
 * docs/architecture.md for the header rule).
 */
#ifndef PS_PIPELINE_PIPELINE_H
#define PS_PIPELINE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine/machine.h"
#include "pystitch/pystitch.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"

/* The most frames of one stack part: the room callers give unwound PCs. */
#define PS_PIPELINE_MAX_PCS (PS_UNWIND_DEFAULT_MAX_FRAMES * 2)
/* The most libunwind lookups of one unwound stack (ps_pipeline_steps()). */
#define PS_PIPELINE_MAX_STEPS (PS_PIPELINE_MAX_PCS + 2)

struct ps_pipeline;

/* What the pipeline asks of whoever knows the JIT code and interpreters of
 * the processes. Every member may be NULL. process is the sampled process;
 * ctx is the one given to ps_pipeline_set_rules(). */
struct ps_pipeline_rules {
	/* Name a frame of JIT code (object->jit_pid > 0) at ip: fill
	 * f->sym, symoff and python; leave it unnamed when nothing names it.
	 * process is NULL when the sample's process is unknown. */
	void (*name_jit)(void *ctx, struct ps_process *process,
	                 const struct ps_mapped_object *object, uint64_t ip, struct ps_frame *f);
	/* The unwind rule of a frame without CFI, as
	 * ps_unwind_callbacks.frame_rule. NULL: the unwinder stops there. */
	bool (*frame_rule)(void *ctx, struct ps_process *process, uint64_t pc,
	                   struct ps_unwind_rule *out);
	/* Whether the unwinder recovers the registers an epilogue popped at
	 * the leaf (ps_unwind_sample.recover_popped) in this process. */
	bool (*recover_popped)(void *ctx, struct ps_process *process);
	/* Whether this process's stacks are unwound without Debian perf's
	 * libunwind quirks whatever the style (ps_unwind_sample.no_quirks):
	 * the text they make is pystitch's own, which perf never prints. */
	bool (*no_quirks)(void *ctx, struct ps_process *process);
	/* The process is about to be freed, its maps still there (see
	 * ps_machine_hooks.gone): what must outlive it is taken now. */
	void (*process_gone)(void *ctx, struct ps_process *process, const char *comm);
	/* Whether the frames of this process's unwound stacks are looked at
	 * (inspect_frames), for which the unwinder keeps every frame's
	 * registers; asked per sample. NULL: never. */
	bool (*inspects)(void *ctx, struct ps_process *process);
	/* The frames of a sample's unwound user stack, leaf first: their
	 * PCs as ps_pipeline_unwind() gives them, the registers the unwinder
	 * had for each, and the sample itself (its stack copy). Fills
	 * notes[i] (each 0 on entry) for the frames it has something to say
	 * of; ps_pipeline_add_unwound() carries the notes to the frames of
	 * those PCs (ps_pipeline_stack.notes). */
	void (*inspect_frames)(void *ctx, struct ps_process *process, const struct ps_event *event,
	                       const uint64_t *pcs, const struct ps_unwind_frame_regs *regs,
	                       size_t n, uint64_t *notes);
};

struct ps_pipeline_opts {
	size_t sz; /* sizeof(struct ps_pipeline_opts) */
	/* The DSO registry's options (copied) and the unwinders' (their
	 * max_frames is max_stack). */
	struct ps_symbols_opts symbols;
	struct ps_unwind_opts unwind;
	/* Frames per stack part (recorded callchain, unwound user stack);
	 * 0: PS_UNWIND_DEFAULT_MAX_FRAMES; at most PS_PIPELINE_MAX_PCS. */
	unsigned max_stack;
	bool no_inline; /* no inline frames for unwound PCs */
	bool no_callchain; /* only the sampled IP (perf script -G) */
	/* The capture's features (build-ids of the objects, the LBR depth);
	 * must outlive the pipeline. */
	const struct ps_features *features;
	/* perf script --stitch-lbr (the caller checks that the capture has
	 * LBR call stacks, as perf does) */
	bool stitch_lbr;
	/* perf script --show-kernel-path: frames name DSOs by their long
	 * name (a kernel module's path) */
	bool show_kernel_path;
};

/* 0, -EINVAL (options) or -ENOMEM, with a one-line reason in errmsg. */
int ps_pipeline_new(const struct ps_pipeline_opts *opts, struct ps_pipeline **out, char *errmsg,
                    size_t errmsg_size);
void ps_pipeline_free(struct ps_pipeline *pipeline);
/* Plug in the frame rules; rules and ctx must outlive the pipeline. Call
 * before the first record. */
void ps_pipeline_set_rules(struct ps_pipeline *pipeline, const struct ps_pipeline_rules *rules,
                           void *ctx);

struct ps_machine *ps_pipeline_machine(const struct ps_pipeline *pipeline);
struct ps_symbols *ps_pipeline_symbols(const struct ps_pipeline *pipeline);
/* The DSO of an object: symbols know it by the name perf gives its DSO
 * (the kernel's is "[kernel.kallsyms]", not the recorded map name
 * "[kernel.kallsyms]_text"). NULL only when out of memory. */
struct ps_dso *ps_pipeline_object_dso(struct ps_pipeline *pipeline,
                                      struct ps_mapped_object *object);

/* Keep the machine model and the unwinders in step with a record that is
 * not a sample: a process whose last thread exited has its unwinder
 * trimmed to what is not a mere cache (libunwind's), and the grace period
 * over (ps_machine_set_exit_grace()) frees it. 0 or -ENOMEM. */
int ps_pipeline_apply(struct ps_pipeline *pipeline, const struct ps_event *event);

/* Whether a sample has a user stack to unwind (perf bails out when
 * nothing was copied). process may be NULL (then false). */
bool ps_pipeline_has_user_stack(const struct ps_pipeline *pipeline, const struct ps_event *event,
                                const struct ps_process *process);
/* Whether the pipeline keeps unwinding state for the process: one of its
 * samples had a user stack. */
bool ps_pipeline_unwinds(const struct ps_process *process);
/* Unwind the sample's user stack: its PCs, leaf first, into pcs (room
 * for PS_PIPELINE_MAX_PCS) and why the walk ended. notes (room for as
 * many; NULL: not asked) gets the rules' note of each frame, 0 where they
 * have none (all of them unless rules.inspects says yes for the
 * process); *noted (may be NULL) whether any is not 0. The number of PCs
 * (0 when the walk failed), or -ENOMEM. */
int ps_pipeline_unwind(struct ps_pipeline *pipeline, const struct ps_event *event,
                       struct ps_process *process, uint64_t *pcs, enum ps_unwind_stop *stop,
                       uint64_t *notes, bool *noted);

/* For an archive writer: a process whose stacks the rules unwind their own
 * way (rules.no_quirks) prints, with --python=native, the stacks Debian
 * perf's libunwind gives, whose frames can lie where the rules' never go;
 * this unwinds the sample that way too and names those frames, so that
 * the answers of separate debug files cover them. pcs is scratch room for
 * PS_PIPELINE_MAX_PCS. 0 or -ENOMEM. */
int ps_pipeline_name_as_perf(struct ps_pipeline *pipeline, const struct ps_event *event,
                             struct ps_process *process, uint64_t *pcs);

/* Debian's perf's libunwind keeps a cache per process of what it found for
 * each frame IP (see ps_unwinder_replay()). The unwinding workers'
 * pipelines go without it (ps_pipeline_unwind_afresh(), before the first
 * record): ps_pipeline_steps() are the lookups of the process's last
 * ps_pipeline_unwind() (NULL with *n SIZE_MAX when too many to keep), which
 * the session's pipeline enters in its own cache with
 * ps_pipeline_replay(); false when its cache would have changed the
 * sample's stack, which it must then unwind itself. */
void ps_pipeline_unwind_afresh(struct ps_pipeline *pipeline);
const struct ps_unwind_step *ps_pipeline_steps(struct ps_pipeline *pipeline,
                                               struct ps_process *process, size_t *n);
bool ps_pipeline_replay(struct ps_pipeline *pipeline, struct ps_process *process,
                        const struct ps_unwind_step *steps, size_t n);

/* The map perf's thread__find_map() finds for ip (a sample's IP, say):
 * in the kernel's address space for PERF_RECORD_MISC_KERNEL, in process's
 * (which may be NULL) for PERF_RECORD_MISC_USER, none for the other
 * cpumodes; NULL when no map holds it. Finding the kernel's map loads it
 * as perf does (see ps_symbols_kernel_extent()). Valid until the next
 * record is applied. Not for use while a stack is being built. */
const struct ps_map *ps_pipeline_find_map(struct ps_pipeline *pipeline, struct ps_process *process,
                                          unsigned cpumode, uint64_t ip);

/* What perf's ip__fprintf_sym() (-F brstackinsn) finds for addr in
 * cpumode's address space: the address in its map (perf's map_ip), the
 * function there and its extent in the same space, and with srclines
 * the address's. */
struct ps_pipeline_symbol {
	bool mapped;
	uint64_t addr;
	const char *sym; /* NULL: none */
	uint64_t start, end;
	const char *srcline;
};
void ps_pipeline_symbol_at(struct ps_pipeline *pipeline, struct ps_process *process,
                           unsigned cpumode, uint64_t addr, struct ps_pipeline_symbol *out);
/* perf's first machine__kernel_start(), which loads the kernel's map
 * (see ps_symbols_kernel_extent()); later calls do nothing. */
void ps_pipeline_load_kernel(struct ps_pipeline *pipeline);
/* machine__process_text_poke(): a TEXT_POKE of new bytes in kernel mode
 * loads the kernel-space map at its address (perf writes them into its
 * copy of the DSO's data); ps_pipeline_apply() does it. */
void ps_pipeline_text_poke_load(struct ps_pipeline *pipeline, const struct ps_event *ev);
/* perf_event__fprintf_text_poke()'s name for addr: that map's symbol,
 * with its start in *start, when its map__load() succeeds, else NULL
 * (see ps_model_text_poke_symbol()). */
const char *ps_pipeline_text_poke_symbol(struct ps_pipeline *pipeline, uint64_t addr,
                                         uint64_t *start);
/* perf's machine__kernel_ip(). */
bool ps_pipeline_kernel_ip(struct ps_pipeline *pipeline, uint64_t ip);
/* perf's thread__memcpy() (what perf script reads for -F insn): up to
 * size bytes of the code at ip, from the file of the map that holds it in
 * the kernel's address space (ip >= 1 << 63) or process's, and into *is64
 * whether perf decodes them as 64-bit code. The bytes read, 0 at the end
 * of the file, -1 when there is none (no map, JIT code, kallsyms,
 * anonymous memory, a file that cannot be found). The first call loads
 * the kernel map, as perf's first look at the kernel's start does. */
ssize_t ps_pipeline_read_code(struct ps_pipeline *pipeline, struct ps_process *process, uint64_t ip,
                              void *buf, size_t size, bool *is64);

/* perf's map__fprintf_srccode() lookup (-F srccode): the source file and
 * line of ip (in cpumode's address space) as addr2line gives them, into
 * path and *line; false when there are none. */
bool ps_pipeline_source(struct ps_pipeline *pipeline, struct ps_process *process, unsigned cpumode,
                        uint64_t ip, char *path, size_t size, unsigned *line);

/* One end of a sample branch as perf script's -F brstack* names it: the
 * map thread__find_map_fb() finds (cpumode's address space, else the one
 * the address belongs to), its object's name, the offset brstackoff
 * prints, and with symbols the function (which loads the object's
 * symbols, as perf's lookup does). */
void ps_pipeline_name_branch(struct ps_pipeline *pipeline, struct ps_process *process,
                             unsigned cpumode, uint64_t addr, bool symbols,
                             struct ps_branch_end *out);

/* A stack as it is built: the recorded callchain (kernel part, or
 * everything with -g) followed by the unwound user stack, every frame
 * named. */
struct ps_pipeline_stack {
	struct ps_frame *frames;
	size_t nr_frames;
	size_t user_first; /* the first frame that is not a kernel one */
	/* the event records call chains (and -G is not given): frames is
	 * the stack; otherwise frames[0] is the sampled IP */
	bool has_callchain;
	bool unwound; /* a user stack was unwound; stop says why it ended */
	enum ps_unwind_stop stop;
	/* The rules' note of each frame (ps_pipeline_rules.inspect_frames),
	 * 0 for none; NULL when no frame of the stack has one. */
	const uint64_t *notes;
};

/* Start the stack of a sample of thread and process (either may be
 * NULL): the recorded callchain, the LBR call stack (with --stitch-lbr
 * joined to the thread's earlier ones: the samples of a thread must come
 * in the capture's order), or the sampled IP. 0 or -ENOMEM. */
int ps_pipeline_begin_stack(struct ps_pipeline *pipeline, const struct ps_event *event,
                            struct ps_thread *thread, struct ps_process *process);
/* Append the frames of a user stack unwound for it (by
 * ps_pipeline_unwind() here or in another pipeline over the same
 * capture): n PCs, their notes (NULL: none) and why the walk ended. 0 or
 * -ENOMEM. */
int ps_pipeline_add_unwound(struct ps_pipeline *pipeline, struct ps_process *process,
                            const uint64_t *pcs, const uint64_t *notes, int n,
                            enum ps_unwind_stop stop);
/* The stack built so far; valid until the next ps_pipeline_begin_stack().
 * Its frames may be changed in place (the Python side marks its own). */
struct ps_pipeline_stack *ps_pipeline_stack(struct ps_pipeline *pipeline);

#endif /* PS_PIPELINE_PIPELINE_H */
