/* `pystitch dump`: each record as perf 6.1's `perf report -D` prints it
 * (util/session.c dump_event()): its first line, the hex dump of its bytes,
 * the timestamp columns of evlist__print_tstamp(), the record line and the
 * fields the record's handler prints; for a sample, then, the thread and
 * DSO lines of util/event.c machine__resolve(). Everything a record prints
 * ends with a newline except what perf's handlers leave open; the newline
 * that starts the next record closes it, as in perf. The fields are printed
 * by dump_kernel.c, dump_user.c and dump_sample.c, the hex dump by
 * dump_hex.c, the closing statistics by dump_stats.c. */
#include "output/dump_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "output/sink.h"

void ps_dump_begin(struct ps_strbuf *out, const struct ps_reader *reader)
{
	/* perf_session__new(): a file whose first event lacks sample_id_all
	 * is read in file order, which perf says when it dumps */
	if (ps_reader_order(reader) == PS_ORDER_TIME && !ps_reader_is_pipe(reader) &&
	    ps_reader_nr_attrs(reader) &&
	    !(ps_reader_attr(reader, 0)->flags & PS_ATTR_SAMPLE_ID_ALL))
		ps_strbuf_addstr(out, "WARNING: No sample_id_all support, falling back to "
		                      "unordered processing\n");
	/* builtin-report.c prints this before the records unless asked for
	 * the header */
	ps_strbuf_addstr(out, "# To display the perf.data header info, please use "
	                      "--header/--header-only options.\n#\n");
}

/* evlist__print_tstamp(): "-1 -1 " for a record other than a sample when
 * the first event lacks sample_id_all, else the cpu and the time when any
 * event samples them (their sample_types ORed), from the sample or the
 * record's sample_id trailer, with perf's defaults (-1) for fields that
 * record does not have; perf's own records print 0s. In pipe mode the
 * events are those of the ATTR records read so far; before the first
 * (and for it) perf prints "-1 -1 ". */
static void print_tstamp(struct ps_strbuf *out, const struct ps_reader *reader,
                         const struct ps_event *ev)
{
	size_t nr = ps_reader_nr_attrs(reader);
	uint64_t sample_type = 0, time = 0;
	uint32_t cpu = 0;

	/* an ATTR record is dumped before perf adds its event */
	if (ev->type == PS_RECORD_HEADER_ATTR && ev->u.header_attr.attr &&
	    ev->u.header_attr.attr->index < nr)
		nr = ev->u.header_attr.attr->index;
	if (nr == 0 || (ev->type != PERF_RECORD_SAMPLE &&
	                !(ps_reader_attr(reader, 0)->flags & PS_ATTR_SAMPLE_ID_ALL))) {
		ps_strbuf_addstr(out, "-1 -1 ");
		return;
	}
	for (size_t i = 0; i < nr; i++)
		sample_type |= ps_reader_attr(reader, i)->sample_type;
	if (ev->type == PERF_RECORD_SAMPLE) {
		uint64_t t = ev->attr ? ev->attr->sample_type : 0;

		cpu = (t & PERF_SAMPLE_CPU) ? ev->u.sample.cpu : UINT32_MAX;
		time = (t & PERF_SAMPLE_TIME) ? ev->u.sample.time : UINT64_MAX;
	} else if (ev->type < PS_RECORD_HEADER_ATTR) {
		cpu = ev->sample_id.has_cpu ? ev->sample_id.cpu : UINT32_MAX;
		time = ev->sample_id.has_time ? ev->sample_id.time : UINT64_MAX;
	}
	if (sample_type & PERF_SAMPLE_CPU) {
		ps_strbuf_add_uint(out, cpu, 0, false);
		ps_strbuf_addch(out, ' ');
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		ps_strbuf_add_uint(out, time, 0, false);
		ps_strbuf_addch(out, ' ');
	}
}

/* perf's "%#" PRIx64: no 0x for 0 */
static void add_offset(struct ps_strbuf *out, uint64_t v)
{
	if (v)
		ps_strbuf_addstr(out, "0x");
	ps_strbuf_add_hex(out, v, 0);
}

/* machine__resolve() for each time perf delivers the sample to report's
 * handler. */
static int print_locations(struct ps_strbuf *out, struct ps_model *model, const struct ps_event *ev,
                           unsigned deliveries)
{
	struct ps_sample_location loc;
	int err;

	if (!model || !deliveries)
		return 0;
	err = ps_model_locate(model, ev, &loc);
	if (err)
		return err;
	for (unsigned i = 0; i < deliveries; i++) {
		ps_strbuf_addstr(out, " ... thread: ");
		ps_strbuf_addstr(out, loc.comm);
		ps_strbuf_addch(out, ':');
		ps_strbuf_add_int(out, loc.tid, 0, false);
		ps_strbuf_addstr(out, "\n ...... dso: ");
		ps_strbuf_addstr(out, loc.dso          ? loc.dso
		                      : loc.hypervisor ? "[hypervisor]"
		                                       : "<not found>");
		ps_strbuf_addch(out, '\n');
	}
	return 0;
}

/* "PERF_RECORD_NAME", as perf_event__name() spells the type */
static void add_name(struct ps_strbuf *out, uint32_t type)
{
	const char *name = ps_record_type_name(type);

	if (name)
		ps_strbuf_addstr(out, name);
	else
		ps_strbuf_addf(out, "PERF_RECORD_UNKNOWN(%u)", type);
}

void ps_dump_record_text(struct ps_strbuf *out, const struct ps_reader *reader,
                         const struct ps_event *event, const struct ps_kernel_namer *namer)
{
	add_name(out, event->type);
	if (event->type < PS_RECORD_HEADER_ATTR)
		ps_dump_kernel_fields(out, reader, event, namer);
	else
		ps_dump_user_fields(out, reader, event);
	if (out->buf && out->len && out->buf[out->len - 1] != '\n')
		ps_strbuf_addch(out, '\n');
}

/* evlist__sample_id_all(): the first event's */
static bool sample_id_all(const struct ps_reader *reader)
{
	return ps_reader_nr_attrs(reader) &&
	       (ps_reader_attr(reader, 0)->flags & PS_ATTR_SAMPLE_ID_ALL);
}

int ps_dump_event(struct ps_strbuf *out, struct ps_dump_state *st, const struct ps_reader *reader,
                  const struct ps_event *event)
{
	int err = 0;

	/* perf does not dump COMPRESSED records, only what they hold */
	if (event->type == PS_RECORD_COMPRESSED || event->type == PS_RECORD_COMPRESSED2)
		return 0;
	ps_strbuf_addch(out, '\n');
	add_offset(out, event->offset);
	ps_strbuf_addch(out, '@');
	/* perf names the input as -i gave it (a folder's file within it),
	 * and a pipe "pipe" */
	ps_strbuf_addstr(out, ps_reader_is_pipe(reader) ? "pipe" : ps_reader_input_file(reader));
	ps_strbuf_addf(out, " [%#x]: event: %u\n", event->size, event->type);
	if (!st->no_hex && event->raw) {
		if (ps_reader_is_swapped(reader)) {
			/* perf dumps the record as it swapped it */
			memcpy(st->swapped, event->raw, event->size);
			ps_dump_swap_record(st->swapped, event->size, sample_id_all(reader));
			ps_dump_hex(out, st->swapped, event->size);
		} else {
			ps_dump_hex(out, event->raw, event->size);
		}
	}
	print_tstamp(out, reader, event);
	add_offset(out, event->offset);
	ps_strbuf_addf(out, " [%#x]: ", event->size);
	add_name(out, event->type);
	if (event->type == PERF_RECORD_SAMPLE) {
		unsigned deliveries = ps_dump_count_sample(st, reader, event);

		ps_dump_sample(out, reader, event);
		err = print_locations(out, st->model, event, deliveries);
	} else if (event->type < PS_RECORD_HEADER_ATTR) {
		/* perf report's machine, whose kernel map the first lookup
		 * loads (machine__process_text_poke()) */
		struct ps_kernel_namer namer = { .name = ps_model_text_poke_symbol,
			                         .ctx = st->model };

		ps_dump_kernel_fields(out, reader, event, st->model ? &namer : NULL);
	} else {
		ps_dump_user_fields(out, reader, event);
	}
	if (!err && st->model)
		err = ps_model_apply(st->model, event);
	return err;
}

/* ------------------------------------------------------------------ */
/* the public writer (pystitch/output.h)                               */
/* ------------------------------------------------------------------ */

struct ps_dump {
	struct ps_dump_opts opts;
	const struct ps_reader *reader;
	struct ps_dump_state state;
	struct ps_sink sink;
};

int ps_dump_open(const struct ps_reader *reader, const struct ps_dump_opts *opts,
                 struct ps_dump **out)
{
	struct ps_dump *dump;

	*out = NULL;
	if (!reader || !opts || !opts->write)
		return -EINVAL;
	dump = calloc(1, sizeof(*dump));
	if (!dump)
		return -ENOMEM;
	if (ps_opts_copy(&dump->opts, sizeof(dump->opts), opts)) {
		free(dump);
		return -EINVAL;
	}
	dump->reader = reader;
	ps_dump_state_init(&dump->state);
	dump->state.no_hex = dump->opts.no_hex;
	dump->state.model = dump->opts.model;
	ps_sink_init(&dump->sink, dump->opts.write, dump->opts.write_ctx);
	ps_dump_begin(&dump->sink.text, reader);
	*out = dump;
	return 0;
}

void ps_dump_close(struct ps_dump *dump)
{
	if (!dump)
		return;
	ps_dump_state_release(&dump->state);
	ps_sink_release(&dump->sink);
	free(dump);
}

int ps_dump_write(struct ps_dump *dump, const struct ps_event *event)
{
	int err = ps_dump_event(&dump->sink.text, &dump->state, dump->reader, event);

	return err ? err : ps_sink_maybe_drain(&dump->sink);
}

int ps_dump_finish(struct ps_dump *dump)
{
	ps_dump_stats(&dump->sink.text, &dump->state, dump->reader);
	return ps_sink_drain(&dump->sink);
}

int ps_dump_flush(struct ps_dump *dump)
{
	return ps_sink_drain(&dump->sink);
}
