/* Synthetic perf.data builder: byte-order aware writers, records, attrs,
 * samples, file and pipe images, zstd-compressed records, and the plumbing
 * that hands an image to the reader (temporary file, memfd, pipe). */
#define _GNU_SOURCE
#include "builder.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

static void die(const char *what)
{
	fprintf(stderr, "builder: %s\n", what);
	abort();
}

/* ---- buffer ---------------------------------------------------------- */

void bld_buf_init(struct bld_buf *b, bool be)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->be = be;
}

void bld_buf_free(struct bld_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void bld_buf_reset(struct bld_buf *b)
{
	b->len = 0;
}

static uint8_t *reserve(struct bld_buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (!b->data)
			die("out of memory");
		b->cap = cap;
	}
	b->len += n;
	return b->data + b->len - n;
}

static void store(bool be, uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++) {
		unsigned shift = be ? 8 * (bytes - 1 - i) : 8 * i;
		p[i] = (uint8_t)(v >> shift);
	}
}

static uint64_t load(bool be, const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++) {
		unsigned shift = be ? 8 * (bytes - 1 - i) : 8 * i;
		v |= (uint64_t)p[i] << shift;
	}
	return v;
}

void bld_u8(struct bld_buf *b, uint8_t v)
{
	*reserve(b, 1) = v;
}

void bld_u16(struct bld_buf *b, uint16_t v)
{
	store(b->be, reserve(b, 2), v, 2);
}

void bld_u32(struct bld_buf *b, uint32_t v)
{
	store(b->be, reserve(b, 4), v, 4);
}

void bld_u64(struct bld_buf *b, uint64_t v)
{
	store(b->be, reserve(b, 8), v, 8);
}

void bld_bytes(struct bld_buf *b, const void *p, size_t n)
{
	uint8_t *at = reserve(b, n);
	if (p)
		memcpy(at, p, n);
	else
		memset(at, 0, n);
}

void bld_fill(struct bld_buf *b, uint8_t byte, size_t n)
{
	memset(reserve(b, n), byte, n);
}

void bld_zeros(struct bld_buf *b, size_t n)
{
	bld_fill(b, 0, n);
}

void bld_align(struct bld_buf *b, size_t align)
{
	while (b->len % align)
		bld_u8(b, 0);
}

void bld_str(struct bld_buf *b, const char *s, size_t field_len)
{
	size_t n = strlen(s) + 1;
	if (field_len == 0)
		field_len = (n + 7) & ~(size_t)7;
	if (field_len < n)
		die("string longer than its field");
	bld_bytes(b, s, n);
	bld_zeros(b, field_len - n);
}

void bld_header_string(struct bld_buf *b, const char *s)
{
	size_t len = (strlen(s) + 1 + 63) & ~(size_t)63;
	bld_u32(b, (uint32_t)len);
	bld_str(b, s, len);
}

void bld_put_u16(struct bld_buf *b, size_t pos, uint16_t v)
{
	store(b->be, b->data + pos, v, 2);
}

void bld_put_u32(struct bld_buf *b, size_t pos, uint32_t v)
{
	store(b->be, b->data + pos, v, 4);
}

void bld_put_u64(struct bld_buf *b, size_t pos, uint64_t v)
{
	store(b->be, b->data + pos, v, 8);
}

uint64_t bld_get_u64(const struct bld_buf *b, size_t pos)
{
	return load(b->be, b->data + pos, 8);
}

static uint8_t reverse_bits(uint8_t v)
{
	uint8_t r = 0;
	for (int i = 0; i < 8; i++)
		if (v & (1u << i))
			r |= (uint8_t)(0x80u >> i);
	return r;
}

/* The bitfield word as a big-endian machine stores it: bit n of the
 * little-endian word is in byte n / 8, counted from the byte's MSB. The
 * result is the u64 whose little-endian bytes are those bytes. */
uint64_t bld_bitfield_be(uint64_t flags_host)
{
	uint64_t out = 0;
	for (int i = 0; i < 8; i++) {
		uint8_t byte = (uint8_t)(flags_host >> (8 * i));
		out |= (uint64_t)reverse_bits(byte) << (8 * i);
	}
	return out;
}

/* ---- records ------------------------------------------------------------- */

size_t bld_rec_begin(struct bld_buf *b, uint32_t type, uint16_t misc)
{
	size_t start = b->len;
	bld_u32(b, type);
	bld_u16(b, misc);
	bld_u16(b, 0);
	return start;
}

void bld_rec_end(struct bld_buf *b, size_t start)
{
	size_t size = b->len - start;
	if (size > 0xffff)
		die("record larger than 64 KiB");
	bld_put_u16(b, start + 6, (uint16_t)size);
}

void bld_rec_set_size(struct bld_buf *b, size_t start, uint16_t size)
{
	bld_put_u16(b, start + 6, size);
}

static void attr_image(struct bld_buf *img, const struct bld_attr *a)
{
	bld_u32(img, a->type);
	bld_u32(img, a->size);
	bld_u64(img, a->config);
	bld_u64(img, a->sample_period);
	bld_u64(img, a->sample_type);
	bld_u64(img, a->read_format);
	{
		uint64_t flags = img->be ? bld_bitfield_be(a->flags) : a->flags;
		/* bytes in the order of the little-endian word, each
		 * already bit-reversed for big-endian */
		for (int i = 0; i < 8; i++)
			bld_u8(img, (uint8_t)(flags >> (8 * i)));
	}
	bld_u32(img, a->wakeup_events);
	bld_u32(img, a->bp_type);
	bld_u64(img, a->config1);
	/* 64: VER0 */
	bld_u64(img, a->config2);
	/* 72: VER1 */
	bld_u64(img, a->branch_sample_type);
	/* 80: VER2 */
	bld_u64(img, a->sample_regs_user);
	bld_u32(img, a->sample_stack_user);
	bld_u32(img, (uint32_t)a->clockid);
	/* 96: VER3 */
	bld_u64(img, a->sample_regs_intr);
	/* 104: VER4 */
	bld_u32(img, a->aux_watermark);
	bld_u16(img, a->sample_max_stack);
	bld_u16(img, 0);
	/* 112: VER5 */
	bld_u32(img, a->aux_sample_size);
	bld_u32(img, 0);
	/* 120: VER6 */
	bld_u64(img, a->sig_data);
	/* 128: VER7 */
	bld_u64(img, a->config3);
	/* 136: VER8 */
	if (img->len != BLD_ATTR_SIZE_KNOWN)
		die("attr image size");
}

void bld_attr_bytes(struct bld_buf *b, const struct bld_attr *attr)
{
	struct bld_buf img;
	size_t size = attr->size ? attr->size : 64;

	if (size < 64)
		die("attr smaller than 64 bytes");
	bld_buf_init(&img, b->be);
	attr_image(&img, attr);
	if (size <= BLD_ATTR_SIZE_KNOWN) {
		bld_bytes(b, img.data, size);
	} else {
		bld_bytes(b, img.data, BLD_ATTR_SIZE_KNOWN);
		bld_fill(b, attr->tail_fill, size - BLD_ATTR_SIZE_KNOWN);
	}
	bld_buf_free(&img);
}

struct bld_attr bld_attr_visible(const struct bld_attr *attr)
{
	struct bld_attr v = *attr;
	size_t size = attr->size ? attr->size : 64;

#define FIT(field, end)                                                                            \
	do {                                                                                       \
		if (size < (end))                                                                  \
			v.field = 0;                                                               \
	} while (0)
	FIT(config2, 72);
	FIT(branch_sample_type, 80);
	FIT(sample_regs_user, 88);
	FIT(sample_stack_user, 92);
	FIT(clockid, 96);
	FIT(sample_regs_intr, 104);
	FIT(aux_watermark, 108);
	FIT(sample_max_stack, 110);
	FIT(aux_sample_size, 116);
	FIT(sig_data, 128);
	FIT(config3, 136);
#undef FIT
	return v;
}

void bld_sample_id(struct bld_buf *b, uint64_t st, const struct bld_sid *sid)
{
	if (st & PERF_SAMPLE_TID) {
		bld_u32(b, sid->pid);
		bld_u32(b, sid->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		bld_u64(b, sid->time);
	if (st & PERF_SAMPLE_ID)
		bld_u64(b, sid->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		bld_u64(b, sid->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		bld_u32(b, sid->cpu);
		bld_u32(b, sid->res);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		bld_u64(b, sid->id);
}

size_t bld_sample_id_size(uint64_t st)
{
	size_t n = 0;
	if (st & PERF_SAMPLE_TID)
		n += 8;
	if (st & PERF_SAMPLE_TIME)
		n += 8;
	if (st & PERF_SAMPLE_ID)
		n += 8;
	if (st & PERF_SAMPLE_STREAM_ID)
		n += 8;
	if (st & PERF_SAMPLE_CPU)
		n += 8;
	if (st & PERF_SAMPLE_IDENTIFIER)
		n += 8;
	return n;
}

struct bld_sample bld_sample_empty(void)
{
	struct bld_sample s;
	memset(&s, 0, sizeof(s));
	s.read_nr = 1;
	s.regs_user_nr = SIZE_MAX;
	s.regs_intr_nr = SIZE_MAX;
	return s;
}

static void read_values(struct bld_buf *b, uint64_t rf, const struct bld_sample *s)
{
	static const struct bld_read_value zero;
	if (rf & PERF_FORMAT_GROUP) {
		bld_u64(b, s->read_nr_field ? s->read_nr_field : s->read_nr);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			bld_u64(b, s->time_enabled);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			bld_u64(b, s->time_running);
		for (uint64_t i = 0; i < s->read_nr; i++) {
			const struct bld_read_value *v =
			        s->read_values ? &s->read_values[i] : &zero;
			bld_u64(b, v->value);
			if (rf & PERF_FORMAT_ID)
				bld_u64(b, v->id);
			if (rf & PERF_FORMAT_LOST)
				bld_u64(b, v->lost);
		}
	} else {
		const struct bld_read_value *v = s->read_values ? &s->read_values[0] : &zero;
		bld_u64(b, v->value);
		if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
			bld_u64(b, s->time_enabled);
		if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
			bld_u64(b, s->time_running);
		if (rf & PERF_FORMAT_ID)
			bld_u64(b, v->id);
		if (rf & PERF_FORMAT_LOST)
			bld_u64(b, v->lost);
	}
}

static void regs(struct bld_buf *b, uint64_t abi, uint64_t mask, size_t nr, const uint64_t *values)
{
	bld_u64(b, abi);
	if (!abi)
		return;
	if (nr == SIZE_MAX)
		nr = (size_t)__builtin_popcountll(mask);
	for (size_t i = 0; i < nr; i++)
		bld_u64(b, values ? values[i] : 0);
}

size_t bld_sample(struct bld_buf *b, const struct bld_attr *attr, uint16_t misc,
                  const struct bld_sample *s)
{
	uint64_t st = attr->sample_type;
	size_t start = bld_rec_begin(b, PERF_RECORD_SAMPLE, misc);

	if (st & PERF_SAMPLE_IDENTIFIER)
		bld_u64(b, s->identifier);
	if (st & PERF_SAMPLE_IP)
		bld_u64(b, s->ip);
	if (st & PERF_SAMPLE_TID) {
		bld_u32(b, s->pid);
		bld_u32(b, s->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		bld_u64(b, s->time);
	if (st & PERF_SAMPLE_ADDR)
		bld_u64(b, s->addr);
	if (st & PERF_SAMPLE_ID)
		bld_u64(b, s->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		bld_u64(b, s->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		bld_u32(b, s->cpu);
		bld_u32(b, s->cpu_res);
	}
	if (st & PERF_SAMPLE_PERIOD)
		bld_u64(b, s->period);
	if (st & PERF_SAMPLE_READ)
		read_values(b, attr->read_format, s);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		bld_u64(b, s->callchain_nr_field ? s->callchain_nr_field : s->callchain_nr);
		for (uint64_t i = 0; i < s->callchain_nr; i++)
			bld_u64(b, s->callchain ? s->callchain[i] : 0);
	}
	if (st & PERF_SAMPLE_RAW) {
		bld_u32(b, s->raw_size);
		bld_bytes(b, s->raw, s->raw_len ? s->raw_len : s->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		bld_u64(b, s->branch_nr_field ? s->branch_nr_field : s->branch_nr);
		if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			bld_u64(b, s->branch_hw_idx);
		for (uint64_t i = 0; i < s->branch_nr; i++) {
			bld_u64(b, s->branches[i].from);
			bld_u64(b, s->branches[i].to);
			bld_u64(b, s->branches[i].flags);
		}
	}
	if (st & PERF_SAMPLE_REGS_USER)
		regs(b, s->regs_user_abi, attr->sample_regs_user, s->regs_user_nr, s->regs_user);
	if (st & PERF_SAMPLE_STACK_USER) {
		bld_u64(b, s->stack_size);
		if (s->stack_size || s->stack_len) {
			bld_bytes(b, s->stack, s->stack_len ? s->stack_len : s->stack_size);
			bld_u64(b, s->stack_dyn_size);
		}
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		bld_u64(b, s->weight);
	if (st & PERF_SAMPLE_DATA_SRC)
		bld_u64(b, s->data_src);
	if (st & PERF_SAMPLE_TRANSACTION)
		bld_u64(b, s->transaction);
	if (st & PERF_SAMPLE_REGS_INTR)
		regs(b, s->regs_intr_abi, attr->sample_regs_intr, s->regs_intr_nr, s->regs_intr);
	if (st & PERF_SAMPLE_PHYS_ADDR)
		bld_u64(b, s->phys_addr);
	if (st & PERF_SAMPLE_CGROUP)
		bld_u64(b, s->cgroup);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		bld_u64(b, s->data_page_size);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		bld_u64(b, s->code_page_size);
	if (st & PERF_SAMPLE_AUX) {
		bld_u64(b, s->aux_size);
		bld_bytes(b, s->aux, s->aux_size);
	}
	bld_rec_end(b, start);
	return start;
}

/* ---- file mode ------------------------------------------------------------- */

void bld_file_init(struct bld_file *f, bool be)
{
	memset(f, 0, sizeof(*f));
	f->be = be;
	bld_buf_init(&f->data, be);
	for (unsigned i = 0; i < BLD_NR_FEATURES; i++)
		bld_buf_init(&f->features[i], be);
}

void bld_file_free(struct bld_file *f)
{
	bld_buf_free(&f->data);
	for (unsigned i = 0; i < BLD_NR_FEATURES; i++)
		bld_buf_free(&f->features[i]);
}

void bld_file_add_attr(struct bld_file *f, const struct bld_attr *attr)
{
	if (f->nr_attrs == BLD_MAX_ATTRS)
		die("too many attrs");
	f->attrs[f->nr_attrs++] = *attr;
}

struct bld_buf *bld_file_feature(struct bld_file *f, unsigned bit)
{
	if (bit >= BLD_NR_FEATURES)
		die("feature bit");
	f->has_feature[bit] = true;
	return &f->features[bit];
}

static size_t attr_bytes(const struct bld_attr *a)
{
	return a->size ? a->size : 64;
}

uint64_t bld_file_data_offset(const struct bld_file *f)
{
	uint64_t off = BLD_FILE_HEADER_SIZE;
	for (size_t i = 0; i < f->nr_attrs; i++)
		off += attr_bytes(&f->attrs[i]) + 16 + 8 * f->attrs[i].nr_ids;
	return off;
}

void bld_file_assemble(const struct bld_file *f, struct bld_buf *out, struct bld_layout *layout)
{
	struct bld_layout l;
	uint64_t off, features[4] = { 0, 0, 0, 0 };
	unsigned nr_features = 0;

	memset(&l, 0, sizeof(l));
	bld_buf_init(out, f->be);

	l.attrs_offset = BLD_FILE_HEADER_SIZE;
	off = l.attrs_offset;
	for (size_t i = 0; i < f->nr_attrs; i++)
		off += attr_bytes(&f->attrs[i]) + 16;
	l.attrs_size = off - l.attrs_offset;
	for (size_t i = 0; i < f->nr_attrs; i++) {
		l.ids_offset[i] = off;
		off += 8 * f->attrs[i].nr_ids;
	}
	l.data_offset = off;
	l.data_size = f->data.len;
	l.features_offset = l.data_offset + l.data_size;
	for (unsigned bit = 0; bit < BLD_NR_FEATURES; bit++) {
		if (f->has_feature[bit]) {
			features[bit / 64] |= 1ULL << (bit % 64);
			nr_features++;
		}
	}
	off = l.features_offset + 16 * (uint64_t)nr_features;
	for (unsigned bit = 0; bit < BLD_NR_FEATURES; bit++) {
		if (f->has_feature[bit]) {
			l.feature_offset[bit] = off;
			off += f->features[bit].len;
		}
	}
	l.total = off;

	/* header */
	bld_u64(out, 0x32454c4946524550ULL); /* "PERFILE2" */
	bld_u64(out, BLD_FILE_HEADER_SIZE);
	bld_u64(out, f->attr_size ? f->attr_size
	                          : (f->nr_attrs ? attr_bytes(&f->attrs[0]) + 16 : 64 + 16));
	bld_u64(out, l.attrs_offset);
	bld_u64(out, l.attrs_size);
	bld_u64(out, l.data_offset);
	bld_u64(out, l.data_size);
	bld_u64(out, 0); /* event_types */
	bld_u64(out, 0);
	for (int i = 0; i < 4; i++)
		bld_u64(out, features[i]);

	/* attrs: attr, then its ids section */
	for (size_t i = 0; i < f->nr_attrs; i++) {
		bld_attr_bytes(out, &f->attrs[i]);
		bld_u64(out, l.ids_offset[i]);
		bld_u64(out, 8 * f->attrs[i].nr_ids);
	}
	for (size_t i = 0; i < f->nr_attrs; i++)
		for (size_t j = 0; j < f->attrs[i].nr_ids; j++)
			bld_u64(out, f->attrs[i].ids[j]);
	if (out->len != l.data_offset)
		die("layout: data offset");
	bld_bytes(out, f->data.data, f->data.len);

	/* feature table, then the sections */
	for (unsigned bit = 0; bit < BLD_NR_FEATURES; bit++) {
		if (f->has_feature[bit]) {
			bld_u64(out, l.feature_offset[bit]);
			bld_u64(out, f->features[bit].len);
		}
	}
	for (unsigned bit = 0; bit < BLD_NR_FEATURES; bit++)
		if (f->has_feature[bit])
			bld_bytes(out, f->features[bit].data, f->features[bit].len);
	if (out->len != l.total)
		die("layout: total");
	if (layout)
		*layout = l;
}

/* ---- pipe mode -------------------------------------------------------------- */

void bld_pipe_header(struct bld_buf *b)
{
	bld_u64(b, 0x32454c4946524550ULL);
	bld_u64(b, BLD_PIPE_HEADER_SIZE);
}

size_t bld_pipe_attr(struct bld_buf *b, const struct bld_attr *attr)
{
	size_t start = bld_rec_begin(b, 64, 0);
	bld_attr_bytes(b, attr);
	for (size_t i = 0; i < attr->nr_ids; i++)
		bld_u64(b, attr->ids[i]);
	bld_rec_end(b, start);
	return start;
}

size_t bld_pipe_feature(struct bld_buf *b, uint64_t feat_id, const struct bld_buf *data)
{
	size_t start = bld_rec_begin(b, 80, 0);
	bld_u64(b, feat_id);
	if (data)
		bld_bytes(b, data->data, data->len);
	bld_rec_end(b, start);
	return start;
}

/* ---- payloads ------------------------------------------------------------------ */

static const char header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";

static const char header_event[] = "# compressed entry header\n"
                                   "\ttype_len    :    5 bits\n"
                                   "\ttime_delta  :   27 bits\n"
                                   "\tarray       :   32 bits\n"
                                   "\n"
                                   "\tpadding     : type == 29\n"
                                   "\ttime_extend : type == 30\n"
                                   "\ttime_stamp : type == 31\n"
                                   "\tdata max type_len  == 28\n";

void bld_tracing_data(struct bld_buf *b, uint32_t trace_id)
{
	char format[1024];
	int n;

	n = snprintf(format, sizeof(format),
	             "name: probe\n"
	             "ID: %u\n"
	             "format:\n"
	             "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	             "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	             "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	             "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	             "\n"
	             "\tfield:int value;\toffset:8;\tsize:4;\tsigned:1;\n"
	             "\n"
	             "print fmt: \"value=%%d\", REC->value\n",
	             trace_id);
	if (n <= 0 || (size_t)n >= sizeof(format))
		die("tracing format");

	bld_bytes(b, "\x17\x08\x44tracing", 10);
	bld_bytes(b, "0.6", 4);
	bld_u8(b, b->be ? 1 : 0);
	bld_u8(b, 8); /* long size */
	bld_u32(b, 4096); /* page size */
	bld_bytes(b, "header_page", 12);
	bld_u64(b, sizeof(header_page) - 1);
	bld_bytes(b, header_page, sizeof(header_page) - 1);
	bld_bytes(b, "header_event", 13);
	bld_u64(b, sizeof(header_event) - 1);
	bld_bytes(b, header_event, sizeof(header_event) - 1);
	bld_u32(b, 0); /* ftrace formats */
	bld_u32(b, 1); /* systems */
	bld_bytes(b, "pystitch", 9);
	bld_u32(b, 1); /* events in the system */
	bld_u64(b, (uint64_t)n);
	bld_bytes(b, format, (size_t)n);
	bld_u32(b, 0); /* kallsyms */
	bld_u32(b, 0); /* printk formats */
	bld_u64(b, 0); /* saved cmdlines */
}

void bld_compressed(struct bld_buf *out, const uint8_t *src, size_t len, const size_t *cuts,
                    size_t nr_cuts, size_t *rec_pos)
{
	bld_compressed_type(out, 81, src, len, cuts, nr_cuts, rec_pos);
}

void bld_compressed_type(struct bld_buf *out, uint32_t type, const uint8_t *src, size_t len,
                         const size_t *cuts, size_t nr_cuts, size_t *rec_pos)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	size_t prev = 0;

	if (!cctx)
		die("ZSTD_createCCtx");
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
	for (size_t i = 0; i <= nr_cuts; i++) {
		size_t end = i < nr_cuts ? cuts[i] : len;
		size_t cap = ZSTD_compressBound(end - prev) + 4096;
		uint8_t *tmp = malloc(cap);
		ZSTD_inBuffer in = { src + prev, end - prev, 0 };
		ZSTD_outBuffer ob = { tmp, cap, 0 };
		size_t left, start;

		if (!tmp || end < prev || end > len)
			die("bld_compressed: cuts");
		do {
			left = ZSTD_compressStream2(cctx, &ob, &in, ZSTD_e_flush);
			if (ZSTD_isError(left))
				die(ZSTD_getErrorName(left));
		} while (left != 0);
		start = bld_rec_begin(out, type, 0);
		if (type == 83) {
			/* COMPRESSED2 (perf 6.12): the data's size, then the data,
			 * the record padded to 8 bytes */
			bld_u64(out, ob.pos);
			bld_bytes(out, tmp, ob.pos);
			bld_zeros(out, (8 - ob.pos % 8) % 8);
		} else {
			bld_bytes(out, tmp, ob.pos);
		}
		bld_rec_end(out, start);
		if (rec_pos)
			rec_pos[i] = start;
		free(tmp);
		prev = end;
	}
	ZSTD_freeCCtx(cctx);
}

/* ---- handing images to the reader ------------------------------------------------ */

static void write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

char *bld_write_temp(const struct bld_buf *b)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	if (asprintf(&path, "%s/pystitch-test-XXXXXX", dir) < 0)
		die("asprintf");
	fd = mkstemp(path);
	if (fd < 0)
		die("mkstemp");
	write_all(fd, b->data, b->len);
	close(fd);
	return path;
}

int bld_memfd(const struct bld_buf *b)
{
	int fd = memfd_create("pystitch-test", 0);
	if (fd < 0)
		die("memfd_create");
	write_all(fd, b->data, b->len);
	if (lseek(fd, 0, SEEK_SET) != 0)
		die("lseek");
	return fd;
}

int bld_pipe(const struct bld_buf *b, pid_t *writer)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) < 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* the test framework's handlers are inherited; a writer must
		 * not run them */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		close(fds[0]);
		write_all(fds[1], b->data, b->len);
		close(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	*writer = pid;
	return fds[0];
}

void bld_pipe_reap(pid_t writer)
{
	int status;
	if (writer <= 0)
		return;
	/* the reader may stop before the end: the writer may be blocked */
	kill(writer, SIGKILL);
	while (waitpid(writer, &status, 0) < 0 && errno == EINTR)
		;
}
