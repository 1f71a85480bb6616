/* `pystitch dump`: what perf 6.1's `perf report -D` counts from record to
 * record (the samples each event got, perf's hist entries), and the
 * statistics that end a dump (perf_session__fprintf_nr_events() and
 * evlist__fprintf_nr_events()). */
#include "output/dump_priv.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

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
		size_t old_cap = st->nr_samples_cap;

		if (!ps_array_reserve((void **)&st->nr_samples, &st->nr_samples_cap,
		                      (size_t)index + 1, sizeof(*st->nr_samples), 8)) {
			st->failed = true;
			return;
		}
		memset(st->nr_samples + old_cap, 0,
		       (st->nr_samples_cap - old_cap) * sizeof(*st->nr_samples));
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
 * splits the sample into one per read value and delivers (and counts) it
 * for the value's event when that counter moved since its last sample
 * (deliver_sample_value()). */
unsigned ps_dump_count_sample(struct ps_dump_state *st, const struct ps_reader *reader,
                              const struct ps_event *event)
{
	const struct ps_attr *attr = event->attr;
	const struct ps_read_data *rd = &event->u.sample.read;
	unsigned delivered = 0;
	size_t n;

	if (!attr)
		return 0;
	if (!(attr->sample_type & PERF_SAMPLE_READ)) {
		count_for_attr(st, attr->index);
		return 1;
	}
	n = (attr->read_format & PERF_FORMAT_GROUP) ? rd->nr : (rd->nr ? 1 : 0);
	for (size_t i = 0; i < n; i++) {
		struct ps_dump_read_slot *slot = read_slot(st, reader, rd->values[i].id);
		uint64_t delta;

		if (!slot)
			continue;
		delta = rd->values[i].value - slot->last_value;
		slot->last_value = rd->values[i].value;
		if (delta) {
			count_for_attr(st, slot->attr_index);
			delivered++;
		}
	}
	return delivered;
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
