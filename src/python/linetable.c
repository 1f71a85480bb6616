/* CPython's line tables: which source line each code unit of a code object
 * comes from, as the interpreter itself answers (PyCode_Addr2Line), in the
 * three formats CPython has had:
 *  - co_lnotab (3.8, 3.9): pairs of (bytecode increment, signed line
 *    increment) bytes; the line of an offset is that of the last pair
 *    starting at or before it;
 *  - the 3.10 co_linetable: pairs of (bytecode length, signed line delta)
 *    bytes, each pair a range of the bytecode; a delta of -128 marks a
 *    range without a line;
 *  - the 3.11+ location table: entries of one byte (its high bit set)
 *    holding a kind and a length in code units, followed by varints; only
 *    the line is read here (its delta, or "no location").
 * The tables come from a side file written by the profiled program: they
 * are read through a cursor, and a table that ends inside an entry or
 * holds a delta that overflows is refused.
 */
#include <errno.h>
#include <stdint.h>

#include "base/cursor.h"
#include "python/python_priv.h"

#define CODE_UNIT 2 /* bytes of one code unit (_Py_CODEUNIT), every version */

/* 3.11+ location kinds (the bits 3-6 of an entry's first byte) */
#define LOCATION_SHORT_LAST 9 /* 0-9: short form, same line */
#define LOCATION_ONE_LINE0 10 /* 10-12: one-line form, line delta 0-2 */
#define LOCATION_NO_COLUMNS 13
#define LOCATION_LONG 14
#define LOCATION_NONE 15

static bool next_u8(struct ps_cursor *c, uint8_t *out)
{
	*out = ps_cursor_u8(c);
	return ps_cursor_ok(c);
}

/* A line number kept as CPython keeps it (an int); false on overflow. */
static bool add_delta(int64_t *line, int64_t delta)
{
	*line += delta;
	return *line >= INT32_MIN && *line <= INT32_MAX;
}

static int lnotab_line(struct ps_cursor *c, int32_t first_line, uint64_t offset, int32_t *out)
{
	uint64_t address = 0;
	int64_t line = first_line;

	while (ps_cursor_left(c) > 0) {
		uint8_t increment, delta;

		if (!next_u8(c, &increment) || !next_u8(c, &delta))
			return -EINVAL;
		address += increment;
		if (address > offset)
			break;
		if (!add_delta(&line, (int8_t)delta))
			return -EINVAL;
	}
	*out = (int32_t)line;
	return 1;
}

static int linetable_310_line(struct ps_cursor *c, int32_t first_line, uint64_t offset,
                              int32_t *out)
{
	uint64_t start, end = 0;
	int64_t line = first_line;

	while (ps_cursor_left(c) > 0) {
		uint8_t length, delta;

		if (!next_u8(c, &length) || !next_u8(c, &delta))
			return -EINVAL;
		start = end;
		end += length;
		if ((int8_t)delta != -128 && !add_delta(&line, (int8_t)delta))
			return -EINVAL;
		if (offset >= start && offset < end) {
			if ((int8_t)delta == -128)
				return 0;
			*out = (int32_t)line;
			return 1;
		}
	}
	return 0; /* past the table: CPython answers -1 */
}

/* A varint of the location table: 6-bit groups, low first, bit 6 set on
 * all but the last. */
static bool read_varint(struct ps_cursor *c, uint64_t *out)
{
	uint64_t value = 0;
	unsigned shift = 0;
	uint8_t byte;

	do {
		if (!next_u8(c, &byte) || shift > 60)
			return false;
		value |= (uint64_t)(byte & 63) << shift;
		shift += 6;
	} while (byte & 64);
	*out = value;
	return true;
}

static bool read_signed_varint(struct ps_cursor *c, int64_t *out)
{
	uint64_t value;

	if (!read_varint(c, &value))
		return false;
	*out = value & 1 ? -(int64_t)(value >> 1) : (int64_t)(value >> 1);
	return true;
}

static int location_table_line(struct ps_cursor *c, int32_t first_line, uint64_t offset,
                               int32_t *out)
{
	uint64_t start, end = 0;
	int64_t line = first_line;

	while (ps_cursor_left(c) > 0) {
		uint8_t first;
		unsigned kind;
		int64_t delta = 0;
		uint64_t ignored;
		bool ok = true;

		if (!next_u8(c, &first) || !(first & 0x80))
			return -EINVAL;
		kind = (first >> 3) & 15;
		start = end;
		end += ((uint64_t)(first & 7) + 1) * CODE_UNIT;
		switch (kind) {
		case LOCATION_NONE:
			break;
		case LOCATION_LONG:
			/* line delta, end line delta, columns */
			ok = read_signed_varint(c, &delta) && read_varint(c, &ignored) &&
			     read_varint(c, &ignored) && read_varint(c, &ignored);
			break;
		case LOCATION_NO_COLUMNS:
			ok = read_signed_varint(c, &delta);
			break;
		default:
			if (kind >= LOCATION_ONE_LINE0) {
				/* start and end column bytes */
				delta = kind - LOCATION_ONE_LINE0;
				ok = ps_cursor_skip(c, 2);
			} else {
				ok = ps_cursor_skip(c, 1); /* the column byte */
			}
			break;
		}
		if (!ok || !add_delta(&line, delta))
			return -EINVAL;
		if (offset >= start && offset < end) {
			if (kind == LOCATION_NONE)
				return 0;
			*out = (int32_t)line;
			return 1;
		}
	}
	return 0;
}

int ps_py_line_at(enum ps_py_line_format format, const uint8_t *table, size_t size,
                  int32_t first_line, uint64_t offset, int32_t *line)
{
	struct ps_cursor c = ps_cursor_make(table, size, false);

	switch (format) {
	case PS_PY_LINES_LNOTAB:
		return lnotab_line(&c, first_line, offset, line);
	case PS_PY_LINES_310:
		return linetable_310_line(&c, first_line, offset, line);
	case PS_PY_LINES_311:
		return location_table_line(&c, first_line, offset, line);
	}
	return -EINVAL;
}
