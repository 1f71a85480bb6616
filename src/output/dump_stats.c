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
#include "reader/reader.h"

void ps_dump_state_init(struct ps_dump_state *st)
{
	memset(st, 0, sizeof(*st));
}

void ps_dump_state_release(struct ps_dump_state *st)
{
	free(st->nr_samples);
	ps_read_tracker_free(st->reads);
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

/* perf report counts a sample for its event; with PERF_SAMPLE_READ it
 * splits the sample into one per read value and delivers (and counts) it
 * for the value's event when that counter moved since its last sample
 * (deliver_sample_value()). */
unsigned ps_dump_count_sample(struct ps_dump_state *st, const struct ps_reader *reader,
                              const struct ps_event *event)
{
	const struct ps_attr *attr = event->attr;
	const struct ps_sample_delivery *deliveries;
	size_t nr;

	if (!attr)
		return 0;
	if (!(attr->sample_type & PERF_SAMPLE_READ)) {
		count_for_attr(st, attr->index);
		return 1;
	}
	if ((!st->reads && ps_read_tracker_new(&st->reads)) ||
	    ps_read_tracker_deliver(st->reads, reader, event, &deliveries, &nr)) {
		st->failed = true;
		return 0;
	}
	for (size_t i = 0; i < nr; i++)
		count_for_attr(st, deliveries[i].attr->index);
	return (unsigned)nr;
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
