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
	uint64_t *nr_samples;	/* indexed by ps_attr.index */
	size_t nr_samples_cap;
	struct ps_dump_read_slot *read_slots;	/* open addressing by id */
	size_t read_cap, read_used;
	bool failed;		/* an allocation failed: per-event counts are incomplete */
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
void ps_dump_event(struct ps_strbuf *out, struct ps_dump_state *st,
		   const struct ps_reader *reader, const struct ps_event *event);
/* The per-type record counts that end a dump ("Aggregated stats:"), then
 * the per-event sample counts when st is not NULL. */
void ps_dump_stats(struct ps_strbuf *out, const struct ps_dump_state *st,
		   const struct ps_reader *reader);

/* `pystitch info`: the header and features, like `perf report --header-only`.
 * captured_on is what perf prints as "captured on": the input file's mtime. */
void ps_info_print(struct ps_strbuf *out, const struct ps_reader *reader,
		   time_t captured_on);

#endif /* PS_OUTPUT_OUTPUT_H */
