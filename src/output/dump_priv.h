/* Private interface of the dump printers: what dump.c and dump_sample.c
 * share. Nothing outside src/output includes this. */
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
