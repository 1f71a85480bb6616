/* `pystitch dump`: the fields perf 6.1's `perf report -D` prints for its
 * own records (type >= 64: ID_INDEX, THREAD_MAP, CPU_MAP, the stat and
 * time records, ...), after the record's name. */
#include "output/dump_priv.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <string.h>

/* cpu_map__snprint(): runs of consecutive cpus print as "a-b", joined by
 * commas. Fed one cpu at a time so no list has to be built. */
struct cpu_list {
	struct ps_strbuf *out;
	bool open, first;
	int start, len;
};

static void cpu_list_flush(struct cpu_list *cl)
{
	if (!cl->open)
		return;
	if (cl->len == 1)
		ps_strbuf_addf(cl->out, "%s%d", cl->first ? "" : ",", cl->start);
	else
		ps_strbuf_addf(cl->out, "%s%d-%d", cl->first ? "" : ",", cl->start,
		               cl->start + cl->len - 1);
	cl->first = false;
	cl->open = false;
}

static void cpu_list_add(struct cpu_list *cl, int cpu)
{
	if (cl->open && (long)cpu - cl->start == cl->len) {
		cl->len++;
		return;
	}
	cpu_list_flush(cl);
	cl->open = true;
	cl->start = cpu;
	cl->len = 1;
}

/* perf stores "any cpu" as -1; the u16 list encoding spells it 0xffff */
static int cpu_value(uint32_t cpu)
{
	return (cpu == UINT32_MAX || cpu == 0xffff) ? -1 : (int)cpu;
}

/* An EVENT_UPDATE of type CPUS carries a perf_record_cpu_map_data at byte
 * 24, which the decoded event does not expose: read the three encodings
 * (list of u16, bitmask of u32 or u64 words, range) from the raw bytes. */
static void print_raw_cpu_map(struct ps_strbuf *out, const struct ps_reader *reader,
                              const struct ps_event *ev, size_t off)
{
	struct cpu_list cl = { out, false, true, 0, 0 };
	uint16_t type = ps_dump_raw_u16(reader, ev, off);

	if (type == 0) { /* PERF_CPU_MAP__CPUS */
		uint16_t nr = ps_dump_raw_u16(reader, ev, off + 2);

		for (size_t i = 0; i < nr && off + 6 + 2 * i <= ev->size; i++)
			cpu_list_add(&cl, cpu_value(ps_dump_raw_u16(reader, ev, off + 4 + 2 * i)));
	} else if (type == 1) { /* PERF_CPU_MAP__MASK */
		uint16_t nr = ps_dump_raw_u16(reader, ev, off + 2);
		uint16_t long_size = ps_dump_raw_u16(reader, ev, off + 4);
		size_t base = long_size == 8 ? off + 10 : off + 6;

		if (long_size != 4 && long_size != 8) {
			ps_strbuf_addstr(out, "failed to get cpus\n");
			return;
		}
		for (size_t i = 0; i < nr && base + long_size * (i + 1) <= ev->size; i++) {
			uint64_t word = long_size == 8 ? ps_dump_raw_u64(reader, ev, base + 8 * i)
			                               : ps_dump_raw_u32(reader, ev, base + 4 * i);

			for (unsigned bit = 0; bit < 64; bit++)
				if (word & (1ULL << bit))
					cpu_list_add(&cl, (int)(bit + i * long_size * 8));
		}
	} else if (type == 2) { /* PERF_CPU_MAP__RANGE_CPUS */
		uint8_t any = off + 3 <= ev->size && ev->raw ? ev->raw[off + 2] : 0;
		uint16_t first = ps_dump_raw_u16(reader, ev, off + 4);
		uint16_t last = ps_dump_raw_u16(reader, ev, off + 6);

		if (any)
			cpu_list_add(&cl, -1);
		for (int cpu = first; cpu <= last; cpu++)
			cpu_list_add(&cl, cpu);
	} else {
		ps_strbuf_addstr(out, "failed to get cpus\n");
		return;
	}
	cpu_list_flush(&cl);
	ps_strbuf_addch(out, '\n');
}

static void print_id_index(struct ps_strbuf *out, const struct ps_reader *reader,
                           const struct ps_event *ev)
{
	const struct ps_record_id_index *ix = &ev->u.id_index;
	uint64_t room = ev->size > 16 ? ev->size - 16u : 0;
	/* newer perf appends {machine_pid, vcpu} per entry after the array;
	 * perf 6.1 prints them when the record is big enough to hold them */
	bool second = ix->nr <= room / 48;
	size_t second_off = 16 + (size_t)ix->nr * 32;

	ps_strbuf_addf(out, " nr: %zu\n", (size_t)ix->nr);
	for (uint64_t i = 0; i < ix->nr; i++) {
		const struct ps_record_id_index_entry *e = &ix->entries[i];

		ps_strbuf_addf(out,
		               " ... id: %" PRIu64 "  idx: %" PRIu64 "  cpu: %" PRId64
		               "  tid: %" PRId64,
		               e->id, e->idx, (int64_t)e->cpu, (int64_t)e->tid);
		if (second)
			ps_strbuf_addf(out, "  machine_pid: %" PRId64 "  vcpu: %" PRIu64 "\n",
			               (int64_t)ps_dump_raw_u64(reader, ev, second_off + 16 * i),
			               ps_dump_raw_u64(reader, ev, second_off + 16 * i + 8));
		else
			ps_strbuf_addch(out, '\n');
	}
}

static void print_thread_map(struct ps_strbuf *out, const struct ps_record_thread_map *tm)
{
	ps_strbuf_addf(out, " nr: %d thread%s: ", (int)tm->nr, tm->nr > 1 ? "s" : "");
	for (uint64_t i = 0; i < tm->nr; i++)
		ps_strbuf_addf(out, "%s%d", i ? ", " : "", (int)tm->entries[i].pid);
	ps_strbuf_addch(out, '\n');
	ps_dump_unhandled(out);
}

static void print_cpu_map(struct ps_strbuf *out, const struct ps_record_cpu_map *cm)
{
	struct cpu_list cl = { out, false, true, 0, 0 };

	ps_strbuf_addstr(out, ": ");
	/* the range encoding's "any cpu" flag is a leading -1 in perf's map */
	if (cm->any_cpu && (!cm->nr || cpu_value(cm->cpus[0]) != -1))
		cpu_list_add(&cl, -1);
	for (size_t i = 0; i < cm->nr; i++)
		cpu_list_add(&cl, cpu_value(cm->cpus[i]));
	cpu_list_flush(&cl);
	ps_strbuf_addch(out, '\n');
	ps_dump_unhandled(out);
}

/* STAT_CONFIG's values, 0 where a tag is not given */
static void print_stat_config(struct ps_strbuf *out, const struct ps_event *ev)
{
	const struct ps_record_stat_config *sc = &ev->u.stat_config;

	ps_strbuf_addf(out, "\n... aggr_mode %d\n... scale     %d\n... interval  %u\n",
	               (int)sc->aggr_mode, sc->scale != 0, (unsigned)sc->interval);
	ps_dump_unhandled(out);
}

static void print_event_update(struct ps_strbuf *out, const struct ps_reader *reader,
                               const struct ps_event *ev)
{
	const struct ps_record_event_update *eu = &ev->u.event_update;

	ps_strbuf_addf(out, "\n... id:    %" PRIu64 "\n", eu->id);
	switch (eu->type) {
	case 1:
		ps_strbuf_addf(out, "... scale: %f\n", eu->scale);
		break;
	case 0:
		ps_strbuf_addf(out, "... unit:  %s\n", eu->text ? eu->text : "");
		break;
	case 2:
		ps_strbuf_addf(out, "... name:  %s\n", eu->text ? eu->text : "");
		break;
	case 3:
		ps_strbuf_addstr(out, "... ");
		print_raw_cpu_map(out, reader, ev, 24);
		break;
	default:
		ps_strbuf_addstr(out, "... unknown type\n");
		break;
	}
}

static void print_time_conv(struct ps_strbuf *out, const struct ps_record_time_conv *tc)
{
	ps_strbuf_addf(out,
	               "\n... Time Shift      %" PRIu64 "\n... Time Muliplier  %" PRIu64
	               "\n... Time Zero       %" PRIu64 "\n",
	               tc->time_shift, tc->time_mult, tc->time_zero);
	if (tc->has_cycles)
		ps_strbuf_addf(out,
		               "... Time Cycles     %" PRIu64 "\n... Time Mask       %#" PRIx64
		               "\n... Cap Time Zero   %d\n... Cap Time Short  %d\n",
		               tc->time_cycles, tc->time_mask, tc->cap_user_time_zero,
		               tc->cap_user_time_short);
	ps_dump_unhandled(out);
}

void ps_dump_user_fields(struct ps_strbuf *out, const struct ps_reader *reader,
                         const struct ps_event *ev)
{
	switch (ev->type) {
	case PS_RECORD_AUXTRACE_ERROR:
	case PS_RECORD_FINISHED_INIT:
		ps_dump_unhandled(out);
		break;
	case PS_RECORD_FINISHED_ROUND:
		/* perf leaves rounds to its default stub when it reads in
		 * file order: asked to (--disable-order), or when the first
		 * event of a file lacks sample_id_all; else
		 * perf_event__process_finished_round() prints a newline */
		if (ps_reader_order(reader) == PS_ORDER_FILE ||
		    (!ps_reader_is_pipe(reader) && ps_reader_nr_attrs(reader) &&
		     !(ps_reader_attr(reader, 0)->flags & PS_ATTR_SAMPLE_ID_ALL)))
			ps_dump_unhandled(out);
		else
			ps_strbuf_addch(out, '\n');
		break;
	case PS_RECORD_ID_INDEX:
		print_id_index(out, reader, ev);
		break;
	case PS_RECORD_AUXTRACE_INFO:
		ps_strbuf_addf(out, " type: %u\n", ev->u.auxtrace_info.type);
		break;
	case PS_RECORD_AUXTRACE:
		ps_strbuf_addf(out,
		               " size: %#" PRIx64 "  offset: %#" PRIx64 "  ref: %#" PRIx64
		               "  idx: %u  tid: %d  cpu: %d\n",
		               ev->u.auxtrace.size, ev->u.auxtrace.offset, ev->u.auxtrace.reference,
		               ev->u.auxtrace.idx, (int32_t)ev->u.auxtrace.tid,
		               (int32_t)ev->u.auxtrace.cpu);
		break;
	case PS_RECORD_THREAD_MAP:
		print_thread_map(out, &ev->u.thread_map);
		break;
	case PS_RECORD_CPU_MAP:
		print_cpu_map(out, &ev->u.cpu_map);
		break;
	case PS_RECORD_STAT_CONFIG:
		print_stat_config(out, ev);
		break;
	case PS_RECORD_STAT:
		ps_strbuf_addf(out,
		               "\n... id %" PRIu64 ", cpu %d, thread %d\n"
		               "... value %" PRIu64 ", enabled %" PRIu64 ", running %" PRIu64 "\n",
		               ev->u.stat.id, (int32_t)ev->u.stat.cpu, (int32_t)ev->u.stat.thread,
		               ev->u.stat.val, ev->u.stat.ena, ev->u.stat.run);
		ps_dump_unhandled(out);
		break;
	case PS_RECORD_STAT_ROUND:
		ps_strbuf_addf(out, "\n... time %" PRIu64 ", type %s\n", ev->u.stat_round.time,
		               ev->u.stat_round.type == 1 ? "FINAL" : "INTERVAL");
		ps_dump_unhandled(out);
		break;
	case PS_RECORD_EVENT_UPDATE:
		print_event_update(out, reader, ev);
		break;
	case PS_RECORD_TIME_CONV:
		print_time_conv(out, &ev->u.time_conv);
		break;
	default:
		/* ATTR, EVENT_TYPE, TRACING_DATA, BUILD_ID and FEATURE:
		 * `perf report` processes them without printing */
		break;
	}
}
