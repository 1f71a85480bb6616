/* `perf script` text: field selection (-F, with perf's per-type defaults
 * and its rules for fields a capture cannot supply) and the printing of
 * one sample, header line and stack, byte for byte as perf 6.1 does.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "base/message.h"
#include "base/opts.h"
#include "output/script_priv.h"
#include "output/sink.h"

/* ---- printing ----------------------------------------------------- */

/* perf_sample__fprintf_addr() after the address: its function (or data
 * object) and its object, where perf names them */
static void print_addr_name(struct ps_strbuf *out, const struct ps_branch_end *name,
                            uint64_t fields)
{
	if (fields & PS_FIELD_SYM) {
		ps_strbuf_addch(out, ' ');
		ps_strbuf_addstr(out, name->sym ? name->sym : "[unknown]");
		if (name->sym && (fields & PS_FIELD_SYMOFF)) {
			ps_strbuf_add(out, "+0x", 3);
			ps_strbuf_add_hex(out, name->symoff, 0);
		}
	}
	if (fields & PS_FIELD_DSO) {
		ps_strbuf_addstr(out, " (");
		ps_strbuf_addstr(out, name->dso ? name->dso : "[unknown]");
		ps_strbuf_addch(out, ')');
	}
}

/* perf's srcline of a perf-map (JIT) frame: it never asks addr2line
 * there, and prints the DSO's short name, "[JIT] tid PID" (the pid of the
 * map's file name), and the absolute address. */
static bool print_jit_srcline(struct ps_strbuf *out, const struct ps_frame *f)
{
	const char *prefix = "/tmp/perf-", *p;
	char *end;
	long pid;

	if (!f->dso || strncmp(f->dso, prefix, strlen(prefix)) != 0)
		return false;
	p = f->dso + strlen(prefix);
	pid = strtol(p, &end, 10);
	if (end == p || pid < INT32_MIN || pid > INT32_MAX || strcmp(end, ".map") != 0)
		return false;
	ps_strbuf_addf(out, "\n  [JIT] tid %ld[%" PRIx64 "]", pid, f->addr);
	return true;
}

static void print_srcline(struct ps_strbuf *out, const struct ps_frame *f, uint64_t fields)
{
	if (!(fields & PS_FIELD_SRCLINE))
		return;
	if (f->srcline) {
		ps_strbuf_addstr(out, "\n  ");
		ps_strbuf_addstr(out, f->srcline);
	} else if (!f->truncated && !f->python_unnamed) {
		print_jit_srcline(out, f);
	}
}

/* --stop-bt: perf stops printing after a frame named in the list */
static bool stops_stack(const struct ps_script_format *fmt, const struct ps_frame *f)
{
	if (!f->sym)
		return false;
	for (size_t i = 0; i < fmt->nr_stop_bt; i++)
		if (strcmp(fmt->stop_bt[i], f->sym) == 0)
			return true;
	return false;
}

/* A frame's line up to its srcline: "\tADDR SYM+0xOFF (DSO)", each part
 * as the fields ask, written in place after one reservation (a stack's
 * lines are most of what script prints). Inlined in both callers: called,
 * it cost bench/stages.sh's py1 capture 0.9% more instructions. */
__attribute__((always_inline)) static inline void
print_frame(struct ps_strbuf *out, const struct ps_frame *f, uint64_t fields)
{
	const char *sym = f->sym ? f->sym : "[unknown]";
	const char *dso = f->dso ? f->dso : "[unknown]";
	bool show_sym = fields & PS_FIELD_SYM;
	bool show_off = show_sym && f->sym && (fields & PS_FIELD_SYMOFF) && !f->truncated &&
	                !f->python_unnamed;
	bool show_dso = (fields & PS_FIELD_DSO) && !f->inlined;
	size_t sym_len = show_sym ? strlen(sym) : 0, dso_len = show_dso ? strlen(dso) : 0;
	char hex[16], *p;
	size_t digits;

	/* tab, 16 digits, space, "+0x" and 16, " (" and ")" */
	if (!ps_strbuf_reserve(out, 40 + sym_len + dso_len))
		return;
	p = out->buf + out->len;
	if (fields & PS_FIELD_IP) {
		*p++ = '\t';
		digits = ps_hex16(p, f->addr);
		memset(p, ' ', 16 - digits);
		p += 16;
	}
	if (show_sym) {
		*p++ = ' ';
		memcpy(p, sym, sym_len);
		p += sym_len;
	}
	if (show_off) {
		memcpy(p, "+0x", 3);
		p += 3;
		digits = ps_hex16(hex, f->symoff);
		memcpy(p, hex + 16 - digits, digits);
		p += digits;
	}
	if (show_dso) {
		memcpy(p, " (", 2);
		memcpy(p + 2, dso, dso_len);
		p += 2 + dso_len;
		*p++ = ')';
	}
	*p = 0;
	out->len = (size_t)(p - out->buf);
}

static void print_callchain(struct ps_strbuf *out, const struct ps_script_format *fmt,
                            const struct ps_stack *stack, uint64_t fields)
{
	for (size_t i = 0; i < stack->nr_frames; i++) {
		const struct ps_frame *f = &stack->frames[i];

		print_frame(out, f, fields);
		print_srcline(out, f, fields);
		if (f->inlined)
			ps_strbuf_addstr(out, " (inlined)");
		ps_strbuf_addch(out, '\n');
		if (fmt->nr_stop_bt && stops_stack(fmt, f))
			break;
	}
}

/* libtraceevent reads a record's fields where the event format puts them,
 * not checking them against the record's size, and reads strings up to a
 * NUL: a damaged capture's payload shorter than its event's fields would
 * be read past. The payload is printed from a copy that holds every field,
 * zeros where the payload ends, and a NUL after. Formats whose fields lie
 * beyond what a perf record can hold (64 KiB) are not printed, nor
 * records whose counts would take libtraceevent that far. */
#define TRACE_MAX_RECORD 65536

/* Past the last byte of the event's fields, or 0 for a field beyond
 * TRACE_MAX_RECORD. */
static size_t fields_end(const struct tep_event *event)
{
	const struct tep_format_field *lists[2] = { event->format.common_fields,
		                                    event->format.fields };
	size_t end = 1;

	for (int i = 0; i < 2; i++)
		for (const struct tep_format_field *f = lists[i]; f; f = f->next) {
			if (f->offset < 0 || f->size < 0 || f->offset > TRACE_MAX_RECORD - f->size)
				return 0;
			if ((size_t)(f->offset + f->size) > end)
				end = (size_t)(f->offset + f->size);
		}
	return end;
}

/* The payload copied into buf (cap bytes) or, when it does not fit, into
 * *copy, padded with zeros to at least need bytes and a NUL; NULL when out
 * of memory. */
static uint8_t *pad_payload(const struct ps_sample *sample, size_t need, uint8_t *buf, size_t cap,
                            uint8_t **copy)
{
	size_t size = sample->raw_size > need ? sample->raw_size : need;
	uint8_t *p = buf;

	if (size + 1 > cap) {
		free(*copy);
		p = *copy = malloc(size + 1);
		if (!p)
			return NULL;
	}
	memcpy(p, sample->raw, sample->raw_size);
	memset(p + sample->raw_size, 0, size + 1 - sample->raw_size);
	return p;
}

/* libtraceevent's function resolver: perf script's
 * machine__resolve_kernel_addr() */
static char *resolve_kernel_function(void *priv, unsigned long long *addrp, char **modp)
{
	const struct ps_script_format *fmt = priv;
	uint64_t start;
	const char *name = fmt->kernel_symbol(fmt->kernel_symbol_ctx, *addrp, &start);

	if (!name)
		return NULL;
	*addrp = start;
	*modp = NULL;
	/* the session's string, not start's (cppcheck takes it for one) */
	// cppcheck-suppress returnDanglingLifetime
	return (char *)name;
}

static void print_trace(struct ps_strbuf *out, const struct ps_script_format *fmt,
                        const struct ps_sample *sample)
{
	struct tep_handle *tep = fmt->tep;
	struct tep_record record;
	struct trace_seq seq;
	struct tep_event *event;
	uint8_t buf[512], *copy = NULL;
	size_t need;

	if (!tep || !sample->raw || tep_get_events_count(tep) == 0)
		return;
	memset(&record, 0, sizeof(record));
	record.cpu = (int)sample->cpu;
	/* libtraceevent finds the event by the first event's common_type */
	need = fields_end(tep_get_event(tep, 0));
	if (!need || !(record.data = pad_payload(sample, need, buf, sizeof(buf), &copy)))
		goto out;
	record.size = (int)(sample->raw_size > need ? sample->raw_size : need);
	event = tep_find_event_by_record(tep, &record);
	if (event) {
		need = fields_end(event);
		/* padded until what libtraceevent reads lies inside, which a
		 * larger size can move (dynamic arrays, checked against it) */
		for (int round = 0; need; round++) {
			size_t reach;

			if (need > (size_t)record.size) {
				record.data = pad_payload(sample, need, buf, sizeof(buf), &copy);
				if (!record.data)
					goto out;
				record.size = (int)need;
			}
			reach = ps_script_trace_reach(event, record.data, (size_t)record.size);
			if (reach <= (size_t)record.size)
				break;
			need = reach <= TRACE_MAX_RECORD && round < 4 ? reach : 0;
		}
		if (!need)
			goto out;
	}
	/* set for each print: writers of one reader (--per-event-dump)
	 * share its tep, and each takes its resolver back when closed */
	if (fmt->kernel_symbol)
		(void)tep_set_function_resolver(tep, resolve_kernel_function, (void *)fmt);
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &record, "%s", TEP_PRINT_INFO);
	if (seq.len)
		ps_strbuf_add(out, seq.buffer, seq.len);
	trace_seq_destroy(&seq);
out:
	free(copy);
}

/* The time column: --reltime counts from the first event printed,
 * --deltatime from the previous one (perf keeps both in statics). */
static uint64_t shown_time(struct ps_script_format *fmt, uint64_t time)
{
	if (fmt->reltime) {
		if (!fmt->initial_time)
			fmt->initial_time = time;
		return time - fmt->initial_time;
	}
	if (fmt->deltatime) {
		uint64_t t = fmt->previous_time ? time - fmt->previous_time : 0;

		fmt->previous_time = time;
		return t;
	}
	return time;
}

void ps_script_print_start(struct ps_strbuf *out, struct ps_script_format *fmt,
                           const struct ps_script_start *start)
{
	uint64_t fields = fmt->fields[ps_output_type(start->attr->type)];

	/* the formatters below are printf's, without its cost per field */
	if (fields & PS_FIELD_COMM) {
		const char *comm = start->comm ? start->comm : ":-1";

		/* "%8.8s " with -L, "%s " with a callchain, else "%16s " */
		if (fmt->latency)
			ps_strbuf_add_padded(out, comm, strlen(comm) > 8 ? 8 : strlen(comm), 8);
		else if ((fields & PS_FIELD_IP) && fmt->use_callchain &&
		         (start->attr->sample_type & PERF_SAMPLE_CALLCHAIN))
			ps_strbuf_addstr(out, comm);
		else
			ps_strbuf_add_padded(out, comm, strlen(comm), 16);
		ps_strbuf_addch(out, ' ');
	}
	if ((fields & PS_FIELD_PID) && (fields & PS_FIELD_TID)) {
		/* "%5d/%-5d " */
		ps_strbuf_add_int(out, start->pid, 5, false);
		ps_strbuf_addch(out, '/');
		ps_strbuf_add_int(out, start->tid, -5, false);
		ps_strbuf_addch(out, ' ');
	} else if (fields & (PS_FIELD_PID | PS_FIELD_TID)) {
		/* "%5d " */
		ps_strbuf_add_int(out, (fields & PS_FIELD_PID) ? start->pid : start->tid, 5, false);
		ps_strbuf_addch(out, ' ');
	}
	if ((fields & PS_FIELD_CPU) && fmt->latency) {
		/* "%3d " */
		ps_strbuf_add_int(out, start->cpu, 3, false);
		ps_strbuf_addch(out, ' ');
	} else if (fields & PS_FIELD_CPU) {
		/* "[%03d] " */
		ps_strbuf_addch(out, '[');
		ps_strbuf_add_int(out, start->cpu, 3, true);
		ps_strbuf_add(out, "] ", 2);
	}
	if (fields & PS_FIELD_MISC)
		ps_script_print_misc(out, start->record_type, start->misc);
	if (fields & PS_FIELD_TOD)
		ps_script_print_tod(out, fmt, start->time);
	if (fields & PS_FIELD_TIME) {
		uint64_t t = shown_time(fmt, start->time);
		uint64_t secs = t / 1000000000ull, nsecs = t % 1000000000ull;
		if (fmt->ns) {
			/* "%5" PRIu64 ".%09" PRIu64 ": " */
			ps_strbuf_add_uint(out, secs, 5, false);
			ps_strbuf_addch(out, '.');
			ps_strbuf_add_uint(out, nsecs, 9, true);
		} else {
			/* "%12s: " of "%" PRIu64 ".%06" PRIu64, built backwards */
			char b[32], *end = b + sizeof(b), *first = end;
			uint64_t usecs = nsecs / 1000;
			for (int i = 0; i < 6; i++, usecs /= 10)
				*--first = (char)('0' + usecs % 10);
			*--first = '.';
			do
				*--first = (char)('0' + secs % 10);
			while (secs /= 10);
			ps_strbuf_add_padded(out, first, (size_t)(end - first), 12);
		}
		ps_strbuf_add(out, ": ", 2);
	}
}

void ps_script_print(struct ps_strbuf *out, struct ps_script_format *fmt,
                     const struct ps_stack *stack)
{
	const struct ps_event *ev = stack->event;
	const struct ps_sample *s = &ev->u.sample;
	int type = ps_output_type(ev->attr->type);
	uint64_t fields = fmt->fields[type];
	bool callchain = stack->has_callchain && fmt->use_callchain;

	if (!fields)
		return;
	ps_script_print_start(out, fmt,
	                      &(struct ps_script_start){ .attr = ev->attr,
	                                                 .comm = stack->comm,
	                                                 .pid = (int32_t)s->pid,
	                                                 .tid = (int32_t)s->tid,
	                                                 .cpu = (int32_t)s->cpu,
	                                                 .time = s->time,
	                                                 .record_type = ev->type,
	                                                 .misc = ev->misc });
	if (fields & PS_FIELD_PERIOD) {
		/* "%10" PRIu64 " " */
		ps_strbuf_add_uint(out, s->period, 10, false);
		ps_strbuf_addch(out, ' ');
	}
	if (fields & PS_FIELD_EVENT) {
		/* "%*s: " */
		const char *name = ps_script_event_name(fmt, ev->attr);
		ps_strbuf_add_padded(out, name, strlen(name), (int)fmt->name_width);
		ps_strbuf_add(out, ": ", 2);
	}
	if (fmt->print_flags) /* "  %-21s " of the branch flags: none here */
		ps_strbuf_add_padded(out, " ", 1, 24);
	if (fields & PS_FIELD_TRACE)
		print_trace(out, fmt, s);
	if (fields & PS_FIELD_ADDR) {
		ps_strbuf_add_hex(out, s->addr, 16);
		if (stack->has_addr_name)
			print_addr_name(out, &stack->addr_name, fields);
	}
	if (fields & PS_FIELD_DATA_SRC)
		ps_script_print_data_src(out, fmt, s->data_src);
	if (fields & PS_FIELD_WEIGHT)
		ps_strbuf_add_uint(out, s->weight, 16, false);
	if (fields & PS_FIELD_INS_LAT)
		ps_strbuf_add_uint(out, s->weight_var2, 16, false);
	if (fields & PS_FIELD_IP) {
		if (callchain) {
			ps_strbuf_addch(out, '\n');
			print_callchain(out, fmt, stack, fields);
		} else {
			ps_strbuf_addch(out, ' ');
			ps_strbuf_add_hex(out, s->ip, 16);
			if (stack->nr_frames) {
				const struct ps_frame *f = &stack->frames[0];

				/* the name and offset as a stack's lines have them */
				print_frame(out, f, fields & (PS_FIELD_SYM | PS_FIELD_SYMOFF));
				if (fields & PS_FIELD_DSO) {
					ps_strbuf_addstr(out, " (");
					ps_strbuf_addstr(out, f->dso ? f->dso : "[unknown]");
					ps_strbuf_addch(out, ')');
				}
				print_srcline(out, f, fields);
			}
		}
	}
	if (fields & PS_FIELD_IREGS)
		ps_script_print_regs(out, fmt, &s->regs_intr, ev->attr->sample_regs_intr);
	if (fields & PS_FIELD_UREGS)
		ps_script_print_regs(out, fmt, &s->regs_user, ev->attr->sample_regs_user);
	if (fields & (PS_FIELD_BRSTACK | PS_FIELD_BRSTACKSYM | PS_FIELD_BRSTACKOFF))
		ps_script_print_branches(out, stack, fields);
	if ((fields & PS_FIELD_BPF_OUTPUT) && ev->attr->type == PERF_TYPE_SOFTWARE &&
	    ev->attr->config == PERF_COUNT_SW_BPF_OUTPUT)
		ps_script_print_bpf_output(out, s->raw, s->raw ? s->raw_size : 0);
	/* ipc: perf prints it for hardware traces only */
	if (fields & PS_FIELD_INSNLEN) {
		ps_strbuf_add(out, " ilen: ", 7);
		ps_strbuf_add_uint(out, stack->insn_len, 0, false);
	}
	if ((fields & PS_FIELD_INSN) && stack->insn_len) {
		ps_strbuf_add(out, " insn:", 6);
		for (size_t i = 0; i < stack->insn_len && i < sizeof(stack->insn); i++) {
			/* " %02x" */
			char byte[3] = { ' ', "0123456789abcdef"[stack->insn[i] >> 4],
				         "0123456789abcdef"[stack->insn[i] & 15] };

			ps_strbuf_add(out, byte, 3);
		}
	}
	if ((fields & (PS_FIELD_BRSTACKINSN | PS_FIELD_BRSTACKINSNLEN)) &&
	    stack->has_branch_listing)
		ps_script_print_branch_listing(out, fmt, stack, fields);
	if (fields & PS_FIELD_PHYS_ADDR)
		ps_strbuf_add_hex(out, s->phys_addr, 16);
	if (fields & PS_FIELD_DATA_PAGE_SIZE)
		ps_script_print_page_size(out, s->data_page_size);
	if (fields & PS_FIELD_CODE_PAGE_SIZE)
		ps_script_print_page_size(out, s->code_page_size);
	ps_strbuf_addch(out, '\n');
}

/* ---- the public writer (pystitch/output.h) ------------------------ */

struct ps_script {
	struct ps_script_opts opts;
	const struct ps_reader *reader;
	struct ps_script_format format;
	bool format_ready;
	struct ps_sink sink;
	struct ps_script_srccode srccode; /* what -F srccode printed last */
	struct ps_script_stat *stat; /* a perf stat capture's counts */
	char errmsg[PS_MSG_MAX];
};

int ps_script_open(const struct ps_reader *reader, const struct ps_script_opts *opts,
                   struct ps_script **out)
{
	struct ps_script *script;

	*out = NULL;
	if (!reader || !opts || !opts->write)
		return -EINVAL;
	script = calloc(1, sizeof(*script));
	if (!script)
		return -ENOMEM;
	if (ps_opts_copy(&script->opts, sizeof(script->opts), opts)) {
		free(script);
		return -EINVAL;
	}
	script->reader = reader;
	ps_sink_init(&script->sink, script->opts.write, script->opts.write_ctx);
	*out = script;
	return 0;
}

void ps_script_close(struct ps_script *script)
{
	if (!script)
		return;
	/* the reader, whose tep this is, outlives its writers */
	if (script->format_ready && script->format.kernel_symbol && script->format.tep)
		tep_reset_function_resolver(script->format.tep);
	ps_sink_release(&script->sink);
	ps_script_srccode_release(&script->srccode);
	ps_script_stat_free(script->stat);
	free(script);
}

/* The format waits for the first sample or record: in pipe mode the
 * events are known only once records have arrived. */
static int format_ready(struct ps_script *script)
{
	struct ps_script_format *fmt = &script->format;

	if (script->format_ready)
		return 0;
	if (ps_script_format_init(fmt, script->reader, script->opts.fields,
	                          !script->opts.hide_call_graph, script->opts.ns, script->errmsg,
	                          sizeof(script->errmsg)))
		return -EINVAL;
	fmt->reltime = script->opts.reltime;
	fmt->deltatime = script->opts.deltatime;
	fmt->cpus = script->opts.cpus;
	fmt->nr_cpus = script->opts.nr_cpus;
	fmt->latency = script->opts.latency;
	fmt->stop_bt = script->opts.stop_bt;
	fmt->nr_stop_bt = script->opts.nr_stop_bt;
	fmt->kernel_symbol = script->opts.kernel_symbol;
	fmt->kernel_symbol_ctx = script->opts.kernel_symbol_ctx;
	fmt->text_poke_symbol = script->opts.text_poke_symbol;
	fmt->text_poke_symbol_ctx = script->opts.text_poke_symbol_ctx;
	if (script->opts.srccode_to) {
		fmt->srccode_out = &script->opts.srccode_to->sink.text;
		fmt->srccode = &script->opts.srccode_to->srccode;
	} else {
		fmt->srccode_out = &script->sink.text;
		fmt->srccode = &script->srccode;
	}
	script->format_ready = true;
	return 0;
}

int ps_script_write(struct ps_script *script, const struct ps_stack *stack)
{
	const struct ps_script_format *fmt = &script->format;
	struct ps_script *to = script->opts.srccode_to ? script->opts.srccode_to : script;
	int err;

	if (format_ready(script))
		return -EINVAL;
	ps_script_print(&script->sink.text, &script->format, stack);
	if (script->format.srccode_err)
		return script->format.srccode_err;
	/* after the sample, on perf's standard output */
	if (fmt->fields[ps_output_type(stack->event->attr->type)] & PS_FIELD_SRCCODE) {
		err = ps_script_print_srccode(&to->sink.text, &to->srccode, stack);
		if (!err && to != script)
			err = ps_sink_maybe_drain(&to->sink);
		if (err)
			return err;
	}
	return ps_sink_maybe_drain(&script->sink);
}

bool ps_script_shows_record(const struct ps_script *script, const struct ps_event *event,
                            int32_t *pid, int32_t *tid)
{
	*pid = *tid = -1;
	if (ps_script_stat_handles(event->type))
		return true;
	if (!(script->opts.show_events & ps_script_record_show(event->type)))
		return false;
	ps_script_record_thread(event, pid, tid);
	return true;
}

int ps_script_write_record(struct ps_script *script, const struct ps_event *event, const char *comm)
{
	/* perf checks the fields only once the capture's events are known */
	if (event->type != PS_RECORD_FINISHED_ROUND && ps_reader_nr_attrs(script->reader) &&
	    format_ready(script))
		return -EINVAL;
	if (ps_script_stat_handles(event->type)) {
		script->errmsg[0] = 0;
		int err = ps_script_stat_record(&script->stat, &script->sink.text, script->reader,
		                                event, script->errmsg, sizeof(script->errmsg));
		if (err == -ENOMEM && !script->errmsg[0])
			snprintf(script->errmsg, sizeof(script->errmsg), "out of memory");
		return err ? err : ps_sink_maybe_drain(&script->sink);
	}
	ps_script_print_record(&script->sink.text, &script->format, script->reader, event, comm);
	return ps_sink_maybe_drain(&script->sink);
}

int ps_script_flush(struct ps_script *script)
{
	return ps_sink_drain(&script->sink);
}

const char *ps_script_errmsg(const struct ps_script *script)
{
	return script ? script->errmsg : "out of memory";
}

bool ps_script_fields_need_srcline(const char *fields)
{
	return fields && strstr(fields, "srcline");
}

bool ps_script_fields_need_srccode(const char *fields)
{
	return fields && strstr(fields, "srccode");
}

/* Whether a field of the -F spec names this one, added or set. */
static bool names_field(const char *fields, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = fields; p && (p = strstr(p, name)) != NULL; p += len) {
		bool starts = p == fields || p[-1] == ',' || p[-1] == ':' || p[-1] == '+';
		bool ends = p[len] == 0 || p[len] == ',';

		if (starts && ends)
			return true;
	}
	return false;
}

bool ps_script_fields_need_addr_names(const char *fields)
{
	return names_field(fields, "addr");
}

bool ps_script_fields_need_branch_listing(const char *fields)
{
	return names_field(fields, "brstackinsn") || names_field(fields, "brstackinsnlen");
}

int ps_script_fields_need_branches(const char *fields)
{
	/* perf prints brstack before brstacksym before brstackoff: only
	 * brstacksym looks functions up */
	if (names_field(fields, "brstack"))
		return PS_BRANCHES_OBJECTS;
	if (names_field(fields, "brstacksym"))
		return PS_BRANCHES_SYMBOLS;
	return names_field(fields, "brstackoff") ? PS_BRANCHES_OBJECTS : PS_BRANCHES_NONE;
}
