/* Output module: turns decoded events and header facts into text.
 * Printers append to a ps_strbuf; they never write to a descriptor. */
#ifndef PS_OUTPUT_OUTPUT_H
#define PS_OUTPUT_OUTPUT_H

#include <stdint.h>
#include <time.h>

#include "base/strbuf.h"
#include "pystitch/pystitch.h"

struct ps_dump_read_slot;

/* What a dump remembers from record to record: the per-event sample counts
 * that perf prints after its aggregated stats ("cpu-clock stats:"), and for
 * PERF_SAMPLE_READ the last counter value of each sample id (perf counts a
 * sample for an event only when that event's value moved). Initialise it
 * with ps_dump_state_init(), free it with ps_dump_state_release(). */
struct ps_dump_state {
	uint64_t *nr_samples; /* indexed by ps_attr.index */
	size_t nr_samples_cap;
	struct ps_dump_read_slot *read_slots; /* open addressing by id */
	size_t read_cap, read_used;
	bool failed; /* an allocation failed: per-event counts are incomplete */
};

void ps_dump_state_init(struct ps_dump_state *st);
void ps_dump_state_release(struct ps_dump_state *st);

/* `pystitch dump`: one record, in the spirit of `perf report -D`.
 * The first line is "0xOFFSET [0xSIZE]: PERF_RECORD_NAME<perf's fields>",
 * the same text perf prints after its timestamp; detail lines follow.
 * The offset is printed with %#lx as perf does, so offset 0 reads "0".
 * COMPRESSED records print nothing (perf does not dump them either; the
 * records inside them follow, carrying their offset). st may be NULL: the
 * per-event counts are then not kept. */
void ps_dump_event(struct ps_strbuf *out, struct ps_dump_state *st, const struct ps_reader *reader,
                   const struct ps_event *event);
/* The per-type record counts that end a dump ("Aggregated stats:"), then
 * the per-event sample counts when st is not NULL. */
void ps_dump_stats(struct ps_strbuf *out, const struct ps_dump_state *st,
                   const struct ps_reader *reader);

/* `pystitch info`: the header and features, like `perf report --header-only`.
 * captured_on is what perf prints as "captured on": the input file's mtime. */
void ps_info_print(struct ps_strbuf *out, const struct ps_reader *reader, time_t captured_on);
/* One process of `pystitch info`'s Python section (see
 * ps_session_python_processes()); first: print the section's heading. */
void ps_info_print_python(struct ps_strbuf *out, const struct ps_python_process *process,
                          bool first);

/* ---- `pystitch script`: perf script text -------------------------- */

enum ps_script_field {
	PS_FIELD_COMM = 1u << 0,
	PS_FIELD_TID = 1u << 1,
	PS_FIELD_PID = 1u << 2,
	PS_FIELD_TIME = 1u << 3,
	PS_FIELD_CPU = 1u << 4,
	PS_FIELD_EVENT = 1u << 5,
	PS_FIELD_TRACE = 1u << 6,
	PS_FIELD_IP = 1u << 7,
	PS_FIELD_SYM = 1u << 8,
	PS_FIELD_DSO = 1u << 9,
	PS_FIELD_ADDR = 1u << 10,
	PS_FIELD_SYMOFF = 1u << 11,
	PS_FIELD_SRCLINE = 1u << 12,
	PS_FIELD_PERIOD = 1u << 13,
};

/* perf script's output types, each with its own default fields */
enum ps_output_type {
	PS_OUTPUT_HW,
	PS_OUTPUT_SW,
	PS_OUTPUT_TRACE,
	PS_OUTPUT_HW_CACHE,
	PS_OUTPUT_RAW,
	PS_OUTPUT_BREAK,
	PS_OUTPUT_OTHER,
	PS_OUTPUT_TYPES,
};

struct ps_script_format {
	uint32_t fields[PS_OUTPUT_TYPES];
	uint32_t user_fields[PS_OUTPUT_TYPES]; /* named in -F */
	bool user_set[PS_OUTPUT_TYPES];
	bool ns;
	bool use_callchain;
	size_t name_width; /* longest event name of the capture */
	void *tep; /* struct tep_handle * for tracepoints */
};

int ps_output_type(uint32_t attr_type);
/* Set up the fields from perf's defaults, an optional -F spec, and what
 * the capture's events record. use_callchain false is -G. On a bad spec
 * or a field the capture cannot supply, returns -EINVAL with a message
 * in err. */
int ps_script_format_init(struct ps_script_format *fmt, const struct ps_reader *reader,
                          const char *spec, bool use_callchain, bool ns, char *err, size_t errsz);
bool ps_script_wants_srcline(const struct ps_script_format *fmt);
/* One sample: the header line, then its stack and a blank line. */
void ps_script_print(struct ps_strbuf *out, const struct ps_script_format *fmt,
                     const struct ps_stack *stack);

/* ---- `pystitch collapse`: folded stacks ---------------------------- */

/* What starts each folded line, before the stack's frames. */
enum ps_collapse_per {
	PS_COLLAPSE_PER_COMM = 0, /* the thread's name (stackcollapse-perf.pl) */
	PS_COLLAPSE_PER_PID, /* comm-PID (its --pid) */
	PS_COLLAPSE_PER_TID, /* comm-PID/TID (its --tid) */
	PS_COLLAPSE_PER_NONE, /* the stack alone */
};

struct ps_collapse_opts {
	enum ps_collapse_per per;
	bool period; /* weigh each sample by its period, not 1 */
	bool annotate; /* "_[k]" after kernel frames, "_[i]" after inlined ones */
};

/* The unique stacks of a capture and their weights: one hash-table entry
 * and one copy of the folded text per unique stack, whatever the number
 * of samples. */
struct ps_collapse;

/* NULL when out of memory. */
struct ps_collapse *ps_collapse_new(const struct ps_collapse_opts *opts);
void ps_collapse_free(struct ps_collapse *collapse);
/* Count one sample. -ENOMEM (the sample is not counted). */
int ps_collapse_add(struct ps_collapse *collapse, const struct ps_stack *stack);
/* Sort the lines as `LC_ALL=C sort` sorts the output; returns how many
 * there are, or -ENOMEM. Call once, after the last ps_collapse_add(). */
int64_t ps_collapse_sort(struct ps_collapse *collapse);
/* Line index (0 <= index < what ps_collapse_sort() returned) of the
 * sorted output: "frame;frame;... weight\n", root first. */
void ps_collapse_print_line(struct ps_strbuf *out, const struct ps_collapse *collapse,
                            size_t index);

/* ---- `pystitch pprof`: profile.proto, gzipped --------------------- */

/* Each sample's stack becomes a pprof Sample of location ids (leaf first)
 * with two values, the number of samples and the sum of their periods,
 * and pid, tid and comm labels; samples with the same stack, pid, tid and
 * comm are one Sample. A native frame's location holds its address as
 * ps_frame.addr has it (the file offset for user code, the raw address
 * for the kernel) and its mapping, one per DSO, whose range is the
 * addresses seen; the frames of one address's inline chain are the lines
 * of one location, innermost first. Python frames ("py::qualname:file")
 * have locations without mapping or address whose function is named
 * qualname, in file file. */
struct ps_pprof_opts {
	/* file names and line numbers of native functions from the frames'
	 * srclines (ps_session_opts.srcline); else the DSO is the file */
	bool srcline;
};

struct ps_pprof_info {
	/* wall-clock time the capture started, ns since the epoch; 0: unknown */
	int64_t time_nanos;
	/* build ids of the capture (ps_features.build_ids), for mappings */
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

/* opts may be NULL. NULL when out of memory. */
struct ps_pprof *ps_pprof_new(const struct ps_pprof_opts *opts);
void ps_pprof_free(struct ps_pprof *pprof);
/* Count one sample. -ENOMEM. */
int ps_pprof_add(struct ps_pprof *pprof, const struct ps_stack *stack);
const struct ps_pprof_stats *ps_pprof_stats(const struct ps_pprof *pprof);
/* The first and last sample times; false when no sample had one. */
bool ps_pprof_time_range(const struct ps_pprof *pprof, uint64_t *first, uint64_t *last);
/* Append the gzipped Profile message to out. info may be NULL. 0 or
 * -ENOMEM. */
int ps_pprof_write(struct ps_pprof *pprof, const struct ps_pprof_info *info, struct ps_strbuf *out);

/* ---- `pystitch flamegraph`: an interactive SVG ---------------------- */

/* What a frame is drawn as; each kind has its own colours. */
enum ps_flame_kind {
	PS_FLAME_ROOT = 0, /* "all" */
	PS_FLAME_PROCESS, /* the comm/pid/tid label that starts a stack */
	PS_FLAME_PYTHON, /* py:: frames */
	PS_FLAME_NATIVE, /* user code outside the interpreter */
	PS_FLAME_INTERPRETER, /* CPython's own code (libpython, python3.x) */
	PS_FLAME_KERNEL,
	PS_FLAME_OTHER, /* [unknown] and [truncated] */
	PS_FLAME_KINDS,
	PS_FLAME_INLINED = 0x10, /* or'ed in: an inlined frame (a lighter shade) */
};

struct ps_flamegraph_opts {
	enum ps_collapse_per per;
	bool period; /* weigh each sample by its period, not 1 */
	bool icicle; /* the root on top, callees below */
	const char *title; /* NULL: "Flame Graph" or "Icicle Graph" */
	unsigned width; /* of the image in pixels; 0: 1200 */
	/* Frames narrower than this many pixels are not drawn (nor their
	 * callees); their weight stays in their caller's. */
	double min_width;
};

/* The merged call tree of a capture: one node per unique call path. */
struct ps_flamegraph;

/* NULL when out of memory. */
struct ps_flamegraph *ps_flamegraph_new(const struct ps_flamegraph_opts *opts);
void ps_flamegraph_free(struct ps_flamegraph *fg);
/* Count one sample. -ENOMEM (the sample is not counted, or only part of
 * its path is made). */
int ps_flamegraph_add(struct ps_flamegraph *fg, const struct ps_stack *stack);
/* The colour family of a frame (without PS_FLAME_INLINED). */
enum ps_flame_kind ps_flame_frame_kind(const struct ps_frame *frame);
/* Sum the tree up and sort the children; called by the functions below
 * (0 or -ENOMEM). */
int ps_flamegraph_finish(struct ps_flamegraph *fg);
/* Weight of all samples; number of nodes, the root included. */
uint64_t ps_flamegraph_total(const struct ps_flamegraph *fg);
size_t ps_flamegraph_nr_nodes(const struct ps_flamegraph *fg);
/* The weight of the call path path[0] (below the root) .. path[nr - 1],
 * summed over frame kinds: through it (self false) or ending at it. */
uint64_t ps_flamegraph_path_weight(struct ps_flamegraph *fg, const char *const *path, size_t nr,
                                   bool self);
/* Called by ps_flamegraph_svg() whenever out holds a good amount of text;
 * it takes the text out (and resets out). false stops the writing. */
typedef bool (*ps_flame_drain_fn)(void *ctx, struct ps_strbuf *out);
/* Write the SVG document into out, draining it through drain as it
 * grows. 0, -ENOMEM, or -EIO when drain returned false. */
int ps_flamegraph_svg(struct ps_flamegraph *fg, struct ps_strbuf *out, ps_flame_drain_fn drain,
                      void *ctx);

#endif /* PS_OUTPUT_OUTPUT_H */
