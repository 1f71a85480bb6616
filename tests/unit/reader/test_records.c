/* Decoding of every record type: kernel records 1..21 with sample_id_all
 * trailers and perf's own records 64..82, in every variant (byte order,
 * file or pipe format, file or pipe descriptor). */
#include "helpers.h"

#include <string.h>

/* Fields of the trailer every kernel record of these tests carries. */
#define ST_TRAILER                                                                                 \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
#define ST_RECORDS (ST_TRAILER | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD)
#define RF_RECORDS                                                                                 \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |        \
	 PERF_FORMAT_LOST)
#define EVENT_ID 42

static const uint64_t event_ids[] = { EVENT_ID, EVENT_ID + 1 };

struct rinfo {
	size_t pos, size;
};

static struct bld_attr records_attr(void)
{
	struct bld_attr a = attr_basic(ST_RECORDS);
	a.read_format = RF_RECORDS;
	a.ids = event_ids;
	a.nr_ids = 2;
	return a;
}

static struct bld_sid sid_for(unsigned n)
{
	struct bld_sid s;
	s.pid = 1000 + n;
	s.tid = 2000 + n;
	s.time = 5000000000ULL + 1000 * n;
	s.id = EVENT_ID + (n & 1);
	s.stream_id = 7000 + n;
	s.cpu = n % 4;
	s.res = 0;
	return s;
}

static void end_record(struct bld_buf *b, size_t pos, const struct bld_sid *sid, struct rinfo *ri)
{
	if (sid)
		bld_sample_id(b, ST_TRAILER, sid);
	bld_rec_end(b, pos);
	ri->pos = pos;
	ri->size = b->len - pos;
}

static const struct ps_event *expect_record(struct cap *c, uint32_t type, uint16_t misc,
                                            const struct rinfo *ri)
{
	const struct ps_event *e = cap_next(c);
	ck_assert_msg(e->type == type, "[%s] expected a %s, got type %u (%s) at offset 0x%llx",
	              variant_name(c->variant), ps_record_type_name(type), e->type,
	              ps_record_type_name(e->type) ? ps_record_type_name(e->type) : "?",
	              (unsigned long long)e->offset);
	ck_assert_uint_eq(e->misc, misc);
	ck_assert_uint_eq(e->offset, cap_offset(c, ri->pos));
	ck_assert_uint_eq(e->size, ri->size);
	ck_assert(!e->from_compressed);
	ck_assert_ptr_nonnull(e->raw);
	/* the record bytes as stored */
	ck_assert_mem_eq(e->raw, cap_body(c)->data + ri->pos, ri->size);
	return e;
}

static void check_sid(struct cap *c, const struct ps_event *e, const struct bld_sid *want)
{
	const struct ps_sample_id *s = &e->sample_id;
	ck_assert_msg(s->has_tid && s->has_time && s->has_id && s->has_stream_id && s->has_cpu,
	              "[%s] %s: trailer fields missing (tid %d time %d id %d stream %d cpu %d)",
	              variant_name(c->variant), ps_record_type_name(e->type), s->has_tid,
	              s->has_time, s->has_id, s->has_stream_id, s->has_cpu);
	ck_assert_uint_eq(s->pid, want->pid);
	ck_assert_uint_eq(s->tid, want->tid);
	ck_assert_uint_eq(s->time, want->time);
	ck_assert_uint_eq(s->id, want->id);
	ck_assert_uint_eq(s->stream_id, want->stream_id);
	ck_assert_uint_eq(s->cpu, want->cpu);
	ck_assert_uint_eq(e->timestamp, want->time);
	ck_assert_ptr_eq(e->attr, ps_reader_attr(c->reader, 0));
}

START_TEST(test_kernel_records)
{
	struct cap c;
	struct bld_attr attr = records_attr();
	struct bld_buf *b;
	struct rinfo ri[32];
	struct bld_sid sid[32];
	unsigned n = 0;
	size_t pos;
	static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
		                              7,    8,    9,    10,   11, 12, 13, 14, 15, 16 };
	static const uint8_t tag[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	static const uint8_t poke[8] = { 0x0f, 0x1f, 0x00, 0xe9, 0x10, 0x20, 0x30, 0x40 };
	const struct ps_event *e;

	cap_init(&c, _i);
	cap_attr(&c, &attr);
	b = cap_body(&c);
	for (unsigned i = 0; i < 32; i++)
		sid[i] = sid_for(i);

	/* 0: MMAP */
	pos = bld_rec_begin(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	bld_u32(b, 1234);
	bld_u32(b, 1235);
	bld_u64(b, 0x400000);
	bld_u64(b, 0x21000);
	bld_u64(b, 0x1000);
	bld_str(b, "/usr/bin/python3.12", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 1: LOST */
	pos = bld_rec_begin(b, PERF_RECORD_LOST, 0);
	bld_u64(b, EVENT_ID);
	bld_u64(b, 17);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 2: COMM */
	pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, 1234);
	bld_u32(b, 1236);
	bld_str(b, "worker-thread", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 3: COMM with COMM_EXEC */
	pos = bld_rec_begin(b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	bld_u32(b, 1234);
	bld_u32(b, 1234);
	bld_str(b, "python3", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 4: EXIT */
	pos = bld_rec_begin(b, PERF_RECORD_EXIT, 0);
	bld_u32(b, 1234);
	bld_u32(b, 1);
	bld_u32(b, 1236);
	bld_u32(b, 1234);
	bld_u64(b, 6000000001ULL);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 5: THROTTLE */
	pos = bld_rec_begin(b, PERF_RECORD_THROTTLE, 0);
	bld_u64(b, 6000000002ULL);
	bld_u64(b, EVENT_ID);
	bld_u64(b, 99);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 6: UNTHROTTLE */
	pos = bld_rec_begin(b, PERF_RECORD_UNTHROTTLE, 0);
	bld_u64(b, 6000000003ULL);
	bld_u64(b, EVENT_ID + 1);
	bld_u64(b, 98);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 7: FORK */
	pos = bld_rec_begin(b, PERF_RECORD_FORK, 0);
	bld_u32(b, 1234);
	bld_u32(b, 1234);
	bld_u32(b, 1237);
	bld_u32(b, 1234);
	bld_u64(b, 6000000004ULL);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 8: READ (read_format TE|TR|ID|LOST) */
	pos = bld_rec_begin(b, PERF_RECORD_READ, 0);
	bld_u32(b, 1234);
	bld_u32(b, 1238);
	bld_u64(b, 123456);
	bld_u64(b, 2000);
	bld_u64(b, 1500);
	bld_u64(b, EVENT_ID);
	bld_u64(b, 3);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 9: SAMPLE */
	{
		struct bld_sample s = bld_sample_empty();
		s.identifier = EVENT_ID;
		s.ip = 0x401234;
		s.pid = 1234;
		s.tid = 1235;
		s.time = sid[n].time;
		s.id = EVENT_ID;
		s.stream_id = 55;
		s.cpu = 1;
		s.period = 4000;
		pos = bld_sample(b, &attr, PERF_RECORD_MISC_USER, &s);
		ri[n].pos = pos;
		ri[n].size = b->len - pos;
		n++;
	}
	/* 10: MMAP2, maj/min/ino form */
	pos = bld_rec_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	bld_u32(b, 1234);
	bld_u32(b, 1234);
	bld_u64(b, 0x7f0000001000ULL);
	bld_u64(b, 0x2000);
	bld_u64(b, 0x3000);
	bld_u32(b, 8);
	bld_u32(b, 3);
	bld_u64(b, 131077);
	bld_u64(b, 9);
	bld_u32(b, 5); /* PROT_READ | PROT_EXEC */
	bld_u32(b, 2); /* MAP_PRIVATE */
	bld_str(b, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 11: MMAP2, build-id form */
	pos = bld_rec_begin(b, PERF_RECORD_MMAP2,
	                    PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	bld_u32(b, 1234);
	bld_u32(b, 1234);
	bld_u64(b, 0x7f0000100000ULL);
	bld_u64(b, 0x4000);
	bld_u64(b, 0);
	bld_u8(b, 20);
	bld_u8(b, 0);
	bld_u16(b, 0);
	bld_bytes(b, build_id, 20);
	bld_u32(b, 5);
	bld_u32(b, 2);
	bld_str(b, "/usr/lib/libpython3.12.so.1.0", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 12: MMAP2, build-id form with a 16-byte id */
	pos = bld_rec_begin(b, PERF_RECORD_MMAP2,
	                    PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	bld_u32(b, 1234);
	bld_u32(b, 1234);
	bld_u64(b, 0x7f0000200000ULL);
	bld_u64(b, 0x1000);
	bld_u64(b, 0x1000);
	bld_u8(b, 16);
	bld_u8(b, 0);
	bld_u16(b, 0);
	bld_bytes(b, build_id, 16);
	bld_zeros(b, 4);
	bld_u32(b, 1);
	bld_u32(b, 2);
	bld_str(b, "[vdso]", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 13: AUX */
	pos = bld_rec_begin(b, PERF_RECORD_AUX, 0);
	bld_u64(b, 0x10000);
	bld_u64(b, 0x800);
	bld_u64(b, PERF_AUX_FLAG_TRUNCATED);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 14: ITRACE_START */
	pos = bld_rec_begin(b, PERF_RECORD_ITRACE_START, 0);
	bld_u32(b, 4321);
	bld_u32(b, 4322);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 15: LOST_SAMPLES */
	pos = bld_rec_begin(b, PERF_RECORD_LOST_SAMPLES, 0);
	bld_u64(b, 31);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 16: SWITCH (out) */
	pos = bld_rec_begin(b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 17: SWITCH_CPU_WIDE */
	pos = bld_rec_begin(b, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	bld_u32(b, 555);
	bld_u32(b, 556);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 18: NAMESPACES with two links */
	pos = bld_rec_begin(b, PERF_RECORD_NAMESPACES, 0);
	bld_u32(b, 1234);
	bld_u32(b, 1234);
	bld_u64(b, 2);
	bld_u64(b, 4);
	bld_u64(b, 0xf0000001ULL);
	bld_u64(b, 4);
	bld_u64(b, 0xf0000002ULL);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 19: KSYMBOL */
	pos = bld_rec_begin(b, PERF_RECORD_KSYMBOL, 0);
	bld_u64(b, 0xffffffffc0001000ULL);
	bld_u32(b, 0x1a0);
	bld_u16(b, PERF_RECORD_KSYMBOL_TYPE_BPF);
	bld_u16(b, 0);
	bld_str(b, "bpf_prog_6deef7357e7b4530_probe", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 20: BPF_EVENT */
	pos = bld_rec_begin(b, PERF_RECORD_BPF_EVENT, 0);
	bld_u16(b, PERF_BPF_EVENT_PROG_LOAD);
	bld_u16(b, 0);
	bld_u32(b, 77);
	bld_bytes(b, tag, 8);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 21: CGROUP */
	pos = bld_rec_begin(b, PERF_RECORD_CGROUP, 0);
	bld_u64(b, 0x1234abcd);
	bld_str(b, "/system.slice/app.service", 0);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 22: TEXT_POKE: 3 old bytes, 5 new bytes */
	pos = bld_rec_begin(b, PERF_RECORD_TEXT_POKE, PERF_RECORD_MISC_KERNEL);
	bld_u64(b, 0xffffffff81000100ULL);
	bld_u16(b, 3);
	bld_u16(b, 5);
	bld_bytes(b, poke, 8);
	bld_align(b, 8);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;
	/* 23: AUX_OUTPUT_HW_ID */
	pos = bld_rec_begin(b, PERF_RECORD_AUX_OUTPUT_HW_ID, 0);
	bld_u64(b, 0x33);
	end_record(b, pos, &sid[n], &ri[n]);
	n++;

	cap_open(&c, NULL);
	n = 0;

	e = expect_record(&c, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.mmap.pid, 1234);
	ck_assert_uint_eq(e->u.mmap.tid, 1235);
	ck_assert_uint_eq(e->u.mmap.start, 0x400000);
	ck_assert_uint_eq(e->u.mmap.len, 0x21000);
	ck_assert_uint_eq(e->u.mmap.pgoff, 0x1000);
	ck_assert_str_eq(e->u.mmap.filename, "/usr/bin/python3.12");

	e = expect_record(&c, PERF_RECORD_LOST, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.lost.id, EVENT_ID);
	ck_assert_uint_eq(e->u.lost.lost, 17);

	e = expect_record(&c, PERF_RECORD_COMM, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.comm.pid, 1234);
	ck_assert_uint_eq(e->u.comm.tid, 1236);
	ck_assert_str_eq(e->u.comm.comm, "worker-thread");

	e = expect_record(&c, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert(e->misc & PERF_RECORD_MISC_COMM_EXEC);
	ck_assert_uint_eq(e->u.comm.pid, 1234);
	ck_assert_uint_eq(e->u.comm.tid, 1234);
	ck_assert_str_eq(e->u.comm.comm, "python3");

	e = expect_record(&c, PERF_RECORD_EXIT, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.fork.pid, 1234);
	ck_assert_uint_eq(e->u.fork.ppid, 1);
	ck_assert_uint_eq(e->u.fork.tid, 1236);
	ck_assert_uint_eq(e->u.fork.ptid, 1234);
	ck_assert_uint_eq(e->u.fork.time, 6000000001ULL);

	e = expect_record(&c, PERF_RECORD_THROTTLE, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.throttle.time, 6000000002ULL);
	ck_assert_uint_eq(e->u.throttle.id, EVENT_ID);
	ck_assert_uint_eq(e->u.throttle.stream_id, 99);

	e = expect_record(&c, PERF_RECORD_UNTHROTTLE, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.throttle.time, 6000000003ULL);
	ck_assert_uint_eq(e->u.throttle.id, EVENT_ID + 1);
	ck_assert_uint_eq(e->u.throttle.stream_id, 98);

	e = expect_record(&c, PERF_RECORD_FORK, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.fork.pid, 1234);
	ck_assert_uint_eq(e->u.fork.ppid, 1234);
	ck_assert_uint_eq(e->u.fork.tid, 1237);
	ck_assert_uint_eq(e->u.fork.ptid, 1234);
	ck_assert_uint_eq(e->u.fork.time, 6000000004ULL);

	e = expect_record(&c, PERF_RECORD_READ, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.read.pid, 1234);
	ck_assert_uint_eq(e->u.read.tid, 1238);
	ck_assert_uint_eq(e->u.read.values.nr, 1);
	ck_assert_ptr_nonnull(e->u.read.values.values);
	ck_assert_uint_eq(e->u.read.values.values[0].value, 123456);
	ck_assert_uint_eq(e->u.read.values.time_enabled, 2000);
	ck_assert_uint_eq(e->u.read.values.time_running, 1500);
	ck_assert_uint_eq(e->u.read.values.values[0].id, EVENT_ID);
	ck_assert_uint_eq(e->u.read.values.values[0].lost, 3);

	e = expect_record(&c, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, &ri[n]);
	ck_assert_ptr_eq(e->attr, ps_reader_attr(c.reader, 0));
	ck_assert_uint_eq(e->timestamp, sid[n].time);
	ck_assert_uint_eq(e->u.sample.sample_type, ST_RECORDS);
	ck_assert_uint_eq(e->u.sample.identifier, EVENT_ID);
	ck_assert_uint_eq(e->u.sample.ip, 0x401234);
	ck_assert_uint_eq(e->u.sample.pid, 1234);
	ck_assert_uint_eq(e->u.sample.tid, 1235);
	ck_assert_uint_eq(e->u.sample.time, sid[n].time);
	ck_assert_uint_eq(e->u.sample.id, EVENT_ID);
	ck_assert_uint_eq(e->u.sample.stream_id, 55);
	ck_assert_uint_eq(e->u.sample.cpu, 1);
	ck_assert_uint_eq(e->u.sample.period, 4000);
	n++;

	e = expect_record(&c, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.mmap.pid, 1234);
	ck_assert_uint_eq(e->u.mmap.tid, 1234);
	ck_assert_uint_eq(e->u.mmap.start, 0x7f0000001000ULL);
	ck_assert_uint_eq(e->u.mmap.len, 0x2000);
	ck_assert_uint_eq(e->u.mmap.pgoff, 0x3000);
	ck_assert(!e->u.mmap.has_build_id);
	ck_assert_uint_eq(e->u.mmap.maj, 8);
	ck_assert_uint_eq(e->u.mmap.min, 3);
	ck_assert_uint_eq(e->u.mmap.ino, 131077);
	ck_assert_uint_eq(e->u.mmap.ino_generation, 9);
	/* perf does not swap prot and flags: of the other byte order they
	 * are given as perf reads them */
	ck_assert_uint_eq(e->u.mmap.prot, c.be ? 0x05000000u : 5);
	ck_assert_uint_eq(e->u.mmap.flags, c.be ? 0x02000000u : 2);
	ck_assert_str_eq(e->u.mmap.filename, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	e = expect_record(&c, PERF_RECORD_MMAP2,
	                  PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert(e->u.mmap.has_build_id);
	ck_assert_uint_eq(e->u.mmap.start, 0x7f0000100000ULL);
	ck_assert_uint_eq(e->u.mmap.len, 0x4000);
	ck_assert_uint_eq(e->u.mmap.build_id_size, 20);
	ck_assert_mem_eq(e->u.mmap.build_id, build_id, 20);
	ck_assert_uint_eq(e->u.mmap.prot, c.be ? 0x05000000u : 5);
	ck_assert_uint_eq(e->u.mmap.flags, c.be ? 0x02000000u : 2);
	ck_assert_str_eq(e->u.mmap.filename, "/usr/lib/libpython3.12.so.1.0");

	e = expect_record(&c, PERF_RECORD_MMAP2,
	                  PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert(e->u.mmap.has_build_id);
	ck_assert_uint_eq(e->u.mmap.pgoff, 0x1000);
	ck_assert_uint_eq(e->u.mmap.build_id_size, 16);
	ck_assert_mem_eq(e->u.mmap.build_id, build_id, 16);
	ck_assert_uint_eq(e->u.mmap.prot, c.be ? 0x01000000u : 1);
	ck_assert_str_eq(e->u.mmap.filename, "[vdso]");

	e = expect_record(&c, PERF_RECORD_AUX, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.aux.aux_offset, 0x10000);
	ck_assert_uint_eq(e->u.aux.aux_size, 0x800);
	ck_assert_uint_eq(e->u.aux.flags, PERF_AUX_FLAG_TRUNCATED);

	e = expect_record(&c, PERF_RECORD_ITRACE_START, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.itrace_start.pid, 4321);
	ck_assert_uint_eq(e->u.itrace_start.tid, 4322);

	e = expect_record(&c, PERF_RECORD_LOST_SAMPLES, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.lost.id, 0);
	ck_assert_uint_eq(e->u.lost.lost, 31);

	e = expect_record(&c, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert(!e->u.context_switch.cpu_wide);

	e = expect_record(&c, PERF_RECORD_SWITCH_CPU_WIDE, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert(e->u.context_switch.cpu_wide);
	ck_assert_uint_eq(e->u.context_switch.next_prev_pid, 555);
	ck_assert_uint_eq(e->u.context_switch.next_prev_tid, 556);

	e = expect_record(&c, PERF_RECORD_NAMESPACES, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.namespaces.pid, 1234);
	ck_assert_uint_eq(e->u.namespaces.tid, 1234);
	ck_assert_uint_eq(e->u.namespaces.nr_namespaces, 2);
	ck_assert_uint_eq(e->u.namespaces.nr, 2);
	ck_assert_ptr_nonnull(e->u.namespaces.dev_ino);
	ck_assert_uint_eq(e->u.namespaces.dev_ino[0], 4);
	ck_assert_uint_eq(e->u.namespaces.dev_ino[1], 0xf0000001ULL);
	ck_assert_uint_eq(e->u.namespaces.dev_ino[2], 4);
	ck_assert_uint_eq(e->u.namespaces.dev_ino[3], 0xf0000002ULL);

	e = expect_record(&c, PERF_RECORD_KSYMBOL, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.ksymbol.addr, 0xffffffffc0001000ULL);
	ck_assert_uint_eq(e->u.ksymbol.len, 0x1a0);
	ck_assert_uint_eq(e->u.ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
	ck_assert_uint_eq(e->u.ksymbol.flags, 0);
	ck_assert_str_eq(e->u.ksymbol.name, "bpf_prog_6deef7357e7b4530_probe");

	e = expect_record(&c, PERF_RECORD_BPF_EVENT, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.bpf_event.type, PERF_BPF_EVENT_PROG_LOAD);
	ck_assert_uint_eq(e->u.bpf_event.flags, 0);
	ck_assert_uint_eq(e->u.bpf_event.id, 77);
	ck_assert_mem_eq(e->u.bpf_event.tag, tag, 8);

	e = expect_record(&c, PERF_RECORD_CGROUP, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.cgroup.id, 0x1234abcd);
	ck_assert_str_eq(e->u.cgroup.path, "/system.slice/app.service");

	e = expect_record(&c, PERF_RECORD_TEXT_POKE, PERF_RECORD_MISC_KERNEL, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.text_poke.addr, 0xffffffff81000100ULL);
	ck_assert_uint_eq(e->u.text_poke.old_len, 3);
	ck_assert_uint_eq(e->u.text_poke.new_len, 5);
	ck_assert_ptr_nonnull(e->u.text_poke.bytes);
	ck_assert_mem_eq(e->u.text_poke.bytes, poke, 8);

	e = expect_record(&c, PERF_RECORD_AUX_OUTPUT_HW_ID, 0, &ri[n]);
	check_sid(&c, e, &sid[n++]);
	ck_assert_uint_eq(e->u.aux_output_hw_id.hw_id, 0x33);

	cap_expect_end(&c);
	{
		const struct ps_reader_stats *st = ps_reader_stats(c.reader);
		ck_assert_ptr_nonnull(st);
		ck_assert_uint_eq(st->nr_records[PERF_RECORD_MMAP2], 3);
		ck_assert_uint_eq(st->nr_records[PERF_RECORD_COMM], 2);
		ck_assert_uint_eq(st->nr_records[PERF_RECORD_SAMPLE], 1);
		ck_assert(!st->damaged);
	}
	cap_close(&c);
}
END_TEST

/* Records without sample_id_all: no trailer, no sample_id fields. */
START_TEST(test_kernel_records_no_trailer)
{
	struct cap c;
	struct bld_attr attr = attr_basic(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	struct bld_buf *b;
	struct rinfo ri;
	const struct ps_event *e;
	size_t pos;

	attr.flags &= ~PS_ATTR_SAMPLE_ID_ALL;
	cap_init(&c, _i);
	cap_attr(&c, &attr);
	b = cap_body(&c);
	pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, 77);
	bld_u32(b, 78);
	bld_str(b, "sleep", 0);
	end_record(b, pos, NULL, &ri);
	cap_open(&c, NULL);
	e = expect_record(&c, PERF_RECORD_COMM, 0, &ri);
	ck_assert_uint_eq(e->u.comm.pid, 77);
	ck_assert_uint_eq(e->u.comm.tid, 78);
	ck_assert_str_eq(e->u.comm.comm, "sleep");
	ck_assert(!e->sample_id.has_time);
	ck_assert(!e->sample_id.has_tid);
	ck_assert_uint_eq(e->timestamp, UINT64_MAX);
	cap_expect_end(&c);
	cap_close(&c);
}
END_TEST

/* ---- perf's own records ------------------------------------------------ */

static void cpu_map_begin(struct bld_buf *b, size_t *pos, uint16_t encoding)
{
	*pos = bld_rec_begin(b, PS_RECORD_CPU_MAP, 0);
	bld_u16(b, encoding);
}

START_TEST(test_user_records)
{
	struct cap c;
	struct bld_attr attr = records_attr();
	struct bld_buf *b;
	struct rinfo ri[32];
	unsigned n = 0;
	size_t pos;
	const struct ps_event *e;
	static const uint8_t bid[20] = {
		0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63,
		0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d
	};
	uint8_t aux_payload[24];

	for (unsigned i = 0; i < sizeof(aux_payload); i++)
		aux_payload[i] = (uint8_t)(0xa0 + i);

	cap_init(&c, _i);
	cap_attr(&c, &attr);
	b = cap_body(&c);

	/* 0: ID_INDEX, two entries */
	pos = bld_rec_begin(b, PS_RECORD_ID_INDEX, 0);
	bld_u64(b, 2);
	bld_u64(b, EVENT_ID);
	bld_u64(b, 0);
	bld_u64(b, 0);
	bld_u64(b, (uint64_t)-1);
	bld_u64(b, EVENT_ID + 1);
	bld_u64(b, 0);
	bld_u64(b, 1);
	bld_u64(b, (uint64_t)-1);
	end_record(b, pos, NULL, &ri[n++]);
	/* 1: THREAD_MAP */
	pos = bld_rec_begin(b, PS_RECORD_THREAD_MAP, 0);
	bld_u64(b, 2);
	bld_u64(b, 1234);
	bld_str(b, "python3", 16);
	bld_u64(b, 1240);
	bld_str(b, "worker", 16);
	end_record(b, pos, NULL, &ri[n++]);
	/* 2: CPU_MAP, cpu list {0, 2, 5} */
	cpu_map_begin(b, &pos, 0);
	bld_u16(b, 3);
	bld_u16(b, 0);
	bld_u16(b, 2);
	bld_u16(b, 5);
	bld_align(b, 8);
	end_record(b, pos, NULL, &ri[n++]);
	/* 3: CPU_MAP, 32-bit mask {0, 2, 5, 33} */
	cpu_map_begin(b, &pos, 1);
	bld_u16(b, 2);
	bld_u16(b, 4);
	bld_u32(b, 0x25);
	bld_u32(b, 0x2);
	bld_align(b, 8);
	end_record(b, pos, NULL, &ri[n++]);
	/* 4: CPU_MAP, 64-bit mask {1, 40} */
	cpu_map_begin(b, &pos, 1);
	bld_u16(b, 1);
	bld_u16(b, 8);
	bld_zeros(b, 4);
	bld_u64(b, (1ULL << 1) | (1ULL << 40));
	bld_align(b, 8);
	end_record(b, pos, NULL, &ri[n++]);
	/* 5: CPU_MAP, range 4..7 with "any cpu" */
	cpu_map_begin(b, &pos, 2);
	bld_u8(b, 1);
	bld_u8(b, 0);
	bld_u16(b, 4);
	bld_u16(b, 7);
	end_record(b, pos, NULL, &ri[n++]);
	/* 6: TIME_CONV, full */
	pos = bld_rec_begin(b, PS_RECORD_TIME_CONV, 0);
	bld_u64(b, 31);
	bld_u64(b, 1073741824);
	bld_u64(b, 0x1122334455ULL);
	bld_u64(b, 0x99);
	bld_u64(b, 0xffffffffffffULL);
	bld_u8(b, 1);
	bld_u8(b, 1);
	bld_zeros(b, 6);
	end_record(b, pos, NULL, &ri[n++]);
	/* 7: TIME_CONV, old short form */
	pos = bld_rec_begin(b, PS_RECORD_TIME_CONV, 0);
	bld_u64(b, 10);
	bld_u64(b, 500);
	bld_u64(b, 77);
	end_record(b, pos, NULL, &ri[n++]);
	/* 8: EVENT_UPDATE name */
	pos = bld_rec_begin(b, PS_RECORD_EVENT_UPDATE, 0);
	bld_u64(b, 2);
	bld_u64(b, EVENT_ID);
	bld_str(b, "cycles:ppp", 0);
	end_record(b, pos, NULL, &ri[n++]);
	/* 9: EVENT_UPDATE unit */
	pos = bld_rec_begin(b, PS_RECORD_EVENT_UPDATE, 0);
	bld_u64(b, 0);
	bld_u64(b, EVENT_ID);
	bld_str(b, "MiB", 0);
	end_record(b, pos, NULL, &ri[n++]);
	/* 10: EVENT_UPDATE scale 0.25 */
	pos = bld_rec_begin(b, PS_RECORD_EVENT_UPDATE, 0);
	bld_u64(b, 1);
	bld_u64(b, EVENT_ID);
	{
		double scale = 0.25;
		uint64_t bits;
		memcpy(&bits, &scale, sizeof(bits));
		bld_u64(b, bits);
	}
	end_record(b, pos, NULL, &ri[n++]);
	/* 11: HEADER_BUILD_ID with an explicit size (filename field keeps
	 * the record 8-byte aligned) */
	pos = bld_rec_begin(b, PS_RECORD_HEADER_BUILD_ID,
	                    PERF_RECORD_MISC_USER | (1 << 15) /* BUILD_ID_SIZE */);
	bld_u32(b, (uint32_t)-1);
	bld_bytes(b, bid, 20);
	bld_u8(b, 20);
	bld_zeros(b, 3);
	bld_str(b, "/usr/lib/x86_64-linux-gnu/libm.so.6", 68);
	end_record(b, pos, NULL, &ri[n++]);
	/* 12: AUXTRACE_INFO */
	pos = bld_rec_begin(b, PS_RECORD_AUXTRACE_INFO, 0);
	bld_u32(b, 4);
	bld_u32(b, 0);
	bld_u64(b, 0xaaaa);
	bld_u64(b, 0xbbbb);
	end_record(b, pos, NULL, &ri[n++]);
	/* 13: AUXTRACE + 24 payload bytes outside the record */
	pos = bld_rec_begin(b, PS_RECORD_AUXTRACE, 0);
	bld_u64(b, sizeof(aux_payload));
	bld_u64(b, 0x4000);
	bld_u64(b, 0xfeedULL);
	bld_u32(b, 2);
	bld_u32(b, 1250);
	bld_u32(b, 3);
	bld_u32(b, 0);
	end_record(b, pos, NULL, &ri[n++]);
	bld_bytes(b, aux_payload, sizeof(aux_payload));
	/* 14: AUXTRACE_ERROR */
	pos = bld_rec_begin(b, PS_RECORD_AUXTRACE_ERROR, 0);
	bld_u32(b, 1);
	bld_u32(b, 6);
	bld_u32(b, 2);
	bld_u32(b, 1234);
	bld_u32(b, 1235);
	bld_u32(b, 2);
	bld_u64(b, 0x401000);
	bld_u64(b, 123456789);
	bld_str(b, "Overflow packet", 64);
	bld_u32(b, 9);
	bld_u32(b, 1);
	end_record(b, pos, NULL, &ri[n++]);
	/* 15: STAT_CONFIG */
	pos = bld_rec_begin(b, PS_RECORD_STAT_CONFIG, 0);
	bld_u64(b, 2);
	bld_u64(b, 0);
	bld_u64(b, 1);
	bld_u64(b, 1);
	bld_u64(b, 1000);
	end_record(b, pos, NULL, &ri[n++]);
	/* 16: STAT */
	pos = bld_rec_begin(b, PS_RECORD_STAT, 0);
	bld_u64(b, EVENT_ID);
	bld_u32(b, 1);
	bld_u32(b, 2);
	bld_u64(b, 100);
	bld_u64(b, 200);
	bld_u64(b, 150);
	end_record(b, pos, NULL, &ri[n++]);
	/* 17: STAT_ROUND */
	pos = bld_rec_begin(b, PS_RECORD_STAT_ROUND, 0);
	bld_u64(b, 1);
	bld_u64(b, 999);
	end_record(b, pos, NULL, &ri[n++]);
	/* 18: FINISHED_INIT */
	pos = bld_rec_begin(b, PS_RECORD_FINISHED_INIT, 0);
	end_record(b, pos, NULL, &ri[n++]);
	/* 19: FINISHED_ROUND */
	pos = bld_rec_begin(b, PS_RECORD_FINISHED_ROUND, 0);
	end_record(b, pos, NULL, &ri[n++]);

	cap_open(&c, NULL);
	n = 0;

	e = expect_record(&c, PS_RECORD_ID_INDEX, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.id_index.nr, 2);
	ck_assert_ptr_nonnull(e->u.id_index.entries);
	ck_assert_uint_eq(e->u.id_index.entries[0].id, EVENT_ID);
	ck_assert_uint_eq(e->u.id_index.entries[0].idx, 0);
	ck_assert_uint_eq(e->u.id_index.entries[0].cpu, 0);
	ck_assert_uint_eq(e->u.id_index.entries[0].tid, (uint64_t)-1);
	ck_assert_uint_eq(e->u.id_index.entries[1].id, EVENT_ID + 1);
	ck_assert_uint_eq(e->u.id_index.entries[1].cpu, 1);

	e = expect_record(&c, PS_RECORD_THREAD_MAP, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.thread_map.nr, 2);
	ck_assert_ptr_nonnull(e->u.thread_map.entries);
	ck_assert_uint_eq(e->u.thread_map.entries[0].pid, 1234);
	ck_assert_str_eq(e->u.thread_map.entries[0].comm, "python3");
	ck_assert_uint_eq(e->u.thread_map.entries[1].pid, 1240);
	ck_assert_str_eq(e->u.thread_map.entries[1].comm, "worker");

	e = expect_record(&c, PS_RECORD_CPU_MAP, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.cpu_map.encoding, 0);
	ck_assert_uint_eq(e->u.cpu_map.nr, 3);
	ck_assert_ptr_nonnull(e->u.cpu_map.cpus);
	ck_assert_uint_eq(e->u.cpu_map.cpus[0], 0);
	ck_assert_uint_eq(e->u.cpu_map.cpus[1], 2);
	ck_assert_uint_eq(e->u.cpu_map.cpus[2], 5);

	e = expect_record(&c, PS_RECORD_CPU_MAP, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.cpu_map.encoding, 1);
	ck_assert_uint_eq(e->u.cpu_map.nr, 4);
	ck_assert_ptr_nonnull(e->u.cpu_map.cpus);
	ck_assert_uint_eq(e->u.cpu_map.cpus[0], 0);
	ck_assert_uint_eq(e->u.cpu_map.cpus[1], 2);
	ck_assert_uint_eq(e->u.cpu_map.cpus[2], 5);
	ck_assert_uint_eq(e->u.cpu_map.cpus[3], 33);

	e = expect_record(&c, PS_RECORD_CPU_MAP, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.cpu_map.encoding, 1);
	ck_assert_uint_eq(e->u.cpu_map.nr, 2);
	ck_assert_ptr_nonnull(e->u.cpu_map.cpus);
	ck_assert_uint_eq(e->u.cpu_map.cpus[0], 1);
	ck_assert_uint_eq(e->u.cpu_map.cpus[1], 40);

	e = expect_record(&c, PS_RECORD_CPU_MAP, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.cpu_map.encoding, 2);
	ck_assert(e->u.cpu_map.any_cpu);
	{
		/* the list may or may not carry the "any" entry (-1) */
		size_t real = 0;
		ck_assert_ptr_nonnull(e->u.cpu_map.cpus);
		ck_assert_msg(e->u.cpu_map.nr == 4 || e->u.cpu_map.nr == 5, "range nr %zu",
		              e->u.cpu_map.nr);
		for (size_t i = 0; i < e->u.cpu_map.nr; i++) {
			if (e->u.cpu_map.cpus[i] == UINT32_MAX)
				continue;
			ck_assert_uint_eq(e->u.cpu_map.cpus[i], 4 + real);
			real++;
		}
		ck_assert_uint_eq(real, 4);
	}

	e = expect_record(&c, PS_RECORD_TIME_CONV, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.time_conv.time_shift, 31);
	ck_assert_uint_eq(e->u.time_conv.time_mult, 1073741824);
	ck_assert_uint_eq(e->u.time_conv.time_zero, 0x1122334455ULL);
	ck_assert(e->u.time_conv.has_cycles);
	ck_assert_uint_eq(e->u.time_conv.time_cycles, 0x99);
	ck_assert_uint_eq(e->u.time_conv.time_mask, 0xffffffffffffULL);
	ck_assert_uint_eq(e->u.time_conv.cap_user_time_zero, 1);
	ck_assert_uint_eq(e->u.time_conv.cap_user_time_short, 1);

	e = expect_record(&c, PS_RECORD_TIME_CONV, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.time_conv.time_shift, 10);
	ck_assert_uint_eq(e->u.time_conv.time_mult, 500);
	ck_assert_uint_eq(e->u.time_conv.time_zero, 77);
	ck_assert(!e->u.time_conv.has_cycles);

	e = expect_record(&c, PS_RECORD_EVENT_UPDATE, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.event_update.type, 2);
	ck_assert_uint_eq(e->u.event_update.id, EVENT_ID);
	ck_assert_ptr_nonnull(e->u.event_update.text);
	ck_assert_str_eq(e->u.event_update.text, "cycles:ppp");
	ck_assert_str_eq(ps_reader_attr(c.reader, 0)->name, "cycles:ppp");

	e = expect_record(&c, PS_RECORD_EVENT_UPDATE, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.event_update.type, 0);
	ck_assert_ptr_nonnull(e->u.event_update.text);
	ck_assert_str_eq(e->u.event_update.text, "MiB");

	e = expect_record(&c, PS_RECORD_EVENT_UPDATE, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.event_update.type, 1);
	ck_assert_double_eq(e->u.event_update.scale, 0.25);

	e = expect_record(&c, PS_RECORD_HEADER_BUILD_ID, PERF_RECORD_MISC_USER | (1 << 15),
	                  &ri[n++]);
	ck_assert_int_eq(e->u.build_id.pid, -1);
	ck_assert_uint_eq(e->u.build_id.size, 20);
	ck_assert_mem_eq(e->u.build_id.id, bid, 20);
	ck_assert_str_eq(e->u.build_id.filename, "/usr/lib/x86_64-linux-gnu/libm.so.6");

	e = expect_record(&c, PS_RECORD_AUXTRACE_INFO, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.auxtrace_info.type, 4);

	e = expect_record(&c, PS_RECORD_AUXTRACE, 0, &ri[n++]);
	ck_assert_uint_eq(e->payload_size, sizeof(aux_payload));
	ck_assert_uint_eq(e->u.auxtrace.size, sizeof(aux_payload));
	ck_assert_uint_eq(e->u.auxtrace.offset, 0x4000);
	ck_assert_uint_eq(e->u.auxtrace.reference, 0xfeed);
	ck_assert_uint_eq(e->u.auxtrace.idx, 2);
	ck_assert_uint_eq(e->u.auxtrace.tid, 1250);
	ck_assert_uint_eq(e->u.auxtrace.cpu, 3);

	e = expect_record(&c, PS_RECORD_AUXTRACE_ERROR, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.auxtrace_error.type, 1);
	ck_assert_uint_eq(e->u.auxtrace_error.code, 6);
	ck_assert_uint_eq(e->u.auxtrace_error.cpu, 2);
	ck_assert_uint_eq(e->u.auxtrace_error.pid, 1234);
	ck_assert_uint_eq(e->u.auxtrace_error.tid, 1235);
	ck_assert_uint_eq(e->u.auxtrace_error.fmt, 2);
	ck_assert_uint_eq(e->u.auxtrace_error.ip, 0x401000);
	ck_assert_uint_eq(e->u.auxtrace_error.time, 123456789);
	ck_assert_ptr_nonnull(e->u.auxtrace_error.msg);
	ck_assert_str_eq(e->u.auxtrace_error.msg, "Overflow packet");
	ck_assert_uint_eq(e->u.auxtrace_error.machine_pid, 9);
	ck_assert_uint_eq(e->u.auxtrace_error.vcpu, 1);

	e = expect_record(&c, PS_RECORD_STAT_CONFIG, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.stat_config.nr, 2);
	/* {AGGR_MODE, 1}, {INTERVAL, 1000}; no SCALE */
	ck_assert(e->u.stat_config.has_aggr_mode && e->u.stat_config.has_interval);
	ck_assert(!e->u.stat_config.has_scale);
	ck_assert_uint_eq(e->u.stat_config.aggr_mode, 1);
	ck_assert_uint_eq(e->u.stat_config.interval, 1000);
	ck_assert_uint_eq(e->u.stat_config.scale, 0);

	e = expect_record(&c, PS_RECORD_STAT, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.stat.id, EVENT_ID);
	/* the count's event, by its id; an id no event has: none */
	ck_assert_ptr_eq(ps_reader_attr_of_id(c.reader, e->u.stat.id), ps_reader_attr(c.reader, 0));
	ck_assert_ptr_eq(ps_reader_attr_of_id(c.reader, EVENT_ID + 1), ps_reader_attr(c.reader, 0));
	ck_assert_ptr_null(ps_reader_attr_of_id(c.reader, EVENT_ID + 7));
	ck_assert_uint_eq(e->u.stat.cpu, 1);
	ck_assert_uint_eq(e->u.stat.thread, 2);
	ck_assert_uint_eq(e->u.stat.val, 100);
	ck_assert_uint_eq(e->u.stat.ena, 200);
	ck_assert_uint_eq(e->u.stat.run, 150);

	e = expect_record(&c, PS_RECORD_STAT_ROUND, 0, &ri[n++]);
	ck_assert_uint_eq(e->u.stat_round.type, 1);
	ck_assert_uint_eq(e->u.stat_round.time, 999);

	expect_record(&c, PS_RECORD_FINISHED_INIT, 0, &ri[n++]);
	expect_record(&c, PS_RECORD_FINISHED_ROUND, 0, &ri[n++]);
	cap_expect_end(&c);
	ck_assert_uint_eq(ps_reader_stats(c.reader)->nr_records[PS_RECORD_CPU_MAP], 4);
	ck_assert_uint_eq(ps_reader_stats(c.reader)->nr_records[PS_RECORD_AUXTRACE], 1);
	cap_close(&c);
}
END_TEST

/* Pipe-only records: HEADER_ATTR and HEADER_FEATURE in the preamble,
 * HEADER_TRACING_DATA with its payload after the record. _i: 0 LE, 1 BE,
 * 2 LE pipe fd, 3 BE pipe fd. */
START_TEST(test_pipe_records)
{
	struct cap c;
	struct bld_attr attr = records_attr();
	struct bld_buf *b, blob;
	struct rinfo tracing, comm;
	const struct ps_event *e;
	size_t pos, blob_len;
	int rc, variant = (_i & 2) ? 4 + (_i & 1) : 2 + (_i & 1);
	uint64_t attr_pos, hostname_pos;

	cap_init(&c, variant);
	attr_pos = c.stream.len;
	cap_attr(&c, &attr);
	hostname_pos = c.stream.len;
	b = cap_body(&c);

	bld_buf_init(&blob, c.be);
	bld_tracing_data(&blob, 1234);
	blob_len = blob.len;
	bld_align(&blob, 8);
	pos = bld_rec_begin(b, PS_RECORD_HEADER_TRACING_DATA, 0);
	bld_u32(b, (uint32_t)blob.len);
	bld_u32(b, 0);
	end_record(b, pos, NULL, &tracing);
	bld_bytes(b, blob.data, blob.len);

	pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	bld_u32(b, 1);
	bld_u32(b, 2);
	bld_str(b, "after-tracing", 0);
	{
		struct bld_sid s = sid_for(3);
		end_record(b, pos, &s, &comm);
	}

	cap_open(&c, NULL);
	ck_assert(ps_reader_is_pipe(c.reader));
	ck_assert(ps_reader_is_swapped(c.reader) == c.be);

	/* the preamble, read without cap_next's skipping */
	rc = ps_reader_next(c.reader, &e);
	ck_assert_int_eq(rc, 1);
	ck_assert_uint_eq(e->type, PS_RECORD_HEADER_ATTR);
	ck_assert_uint_eq(e->offset, attr_pos);
	ck_assert_ptr_nonnull(e->u.header_attr.attr);
	ck_assert_uint_eq(e->u.header_attr.attr->sample_type, ST_RECORDS);
	ck_assert_uint_eq(e->u.header_attr.attr->read_format, RF_RECORDS);
	ck_assert_uint_eq(e->u.header_attr.attr->nr_ids, 2);
	ck_assert_uint_eq(e->u.header_attr.attr->ids[0], EVENT_ID);
	ck_assert_uint_eq(e->u.header_attr.attr->ids[1], EVENT_ID + 1);
	ck_assert_uint_eq(ps_reader_nr_attrs(c.reader), 1);

	rc = ps_reader_next(c.reader, &e);
	ck_assert_int_eq(rc, 1);
	ck_assert_uint_eq(e->type, PS_RECORD_HEADER_FEATURE);
	ck_assert_uint_eq(e->offset, hostname_pos);
	ck_assert_uint_eq(e->u.feature.feat_id, PS_FEAT_HOSTNAME);
	ck_assert_ptr_nonnull(ps_reader_features(c.reader)->hostname);
	ck_assert_str_eq(ps_reader_features(c.reader)->hostname, "pystitch-test");

	e = expect_record(&c, PS_RECORD_HEADER_TRACING_DATA, 0, &tracing);
	ck_assert_uint_eq(e->u.tracing_data.size, blob.len);
	ck_assert_uint_eq(e->payload_size, blob.len);

	e = expect_record(&c, PERF_RECORD_COMM, 0, &comm);
	ck_assert_str_eq(e->u.comm.comm, "after-tracing");
	cap_expect_end(&c);

	ck_assert(ps_reader_features(c.reader)->has_tracing_data);
	ck_assert_uint_eq(ps_reader_features(c.reader)->tracing_nr_events, 1);
	ck_assert_ptr_nonnull(ps_reader_tep(c.reader));
	(void)blob_len;
	bld_buf_free(&blob);
	cap_close(&c);
}
END_TEST

START_TEST(test_record_type_names)
{
	static const uint32_t kernel[] = { 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
		                           12, 13, 14, 15, 16, 17, 18, 19, 20, 21 };
	for (size_t i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++)
		ck_assert_ptr_nonnull(ps_record_type_name(kernel[i]));
	for (uint32_t t = 64; t <= 82; t++)
		ck_assert_ptr_nonnull(ps_record_type_name(t));
	ck_assert_str_eq(ps_record_type_name(PERF_RECORD_SAMPLE), "PERF_RECORD_SAMPLE");
	ck_assert_str_eq(ps_record_type_name(PERF_RECORD_MMAP2), "PERF_RECORD_MMAP2");
	ck_assert_ptr_nonnull(strstr(ps_record_type_name(PS_RECORD_COMPRESSED), "COMPRESSED"));
	ck_assert_ptr_nonnull(
	        strstr(ps_record_type_name(PS_RECORD_FINISHED_ROUND), "FINISHED_ROUND"));
	ck_assert_ptr_null(ps_record_type_name(0x1234));
}
END_TEST

Suite *suite_records(void)
{
	Suite *s = suite_create("records");
	TCase *tc = tcase_create("records");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_kernel_records, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_kernel_records_no_trailer, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_user_records, 0, NR_VARIANTS);
	tcase_add_loop_test(tc, test_pipe_records, 0, 4);
	tcase_add_test(tc, test_record_type_names);
	suite_add_tcase(s, tc);
	return s;
}
