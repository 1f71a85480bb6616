/* pystitch's output formats, for any program: perf script text, folded
 * stacks, SVG flame graphs, pprof profiles, speedscope JSON, `pystitch
 * info` and `pystitch dump` text, archives, and a safe way to write an
 * output file. The pystitch program is built on these functions alone.
 *
 * Included by pystitch/pystitch.h, whose conventions hold here too: ps_
 * names, opaque handles from *_open() freed by *_close() (which takes
 * NULL), options structs whose first field is their size (set .sz =
 * sizeof(opts); a NULL opts means the defaults; a zero sz, or non-zero
 * bytes past the fields this library knows, fail with -EINVAL), negative
 * errno returns, and no state shared between handles. A failed *_open()
 * leaves *out NULL: there is nothing to close.
 *
 * Writers never write to a descriptor themselves: they build their text in
 * memory and hand it, in blocks of about 64 KiB and in order, to a write
 * callback the caller supplies. ps_output_file_write() is such a callback,
 * for files, devices, pipes and standard output.
 */
#ifndef PYSTITCH_OUTPUT_H
#define PYSTITCH_OUTPUT_H

#include <pystitch/pystitch.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Take size bytes of output (size > 0). Returns 0 to go on, or a negative
 * errno, which stops the writer: the writer's call returns that value. */
typedef int (*ps_write_fn)(void *ctx, const void *data, size_t size);

/* ------------------------------------------------------------------ */
/* Output files                                                        */
/* ------------------------------------------------------------------ */

/* A file being written without harming what its path names: a regular
 * file (or a new one) is written as a file without a name in the same
 * directory (O_TMPFILE; else a temporary "PATH.XXXXXX") and put in place
 * by ps_output_file_commit() in one step, keeping the old file's mode, so
 * a run that fails or is killed leaves the old file as it was and nothing
 * beside it. Symbolic links are followed, as a shell's `>` follows them.
 * A device, FIFO, terminal or socket is written through, never truncated,
 * replaced or removed. A directory is refused. */
struct ps_output_file;

/* Start writing path. 0 and *out, or -EISDIR (a directory), -ELOOP (too
 * many links), -ENOMEM, or the negative errno of open(2). */
PS_API int ps_output_file_open(const char *path, struct ps_output_file **out);
/* Write through to fd, an open descriptor (standard output, say), which
 * stays the caller's: commit and abort do not close it. 0 and *out, or
 * -EBADF, -ENOMEM. */
PS_API int ps_output_file_open_fd(int fd, struct ps_output_file **out);
/* A ps_write_fn (ctx is the struct ps_output_file *): writes all of data,
 * retrying on interruption. 0, or the negative errno of write(2); after a
 * failure every call returns it again. */
PS_API int ps_output_file_write(void *file, const void *data, size_t size);
/* The descriptor being written (for isatty(3), fstat(2), ...). */
PS_API int ps_output_file_fd(const struct ps_output_file *file);
/* Put a regular file in place, close and free. 0, or a negative errno:
 * the first failed write, or what made the file impossible to put in
 * place (then nothing was replaced). The handle is freed either way. */
PS_API int ps_output_file_commit(struct ps_output_file *file);
/* Close and free without keeping anything (an unnamed file vanishes, a
 * temporary is removed; a device or FIFO keeps what was written). NULL is
 * a no-op. */
PS_API void ps_output_file_abort(struct ps_output_file *file);

/* ------------------------------------------------------------------ */
/* perf script text                                                    */
/* ------------------------------------------------------------------ */

struct ps_script_opts {
	size_t sz; /* sizeof(struct ps_script_opts) */
	/* perf script's -F: "comm,tid,time,ip,sym", "+srcline", "-cpu",
	 * "sw:comm,ip" (the fields of perf 6.1's -F; types hw, sw, trace,
	 * raw, break, synth). brstackinsn with srccode on a capture with
	 * branch stacks, which pystitch cannot print yet, fails at the first
	 * write. NULL: perf script's defaults.
	 * Open the session with ps_session_opts.srcline when ps_script_fields_need_srcline(). Not
	 * copied: keep it valid until ps_script_close(). */
	const char *fields;
	/* Print the stacks (the default); false: one line per sample, as
	 * perf script -G (open the session with no_callchain too). */
	bool hide_call_graph;
	bool ns; /* times in nanoseconds (perf script --ns) */
	ps_write_fn write; /* required */
	void *write_ctx;
	/* The time column counts from the first event printed (perf
	 * script --reltime), or from the previous one (--deltatime). */
	bool reltime, deltatime;
	/* Which records other than samples ps_script_write_record() prints
	 * (PS_SCRIPT_SHOW_*: perf script's --show-*-events). */
	uint32_t show_events;
	/* Records on other CPUs than these are not printed (perf script
	 * -C filters them too; a record without a CPU passes); nr_cpus 0:
	 * all. Not copied. */
	const int32_t *cpus;
	size_t nr_cpus;
	/* perf script -L: the thread's name in 8 columns, cut there, and
	 * the CPU without brackets. */
	bool latency;
	/* perf script --stop-bt: a stack is printed down to its first frame
	 * whose function has one of these names, that frame included. Not
	 * copied. */
	const char *const *stop_bt;
	size_t nr_stop_bt;
	/* Where the source lines of -F srccode go: NULL, after each sample;
	 * or into this other writer (perf script --per-event-dump writes
	 * them to standard output), which then also keeps what was printed
	 * last per thread. Not copied; it must outlive this writer's
	 * writes. Open the session with ps_session_opts.srccode when
	 * ps_script_fields_need_srccode(). */
	struct ps_script *srccode_to;
	/* Names a kernel address for the tracepoints' %pS and %ps arguments
	 * (perf script's function resolver, machine__resolve_kernel_addr()):
	 * the symbol holding addr, with its start in *start, or NULL.
	 * Optional: without it they print as hex. ps_session_kernel_symbol()
	 * is one, with the session as ctx. */
	const char *(*kernel_symbol)(void *ctx, uint64_t addr, uint64_t *start);
	void *kernel_symbol_ctx;
	/* Names the address of a TEXT_POKE record for --show-text-poke-events
	 * (perf_event__fprintf_text_poke()), called when the record is
	 * printed: the symbol and its start as for kernel_symbol, or NULL.
	 * Optional: without it the address is printed alone.
	 * ps_session_text_poke_symbol() is one, with the session as ctx. */
	const char *(*text_poke_symbol)(void *ctx, uint64_t addr, uint64_t *start);
	void *text_poke_symbol_ctx;
};

#define PS_SCRIPT_SHOW_TASK (1u << 0) /* COMM, FORK, EXIT */
#define PS_SCRIPT_SHOW_MMAP (1u << 1) /* MMAP, MMAP2 */
#define PS_SCRIPT_SHOW_SWITCH (1u << 2) /* SWITCH, SWITCH_CPU_WIDE */
#define PS_SCRIPT_SHOW_NAMESPACE (1u << 3)
#define PS_SCRIPT_SHOW_CGROUP (1u << 4)
#define PS_SCRIPT_SHOW_LOST (1u << 5) /* LOST */
/* FINISHED_ROUND: perf then reads the capture in file order (open the
 * session with ps_session_opts.file_order) */
#define PS_SCRIPT_SHOW_ROUND (1u << 6)
#define PS_SCRIPT_SHOW_BPF (1u << 7) /* KSYMBOL, BPF_EVENT */
#define PS_SCRIPT_SHOW_TEXT_POKE (1u << 8) /* TEXT_POKE, KSYMBOL */

/* Writes samples as `perf script` prints them. */
struct ps_script;

/* reader is the capture's (ps_session_reader()); it must outlive the
 * writer. The fields are checked against the capture's events at the
 * first ps_script_write(), since in pipe mode the events are known only
 * once records have arrived. 0 and *out, or -EINVAL (no write callback,
 * bad opts), -ENOMEM. */
PS_API int ps_script_open(const struct ps_reader *reader, const struct ps_script_opts *opts,
                          struct ps_script **out);
PS_API void ps_script_close(struct ps_script *script);
/* One sample: its header line, then its stack and a blank line. 0,
 * -EINVAL when the fields do not suit the capture (the message is in
 * ps_script_errmsg(): a field the events do not record, an unknown
 * field), -ENOMEM, or the write callback's error. */
PS_API int ps_script_write(struct ps_script *script, const struct ps_stack *stack);
/* Whether the writer prints this record (opts.show_events), and if so
 * the thread perf names for it, pid and tid (ps_session_comm() gives its
 * name, from ps_session_opts.record); *tid is -1 when there is none.
 * Then ps_script_write_record() with that name (NULL when *tid is -1). */
PS_API bool ps_script_shows_record(const struct ps_script *script, const struct ps_event *event,
                                   int32_t *pid, int32_t *tid);
/* One record other than a sample, as perf script's --show-*-events print
 * it: the start of a sample's line, then PERF_RECORD_NAME and its fields.
 * 0, -EINVAL as ps_script_write(), or the write callback's error. */
PS_API int ps_script_write_record(struct ps_script *script, const struct ps_event *event,
                                  const char *comm);
/* Hand over what is still buffered. 0 or an error as above. */
PS_API int ps_script_flush(struct ps_script *script);
/* The last failure as one line ("" if none). Owned by the writer. */
PS_API const char *ps_script_errmsg(const struct ps_script *script);
/* Whether a -F spec names srcline, so that the session must look source
 * lines up (ps_session_opts.srcline). fields may be NULL. */
PS_API bool ps_script_fields_need_srcline(const char *fields);
/* Whether a -F spec names srccode (ps_session_opts.srccode). */
PS_API bool ps_script_fields_need_srccode(const char *fields);
/* What a -F spec needs of the branches (ps_session_opts.branches, enum
 * ps_branch_names): the objects (brstack, brstackoff), or the functions
 * too (brstacksym, which perf prints only without brstack). */
PS_API int ps_script_fields_need_branches(const char *fields);
/* Whether a -F spec names brstackinsn or brstackinsnlen
 * (ps_session_opts.branch_listing). */
PS_API bool ps_script_fields_need_branch_listing(const char *fields);
/* Whether a -F spec names addr (ps_session_opts.addr_names). */
PS_API bool ps_script_fields_need_addr_names(const char *fields);

/* ------------------------------------------------------------------ */
/* Folded stacks (pystitch collapse)                                   */
/* ------------------------------------------------------------------ */

/* What starts each folded line, before the stack's frames (and the
 * frames just above a flame graph's root). */
enum ps_collapse_per {
	PS_COLLAPSE_PER_COMM = 0, /* the thread's name, as stackcollapse-perf.pl */
	PS_COLLAPSE_PER_PID, /* comm-PID (its --pid) */
	PS_COLLAPSE_PER_TID, /* comm-PID/TID (its --tid) */
	PS_COLLAPSE_PER_NONE, /* the stack alone */
};

struct ps_collapse_opts {
	size_t sz; /* sizeof(struct ps_collapse_opts) */
	enum ps_collapse_per per;
	/* weigh each sample by its period (what stackcollapse-perf.pl sums,
	 * and `pystitch collapse`'s default); false: 1 per sample */
	bool period;
	/* mark frames as stackcollapse-perf.pl --all does on perf script
	 * text: "_[k]" after kernel frames (a DSO in brackets other than
	 * [unknown], or a vmlinux), "_[j]" after frames of a perf map
	 * (/tmp/perf-PID.map: Python and other JIT frames) */
	bool annotate;
	/* name Python frames with their line when they have one
	 * (ps_frame.line): "py::qualname:file:line" */
	bool lines;
};

/* The unique stacks of a capture and their weights: memory grows with
 * the number of unique stacks, not of samples. */
struct ps_collapse;

/* 0 and *out, or -EINVAL (bad opts), -ENOMEM. */
PS_API int ps_collapse_open(const struct ps_collapse_opts *opts, struct ps_collapse **out);
PS_API void ps_collapse_close(struct ps_collapse *collapse);
/* Count one sample. 0 or -ENOMEM (the sample is not counted). */
PS_API int ps_collapse_add(struct ps_collapse *collapse, const struct ps_stack *stack);
/* Write every line, "frame;frame;... weight\n" from the root down, sorted
 * as `LC_ALL=C sort` sorts them. The number of lines, -ENOMEM, or the
 * write callback's error. */
PS_API int64_t ps_collapse_write(struct ps_collapse *collapse, ps_write_fn write, void *ctx);

/* ------------------------------------------------------------------ */
/* Flame graphs: an interactive SVG                                    */
/* ------------------------------------------------------------------ */

struct ps_flamegraph_opts {
	size_t sz; /* sizeof(struct ps_flamegraph_opts) */
	enum ps_collapse_per per;
	bool period; /* weigh each sample by its period, not 1 */
	bool icicle; /* the root on top, callees below */
	const char *title; /* NULL: "Flame Graph" or "Icicle Graph" */
	unsigned width; /* of the image in pixels; 0: 1200 */
	/* Frames narrower than this many pixels are not drawn (nor their
	 * callees); their weight stays in their caller's. 0 draws all
	 * (flamegraph.pl's default is 0.1). */
	double min_width;
	/* a box per line of each Python function, "py::qualname:file:line",
	 * for the frames that have one (ps_frame.line) */
	bool lines;
};

/* The merged call tree of a capture: one node per unique call path. */
struct ps_flamegraph;

/* 0 and *out, or -EINVAL (bad opts), -ENOMEM. */
PS_API int ps_flamegraph_open(const struct ps_flamegraph_opts *opts, struct ps_flamegraph **out);
PS_API void ps_flamegraph_close(struct ps_flamegraph *flamegraph);
/* Count one sample. 0 or -ENOMEM (the sample is not counted, or only part
 * of its path is made). */
PS_API int ps_flamegraph_add(struct ps_flamegraph *flamegraph, const struct ps_stack *stack);
/* Write the SVG document: boxes coloured by kind (Python, native,
 * CPython's own code, kernel), click to zoom, search. 0, -ENOMEM, or the
 * write callback's error. */
PS_API int ps_flamegraph_write(struct ps_flamegraph *flamegraph, ps_write_fn write, void *ctx);
/* The weight of all samples added; the number of call-tree nodes, the
 * root included. */
PS_API uint64_t ps_flamegraph_total(const struct ps_flamegraph *flamegraph);
PS_API size_t ps_flamegraph_nr_nodes(const struct ps_flamegraph *flamegraph);

/* ------------------------------------------------------------------ */
/* pprof profiles (profile.proto, gzipped)                             */
/* ------------------------------------------------------------------ */

/* Each sample's stack becomes a pprof Sample of location ids (leaf first)
 * with two values, the number of samples and the sum of their periods,
 * and pid, tid and comm labels; samples with the same stack, pid, tid and
 * comm are one Sample. A native frame's location holds its address as
 * ps_frame.addr has it (the file offset for user code, the raw address
 * for the kernel) and its mapping, one per DSO, whose range is the
 * addresses seen; the frames of one address's inline chain are the lines
 * of one location, innermost first. Python frames ("py::qualname:file")
 * have locations without mapping or address whose function is named
 * qualname, in file file, and whose line is the frame's (ps_frame.line,
 * 0 when it has none), so that `pprof -list` shows Python lines. The
 * first mapping, which profile.proto calls the main binary and pprof
 * heads its reports with, is the program most samples ran
 * (ps_stack.executable; without addresses when no frame fell in it); the
 * others follow in the order they were met. */
struct ps_pprof_opts {
	size_t sz; /* sizeof(struct ps_pprof_opts) */
	/* file names and line numbers of native functions from the frames'
	 * srclines (open the session with ps_session_opts.srcline); else
	 * the DSO is the file */
	bool srcline;
};

struct ps_pprof_write_opts {
	size_t sz; /* sizeof(struct ps_pprof_write_opts) */
	/* wall-clock time the capture started, ns since the epoch; 0:
	 * unknown */
	int64_t time_nanos;
	/* build ids of the mappings' files: the capture's
	 * (ps_features.build_ids), or with those of the files it lacks
	 * (ps_session_build_ids()); the first entry naming a file wins */
	size_t nr_build_ids;
	const struct ps_build_id *build_ids;
};

struct ps_pprof_stats {
	uint64_t nr_added; /* samples added */
	uint64_t period; /* sum of their periods */
	size_t samples, locations, functions, mappings; /* unique ones */
};

/* The unique stacks of a capture, their locations, functions and names;
 * memory grows with those, not with the number of samples. */
struct ps_pprof;

/* 0 and *out, or -EINVAL (bad opts), -ENOMEM. */
PS_API int ps_pprof_open(const struct ps_pprof_opts *opts, struct ps_pprof **out);
PS_API void ps_pprof_close(struct ps_pprof *pprof);
/* Count one sample. 0 or -ENOMEM. */
PS_API int ps_pprof_add(struct ps_pprof *pprof, const struct ps_stack *stack);
/* Counts so far; owned by the profile. */
PS_API const struct ps_pprof_stats *ps_pprof_stats(const struct ps_pprof *pprof);
/* The first and last sample times; false when no sample had one. */
PS_API bool ps_pprof_time_range(const struct ps_pprof *pprof, uint64_t *first, uint64_t *last);
/* Write the gzipped Profile message. opts may be NULL. The number of
 * bytes written, -EINVAL (bad opts), -ENOMEM, or the write callback's
 * error. */
PS_API int64_t ps_pprof_write(struct ps_pprof *pprof, const struct ps_pprof_write_opts *opts,
                              ps_write_fn write, void *ctx);

/* ------------------------------------------------------------------ */
/* speedscope profiles (JSON)                                          */
/* ------------------------------------------------------------------ */

/* What one profile of the file holds, and its name (the names
 * speedscope's own importer of perf script text gives). */
enum ps_speedscope_per {
	PS_SPEEDSCOPE_PER_TID = 0, /* a thread: "comm pid: PID tid: TID" */
	PS_SPEEDSCOPE_PER_PID, /* a process: "comm pid: PID" */
	PS_SPEEDSCOPE_PER_COMM, /* the threads of one name: "comm" */
	PS_SPEEDSCOPE_PER_NONE, /* every sample: ps_speedscope_opts.name */
};

/* A file of speedscope's published format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per thread (opts.per), in the order their first samples came,
 * each with its samples in time order (a sample's stack root first, as
 * indexes into the file's one frame table) and their weights; startValue
 * 0 and endValue the sum of the weights, as speedscope's own export
 * writes them. A frame is {name, file, line}: a native frame is its
 * symbol ("[unknown]" when none) in its DSO, or with opts.srcline in its
 * source file at its line when the srcline has them; a Python frame
 * ("py::qualname:file") is qualname in file, at its line when it has one
 * (ps_frame.line). Strings are escaped for
 * JSON, and bytes that are not UTF-8 (a hostile capture's names) become
 * U+FFFD, one per byte. activeProfileIndex names the heaviest profile,
 * the one speedscope opens on. */
struct ps_speedscope_opts {
	size_t sz; /* sizeof(struct ps_speedscope_opts) */
	enum ps_speedscope_per per;
	/* weigh each sample by its period: unit "nanoseconds" when every
	 * sample is of cpu-clock or task-clock, else "none"; false: 1 per
	 * sample, unit "none" */
	bool period;
	/* native frames in their source file and line from the frames'
	 * srclines (open the session with ps_session_opts.srcline) */
	bool srcline;
	/* The file's name (speedscope's title), e.g. the capture's; also the
	 * name of the profile with PS_SPEEDSCOPE_PER_NONE ("all samples"
	 * when NULL). Copied. */
	const char *name;
};

struct ps_speedscope_stats {
	uint64_t nr_added; /* samples added */
	uint64_t weight; /* the sum of their weights (saturating) */
	size_t profiles, frames, stacks; /* unique ones */
};

/* The samples of a capture: a sample costs its stack's index, its weight
 * and its time; memory grows with the number of samples and of unique
 * stacks and frames, and no sample allocates on its own. */
struct ps_speedscope;

/* 0 and *out, or -EINVAL (bad opts), -ENOMEM. */
PS_API int ps_speedscope_open(const struct ps_speedscope_opts *opts, struct ps_speedscope **out);
PS_API void ps_speedscope_close(struct ps_speedscope *speedscope);
/* Count one sample. 0 or -ENOMEM (the sample is not counted). */
PS_API int ps_speedscope_add(struct ps_speedscope *speedscope, const struct ps_stack *stack);
/* Counts so far; owned by the writer. */
PS_API const struct ps_speedscope_stats *
ps_speedscope_stats(const struct ps_speedscope *speedscope);
/* Write the JSON document. The number of bytes written, -ENOMEM, or the
 * write callback's error. */
PS_API int64_t ps_speedscope_write(struct ps_speedscope *speedscope, ps_write_fn write, void *ctx);

/* ------------------------------------------------------------------ */
/* Capture header text (pystitch info)                                 */
/* ------------------------------------------------------------------ */

struct ps_info_opts {
	size_t sz; /* sizeof(struct ps_info_opts) */
	/* what perf prints as "captured on": the capture file's
	 * modification time, seconds since the epoch */
	int64_t captured_on;
	/* perf's -I/--show-info: the features perf prints only on request
	 * (CPU, NUMA, cache, memory and hybrid topology) instead of its
	 * "use -I to display" hints */
	bool show_info;
	/* after perf's text, pystitch's own lines: the build ids and the
	 * size of the tracing data */
	bool pystitch;
};

/* The header and features, byte for byte as perf 6.1's `perf report
 * --header-only` prints them, then (opts->pystitch) the build ids and
 * tracing data size. For a pipe capture read the whole stream first (its
 * features arrive as records); a file's are read when it is opened. 0,
 * -EINVAL (bad opts), -ENOMEM, or the write callback's error. */
PS_API int ps_info_write(const struct ps_reader *reader, const struct ps_info_opts *opts,
                         ps_write_fn write, void *ctx);
/* One process of the Python section (ps_session_python_processes()):
 * its interpreter, version, trampoline and name sources; heading: begin
 * with the section's heading (for the first process). 0, -ENOMEM, or the
 * write callback's error. */
PS_API int ps_info_write_python(const struct ps_python_process *process, bool heading,
                                ps_write_fn write, void *ctx);

/* ------------------------------------------------------------------ */
/* Record dumps (pystitch dump)                                        */
/* ------------------------------------------------------------------ */

struct ps_dump_opts {
	size_t sz; /* sizeof(struct ps_dump_opts) */
	ps_write_fn write; /* required */
	void *write_ctx;
	/* Leave out the hex dump of each record (the lines from "." to the
	 * empty line that ends it); the rest is unchanged. */
	bool no_hex;
	/* A machine model of the same reader (ps_model_open()), which the
	 * dump keeps in step with every record it writes (do not apply
	 * records to it yourself) to print the " ... thread:" and
	 * " ...... dso:" lines perf report prints after each sample. NULL:
	 * those lines are left out. Must outlive the dump; the caller
	 * closes it. */
	struct ps_model *model;
};

/* Writes records as `perf report -D` prints them, and what it counts from
 * record to record (perf's per-event sample counts). Fed the records of
 * a reader in perf's order (PS_ORDER_TIME), with a model, the text is
 * perf report -D's, byte for byte (perf 6.1, a capture of this machine's
 * byte order; the kernel's DSO is always "[kernel.kallsyms]", which perf
 * prints too unless it reads /proc/kcore or a vmlinux). */
struct ps_dump;

/* reader must outlive the dump. 0 and *out, or -EINVAL (no write
 * callback, bad opts), -ENOMEM. The first lines perf prints before any
 * record ("# To display the perf.data header info, ...") are written with
 * the first block. */
PS_API int ps_dump_open(const struct ps_reader *reader, const struct ps_dump_opts *opts,
                        struct ps_dump **out);
PS_API void ps_dump_close(struct ps_dump *dump);
/* One record: "\n0xOFFSET@PATH [0xSIZE]: event: TYPE" (PATH: the input
 * as perf names it: "pipe" for a pipe-mode capture, else
 * ps_reader_capture_path(), the path given to -i), the hex dump of
 * its bytes, perf's timestamp columns, "0xOFFSET [0xSIZE]:
 * PERF_RECORD_NAME" and the fields and detail lines perf prints, and for a
 * sample its thread and DSO lines (with opts.model). A record whose
 * fields perf does not print leaves its line open: the next record's
 * first newline ends it. COMPRESSED records write nothing (the records
 * inside them follow). 0, -ENOMEM, or the write callback's error. */
PS_API int ps_dump_write(struct ps_dump *dump, const struct ps_event *event);
/* The counts that end a dump, per record type ("Aggregated stats:") and
 * per event, then ps_dump_flush(). */
PS_API int ps_dump_finish(struct ps_dump *dump);
/* Hand over what is still buffered. 0 or the error. */
PS_API int ps_dump_flush(struct ps_dump *dump);

/* ------------------------------------------------------------------ */
/* Archives: a capture and every file its analysis reads, in one file  */
/* ------------------------------------------------------------------ */

/* Whether path names a pystitch archive (by its first bytes, without
 * unpacking it). */
PS_API bool ps_path_is_archive(const char *path);

struct ps_archive_writer_opts {
	size_t sz; /* sizeof(struct ps_archive_writer_opts) */
	/* How the capture is read: where files are found (symfs,
	 * buildid_dir, kallsyms, vmlinux, perf_map_dir, which the archive
	 * keeps and readers of it use), force, log (warnings name the files
	 * that were not found). Copied as ps_session_open() copies it (the
	 * strings and arrays it points to stay the caller's until
	 * ps_archive_writer_close()); NULL: the defaults. Its file_used
	 * callback, when set, is told too. */
	const struct ps_session_opts *session;
	/* Also pack the separate debug files symbols were read from; without
	 * it the archive holds only the answers they gave for the addresses
	 * the capture reached, which is what every reader prints from it. */
	bool with_debuginfo;
	/* Told of each file packed, with its kind ("elf", "debuginfo",
	 * "kallsyms", "vmlinux", "perf-map", "jitdump", "names"); NULL: not
	 * told. Strings valid during the call. */
	void (*packed)(void *ctx, const char *kind, const char *path);
	void *packed_ctx;
};

/* Reads a capture as `pystitch script` would, noting every file the
 * session reads, then packs the capture and those files (a zstd-compressed
 * tar) which ps_reader_open() and ps_session_open() read in place of the
 * capture. */
struct ps_archive_writer;

/* capture must be a perf.data file (not standard input, not an archive).
 * The open convention of ps_session_open(): 0 and *out, or a negative
 * errno with *out NULL and the reason in one line to the session options'
 * log at PS_LOG_ERROR: -ESPIPE for "-", -EINVAL for an archive or bad
 * opts, -ENOMEM, and those of ps_session_open(). */
PS_API int ps_archive_writer_open(const char *capture, const struct ps_archive_writer_opts *opts,
                                  struct ps_archive_writer **out);
PS_API void ps_archive_writer_close(struct ps_archive_writer *writer);
/* The session reading the capture: a caller may take the stacks from it
 * with ps_session_next() (to show progress); ps_archive_writer_write()
 * reads what is left. Owned by the writer. */
PS_API struct ps_session *ps_archive_writer_session(struct ps_archive_writer *writer);
/* Read the rest of the capture, then write the archive to path (through
 * ps_output_file_open(): a regular file is replaced only once complete).
 * The number of files packed, the capture among them, or a negative
 * errno with the message in ps_archive_writer_errmsg(): a damaged
 * capture (that of ps_session_next()), a file that cannot be read or
 * changed while being packed, -ENOMEM. Call once. */
PS_API int ps_archive_writer_write(struct ps_archive_writer *writer, const char *path);
/* The last failure as one line ("" if none). Owned by the writer. */
PS_API const char *ps_archive_writer_errmsg(const struct ps_archive_writer *writer);

#ifdef __cplusplus
}
#endif

#endif /* PYSTITCH_OUTPUT_H */
