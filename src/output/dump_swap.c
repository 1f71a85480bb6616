/* `pystitch dump` of a capture written in the other byte order: perf
 * swaps each record in memory (util/session.c event_swap()) before it
 * dumps the record's bytes, so its hex dump shows the header in host order
 * and each field that the record type's swap function turns, while what
 * that function leaves alone (strings, raw data, padding, the records it
 * has no function for) stays as written. This file turns a copy of the
 * record the same way. Each field is turned only where it lies wholly
 * inside the record, so a short or damaged record turns less, never reads
 * past its end.
 */
#include <linux/perf_event.h>

#include "output/dump_priv.h"

/* The n bytes at at reversed, when they lie wholly inside the record. */
static void reverse_at(uint8_t *b, size_t size, size_t at, size_t n)
{
	if (at + n > size)
		return;
	for (size_t i = 0; i < n / 2; i++) {
		uint8_t t = b[at + i];

		b[at + i] = b[at + n - 1 - i];
		b[at + n - 1 - i] = t;
	}
}

static void swap16_at(uint8_t *b, size_t size, size_t at)
{
	reverse_at(b, size, at, 2);
}

static void swap32_at(uint8_t *b, size_t size, size_t at)
{
	reverse_at(b, size, at, 4);
}

static void swap64_at(uint8_t *b, size_t size, size_t at)
{
	reverse_at(b, size, at, 8);
}

/* mem_bswap_64() from at to the end, in whole words */
static void swap64_from(uint8_t *b, size_t size, size_t at)
{
	for (; at + 8 <= size; at += 8)
		swap64_at(b, size, at);
}

static uint64_t host64(const uint8_t *b, size_t size, size_t at)
{
	uint64_t v = 0;

	if (at + 8 <= size)
		memcpy(&v, b + at, 8);
	return v;
}

static uint32_t host32(const uint8_t *b, size_t size, size_t at)
{
	uint32_t v = 0;

	if (at + 4 <= size)
		memcpy(&v, b + at, 4);
	return v;
}

static uint16_t host16(const uint8_t *b, size_t size, size_t at)
{
	uint16_t v = 0;

	if (at + 2 <= size)
		memcpy(&v, b + at, 2);
	return v;
}

/* the sample_id_all trailer after a NUL-terminated string at at, padded
 * to 8 bytes (PERF_ALIGN(strlen(data) + 1, sizeof(u64))) */
static void swap_after_string(uint8_t *b, size_t size, size_t at, bool sample_id_all)
{
	size_t len = 0;

	if (!sample_id_all || at >= size)
		return;
	while (at + len < size && b[at + len])
		len++;
	swap64_from(b, size, at + ((len + 1 + 7) & ~(size_t)7));
}

/* perf_event__attr_swap(): the fields a writer of attr's size had, the
 * flags' bit-field with each byte's bits reversed */
static void swap_attr(uint8_t *b, size_t size, size_t at)
{
	/* offsets in perf_event_attr of the fields perf 6.1 turns */
	static const struct {
		uint8_t offset, width;
	} fields[] = {
		{ 8, 8 },  { 16, 8 }, { 24, 8 }, { 32, 8 }, { 48, 4 },  { 52, 4 },  { 56, 8 },
		{ 64, 8 }, { 72, 8 }, { 80, 8 }, { 88, 4 }, { 104, 4 }, { 108, 2 }, { 112, 4 },
	};
	uint32_t attr_size;

	swap32_at(b, size, at);
	swap32_at(b, size, at + 4);
	attr_size = host32(b, size, at + 4);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		/* bswap_safe(): the attr is longer than the field's offset */
		if (attr_size <= fields[i].offset)
			continue;
		if (fields[i].width == 8)
			swap64_at(b, size, at + fields[i].offset);
		else if (fields[i].width == 4)
			swap32_at(b, size, at + fields[i].offset);
		else
			swap16_at(b, size, at + fields[i].offset);
	}
	if (attr_size > 40)
		for (size_t i = 40; i < 48 && at + i < size; i++) {
			uint8_t v = b[at + i], r = 0;

			for (int bit = 0; bit < 8; bit++)
				if (v & (1u << bit))
					r |= (uint8_t)(0x80u >> bit);
			b[at + i] = r;
		}
}

static void swap_cpu_map(uint8_t *b, size_t size)
{
	uint16_t nr;

	swap16_at(b, size, 8);
	switch (host16(b, size, 8)) {
	case 0: /* PERF_CPU_MAP__CPUS: u16 nr, u16 cpu[] */
		swap16_at(b, size, 10);
		nr = host16(b, size, 10);
		for (size_t i = 0; i < nr; i++)
			swap16_at(b, size, 12 + 2 * i);
		break;
	case 1: /* PERF_CPU_MAP__MASK: u16 nr, u16 long_size, masks */
		swap16_at(b, size, 12);
		swap16_at(b, size, 10);
		nr = host16(b, size, 10);
		if (host16(b, size, 12) == 4)
			for (size_t i = 0; i < nr; i++)
				swap32_at(b, size, 14 + 4 * i);
		else if (host16(b, size, 12) == 8)
			for (size_t i = 0; i < nr; i++)
				swap64_at(b, size, 18 + 8 * i);
		break;
	case 2: /* PERF_CPU_MAP__RANGE_CPUS */
		swap16_at(b, size, 12);
		swap16_at(b, size, 14);
		break;
	default:
		break;
	}
}

static void swap_kernel_record(uint8_t *b, size_t size, uint32_t type, uint16_t misc, bool sid)
{
	uint64_t nr;
	uint32_t fmt;

	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case 21: /* PERF_RECORD_AUX_OUTPUT_HW_ID */
		swap64_from(b, size, 8);
		break;
	case PERF_RECORD_COMM:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		swap_after_string(b, size, 16, sid);
		break;
	case PERF_RECORD_MMAP:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		for (size_t at = 16; at <= 32; at += 8)
			swap64_at(b, size, at);
		swap_after_string(b, size, 40, sid);
		break;
	case PERF_RECORD_MMAP2:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		for (size_t at = 16; at <= 32; at += 8)
			swap64_at(b, size, at);
		/* a build-id in place of the device and inode: left alone */
		if (!(misc & (1u << 14))) {
			swap32_at(b, size, 40);
			swap32_at(b, size, 44);
			swap64_at(b, size, 48);
			swap64_at(b, size, 56);
		}
		swap_after_string(b, size, 72, sid);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		for (size_t at = 8; at <= 20; at += 4)
			swap32_at(b, size, at);
		swap64_at(b, size, 24);
		if (sid)
			swap64_from(b, size, 32);
		break;
	case PERF_RECORD_READ:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		for (size_t at = 16; at <= 40; at += 8)
			swap64_at(b, size, at);
		/* past struct perf_record_read, whose lost perf 6.1 has */
		if (sid)
			swap64_from(b, size, 56);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_AUX:
		for (size_t at = 8; at <= 24; at += 8)
			swap64_at(b, size, at);
		if (sid)
			swap64_from(b, size, 32);
		break;
	case PERF_RECORD_ITRACE_START:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		if (sid)
			swap64_from(b, size, 16);
		break;
	case PERF_RECORD_SWITCH:
		/* the trailer from past struct perf_record_switch (16 bytes),
		 * as perf 6.1 takes it for both kinds: a SWITCH's first word
		 * of it is left as written */
		if (sid)
			swap64_from(b, size, 16);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		if (sid)
			swap64_from(b, size, 16);
		break;
	case PERF_RECORD_NAMESPACES:
		swap32_at(b, size, 8);
		swap32_at(b, size, 12);
		swap64_at(b, size, 16);
		nr = host64(b, size, 16);
		if (nr > size / 16)
			nr = size / 16;
		for (size_t i = 0; i < nr; i++) {
			swap64_at(b, size, 24 + 16 * i);
			swap64_at(b, size, 32 + 16 * i);
		}
		if (sid)
			swap64_from(b, size, 24 + 16 * (size_t)nr);
		break;
	case PERF_RECORD_CGROUP:
		swap64_at(b, size, 8);
		swap_after_string(b, size, 16, sid);
		break;
	case PERF_RECORD_TEXT_POKE:
		swap64_at(b, size, 8);
		swap16_at(b, size, 16);
		swap16_at(b, size, 18);
		if (sid)
			swap64_from(
			        b, size,
			        16 + ((4u + host16(b, size, 16) + host16(b, size, 18) + 7) & ~7u));
		break;
	/* perf's own records */
	case PS_RECORD_HEADER_ATTR:
		/* the ids from &event->attr.id: past perf 6.1's 128-byte
		 * perf_event_attr, whatever size the writer's attr had */
		swap_attr(b, size, 8);
		swap64_from(b, size, 8 + 128);
		break;
	case 65: /* PERF_RECORD_HEADER_EVENT_TYPE: its id */
		swap64_at(b, size, 8);
		break;
	case 66: /* PERF_RECORD_HEADER_TRACING_DATA: its size */
		swap32_at(b, size, 8);
		break;
	case PS_RECORD_ID_INDEX:
		swap64_from(b, size, 8);
		break;
	case PS_RECORD_AUXTRACE_INFO:
		swap32_at(b, size, 8);
		swap64_from(b, size, 16);
		break;
	case PS_RECORD_AUXTRACE:
		for (size_t at = 8; at <= 24; at += 8)
			swap64_at(b, size, at);
		for (size_t at = 32; at <= 40; at += 4)
			swap32_at(b, size, at);
		break;
	case PS_RECORD_AUXTRACE_ERROR:
		for (size_t at = 8; at <= 28; at += 4)
			swap32_at(b, size, at);
		swap64_at(b, size, 32);
		fmt = host32(b, size, 28);
		if (fmt)
			swap64_at(b, size, 40);
		if (fmt >= 2) {
			swap32_at(b, size, 112);
			swap32_at(b, size, 116);
		}
		break;
	case PS_RECORD_THREAD_MAP:
		swap64_at(b, size, 8);
		nr = host64(b, size, 8);
		if (nr > size / 24)
			nr = size / 24;
		for (size_t i = 0; i < nr; i++)
			swap64_at(b, size, 16 + 24 * i);
		break;
	case PS_RECORD_CPU_MAP:
		swap_cpu_map(b, size);
		break;
	case PS_RECORD_STAT_CONFIG:
		swap64_at(b, size, 8);
		nr = host64(b, size, 8);
		if (nr > size / 16)
			nr = size / 16;
		for (size_t i = 0; i < 2 * nr; i++)
			swap64_at(b, size, 16 + 8 * i);
		break;
	case PS_RECORD_STAT:
		swap64_at(b, size, 8);
		swap32_at(b, size, 16);
		swap32_at(b, size, 20);
		for (size_t at = 24; at <= 40; at += 8)
			swap64_at(b, size, at);
		break;
	case PS_RECORD_STAT_ROUND:
	case PS_RECORD_EVENT_UPDATE:
		swap64_at(b, size, 8);
		swap64_at(b, size, 16);
		break;
	case PS_RECORD_TIME_CONV:
		for (size_t at = 8; at <= 24; at += 8)
			swap64_at(b, size, at);
		/* event_contains(time_cycles) */
		if (size > 32) {
			swap64_at(b, size, 32);
			swap64_at(b, size, 40);
		}
		break;
	default:
		break; /* perf has no swap function: the header only */
	}
}

void ps_dump_swap_record(uint8_t *b, size_t size, bool sample_id_all)
{
	uint32_t type;
	uint16_t misc;

	if (size < 8)
		return;
	/* perf_event_header__bswap() */
	swap32_at(b, size, 0);
	swap16_at(b, size, 4);
	swap16_at(b, size, 6);
	type = host32(b, size, 0);
	misc = host16(b, size, 4);
	swap_kernel_record(b, size, type, misc, sample_id_all);
}
