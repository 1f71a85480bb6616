/* hybrid_capture: writes synthetic perf.data files (file mode) of hardware
 * and hardware-cache events, for what this machine cannot record: it is a
 * VM without hardware counters, and not a hybrid Intel CPU. Also writes
 * the kallsyms file the samples' kernel addresses belong to.
 * tests/e2e/script_hybrid.sh runs `perf script` and `pystitch script` on
 * them.
 *
 *   hybrid_capture CAPTURE KALLSYMS cache|cache-more|hybrid128|hybrid|named
 *                  |cache-pipe|hybrid-pipe
 *
 * "cache", "cache-more": no extended PMU types, attrs of perf 6.1's size
 * (128 bytes): hardware and cache events of every kind perf's
 * evsel__hw_cache_name() spells, invalid ones too, with and without
 * modifiers; perf 6.1 reads them.
 * "hybrid128": the events of an Intel hybrid machine, each a legacy
 * hardware or cache event with the PMU type (cpu_core 4, cpu_atom 8) in
 * config's high 32 bits, in 128-byte attrs, which perf 6.1 reads.
 * "hybrid": the same as perf 6.3 and later write them (136-byte attrs, with
 * config3), which perf 6.1 refuses ("unsupported ABI").
 * "named": "hybrid" with the names perf record gave the events in an
 * EVENT_DESC feature (cpu_core/cycles:Pu/ ...).
 * "cache-pipe", "hybrid-pipe": "cache" and "hybrid" in pipe mode (perf
 * record -o -), where the attrs and features are records.
 * Each capture has a PMU_MAPPINGS feature; no capture but "named" names
 * its events.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/reader/builder.h"
#include "pystitch/pystitch.h"

#define TEXT 0xffffffff81000000ull
#define TEXT_LEN 0x200000ull

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81000000 T _text\n"
                               "ffffffff81000100 T do_syscall_64\n"
                               "ffffffff81000200 T vfs_read\n"
                               "ffffffff81000300 T copy_user_generic\n"
                               "ffffffff81200000 T _etext\n";

/* perf_event_attr's bitfield word */
#define F_DISABLED (1ull << 0)
#define F_INHERIT (1ull << 1)
#define F_EXCLUDE_USER (1ull << 4)
#define F_EXCLUDE_KERNEL (1ull << 5)
#define F_EXCLUDE_HV (1ull << 6)
#define F_MMAP (1ull << 8)
#define F_COMM (1ull << 9)
#define F_FREQ (1ull << 10)
#define F_TASK (1ull << 13)
#define F_PRECISE(n) ((uint64_t)(n) << 15)
#define F_SAMPLE_ID_ALL (1ull << 18)
#define F_EXCLUDE_HOST (1ull << 19)
#define F_EXCLUDE_GUEST (1ull << 20)

/* what perf record sets on every event of a run */
#define F_RECORD (F_DISABLED | F_INHERIT | F_FREQ | F_SAMPLE_ID_ALL)
/* :u, as perf record -e EVENT:u asks it (and excludes guests) */
#define F_USER (F_EXCLUDE_KERNEL | F_EXCLUDE_HV | F_EXCLUDE_GUEST)

#define PMU_CORE 4ull
#define PMU_ATOM 8ull
#define EXT(pmu) ((pmu) << 32)

/* cache config: type | op << 8 | result << 16 */
#define CACHE(type, op, result) ((uint64_t)(type) | (uint64_t)(op) << 8 | (uint64_t)(result) << 16)

struct event {
	uint32_t type;
	uint64_t config;
	uint64_t flags;
	const char *name; /* EVENT_DESC's, for "named" */
};

/* perf record -e cycles:Pu,L1-dcache-load-misses:u,LLC-loads:u on a hybrid
 * machine: each event once per core PMU (P is the highest precise_ip each
 * PMU takes: 3 on cpu_core, 3 on cpu_atom). */
static const struct event hybrid_events[] = {
	{ PERF_TYPE_HARDWARE, EXT(PMU_CORE) | PERF_COUNT_HW_CPU_CYCLES, F_USER | F_PRECISE(3),
	  "cpu_core/cycles:Pu/" },
	{ PERF_TYPE_HARDWARE, EXT(PMU_ATOM) | PERF_COUNT_HW_CPU_CYCLES, F_USER | F_PRECISE(3),
	  "cpu_atom/cycles:Pu/" },
	{ PERF_TYPE_HW_CACHE, EXT(PMU_CORE) | CACHE(0, 0, 1), F_USER,
	  "cpu_core/L1-dcache-load-misses:u/" },
	{ PERF_TYPE_HW_CACHE, EXT(PMU_ATOM) | CACHE(0, 0, 1), F_USER,
	  "cpu_atom/L1-dcache-load-misses:u/" },
	{ PERF_TYPE_HW_CACHE, EXT(PMU_CORE) | CACHE(2, 0, 0), F_USER, "cpu_core/LLC-loads:u/" },
	{ PERF_TYPE_HW_CACHE, EXT(PMU_ATOM) | CACHE(2, 0, 0), F_USER, "cpu_atom/LLC-loads:u/" },
	/* an extended type past the hardware events perf knows */
	{ PERF_TYPE_HARDWARE, EXT(PMU_CORE) | 10, F_USER, "cpu_core/event=0x3c/u" },
	/* the other modifiers: kernel only, and guests counted */
	{ PERF_TYPE_HARDWARE, EXT(PMU_ATOM) | PERF_COUNT_HW_INSTRUCTIONS,
	  F_EXCLUDE_USER | F_EXCLUDE_HV | F_PRECISE(1), "cpu_atom/instructions:kp/" },
};

/* Every cache type, op and result perf spells, the refs/misses forms, the
 * combinations it calls invalid, and values past its tables. */
static const struct event cache_events[] = {
	{ PERF_TYPE_HW_CACHE, CACHE(0, 0, 1), 0, NULL }, /* L1-dcache-load-misses */
	{ PERF_TYPE_HW_CACHE, CACHE(0, 1, 0), F_USER, NULL }, /* L1-dcache-stores:uH */
	{ PERF_TYPE_HW_CACHE, CACHE(1, 2, 1), F_EXCLUDE_GUEST,
	  NULL }, /* L1-icache-prefetch-misses */
	{ PERF_TYPE_HW_CACHE, CACHE(2, 0, 0), F_EXCLUDE_KERNEL, NULL }, /* LLC-loads:uh */
	{ PERF_TYPE_HW_CACHE, CACHE(3, 0, 1), F_PRECISE(2), NULL }, /* dTLB-load-misses:ppHG */
	{ PERF_TYPE_HW_CACHE, CACHE(4, 0, 1), F_USER, NULL }, /* iTLB-load-misses */
	{ PERF_TYPE_HW_CACHE, CACHE(5, 0, 0), 0, NULL }, /* branch-loads */
	{ PERF_TYPE_HW_CACHE, CACHE(6, 2, 1), F_EXCLUDE_HOST, NULL }, /* node-prefetch-misses:G */
};

static const struct event cache_more_events[] = {
	{ PERF_TYPE_HW_CACHE, CACHE(1, 1, 0), 0, NULL }, /* L1-icache stores: invalid */
	{ PERF_TYPE_HW_CACHE, CACHE(5, 2, 1), F_USER, NULL }, /* branch prefetches: invalid */
	{ PERF_TYPE_HW_CACHE, CACHE(7, 0, 0), 0, NULL }, /* no cache type 7 */
	{ PERF_TYPE_HW_CACHE, CACHE(0, 3, 0), 0, NULL }, /* no op 3 */
	{ PERF_TYPE_HW_CACHE, CACHE(0, 0, 2), F_USER, NULL }, /* no result 2 */
	{ PERF_TYPE_HW_CACHE, CACHE(3, 1, 1) | (1ull << 24), 0, NULL }, /* bits past result */
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, F_USER | F_PRECISE(1), NULL },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES + 1, F_EXCLUDE_USER, NULL },
};

static const struct bld_sid no_sid = { .pid = (uint32_t)-1, .tid = (uint32_t)-1 };

static void kernel_mmap(struct bld_buf *b, uint64_t sample_type)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);

	bld_u32(b, (uint32_t)-1);
	bld_u32(b, 0);
	bld_u64(b, TEXT);
	bld_u64(b, TEXT_LEN);
	bld_u64(b, TEXT);
	bld_str(b, "[kernel.kallsyms]_text", 0);
	bld_sample_id(b, sample_type, &no_sid);
	bld_rec_end(b, pos);
}

static void comm(struct bld_buf *b, uint64_t sample_type, uint32_t pid, const char *name)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	struct bld_sid sid = { .pid = pid, .tid = pid, .time = 1000 };

	bld_u32(b, pid);
	bld_u32(b, pid);
	bld_str(b, name, 0);
	bld_sample_id(b, sample_type, &sid);
	bld_rec_end(b, pos);
}

static void add_pmu_mappings(struct bld_file *file)
{
	static const struct {
		uint32_t type;
		const char *name;
	} pmus[] = { { 4, "cpu_core" },   { 8, "cpu_atom" },   { 1, "software" },
		     { 2, "tracepoint" }, { 5, "breakpoint" }, { 10, "uprobe" },
		     { 9, "kprobe" },     { 11, "power" },     { 12, "msr" } };
	struct bld_buf *b = bld_file_feature(file, PS_FEAT_PMU_MAPPINGS);

	bld_u32(b, sizeof(pmus) / sizeof(pmus[0]));
	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
		bld_u32(b, pmus[i].type);
		bld_header_string(b, pmus[i].name);
	}
}

static void add_event_desc(struct bld_file *file)
{
	struct bld_buf *b = bld_file_feature(file, PS_FEAT_EVENT_DESC);

	bld_u32(b, (uint32_t)file->nr_attrs);
	bld_u32(b, file->attrs[0].size);
	for (size_t i = 0; i < file->nr_attrs; i++) {
		bld_attr_bytes(b, &file->attrs[i]);
		bld_u32(b, (uint32_t)file->attrs[i].nr_ids);
		bld_header_string(b, hybrid_events[i].name);
		for (size_t j = 0; j < file->attrs[i].nr_ids; j++)
			bld_u64(b, file->attrs[i].ids[j]);
	}
}

int main(int argc, char **argv)
{
	static uint64_t ids[BLD_MAX_ATTRS];
	const struct event *events;
	size_t nr_events;
	struct bld_file file;
	struct bld_buf image;
	uint64_t sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	                       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
	uint32_t attr_size = 128;
	uint64_t t = 3000000000ull;
	bool pipe = false;
	FILE *out;

	if (argc != 4) {
	usage:
		fprintf(stderr, "usage: hybrid_capture CAPTURE KALLSYMS "
		                "cache|cache-more|hybrid128|hybrid|named|cache-pipe|hybrid-pipe\n");
		return 2;
	}
	if (strcmp(argv[3], "cache-pipe") == 0 || strcmp(argv[3], "hybrid-pipe") == 0) {
		pipe = true;
		argv[3][strlen(argv[3]) - strlen("-pipe")] = '\0';
	}
	if (strcmp(argv[3], "cache") == 0) {
		events = cache_events;
		nr_events = sizeof(cache_events) / sizeof(cache_events[0]);
	} else if (strcmp(argv[3], "cache-more") == 0) {
		events = cache_more_events;
		nr_events = sizeof(cache_more_events) / sizeof(cache_more_events[0]);
	} else if (strcmp(argv[3], "hybrid128") == 0 || strcmp(argv[3], "hybrid") == 0 ||
	           strcmp(argv[3], "named") == 0) {
		events = hybrid_events;
		nr_events = sizeof(hybrid_events) / sizeof(hybrid_events[0]);
		if (strcmp(argv[3], "hybrid128") != 0)
			attr_size = 136; /* perf 6.3 and later */
	} else {
		goto usage;
	}

	bld_file_init(&file, false);
	for (size_t i = 0; i < nr_events; i++) {
		struct bld_attr attr = {
			.type = events[i].type,
			.size = attr_size,
			.config = events[i].config,
			.sample_period = 4000,
			.sample_type = sample_type,
			.flags = F_RECORD | events[i].flags,
			.ids = &ids[i],
			.nr_ids = 1,
		};

		ids[i] = 100 + i;
		if (i == 0)
			attr.flags |= F_MMAP | F_COMM | F_TASK;
		bld_file_add_attr(&file, &attr);
	}
	bld_header_string(bld_file_feature(&file, PS_FEAT_HOSTNAME), "pystitch-test");
	bld_header_string(bld_file_feature(&file, PS_FEAT_OSRELEASE), "6.6.0-test");
	bld_header_string(bld_file_feature(&file, PS_FEAT_ARCH), "x86_64");
	add_pmu_mappings(&file);
	if (strcmp(argv[3], "named") == 0)
		add_event_desc(&file);

	kernel_mmap(&file.data, sample_type);
	comm(&file.data, sample_type, 200, "work");
	/* two samples of each event, in user space (where :u counts) and in
	 * the kernel, on a cpu_core CPU and on a cpu_atom CPU */
	for (size_t round = 0; round < 2; round++) {
		for (size_t i = 0; i < nr_events; i++) {
			struct bld_sample s = bld_sample_empty();
			bool user = (events[i].flags & F_EXCLUDE_KERNEL) != 0;

			s.identifier = ids[i];
			s.ip = user ? 0x401000 + 0x10 * i : TEXT + 0x104 + 0x100 * (i % 3);
			s.pid = 200;
			s.tid = 200;
			s.time = t += 1000000;
			s.cpu = (events[i].config >> 32) == PMU_ATOM ? 12 : (uint32_t)round;
			s.period = 4000 + 100 * i + round;
			bld_sample(&file.data, &file.attrs[i],
			           user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL, &s);
		}
	}

	bld_buf_init(&image, false);
	if (pipe) {
		/* perf record -o -: the header, then the attrs and features as
		 * records before the data */
		bld_pipe_header(&image);
		for (size_t i = 0; i < file.nr_attrs; i++)
			bld_pipe_attr(&image, &file.attrs[i]);
		for (unsigned bit = 0; bit < BLD_NR_FEATURES; bit++)
			if (file.has_feature[bit])
				bld_pipe_feature(&image, bit, &file.features[bit]);
		bld_bytes(&image, file.data.data, file.data.len);
	} else {
		bld_file_assemble(&file, &image, NULL);
	}
	out = fopen(argv[1], "wb");
	if (!out || fwrite(image.data, 1, image.len, out) != image.len || fclose(out)) {
		perror(argv[1]);
		return 1;
	}
	out = fopen(argv[2], "w");
	if (!out || fputs(kallsyms, out) < 0 || fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	bld_buf_free(&image);
	bld_file_free(&file);
	return 0;
}
