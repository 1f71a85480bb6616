/* The Python side of one reading of a capture: CPython's frames in the
 * pipeline's stacks.
 *  - It plugs into the pipeline as its frame rules: a frame in JIT code
 *    takes its name from the perf map (and, outside native mode, the
 *    jitdump) of its process, and CPython's trampolines, which have no
 *    CFI, get their unwind rule from the jitdump's .eh_frame or from the
 *    interpreter's template;
 *  - it merges each stack's native frames with its Python frames;
 *  - it reports, per process, what it found (pystitch info).
 * One per pipeline, used from that pipeline's thread.
 *
 * The interface of src/python to the other modules (see
 * docs/architecture.md for the header rule).
 */
#ifndef PS_PYTHON_PYTHON_H
#define PS_PYTHON_PYTHON_H

#include <stdbool.h>
#include <stddef.h>

#include "base/file_hooks.h"
#include "pipeline/pipeline.h"
#include "pystitch/pystitch.h"

struct ps_python;

struct ps_python_opts {
	size_t sz; /* sizeof(struct ps_python_opts) */
	enum ps_python_mode mode;
	/* Where perf-PID.map and jit-PID.dump are searched first (NULL:
	 * not), then the directory of the capture (NULL or "-": not), then
	 * /tmp. */
	const char *perf_map_dir;
	/* more directories like perf_map_dir, after it; the perf maps and
	 * jitdumps of any name in these are candidates for every process */
	const char *const *perf_map_dirs;
	size_t nr_perf_map_dirs;
	const char *perf_data_path;
	/* Where files are read from and who is told (may be NULL); must
	 * outlive the handle. */
	const struct ps_file_hooks *files;
	ps_log_fn log; /* what loading the name sources found */
	void *log_ctx;
	/* ps_frame.srcline of Python frames with a line: "FILE:LINE", FILE
	 * the base name unless full_source_path */
	bool srcline, full_source_path;
};

/* Make the Python side of pipeline and plug it in as the pipeline's
 * frame rules (in native mode only JIT code is named, from perf maps
 * alone, as perf does). The pipeline must outlive it. 0, -EINVAL or
 * -ENOMEM. */
int ps_python_new(const struct ps_python_opts *opts, struct ps_pipeline *pipeline,
                  struct ps_python **out);
void ps_python_free(struct ps_python *python);

/* Mark the user frames whose ELF symbol is named as CPython names Python
 * frames ("py::", in the ELF files `perf inject --jit` makes of a
 * jitdump) as Python frames. Whether the stack has a Python frame (those
 * the rules named included); *eval: whether it has a frame of CPython's
 * eval loop (Python code ran there, named or not), which the merged and
 * only modes mark even without Python frames. */
bool ps_python_mark_frames(struct ps_frame *frames, size_t nr_frames, bool *eval);

/* Whether process (may be NULL) is a CPython process (its interpreter
 * found) with JIT code mapped (CPython's trampolines): its stacks are
 * merged in the merged and only modes even without a Python frame, so
 * that one cut short is marked so. Another runtime's JIT code (a JVM's,
 * V8's) does not make a process's stacks Python stacks. */
bool ps_python_process_runs_trampolines(struct ps_python *python, struct ps_process *process);

/* The frames of a stack (of a sample of process, which may be NULL) in the
 * Python mode: in merged, all and only modes its user frames are replaced
 * by the merge of native and Python frames; *frames then points into a
 * buffer of the handle, valid until the next merge. 0 or -ENOMEM. */
int ps_python_merge(struct ps_python *python, struct ps_process *process,
                    const struct ps_pipeline_stack *stack, const struct ps_frame **frames,
                    size_t *nr_frames);

/* Call fn for every process of the pipeline's machine model that mapped a
 * CPython interpreter or JIT code, in pid order, with what was found to
 * name its Python frames. Reads no records. 0 or -ENOMEM. */
int ps_python_report(struct ps_python *python, ps_python_process_fn fn, void *ctx);

/* The end of the capture: make the choice of files for the processes
 * that had too few JIT addresses to make it before, and say which files
 * of the --perf-map-dir directories no process took. Once. */
void ps_python_finish(struct ps_python *python);

#endif /* PS_PYTHON_PYTHON_H */
