/* A DWARF line table (.debug_line, versions 2 to 5) decoded the way bfd
 * 2.40's decode_line_info does, so that addr2line's answers can be
 * reproduced: per-sequence rows where a later row at the same address
 * replaces the earlier one, sequences sorted and trimmed, and bfd's file
 * numbering (in DWARF 5 a row of a sequence that never set its file is
 * credited to file entry 0, not to the initial file register 1). */
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

#define LINE_ROWS_MAX (64u << 20) /* a bound on damaged input */

/* shared with addr2line.c (symbols_priv.h) */
bool ps_dwarf_read_uleb(struct ps_cursor *c, uint64_t *out)
{
	uint64_t value = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t byte = ps_cursor_u8(c);

		if (!ps_cursor_ok(c))
			return false;
		if (shift < 64)
			value |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			break;
	}
	*out = value;
	return true;
}

static bool read_sleb(struct ps_cursor *c, int64_t *out)
{
	uint64_t value = 0;
	unsigned shift = 0;
	uint8_t byte;

	do {
		byte = ps_cursor_u8(c);
		if (!ps_cursor_ok(c))
			return false;
		if (shift < 64)
			value |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (shift < 64 && (byte & 0x40))
		value |= ~(uint64_t)0 << shift;
	*out = (int64_t)value;
	return true;
}

static uint64_t read_sized(struct ps_cursor *c, size_t size)
{
	switch (size) {
	case 1:
		return ps_cursor_u8(c);
	case 2:
		return ps_cursor_u16(c);
	case 4:
		return ps_cursor_u32(c);
	case 8:
		return ps_cursor_u64(c);
	default:
		ps_cursor_skip(c, size);
		return 0;
	}
}

struct line_state {
	uint64_t address;
	uint64_t file;
	int64_t line;
	unsigned op_index;
	bool file_set; /* DW_LNS_set_file seen in this sequence */
	size_t seq_first; /* first row of the open sequence */
	bool unsorted;
};

static void reset_state(struct line_state *st, size_t first)
{
	memset(st, 0, sizeof(*st));
	st->file = 1;
	st->line = 1;
	st->seq_first = first;
}

static int compare_rows(const void *pa, const void *pb)
{
	const struct ps_line_row *a = pa, *b = pb;

	if (a->end_sequence != b->end_sequence)
		return a->end_sequence ? 1 : -1;
	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return 0;
}

/* add_line_info: a row at the address of the previous one replaces it. */
static int add_row(struct ps_line_table *t, struct line_state *st, int version, bool end)
{
	struct ps_line_row row = { .address = st->address,
		                   .line = (uint32_t)st->line,
		                   .end_sequence = end };
	size_t count = t->nr_rows - st->seq_first;

	uint32_t file; /* bfd's is an unsigned int */

	if (version >= 5) {
		file = st->file_set ? (uint32_t)st->file : 0;
		row.file_valid = true;
	} else {
		file = (uint32_t)st->file;
		row.file_valid = st->file != 0;
	}
	/* a larger entry than the row holds is past any file list a
	 * section can hold, as is PS_LINE_FILE_MAX */
	row.file = file < PS_LINE_FILE_MAX ? file : PS_LINE_FILE_MAX;
	if (count > 0) {
		struct ps_line_row *last = &t->rows[t->nr_rows - 1];

		if (last->address == row.address && last->end_sequence == end) {
			*last = row;
			return 0;
		}
		if (row.address < last->address && !end)
			st->unsorted = true;
	}
	if (t->nr_rows >= LINE_ROWS_MAX)
		return -EINVAL;
	if (!ps_array_reserve((void **)&t->rows, &t->cap_rows, t->nr_rows + 1, sizeof(*t->rows),
	                      64))
		return -ENOMEM;
	t->rows[t->nr_rows++] = row;
	return 0;
}

static int end_sequence(struct ps_line_table *t, struct line_state *st)
{
	size_t first = st->seq_first, count = t->nr_rows - first;
	uint64_t low = UINT64_MAX;

	if (st->unsorted && count > 1)
		qsort(&t->rows[first], count, sizeof(*t->rows), compare_rows);
	for (size_t i = first; i < t->nr_rows; i++)
		if (t->rows[i].address < low)
			low = t->rows[i].address;
	if (!ps_array_reserve((void **)&t->seqs, &t->cap_seqs, t->nr_seqs + 1, sizeof(*t->seqs),
	                      64))
		return -ENOMEM;
	t->seqs[t->nr_seqs++] = (struct ps_line_sequence){
		.low = low, .high = t->rows[t->nr_rows - 1].address, .first = first, .count = count
	};
	return 0;
}

static int run_program(struct ps_line_table *t, struct ps_cursor *c, int version,
                       uint8_t address_size, uint8_t min_inst, uint8_t max_ops, int8_t line_base,
                       uint8_t line_range, uint8_t opcode_base, const uint8_t *opcode_lengths)
{
	struct line_state st;
	int rc = 0;

	reset_state(&st, t->nr_rows);
	if (max_ops == 0)
		max_ops = 1;
	while (ps_cursor_left(c) > 0 && rc == 0) {
		uint8_t op = ps_cursor_u8(c);
		uint64_t value;
		int64_t svalue;

		if (op >= opcode_base) {
			unsigned adj = op - opcode_base;

			if (line_range == 0)
				return -EINVAL;
			st.address +=
			        (uint64_t)((st.op_index + adj / line_range) / max_ops) * min_inst;
			st.op_index = (st.op_index + adj / line_range) % max_ops;
			st.line += line_base + (int)(adj % line_range);
			rc = add_row(t, &st, version, false);
			continue;
		}
		switch (op) {
		case 0: { /* extended */
			uint64_t len;
			uint8_t sub;

			if (!ps_dwarf_read_uleb(c, &len) || len == 0 || len > ps_cursor_left(c))
				return -EINVAL;
			sub = ps_cursor_u8(c);
			switch (sub) {
			case 1: /* DW_LNE_end_sequence */
				rc = add_row(t, &st, version, true);
				if (rc == 0)
					rc = end_sequence(t, &st);
				reset_state(&st, t->nr_rows);
				break;
			case 2: /* DW_LNE_set_address */
				st.address = read_sized(c, len - 1 == address_size ? address_size
				                                                   : len - 1);
				st.op_index = 0;
				break;
			case 3: /* DW_LNE_define_file: name, dir, mtime, length */
				if (!ps_cursor_string(c, ps_cursor_left(c), false) ||
				    !ps_dwarf_read_uleb(c, &value) ||
				    !ps_dwarf_read_uleb(c, &value) ||
				    !ps_dwarf_read_uleb(c, &value))
					return -EINVAL;
				break;
			case 4: /* DW_LNE_set_discriminator */
				if (!ps_dwarf_read_uleb(c, &value))
					return -EINVAL;
				break;
			case 0x80: /* DW_LNE_HP_source_file_correlation */
				ps_cursor_skip(c, len - 1);
				break;
			default: /* bfd: "mangled line number section" */
				return -EINVAL;
			}
			break;
		}
		case 1: /* DW_LNS_copy */
			rc = add_row(t, &st, version, false);
			break;
		case 2: /* DW_LNS_advance_pc */
			if (!ps_dwarf_read_uleb(c, &value))
				return -EINVAL;
			st.address += (st.op_index + value) / max_ops * min_inst;
			st.op_index = (unsigned)((st.op_index + value) % max_ops);
			break;
		case 3: /* DW_LNS_advance_line */
			if (!read_sleb(c, &svalue))
				return -EINVAL;
			st.line += svalue;
			break;
		case 4: /* DW_LNS_set_file */
			if (!ps_dwarf_read_uleb(c, &st.file))
				return -EINVAL;
			st.file_set = true;
			break;
		case 5: /* DW_LNS_set_column */
			if (!ps_dwarf_read_uleb(c, &value))
				return -EINVAL;
			break;
		case 6: /* DW_LNS_negate_stmt */
		case 7: /* DW_LNS_set_basic_block */
			break;
		case 8: /* DW_LNS_const_add_pc */
			if (line_range == 0)
				return -EINVAL;
			value = (255u - opcode_base) / line_range;
			st.address += (st.op_index + value) / max_ops * min_inst;
			st.op_index = (unsigned)((st.op_index + value) % max_ops);
			break;
		case 9: /* DW_LNS_fixed_advance_pc */
			st.address += ps_cursor_u16(c);
			st.op_index = 0;
			break;
		default: /* unknown standard opcode: skip its operands */
			for (unsigned i = 0; i < opcode_lengths[op - 1]; i++)
				if (!ps_dwarf_read_uleb(c, &value))
					return -EINVAL;
			break;
		}
		if (!ps_cursor_ok(c))
			return -EINVAL;
	}
	return rc;
}

static int compare_seqs(const void *pa, const void *pb)
{
	const struct ps_line_sequence *a = pa, *b = pb;

	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	if (a->high != b->high)
		return a->high > b->high ? -1 : 1; /* the largest region first */
	return a->first < b->first ? -1 : a->first > b->first;
}

/* sort_line_sequences: sorted by start, overlaps trimmed, nested dropped. */
static void sort_sequences(struct ps_line_table *t)
{
	size_t kept = 1;
	uint64_t last_high;

	if (t->nr_seqs == 0)
		return;
	qsort(t->seqs, t->nr_seqs, sizeof(*t->seqs), compare_seqs);
	last_high = t->seqs[0].high;
	for (size_t n = 1; n < t->nr_seqs; n++) {
		struct ps_line_sequence seq = t->seqs[n];

		if (seq.low < last_high) {
			if (seq.high <= last_high)
				continue;
			seq.low = last_high;
		}
		last_high = seq.high;
		t->seqs[kept++] = seq;
	}
	t->nr_seqs = kept;
}

int ps_line_table_read(struct ps_cursor debug_line, uint64_t offset, uint8_t address_size,
                       struct ps_line_table *out)
{
	struct ps_cursor c = debug_line, program;
	uint64_t unit_length, header_length;
	const uint8_t *header_start, *opcode_lengths;
	bool dwarf64 = false;
	uint8_t min_inst, max_ops = 1, line_range, opcode_base;
	int8_t line_base;
	uint16_t version;
	int rc;

	memset(out, 0, sizeof(*out));
	if (offset > ps_cursor_left(&c) || !ps_cursor_skip(&c, (size_t)offset))
		return -EINVAL;
	unit_length = ps_cursor_u32(&c);
	if (unit_length == 0xffffffff) {
		dwarf64 = true;
		unit_length = ps_cursor_u64(&c);
	}
	if (!ps_cursor_ok(&c) || unit_length > ps_cursor_left(&c))
		return -EINVAL;
	c.end = c.p + unit_length;
	version = ps_cursor_u16(&c);
	if (version < 2 || version > 5)
		return -EINVAL;
	if (version >= 5) {
		address_size = ps_cursor_u8(&c);
		ps_cursor_u8(&c); /* segment selector size */
	}
	header_length = dwarf64 ? ps_cursor_u64(&c) : ps_cursor_u32(&c);
	header_start = c.p;
	min_inst = ps_cursor_u8(&c);
	if (version >= 4)
		max_ops = ps_cursor_u8(&c);
	ps_cursor_u8(&c); /* default_is_stmt: bfd keeps every row */
	line_base = (int8_t)ps_cursor_u8(&c);
	line_range = ps_cursor_u8(&c);
	opcode_base = ps_cursor_u8(&c);
	opcode_lengths = opcode_base ? ps_cursor_take(&c, opcode_base - 1u) : NULL;
	if (!ps_cursor_ok(&c) || opcode_base == 0 || !header_start ||
	    header_length > (uint64_t)(c.end - header_start))
		return -EINVAL;
	program = ps_cursor_make(header_start + header_length,
	                         (size_t)(c.end - header_start - header_length), c.swap);
	rc = run_program(out, &program, version, address_size, min_inst, max_ops, line_base,
	                 line_range, opcode_base, opcode_lengths);
	if (rc < 0) {
		ps_line_table_release(out);
		return rc;
	}
	sort_sequences(out);
	return 0;
}

void ps_line_table_release(struct ps_line_table *table)
{
	free(table->rows);
	free(table->seqs);
	memset(table, 0, sizeof(*table));
}

const struct ps_line_row *ps_line_table_find(const struct ps_line_table *t, uint64_t addr)
{
	size_t low = 0, high = t->nr_seqs;
	const struct ps_line_sequence *seq = NULL;
	const struct ps_line_row *rows;

	while (low < high) {
		size_t mid = low + (high - low) / 2;
		const struct ps_line_sequence *s = &t->seqs[mid];

		if (addr < s->low) {
			high = mid;
		} else if (addr >= s->high) {
			low = mid + 1;
		} else {
			seq = s;
			break;
		}
	}
	if (!seq || seq->count < 2)
		return NULL;
	rows = &t->rows[seq->first];
	low = 0;
	high = seq->count - 1;
	/* the row i with rows[i].address <= addr < rows[i + 1].address */
	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (addr < rows[mid].address)
			high = mid;
		else if (addr >= rows[mid + 1].address)
			low = mid + 1;
		else
			return rows[mid].end_sequence ? NULL : &rows[mid];
	}
	return NULL;
}

bool ps_line_table_covers(const struct ps_line_table *t, uint64_t addr)
{
	for (size_t i = 0; i < t->nr_seqs; i++)
		if (addr >= t->rows[t->seqs[i].first].address && addr < t->seqs[i].high)
			return true;
	return false;
}
