/* File-level facts: attr sizes from 64 to 160 bytes in both byte orders and
 * formats, header facts, features (sections or HEADER_FEATURE records),
 * tracing data, matching records to attrs by id. */
#define _GNU_SOURCE
#include "helpers.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- attr sizes -------------------------------------------------------- */

static const uint32_t attr_sizes[] = { 0, 64, 72, 80, 96, 104, 112, 120, 128, 136, 160 };
#define NR_ATTR_SIZES (int)(sizeof(attr_sizes) / sizeof(attr_sizes[0]))

static struct bld_attr distinct_attr(uint32_t size)
{
	struct bld_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.size = size;
	a.config = 0x1111;
	a.sample_period = 0x2222;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	a.read_format = PERF_FORMAT_ID;
	/* disabled, inherit, exclude_kernel (bit 5), mmap (8), comm (9),
	 * sample_id_all (18), exclude_callchain_user (22), mmap2 (23),
	 * context_switch (26) */
	a.flags = 1 | 2 | (1 << 5) | (1 << 8) | (1 << 9) | PS_ATTR_SAMPLE_ID_ALL |
	          PS_ATTR_EXCLUDE_CALLCHAIN_USER | (1 << 23) | (1 << 26);
	a.wakeup_events = 0x3333;
	a.bp_type = 0x4444;
	a.config1 = 0x5555;
	a.config2 = 0x6666;
	a.branch_sample_type = 0x7777;
	a.sample_regs_user = 0x8888;
	a.sample_stack_user = 0x9999;
	a.clockid = 7;
	a.sample_regs_intr = 0xaaaa;
	a.aux_watermark = 0xbbbb;
	a.sample_max_stack = 0xcc;
	a.aux_sample_size = 0xdddd;
	a.sig_data = 0xeeee;
	a.config3 = 0xffff;
	a.tail_fill = 0x5a;
	return a;
}

static void check_attr(const struct ps_attr *got, const struct bld_attr *sent)
{
	struct bld_attr w = bld_attr_visible(sent);

	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(got->type, w.type);
	if (sent->size == 0)
		ck_assert_msg(got->size == 0 || got->size == 64, "attr.size 0 read as %u",
		              got->size);
	else
		ck_assert_uint_eq(got->size, w.size);
	ck_assert_uint_eq(got->config, w.config);
	ck_assert_uint_eq(got->sample_period, w.sample_period);
	ck_assert_uint_eq(got->sample_type, w.sample_type);
	ck_assert_uint_eq(got->read_format, w.read_format);
	ck_assert_uint_eq(got->flags, w.flags);
	ck_assert_uint_eq(got->wakeup_events, w.wakeup_events);
	ck_assert_uint_eq(got->bp_type, w.bp_type);
	ck_assert_uint_eq(got->config1, w.config1);
	ck_assert_uint_eq(got->config2, w.config2);
	ck_assert_uint_eq(got->branch_sample_type, w.branch_sample_type);
	ck_assert_uint_eq(got->sample_regs_user, w.sample_regs_user);
	ck_assert_uint_eq(got->sample_stack_user, w.sample_stack_user);
	ck_assert_int_eq(got->clockid, w.clockid);
	ck_assert_uint_eq(got->sample_regs_intr, w.sample_regs_intr);
	ck_assert_uint_eq(got->aux_watermark, w.aux_watermark);
	ck_assert_uint_eq(got->sample_max_stack, w.sample_max_stack);
	ck_assert_uint_eq(got->aux_sample_size, w.aux_sample_size);
	ck_assert_uint_eq(got->sig_data, w.sig_data);
	ck_assert_uint_eq(got->config3, w.config3);
	ck_assert_ptr_nonnull(got->name);
}

/* _i = size index * 4 + variant (0..3: LE/BE x file/pipe format) */
START_TEST(test_attr_sizes)
{
	static const uint64_t ids[] = { 501, 502, 503 };
	uint32_t size = attr_sizes[_i / 4];
	struct bld_attr a = distinct_attr(size);
	struct bld_sample s = bld_sample_empty();
	struct bld_sid sid = { 10, 11, 999, 0, 0, 0, 0 };
	struct cap c;
	struct bld_buf *b;
	const struct ps_attr *got;
	const struct ps_event *e;
	size_t pos;

	a.ids = ids;
	a.nr_ids = 3;
	cap_init(&c, _i % 4);
	cap_attr(&c, &a);
	b = cap_body(&c);
	s.ip = 0xabc;
	s.pid = 10;
	s.tid = 11;
	s.time = 998;
	s.period = 1;
	bld_sample(b, &a, 0, &s);
	pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, 10);
	bld_u32(b, 11);
	bld_str(b, "x", 0);
	bld_sample_id(b, a.sample_type, &sid);
	bld_rec_end(b, pos);
	cap_open(&c, NULL);

	if (!c.pipe) {
		ck_assert_uint_eq(ps_reader_nr_attrs(c.reader), 1);
		got = ps_reader_attr(c.reader, 0);
		check_attr(got, &a);
		ck_assert_uint_eq(got->nr_ids, 3);
		ck_assert_ptr_nonnull(got->ids);
		ck_assert_uint_eq(got->ids[0], 501);
		ck_assert_uint_eq(got->ids[2], 503);
		ck_assert_uint_eq(got->index, 0);
	}
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
	ck_assert_uint_eq(e->u.sample.ip, 0xabc);
	ck_assert_uint_eq(e->u.sample.pid, 10);
	ck_assert_uint_eq(e->u.sample.tid, 11);
	ck_assert_uint_eq(e->u.sample.time, 998);
	ck_assert_uint_eq(e->u.sample.period, 1);
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_COMM);
	ck_assert_str_eq(e->u.comm.comm, "x");
	ck_assert(e->sample_id.has_time);
	ck_assert_uint_eq(e->sample_id.time, 999);
	cap_expect_end(&c);

	ck_assert_uint_eq(ps_reader_nr_attrs(c.reader), 1);
	got = ps_reader_attr(c.reader, 0);
	check_attr(got, &a);
	ck_assert_uint_eq(got->nr_ids, 3);
	ck_assert_uint_eq(got->ids[1], 502);
	ck_assert_ptr_null(ps_reader_attr(c.reader, 1));
	cap_close(&c);
}
END_TEST

/* ---- header facts -------------------------------------------------------- */

START_TEST(test_header_facts)
{
	static const uint64_t ids0[] = { 7, 8 }, ids1[] = { 9 };
	struct bld_attr a0 = attr_basic(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TIME);
	struct bld_attr a1 = a0;
	struct cap c;
	struct bld_buf *b;
	size_t pos;

	a0.ids = ids0;
	a0.nr_ids = 2;
	a1.ids = ids1;
	a1.nr_ids = 1;
	a1.config = PERF_COUNT_SW_TASK_CLOCK;
	cap_init(&c, _i);
	cap_attr(&c, &a0);
	cap_attr(&c, &a1);
	b = cap_body(&c);
	pos = bld_rec_begin(b, PS_RECORD_FINISHED_ROUND, 0);
	bld_rec_end(b, pos);
	cap_open(&c, NULL);

	ck_assert(ps_reader_is_pipe(c.reader) == c.pipe);
	ck_assert(ps_reader_is_swapped(c.reader) == c.be);
	ck_assert_ptr_nonnull(ps_reader_path(c.reader));
	if (!c.pipe) {
		ck_assert_uint_eq(ps_reader_data_offset(c.reader), c.layout.data_offset);
		ck_assert_uint_eq(ps_reader_data_size(c.reader), c.layout.data_size);
		ck_assert_uint_eq(ps_reader_data_size(c.reader), 8);
	}
	cap_next(&c);
	cap_expect_end(&c);
	ck_assert_uint_eq(ps_reader_nr_attrs(c.reader), 2);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 0)->config, PERF_COUNT_SW_CPU_CLOCK);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 1)->config, PERF_COUNT_SW_TASK_CLOCK);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 0)->nr_ids, 2);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 0)->ids[1], 8);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 1)->nr_ids, 1);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 1)->ids[0], 9);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 1)->index, 1);
	cap_close(&c);
}
END_TEST

/* ps_reader_open_fd on a memfd holding a file-mode image. */
START_TEST(test_open_fd_file_mode)
{
	struct bld_file f;
	struct bld_buf img;
	struct bld_attr a = attr_basic(PERF_SAMPLE_IP);
	struct ps_reader *r = NULL;
	struct ps_reader_opts o = opts_default();
	const struct ps_event *e;
	size_t pos;
	int fd, rc;

	bld_file_init(&f, _i);
	bld_file_add_attr(&f, &a);
	bld_header_string(bld_file_feature(&f, PS_FEAT_HOSTNAME), "memfd-host");
	pos = bld_rec_begin(&f.data, PERF_RECORD_LOST_SAMPLES, 0);
	bld_u64(&f.data, 5);
	bld_rec_end(&f.data, pos);
	bld_file_assemble(&f, &img, NULL);
	fd = bld_memfd(&img);
	rc = ps_reader_open_fd(fd, "memfd-capture", &o, &r);
	ck_assert_msg(rc >= 0, "open_fd: %d", rc);
	ck_assert_msg(r != NULL, "ps_reader_open_fd returned %d and no handle", rc);
	ck_assert_str_eq(ps_reader_path(r), "memfd-capture");
	ck_assert(!ps_reader_is_pipe(r));
	ck_assert_str_eq(ps_reader_features(r)->hostname, "memfd-host");
	ck_assert_int_eq(ps_reader_next(r, &e), 1);
	ck_assert_uint_eq(e->type, PERF_RECORD_LOST_SAMPLES);
	ck_assert_uint_eq(e->u.lost.lost, 5);
	ck_assert_int_eq(ps_reader_next(r, &e), 0);
	ps_reader_close(r);
	/* the reader does not close the descriptor */
	ck_assert_int_eq(fcntl(fd, F_GETFD), 0);
	close(fd);
	bld_buf_free(&img);
	bld_file_free(&f);
}
END_TEST

static char stdin_error[512];

static void keep_error(void *ctx, enum ps_log_level level, const char *msg)
{
	(void)ctx;
	if (level == PS_LOG_ERROR)
		snprintf(stdin_error, sizeof(stdin_error), "%s", msg);
}

/* path "-": standard input, a regular file (file or pipe format) or a
 * pipe (pipe format). _i: 0 file image in a memfd, 1 pipe image in a
 * memfd, 2 pipe image through a pipe, 3 file image through a pipe (perf
 * cannot read that: an error that says so). */
START_TEST(test_open_stdin)
{
	struct bld_attr a = attr_basic(PERF_SAMPLE_IP);
	struct ps_reader *r = NULL;
	struct ps_reader_opts o = opts_default();
	struct bld_buf img, *b;
	struct bld_file f;
	const struct ps_event *e;
	bool pipe_image = _i == 1 || _i == 2;
	pid_t writer = 0;
	int fd, saved, rc;
	size_t pos;

	bld_file_init(&f, false);
	bld_buf_init(&img, false);
	if (pipe_image) {
		bld_pipe_header(&img);
		bld_pipe_attr(&img, &a);
		b = &img;
	} else {
		bld_file_add_attr(&f, &a);
		bld_header_string(bld_file_feature(&f, PS_FEAT_HOSTNAME), "stdin-host");
		b = &f.data;
	}
	pos = bld_rec_begin(b, PERF_RECORD_LOST_SAMPLES, 0);
	bld_u64(b, 9);
	bld_rec_end(b, pos);
	if (!pipe_image)
		bld_file_assemble(&f, &img, NULL);

	fd = _i >= 2 ? bld_pipe(&img, &writer) : bld_memfd(&img);
	saved = dup(STDIN_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
	close(fd);
	o.log = keep_error;
	stdin_error[0] = '\0';
	rc = ps_reader_open("-", &o, &r);
	if (_i == 3) {
		ck_assert_int_lt(rc, 0);
		ck_assert_ptr_null(r);
		check_msg(stdin_error, NULL, RANGES(AT(0)), NO_TYPE, "pipe|seek|file");
	} else {
		ck_assert_msg(rc >= 0, "open(\"-\"): %d %s", rc, stdin_error);
		ck_assert(ps_reader_is_pipe(r) == pipe_image);
		do {
			ck_assert_int_eq(ps_reader_next(r, &e), 1);
		} while (e->type != PERF_RECORD_LOST_SAMPLES);
		ck_assert_uint_eq(e->u.lost.lost, 9);
		ck_assert_int_eq(ps_reader_next(r, &e), 0);
	}
	ps_reader_close(r);
	dup2(saved, STDIN_FILENO);
	close(saved);
	bld_pipe_reap(writer);
	bld_buf_free(&img);
	bld_file_free(&f);
}
END_TEST

/* ---- features --------------------------------------------------------------- */

/* A data section with no records is what a killed perf record leaves
 * (data size 0, features not to be trusted): give captures one record. */
static void finished_init(struct bld_buf *b)
{
	size_t pos = bld_rec_begin(b, PS_RECORD_FINISHED_INIT, 0);
	bld_rec_end(b, pos);
}

static void string_list(struct bld_buf *b, const char *const *items, uint32_t nr)
{
	bld_u32(b, nr);
	for (uint32_t i = 0; i < nr; i++)
		bld_header_string(b, items[i]);
}

START_TEST(test_features)
{
	static const char *const cmdline[] = { "/usr/bin/perf", "record", "-g", "--", "python3" };
	static const uint64_t ids0[] = { 31, 32 }, ids1[] = { 33 };
	struct bld_attr a0 = attr_basic(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TIME);
	struct bld_attr a1 = a0;
	struct cap c;
	struct bld_buf *f;
	const struct ps_features *ft;

	a0.ids = ids0;
	a0.nr_ids = 2;
	a1.ids = ids1;
	a1.nr_ids = 1;
	a1.config = PERF_COUNT_SW_PAGE_FAULTS;
	cap_init(&c, _i);
	cap_attr(&c, &a0);
	cap_attr(&c, &a1);
	bld_header_string(cap_feature(&c, PS_FEAT_OSRELEASE), "6.1.0-test");
	bld_header_string(cap_feature(&c, PS_FEAT_VERSION), "6.1.187");
	bld_header_string(cap_feature(&c, PS_FEAT_ARCH), "x86_64");
	f = cap_feature(&c, PS_FEAT_NRCPUS);
	bld_u32(f, 16);
	bld_u32(f, 12);
	bld_header_string(cap_feature(&c, PS_FEAT_CPUDESC), "AMD EPYC 7B13");
	bld_header_string(cap_feature(&c, PS_FEAT_CPUID), "AuthenticAMD,25,1,0");
	bld_u64(cap_feature(&c, PS_FEAT_TOTAL_MEM), 16384000);
	string_list(cap_feature(&c, PS_FEAT_CMDLINE), cmdline, 5);
	/* EVENT_DESC: nr, attr size, then attr, nr_ids, name, ids per event */
	f = cap_feature(&c, PS_FEAT_EVENT_DESC);
	bld_u32(f, 2);
	bld_u32(f, 128);
	bld_attr_bytes(f, &a0);
	bld_u32(f, 2);
	bld_header_string(f, "cpu-clock:ppp");
	bld_u64(f, 31);
	bld_u64(f, 32);
	bld_attr_bytes(f, &a1);
	bld_u32(f, 1);
	bld_header_string(f, "page-faults");
	bld_u64(f, 33);
	cap_feature(&c, PS_FEAT_BRANCH_STACK);
	f = cap_feature(&c, PS_FEAT_SAMPLE_TIME);
	bld_u64(f, 1000000);
	bld_u64(f, 9000000);
	bld_u64(cap_feature(&c, PS_FEAT_CLOCKID), 1);
	f = cap_feature(&c, PS_FEAT_COMPRESSED);
	bld_u32(f, 1); /* version */
	bld_u32(f, 1); /* zstd */
	bld_u32(f, 3); /* level */
	bld_u32(f, 5); /* ratio */
	bld_u32(f, 528384); /* mmap len */
	f = cap_feature(&c, PS_FEAT_CLOCK_DATA);
	bld_u32(f, 1);
	bld_u32(f, 1); /* CLOCK_MONOTONIC */
	bld_u64(f, 1700000000000000000ULL);
	bld_u64(f, 123456789);
	finished_init(cap_body(&c));
	cap_open(&c, NULL);
	if (c.pipe) {
		/* features arrive as records */
		cap_next(&c);
		cap_expect_end(&c);
	}

	ft = ps_reader_features(c.reader);
	ck_assert_ptr_nonnull(ft);
	for (unsigned bit = 0; bit < PS_FEAT_LAST; bit++) {
		bool want = c.file.has_feature[bit];
		ck_assert_msg(((ft->present[0] >> bit) & 1) == want,
		              "[%s] feature bit %u present %d", variant_name(c.variant), bit,
		              (int)((ft->present[0] >> bit) & 1));
	}
	ck_assert_str_eq(ft->hostname, "pystitch-test");
	ck_assert_str_eq(ft->osrelease, "6.1.0-test");
	ck_assert_str_eq(ft->version, "6.1.187");
	ck_assert_str_eq(ft->arch, "x86_64");
	ck_assert(ft->has_nrcpus);
	ck_assert_uint_eq(ft->nr_cpus_available, 16);
	ck_assert_uint_eq(ft->nr_cpus_online, 12);
	ck_assert_str_eq(ft->cpudesc, "AMD EPYC 7B13");
	ck_assert_str_eq(ft->cpuid, "AuthenticAMD,25,1,0");
	ck_assert(ft->has_total_mem);
	ck_assert_uint_eq(ft->total_mem_kb, 16384000);
	ck_assert_uint_eq(ft->cmdline.nr, 5);
	ck_assert_str_eq(ft->cmdline.items[0], "/usr/bin/perf");
	ck_assert_str_eq(ft->cmdline.items[4], "python3");
	ck_assert(ft->branch_stack);
	ck_assert(ft->has_sample_time);
	ck_assert_uint_eq(ft->first_sample_time, 1000000);
	ck_assert_uint_eq(ft->last_sample_time, 9000000);
	ck_assert(ft->has_clockid);
	ck_assert_uint_eq(ft->clockid_res_ns, 1);
	ck_assert(ft->has_compressed);
	ck_assert_uint_eq(ft->comp_version, 1);
	ck_assert_uint_eq(ft->comp_type, 1);
	ck_assert_uint_eq(ft->comp_level, 3);
	ck_assert_uint_eq(ft->comp_ratio, 5);
	ck_assert_uint_eq(ft->comp_mmap_len, 528384);
	ck_assert(ft->has_clock_data);
	ck_assert_uint_eq(ft->clock_data_version, 1);
	ck_assert_uint_eq(ft->clock_data_clockid, 1);
	ck_assert_uint_eq(ft->clock_wall_ns, 1700000000000000000ULL);
	ck_assert_uint_eq(ft->clock_clockid_ns, 123456789);
	ck_assert(!ft->has_tracing_data);
	/* EVENT_DESC names the attrs; in pipe mode the first of a type keeps
	 * perf's own name too, which perf script prints when the samples
	 * lack one of its fields (here TID and CPU) */
	ck_assert_str_eq(ps_reader_attr(c.reader, 0)->name, "cpu-clock:ppp");
	ck_assert_str_eq(ps_reader_attr(c.reader, 1)->name, "page-faults");
	if (c.pipe) {
		ck_assert_str_eq(ps_reader_attr(c.reader, 0)->fallback_name, "cpu-clock:HG");
		ck_assert_ptr_null(ps_reader_attr(c.reader, 1)->fallback_name);
	} else {
		ck_assert_ptr_null(ps_reader_attr(c.reader, 0)->fallback_name);
	}
	cap_close(&c);
}
END_TEST

/* Absent features read as absent. */
START_TEST(test_features_absent)
{
	struct bld_attr a = attr_basic(PERF_SAMPLE_IP);
	struct cap c;
	const struct ps_features *ft;

	cap_init(&c, _i);
	cap_attr(&c, &a);
	finished_init(cap_body(&c));
	cap_open(&c, NULL);
	cap_next(&c);
	cap_expect_end(&c);
	ft = ps_reader_features(c.reader);
	ck_assert_str_eq(ft->hostname, "pystitch-test");
	ck_assert_ptr_null(ft->osrelease);
	ck_assert_ptr_null(ft->arch);
	ck_assert(!ft->has_nrcpus);
	ck_assert(!ft->has_compressed);
	ck_assert(!ft->has_sample_time);
	ck_assert_uint_eq(ft->cmdline.nr, 0);
	ck_assert_uint_eq(ft->present[0], 1ULL << PS_FEAT_HOSTNAME);
	cap_close(&c);
}
END_TEST

/* A feature bit this reader does not know (perf skips them). */
START_TEST(test_feature_unknown_bit)
{
	struct bld_attr a = attr_basic(PERF_SAMPLE_IP);
	struct cap c;
	struct bld_buf *b;
	size_t pos;
	const struct ps_event *e;

	cap_init(&c, _i);
	cap_attr(&c, &a);
	bld_fill(cap_feature(&c, 40), 0xee, 24);
	bld_header_string(cap_feature(&c, PS_FEAT_ARCH), "x86_64");
	b = cap_body(&c);
	pos = bld_rec_begin(b, PERF_RECORD_LOST_SAMPLES, 0);
	bld_u64(b, 6);
	bld_rec_end(b, pos);
	cap_open(&c, NULL);
	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_LOST_SAMPLES);
	ck_assert_uint_eq(e->u.lost.lost, 6);
	cap_expect_end(&c);
	ck_assert_str_eq(ps_reader_features(c.reader)->arch, "x86_64");
	cap_close(&c);
}
END_TEST

/* TRACING_DATA as a file-mode feature section. */
START_TEST(test_tracing_data_feature)
{
	struct bld_attr a = attr_basic(PERF_SAMPLE_IP | PERF_SAMPLE_RAW);
	struct cap c;
	struct bld_buf *f;
	const struct ps_features *ft;
	size_t len;

	a.type = PERF_TYPE_TRACEPOINT;
	a.config = 1234;
	cap_init(&c, _i);
	cap_attr(&c, &a);
	f = cap_feature(&c, PS_FEAT_TRACING_DATA);
	bld_tracing_data(f, 1234);
	len = f->len;
	finished_init(cap_body(&c));
	cap_open(&c, NULL);
	cap_next(&c);
	cap_expect_end(&c);
	ft = ps_reader_features(c.reader);
	ck_assert(ft->has_tracing_data);
	ck_assert_uint_eq(ft->tracing_data_size, len);
	ck_assert_uint_eq(ft->tracing_nr_events, 1);
	ck_assert_ptr_nonnull(ps_reader_tep(c.reader));
	cap_close(&c);
}
END_TEST

/* ---- id matching ---------------------------------------------------------------- */

static void comm_with_trailer(struct bld_buf *b, uint64_t st, uint32_t pid, uint64_t time,
                              uint64_t id, uint32_t cpu)
{
	struct bld_sid sid = { pid, pid, time, id, 0, cpu, 0 };
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, pid);
	bld_u32(b, pid);
	bld_str(b, "c", 0);
	bld_sample_id(b, st, &sid);
	bld_rec_end(b, pos);
}

/* Two events with IDENTIFIER and different sample_types: samples and
 * trailers decode with their own event's layout. */
START_TEST(test_id_match_identifier)
{
	static const uint64_t ids0[] = { 11, 12 }, ids1[] = { 21, 22 };
	uint64_t st0 = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	               PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	uint64_t st1 = st0 | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
	struct bld_attr a0 = attr_basic(st0), a1 = attr_basic(st1);
	static const uint64_t chain[] = { 0x1, 0x2 };
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b;
	const struct ps_event *e;
	const struct ps_attr *r0, *r1;

	a0.ids = ids0;
	a0.nr_ids = 2;
	a1.ids = ids1;
	a1.nr_ids = 2;
	cap_init(&c, _i);
	cap_attr(&c, &a0);
	cap_attr(&c, &a1);
	b = cap_body(&c);
	s.identifier = 22;
	s.ip = 0x2222;
	s.time = 100;
	s.cpu = 3;
	s.callchain_nr = 2;
	s.callchain = chain;
	bld_sample(b, &a1, 0, &s);
	s.identifier = 12;
	s.ip = 0x1212;
	s.time = 101;
	bld_sample(b, &a0, 0, &s);
	comm_with_trailer(b, st1, 5, 102, 21, 2);
	comm_with_trailer(b, st0, 6, 103, 11, 0);
	/* synthesized records carry a zeroed trailer: id 0 is the first event */
	comm_with_trailer(b, st0, 7, 0, 0, 0);
	cap_open(&c, NULL);

	e = cap_next(&c);
	ck_assert_uint_eq(ps_reader_nr_attrs(c.reader), 2);
	r0 = ps_reader_attr(c.reader, 0);
	r1 = ps_reader_attr(c.reader, 1);
	ck_assert_uint_eq(r0->id_pos, 0);
	ck_assert_uint_eq(r0->is_pos, 1);
	ck_assert_uint_eq(r0->id_hdr_size, 24);
	ck_assert_uint_eq(r1->id_hdr_size, 32);

	ck_assert_uint_eq(e->type, PERF_RECORD_SAMPLE);
	ck_assert_ptr_eq(e->attr, r1);
	ck_assert_uint_eq(e->u.sample.identifier, 22);
	ck_assert_uint_eq(e->u.sample.ip, 0x2222);
	ck_assert_uint_eq(e->u.sample.cpu, 3);
	ck_assert_uint_eq(e->u.sample.callchain_nr, 2);
	ck_assert_uint_eq(e->u.sample.callchain[1], 0x2);

	e = cap_next(&c);
	ck_assert_ptr_eq(e->attr, r0);
	ck_assert_uint_eq(e->u.sample.identifier, 12);
	ck_assert_uint_eq(e->u.sample.ip, 0x1212);
	ck_assert_uint_eq(e->u.sample.time, 101);

	e = cap_next(&c);
	ck_assert_uint_eq(e->type, PERF_RECORD_COMM);
	ck_assert_ptr_eq(e->attr, r1);
	ck_assert(e->sample_id.has_cpu);
	ck_assert_uint_eq(e->sample_id.cpu, 2);
	ck_assert_uint_eq(e->sample_id.id, 21);
	ck_assert_uint_eq(e->sample_id.time, 102);
	ck_assert_uint_eq(e->sample_id.pid, 5);

	e = cap_next(&c);
	ck_assert_ptr_eq(e->attr, r0);
	ck_assert(!e->sample_id.has_cpu);
	ck_assert_uint_eq(e->sample_id.id, 11);
	ck_assert_uint_eq(e->sample_id.time, 103);
	ck_assert_uint_eq(e->sample_id.pid, 6);

	e = cap_next(&c);
	ck_assert_ptr_eq(e->attr, r0);
	ck_assert_uint_eq(e->sample_id.pid, 7);
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* Two events with ID (no IDENTIFIER) and the same sample_type: the id sits
 * after IP, TID and TIME in samples and before CPU in trailers. */
START_TEST(test_id_match_id_pos)
{
	static const uint64_t ids0[] = { 100, 101 }, ids1[] = { 200 };
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
	              PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	struct bld_attr a0 = attr_basic(st), a1 = attr_basic(st);
	struct bld_sample s = bld_sample_empty();
	struct cap c;
	struct bld_buf *b;
	const struct ps_event *e;
	const struct ps_attr *r0, *r1;

	a0.ids = ids0;
	a0.nr_ids = 2;
	a1.ids = ids1;
	a1.nr_ids = 1;
	a1.config = PERF_COUNT_SW_TASK_CLOCK;
	cap_init(&c, _i);
	cap_attr(&c, &a0);
	cap_attr(&c, &a1);
	b = cap_body(&c);
	s.id = 200;
	s.ip = 0x200;
	s.period = 2;
	bld_sample(b, &a1, 0, &s);
	s.id = 101;
	s.ip = 0x101;
	s.period = 1;
	bld_sample(b, &a0, 0, &s);
	comm_with_trailer(b, st, 8, 50, 200, 1);
	comm_with_trailer(b, st, 9, 51, 100, 1);
	cap_open(&c, NULL);

	e = cap_next(&c);
	r0 = ps_reader_attr(c.reader, 0);
	r1 = ps_reader_attr(c.reader, 1);
	ck_assert_uint_eq(r0->id_pos, 3);
	ck_assert_uint_eq(r0->is_pos, 2);
	ck_assert_uint_eq(r0->id_hdr_size, 32);
	ck_assert_ptr_eq(e->attr, r1);
	ck_assert_uint_eq(e->u.sample.id, 200);
	ck_assert_uint_eq(e->u.sample.ip, 0x200);
	ck_assert_uint_eq(e->u.sample.period, 2);
	e = cap_next(&c);
	ck_assert_ptr_eq(e->attr, r0);
	ck_assert_uint_eq(e->u.sample.id, 101);
	ck_assert_uint_eq(e->u.sample.period, 1);
	e = cap_next(&c);
	ck_assert_ptr_eq(e->attr, r1);
	ck_assert_uint_eq(e->sample_id.id, 200);
	ck_assert_uint_eq(e->sample_id.cpu, 1);
	e = cap_next(&c);
	ck_assert_ptr_eq(e->attr, r0);
	ck_assert_uint_eq(e->sample_id.id, 100);
	ck_assert_uint_eq(e->sample_id.pid, 9);
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* A sample_type without ID or IDENTIFIER: no id position. */
START_TEST(test_id_pos_absent)
{
	struct bld_attr a = attr_basic(PERF_SAMPLE_IP | PERF_SAMPLE_TID);
	struct cap c;

	cap_init(&c, _i);
	cap_attr(&c, &a);
	cap_open(&c, NULL);
	cap_expect_end(&c);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 0)->id_pos, SIZE_MAX);
	ck_assert_uint_eq(ps_reader_attr(c.reader, 0)->id_hdr_size, 8);
	cap_close(&c);
}
END_TEST

Suite *suite_format(void)
{
	Suite *s = suite_create("format");
	TCase *tc = tcase_create("format");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_attr_sizes, 0, 4 * NR_ATTR_SIZES);
	tcase_add_loop_test(tc, test_header_facts, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_open_fd_file_mode, 0, 2);
	tcase_add_loop_test(tc, test_open_stdin, 0, 4);
	tcase_add_loop_test(tc, test_features, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_features_absent, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_feature_unknown_bit, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_tracing_data_feature, 0, 2);
	tcase_add_loop_test(tc, test_id_match_identifier, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_id_match_id_pos, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_id_pos_absent, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
