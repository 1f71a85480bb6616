/* PERF_RECORD_SAMPLE decoding (the layout fixed by sample_type), read
 * values, and the sample_id trailer of other records. Arrays are converted
 * to host order into the reader's scratch buffers, reused record to record.
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <string.h>

#include "base/cursor.h"
#include "reader/perf_format_priv.h"

/* A damaged sample, failing at the field the cursor is at. */
static int sample_fail(struct ps_reader *r, uint64_t offset, const struct ps_cursor *c,
                       const char *what)
{
	return ps_reader_fail_at(r, -EINVAL, offset + ps_cursor_pos(c), PERF_RECORD_SAMPLE, "%s",
	                         what);
}

int ps_read_values_parse(struct ps_reader *r, struct ps_cursor *c, uint64_t read_format,
                         struct ps_read_data *out)
{
	uint64_t nr = 1;
	size_t per_value = 8;
	struct ps_read_value *values;

	memset(out, 0, sizeof(*out));
	uint64_t first = 0;
	if (read_format & PERF_FORMAT_GROUP)
		nr = ps_cursor_u64(c);
	else
		first = ps_cursor_u64(c);
	if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
		out->time_enabled = ps_cursor_u64(c);
	if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
		out->time_running = ps_cursor_u64(c);
	per_value += (read_format & PERF_FORMAT_ID) ? 8 : 0;
	per_value += (read_format & PERF_FORMAT_LOST) ? 8 : 0;
	if (!(read_format & PERF_FORMAT_GROUP))
		per_value -= 8;
	if (!ps_cursor_ok(c) || (per_value && nr > ps_cursor_left(c) / per_value)) {
		c->failed = true;
		return -EINVAL;
	}
	values = ps_scratch_get(&r->scratch_read, (size_t)(nr ? nr : 1) * sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (uint64_t i = 0; i < nr; i++) {
		/* in the non-group layout the id and lost follow the times */
		values[i].value = (read_format & PERF_FORMAT_GROUP) ? ps_cursor_u64(c) : first;
		values[i].id = (read_format & PERF_FORMAT_ID) ? ps_cursor_u64(c) : 0;
		values[i].lost = (read_format & PERF_FORMAT_LOST) ? ps_cursor_u64(c) : 0;
	}
	out->nr = (size_t)nr;
	out->values = values;
	return 0;
}

/* Registers: one u64 per bit of the attr's mask when abi != 0. */
static int parse_regs(struct ps_reader *r, struct ps_cursor *c, uint64_t mask,
                      struct ps_scratch *scratch, struct ps_regs *out)
{
	memset(out, 0, sizeof(*out));
	out->abi = ps_cursor_u64(c);
	if (!out->abi)
		return 0;
	size_t nr = (size_t)__builtin_popcountll(mask);
	int err = ps_scratch_read_u64s(scratch, c, nr, 1, &out->regs);
	if (err)
		return err;
	out->mask = mask;
	out->nr = nr;
	return 0;
}

int ps_sample_parse(struct ps_reader *r, const struct ps_attr *attr, const uint8_t *raw,
                    size_t size, uint64_t offset, struct ps_sample *s)
{
	struct ps_cursor c = ps_cursor_make(raw + 8, size - 8, r->swap);
	uint64_t t = attr->sample_type;
	int err;

	offset += 8;
	memset(s, 0, sizeof(*s));
	s->sample_type = t;
	s->cpu = UINT32_MAX;
	s->pid = s->tid = UINT32_MAX;
	s->time = UINT64_MAX;
	/* perf's evsel__parse_sample(): without PERF_SAMPLE_PERIOD (perf
	 * record -c N) every sample's period is the attr's sample_period */
	s->period = attr->sample_period;

	if (t & PERF_SAMPLE_IDENTIFIER)
		s->identifier = s->id = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_TID) {
		s->pid = ps_cursor_u32(&c);
		s->tid = ps_cursor_u32(&c);
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_ADDR)
		s->addr = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_ID)
		s->id = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		s->stream_id = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_CPU) {
		s->cpu = ps_cursor_u32(&c);
		s->cpu_res = ps_cursor_u32(&c);
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = ps_cursor_u64(&c);
	if (!ps_cursor_ok(&c))
		return sample_fail(r, offset, &c, "truncated in its fixed fields");

	if (t & PERF_SAMPLE_READ) {
		err = ps_read_values_parse(r, &c, attr->read_format, &s->read);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		if (err)
			return sample_fail(r, offset, &c, "read values run past the record");
	}
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = ps_cursor_u64(&c);
		err = ps_scratch_read_u64s(&r->scratch_callchain, &c, nr, 1, &s->callchain);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		if (err)
			return ps_reader_fail_at(
			        r, -EINVAL, offset + ps_cursor_pos(&c) - 8, PERF_RECORD_SAMPLE,
			        "callchain of %" PRIu64 " entries runs past the record", nr);
		s->callchain_nr = (size_t)nr;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t raw_size = ps_cursor_u32(&c);
		const uint8_t *data = ps_cursor_take(&c, raw_size);
		if (!data)
			return ps_reader_fail_at(
			        r, -EINVAL, offset + ps_cursor_pos(&c), PERF_RECORD_SAMPLE,
			        "raw data of %u bytes runs past the record", raw_size);
		s->raw_size = raw_size;
		s->raw = data;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = ps_cursor_u64(&c);
		if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
			s->has_branch_hw_idx = true;
			s->branch_hw_idx = ps_cursor_u64(&c);
		}
		if (!ps_cursor_ok(&c) || nr > ps_cursor_left(&c) / 24)
			return sample_fail(r, offset, &c, "branch stack runs past the record");
		struct ps_branch_entry *b =
		        ps_scratch_get(&r->scratch_branch, (size_t)(nr ? nr : 1) * sizeof(*b));
		if (!b)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		for (uint64_t i = 0; i < nr; i++) {
			b[i].from = ps_cursor_u64(&c);
			b[i].to = ps_cursor_u64(&c);
			b[i].flags = ps_cursor_u64(&c);
		}
		s->branch_nr = (size_t)nr;
		s->branches = b;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		err = parse_regs(r, &c, attr->sample_regs_user, &r->scratch_regs_user,
		                 &s->regs_user);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		if (err || !ps_cursor_ok(&c))
			return sample_fail(r, offset, &c, "user registers run past the record");
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		s->stack_size = ps_cursor_u64(&c);
		if (s->stack_size) {
			s->stack_data = ps_cursor_take(&c, (size_t)s->stack_size);
			if (!s->stack_data || s->stack_size > SIZE_MAX)
				return ps_reader_fail_at(
				        r, -EINVAL, offset + ps_cursor_pos(&c), PERF_RECORD_SAMPLE,
				        "user stack of %" PRIu64 " bytes runs past the record",
				        s->stack_size);
			s->stack_dyn_size = ps_cursor_u64(&c);
			if (!ps_cursor_ok(&c))
				return sample_fail(r, offset, &c, "user stack size field missing");
			if (s->stack_dyn_size > s->stack_size)
				return ps_reader_fail_at(r, -EINVAL, offset + ps_cursor_pos(&c) - 8,
				                         PERF_RECORD_SAMPLE,
				                         "user stack dyn_size %" PRIu64
				                         " larger than its size %" PRIu64,
				                         s->stack_dyn_size, s->stack_size);
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		uint64_t w = ps_cursor_u64(&c);
		if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
			/* {u32 var1_dw; u16 var2_w; u16 var3_w} packed in a u64 */
			s->weight = (uint32_t)w;
			s->weight_var2 = (uint16_t)(w >> 32);
			s->weight_var3 = (uint16_t)(w >> 48);
		} else {
			s->weight = w;
		}
	}
	if (t & PERF_SAMPLE_DATA_SRC)
		s->data_src = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_TRANSACTION)
		s->transaction = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_REGS_INTR) {
		err = parse_regs(r, &c, attr->sample_regs_intr, &r->scratch_regs_intr,
		                 &s->regs_intr);
		if (err == -ENOMEM)
			return ps_reader_fail(r, err, "out of memory");
		if (err || !ps_cursor_ok(&c))
			return sample_fail(r, offset, &c,
			                   "interrupt registers run past the record");
	}
	if (t & PERF_SAMPLE_PHYS_ADDR)
		s->phys_addr = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_CGROUP)
		s->cgroup = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = ps_cursor_u64(&c);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = ps_cursor_u64(&c);
	if (!ps_cursor_ok(&c))
		return sample_fail(r, offset, &c, "truncated");
	if (t & PERF_SAMPLE_AUX) {
		s->aux_size = ps_cursor_u64(&c);
		s->aux_data =
		        ps_cursor_take(&c, s->aux_size > SIZE_MAX ? SIZE_MAX : (size_t)s->aux_size);
		if (!s->aux_data)
			return sample_fail(r, offset, &c, "aux data runs past the record");
	}
	return 0;
}

int ps_sample_id_parse(struct ps_reader *r, const struct ps_attr *attr, const uint8_t *raw,
                       size_t size, uint64_t offset, uint32_t type, struct ps_sample_id *out)
{
	uint64_t t;
	size_t pos;

	memset(out, 0, sizeof(*out));
	if (!attr || !(attr->flags & PS_ATTR_SAMPLE_ID_ALL))
		return 0;
	if (attr->id_hdr_size > size - 8)
		return ps_reader_fail_at(
		        r, -EINVAL, offset, type,
		        "record of %zu bytes too small for its %zu-byte sample_id trailer", size,
		        attr->id_hdr_size);
	t = attr->sample_type;
	pos = size - attr->id_hdr_size;
	struct ps_cursor c = ps_cursor_make(raw + pos, attr->id_hdr_size, r->swap);
	/* the trailer holds the fields in sample order */
	if (t & PERF_SAMPLE_TID) {
		out->has_tid = true;
		out->pid = ps_cursor_u32(&c);
		out->tid = ps_cursor_u32(&c);
	}
	if (t & PERF_SAMPLE_TIME) {
		out->has_time = true;
		out->time = ps_cursor_u64(&c);
	}
	if (t & PERF_SAMPLE_ID) {
		out->has_id = true;
		out->id = ps_cursor_u64(&c);
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		out->has_stream_id = true;
		out->stream_id = ps_cursor_u64(&c);
	}
	if (t & PERF_SAMPLE_CPU) {
		out->has_cpu = true;
		out->cpu = ps_cursor_u32(&c);
		ps_cursor_u32(&c);
	}
	if (t & PERF_SAMPLE_IDENTIFIER) {
		out->has_id = true;
		out->id = ps_cursor_u64(&c);
	}
	return 0;
}

/* The timestamp perf orders a record by, or UINT64_MAX when it has none.
 * Reads only what it needs; a record too short for it has none. */
uint64_t ps_record_timestamp(const struct ps_reader *r, const uint8_t *raw, size_t size)
{
	struct ps_cursor record = ps_cursor_make(raw, size, r->swap);
	uint32_t type;
	const struct ps_attr *attr;
	uint64_t v;

	if (!ps_cursor_peek_u32(&record, 0, &type) || type >= PS_RECORD_HEADER_ATTR)
		return UINT64_MAX;
	if (type == PERF_RECORD_SAMPLE) {
		attr = ps_attr_for_sample(r, raw, size);
		if (!attr || !(attr->sample_type & PERF_SAMPLE_TIME))
			return UINT64_MAX;
		uint64_t t = attr->sample_type;
		size_t pos = 8 + 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) +
		                      !!(t & PERF_SAMPLE_TID));
		return ps_cursor_peek_u64(&record, pos, &v) ? v : UINT64_MAX;
	}
	attr = ps_attr_for_trailer(r, raw, size);
	if (!attr || !(attr->flags & PS_ATTR_SAMPLE_ID_ALL) ||
	    !(attr->sample_type & PERF_SAMPLE_TIME) || attr->id_hdr_size > size - 8)
		return UINT64_MAX;
	size_t pos = size - attr->id_hdr_size + ((attr->sample_type & PERF_SAMPLE_TID) ? 8 : 0);
	return ps_cursor_peek_u64(&record, pos, &v) ? v : UINT64_MAX;
}
