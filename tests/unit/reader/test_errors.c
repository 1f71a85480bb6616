/* Every way a capture can be damaged: each must fail with a negative errno
 * and a message naming the input, the offset ("offset 0x...") and the
 * record type, or, with .force, stop cleanly after the last good record. */
#define _GNU_SOURCE
#include "helpers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ST_ERR (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

/* Open and read everything; the first negative result, or 0. */
static int open_and_drain(struct cap *c, const struct ps_reader_opts *o, size_t *nr_events)
{
	int rc = cap_open_rc(c, o);
	if (nr_events)
		*nr_events = 0;
	if (rc < 0)
		return rc;
	return cap_drain(c, nr_events);
}

static void expect_failure(struct cap *c, int rc, const struct off_range *ranges, size_t nr_ranges,
                           int type, const char *phrases)
{
	ck_assert_msg(rc < 0, "[%s] expected a failure, got %d", variant_name(c->variant), rc);
	ck_assert_msg(rc > -4096, "[%s] %d is not a negative errno", variant_name(c->variant), rc);
	cap_check_error(c, ranges, nr_ranges, type, phrases);
}

static size_t comm(struct bld_buf *b, uint32_t pid, uint64_t time)
{
	struct bld_sid sid = { pid, pid, time, 0, 0, 0, 0 };
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, pid);
	bld_u32(b, pid);
	bld_str(b, "ok", 0);
	bld_sample_id(b, ST_ERR, &sid);
	bld_rec_end(b, pos);
	return pos;
}

/* A capture with one attr and two good COMM records in its body. */
static struct bld_buf *good_start(struct cap *c, int loop_index, const struct bld_attr *attr)
{
	struct bld_attr a = attr ? *attr : attr_basic(ST_ERR);
	struct bld_buf *b;

	cap_init(c, loop_index);
	cap_attr(c, &a);
	b = cap_body(c);
	comm(b, 1, 1);
	comm(b, 2, 2);
	return b;
}

/* ---- file header ------------------------------------------------------- */

static char open_error[512];

static void keep_error(void *ctx, enum ps_log_level level, const char *msg)
{
	(void)ctx;
	if (level == PS_LOG_ERROR)
		snprintf(open_error, sizeof(open_error), "%s", msg);
}

START_TEST(test_missing_file)
{
	struct ps_reader *r = (struct ps_reader *)&r; /* anything but NULL */
	struct ps_reader_opts o = opts_default();
	const char *path = "/nonexistent-dir-pystitch/perf.data";
	int rc;

	o.log = keep_error;
	open_error[0] = '\0';
	rc = ps_reader_open(path, &o, &r);
	ck_assert_int_eq(rc, -ENOENT);
	/* no handle to close, and the log was told why */
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(open_error, path));
	ck_assert_ptr_nonnull(strstr(open_error, "cannot open"));
}
END_TEST

/* Options with sz 0 used to be taken as "no options"; any size smaller than
 * the sz field, or unknown options past the struct, fail the open. */
START_TEST(test_bad_options)
{
	struct {
		struct ps_reader_opts known;
		uint64_t unknown;
	} newer;
	struct ps_reader_opts o = opts_default();
	struct ps_reader *r = NULL;

	o.log = keep_error;
	o.sz = 0;
	open_error[0] = '\0';
	ck_assert_int_eq(ps_reader_open("/dev/null", &o, &r), -EINVAL);
	ck_assert_ptr_null(r);
	/* too small to hold the log: nobody to tell */
	ck_assert_str_eq(open_error, "");
	memset(&newer, 0, sizeof(newer));
	newer.known = opts_default();
	newer.known.sz = sizeof(newer);
	newer.known.log = keep_error;
	newer.unknown = 1;
	ck_assert_int_eq(ps_reader_open("/dev/null", &newer.known, &r), -EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(open_error, "options"));
	/* zero past the known fields: taken (and /dev/null is no capture) */
	newer.unknown = 0;
	ck_assert_int_eq(ps_reader_open("/dev/null", &newer.known, &r), -EINVAL);
	ck_assert_ptr_nonnull(strstr(open_error, "/dev/null"));
}
END_TEST

START_TEST(test_empty_file)
{
	struct cap c;
	int rc;

	cap_init(&c, _i);
	cap_assemble(&c);
	c.image.len = 0;
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc, RANGES(AT(0)), NO_TYPE,
	               "header|truncat|short|empty|end of file|eof");
	cap_close(&c);
}
END_TEST

/* _i: 0 file LE, 1 file BE, 2 pipe LE, 3 pipe BE */
START_TEST(test_truncated_header)
{
	struct cap c;
	size_t keep;
	int rc;

	cap_init(&c, _i);
	cap_assemble(&c);
	keep = c.pipe ? 12 : 50;
	c.image.len = keep;
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc, RANGES(WITHIN(0, keep + 1)), NO_TYPE,
	               "header|truncat|short|end of file|eof");
	cap_close(&c);
}
END_TEST

START_TEST(test_bad_magic)
{
	struct cap c;
	int rc;

	cap_init(&c, _i);
	cap_assemble(&c);
	memcpy(c.image.data, "NOTPERF!", 8);
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc, RANGES(AT(0)), NO_TYPE, "magic");
	cap_close(&c);
}
END_TEST

/* _i: 0/1 LE/BE attr_size 8, 2/3 LE/BE attr_size 1 MiB */
START_TEST(test_attr_size_bad)
{
	struct cap c;
	int rc;

	good_start(&c, _i & 1, NULL);
	cap_assemble(&c);
	bld_put_u64(&c.image, BLD_HDR_ATTR_SIZE, _i < 2 ? 8 : 1 << 20);
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc, RANGES(AT(0), AT(BLD_HDR_ATTR_SIZE), AT(c.layout.attrs_offset)),
	               NO_TYPE, "attr");
	cap_close(&c);
}
END_TEST

/* attr.size larger than the attrs-section entry holding it. */
START_TEST(test_attr_size_over_entry)
{
	struct cap c;
	struct bld_attr a = attr_basic(ST_ERR);
	int rc;

	a.size = 136;
	cap_init(&c, _i);
	cap_attr(&c, &a);
	c.file.attr_size = 96 + 16;
	cap_assemble(&c);
	/* the single attr entry is 152 bytes; claim 112 per entry and one
	 * entry in all */
	bld_put_u64(&c.image, BLD_HDR_ATTRS + 8, 96 + 16);
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc,
	               RANGES(AT(0), AT(BLD_HDR_ATTR_SIZE), AT(BLD_HDR_ATTRS),
	                      WITHIN(c.layout.attrs_offset, 136 + 16)),
	               NO_TYPE, "attr");
	cap_close(&c);
}
END_TEST

START_TEST(test_attrs_out_of_file)
{
	struct cap c;
	int rc;

	good_start(&c, _i, NULL);
	cap_assemble(&c);
	bld_put_u64(&c.image, BLD_HDR_ATTRS, 1ULL << 40);
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc, RANGES(AT(0), AT(BLD_HDR_ATTRS), AT(1ULL << 40)), NO_TYPE, "attr");
	cap_close(&c);
}
END_TEST

/* An ids section that points outside the file. */
START_TEST(test_ids_out_of_file)
{
	static const uint64_t ids[] = { 1, 2 };
	struct bld_attr a = attr_basic(ST_ERR);
	struct cap c;
	int rc;

	a.ids = ids;
	a.nr_ids = 2;
	good_start(&c, _i, &a);
	cap_assemble(&c);
	/* the ids section follows the 128-byte attr of the first entry */
	bld_put_u64(&c.image, c.layout.attrs_offset + 128, 1ULL << 40);
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc,
	               RANGES(AT(0), WITHIN(c.layout.attrs_offset, 128 + 16), AT(1ULL << 40)),
	               NO_TYPE, "id");
	cap_close(&c);
}
END_TEST

START_TEST(test_data_past_eof)
{
	struct cap c;
	int rc;

	good_start(&c, _i, NULL);
	cap_assemble(&c);
	bld_put_u64(&c.image, BLD_HDR_DATA, 1ULL << 40);
	rc = open_and_drain(&c, NULL, NULL);
	expect_failure(&c, rc, RANGES(AT(0), AT(BLD_HDR_DATA), AT(1ULL << 40)), NO_TYPE, "data");
	cap_close(&c);
}
END_TEST

/* A feature section that points outside the file: perf refuses the file;
 * skipping the feature is acceptable too, reading garbage is not. */
START_TEST(test_feature_out_of_file)
{
	struct cap c;
	int rc;

	good_start(&c, _i, NULL);
	cap_assemble(&c);
	/* the table's only entry: HOSTNAME */
	bld_put_u64(&c.image, c.layout.features_offset, 1ULL << 40);
	rc = open_and_drain(&c, NULL, NULL);
	if (rc < 0)
		expect_failure(&c, rc, RANGES(WITHIN(c.layout.features_offset, 16), AT(1ULL << 40)),
		               NO_TYPE, "feature|hostname");
	else
		ck_assert_ptr_null(ps_reader_features(c.reader)->hostname);
	cap_close(&c);
}
END_TEST

/* ---- record framing ------------------------------------------------------- */

/* _i: variant; size 4 */
static void run_small_size(int loop_index, uint16_t size)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, loop_index, NULL);
	size_t pos, nr;
	int rc;

	pos = comm(b, 3, 3);
	bld_rec_set_size(b, pos, size);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 8)), PERF_RECORD_COMM, "size");
	cap_close(&c);
}

START_TEST(test_record_size_4)
{
	run_small_size(_i, 4);
}
END_TEST

START_TEST(test_record_size_0)
{
	run_small_size(_i, 0);
}
END_TEST

/* A record whose size runs past the data section (the feature table that
 * follows is still in the file). */
START_TEST(test_record_past_data_end)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	size_t pos, end, nr;
	int rc;

	pos = comm(b, 3, 3);
	end = b->len;
	bld_rec_set_size(b, pos, (uint16_t)(b->len - pos + 64));
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), end - pos)), PERF_RECORD_COMM,
	               "size|data|end|truncat|past|beyond|exceed|outside");
	cap_close(&c);
}
END_TEST

/* The input ends inside the last record: an error, or with .force a clean
 * stop after the good records. _i / 2: cut inside the header or the body. */
static void build_truncated_tail(struct cap *c, int loop_index, bool in_header, size_t *pos)
{
	struct bld_buf *b;

	cap_init(c, loop_index);
	/* no features: nothing follows the data section */
	c->file.has_feature[PS_FEAT_HOSTNAME] = false;
	{
		struct bld_attr a = attr_basic(ST_ERR);
		cap_attr(c, &a);
	}
	b = cap_body(c);
	comm(b, 1, 1);
	comm(b, 2, 2);
	*pos = comm(b, 3, 3);
	cap_assemble(c);
	c->image.len -= b->len - *pos - (in_header ? 5 : 20);
}

START_TEST(test_truncated_tail)
{
	struct cap c;
	size_t pos, nr;
	int rc;

	build_truncated_tail(&c, _i % NR_VARIANTS, _i >= NR_VARIANTS, &pos);
	rc = open_and_drain(&c, NULL, &nr);
	/* without force, a file-mode reader may also refuse the data section
	 * as a whole when it opens the file */
	if (c.pipe)
		expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 40)), NO_TYPE,
		               "truncat|short|end|eof|past|beyond|exceed");
	else
		expect_failure(&c, rc,
		               RANGES(WITHIN(cap_offset(&c, pos), 40), AT(BLD_HDR_DATA),
		                      AT(c.layout.data_offset), AT(c.image.len)),
		               NO_TYPE, "truncat|short|end|eof|past|beyond|exceed");
	cap_close(&c);
}
END_TEST

START_TEST(test_truncated_tail_force)
{
	struct cap c;
	struct ps_reader_opts o = opts_force();
	const struct ps_reader_stats *st;
	size_t pos, nr;
	int rc;

	build_truncated_tail(&c, _i % NR_VARIANTS, _i >= NR_VARIANTS, &pos);
	rc = open_and_drain(&c, &o, &nr);
	ck_assert_msg(rc == 0, "[%s] with force: %d (%s)", variant_name(c.variant), rc,
	              ps_reader_errmsg(c.reader));
	ck_assert_uint_eq(nr, 2);
	st = ps_reader_stats(c.reader);
	ck_assert(st->damaged);
	ck_assert_uint_eq(st->damaged_offset, cap_offset(&c, pos));
	cap_close(&c);
}
END_TEST

/* The same with the time order: the queued records still come out. */
START_TEST(test_truncated_tail_force_time_order)
{
	struct cap c;
	struct ps_reader_opts o = opts_force();
	size_t pos, nr;
	int rc;

	o.order = PS_ORDER_TIME;
	build_truncated_tail(&c, _i, false, &pos);
	rc = open_and_drain(&c, &o, &nr);
	ck_assert_msg(rc == 0, "[%s] with force: %d (%s)", variant_name(c.variant), rc,
	              ps_reader_errmsg(c.reader));
	ck_assert_uint_eq(nr, 2);
	ck_assert(ps_reader_stats(c.reader)->damaged);
	cap_close(&c);
}
END_TEST

static size_t unknown_record(struct bld_buf *b)
{
	size_t pos = bld_rec_begin(b, 0x1234, 0);
	bld_u64(b, 0);
	bld_rec_end(b, pos);
	return pos;
}

START_TEST(test_unknown_type)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	size_t pos, nr;
	int rc;

	pos = unknown_record(b);
	comm(b, 4, 4);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 16)), NO_TYPE,
	               "unknown|type|4660|0x1234");
	cap_close(&c);
}
END_TEST

struct log_count {
	unsigned warnings;
	char last[512];
};

static void count_log(void *ctx, enum ps_log_level level, const char *msg)
{
	struct log_count *l = ctx;
	if (level == PS_LOG_WARN) {
		l->warnings++;
		snprintf(l->last, sizeof(l->last), "%s", msg);
	}
}

START_TEST(test_unknown_type_force)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	struct ps_reader_opts o = opts_force();
	struct log_count log = { 0, "" };
	const struct ps_reader_stats *st;
	size_t pos, nr;
	int rc;

	o.log = count_log;
	o.log_ctx = &log;

	pos = unknown_record(b);
	comm(b, 4, 4);
	rc = open_and_drain(&c, &o, &nr);
	ck_assert_msg(rc == 0, "[%s] with force: %d (%s)", variant_name(c.variant), rc,
	              ps_reader_errmsg(c.reader));
	ck_assert_uint_eq(nr, 2);
	st = ps_reader_stats(c.reader);
	ck_assert(st->damaged);
	ck_assert_uint_eq(st->damaged_offset, cap_offset(&c, pos));
	/* the stop is logged as a warning that says where */
	ck_assert_uint_ge(log.warnings, 1);
	check_msg(log.last, NULL, RANGES(WITHIN(cap_offset(&c, pos), 16)), NO_TYPE, NULL);
	cap_close(&c);
}
END_TEST

/* ---- hostile counts in samples ----------------------------------------------- */

static void run_bad_sample(int loop_index, const struct bld_attr *a, const struct bld_sample *s,
                           const char *phrases)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, loop_index, a);
	size_t pos, end, nr;
	int rc;

	pos = bld_sample(b, a, 0, s);
	end = b->len;
	comm(b, 5, 5);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), end - pos + 1)),
	               PERF_RECORD_SAMPLE, phrases);
	cap_close(&c);
}

START_TEST(test_callchain_nr_huge)
{
	static const uint64_t chain[] = { 1, 2, 3 };
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_CALLCHAIN);
	struct bld_sample s = bld_sample_empty();
	s.callchain_nr = 3;
	s.callchain = chain;
	s.callchain_nr_field = 1ULL << 60;
	run_bad_sample(_i, &a, &s, "callchain");
}
END_TEST

START_TEST(test_callchain_nr_past_record)
{
	static const uint64_t chain[] = { 1, 2, 3 };
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_CALLCHAIN);
	struct bld_sample s = bld_sample_empty();
	s.callchain_nr = 3;
	s.callchain = chain;
	s.callchain_nr_field = 4;
	run_bad_sample(_i, &a, &s, "callchain");
}
END_TEST

START_TEST(test_read_group_nr_huge)
{
	static const struct bld_read_value v[] = { { 1, 2, 3 } };
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_READ);
	struct bld_sample s = bld_sample_empty();
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	s.read_nr = 1;
	s.read_values = v;
	s.read_nr_field = 1ULL << 58;
	run_bad_sample(_i, &a, &s, "read|group");
}
END_TEST

START_TEST(test_branch_nr_huge)
{
	static const struct bld_branch br[] = { { 1, 2, 3 } };
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_BRANCH_STACK);
	struct bld_sample s = bld_sample_empty();
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	s.branch_nr = 1;
	s.branches = br;
	s.branch_nr_field = 1ULL << 59;
	run_bad_sample(_i, &a, &s, "branch");
}
END_TEST

/* A mask of 64 registers in a record that holds two. */
START_TEST(test_regs_mask_past_record)
{
	static const uint64_t regs[] = { 1, 2 };
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_REGS_USER);
	struct bld_sample s = bld_sample_empty();
	a.sample_regs_user = ~0ULL;
	s.regs_user_abi = 2;
	s.regs_user_nr = 2;
	s.regs_user = regs;
	run_bad_sample(_i, &a, &s, "reg");
}
END_TEST

START_TEST(test_regs_intr_mask_past_record)
{
	static const uint64_t regs[] = { 1 };
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_REGS_INTR);
	struct bld_sample s = bld_sample_empty();
	a.sample_regs_intr = 0xffff;
	s.regs_intr_abi = 2;
	s.regs_intr_nr = 1;
	s.regs_intr = regs;
	run_bad_sample(_i, &a, &s, "reg");
}
END_TEST

/* STACK_USER size beyond the record. */
START_TEST(test_stack_size_past_record)
{
	static const uint8_t stack[64];
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_STACK_USER);
	struct bld_sample s = bld_sample_empty();
	a.sample_stack_user = 8192;
	s.stack_size = 8192;
	s.stack_len = sizeof(stack);
	s.stack = stack;
	s.stack_dyn_size = 64;
	run_bad_sample(_i, &a, &s, "stack");
}
END_TEST

START_TEST(test_raw_size_past_record)
{
	static const uint8_t raw[12];
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_RAW);
	struct bld_sample s = bld_sample_empty();
	s.raw_size = 0x10000;
	s.raw_len = sizeof(raw);
	s.raw = raw;
	run_bad_sample(_i, &a, &s, "raw");
}
END_TEST

START_TEST(test_aux_size_past_record)
{
	static const uint8_t aux[8];
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_AUX);
	struct bld_sample s = bld_sample_empty();
	s.aux_size = 8;
	s.aux = aux;
	{
		struct cap c;
		struct bld_buf *b = good_start(&c, _i, &a);
		size_t pos, nr;
		int rc;

		pos = bld_sample(b, &a, 0, &s);
		/* claim 4096 bytes of aux data */
		bld_put_u64(b, b->len - 16, 4096);
		rc = open_and_drain(&c, NULL, &nr);
		ck_assert_uint_eq(nr, 2);
		expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), b->len - pos)),
		               PERF_RECORD_SAMPLE, "aux");
		cap_close(&c);
	}
}
END_TEST

/* A sample shorter than its sample_type needs. */
START_TEST(test_sample_short)
{
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_ADDR);
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, &a);
	size_t pos, end, nr;
	int rc;

	pos = bld_sample(b, &a, 0, &s);
	/* drop the last 16 bytes (ADDR and PERIOD) */
	b->len -= 16;
	bld_rec_end(b, pos);
	end = b->len;
	comm(b, 5, 5);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), end - pos + 1)),
	               PERF_RECORD_SAMPLE, NULL);
	cap_close(&c);
}
END_TEST

/* dyn_size larger than size: an error (perf: "user stack dump failure")
 * or, if delivered, never more valid bytes than reserved. */
START_TEST(test_stack_dyn_size_over_size)
{
	static const uint8_t stack[64];
	struct bld_attr a = attr_basic(ST_ERR | PERF_SAMPLE_STACK_USER);
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, &a);
	const struct ps_event *e;
	size_t pos;
	int rc;

	s.stack_size = sizeof(stack);
	s.stack = stack;
	s.stack_dyn_size = 4096;
	pos = bld_sample(b, &a, 0, &s);
	cap_open(&c, NULL);
	cap_next(&c);
	cap_next(&c);
	rc = ps_reader_next(c.reader, &e);
	if (rc < 0) {
		cap_check_error(&c, RANGES(WITHIN(cap_offset(&c, pos), b->len - pos)),
		                PERF_RECORD_SAMPLE, "stack");
	} else {
		ck_assert_int_eq(rc, 1);
		ck_assert_uint_le(e->u.sample.stack_dyn_size, e->u.sample.stack_size);
	}
	cap_close(&c);
}
END_TEST

/* ---- hostile counts in other records --------------------------------------------- */

static void run_bad_record(int loop_index, uint32_t type, const uint64_t *words, size_t nr_words,
                           const char *phrases)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, loop_index, NULL);
	size_t pos, end, nr;
	int rc;

	pos = bld_rec_begin(b, type, 0);
	for (size_t i = 0; i < nr_words; i++)
		bld_u64(b, words[i]);
	bld_rec_end(b, pos);
	end = b->len;
	comm(b, 5, 5);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), end - pos)), (int)type, phrases);
	cap_close(&c);
}

START_TEST(test_id_index_nr_huge)
{
	const uint64_t words[] = { 1ULL << 62, 1, 0, 0, 0 };
	run_bad_record(_i, PS_RECORD_ID_INDEX, words, 5, NULL);
}
END_TEST

START_TEST(test_thread_map_nr_huge)
{
	const uint64_t words[] = { 1ULL << 61, 1, 0, 0 };
	run_bad_record(_i, PS_RECORD_THREAD_MAP, words, 4, NULL);
}
END_TEST

START_TEST(test_cpu_map_nr_past_record)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	size_t pos, nr;
	int rc;

	pos = bld_rec_begin(b, PS_RECORD_CPU_MAP, 0);
	bld_u16(b, 0); /* cpu list */
	bld_u16(b, 60000); /* entries */
	bld_u16(b, 1);
	bld_u16(b, 2);
	bld_rec_end(b, pos);
	comm(b, 5, 5);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 16)), PS_RECORD_CPU_MAP, NULL);
	cap_close(&c);
}
END_TEST

START_TEST(test_text_poke_len_past_record)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	struct bld_sid sid = { 1, 1, 9, 0, 0, 0, 0 };
	size_t pos, nr;
	int rc;

	pos = bld_rec_begin(b, PERF_RECORD_TEXT_POKE, 0);
	bld_u64(b, 0xffffffff81000000ULL);
	bld_u16(b, 4000);
	bld_u16(b, 4000);
	bld_zeros(b, 4);
	bld_sample_id(b, ST_ERR, &sid);
	bld_rec_end(b, pos);
	comm(b, 5, 5);
	rc = open_and_drain(&c, NULL, &nr);
	ck_assert_uint_eq(nr, 2);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 40)), PERF_RECORD_TEXT_POKE,
	               NULL);
	cap_close(&c);
}
END_TEST

/* NAMESPACES: nr_namespaces is reported as recorded, the decoded entries
 * are bounded by the record. */
START_TEST(test_namespaces_nr_bounded)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	struct bld_sid sid = { 1, 1, 9, 0, 0, 0, 0 };
	const struct ps_event *e;
	size_t pos;

	pos = bld_rec_begin(b, PERF_RECORD_NAMESPACES, 0);
	bld_u32(b, 1);
	bld_u32(b, 1);
	bld_u64(b, 1ULL << 40);
	bld_u64(b, 4);
	bld_u64(b, 0xf0000001ULL);
	bld_sample_id(b, ST_ERR, &sid);
	bld_rec_end(b, pos);
	cap_open(&c, NULL);
	cap_next(&c);
	cap_next(&c);
	{
		const struct ps_event *ev;
		int rc = ps_reader_next(c.reader, &ev);
		if (rc < 0) {
			/* refusing it is acceptable too */
			cap_check_error(&c, RANGES(WITHIN(cap_offset(&c, pos), b->len - pos)),
			                PERF_RECORD_NAMESPACES, NULL);
			cap_close(&c);
			return;
		}
		ck_assert_int_eq(rc, 1);
		e = ev;
	}
	ck_assert_uint_eq(e->type, PERF_RECORD_NAMESPACES);
	ck_assert_uint_eq(e->u.namespaces.nr_namespaces, 1ULL << 40);
	ck_assert_uint_le(e->u.namespaces.nr, 1);
	cap_close(&c);
}
END_TEST

/* AUXTRACE whose payload runs past the end of the input. */
START_TEST(test_auxtrace_payload_past_end)
{
	struct cap c;
	struct bld_buf *b;
	size_t pos, nr;
	int rc;

	cap_init(&c, _i);
	c.file.has_feature[PS_FEAT_HOSTNAME] = false;
	{
		struct bld_attr a = attr_basic(ST_ERR);
		cap_attr(&c, &a);
	}
	b = cap_body(&c);
	comm(b, 1, 1);
	comm(b, 2, 2);
	pos = bld_rec_begin(b, PS_RECORD_AUXTRACE, 0);
	bld_u64(b, 1 << 20);
	bld_u64(b, 0);
	bld_u64(b, 0);
	bld_u32(b, 0);
	bld_u32(b, 0);
	bld_u32(b, 0);
	bld_u32(b, 0);
	bld_rec_end(b, pos);
	bld_zeros(b, 64);
	rc = open_and_drain(&c, NULL, &nr);
	/* a pipe reader may deliver the record before it finds the payload
	 * missing */
	ck_assert_msg(nr == 2 || (c.pipe && nr == 3), "[%s] %zu events before the failure",
	              variant_name(c.variant), nr);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 48 + 64)), PS_RECORD_AUXTRACE,
	               NULL);
	cap_close(&c);
}
END_TEST

/* HEADER_ATTR (pipe) whose attr.size is larger than the record. */
START_TEST(test_header_attr_too_small)
{
	struct cap c;
	struct bld_attr a = attr_basic(ST_ERR);
	size_t pos, nr;
	int rc;

	cap_init(&c, 2 + _i);
	pos = c.stream.len;
	cap_attr(&c, &a);
	/* cut the record to 72 bytes: 8 header + 64 of a 128-byte attr */
	c.stream.len = pos + 72;
	bld_rec_end(&c.stream, pos);
	rc = open_and_drain(&c, NULL, &nr);
	expect_failure(&c, rc, RANGES(WITHIN(pos, 72)), PS_RECORD_HEADER_ATTR, "attr|size");
	cap_close(&c);
}
END_TEST

/* ---- compressed data ---------------------------------------------------------------- */

START_TEST(test_corrupt_zstd)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	struct bld_buf inner;
	size_t zpos[1], pos, nr;
	int rc;

	/* a good COMPRESSED record, then one with garbage */
	bld_buf_init(&inner, c.be);
	comm(&inner, 3, 3);
	bld_compressed(b, inner.data, inner.len, NULL, 0, zpos);
	/* a zstd block header of the reserved block type, then junk */
	pos = bld_rec_begin(b, PS_RECORD_COMPRESSED, 0);
	bld_u8(b, 0x06);
	for (int i = 1; i < 40; i++)
		bld_u8(b, (uint8_t)(0x5a ^ (i * 37)));
	bld_rec_end(b, pos);
	comm(b, 4, 4);
	rc = open_and_drain(&c, NULL, &nr);
	/* 2 COMMs, the good COMPRESSED and what it held (and perhaps the bad
	 * COMPRESSED record itself) */
	ck_assert_msg(nr == 4 || nr == 5, "%zu events before the failure", nr);
	expect_failure(&c, rc, RANGES(WITHIN(cap_offset(&c, pos), 48)), PS_RECORD_COMPRESSED,
	               "zstd|compress");
	bld_buf_free(&inner);
	cap_close(&c);
}
END_TEST

START_TEST(test_corrupt_zstd_force)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	struct ps_reader_opts o = opts_force();
	size_t pos, nr;
	int rc;

	pos = bld_rec_begin(b, PS_RECORD_COMPRESSED, 0);
	bld_fill(b, 0xa5, 32);
	bld_rec_end(b, pos);
	comm(b, 4, 4);
	rc = open_and_drain(&c, &o, &nr);
	ck_assert_msg(rc == 0, "[%s] with force: %d (%s)", variant_name(c.variant), rc,
	              ps_reader_errmsg(c.reader));
	ck_assert_msg(nr == 2 || nr == 3, "%zu events before the stop", nr);
	ck_assert(ps_reader_stats(c.reader)->damaged);
	ck_assert_uint_eq(ps_reader_stats(c.reader)->damaged_offset, cap_offset(&c, pos));
	cap_close(&c);
}
END_TEST

/* A damaged record inside the decompressed stream. */
START_TEST(test_compressed_inner_damage)
{
	struct cap c;
	struct bld_buf *b = good_start(&c, _i, NULL);
	struct bld_buf inner;
	size_t zpos[1], bad, nr;
	int rc;

	bld_buf_init(&inner, c.be);
	comm(&inner, 3, 3);
	bad = comm(&inner, 4, 4);
	bld_rec_set_size(&inner, bad, 4);
	bld_compressed(b, inner.data, inner.len, NULL, 0, zpos);
	rc = open_and_drain(&c, NULL, &nr);
	/* 2 COMMs, the COMPRESSED record, the good inner COMM */
	ck_assert_uint_eq(nr, 4);
	expect_failure(&c, rc, RANGES(AT(cap_offset(&c, zpos[0]))), PERF_RECORD_COMM, "size");
	bld_buf_free(&inner);
	cap_close(&c);
}
END_TEST

Suite *suite_errors(void)
{
	Suite *s = suite_create("errors");
	TCase *hdr = tcase_create("header");
	TCase *rec = tcase_create("records");
	TCase *cnt = tcase_create("counts");

	tcase_set_timeout(hdr, 30);
	tcase_set_timeout(rec, 30);
	tcase_set_timeout(cnt, 30);

	tcase_add_test(hdr, test_missing_file);
	tcase_add_test(hdr, test_bad_options);
	tcase_add_loop_test(hdr, test_empty_file, 0, 1);
	tcase_add_loop_test(hdr, test_truncated_header, 0, 4);
	tcase_add_loop_test(hdr, test_bad_magic, 0, 4);
	tcase_add_loop_test(hdr, test_attr_size_bad, 0, 4);
	tcase_add_loop_test(hdr, test_attr_size_over_entry, 0, 2);
	tcase_add_loop_test(hdr, test_attrs_out_of_file, 0, 2);
	tcase_add_loop_test(hdr, test_ids_out_of_file, 0, 2);
	tcase_add_loop_test(hdr, test_data_past_eof, 0, 2);
	tcase_add_loop_test(hdr, test_feature_out_of_file, 0, 2);
	suite_add_tcase(s, hdr);

	tcase_add_loop_test(rec, test_record_size_4, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_record_size_0, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_record_past_data_end, 0, 2);
	tcase_add_loop_test(rec, test_truncated_tail, 0, 2 * NR_VARIANTS);
	tcase_add_loop_test(rec, test_truncated_tail_force, 0, 2 * NR_VARIANTS);
	tcase_add_loop_test(rec, test_truncated_tail_force_time_order, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_unknown_type, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_unknown_type_force, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_auxtrace_payload_past_end, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_header_attr_too_small, 0, 2);
	tcase_add_loop_test(rec, test_corrupt_zstd, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_corrupt_zstd_force, 0, NR_VARIANTS);
	tcase_add_loop_test(rec, test_compressed_inner_damage, 0, 2);
	suite_add_tcase(s, rec);

	tcase_add_loop_test(cnt, test_callchain_nr_huge, 0, 2);
	tcase_add_loop_test(cnt, test_callchain_nr_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_read_group_nr_huge, 0, 2);
	tcase_add_loop_test(cnt, test_branch_nr_huge, 0, 2);
	tcase_add_loop_test(cnt, test_regs_mask_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_regs_intr_mask_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_stack_size_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_raw_size_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_aux_size_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_sample_short, 0, 2);
	tcase_add_loop_test(cnt, test_stack_dyn_size_over_size, 0, 2);
	tcase_add_loop_test(cnt, test_id_index_nr_huge, 0, 2);
	tcase_add_loop_test(cnt, test_thread_map_nr_huge, 0, 2);
	tcase_add_loop_test(cnt, test_cpu_map_nr_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_text_poke_len_past_record, 0, 2);
	tcase_add_loop_test(cnt, test_namespaces_nr_bounded, 0, 2);
	suite_add_tcase(s, cnt);
	return s;
}
