/* Output module: turns decoded events and header facts into text.
 * Printers append to a ps_strbuf; the public writers (pystitch/output.h)
 * hand it to the caller's write callback. Nothing here writes to a
 * descriptor. */
#ifndef PS_OUTPUT_OUTPUT_H
#define PS_OUTPUT_OUTPUT_H

#include <stdint.h>
#include <time.h>

#include "base/strbuf.h"
#include "pystitch/pystitch.h"

struct ps_read_tracker;

/* What a dump prints with (no_hex, model: the caller sets them after
 * ps_dump_state_init()) and what it remembers from record to record: the
 * per-event sample counts that perf prints after its aggregated stats
 * ("cpu-clock stats:"), and for PERF_SAMPLE_READ the last counter value
 * of each sample id (perf counts a sample for an event only when that
 * event's value moved). Free it with ps_dump_state_release(). */
struct ps_dump_state {
	bool no_hex; /* leave out each record's hex dump */
	/* kept in step with every record, for the thread and DSO lines of
	 * samples; NULL: those lines are left out */
	struct ps_model *model;

	uint64_t *nr_samples; /* indexed by ps_attr.index */
	size_t nr_samples_cap;
	struct ps_read_tracker *reads; /* PERF_SAMPLE_READ's deliveries */
	bool failed; /* an allocation failed: per-event counts are incomplete */
	/* a record of a capture in the other byte order, as perf swaps it
	 * before its hex dump (a record is at most 64 KiB) */
	uint8_t swapped[65536];
};

void ps_dump_state_init(struct ps_dump_state *st);
void ps_dump_state_release(struct ps_dump_state *st);

/* `pystitch dump`: what `perf report -D` prints, line for line. First
 * the lines perf prints before any record. */
void ps_dump_begin(struct ps_strbuf *out, const struct ps_reader *reader);
/* One record, as perf prints it when it delivers it: "\n0xOFFSET@PATH
 * [0xSIZE]: event: TYPE", the hex dump, the timestamp columns, then
 * "0xOFFSET [0xSIZE]: PERF_RECORD_NAME" and perf's fields and detail
 * lines, then for a sample its thread and DSO (with st->model). The
 * offset is printed with %#lx as perf does, so offset 0 reads "0".
 * COMPRESSED records print nothing (perf does not dump them; the records
 * inside them follow, carrying their offset). 0, or -ENOMEM when the
 * model could not follow. */
int ps_dump_event(struct ps_strbuf *out, struct ps_dump_state *st, const struct ps_reader *reader,
                  const struct ps_event *event);
/* The kernel's symbol at a TEXT_POKE's address as perf prints it, from
 * the session or the model at that record (ps_session_text_poke_symbol(),
 * ps_model_text_poke_symbol()). */
struct ps_kernel_namer {
	const char *(*name)(void *ctx, uint64_t addr, uint64_t *start);
	void *ctx;
};

/* What follows "0xOFFSET [0xSIZE]: " on a record's line, for a record
 * other than a sample: "PERF_RECORD_NAME" and the fields perf prints,
 * ended with a newline (perf_event__fprintf(), which perf script's
 * --show-*-events prints too). namer may be NULL: no kernel symbols. */
void ps_dump_record_text(struct ps_strbuf *out, const struct ps_reader *reader,
                         const struct ps_event *event, const struct ps_kernel_namer *namer);
/* The per-type record counts that end a dump ("Aggregated stats:"), then
 * the per-event sample counts. */
void ps_dump_stats(struct ps_strbuf *out, const struct ps_dump_state *st,
                   const struct ps_reader *reader);

/* `pystitch info`: the header and features, as `perf report --header-only`
 * prints them. captured_on is what perf prints as "captured on": the
 * input file's mtime; show_info is perf's -I; pystitch adds pystitch's
 * own lines (build-ids, tracing data) after perf's text. */
void ps_info_print(struct ps_strbuf *out, const struct ps_reader *reader, time_t captured_on,
                   bool show_info, bool pystitch);
/* One process of `pystitch info`'s Python section (see
 * ps_session_python_processes()); first: print the section's heading. */
void ps_info_print_python(struct ps_strbuf *out, const struct ps_python_process *process,
                          bool first);

/* ---- `pystitch script`: perf script text -------------------------- */

/* perf script's -F fields (all_output_options[]), one bit each; `flags`
 * is not one of them (ps_script_format.print_flags) */
#define PS_FIELD_COMM (UINT64_C(1) << 0)
#define PS_FIELD_TID (UINT64_C(1) << 1)
#define PS_FIELD_PID (UINT64_C(1) << 2)
#define PS_FIELD_TIME (UINT64_C(1) << 3)
#define PS_FIELD_CPU (UINT64_C(1) << 4)
#define PS_FIELD_EVENT (UINT64_C(1) << 5)
#define PS_FIELD_TRACE (UINT64_C(1) << 6)
#define PS_FIELD_IP (UINT64_C(1) << 7)
#define PS_FIELD_SYM (UINT64_C(1) << 8)
#define PS_FIELD_DSO (UINT64_C(1) << 9)
#define PS_FIELD_ADDR (UINT64_C(1) << 10)
#define PS_FIELD_SYMOFF (UINT64_C(1) << 11)
#define PS_FIELD_SRCLINE (UINT64_C(1) << 12)
#define PS_FIELD_PERIOD (UINT64_C(1) << 13)
#define PS_FIELD_IREGS (UINT64_C(1) << 14)
#define PS_FIELD_UREGS (UINT64_C(1) << 15)
#define PS_FIELD_BRSTACK (UINT64_C(1) << 16)
#define PS_FIELD_BRSTACKSYM (UINT64_C(1) << 17)
#define PS_FIELD_DATA_SRC (UINT64_C(1) << 18)
#define PS_FIELD_WEIGHT (UINT64_C(1) << 19)
#define PS_FIELD_BPF_OUTPUT (UINT64_C(1) << 20)
#define PS_FIELD_CALLINDENT (UINT64_C(1) << 21)
#define PS_FIELD_INSN (UINT64_C(1) << 22)
#define PS_FIELD_INSNLEN (UINT64_C(1) << 23)
#define PS_FIELD_BRSTACKINSN (UINT64_C(1) << 24)
#define PS_FIELD_BRSTACKOFF (UINT64_C(1) << 25)
#define PS_FIELD_SYNTH (UINT64_C(1) << 26)
#define PS_FIELD_PHYS_ADDR (UINT64_C(1) << 27)
#define PS_FIELD_METRIC (UINT64_C(1) << 28)
#define PS_FIELD_MISC (UINT64_C(1) << 29)
#define PS_FIELD_SRCCODE (UINT64_C(1) << 30)
#define PS_FIELD_IPC (UINT64_C(1) << 31)
#define PS_FIELD_TOD (UINT64_C(1) << 32)
#define PS_FIELD_DATA_PAGE_SIZE (UINT64_C(1) << 33)
#define PS_FIELD_CODE_PAGE_SIZE (UINT64_C(1) << 34)
#define PS_FIELD_INS_LAT (UINT64_C(1) << 35)
#define PS_FIELD_BRSTACKINSNLEN (UINT64_C(1) << 36)
#define PS_FIELD_MACHINE_PID (UINT64_C(1) << 37)
#define PS_FIELD_VCPU (UINT64_C(1) << 38)

/* perf script's output types, each with its own default fields */
enum ps_output_type {
	PS_OUTPUT_HW,
	PS_OUTPUT_SW,
	PS_OUTPUT_TRACE,
	PS_OUTPUT_HW_CACHE,
	PS_OUTPUT_RAW,
	PS_OUTPUT_BREAK,
	PS_OUTPUT_OTHER,
	PS_OUTPUT_SYNTH, /* perf's synthesized events (no capture here has them) */
	PS_OUTPUT_TYPES,
};

struct ps_script_format {
	uint64_t fields[PS_OUTPUT_TYPES];
	uint64_t user_fields[PS_OUTPUT_TYPES]; /* named in -F */
	bool user_set[PS_OUTPUT_TYPES];
	bool print_flags; /* -F flags */
	bool ns;
	/* --reltime / --deltatime, and what they count from */
	bool reltime, deltatime;
	uint64_t initial_time, previous_time;
	int data_src_width; /* perf pads data_src to the widest one printed */
	const int32_t *cpus; /* records on other CPUs are not printed */
	size_t nr_cpus;
	bool latency; /* -L: comm "%8.8s ", cpu "%3d " */
	const char *const *stop_bt; /* --stop-bt: the last frames printed */
	size_t nr_stop_bt;
	/* ps_script_opts.kernel_symbol, text_poke_symbol */
	const char *(*kernel_symbol)(void *ctx, uint64_t addr, uint64_t *start);
	void *kernel_symbol_ctx;
	const char *(*text_poke_symbol)(void *ctx, uint64_t addr, uint64_t *start);
	void *text_poke_symbol_ctx;
	const struct ps_features *features; /* clock data (tod), arch (registers) */
	bool use_callchain;
	size_t name_width; /* longest event name of the capture */
	void *tep; /* struct tep_handle * for tracepoints */
	/* per output type, 1 + the index of the attr printed under its
	 * fallback_name (perf's own name), or 0 */
	size_t fallback[PS_OUTPUT_TYPES];
	/* -F srccode: where perf's standard output is, and what it printed
	 * last per thread (the source lines within a brstackinsn listing;
	 * NULL: none printed) */
	struct ps_strbuf *srccode_out;
	struct ps_script_srccode *srccode;
	int srccode_err; /* -ENOMEM when one could not be printed */
};

int ps_output_type(uint32_t attr_type);
/* Set up the fields from perf's defaults, an optional -F spec, and what
 * the capture's events record. use_callchain false is -G. On a bad spec
 * or a field the capture cannot supply, returns -EINVAL with a message
 * in err. */
int ps_script_format_init(struct ps_script_format *fmt, const struct ps_reader *reader,
                          const char *spec, bool use_callchain, bool ns, char *err, size_t errsz);
bool ps_script_wants_srcline(const struct ps_script_format *fmt);
/* The name perf script prints for the event. */
const char *ps_script_event_name(const struct ps_script_format *fmt, const struct ps_attr *attr);
/* One sample: the header line, then its stack and a blank line. */
void ps_script_print(struct ps_strbuf *out, struct ps_script_format *fmt,
                     const struct ps_stack *stack);

/* ---- `pystitch flamegraph` internals (the public API is in
 * pystitch/output.h) ----------------------------------------------------- */

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

/* The colour family of a frame (without PS_FLAME_INLINED). */
enum ps_flame_kind ps_flame_frame_kind(const struct ps_frame *frame);
/* Sum the tree up and sort the children; called by the functions below
 * (0 or -ENOMEM). */
int ps_flamegraph_finish(struct ps_flamegraph *fg);
/* The weight of the call path path[0] (below the root) .. path[nr - 1],
 * summed over frame kinds: through it (self false) or ending at it. */
uint64_t ps_flamegraph_path_weight(struct ps_flamegraph *fg, const char *const *path, size_t nr,
                                   bool self);

#endif /* PS_OUTPUT_OUTPUT_H */
