/* PS_ORDER_TIME: kernel records come out in timestamp order, released at
 * FINISHED_ROUND barriers the way perf's ordered_events does (a round
 * releases what is older than the newest timestamp of the round before),
 * ties keep file order, and what is left is flushed at the end. */
#include "helpers.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_ORDER (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD)

/* A record of the stream: a sample (tag in ip) or a COMM (tag in pid). */
struct item {
	char kind; /* 'S' sample, 'C' comm, 'R' round */
	uint64_t time;
	uint32_t tag;
};

static void write_items(struct bld_buf *b, const struct bld_attr *a, const struct item *items,
                        size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		const struct item *it = &items[i];
		if (it->kind == 'S') {
			struct bld_sample s = bld_sample_empty();
			s.ip = it->tag;
			s.pid = s.tid = 1;
			s.time = it->time;
			s.period = 1;
			bld_sample(b, a, 0, &s);
		} else if (it->kind == 'C') {
			struct bld_sid sid = { it->tag, it->tag, it->time, 0, 0, 0, 0 };
			size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
			bld_u32(b, it->tag);
			bld_u32(b, it->tag);
			bld_str(b, "comm", 0);
			bld_sample_id(b, a->sample_type, &sid);
			bld_rec_end(b, pos);
		} else {
			size_t pos = bld_rec_begin(b, PS_RECORD_FINISHED_ROUND, 0);
			bld_rec_end(b, pos);
		}
	}
}

/* Read everything; return the tags of the kernel records in delivery
 * order, and count FINISHED_ROUND records. */
static size_t read_tags(struct cap *c, uint32_t *tags, uint64_t *times, size_t max, size_t *rounds)
{
	const struct ps_event *e;
	size_t n = 0;
	int rc;

	*rounds = 0;
	while ((rc = ps_reader_next(c->reader, &e)) == 1) {
		if (e->type == PS_RECORD_FINISHED_ROUND) {
			(*rounds)++;
			continue;
		}
		if (e->type >= 64)
			continue;
		ck_assert_msg(n < max, "too many records");
		if (e->type == PERF_RECORD_SAMPLE) {
			tags[n] = (uint32_t)e->u.sample.ip;
			times[n] = e->u.sample.time;
		} else {
			ck_assert_uint_eq(e->type, PERF_RECORD_COMM);
			tags[n] = e->u.comm.pid;
			times[n] = e->sample_id.time;
		}
		ck_assert_uint_eq(e->timestamp, times[n]);
		n++;
	}
	ck_assert_msg(rc == 0, "[%s] ps_reader_next: %d %s", variant_name(c->variant), rc,
	              ps_reader_errmsg(c->reader));
	return n;
}

static void expect_tags(struct cap *c, const struct item *items, size_t nr_items,
                        const uint32_t *want, size_t nr_want, size_t want_rounds,
                        uint64_t want_unordered, const struct ps_reader_opts *o)
{
	struct bld_attr a = attr_basic(ST_ORDER);
	uint32_t tags[64];
	uint64_t times[64];
	size_t n, rounds;
	char got[512] = "", exp[512] = "";
	size_t gl = 0, el = 0;

	cap_attr(c, &a);
	write_items(cap_body(c), &a, items, nr_items);
	cap_open(c, o);
	n = read_tags(c, tags, times, 64, &rounds);
	for (size_t i = 0; i < n && gl < sizeof(got); i++)
		gl += (size_t)snprintf(got + gl, sizeof(got) - gl, " %u", tags[i]);
	for (size_t i = 0; i < nr_want && el < sizeof(exp); i++)
		el += (size_t)snprintf(exp + el, sizeof(exp) - el, " %u", want[i]);
	ck_assert_msg(n == nr_want && memcmp(tags, want, n * sizeof(*tags)) == 0,
	              "[%s] delivery order:%s, expected:%s", variant_name(c->variant), got, exp);
	ck_assert_uint_eq(rounds, want_rounds);
	ck_assert_uint_eq(ps_reader_stats(c->reader)->nr_unordered, want_unordered);
	cap_close(c);
}

/* Out of order within rounds, ties in file order, a tail after the last
 * round. Tags: the time, plus a letter-like suffix for ties. */
static const struct item rounds_items[] = {
	{ 'S', 30, 30 }, { 'S', 10, 10 }, { 'S', 20, 201 }, { 'C', 20, 202 }, { 'S', 20, 203 },
	{ 'R', 0, 0 },   { 'S', 50, 50 }, { 'S', 40, 40 },  { 'C', 45, 45 },  { 'R', 0, 0 },
	{ 'S', 70, 70 }, { 'S', 60, 60 }, { 'C', 65, 65 },
};

START_TEST(test_time_order_rounds)
{
	static const uint32_t want[] = { 10, 201, 202, 203, 30, 40, 45, 50, 60, 65, 70 };
	struct cap c;
	struct ps_reader_opts o = opts_time();

	cap_init(&c, _i);
	expect_tags(&c, rounds_items, sizeof(rounds_items) / sizeof(rounds_items[0]), want,
	            sizeof(want) / sizeof(want[0]), 2, 0, &o);
}
END_TEST

/* The same stream in file order. */
START_TEST(test_file_order)
{
	static const uint32_t want[] = { 30, 10, 201, 202, 203, 50, 40, 45, 70, 60, 65 };
	struct cap c;
	struct ps_reader_opts o = opts_default();

	cap_init(&c, _i);
	expect_tags(&c, rounds_items, sizeof(rounds_items) / sizeof(rounds_items[0]), want,
	            sizeof(want) / sizeof(want[0]), 2, 0, &o);
}
END_TEST

/* A record of round 2 older than records of round 1 is still delivered
 * in order: a round only releases what is older than the newest record of
 * the round before it. */
START_TEST(test_time_order_window)
{
	static const struct item items[] = {
		{ 'S', 100, 100 }, { 'S', 50, 50 }, { 'R', 0, 0 },     { 'S', 80, 80 },
		{ 'S', 120, 120 }, { 'R', 0, 0 },   { 'S', 110, 110 },
	};
	static const uint32_t want[] = { 50, 80, 100, 110, 120 };
	struct cap c;
	struct ps_reader_opts o = opts_time();

	cap_init(&c, _i);
	expect_tags(&c, items, sizeof(items) / sizeof(items[0]), want,
	            sizeof(want) / sizeof(want[0]), 2, 0, &o);
}
END_TEST

/* A record older than something already delivered is delivered late and
 * counted (perf: "out of order event", nr_unordered_events):
 * round 1 {10}; round 2 {20} releases 10; round 3 {5} releases 5 and 20. */
START_TEST(test_time_order_unordered)
{
	static const struct item items[] = {
		{ 'S', 10, 10 }, { 'R', 0, 0 }, { 'S', 20, 20 },
		{ 'R', 0, 0 },   { 'S', 5, 5 }, { 'R', 0, 0 },
	};
	static const uint32_t want[] = { 10, 5, 20 };
	struct cap c;
	struct ps_reader_opts o = opts_time();

	cap_init(&c, _i);
	expect_tags(&c, items, sizeof(items) / sizeof(items[0]), want,
	            sizeof(want) / sizeof(want[0]), 3, 1, &o);
}
END_TEST

/* No FINISHED_ROUND at all (perf record -a ... with one mmap buffer, or a
 * short capture): everything is sorted at the end. */
START_TEST(test_time_order_no_rounds)
{
	static const struct item items[] = {
		{ 'S', 3, 3 }, { 'C', 1, 1 }, { 'S', 2, 21 }, { 'S', 2, 22 }, { 'C', 2, 23 },
	};
	static const uint32_t want[] = { 1, 21, 22, 23, 3 };
	struct cap c;
	struct ps_reader_opts o = opts_time();

	cap_init(&c, _i);
	expect_tags(&c, items, sizeof(items) / sizeof(items[0]), want,
	            sizeof(want) / sizeof(want[0]), 0, 0, &o);
}
END_TEST

/* perf's own records are delivered when read, not queued: a THREAD_MAP
 * between two out-of-order samples comes out before both. */
START_TEST(test_time_order_user_records_immediate)
{
	struct bld_attr a = attr_basic(ST_ORDER);
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b;
	struct ps_reader_opts o = opts_time();
	const struct ps_event *e;
	size_t pos;

	cap_init(&c, _i);
	cap_attr(&c, &a);
	b = cap_body(&c);
	s.time = 20;
	s.ip = 20;
	bld_sample(b, &a, 0, &s);
	pos = bld_rec_begin(b, PS_RECORD_THREAD_MAP, 0);
	bld_u64(b, 1);
	bld_u64(b, 77);
	bld_str(b, "t", 16);
	bld_rec_end(b, pos);
	s.time = 10;
	s.ip = 10;
	bld_sample(b, &a, 0, &s);
	cap_open(&c, &o);
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PS_RECORD_THREAD_MAP);
	ck_assert_uint_eq(e->offset, cap_offset(&c, pos));
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
	ck_assert_uint_eq(e->u.sample.ip, 10);
	e = cap_next(&c);
	ck_assert_uint_eq(e->u.sample.ip, 20);
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* Records keep their own offsets when delivered out of file order. */
START_TEST(test_time_order_offsets)
{
	struct bld_attr a = attr_basic(ST_ORDER);
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b;
	struct ps_reader_opts o = opts_time();
	const struct ps_event *e;
	size_t pos1, pos2;

	cap_init(&c, _i);
	cap_attr(&c, &a);
	b = cap_body(&c);
	s.time = 2000;
	s.ip = 0xb;
	pos1 = bld_sample(b, &a, 0, &s);
	s.time = 1000;
	s.ip = 0xa;
	pos2 = bld_sample(b, &a, PERF_RECORD_MISC_KERNEL, &s);
	cap_open(&c, &o);
	e = cap_next(&c);
	ck_assert_uint_eq(e->u.sample.ip, 0xa);
	ck_assert_uint_eq(e->offset, cap_offset(&c, pos2));
	ck_assert_uint_eq(e->misc, PERF_RECORD_MISC_KERNEL);
	e = cap_next(&c);
	ck_assert_uint_eq(e->u.sample.ip, 0xb);
	ck_assert_uint_eq(e->offset, cap_offset(&c, pos1));
	ck_assert_uint_eq(e->misc, 0);
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* A record without a timestamp (no sample_id_all trailer) cannot be
 * ordered; perf delivers it when read (perf_session__queue_event returns
 * -ETIME). */
START_TEST(test_time_order_untimed_immediate)
{
	struct bld_attr a = attr_basic(ST_ORDER);
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b;
	struct ps_reader_opts o = opts_time();
	const struct ps_event *e;
	size_t pos;

	a.flags &= ~PS_ATTR_SAMPLE_ID_ALL;
	cap_init(&c, _i);
	cap_attr(&c, &a);
	b = cap_body(&c);
	s.time = 20;
	s.ip = 20;
	bld_sample(b, &a, 0, &s);
	pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, 5);
	bld_u32(b, 5);
	bld_str(b, "untimed", 0);
	bld_rec_end(b, pos);
	s.time = 10;
	s.ip = 10;
	bld_sample(b, &a, 0, &s);
	cap_open(&c, &o);
	if (!c.pipe) {
		/* perf gives up ordering a file whose events lack
		 * sample_id_all: everything comes in file order */
		e = cap_next(&c);
		ck_assert_uint_eq(e->u.sample.ip, 20);
		e = cap_next(&c);
		ck_assert_uint_eq(e->type, PERF_RECORD_COMM);
		e = cap_next(&c);
		ck_assert_uint_eq(e->u.sample.ip, 10);
		cap_close(&c);
		return;
	}
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_COMM);
	ck_assert_uint_eq(e->timestamp, UINT64_MAX);
	e = cap_next(&c);
	ck_assert_uint_eq(e->u.sample.ip, 10);
	e = cap_next(&c);
	ck_assert_uint_eq(e->u.sample.ip, 20);
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* A queue limit far below the capture: perf releases half the queue early
 * (OE_FLUSH__HALF); every record still comes out, in order here since the
 * input is in order. */
START_TEST(test_time_order_queue_limit)
{
	struct bld_attr a = attr_basic(ST_ORDER);
	struct cap c;
	struct bld_buf *b;
	struct ps_reader_opts o = opts_time();
	const struct ps_event *e;

	o.max_queue_bytes = 1024;
	cap_init(&c, _i);
	cap_attr(&c, &a);
	b = cap_body(&c);
	for (unsigned i = 0; i < 500; i++) {
		struct bld_sample s = bld_sample_empty();
		s.time = 100 + i;
		s.ip = i;
		bld_sample(b, &a, 0, &s);
	}
	cap_open(&c, &o);
	for (unsigned i = 0; i < 500; i++) {
		e = cap_next(&c);
		ck_assert_uint_eq(e->u.sample.ip, i);
	}
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* Whether /proc/self/maps shows a mapping of path (unlinked: "(deleted)"). */
static bool is_mapped(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	fclose(f);
	return found;
}

/* Read the samples of a big capture in time order: their ips, and whether
 * the reader mapped the file while reading. */
static size_t read_big(struct cap *c, uint64_t *ips, size_t max, bool *mapped)
{
	struct ps_reader_opts o = opts_time();
	const struct ps_event *e;
	size_t n = 0;
	int rc;

	cap_open(c, &o);
	*mapped = false;
	while ((rc = ps_reader_next(c->reader, &e)) == 1) {
		if (e->type != PERF_RECORD_SAMPLE)
			continue;
		ck_assert_msg(n < max, "too many samples");
		ips[n++] = e->u.sample.ip;
		if (n == max / 2)
			*mapped = c->path && is_mapped(c->path);
	}
	ck_assert_msg(rc == 0, "[%s] ps_reader_next: %d %s", variant_name(c->variant), rc,
	              ps_reader_errmsg(c->reader));
	cap_close(c);
	return n;
}

/* A capture file of 8 MB is mapped, not read (the data section from 1 MB
 * on), and the pages read are dropped every 4 MB while records of older
 * rounds still wait in the queue: the samples come out as when the file
 * is read (PYSTITCH_NO_MMAP), in order. Rounds of 1000 samples, each
 * round's times backwards. Pipes are read as always. */
START_TEST(test_time_order_mapped)
{
	enum { ROUNDS = 200, PER_ROUND = 1000, NR = ROUNDS * PER_ROUND };
	uint64_t *mapped_ips = malloc(NR * sizeof(*mapped_ips));
	uint64_t *read_ips = malloc(NR * sizeof(*read_ips));
	struct bld_attr a = attr_basic(ST_ORDER);
	bool mapped, was_mapped = false;
	struct cap c;

	ck_assert_ptr_nonnull(mapped_ips);
	ck_assert_ptr_nonnull(read_ips);
	for (int pass = 0; pass < 2; pass++) {
		struct bld_buf *b;

		if (pass == 1)
			setenv("PYSTITCH_NO_MMAP", "1", 1);
		cap_init(&c, _i);
		cap_attr(&c, &a);
		b = cap_body(&c);
		for (unsigned r = 0; r < ROUNDS; r++) {
			for (unsigned i = 0; i < PER_ROUND; i++) {
				struct bld_sample s = bld_sample_empty();

				s.time = 1000 + (uint64_t)r * PER_ROUND + (PER_ROUND - 1 - i);
				s.ip = s.time;
				s.pid = s.tid = 1;
				s.period = 1;
				bld_sample(b, &a, 0, &s);
			}
			size_t pos = bld_rec_begin(b, PS_RECORD_FINISHED_ROUND, 0);
			bld_rec_end(b, pos);
		}
		ck_assert_uint_eq(read_big(&c, pass ? read_ips : mapped_ips, NR, &mapped), NR);
		if (pass == 0)
			was_mapped = mapped;
		else
			ck_assert_msg(!mapped, "[%s] PYSTITCH_NO_MMAP: mapped", variant_name(_i));
	}
	unsetenv("PYSTITCH_NO_MMAP");
	ck_assert_msg(was_mapped == !(_i & (V_PIPE | V_FD)), "[%s] mapped: %d", variant_name(_i),
	              was_mapped);
	for (size_t i = 0; i < NR; i++) {
		ck_assert_uint_eq(mapped_ips[i], 1000 + i);
		ck_assert_uint_eq(read_ips[i], 1000 + i);
	}
	free(mapped_ips);
	free(read_ips);
}
END_TEST

Suite *suite_order(void)
{
	Suite *s = suite_create("order");
	TCase *tc = tcase_create("order");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_time_order_rounds, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_file_order, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_window, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_unordered, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_no_rounds, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_user_records_immediate, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_offsets, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_untimed_immediate, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_time_order_queue_limit, 0, 2);
	tcase_add_loop_test(tc, test_time_order_mapped, 0, NR_VARIANTS);
	suite_add_tcase(s, tc);
	return s;
}
