/* What the files of `pystitch script`'s printer share: the field printers
 * of script_fields.c, used by script.c for samples and by script_events.c
 * for the other records, and script_trace_reach.c's bound of what
 * libtraceevent reads of a tracepoint record. */
#ifndef PS_OUTPUT_SCRIPT_PRIV_H
#define PS_OUTPUT_SCRIPT_PRIV_H

#include "output/output.h"

/* The start of perf's line for a sample or another record
 * (perf_sample__fprintf_start()): comm, pid/tid, cpu, misc, tod, time. */
struct ps_script_start {
	const struct ps_attr *attr;
	const char *comm; /* NULL: perf's ":-1" */
	int32_t pid, tid, cpu;
	uint64_t time;
	uint32_t record_type;
	uint16_t misc;
};
void ps_script_print_start(struct ps_strbuf *out, struct ps_script_format *fmt,
                           const struct ps_script_start *start);
void ps_script_print_misc(struct ps_strbuf *out, uint32_t record_type, uint16_t misc);
void ps_script_print_tod(struct ps_strbuf *out, const struct ps_script_format *fmt, uint64_t time);
void ps_script_print_data_src(struct ps_strbuf *out, struct ps_script_format *fmt,
                              uint64_t data_src);
void ps_script_print_regs(struct ps_strbuf *out, const struct ps_script_format *fmt,
                          const struct ps_regs *regs, uint64_t attr_mask);
void ps_script_print_page_size(struct ps_strbuf *out, uint64_t size);
/* -F brstackinsn (brstackinsnlen) of the stack's branch listing, with
 * srccode the source lines within it (to fmt->srccode_out). */
void ps_script_print_branch_listing(struct ps_strbuf *out, struct ps_script_format *fmt,
                                    const struct ps_stack *stack, uint64_t fields);
/* -F bpf-output of a BPF output event's raw data. */
void ps_script_print_bpf_output(struct ps_strbuf *out, const uint8_t *data, size_t size);
/* -F brstack, brstacksym or brstackoff (perf prints the first of them
 * the fields name) of the stack's named branches. */
void ps_script_print_branches(struct ps_strbuf *out, const struct ps_stack *stack, uint64_t fields);

/* Which PS_SCRIPT_SHOW_* bits print a record type (0: none). */
/* script_stat.c: a `perf stat record` capture's counts */
struct ps_script_stat;
/* Whether perf script processes records of this type as stat records
 * (always, whatever --show-*-events asks). */
bool ps_script_stat_handles(uint32_t record_type);
/* Take one such record into *stat (created on first use); a STAT_ROUND
 * prints every event's counts into out. 0, or -errno with errmsg set for
 * a record perf refuses (-ENOMEM without). */
int ps_script_stat_record(struct ps_script_stat **stat, struct ps_strbuf *out,
                          const struct ps_reader *reader, const struct ps_event *ev, char *errmsg,
                          size_t errmsg_size);
void ps_script_stat_free(struct ps_script_stat *stat);
uint32_t ps_script_record_show(uint32_t record_type);
/* The thread perf names for a record; false when it has none. */
bool ps_script_record_thread(const struct ps_event *ev, int32_t *pid, int32_t *tid);
void ps_script_print_record(struct ps_strbuf *out, struct ps_script_format *fmt,
                            const struct ps_reader *reader, const struct ps_event *ev,
                            const char *comm);

/* -F srccode: what perf printed last per thread (script_srccode.c). */
struct srccode_seen;
struct ps_script_srccode {
	struct srccode_seen *slots; /* by ps_stack.thread_serial */
	size_t nr_slots, used;
};
/* The sample's source line, as perf prints it after the sample, unless
 * perf printed that file and line last for the thread. 0 or -ENOMEM. */
int ps_script_print_srccode(struct ps_strbuf *out, struct ps_script_srccode *sc,
                            const struct ps_stack *stack);
/* The same for one source line of the thread of thread_serial (path
 * NULL: none). */
int ps_script_print_source_line(struct ps_strbuf *out, struct ps_script_srccode *sc,
                                uint64_t thread_serial, const char *path, unsigned line,
                                const char *text, size_t len);
void ps_script_srccode_release(struct ps_script_srccode *sc);

struct tep_event;
/* How many bytes from the start of a tracepoint record of size bytes at
 * data libtraceevent reads to print it: past its fields, the reach of its
 * __print_hex(), __print_hex_str() and __print_array() arguments, 0 when
 * there are none; SIZE_MAX when a count is not one worked out here. */
size_t ps_script_trace_reach(struct tep_event *event, const void *data, size_t size);

#endif /* PS_OUTPUT_SCRIPT_PRIV_H */
