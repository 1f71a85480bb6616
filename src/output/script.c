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
#include "output/output.h"
#include "output/sink.h"

static const struct {
	const char *name;
	uint32_t field;
} field_names[] = {
	{ "comm", PS_FIELD_COMM },       { "tid", PS_FIELD_TID },
	{ "pid", PS_FIELD_PID },         { "time", PS_FIELD_TIME },
	{ "cpu", PS_FIELD_CPU },         { "event", PS_FIELD_EVENT },
	{ "trace", PS_FIELD_TRACE },     { "ip", PS_FIELD_IP },
	{ "sym", PS_FIELD_SYM },         { "dso", PS_FIELD_DSO },
	{ "addr", PS_FIELD_ADDR },       { "symoff", PS_FIELD_SYMOFF },
	{ "srcline", PS_FIELD_SRCLINE }, { "period", PS_FIELD_PERIOD },
};

static const char *const type_prefixes[PS_OUTPUT_TYPES] = {
	[PS_OUTPUT_HW] = "hw",       [PS_OUTPUT_SW] = "sw",   [PS_OUTPUT_TRACE] = "trace",
	[PS_OUTPUT_HW_CACHE] = NULL, [PS_OUTPUT_RAW] = "raw", [PS_OUTPUT_BREAK] = "break",
	[PS_OUTPUT_OTHER] = NULL,
};

#define DEFAULT_FIELDS                                                                             \
	(PS_FIELD_COMM | PS_FIELD_TID | PS_FIELD_CPU | PS_FIELD_TIME | PS_FIELD_EVENT |            \
	 PS_FIELD_IP | PS_FIELD_SYM | PS_FIELD_SYMOFF | PS_FIELD_DSO | PS_FIELD_PERIOD)

static const uint32_t default_fields[PS_OUTPUT_TYPES] = {
	[PS_OUTPUT_HW] = DEFAULT_FIELDS,
	[PS_OUTPUT_SW] = DEFAULT_FIELDS,
	[PS_OUTPUT_TRACE] = PS_FIELD_COMM | PS_FIELD_TID | PS_FIELD_CPU | PS_FIELD_TIME |
	                    PS_FIELD_EVENT | PS_FIELD_TRACE,
	[PS_OUTPUT_HW_CACHE] = DEFAULT_FIELDS,
	[PS_OUTPUT_RAW] = DEFAULT_FIELDS | PS_FIELD_ADDR,
	[PS_OUTPUT_BREAK] = DEFAULT_FIELDS,
	[PS_OUTPUT_OTHER] = DEFAULT_FIELDS,
};

/* 'trace' only exists for tracepoints */
static uint32_t invalid_fields(int type)
{
	return type == PS_OUTPUT_TRACE ? 0 : PS_FIELD_TRACE;
}

int ps_output_type(uint32_t attr_type)
{
	switch (attr_type) {
	case PERF_TYPE_HARDWARE:
		return PS_OUTPUT_HW;
	case PERF_TYPE_SOFTWARE:
		return PS_OUTPUT_SW;
	case PERF_TYPE_TRACEPOINT:
		return PS_OUTPUT_TRACE;
	case PERF_TYPE_HW_CACHE:
		return PS_OUTPUT_HW_CACHE;
	case PERF_TYPE_RAW:
		return PS_OUTPUT_RAW;
	case PERF_TYPE_BREAKPOINT:
		return PS_OUTPUT_BREAK;
	default:
		return PS_OUTPUT_OTHER;
	}
}

static int parse_fields(struct ps_script_format *fmt, const char *spec, char *err, size_t errsz)
{
	char buf[512];
	char *tok, *save = NULL, *list;
	int type = -1;
	enum { CHANGE_DEFAULT, CHANGE_SET, CHANGE_ADD, CHANGE_REMOVE } change = CHANGE_DEFAULT;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errsz, "-F: field list too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	list = strchr(buf, ':');
	if (list) {
		*list++ = 0;
		for (int t = 0; t < PS_OUTPUT_TYPES; t++)
			if (type_prefixes[t] && strcmp(buf, type_prefixes[t]) == 0)
				type = t;
		if (type < 0) {
			snprintf(err, errsz,
			         "-F: invalid event type '%s' (hw, sw, trace, raw, break)", buf);
			return -EINVAL;
		}
		if (!strchr(list, '+') && !strchr(list, '-')) {
			fmt->fields[type] = 0;
			fmt->user_set[type] = true;
		}
	} else {
		list = buf;
		if (!*list) {
			snprintf(err, errsz, "-F: cannot set fields to 'none' for all event types");
			return -EINVAL;
		}
		if (!strchr(list, '+') && !strchr(list, '-'))
			for (int t = 0; t < PS_OUTPUT_TYPES; t++) {
				fmt->fields[t] = 0;
				fmt->user_set[t] = true;
			}
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t field = 0;
		if (*tok == '+' || *tok == '-') {
			if (change == CHANGE_SET)
				goto badmix;
			change = *tok == '+' ? CHANGE_ADD : CHANGE_REMOVE;
			tok++;
		} else {
			if (change != CHANGE_SET && change != CHANGE_DEFAULT)
				goto badmix;
			change = CHANGE_SET;
		}
		for (size_t i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (strcmp(tok, field_names[i].name) == 0)
				field = field_names[i].field;
		if (!field) {
			snprintf(err, errsz,
			         "-F: invalid field '%s' (comm, tid, pid, time, cpu, event, trace, "
			         "ip, sym, symoff, dso, addr, srcline, period)",
			         tok);
			return -EINVAL;
		}
		for (int t = 0; t < PS_OUTPUT_TYPES; t++) {
			if (type >= 0 && t != type)
				continue;
			if (invalid_fields(t) & field) {
				if (type >= 0) {
					snprintf(err, errsz, "-F: '%s' not valid for %s events",
					         tok, type_prefixes[t]);
					return -EINVAL;
				}
				continue;
			}
			if (change == CHANGE_REMOVE) {
				fmt->fields[t] &= ~field;
				fmt->user_fields[t] &= ~field;
			} else {
				fmt->fields[t] |= field;
				fmt->user_fields[t] |= field;
			}
			fmt->user_set[t] = true;
		}
	}
	return 0;
badmix:
	snprintf(err, errsz, "-F: cannot mix +-field with overridden fields");
	return -EINVAL;
}

/* What perf's evsel__check_attr() checks of the fields script prints. */
static const struct {
	uint32_t field;
	uint64_t sample_bits;
	const char *what;
	const char *field_name;
} needs[] = {
	{ PS_FIELD_IP, PERF_SAMPLE_IP, "IP", "ip" },
	{ PS_FIELD_ADDR, PERF_SAMPLE_ADDR, "ADDR", "addr" },
	{ PS_FIELD_TID | PS_FIELD_PID, PERF_SAMPLE_TID, "TID", "tid" },
	{ PS_FIELD_TIME, PERF_SAMPLE_TIME, "TIME", "time" },
	{ PS_FIELD_CPU, PERF_SAMPLE_CPU, "CPU", "cpu" },
};

/* Whether a field the type prints lacks its sample bit: perf names the
 * event in a message then (evsel__do_check_stype). */
static bool lacks_field(const struct ps_script_format *fmt, const struct ps_attr *attr)
{
	int t = ps_output_type(attr->type);

	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if ((fmt->fields[t] & needs[i].field) &&
		    !(attr->sample_type & needs[i].sample_bits))
			return true;
	return false;
}

const char *ps_script_event_name(const struct ps_script_format *fmt, const struct ps_attr *attr)
{
	if (attr->fallback_name && fmt->fallback[ps_output_type(attr->type)] == attr->index + 1)
		return attr->fallback_name;
	return attr->name;
}

/* perf drops default fields a capture cannot supply, and refuses the ones
 * the user asked for by name. */
static int check_attr(struct ps_script_format *fmt, const struct ps_attr *attr, char *err,
                      size_t errsz)
{
	int t = ps_output_type(attr->type);

	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (!(fmt->fields[t] & needs[i].field) ||
		    (attr->sample_type & needs[i].sample_bits))
			continue;
		if (fmt->user_fields[t] & needs[i].field) {
			snprintf(
			        err, errsz,
			        "Samples for '%s' event do not have %s attribute set. Cannot print "
			        "'%s' field.",
			        ps_script_event_name(fmt, attr), needs[i].what,
			        needs[i].field_name);
			return -EINVAL;
		}
		fmt->fields[t] &= ~needs[i].field;
	}
	if ((fmt->fields[t] & PS_FIELD_SYMOFF) && !(fmt->fields[t] & PS_FIELD_SYM)) {
		snprintf(err, errsz, "Display of offsets requested but symbol is not selected.");
		return -EINVAL;
	}
	if ((fmt->fields[t] & PS_FIELD_SRCLINE) && !(fmt->fields[t] & PS_FIELD_IP)) {
		snprintf(err, errsz,
		         "Display of source line number requested but sample IP is not selected.");
		return -EINVAL;
	}
	return 0;
}

int ps_script_format_init(struct ps_script_format *fmt, const struct ps_reader *reader,
                          const char *spec, bool use_callchain, bool ns, char *err, size_t errsz)
{
	size_t nr = ps_reader_nr_attrs(reader);

	memset(fmt, 0, sizeof(*fmt));
	memcpy(fmt->fields, default_fields, sizeof(fmt->fields));
	fmt->ns = ns;
	fmt->tep = ps_reader_tep(reader);
	if (spec && parse_fields(fmt, spec, err, errsz))
		return -EINVAL;
	fmt->use_callchain = false;
	for (size_t i = 0; i < nr; i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		/* checked as its HEADER_ATTR arrived, with the fields then */
		if (attr->fallback_name && lacks_field(fmt, attr))
			fmt->fallback[ps_output_type(attr->type)] = attr->index + 1;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		if (use_callchain && (attr->sample_type & PERF_SAMPLE_CALLCHAIN))
			fmt->use_callchain = true;
		size_t len = strlen(ps_script_event_name(fmt, attr));
		if (len > fmt->name_width)
			fmt->name_width = len;
	}
	/* tracepoints with callchains show where they fired */
	if (fmt->use_callchain && !fmt->user_set[PS_OUTPUT_TRACE])
		for (size_t i = 0; i < nr; i++) {
			const struct ps_attr *attr = ps_reader_attr(reader, i);
			if (attr->type == PERF_TYPE_TRACEPOINT &&
			    (attr->sample_type & PERF_SAMPLE_CALLCHAIN)) {
				fmt->fields[PS_OUTPUT_TRACE] |=
				        PS_FIELD_IP | PS_FIELD_SYM | PS_FIELD_SYMOFF | PS_FIELD_DSO;
				break;
			}
		}
	for (size_t i = 0; i < nr; i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		if (strncmp(attr->name, "dummy", 5) == 0)
			continue; /* perf does not check its dummy event */
		if (check_attr(fmt, attr, err, errsz))
			return -EINVAL;
	}
	return 0;
}

bool ps_script_wants_srcline(const struct ps_script_format *fmt)
{
	for (int t = 0; t < PS_OUTPUT_TYPES; t++)
		if (fmt->fields[t] & PS_FIELD_SRCLINE)
			return true;
	return false;
}

/* ---- printing ----------------------------------------------------- */

static void print_symbol(struct ps_strbuf *out, const struct ps_frame *f, uint32_t fields)
{
	if (fields & PS_FIELD_SYM) {
		ps_strbuf_addch(out, ' ');
		if (f->sym) {
			ps_strbuf_addstr(out, f->sym);
			if ((fields & PS_FIELD_SYMOFF) && !f->truncated) {
				ps_strbuf_add(out, "+0x", 3);
				ps_strbuf_add_hex(out, f->symoff, 0);
			}
		} else {
			ps_strbuf_addstr(out, "[unknown]");
		}
	}
}

static void print_srcline(struct ps_strbuf *out, const struct ps_frame *f, uint32_t fields)
{
	if ((fields & PS_FIELD_SRCLINE) && f->srcline) {
		ps_strbuf_addstr(out, "\n  ");
		ps_strbuf_addstr(out, f->srcline);
	}
}

static void print_callchain(struct ps_strbuf *out, const struct ps_stack *stack, uint32_t fields)
{
	for (size_t i = 0; i < stack->nr_frames; i++) {
		const struct ps_frame *f = &stack->frames[i];
		if (fields & PS_FIELD_IP) {
			ps_strbuf_addch(out, '\t');
			ps_strbuf_add_hex(out, f->addr, 16);
		}
		print_symbol(out, f, fields);
		if ((fields & PS_FIELD_DSO) && !f->inlined) {
			ps_strbuf_addstr(out, " (");
			ps_strbuf_addstr(out, f->dso ? f->dso : "[unknown]");
			ps_strbuf_addch(out, ')');
		}
		print_srcline(out, f, fields);
		if (f->inlined)
			ps_strbuf_addstr(out, " (inlined)");
		ps_strbuf_addch(out, '\n');
	}
}

/* libtraceevent reads a record's fields where the event format puts them,
 * not checking them against the record's size, and reads strings up to a
 * NUL: a damaged capture's payload shorter than its event's fields would
 * be read past. The payload is printed from a copy that holds every field,
 * zeros where the payload ends, and a NUL after. Formats whose fields lie
 * beyond what a perf record can hold (64 KiB) are not printed. */
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
		if (!need)
			goto out;
		if (need > (size_t)record.size) {
			if (!(record.data = pad_payload(sample, need, buf, sizeof(buf), &copy)))
				goto out;
			record.size = (int)need;
		}
	}
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &record, "%s", TEP_PRINT_INFO);
	if (seq.len)
		ps_strbuf_add(out, seq.buffer, seq.len);
	trace_seq_destroy(&seq);
out:
	free(copy);
}

void ps_script_print(struct ps_strbuf *out, const struct ps_script_format *fmt,
                     const struct ps_stack *stack)
{
	const struct ps_sample *s = &stack->event->u.sample;
	int type = ps_output_type(stack->event->attr->type);
	uint32_t fields = fmt->fields[type];
	bool callchain = stack->has_callchain && fmt->use_callchain;

	if (!fields)
		return;
	/* the formatters below are printf's, without its cost per field */
	if (fields & PS_FIELD_COMM) {
		/* "%s " with a callchain, else "%16s " */
		if ((fields & PS_FIELD_IP) && callchain)
			ps_strbuf_addstr(out, stack->comm);
		else
			ps_strbuf_add_padded(out, stack->comm, strlen(stack->comm), 16);
		ps_strbuf_addch(out, ' ');
	}
	if ((fields & PS_FIELD_PID) && (fields & PS_FIELD_TID)) {
		/* "%5d/%-5d " */
		ps_strbuf_add_int(out, (int32_t)s->pid, 5, false);
		ps_strbuf_addch(out, '/');
		ps_strbuf_add_int(out, (int32_t)s->tid, -5, false);
		ps_strbuf_addch(out, ' ');
	} else if (fields & (PS_FIELD_PID | PS_FIELD_TID)) {
		/* "%5d " */
		int32_t id = (int32_t)((fields & PS_FIELD_PID) ? s->pid : s->tid);
		ps_strbuf_add_int(out, id, 5, false);
		ps_strbuf_addch(out, ' ');
	}
	if (fields & PS_FIELD_CPU) {
		/* "[%03d] " */
		ps_strbuf_addch(out, '[');
		ps_strbuf_add_int(out, (int32_t)s->cpu, 3, true);
		ps_strbuf_add(out, "] ", 2);
	}
	if (fields & PS_FIELD_TIME) {
		uint64_t secs = s->time / 1000000000ull, nsecs = s->time % 1000000000ull;
		if (fmt->ns) {
			/* "%5" PRIu64 ".%09" PRIu64 ": " */
			ps_strbuf_add_uint(out, secs, 5, false);
			ps_strbuf_addch(out, '.');
			ps_strbuf_add_uint(out, nsecs, 9, true);
		} else {
			/* "%12s: " of "%" PRIu64 ".%06" PRIu64, built backwards */
			char t[32], *end = t + sizeof(t), *first = end;
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
	if (fields & PS_FIELD_PERIOD) {
		/* "%10" PRIu64 " " */
		ps_strbuf_add_uint(out, s->period, 10, false);
		ps_strbuf_addch(out, ' ');
	}
	if (fields & PS_FIELD_EVENT) {
		/* "%*s: " */
		const char *name = ps_script_event_name(fmt, stack->event->attr);
		ps_strbuf_add_padded(out, name, strlen(name), (int)fmt->name_width);
		ps_strbuf_add(out, ": ", 2);
	}
	if (fields & PS_FIELD_TRACE)
		print_trace(out, fmt, s);
	if (fields & PS_FIELD_ADDR)
		ps_strbuf_add_hex(out, s->addr, 16);
	if (fields & PS_FIELD_IP) {
		if (callchain) {
			ps_strbuf_addch(out, '\n');
			print_callchain(out, stack, fields);
		} else {
			ps_strbuf_addch(out, ' ');
			ps_strbuf_add_hex(out, s->ip, 16);
			if (stack->nr_frames) {
				const struct ps_frame *f = &stack->frames[0];
				print_symbol(out, f, fields);
				if (fields & PS_FIELD_DSO) {
					ps_strbuf_addstr(out, " (");
					ps_strbuf_addstr(out, f->dso ? f->dso : "[unknown]");
					ps_strbuf_addch(out, ')');
				}
				print_srcline(out, f, fields);
			}
		}
	}
	ps_strbuf_addch(out, '\n');
}

/* ---- the public writer (pystitch/output.h) ------------------------ */

struct ps_script {
	struct ps_script_opts opts;
	const struct ps_reader *reader;
	struct ps_script_format format;
	bool format_ready;
	struct ps_sink sink;
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
	ps_sink_release(&script->sink);
	free(script);
}

int ps_script_write(struct ps_script *script, const struct ps_stack *stack)
{
	if (!script->format_ready) {
		/* in pipe mode the events are known only once records have
		 * arrived, so the format waits for the first sample */
		if (ps_script_format_init(&script->format, script->reader, script->opts.fields,
		                          !script->opts.hide_call_graph, script->opts.ns,
		                          script->errmsg, sizeof(script->errmsg)))
			return -EINVAL;
		script->format_ready = true;
	}
	ps_script_print(&script->sink.text, &script->format, stack);
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
