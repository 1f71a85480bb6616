/* PERF_RECORD_COMPRESSED: one zstd stream over many records, as perf
 * record -z writes it; records split across COMPRESSED records; offsets of
 * unpacked records; both delivery orders. */
#include "helpers.h"

#include <string.h>

#define ST_COMP (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

static void compressed_feature(struct cap *c)
{
	struct bld_buf *f = cap_feature(c, PS_FEAT_COMPRESSED);
	bld_u32(f, 1);
	bld_u32(f, 1);
	bld_u32(f, 1);
	bld_u32(f, 4);
	bld_u32(f, 528384);
}

static size_t comm(struct bld_buf *b, uint32_t pid, uint64_t time)
{
	struct bld_sid sid = { pid, pid, time, 0, 0, 0, 0 };
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, pid);
	bld_u32(b, pid);
	bld_str(b, "zcomm", 0);
	bld_sample_id(b, ST_COMP, &sid);
	bld_rec_end(b, pos);
	return pos;
}

static size_t sample(struct bld_buf *b, const struct bld_attr *a, uint64_t ip, uint64_t time)
{
	struct bld_sample s = bld_sample_empty();
	s.ip = ip;
	s.pid = s.tid = 9;
	s.time = time;
	s.period = 100;
	return bld_sample(b, a, 0, &s);
}

struct expect {
	uint32_t type;
	bool from_compressed;
	uint64_t offset;
	uint64_t key; /* sample ip, comm pid, compressed data size */
	uint16_t size;
};

static void check_events(struct cap *c, const struct expect *want, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		const struct ps_event *e = cap_next(c);
		ck_assert_msg(e->type == want[i].type,
		              "[%s] event %zu: type %u at offset 0x%llx, expected %u at 0x%llx",
		              variant_name(c->variant), i, e->type, (unsigned long long)e->offset,
		              want[i].type, (unsigned long long)want[i].offset);
		ck_assert_msg(e->from_compressed == want[i].from_compressed,
		              "[%s] event %zu: from_compressed %d", variant_name(c->variant), i,
		              e->from_compressed);
		ck_assert_msg(e->offset == want[i].offset,
		              "[%s] event %zu (type %u): offset 0x%llx, expected 0x%llx",
		              variant_name(c->variant), i, e->type, (unsigned long long)e->offset,
		              (unsigned long long)want[i].offset);
		ck_assert_uint_eq(e->size, want[i].size);
		if (e->type == PERF_RECORD_SAMPLE)
			ck_assert_uint_eq(e->u.sample.ip, want[i].key);
		else if (e->type == PERF_RECORD_COMM)
			ck_assert_uint_eq(e->u.comm.pid, want[i].key);
		else if (e->type == PS_RECORD_COMPRESSED)
			ck_assert_uint_eq(e->u.compressed.data_size, want[i].key);
	}
	cap_expect_end(c);
}

/* plain COMM | Z0: COMM, S(a), first half of S(b) | Z1: rest of S(b),
 * S(c) | Z2: COMM | plain S(d) */
struct zcapture {
	struct cap c;
	struct bld_attr attr;
	size_t plain0, plain1;
	size_t zpos[3], zsize[3];
	size_t inner_pos[5], inner_size[5];
	size_t inner_len;
};

static void build_zcapture(struct zcapture *z, int loop_index)
{
	struct bld_buf inner, *b;
	size_t cuts[2];

	memset(z, 0, sizeof(*z));
	z->attr = attr_basic(ST_COMP);
	cap_init(&z->c, loop_index);
	cap_attr(&z->c, &z->attr);
	compressed_feature(&z->c);
	b = cap_body(&z->c);

	bld_buf_init(&inner, z->c.be);
	z->inner_pos[0] = comm(&inner, 2, 5);
	z->inner_pos[1] = sample(&inner, &z->attr, 0xa, 30);
	z->inner_pos[2] = sample(&inner, &z->attr, 0xb, 10);
	z->inner_pos[3] = sample(&inner, &z->attr, 0xc, 20);
	z->inner_pos[4] = comm(&inner, 3, 40);
	for (int i = 0; i < 4; i++)
		z->inner_size[i] = z->inner_pos[i + 1] - z->inner_pos[i];
	z->inner_size[4] = inner.len - z->inner_pos[4];
	z->inner_len = inner.len;
	cuts[0] = z->inner_pos[2] + 12; /* inside S(b), past its header */
	cuts[1] = z->inner_pos[4];

	z->plain0 = comm(b, 1, 1);
	bld_compressed(b, inner.data, inner.len, cuts, 2, z->zpos);
	for (int i = 0; i < 2; i++)
		z->zsize[i] = z->zpos[i + 1] - z->zpos[i];
	z->plain1 = sample(b, &z->attr, 0xd, 50);
	z->zsize[2] = z->plain1 - z->zpos[2];
	bld_buf_free(&inner);
}

START_TEST(test_compressed_file_order)
{
	struct zcapture z;
	struct cap *c = &z.c;
	const struct ps_reader_stats *st;

	build_zcapture(&z, _i);
	cap_open(c, NULL);
	{
		uint64_t z0 = cap_offset(c, z.zpos[0]), z1 = cap_offset(c, z.zpos[1]),
		         z2 = cap_offset(c, z.zpos[2]);
		const struct expect want[] = {
			{ PERF_RECORD_COMM, false, cap_offset(c, z.plain0), 1,
			  (uint16_t)(z.zpos[0] - z.plain0) },
			{ PS_RECORD_COMPRESSED, false, z0, z.zsize[0] - 8, (uint16_t)z.zsize[0] },
			{ PERF_RECORD_COMM, true, z0, 2, (uint16_t)z.inner_size[0] },
			{ PERF_RECORD_SAMPLE, true, z0, 0xa, (uint16_t)z.inner_size[1] },
			{ PS_RECORD_COMPRESSED, false, z1, z.zsize[1] - 8, (uint16_t)z.zsize[1] },
			{ PERF_RECORD_SAMPLE, true, z1, 0xb, (uint16_t)z.inner_size[2] },
			{ PERF_RECORD_SAMPLE, true, z1, 0xc, (uint16_t)z.inner_size[3] },
			{ PS_RECORD_COMPRESSED, false, z2, z.zsize[2] - 8, (uint16_t)z.zsize[2] },
			{ PERF_RECORD_COMM, true, z2, 3, (uint16_t)z.inner_size[4] },
			{ PERF_RECORD_SAMPLE, false, cap_offset(c, z.plain1), 0xd,
			  (uint16_t)z.inner_size[1] },
		};
		check_events(c, want, sizeof(want) / sizeof(want[0]));
	}
	st = ps_reader_stats(c->reader);
	ck_assert_uint_eq(st->nr_decompressed_bytes, z.inner_len);
	ck_assert_uint_eq(st->nr_records[PS_RECORD_COMPRESSED], 3);
	ck_assert_uint_eq(st->nr_records[PERF_RECORD_SAMPLE], 4);
	ck_assert_uint_eq(st->nr_records[PERF_RECORD_COMM], 3);
	ck_assert(!st->damaged);
	cap_close(c);
}
END_TEST

START_TEST(test_compressed_time_order)
{
	struct zcapture z;
	struct cap *c = &z.c;
	struct ps_reader_opts o = opts_time();

	build_zcapture(&z, _i);
	cap_open(c, &o);
	{
		uint64_t z0 = cap_offset(c, z.zpos[0]), z1 = cap_offset(c, z.zpos[1]),
		         z2 = cap_offset(c, z.zpos[2]);
		/* no COMPRESSED records, all sorted at the end */
		const struct expect want[] = {
			{ PERF_RECORD_COMM, false, cap_offset(c, z.plain0), 1,
			  (uint16_t)(z.zpos[0] - z.plain0) },
			{ PERF_RECORD_COMM, true, z0, 2, (uint16_t)z.inner_size[0] },
			{ PERF_RECORD_SAMPLE, true, z1, 0xb, (uint16_t)z.inner_size[2] },
			{ PERF_RECORD_SAMPLE, true, z1, 0xc, (uint16_t)z.inner_size[3] },
			{ PERF_RECORD_SAMPLE, true, z0, 0xa, (uint16_t)z.inner_size[1] },
			{ PERF_RECORD_COMM, true, z2, 3, (uint16_t)z.inner_size[4] },
			{ PERF_RECORD_SAMPLE, false, cap_offset(c, z.plain1), 0xd,
			  (uint16_t)z.inner_size[1] },
		};
		check_events(c, want, sizeof(want) / sizeof(want[0]));
	}
	cap_close(c);
}
END_TEST

/* One record spread over four COMPRESSED records. */
START_TEST(test_compressed_record_over_four)
{
	struct bld_attr a = attr_basic(ST_COMP | PERF_SAMPLE_RAW);
	struct bld_sample s = bld_sample_empty();
	uint8_t raw[1020];
	struct bld_buf inner, *b;
	struct cap c;
	size_t cuts[3], zpos[4], pos;
	const struct ps_event *e;

	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i * 7);
	cap_init(&c, _i);
	cap_attr(&c, &a);
	compressed_feature(&c);
	b = cap_body(&c);
	bld_buf_init(&inner, c.be);
	s.ip = 0x1234;
	s.time = 1;
	s.raw_size = sizeof(raw);
	s.raw = raw;
	pos = bld_sample(&inner, &a, 0, &s);
	ck_assert_uint_eq(pos, 0);
	cuts[0] = 3; /* inside the header */
	cuts[1] = 300;
	cuts[2] = 900;
	bld_compressed(b, inner.data, inner.len, cuts, 3, zpos);
	cap_open(&c, NULL);
	for (int i = 0; i < 4; i++) {
		e = cap_next(&c);
		ck_assert_uint_eq(e->type, PS_RECORD_COMPRESSED);
		ck_assert_uint_eq(e->offset, cap_offset(&c, zpos[i]));
	}
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
	ck_assert(e->from_compressed);
	ck_assert_uint_eq(e->offset, cap_offset(&c, zpos[3]));
	ck_assert_uint_eq(e->size, inner.len);
	ck_assert_uint_eq(e->u.sample.ip, 0x1234);
	ck_assert_uint_eq(e->u.sample.raw_size, sizeof(raw));
	ck_assert_mem_eq(e->u.sample.raw, raw, sizeof(raw));
	cap_expect_end(&c);
	bld_buf_free(&inner);
	cap_close(&c);
}
END_TEST

/* Many records (well over 64 KiB unpacked), cut every 7000 bytes
 * regardless of record boundaries. */
START_TEST(test_compressed_many)
{
	enum { NR = 3000, CUT = 7000 };
	struct bld_attr a = attr_basic(ST_COMP | PERF_SAMPLE_CALLCHAIN);
	struct bld_buf inner, *b;
	struct cap c;
	uint64_t chain[8];
	size_t cuts[256], nr_cuts = 0;
	struct ps_reader_opts o = opts_time();
	const struct ps_event *e;

	cap_init(&c, _i);
	cap_attr(&c, &a);
	compressed_feature(&c);
	b = cap_body(&c);
	bld_buf_init(&inner, c.be);
	for (unsigned i = 0; i < NR; i++) {
		struct bld_sample s = bld_sample_empty();
		for (unsigned k = 0; k < 8; k++)
			chain[k] = 0x400000 + i * 16 + k;
		s.ip = 0x400000 + i;
		s.time = 1000 + i;
		s.callchain_nr = 8;
		s.callchain = chain;
		bld_sample(&inner, &a, 0, &s);
	}
	for (size_t at = CUT; at < inner.len && nr_cuts < 256; at += CUT)
		cuts[nr_cuts++] = at;
	bld_compressed(b, inner.data, inner.len, cuts, nr_cuts, NULL);
	cap_open(&c, &o);
	for (unsigned i = 0; i < NR; i++) {
		e = cap_next(&c);
		ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
		ck_assert_uint_eq(e->u.sample.ip, 0x400000 + i);
		ck_assert_uint_eq(e->u.sample.callchain_nr, 8);
		ck_assert_uint_eq(e->u.sample.callchain[7], 0x400000 + i * 16 + 7);
	}
	cap_expect_end(&c);
	ck_assert_uint_eq(ps_reader_stats(c.reader)->nr_decompressed_bytes, inner.len);
	bld_buf_free(&inner);
	cap_close(&c);
}
END_TEST

/* perf 6.12's COMPRESSED2 (the data's size, then padding to 8 bytes)
 * unpacks to the same records as COMPRESSED; the newer records a reader
 * of this version has no use for (BPF_METADATA, SCHEDSTAT_CPU,
 * SCHEDSTAT_DOMAIN) are counted and passed over, in the stream and inside
 * compressed data. */
START_TEST(test_compressed2_and_newer_records)
{
	struct bld_attr a = attr_basic(ST_COMP);
	struct bld_buf inner, *b;
	struct cap c;
	size_t cuts[3], pos[4];
	const struct ps_event *e;
	const struct ps_reader_stats *st;
	struct ps_reader_opts o = opts_time();

	cap_init(&c, _i);
	cap_attr(&c, &a);
	compressed_feature(&c);
	b = cap_body(&c);
	bld_buf_init(&inner, c.be);
	comm(&inner, 9, 1);
	sample(&inner, &a, 0x11, 30);
	pos[0] = bld_rec_begin(&inner, 84, 0); /* BPF_METADATA */
	bld_u64(&inner, 0);
	bld_zeros(&inner, 13); /* a size that is no multiple of 8 */
	bld_rec_end(&inner, pos[0]);
	sample(&inner, &a, 0x12, 10);
	sample(&inner, &a, 0x13, 20);
	cuts[0] = 5;
	cuts[1] = inner.len / 2 + 3;
	cuts[2] = inner.len - 7;
	bld_compressed_type(b, 83, inner.data, inner.len, cuts, 3, pos);
	for (int i = 0; i < 4; i++) {
		size_t end = i < 3 ? pos[i + 1] : b->len;

		ck_assert_uint_eq((end - pos[i]) % 8, 0);
	}
	pos[0] = bld_rec_begin(b, 85, 0); /* SCHEDSTAT_CPU */
	bld_zeros(b, 40);
	bld_rec_end(b, pos[0]);
	pos[0] = bld_rec_begin(b, 86, 0); /* SCHEDSTAT_DOMAIN */
	bld_zeros(b, 24);
	bld_rec_end(b, pos[0]);
	sample(b, &a, 0x14, 40);
	cap_open(&c, &o);
	for (unsigned i = 0; i < 4; i++) {
		static const uint64_t ips[] = { 0x12, 0x13, 0x11, 0x14 };

		e = cap_next(&c);
		while (e->type != PERF_RECORD_SAMPLE) {
			ck_assert_msg(e->type == PERF_RECORD_COMM || e->type == 84 ||
			                      e->type == 85 || e->type == 86,
			              "[%s] record type %u between the samples",
			              variant_name(c.variant), e->type);
			e = cap_next(&c);
		}
		ck_assert_uint_eq(e->u.sample.ip, ips[i]);
	}
	cap_expect_end(&c);
	st = ps_reader_stats(c.reader);
	ck_assert_uint_eq(st->nr_records[83], 4);
	ck_assert_uint_eq(st->nr_records[84], 1);
	ck_assert_uint_eq(st->nr_records[85], 1);
	ck_assert_uint_eq(st->nr_records[86], 1);
	ck_assert_uint_eq(st->nr_decompressed_bytes, inner.len);
	bld_buf_free(&inner);
	cap_close(&c);
}
END_TEST

Suite *suite_compressed(void)
{
	Suite *s = suite_create("compressed");
	TCase *tc = tcase_create("compressed");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_compressed_file_order, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_compressed_time_order, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_compressed_record_over_four, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_compressed_many, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_compressed2_and_newer_records, 0, NR_VARIANTS);
	suite_add_tcase(s, tc);
	return s;
}
