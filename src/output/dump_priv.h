/* Private interface of the dump printers: what the files of `pystitch
 * dump` share. Nothing outside src/output includes this.
 *  - dump.c: each record's frame (its first line, hex dump, timestamp and
 *    record line), the thread and DSO lines of samples, the public writer;
 *  - dump_hex.c: the hex dump of a record;
 *  - dump_kernel.c, dump_user.c: the fields of the kernel's records and of
 *    perf's own (type >= 64);
 *  - dump_sample.c: the fields of PERF_RECORD_SAMPLE;
 *  - dump_stats.c: what is counted from record to record, and the
 *    statistics that end a dump.
 * dump.c calls the others; they call nothing but this header's inlines. */
#ifndef PS_OUTPUT_DUMP_PRIV_H
#define PS_OUTPUT_DUMP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "output/output.h"

/* The summary line and detail lines of a PERF_RECORD_SAMPLE, after the
 * "0xOFF [0xSIZE]: PERF_RECORD_SAMPLE" prefix. */
void ps_dump_sample(struct ps_strbuf *out, const struct ps_reader *reader,
                    const struct ps_event *event);

/* What perf prints after "PERF_RECORD_NAME" for a record of the kernel
 * (type < 64) other than a sample, and for one of perf's own. Both end
 * with a newline when they print anything; perf prints nothing for some
 * records, which the newline that starts the next record then ends. */
void ps_dump_kernel_fields(struct ps_strbuf *out, const struct ps_reader *reader,
                           const struct ps_event *event, const struct ps_kernel_namer *namer);
void ps_dump_user_fields(struct ps_strbuf *out, const struct ps_reader *reader,
                         const struct ps_event *event);

/* A record of a capture in the other byte order turned as perf's
 * event_swap() turns it (dump_swap.c). */
void ps_dump_swap_record(uint8_t *record, size_t size, bool sample_id_all);
/* The hex dump of a record's len bytes (see dump_hex.c). */
void ps_dump_hex(struct ps_strbuf *out, const uint8_t *data, size_t len);

/* How many times perf delivers a sample to `perf report` (1, or with
 * PERF_SAMPLE_READ one per read value whose counter moved), each counted
 * for its event in st (which may be NULL: then only the number). */
unsigned ps_dump_count_sample(struct ps_dump_state *st, const struct ps_reader *reader,
                              const struct ps_event *event);

/* perf's default handler of the records `perf report` does not process */
static inline void ps_dump_unhandled(struct ps_strbuf *out)
{
	ps_strbuf_addstr(out, ": unhandled!\n");
}

/* A few records carry fields the decoded event does not expose (or that
 * perf reads at fixed offsets whatever the layout); those are read from
 * event->raw, which is in file byte order. Reads past the record give 0. */
static inline uint64_t ps_dump_raw_u64(const struct ps_reader *reader, const struct ps_event *event,
                                       size_t off)
{
	uint64_t v;

	if (!event->raw || off > event->size || event->size - off < 8)
		return 0;
	memcpy(&v, event->raw + off, 8);
	return ps_reader_is_swapped(reader) ? __builtin_bswap64(v) : v;
}

static inline uint32_t ps_dump_raw_u32(const struct ps_reader *reader, const struct ps_event *event,
                                       size_t off)
{
	uint32_t v;

	if (!event->raw || off > event->size || event->size - off < 4)
		return 0;
	memcpy(&v, event->raw + off, 4);
	return ps_reader_is_swapped(reader) ? __builtin_bswap32(v) : v;
}

static inline uint16_t ps_dump_raw_u16(const struct ps_reader *reader, const struct ps_event *event,
                                       size_t off)
{
	uint16_t v;

	if (!event->raw || off > event->size || event->size - off < 2)
		return 0;
	memcpy(&v, event->raw + off, 2);
	return ps_reader_is_swapped(reader) ? __builtin_bswap16(v) : v;
}

#endif /* PS_OUTPUT_DUMP_PRIV_H */
