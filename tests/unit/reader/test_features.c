/* Unit tests of src/reader/features.c and tracing.c: every feature's
 * decoding in both byte orders, the file-mode section table, the
 * TRACING_DATA blob, and what each does with damaged input.
 */
#include "base/cursor.h"
#include "feature_bytes.h"
#include "reader/perf_format_priv.h"
#include "reader/reader_priv.h"

#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <unistd.h>

#define ck_assert_failed_with(r, err, text)                                                        \
	do {                                                                                       \
		ck_assert_int_eq(err, -EINVAL);                                                    \
		ck_assert_msg(strstr(ps_reader_errmsg(r), text), "message '%s' lacks '%s'",        \
		              ps_reader_errmsg(r), text);                                          \
	} while (0)

/* ---- names ------------------------------------------------------------ */

START_TEST(test_feature_names)
{
	ck_assert_str_eq(ps_feature_name(PS_FEAT_TRACING_DATA), "TRACING_DATA");
	ck_assert_str_eq(ps_feature_name(PS_FEAT_BUILD_ID), "BUILD_ID");
	ck_assert_str_eq(ps_feature_name(PS_FEAT_CPU_PMU_CAPS), "CPU_PMU_CAPS");
	ck_assert_str_eq(ps_feature_name(PS_FEAT_PMU_CAPS), "PMU_CAPS");
	for (unsigned bit = 1; bit < PS_FEAT_LAST; bit++)
		ck_assert_ptr_nonnull(ps_feature_name(bit));
	ck_assert_ptr_null(ps_feature_name(0));
	ck_assert_ptr_null(ps_feature_name(PS_FEAT_LAST));
	ck_assert_ptr_null(ps_feature_name(255));
	ck_assert_ptr_null(ps_feature_name(100000));
}
END_TEST

/* ---- simple features, both byte orders -------------------------------- */

START_TEST(test_simple_features)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	put_hstring(&b, "myhost");
	ck_assert_int_eq(decode(r, PS_FEAT_HOSTNAME, &b), 0);
	ck_assert_str_eq(f->hostname, "myhost");
	ck_assert(f->present[0] & (1ull << PS_FEAT_HOSTNAME));

	b.len = 0;
	put_u32(&b, 8);
	put_u32(&b, 4);
	ck_assert_int_eq(decode(r, PS_FEAT_NRCPUS, &b), 0);
	ck_assert(f->has_nrcpus);
	ck_assert_uint_eq(f->nr_cpus_available, 8);
	ck_assert_uint_eq(f->nr_cpus_online, 4);

	b.len = 0;
	put_u64(&b, 24683620);
	ck_assert_int_eq(decode(r, PS_FEAT_TOTAL_MEM, &b), 0);
	ck_assert_uint_eq(f->total_mem_kb, 24683620);

	b.len = 0;
	put_u32(&b, 3);
	put_hstring(&b, "/usr/bin/perf");
	put_hstring(&b, "record");
	put_hstring(&b, "-g");
	ck_assert_int_eq(decode(r, PS_FEAT_CMDLINE, &b), 0);
	ck_assert_uint_eq(f->cmdline.nr, 3);
	ck_assert_str_eq(f->cmdline.items[0], "/usr/bin/perf");
	ck_assert_str_eq(f->cmdline.items[2], "-g");

	b.len = 0;
	put_u32(&b, 1);
	put_hstring(&b, "0-1");
	put_u32(&b, 2);
	put_hstring(&b, "0");
	put_hstring(&b, "1");
	for (uint32_t cpu = 0; cpu < 8; cpu++) { /* NRCPUS said 8 */
		put_u32(&b, cpu / 2); /* core */
		put_u32(&b, 0); /* socket */
	}
	ck_assert_int_eq(decode(r, PS_FEAT_CPU_TOPOLOGY, &b), 0);
	ck_assert_uint_eq(f->nr_cpu_ids, 8);
	ck_assert_int_eq(f->cpu_ids[5].core_id, 2);
	ck_assert_int_eq(f->cpu_ids[5].die_id, -1);
	ck_assert(!f->has_die_ids);
	ck_assert_uint_eq(f->cpu_topology_sibling_cores.nr, 1);
	ck_assert_str_eq(f->cpu_topology_sibling_cores.items[0], "0-1");
	ck_assert_uint_eq(f->cpu_topology_sibling_threads.nr, 2);
	ck_assert_str_eq(f->cpu_topology_sibling_threads.items[1], "1");

	b.len = 0;
	put_u32(&b, 2);
	put_u32(&b, 1);
	put_hstring(&b, "software");
	put_u32(&b, 2);
	put_hstring(&b, "tracepoint");
	ck_assert_int_eq(decode(r, PS_FEAT_PMU_MAPPINGS, &b), 0);
	ck_assert_uint_eq(f->nr_pmu_mappings, 2);
	ck_assert_uint_eq(f->pmu_types[1], 2);
	ck_assert_str_eq(f->pmu_names[1], "tracepoint");

	b.len = 0;
	put_u64(&b, 518807499000);
	put_u64(&b, 519013551000);
	ck_assert_int_eq(decode(r, PS_FEAT_SAMPLE_TIME, &b), 0);
	ck_assert(f->has_sample_time);
	ck_assert_uint_eq(f->last_sample_time, 519013551000);

	b.len = 0;
	put_u64(&b, 1);
	ck_assert_int_eq(decode(r, PS_FEAT_CLOCKID, &b), 0);
	ck_assert(f->has_clockid);
	ck_assert_uint_eq(f->clockid_res_ns, 1);
	ck_assert_int_eq(decode(r, PS_FEAT_DIR_FORMAT, &b), 0);
	ck_assert(f->has_dir_format);

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_u32(&b, 3);
	put_u32(&b, 12);
	put_u32(&b, 528384);
	ck_assert_int_eq(decode(r, PS_FEAT_COMPRESSED, &b), 0);
	ck_assert(f->has_compressed);
	ck_assert_uint_eq(f->comp_type, 1);
	ck_assert_uint_eq(f->comp_level, 3);
	ck_assert_uint_eq(f->comp_mmap_len, 528384);

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_u64(&b, 1700000000000000000ull);
	put_u64(&b, 123456789);
	ck_assert_int_eq(decode(r, PS_FEAT_CLOCK_DATA, &b), 0);
	ck_assert(f->has_clock_data);
	ck_assert_uint_eq(f->clock_wall_ns, 1700000000000000000ull);
	ck_assert_uint_eq(f->clock_clockid_ns, 123456789);

	/* flag-only features have empty sections */
	ck_assert_int_eq(ps_feature_decode(r, PS_FEAT_BRANCH_STACK, NULL, 0, 0), 0);
	ck_assert_int_eq(ps_feature_decode(r, PS_FEAT_STAT, NULL, 0, 0), 0);
	ck_assert(f->branch_stack && f->is_stat);

	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

START_TEST(test_string_edge_cases)
{
	struct ps_reader *r = pipe_reader(false);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { 0 };

	/* no NUL inside the field: kept whole, not read past */
	put_u32(&b, 4);
	put(&b, "abcd", 4);
	ck_assert_int_eq(decode(r, PS_FEAT_ARCH, &b), 0);
	ck_assert_str_eq(f->arch, "abcd");

	/* empty string */
	b.len = 0;
	put_u32(&b, 0);
	ck_assert_int_eq(decode(r, PS_FEAT_CPUID, &b), 0);
	ck_assert_str_eq(f->cpuid, "");

	/* length past the section */
	b.len = 0;
	put_u32(&b, 65);
	put_zeros(&b, 64);
	ck_assert_damaged(r, PS_FEAT_OSRELEASE, decode(r, PS_FEAT_OSRELEASE, &b),
	                  "feature OSRELEASE: truncated");
	ck_assert_ptr_null(f->osrelease);
	clear_failure(r);

	/* empty section */
	ck_assert_damaged(r, PS_FEAT_VERSION, ps_feature_decode(r, PS_FEAT_VERSION, NULL, 0, 0),
	                  "feature VERSION: truncated");
	clear_failure(r);

	/* a string list claiming more strings than bytes */
	b.len = 0;
	put_u32(&b, 0xffffffff);
	put_hstring(&b, "x");
	ck_assert_damaged(r, PS_FEAT_CMDLINE, decode(r, PS_FEAT_CMDLINE, &b), "do not fit");
	clear_failure(r);

	/* the offset in the message is the field's */
	b.len = 0;
	put_u32(&b, 2);
	put_hstring(&b, "perf");
	put_u32(&b, 100);
	ck_assert_damaged(r, PS_FEAT_CMDLINE, decode(r, PS_FEAT_CMDLINE, &b), "offset 0x1048:");

	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* Every proper prefix of a well-formed section either fails cleanly or
 * (for sections made of repeated records) decodes; none reads past. */
static void sweep_prefixes(unsigned bit, const struct buf *b, bool be)
{
	struct ps_reader *r = pipe_reader(be);

	for (size_t len = 0; len < b->len; len++) {
		/* a copy of exactly len bytes, so ASan sees any overrun */
		uint8_t *copy = malloc(len ? len : 1);
		int err;

		memcpy(copy, b->data, len);
		err = ps_feature_decode(r, bit, copy, len, 0);
		ck_assert_msg(err == 0, "bit %u len %zu: %d", bit, len, err);
		if (r->features.damaged[bit / 64] & (1ull << (bit % 64)))
			ck_assert_msg(strstr(last_warning, ps_feature_name(bit)), "warning '%s'",
			              last_warning);
		r->features.damaged[bit / 64] = 0;
		last_warning[0] = 0;
		free(copy);
	}
	ps_reader_close(r);
}

START_TEST(test_truncation_sweep)
{
	bool be = _i;
	struct buf b = { .be = be };

	put_u32(&b, 2);
	put_hstring(&b, "perf");
	put_hstring(&b, "record");
	sweep_prefixes(PS_FEAT_CMDLINE, &b, be);

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_hstring(&b, "software");
	sweep_prefixes(PS_FEAT_PMU_MAPPINGS, &b, be);

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 1);
	put_u64(&b, 1);
	put_u64(&b, 2);
	sweep_prefixes(PS_FEAT_CLOCK_DATA, &b, be);

	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 64);
	put_zeros(&b, 64);
	put_u32(&b, 2);
	put_hstring(&b, "cycles");
	put_u64(&b, 10);
	put_u64(&b, 11);
	sweep_prefixes(PS_FEAT_EVENT_DESC, &b, be);
	buf_free(&b);
}
END_TEST

/* ---- BUILD_ID ------------------------------------------------------- */

static void put_build_id(struct buf *b, uint16_t misc, int32_t pid, uint8_t fill, uint8_t size_byte,
                         const char *filename)
{
	size_t name_len = (strlen(filename) + 1 + 63) / 64 * 64;

	put_u32(b, PS_RECORD_HEADER_BUILD_ID);
	put_u16(b, misc);
	put_u16(b, (uint16_t)(36 + name_len));
	put_u32(b, (uint32_t)pid);
	for (int i = 0; i < 20; i++)
		put_u8(b, (uint8_t)(fill + i));
	put_u8(b, size_byte);
	put_zeros(b, 3);
	put(b, filename, strlen(filename));
	put_zeros(b, name_len - strlen(filename));
}

START_TEST(test_build_ids)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { .be = be };

	put_build_id(&b, PERF_RECORD_MISC_KERNEL, -1, 0x85, 0, "[kernel.kallsyms]");
	put_build_id(&b, PERF_RECORD_MISC_USER | PS_MISC_BUILD_ID_SIZE, 1234, 0x10, 16,
	             "/usr/lib/libc.so.6");
	/* a size byte beyond 20 is held to 20 */
	put_build_id(&b, PERF_RECORD_MISC_USER | PS_MISC_BUILD_ID_SIZE, 1, 0, 200, "/x");
	ck_assert_int_eq(decode(r, PS_FEAT_BUILD_ID, &b), 0);
	ck_assert_uint_eq(f->nr_build_ids, 3);
	ck_assert_int_eq(f->build_ids[0].pid, -1);
	ck_assert_uint_eq(f->build_ids[0].misc, PERF_RECORD_MISC_KERNEL);
	ck_assert_uint_eq(f->build_ids[0].size, 20);
	ck_assert_uint_eq(f->build_ids[0].id[0], 0x85);
	ck_assert_uint_eq(f->build_ids[0].id[19], 0x85 + 19);
	ck_assert_str_eq(f->build_ids[0].filename, "[kernel.kallsyms]");
	ck_assert_int_eq(f->build_ids[1].pid, 1234);
	ck_assert_uint_eq(f->build_ids[1].misc, PERF_RECORD_MISC_USER);
	ck_assert_uint_eq(f->build_ids[1].size, 16);
	ck_assert_str_eq(f->build_ids[1].filename, "/usr/lib/libc.so.6");
	ck_assert_uint_eq(f->build_ids[2].size, 20);

	/* a record smaller than its fixed part */
	b.len = 0;
	put_build_id(&b, PERF_RECORD_MISC_USER, 1, 0, 0, "/a");
	b.data[be ? 7 : 6] = 30;
	b.data[be ? 6 : 7] = 0;
	ck_assert_damaged(r, PS_FEAT_BUILD_ID, decode(r, PS_FEAT_BUILD_ID, &b), "less than 36");
	clear_failure(r);

	/* a record running past the section */
	b.len = 0;
	put_build_id(&b, PERF_RECORD_MISC_USER, 1, 0, 0, "/a");
	b.len -= 8;
	ck_assert_damaged(r, PS_FEAT_BUILD_ID, decode(r, PS_FEAT_BUILD_ID, &b), "past the end");
	clear_failure(r);

	/* bytes left over that cannot hold a header */
	b.len = 0;
	put_build_id(&b, PERF_RECORD_MISC_USER, 1, 0, 0, "/a");
	put_zeros(&b, 4);
	ck_assert_damaged(r, PS_FEAT_BUILD_ID, decode(r, PS_FEAT_BUILD_ID, &b),
	                  "feature BUILD_ID: truncated");
	clear_failure(r);

	/* a filename filling its field without a NUL stays inside it */
	b.len = 0;
	put_u32(&b, PS_RECORD_HEADER_BUILD_ID);
	put_u16(&b, PERF_RECORD_MISC_USER);
	put_u16(&b, 36 + 8);
	put_u32(&b, 7);
	put_zeros(&b, 24);
	put(&b, "abcdefgh", 8);
	size_t before = f->nr_build_ids;
	ck_assert_int_eq(decode(r, PS_FEAT_BUILD_ID, &b), 0);
	ck_assert_uint_eq(f->nr_build_ids, before + 1);
	ck_assert_str_eq(f->build_ids[before].filename, "abcdefgh");

	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* Tables written before perf kvm (Linux 2.6.34) have no pid; perf recognises them by
 * the kernel's name losing its first four bytes. */
START_TEST(test_build_ids_old_layout)
{
	struct ps_reader *r = pipe_reader(false);
	const struct ps_features *f = ps_reader_features(r);
	struct buf b = { 0 };
	const char *names[] = { "[kernel.kallsyms]", "/bin/true" };
	uint16_t modes[] = { PERF_RECORD_MISC_KERNEL, PERF_RECORD_MISC_GUEST_USER };

	for (int i = 0; i < 2; i++) {
		put_u32(&b, PS_RECORD_HEADER_BUILD_ID);
		put_u16(&b, modes[i]);
		put_u16(&b, 32 + 64);
		for (int j = 0; j < 24; j++)
			put_u8(&b, (uint8_t)(0xa0 + j));
		put(&b, names[i], strlen(names[i]));
		put_zeros(&b, 64 - strlen(names[i]));
	}
	ck_assert_int_eq(decode(r, PS_FEAT_BUILD_ID, &b), 0);
	ck_assert_uint_eq(f->nr_build_ids, 2);
	ck_assert_str_eq(f->build_ids[0].filename, "[kernel.kallsyms]");
	ck_assert_int_eq(f->build_ids[0].pid, -1);
	ck_assert_uint_eq(f->build_ids[0].id[0], 0xa0);
	ck_assert_str_eq(f->build_ids[1].filename, "/bin/true");
	ck_assert_int_eq(f->build_ids[1].pid, 0);
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* ---- EVENT_DESC ------------------------------------------------------- */

static void add_attr(struct ps_reader *r, uint64_t config, const uint64_t *ids, size_t nr_ids)
{
	struct ps_attr attr = { .type = PERF_TYPE_SOFTWARE,
		                .size = 64,
		                .config = config,
		                .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_IDENTIFIER };

	ck_assert_int_eq(ps_attrs_add(r, &attr, ids, nr_ids, 0), 0);
}

static void put_event_desc(struct buf *b, const char *name, const uint64_t *ids, uint32_t nr_ids)
{
	put_zeros(b, 128); /* the attr; only its name is used */
	put_u32(b, nr_ids);
	put_hstring(b, name);
	for (uint32_t i = 0; i < nr_ids; i++)
		put_u64(b, ids[i]);
}

START_TEST(test_event_desc)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(be);
	struct buf b = { .be = be };
	const uint64_t ids0[] = { 10, 11 }, ids1[] = { 20, 21 };

	add_attr(r, PERF_COUNT_SW_CPU_CLOCK, ids0, 2);
	add_attr(r, PERF_COUNT_SW_DUMMY, ids1, 2);

	/* described in the other order: the ids decide */
	put_u32(&b, 2);
	put_u32(&b, 128);
	put_event_desc(&b, "dummy:HG", ids1, 2);
	put_event_desc(&b, "cpu-clock:ppp", ids0, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_EVENT_DESC, &b), 0);
	ck_assert_str_eq(ps_reader_attr(r, 0)->name, "cpu-clock:ppp");
	ck_assert_str_eq(ps_reader_attr(r, 1)->name, "dummy:HG");

	/* a second description renames nothing (evlist__set_event_name
	 * names only events without a name) */
	ck_assert_int_eq(decode(r, PS_FEAT_EVENT_DESC, &b), 0);
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 128);
	put_event_desc(&b, "renamed", ids0, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_EVENT_DESC, &b), 0);
	ck_assert_str_eq(ps_reader_attr(r, 0)->name, "cpu-clock:ppp");
	ps_reader_close(r);
	r = pipe_reader(be);
	add_attr(r, PERF_COUNT_SW_CPU_CLOCK, ids0, 2);
	add_attr(r, PERF_COUNT_SW_DUMMY, ids1, 2);

	/* without ids: by position; a surplus description is ignored */
	b.len = 0;
	put_u32(&b, 3);
	put_u32(&b, 128);
	put_event_desc(&b, "first", NULL, 0);
	put_event_desc(&b, "second", NULL, 0);
	put_event_desc(&b, "third", NULL, 0);
	ck_assert_int_eq(decode(r, PS_FEAT_EVENT_DESC, &b), 0);
	ck_assert_str_eq(ps_reader_attr(r, 0)->name, "first");
	ck_assert_str_eq(ps_reader_attr(r, 1)->name, "second");

	/* attr sizes outside what perf_event_attr can be */
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 8);
	put_event_desc(&b, "x", NULL, 0);
	ck_assert_damaged(r, PS_FEAT_EVENT_DESC, decode(r, PS_FEAT_EVENT_DESC, &b), "attr size 8");
	clear_failure(r);

	b.len = 0;
	put_u32(&b, PS_MAX_ATTRS + 1);
	put_u32(&b, 128);
	ck_assert_damaged(r, PS_FEAT_EVENT_DESC, decode(r, PS_FEAT_EVENT_DESC, &b),
	                  "events, more than");
	clear_failure(r);

	/* an id count no event has */
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 128);
	put_zeros(&b, 128);
	put_u32(&b, 0xffffffff);
	put_hstring(&b, "x");
	ck_assert_damaged(r, PS_FEAT_EVENT_DESC, decode(r, PS_FEAT_EVENT_DESC, &b),
	                  "ids, more than");
	clear_failure(r);

	/* ids cut short */
	b.len = 0;
	put_u32(&b, 1);
	put_u32(&b, 128);
	put_event_desc(&b, "x", ids0, 2);
	b.len -= 4;
	ck_assert_damaged(r, PS_FEAT_EVENT_DESC, decode(r, PS_FEAT_EVENT_DESC, &b), "truncated");

	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

START_TEST(test_unknown_features)
{
	struct ps_reader *r = pipe_reader(false);
	const struct ps_features *f = ps_reader_features(r);
	uint8_t junk[16] = { 0xff };

	ck_assert_int_eq(ps_feature_decode(r, 40, junk, sizeof(junk), 0), 0);
	ck_assert(f->present[0] & (1ull << 40));
	ck_assert_int_eq(ps_feature_decode(r, 200, junk, sizeof(junk), 0), 0);
	ck_assert(f->present[3] & (1ull << (200 - 192)));
	ck_assert_int_eq(ps_feature_decode(r, 256, junk, sizeof(junk), 0), 0);
	ck_assert_int_eq(ps_feature_decode(r, 0, junk, sizeof(junk), 0), 0);
	/* recognised and skipped, whatever the bytes */
	ck_assert_int_eq(ps_feature_decode(r, PS_FEAT_NUMA_TOPOLOGY, junk, 3, 0), 0);
	ck_assert_int_eq(ps_feature_decode(r, PS_FEAT_BPF_BTF, NULL, 0, 0), 0);
	ck_assert(f->present[0] & (1ull << PS_FEAT_BPF_BTF));

	/* an unknown CLOCK_DATA version is noted, not used */
	struct buf b = { 0 };
	put_u32(&b, 2);
	put_u32(&b, 1);
	put_u64(&b, 1);
	put_u64(&b, 2);
	ck_assert_int_eq(decode(r, PS_FEAT_CLOCK_DATA, &b), 0);
	ck_assert(!f->has_clock_data);
	ck_assert_uint_eq(f->clock_data_version, 2);
	ck_assert_ptr_nonnull(strstr(last_warning, "unknown version 2"));
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* ---- TRACING_DATA ------------------------------------------------------ */

static const char header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                  "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                  "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                  "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

/* The format Linux 6.18 gives sched:sched_switch (from a perf 6.1 capture). */
static const char sched_switch_format[] =
        "name: sched_switch\n"
        "ID: 372\n"
        "format:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\n"
        "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
        "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
        "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
        "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
        "\n"
        "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm"
        "=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, ("
        "REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x0000"
        "0008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(RE"
        "C->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x000000"
        "08 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001,"
        " \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, {"
        " 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080"
        ", \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | "
        "0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+"
        "\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char printk_formats[] =
        "0xffffffff82522918 : \"mas_wr_bnode\"\n"
        "0xffffffff82522988 : \"mas_wr_append\"\n"
        "0xffffffff825229a0 : \"\"\n" /* short: libtraceevent would misread it */
        /* a width of the record's bytes, and one of 100 MB: left out */
        "0xffffffff825229c0 : \"%*d wide\"\n"
        "0xffffffff825229d0 : \"%99999999d\"\n"
        "no colon here\n"
        "0xffffffff825229b0 :";

static const char saved_cmdlines[] = "1234 myprog\n99 kworker/0:1\ngarbage\n";

struct blob_opts {
	bool be;
	const char *version;
	uint32_t nr_systems; /* UINT32_MAX: the real count */
	uint64_t format_size; /* 0: the real size */
	const char *format;
	uint8_t endian_byte; /* 0xff: the real one */
	uint8_t long_size;
	uint32_t page_size;
};

static struct blob_opts blob_defaults(bool be)
{
	return (struct blob_opts){ .be = be,
		                   .version = "0.6",
		                   .nr_systems = UINT32_MAX,
		                   .format = sched_switch_format,
		                   .endian_byte = 0xff,
		                   .long_size = 8,
		                   .page_size = 4096 };
}

static void put_blob(struct buf *b, const struct blob_opts *o)
{
	b->be = o->be;
	put(b, "\x17\x08\x44tracing", 10);
	put(b, o->version, strlen(o->version) + 1);
	put_u8(b, o->endian_byte != 0xff ? o->endian_byte : o->be);
	put_u8(b, o->long_size);
	put_u32(b, o->page_size);
	put(b, "header_page", 12);
	put_u64(b, strlen(header_page));
	put(b, header_page, strlen(header_page));
	put(b, "header_event", 13);
	put_u64(b, 5);
	put(b, "12345", 5);
	put_u32(b, 0); /* ftrace formats */
	put_u32(b, o->nr_systems != UINT32_MAX ? o->nr_systems : 1);
	put(b, "sched", 6);
	put_u32(b, 1);
	put_u64(b, o->format_size ? o->format_size : strlen(o->format));
	put(b, o->format, strlen(o->format));
	put_u32(b, 0); /* kallsyms */
	put_u32(b, (uint32_t)strlen(printk_formats));
	put(b, printk_formats, strlen(printk_formats));
	if (strcmp(o->version, "0.6") >= 0) {
		put_u64(b, strlen(saved_cmdlines));
		put(b, saved_cmdlines, strlen(saved_cmdlines));
	}
}

/* A sched_switch payload as the recording machine lays it out. */
static void put_sched_switch(struct buf *b)
{
	char comm[16] = "prev";

	put_u16(b, 372);
	put_u8(b, 0);
	put_u8(b, 0);
	put_u32(b, 1234);
	put(b, comm, 16);
	put_u32(b, 1234);
	put_u32(b, 120);
	put_u64(b, 1); /* S */
	memset(comm, 0, sizeof(comm));
	strcpy(comm, "next");
	put(b, comm, 16);
	put_u32(b, 99);
	put_u32(b, 120);
}

START_TEST(test_tracing_data)
{
	bool be = _i;
	struct ps_reader *r = pipe_reader(false);
	const struct ps_features *f = ps_reader_features(r);
	struct blob_opts o = blob_defaults(be);
	struct buf b = { 0 }, raw = { .be = be };
	struct tep_handle *tep;
	struct tep_event *event;
	struct tep_record record = { 0 };
	struct trace_seq seq;

	put_blob(&b, &o);
	put_zeros(&b, (8 - b.len % 8) % 8); /* pipe mode pads the blob to 8 */
	ck_assert_int_eq(decode(r, PS_FEAT_TRACING_DATA, &b), 0);
	ck_assert_msg(strstr(last_warning, "2 printk formats left out, the first (at "
	                                   "0xffffffff825229c0) for a '*' width other than in "
	                                   "%*pb; their trace_printk() events print raw"),
	              "%s", last_warning);
	ck_assert(f->has_tracing_data);
	ck_assert_uint_eq(f->tracing_data_size, b.len);
	ck_assert_uint_eq(f->tracing_nr_events, 1);
	ck_assert(f->present[0] & (1ull << PS_FEAT_TRACING_DATA));
	tep = ps_reader_tep(r);
	ck_assert_ptr_nonnull(tep);
	ck_assert_int_eq(tep_get_page_size(tep), 4096);
	ck_assert_int_eq(tep_get_long_size(tep), 8);
	ck_assert(tep_is_file_bigendian(tep) == be);
	ck_assert(tep_is_pid_registered(tep, 1234));
	ck_assert(tep_is_pid_registered(tep, 99));
	event = tep_find_event(tep, 372);
	ck_assert_ptr_nonnull(event);
	ck_assert_str_eq(event->name, "sched_switch");
	ck_assert_str_eq(event->system, "sched");

	/* the handle prints a payload in the recording machine's order */
	put_sched_switch(&raw);
	record.data = raw.data;
	record.size = (int)raw.len;
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &record, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	ck_assert_str_eq(seq.buffer, "prev_comm=prev prev_pid=1234 prev_prio=120 "
	                             "prev_state=S ==> next_comm=next next_pid=99 next_prio=120");
	trace_seq_destroy(&seq);

	/* a second blob replaces the first */
	ck_assert_int_eq(ps_tracing_parse(r, b.data, b.len, 0), 0);
	ck_assert_ptr_nonnull(ps_reader_tep(r));
	ck_assert_ptr_null(ps_reader_tep(NULL));

	buf_free(&raw);
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

START_TEST(test_tracing_old_version)
{
	struct ps_reader *r = pipe_reader(false);
	struct blob_opts o = blob_defaults(false);
	struct buf b = { 0 };

	/* before 0.6 the blob ends after the printk formats */
	o.version = "0.5";
	put_blob(&b, &o);
	ck_assert_int_eq(ps_tracing_parse(r, b.data, b.len, 0), 0);
	ck_assert(!tep_is_pid_registered(ps_reader_tep(r), 1234));
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

static void expect_blob_error(const struct blob_opts *o, const char *text)
{
	struct ps_reader *r = pipe_reader(false);
	struct buf b = { 0 };

	put_blob(&b, o);
	ck_assert_failed_with(r, ps_tracing_parse(r, b.data, b.len, 0), text);
	ck_assert_ptr_null(ps_reader_tep(r));
	ck_assert_msg(strstr(ps_reader_errmsg(r), "tracing data: "), "%s", ps_reader_errmsg(r));
	buf_free(&b);
	ps_reader_close(r);
}

START_TEST(test_tracing_damaged)
{
	struct blob_opts o = blob_defaults(false);

	o.nr_systems = 0x7fffffff;
	expect_blob_error(&o, "event systems, more than");
	o = blob_defaults(false);
	o.format_size = 0xfffffffffffff000ull;
	expect_blob_error(&o, "truncated in event");
	o = blob_defaults(false);
	o.endian_byte = 7;
	expect_blob_error(&o, "endianness byte 7");
	o = blob_defaults(false);
	o.long_size = 3;
	expect_blob_error(&o, "long size 3");
	o = blob_defaults(false);
	o.page_size = 0;
	expect_blob_error(&o, "page size 0 is not a power of two");
	o = blob_defaults(false);
	/* refused before libtraceevent sees it (tracing_check.c) */
	o.format = "this is no event format";
	expect_blob_error(&o, "(system sched): line 1 is not a line of a kernel event format");
	o = blob_defaults(false);
	/* kernel lines, but no ID */
	o.format = "name: sched_switch\n";
	expect_blob_error(&o, "(system sched) rejected by libtraceevent");
	/* formats libtraceevent would crash or leak on: a field named in
	 * __print_flags() that the event does not declare, a control byte */
	char *renamed = strdup(sched_switch_format);
	*strstr(renamed, "long prev_state") = 'L';
	*strstr(renamed, "prev_state;") = 'P';
	o = blob_defaults(false);
	o.format = renamed;
	expect_blob_error(&o, "print fmt uses field 'prev_state' the event does not declare");
	strcpy(renamed, sched_switch_format);
	strstr(renamed, "pid_t next_pid")[3] = (char)0x8d;
	expect_blob_error(&o, "byte 0x8d at 563 is not printable ASCII");
	free(renamed);
	o = blob_defaults(false);
	o.nr_systems = 2; /* the second system is read from what follows */
	expect_blob_error(&o, "tracing data: ");

	struct ps_reader *r = pipe_reader(false);
	ck_assert_failed_with(r, ps_tracing_parse(r, (const uint8_t *)"\x17\x08\x44tracinx", 10, 0),
	                      "bad magic");
	clear_failure(r);
	ck_assert_failed_with(r, ps_tracing_parse(r, NULL, 0, 0), "truncated in magic");
	clear_failure(r);
	/* through the feature, the offset is the section's */
	ck_assert_failed_with(r,
	                      ps_feature_decode(r, PS_FEAT_TRACING_DATA,
	                                        (const uint8_t *)"\x17\x08\x44", 3, 0x500),
	                      "offset 0x500: tracing data: truncated");
	ck_assert(!ps_reader_features(r)->has_tracing_data);
	ps_reader_close(r);
}
END_TEST

/* Any cut of the blob is an error, never a read past it. */
START_TEST(test_tracing_truncation_sweep)
{
	bool be = _i;
	struct blob_opts o = blob_defaults(be);
	struct buf b = { 0 };
	struct ps_reader *r = pipe_reader(false);

	put_blob(&b, &o);
	for (size_t len = 0; len < b.len; len++) {
		uint8_t *copy = malloc(len ? len : 1);

		memcpy(copy, b.data, len);
		ck_assert_failed_with(r, ps_tracing_parse(r, copy, len, 0), "tracing data: ");
		ck_assert_ptr_null(ps_reader_tep(r));
		clear_failure(r);
		free(copy);
	}
	buf_free(&b);
	ps_reader_close(r);
}
END_TEST

/* ---- the file-mode section table --------------------------------------- */

/* A file-mode capture: header, one attr with one id, a data section
 * holding one FINISHED_ROUND record, then the feature table and the
 * sections. present[] lists the feature bits; sections[bit] their bytes
 * (NULL: an empty section). Returns the position of the table. */
static size_t put_file(struct buf *b, const uint64_t present[4], struct buf *const *sections)
{
	size_t attr_offset = 104, ids_offset = attr_offset + 80, data_offset = ids_offset + 8;
	size_t table, entry;

	put_u64(b, PS_PERF_MAGIC2);
	put_u64(b, 104);
	put_u64(b, 80);
	put_u64(b, attr_offset);
	put_u64(b, 80);
	put_u64(b, data_offset);
	put_u64(b, 8);
	put_zeros(b, 16);
	for (int i = 0; i < 4; i++)
		put_u64(b, present[i]);
	/* the attr: software cpu-clock, size 64 */
	put_u32(b, PERF_TYPE_SOFTWARE);
	put_u32(b, 64);
	put_zeros(b, 56);
	put_u64(b, ids_offset);
	put_u64(b, 8);
	put_u64(b, 42);
	put_u32(b, PS_RECORD_FINISHED_ROUND);
	put_u16(b, 0);
	put_u16(b, 8);

	table = b->len;
	for (unsigned bit = 0; bit < 256; bit++)
		if (present[bit / 64] & (1ull << (bit % 64)))
			put_zeros(b, 16);
	entry = table;
	for (unsigned bit = 0; bit < 256; bit++) {
		const struct buf *s = sections ? sections[bit] : NULL;

		if (!(present[bit / 64] & (1ull << (bit % 64))))
			continue;
		put_u64_at(b, entry, b->len);
		put_u64_at(b, entry + 8, s ? s->len : 0);
		if (s)
			put(b, s->data, s->len);
		entry += 16;
	}
	return table;
}

START_TEST(test_file_features)
{
	bool be = _i;
	struct buf *sections[256] = { 0 };
	struct buf host = { .be = be }, ids = { .be = be }, desc = { .be = be }, tracing = { 0 },
	           unknown = { .be = be }, file = { .be = be };
	struct blob_opts o = blob_defaults(be);
	uint64_t present[4] = { 0 };
	const uint64_t id = 42;
	struct ps_reader *r;
	const struct ps_features *f;

	put_hstring(&host, "filehost");
	sections[PS_FEAT_HOSTNAME] = &host;
	put_build_id(&ids, PERF_RECORD_MISC_KERNEL, -1, 1, 0, "[kernel.kallsyms]");
	sections[PS_FEAT_BUILD_ID] = &ids;
	put_u32(&desc, 1);
	put_u32(&desc, 128);
	put_event_desc(&desc, "cpu-clock:u", &id, 1);
	sections[PS_FEAT_EVENT_DESC] = &desc;
	put_blob(&tracing, &o);
	sections[PS_FEAT_TRACING_DATA] = &tracing;
	put_u64(&unknown, 0xdeadbeef);
	sections[77] = &unknown;
	/* bit 0 (reserved) and 77 (unknown) still own table entries */
	present[0] = 1 | (1ull << PS_FEAT_HOSTNAME) | (1ull << PS_FEAT_BUILD_ID) |
	             (1ull << PS_FEAT_EVENT_DESC) | (1ull << PS_FEAT_TRACING_DATA) |
	             (1ull << PS_FEAT_BRANCH_STACK) | (1ull << PS_FEAT_AUXTRACE);
	present[1] = 1ull << (77 - 64);
	put_file(&file, present, sections);

	ck_assert_msg(open_image(&file, &r) == 0, "%s", open_error);
	f = ps_reader_features(r);
	ck_assert_str_eq(f->hostname, "filehost");
	ck_assert_uint_eq(f->nr_build_ids, 1);
	ck_assert_str_eq(f->build_ids[0].filename, "[kernel.kallsyms]");
	ck_assert_str_eq(ps_reader_attr(r, 0)->name, "cpu-clock:u");
	ck_assert(f->has_tracing_data);
	ck_assert_uint_eq(f->tracing_data_size, tracing.len);
	ck_assert_ptr_nonnull(ps_reader_tep(r));
	ck_assert(f->branch_stack);
	ck_assert_uint_eq(f->present[0], present[0]);
	ck_assert_uint_eq(f->present[1], present[1]);
	ps_reader_close(r);

	buf_free(&host);
	buf_free(&ids);
	buf_free(&desc);
	buf_free(&tracing);
	buf_free(&unknown);
	buf_free(&file);
}
END_TEST

static void expect_file_error(const struct buf *file, const char *text)
{
	struct ps_reader *r;
	int err = open_image(file, &r);

	ck_assert_int_eq(err, -EINVAL);
	ck_assert_msg(strstr(open_error, text), "message '%s' lacks '%s'", open_error, text);
}

/* A damaged HOSTNAME section: the capture opens, without a host name,
 * and one warning says why. */
static void expect_file_damaged(const struct buf *file, const char *text)
{
	struct ps_reader *r;

	last_warning[0] = 0;
	ck_assert_int_eq(open_image(file, &r), 0);
	ck_assert_ptr_null(ps_reader_features(r)->hostname);
	ck_assert(ps_reader_features(r)->damaged[0] & (1ull << PS_FEAT_HOSTNAME));
	ck_assert_msg(strstr(last_warning, text) && strstr(last_warning, "the feature is ignored"),
	              "warning '%s' lacks '%s'", last_warning, text);
	ps_reader_close(r);
}

START_TEST(test_file_damaged)
{
	struct buf *sections[256] = { 0 };
	struct buf host = { 0 }, file = { 0 };
	uint64_t present[4] = { 1ull << PS_FEAT_HOSTNAME };
	size_t table;

	put_hstring(&host, "h");
	sections[PS_FEAT_HOSTNAME] = &host;

	/* a section past the end of the file */
	table = put_file(&file, present, sections);
	put_u64_at(&file, table, file.len - 4);
	expect_file_damaged(&file, "feature HOSTNAME: section of 68 bytes");

	/* its size past the end */
	put_u64_at(&file, table, file.len - 68);
	put_u64_at(&file, table + 8, 0xffffffffffffff00ull);
	expect_file_damaged(&file, "passes the end of the file");

	/* a malformed section: the message names it, at the field */
	put_u64_at(&file, table + 8, 3);
	expect_file_damaged(&file, "feature HOSTNAME: truncated");

	/* more table entries than the file holds */
	buf_free(&file);
	present[0] = ~0ull;
	present[1] = present[2] = present[3] = ~0ull;
	table = put_file(&file, present, NULL);
	file.len = table + 100;
	expect_file_error(&file, "feature table of 256 sections");

	/* perf record killed before writing the table: warned, not failed */
	buf_free(&file);
	present[0] = 1ull << PS_FEAT_HOSTNAME;
	present[1] = present[2] = present[3] = 0;
	put_file(&file, present, sections);
	put_u64_at(&file, 48, 0); /* data size */
	{
		struct ps_reader *r;

		last_warning[0] = 0;
		ck_assert_int_eq(open_image(&file, &r), 0);
		ck_assert_ptr_null(ps_reader_features(r)->hostname);
		ck_assert_ptr_nonnull(strstr(last_warning, "data size is 0"));
		ps_reader_close(r);
	}

	buf_free(&host);
	buf_free(&file);
}
END_TEST

/* A section over PS_MAX_FEATURE_SIZE inside a (sparse) file that is big
 * enough to hold it. */
START_TEST(test_file_section_too_big)
{
	struct buf *sections[256] = { 0 };
	struct buf host = { 0 }, file = { 0 };
	uint64_t present[4] = { 1ull << PS_FEAT_HOSTNAME };
	uint64_t big = (uint64_t)PS_MAX_FEATURE_SIZE + 8;
	struct ps_reader *r;
	size_t table;

	put_hstring(&host, "h");
	sections[PS_FEAT_HOSTNAME] = &host;
	table = put_file(&file, present, sections);
	put_u64_at(&file, table + 8, big);
	last_warning[0] = 0;
	ck_assert_int_eq(open_image_sized(&file, file.len + big, &r), 0);
	ck_assert_ptr_nonnull(strstr(last_warning, "feature HOSTNAME: section of"));
	ck_assert_ptr_nonnull(strstr(last_warning, "more than"));
	ck_assert_ptr_null(ps_reader_features(r)->hostname);
	ps_reader_close(r);
	buf_free(&host);
	buf_free(&file);
}
END_TEST

static Suite *features_suite(void)
{
	Suite *s = suite_create("reader features");
	TCase *names = tcase_create("names");
	TCase *decode_case = tcase_create("decode");
	TCase *tracing = tcase_create("tracing");
	TCase *file = tcase_create("file");

	tcase_add_test(names, test_feature_names);
	tcase_add_loop_test(decode_case, test_simple_features, 0, 2);
	tcase_add_test(decode_case, test_string_edge_cases);
	tcase_add_loop_test(decode_case, test_truncation_sweep, 0, 2);
	tcase_add_loop_test(decode_case, test_build_ids, 0, 2);
	tcase_add_test(decode_case, test_build_ids_old_layout);
	tcase_add_loop_test(decode_case, test_event_desc, 0, 2);
	tcase_add_test(decode_case, test_unknown_features);
	tcase_add_loop_test(tracing, test_tracing_data, 0, 2);
	tcase_add_test(tracing, test_tracing_old_version);
	tcase_add_test(tracing, test_tracing_damaged);
	tcase_add_loop_test(tracing, test_tracing_truncation_sweep, 0, 2);
	/* the sweeps are slow under the sanitizers and a loaded make -j */
	tcase_set_timeout(decode_case, 60);
	tcase_set_timeout(tracing, 60);
	tcase_add_loop_test(file, test_file_features, 0, 2);
	tcase_add_test(file, test_file_damaged);
	tcase_add_test(file, test_file_section_too_big);
	suite_add_tcase(s, names);
	suite_add_tcase(s, decode_case);
	suite_add_tcase(s, tracing);
	suite_add_tcase(s, file);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(features_suite());
	int failed;

	srunner_add_suite(runner, features_machine_suite());
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
