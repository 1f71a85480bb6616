/* The stitch module: the public session (ps_session_*), which ties the
 * reader, session, unwind, symbols and python modules together.
 *  - stitch.c: records in perf's order, native stacks, filters;
 *  - stitch_python.c: Python frames: perf-map and jitdump names of JIT code,
 *    unwind rules for CPython's trampolines, and the merge of each
 *    sample's native frames with its Python frames.
 * Private to src/stitch.
 */
#ifndef PS_STITCH_STITCH_H
#define PS_STITCH_STITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "pystitch/pystitch.h"
#include "python/python.h"
#include "machine/machine.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"

struct ps_stitch_python;
struct ps_stitch_jobs;

struct ps_session {
	struct ps_reader *reader;
	struct ps_session_opts opts;
	struct ps_machine *machine;
	struct ps_symbols *symbols;
	struct ps_dso *kernel_dso;
	struct ps_unwind_opts unwind_opts;
	struct ps_stitch_python *python; /* Python frames (stitch_python.c) */
	/* where symbols, perf maps and jitdumps are read from: the file
	 * system, or the archive the capture came in */
	struct ps_file_hooks files;
	char errmsg[512];

	struct ps_frame *frames;
	size_t nr_frames, cap_frames;
	/* the map of the previous frame of this stack: neighbours mostly
	 * share one (maps do not change while a stack is built) */
	const struct ps_process *hint_process;
	const struct ps_map *hint_map;
	uint64_t pcs[PS_UNWIND_DEFAULT_MAX_FRAMES * 2];
	/* this stack: where its user frames start, why the unwind ended,
	 * and whether it has a Python frame (a py:: frame of JIT code);
	 * stacks without one are not merged */
	size_t user_first;
	bool unwound;
	enum ps_unwind_stop stop;
	bool saw_python;
	struct ps_stack stack;
	/* samples that passed the filters so far; seq is the current one's
	 * number among them */
	uint64_t passed, seq;
	/* opts.jobs > 1: worker sessions unwind, this one takes their
	 * results (jobs.c); also the log that serialises everyone's messages */
	struct ps_stitch_jobs *jobs;
	/* a worker session: it unwinds only the samples of blocks
	 * b % shard_count == shard_index (PS_STITCH_BLOCK samples each) */
	bool worker;
	unsigned shard_index, shard_count;
	const bool *closing; /* a worker: set when the session closes */
	bool errmsg_set; /* errmsg holds a worker's failure */
};

/* Samples per block of the work split between worker sessions: enough to
 * keep a worker's caches warm, few enough to share the work evenly. */
#define PS_STITCH_BLOCK 64

/* Unwinding state hung on a process of the machine model. */
#define BASE_CACHE 64

struct process_unwind {
	struct ps_session *session;
	struct ps_process *process;
	struct ps_unwinder *unwinder;
	/* lowest mapping base per object, valid for one map generation */
	uint64_t base_generation;
	struct {
		const struct ps_mapped_object *object;
		uint64_t base;
	} bases[BASE_CACHE];
	/* find_map()'s last answer, valid for one map generation: the
	 * unwinder asks for every frame, mostly about the same few maps */
	bool last_valid;
	uint64_t last_generation;
	struct ps_unwind_map last;
	/* the interpreter of the process (stitch_python.c): its trampoline template
	 * and where it is mapped, looked up again when the maps change */
	uint64_t interp_generation;
	bool interp_searched;
	uint64_t interp_map_start;
	const struct ps_mapped_object *interp_object;
	const struct ps_py_interp *interp;
	uint64_t template_map_start;
	const struct ps_mapped_object *template_object;
	const struct ps_trampoline *trampoline;
	/* whether the process has mapped JIT code, for one map generation */
	bool jit_checked, has_jit;
	uint64_t jit_generation;
};

/* stitch.c */
struct ps_dso *ps_stitch_object_dso(struct ps_session *s, struct ps_mapped_object *object);
/* A worker session for jobs (opts as the main session's, with its own log
 * and jobs 0), unwinding shard index of count. As ps_session_open(). */
int ps_stitch_open_worker(const char *path, const struct ps_session_opts *opts, unsigned index,
                          unsigned count, struct ps_session **out);
/* A worker session's next sample to unwind, unwound: its number among the
 * samples that passed the filters, its PCs in s->pcs (*n of them) and why
 * the walk ended. 1, 0 at the end, or -errno (message in s->errmsg). */
int ps_stitch_unwind_next(struct ps_session *s, uint64_t *seq, int *n, enum ps_unwind_stop *stop);

/* jobs.c */
/* Route the session's messages through one lock (opts.log is replaced):
 * called at open before anything can log, when opts.jobs > 1. 0 or
 * -ENOMEM. */
int ps_stitch_jobs_new(struct ps_session *s);
/* Open the worker sessions and start their threads. 0 or -errno with the
 * message in s->errmsg. */
int ps_stitch_jobs_start(struct ps_session *s, const char *path);
/* Whether the workers are running (else the session unwinds itself). */
bool ps_stitch_jobs_running(const struct ps_stitch_jobs *jobs);
/* The unwound stack of the current sample (s->seq) from its worker: PCs in
 * s->pcs. 0; 1 when the worker ended without it (the capture changed
 * under it?): the caller unwinds it itself; or the worker's -errno with
 * the message in s->errmsg (and s->errmsg_set). */
int ps_stitch_jobs_take(struct ps_session *s, int *n, enum ps_unwind_stop *stop);
/* Stop the workers, close their sessions, free everything. */
void ps_stitch_jobs_free(struct ps_stitch_jobs *jobs);

/* stitch_python.c */
int ps_stitch_python_new(struct ps_session *s, const char *perf_data_path);
void ps_stitch_python_free(struct ps_stitch_python *py);
/* Name an address of JIT code (object->jit_pid > 0) from the perf map or
 * jitdump of that process: fills f->sym, symoff, python. In native mode
 * only the perf map is used, as perf does. */
void ps_stitch_python_name_frame(struct ps_session *s, const struct ps_mapped_object *object,
                                 int32_t pid, uint64_t ip, struct ps_frame *f);
/* Whether the process has mapped executable anonymous memory (JIT code,
 * such as CPython's trampolines). */
bool ps_stitch_python_has_jit(struct process_unwind *pu);
/* ps_unwind_callbacks.frame_rule; ctx is the struct process_unwind. */
bool ps_stitch_python_frame_rule(void *ctx, uint64_t pc, struct ps_unwind_rule *out);
/* Replace the stack's user frames by the merge of native and Python
 * frames (the session's python mode). 0 or -ENOMEM. */
int ps_stitch_python_merge(struct ps_session *s, struct process_unwind *pu);
/* ps_session_python_processes() once the capture has been read. */
int ps_stitch_python_report(struct ps_session *s, ps_python_process_fn fn, void *ctx);

#endif /* PS_STITCH_STITCH_H */
