/* `pystitch dump`: each record as perf 6.1's `perf report -D` prints it (the summary line
 * without its timestamp, then perf's detail lines), and the closing statistics. Samples are
 * printed by dump_sample.c. */
#include "output/dump_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/opts.h"
#include "output/sink.h"

/* ------------------------------------------------------------------ */
/* state: per-event sample counts                                      */
/* ------------------------------------------------------------------ */

struct ps_dump_read_slot {
	uint64_t id;
	uint64_t last_value;
	unsigned attr_index;
	bool used;
};

void ps_dump_state_init(struct ps_dump_state *st)
{
	memset(st, 0, sizeof(*st));
}

void ps_dump_state_release(struct ps_dump_state *st)
{
	free(st->nr_samples);
	free(st->read_slots);
	memset(st, 0, sizeof(*st));
}

static void count_for_attr(struct ps_dump_state *st, unsigned index)
{
	if (index >= st->nr_samples_cap) {
		size_t cap = st->nr_samples_cap ? st->nr_samples_cap : 8;
		uint64_t *n;

		while (cap <= index)
			cap *= 2;
		n = realloc(st->nr_samples, cap * sizeof(*n));
		if (!n) {
			st->failed = true;
			return;
		}
		memset(n + st->nr_samples_cap, 0, (cap - st->nr_samples_cap) * sizeof(*n));
		st->nr_samples = n;
		st->nr_samples_cap = cap;
	}
	st->nr_samples[index]++;
}

static size_t slot_index(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static bool grow_read_slots(struct ps_dump_state *st)
{
	size_t cap = st->read_cap ? st->read_cap * 2 : 64;
	struct ps_dump_read_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return false;
	for (size_t i = 0; i < st->read_cap; i++) {
		size_t j;

		if (!st->read_slots[i].used)
			continue;
		for (j = slot_index(st->read_slots[i].id, cap); slots[j].used;
		     j = (j + 1) & (cap - 1))
			;
		slots[j] = st->read_slots[i];
	}
	free(st->read_slots);
	st->read_slots = slots;
	st->read_cap = cap;
	return true;
}

/* The slot of a sample id, created on first sight; NULL when no event owns
 * the id (perf counts those as unknown ids and delivers nothing). */
static struct ps_dump_read_slot *read_slot(struct ps_dump_state *st, const struct ps_reader *reader,
                                           uint64_t id)
{
	const struct ps_attr *owner = NULL;
	size_t i;

	if (st->read_cap) {
		for (i = slot_index(id, st->read_cap); st->read_slots[i].used;
		     i = (i + 1) & (st->read_cap - 1))
			if (st->read_slots[i].id == id)
				return &st->read_slots[i];
	}
	for (size_t a = 0; a < ps_reader_nr_attrs(reader) && !owner; a++) {
		const struct ps_attr *attr = ps_reader_attr(reader, a);

		for (size_t k = 0; attr && k < attr->nr_ids; k++) {
			if (attr->ids[k] == id) {
				owner = attr;
				break;
			}
		}
	}
	if (!owner)
		return NULL;
	if ((st->read_used + 1) * 2 > st->read_cap && !grow_read_slots(st)) {
		st->failed = true;
		return NULL;
	}
	for (i = slot_index(id, st->read_cap); st->read_slots[i].used;
	     i = (i + 1) & (st->read_cap - 1))
		;
	st->read_slots[i] = (struct ps_dump_read_slot){ id, 0, owner->index, true };
	st->read_used++;
	return &st->read_slots[i];
}

/* perf report counts a sample for its event; with PERF_SAMPLE_READ it
 * splits the sample into one per read value and counts it for the value's
 * event when that counter moved since its last sample. */
static void count_sample(struct ps_dump_state *st, const struct ps_reader *reader,
                         const struct ps_event *event)
{
	const struct ps_attr *attr = event->attr;
	const struct ps_read_data *rd = &event->u.sample.read;
	size_t n;

	if (!st || !attr)
		return;
	if (!(attr->sample_type & PERF_SAMPLE_READ)) {
		count_for_attr(st, attr->index);
		return;
	}
	n = (attr->read_format & PERF_FORMAT_GROUP) ? rd->nr : (rd->nr ? 1 : 0);
	for (size_t i = 0; i < n; i++) {
		struct ps_dump_read_slot *slot = read_slot(st, reader, rd->values[i].id);
		uint64_t delta;

		if (!slot)
			continue;
		delta = rd->values[i].value - slot->last_value;
		slot->last_value = rd->values[i].value;
		if (delta)
			count_for_attr(st, slot->attr_index);
	}
}

/* ------------------------------------------------------------------ */
/* shared pieces                                                       */
/* ------------------------------------------------------------------ */

/* perf's default handlers for records `perf report` does not process */
static void unhandled(struct ps_strbuf *out)
{
	ps_strbuf_addstr(out, ": unhandled!\n");
}

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

/* ------------------------------------------------------------------ */
/* kernel records                                                      */
/* ------------------------------------------------------------------ */

static void print_mmap(struct ps_strbuf *out, const struct ps_event *ev)
{
	const struct ps_record_mmap *m = &ev->u.mmap;

	ps_strbuf_addf(out, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
	               (int32_t)m->pid, (int32_t)m->tid, m->start, m->len, m->pgoff,
	               (ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 'r' : 'x', m->filename);
}

static void print_mmap2(struct ps_strbuf *out, const struct ps_event *ev)
{
	const struct ps_record_mmap *m = &ev->u.mmap;
	char prot[5] = {
		(m->prot & 1) ? 'r' : '-', /* PROT_READ */
		(m->prot & 2) ? 'w' : '-', /* PROT_WRITE */
		(m->prot & 4) ? 'x' : '-', /* PROT_EXEC */
		(m->flags & 1) ? 's' : 'p', /* MAP_SHARED */
		0,
	};

	ps_strbuf_addf(out, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64, (int32_t)m->pid,
	               (int32_t)m->tid, m->start, m->len, m->pgoff);
	if (ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		size_t n = m->build_id_size < sizeof(m->build_id) ? m->build_id_size
		                                                  : sizeof(m->build_id);

		ps_strbuf_addstr(out, " <");
		for (size_t i = 0; i < n; i++)
			ps_strbuf_addf(out, "%02x", m->build_id[i]);
		ps_strbuf_addch(out, '>');
	} else {
		ps_strbuf_addf(out, " %02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min, m->ino,
		               m->ino_generation);
	}
	ps_strbuf_addf(out, "]: %s %s\n", prot, m->filename);
}

static void print_namespaces(struct ps_strbuf *out, const struct ps_record_namespaces *ns)
{
	static const char *const names[] = { "net", "uts", "ipc", "pid", "user", "mnt", "cgroup" };
	uint32_t nr = (uint32_t)ns->nr_namespaces;

	ps_strbuf_addf(out, " %d/%d - nr_namespaces: %u\n\t\t[", (int32_t)ns->pid, (int32_t)ns->tid,
	               nr);
	/* only the entries the record really holds are printed */
	for (uint32_t i = 0; i < nr && i < ns->nr; i++) {
		if (i && i % 4 == 0)
			ps_strbuf_addstr(out, "\n\t\t ");
		ps_strbuf_addf(out, "%u/%s: %" PRIu64 "/%#" PRIx64 "%s", i,
		               i < sizeof(names) / sizeof(names[0]) ? names[i] : "UNKNOWN",
		               ns->dev_ino[2 * i], ns->dev_ino[2 * i + 1],
		               i + 1 != nr ? ", " : "]\n");
	}
}

static void print_switch(struct ps_strbuf *out, const struct ps_event *ev)
{
	bool is_out = ev->misc & PERF_RECORD_MISC_SWITCH_OUT;
	const char *in_out = !is_out                                             ? "IN         "
	                     : !(ev->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? "OUT        "
	                                                                         : "OUT preempt";

	if (ev->type == PERF_RECORD_SWITCH) {
		ps_strbuf_addf(out, " %s\n", in_out);
		return;
	}
	ps_strbuf_addf(out, " %s  %s pid/tid: %5d/%-5d\n", in_out, is_out ? "next" : "prev",
	               (int32_t)ev->u.context_switch.next_prev_pid,
	               (int32_t)ev->u.context_switch.next_prev_tid);
}

/* perf also names the kernel symbol at the address when it can load the
 * kernel's symbols; we print what it prints when it cannot. */
static void print_text_poke(struct ps_strbuf *out, const struct ps_record_text_poke *tp)
{
	ps_strbuf_addf(out, " %" PRIx64 "  old len %u new len %u\n", tp->addr, tp->old_len,
	               tp->new_len);
	for (int part = 0; part < 2 && tp->bytes; part++) {
		const uint8_t *b = tp->bytes + (part ? tp->old_len : 0);
		size_t len = part ? tp->new_len : tp->old_len;

		for (size_t i = 0; i < len; i++) {
			if (i % 16 == 0)
				ps_strbuf_addf(out, "            %s bytes:", part ? "New" : "Old");
			ps_strbuf_addf(out, " %02x", b[i]);
			if (i % 16 == 15 || i == len - 1)
				ps_strbuf_addch(out, '\n');
		}
	}
}

/* dump_read(): perf reads the values at the offsets of the
 * {value, time_enabled, time_running, id, lost} layout whatever the
 * read_format, so we read them from the raw record the same way. */
static void print_read(struct ps_strbuf *out, const struct ps_reader *reader,
                       const struct ps_event *ev)
{
	const struct ps_attr *attr = ev->attr;
	uint64_t rf;

	ps_strbuf_addf(out, ": %d %d %s %" PRIu64 "\n", (int32_t)ev->u.read.pid,
	               (int32_t)ev->u.read.tid, attr ? attr->name : "unknown",
	               ps_dump_raw_u64(reader, ev, 16));
	if (!attr)
		return;
	rf = attr->read_format;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		ps_strbuf_addf(out, "... time enabled : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 24));
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		ps_strbuf_addf(out, "... time running : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 32));
	if (rf & PERF_FORMAT_ID)
		ps_strbuf_addf(out, "... id           : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 40));
	if (rf & PERF_FORMAT_LOST)
		ps_strbuf_addf(out, "... lost         : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 48));
}

/* Not known to perf 6.1; the layout of newer perf's dump is not copied,
 * this prints the cookie and the user callchain. */
static void print_callchain_deferred(struct ps_strbuf *out,
                                     const struct ps_record_callchain_deferred *cd)
{
	ps_strbuf_addf(out, " cookie: %#" PRIx64 "\n... FP chain: nr:%zu\n", cd->cookie, cd->nr);
	for (size_t i = 0; i < cd->nr; i++)
		ps_strbuf_addf(out, "..... %2d: %016" PRIx64 "\n", (int)i, cd->ips[i]);
}

/* ------------------------------------------------------------------ */
/* perf's own records                                                  */
/* ------------------------------------------------------------------ */

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
	unhandled(out);
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
	unhandled(out);
}

/* STAT_CONFIG holds {tag, value} pairs; the decoded event only has their
 * number, so read them from the raw record. */
static void print_stat_config(struct ps_strbuf *out, const struct ps_reader *reader,
                              const struct ps_event *ev)
{
	uint64_t aggr_mode = 0, scale = 0, interval = 0;
	uint64_t nr = ev->u.stat_config.nr;

	for (uint64_t i = 0; i < nr && 16 + 16 * (i + 1) <= ev->size; i++) {
		uint64_t tag = ps_dump_raw_u64(reader, ev, 16 + 16 * i);
		uint64_t val = ps_dump_raw_u64(reader, ev, 24 + 16 * i);

		if (tag == 0)
			aggr_mode = val;
		else if (tag == 1)
			interval = val;
		else if (tag == 2)
			scale = val;
	}
	ps_strbuf_addf(out, "\n... aggr_mode %d\n... scale     %d\n... interval  %u\n",
	               (int)aggr_mode, scale != 0, (unsigned)interval);
	unhandled(out);
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
	unhandled(out);
}

/* ------------------------------------------------------------------ */
/* entry points                                                        */
/* ------------------------------------------------------------------ */

static void print_fields(struct ps_strbuf *out, struct ps_dump_state *st,
                         const struct ps_reader *reader, const struct ps_event *ev)
{
	switch (ev->type) {
	case PERF_RECORD_SAMPLE:
		count_sample(st, reader, ev);
		ps_dump_sample(out, reader, ev);
		break;
	case PERF_RECORD_MMAP:
		print_mmap(out, ev);
		break;
	case PERF_RECORD_MMAP2:
		print_mmap2(out, ev);
		break;
	case PERF_RECORD_COMM:
		ps_strbuf_addf(out, "%s: %s:%d/%d\n",
		               (ev->misc & PERF_RECORD_MISC_COMM_EXEC) ? " exec" : "",
		               ev->u.comm.comm, (int32_t)ev->u.comm.pid, (int32_t)ev->u.comm.tid);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ps_strbuf_addf(out, "(%d:%d):(%d:%d)\n", (int32_t)ev->u.fork.pid,
		               (int32_t)ev->u.fork.tid, (int32_t)ev->u.fork.ppid,
		               (int32_t)ev->u.fork.ptid);
		break;
	case PERF_RECORD_LOST:
		ps_strbuf_addf(out, ": id:%" PRIu64 ": lost:%" PRIu64 "\n", ev->u.lost.id,
		               ev->u.lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		/* the id comes from the sample_id trailer; perf's default is -1 */
		ps_strbuf_addf(out, ": id:%" PRIu64 ": lost samples :%" PRIu64 "\n",
		               ev->sample_id.has_id ? ev->sample_id.id : UINT64_MAX,
		               ev->u.lost.lost);
		break;
	case PERF_RECORD_READ:
		print_read(out, reader, ev);
		break;
	case PERF_RECORD_AUX:
		ps_strbuf_addf(out,
		               " offset: %#" PRIx64 " size: %#" PRIx64 " flags: %#" PRIx64
		               " [%s%s%s]\n",
		               ev->u.aux.aux_offset, ev->u.aux.aux_size, ev->u.aux.flags,
		               (ev->u.aux.flags & PERF_AUX_FLAG_TRUNCATED) ? "T" : "",
		               (ev->u.aux.flags & PERF_AUX_FLAG_OVERWRITE) ? "O" : "",
		               (ev->u.aux.flags & PERF_AUX_FLAG_PARTIAL) ? "P" : "");
		break;
	case PERF_RECORD_ITRACE_START:
		ps_strbuf_addf(out, " pid: %u tid: %u\n", ev->u.itrace_start.pid,
		               ev->u.itrace_start.tid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		print_switch(out, ev);
		break;
	case PERF_RECORD_NAMESPACES:
		print_namespaces(out, &ev->u.namespaces);
		break;
	case PERF_RECORD_KSYMBOL:
		ps_strbuf_addf(out, " addr %" PRIx64 " len %u type %u flags 0x%x name %s\n",
		               ev->u.ksymbol.addr, ev->u.ksymbol.len, ev->u.ksymbol.ksym_type,
		               ev->u.ksymbol.flags, ev->u.ksymbol.name);
		break;
	case PERF_RECORD_BPF_EVENT:
		ps_strbuf_addf(out, " type %u, flags %u, id %u\n", ev->u.bpf_event.type,
		               ev->u.bpf_event.flags, ev->u.bpf_event.id);
		break;
	case PERF_RECORD_CGROUP:
		ps_strbuf_addf(out, " cgroup: %" PRIu64 " %s\n", ev->u.cgroup.id,
		               ev->u.cgroup.path);
		break;
	case PERF_RECORD_TEXT_POKE:
		print_text_poke(out, &ev->u.text_poke);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		ps_strbuf_addf(out, " hw_id: %#" PRIx64 "\n", ev->u.aux_output_hw_id.hw_id);
		break;
	case PS_RECORD_CALLCHAIN_DEFERRED:
		print_callchain_deferred(out, &ev->u.callchain_deferred);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PS_RECORD_AUXTRACE_ERROR:
	case PS_RECORD_FINISHED_INIT:
		unhandled(out);
		break;
	case PS_RECORD_FINISHED_ROUND:
		/* when the first event of a file lacks sample_id_all, perf
		 * reads in file order and leaves rounds to its default stub */
		if (!ps_reader_is_pipe(reader) && ps_reader_nr_attrs(reader) &&
		    !(ps_reader_attr(reader, 0)->flags & PS_ATTR_SAMPLE_ID_ALL))
			unhandled(out);
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
		print_stat_config(out, reader, ev);
		break;
	case PS_RECORD_STAT:
		ps_strbuf_addf(out,
		               "\n... id %" PRIu64 ", cpu %d, thread %d\n"
		               "... value %" PRIu64 ", enabled %" PRIu64 ", running %" PRIu64 "\n",
		               ev->u.stat.id, (int32_t)ev->u.stat.cpu, (int32_t)ev->u.stat.thread,
		               ev->u.stat.val, ev->u.stat.ena, ev->u.stat.run);
		unhandled(out);
		break;
	case PS_RECORD_STAT_ROUND:
		ps_strbuf_addf(out, "\n... time %" PRIu64 ", type %s\n", ev->u.stat_round.time,
		               ev->u.stat_round.type == 1 ? "FINAL" : "INTERVAL");
		unhandled(out);
		break;
	case PS_RECORD_EVENT_UPDATE:
		print_event_update(out, reader, ev);
		break;
	case PS_RECORD_TIME_CONV:
		print_time_conv(out, &ev->u.time_conv);
		break;
	default:
		/* ATTR, EVENT_TYPE, TRACING_DATA, BUILD_ID and
		 * FEATURE: `perf report` processes them without printing */
		break;
	}
}

void ps_dump_event(struct ps_strbuf *out, struct ps_dump_state *st, const struct ps_reader *reader,
                   const struct ps_event *event)
{
	const char *name;

	/* perf does not dump COMPRESSED records, only what they hold */
	if (event->type == PS_RECORD_COMPRESSED || event->type == PS_RECORD_COMPRESSED2)
		return;
	name = ps_record_type_name(event->type);
	ps_strbuf_addf(out, "%#" PRIx64 " [%#x]: ", event->offset, event->size);
	if (name)
		ps_strbuf_addstr(out, name);
	else
		ps_strbuf_addf(out, "PERF_RECORD_UNKNOWN(%u)", event->type);
	print_fields(out, st, reader, event);
	/* perf ends a record's text with the newline that starts the next
	 * one; we end every record on a complete line */
	if (out->buf && out->len && out->buf[out->len - 1] != '\n')
		ps_strbuf_addch(out, '\n');
}

void ps_dump_stats(struct ps_strbuf *out, const struct ps_dump_state *st,
                   const struct ps_reader *reader)
{
	const struct ps_reader_stats *stats = ps_reader_stats(reader);
	const struct ps_features *f = ps_reader_features(reader);
	bool auxtrace = f && (f->present[0] & (1ULL << PS_FEAT_AUXTRACE));
	uint64_t total = 0;

	ps_strbuf_addf(out, "\nAggregated stats:%s\n",
	               auxtrace ? " (excludes AUX area (e.g. instruction trace) decoded / "
	                          "synthesized events)"
	                        : "");
	if (!stats)
		return;
	for (unsigned t = 0; t < PS_RECORD_TYPE_MAX; t++)
		total += stats->nr_records[t];
	if (total)
		ps_strbuf_addf(out, "%16s events: %10" PRIu64 "\n", "TOTAL", total);
	for (unsigned t = 1; t < PS_RECORD_TYPE_MAX; t++) {
		const char *name = ps_record_type_name(t);
		uint64_t n = stats->nr_records[t];

		if (!name || !n)
			continue;
		if (!strncmp(name, "PERF_RECORD_", 12))
			name += 12;
		ps_strbuf_addf(out, "%16s events: %10" PRIu64 "  (%4.1f%%)\n", name, n,
		               100.0 * (double)n / (double)total);
	}
	if (!st)
		return;
	for (size_t i = 0; i < ps_reader_nr_attrs(reader); i++) {
		const struct ps_attr *attr = ps_reader_attr(reader, i);
		uint64_t n;

		if (!attr || attr->index >= st->nr_samples_cap)
			continue;
		n = st->nr_samples[attr->index];
		if (!n)
			continue;
		ps_strbuf_addf(out, "%s stats:\n%16s events: %10" PRIu64 "\n", attr->name, "SAMPLE",
		               n);
	}
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
	ps_sink_init(&dump->sink, dump->opts.write, dump->opts.write_ctx);
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
	ps_dump_event(&dump->sink.text, &dump->state, dump->reader, event);
	return ps_sink_maybe_drain(&dump->sink);
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
