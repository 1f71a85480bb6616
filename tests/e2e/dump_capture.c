/* dump_capture: writes synthetic perf.data files (file mode) for what
 * `perf report -D` prints that this machine cannot record, and the kallsyms
 * file their kernel addresses belong to. tests/e2e/dump_synthetic.sh
 * compares `perf report -D --kallsyms` with `pystitch dump --kallsyms` on
 * each, byte for byte.
 *
 *   dump_capture CAPTURE KALLSYMS places|unordered
 *
 * places: samples whose thread and DSO lines perf finds in every way it
 * can: a kernel address past _etext before and after perf has loaded the
 * kernel map (which re-sizes it to the kernel's symbols), an address no
 * map holds, the cpumodes perf does not look up (hypervisor, guest,
 * unknown: "[hypervisor]"), user addresses in executable anonymous memory
 * mapped by MMAP2 and by the older MMAP (both named /tmp/perf-PID.map),
 * in a data mapping ("//anon"), in no mapping, a thread seen first in a
 * sample (":tid") and PERF_SAMPLE_READ groups, which perf delivers once
 * per counter that moved.
 * unordered: an event without sample_id_all, as kernels before 2.6.38
 * recorded it, and without PERF_SAMPLE_TID: perf reads the file in the
 * order it is stored, says so, prints "-1 -1 " before every record but
 * samples, and leaves FINISHED_ROUND to its default handler.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "../unit/reader/builder.h"
#include "pystitch/pystitch.h"

#define TEXT 0xffffffff81000000ull
#define TEXT_LEN 0x200000ull /* _text to _etext, as perf record maps it */
#define INIT 0xffffffff81300000ull /* .init.text, past _etext */
#define USER_EXE 0x400000ull
#define USER_JIT 0x7f0000000000ull
#define USER_JIT_OLD 0x7f0000100000ull
#define USER_DATA 0x7f0000200000ull

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81000000 T _text\n"
                               "ffffffff81000100 T do_idle\n"
                               "ffffffff81000400 T vfs_read\n"
                               "ffffffff81200000 T _etext\n"
                               "ffffffff81300000 T _sinittext\n"
                               "ffffffff81300000 T start_kernel\n"
                               "ffffffff81301000 T _einittext\n";

/* disabled, inherit, mmap, comm, task, sample_id_all, exclude_guest */
#define FLAGS ((1ull << 0) | (1ull << 1) | (1ull << 8) | (1ull << 9) | (1ull << 13) | (1ull << 20))
#define SAMPLE_ID_ALL (1ull << 18)

static void mmap_record(struct bld_buf *b, uint64_t sample_id_type, uint16_t misc, int32_t pid,
                        uint64_t start, uint64_t len, uint64_t pgoff, const char *name)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP, misc);
	struct bld_sid sid = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .time = 500 };

	bld_u32(b, (uint32_t)pid);
	bld_u32(b, (uint32_t)(pid < 0 ? 0 : pid));
	bld_u64(b, start);
	bld_u64(b, len);
	bld_u64(b, pgoff);
	bld_str(b, name, 0);
	if (sample_id_type)
		bld_sample_id(b, sample_id_type, &sid);
	bld_rec_end(b, pos);
}

static void mmap2_record(struct bld_buf *b, uint64_t sample_id_type, int32_t pid, uint64_t start,
                         uint64_t len, uint32_t prot, uint32_t flags, const char *name)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	struct bld_sid sid = { .pid = (uint32_t)pid, .tid = (uint32_t)pid, .time = 600 };

	bld_u32(b, (uint32_t)pid);
	bld_u32(b, (uint32_t)pid);
	bld_u64(b, start);
	bld_u64(b, len);
	bld_u64(b, 0); /* pgoff */
	bld_u32(b, 0); /* maj */
	bld_u32(b, 0); /* min */
	bld_u64(b, 0); /* ino */
	bld_u64(b, 0); /* ino_generation */
	bld_u32(b, prot);
	bld_u32(b, flags);
	bld_str(b, name, 0);
	bld_sample_id(b, sample_id_type, &sid);
	bld_rec_end(b, pos);
}

static void comm_record(struct bld_buf *b, uint64_t sample_id_type, uint32_t pid, uint32_t tid,
                        const char *name)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	struct bld_sid sid = { .pid = pid, .tid = tid, .time = 700 };

	bld_u32(b, pid);
	bld_u32(b, tid);
	bld_str(b, name, 0);
	if (sample_id_type)
		bld_sample_id(b, sample_id_type, &sid);
	bld_rec_end(b, pos);
}

static void finished_round(struct bld_buf *b)
{
	bld_rec_end(b, bld_rec_begin(b, PS_RECORD_FINISHED_ROUND, 0));
}

static void one_sample(struct bld_buf *b, const struct bld_attr *attr, uint16_t misc, uint32_t pid,
                       uint32_t tid, uint64_t *t, uint64_t ip)
{
	struct bld_sample s = bld_sample_empty();

	s.ip = ip;
	s.pid = pid;
	s.tid = tid;
	s.time = *t += 1000000;
	s.cpu = tid % 2;
	s.period = 250000;
	s.id = attr->ids ? attr->ids[0] : 0;
	bld_sample(b, attr, misc, &s);
}

/* A sample of the group leader reading both counters: perf delivers it
 * for each counter whose value moved since the group's last sample. */
static void read_sample(struct bld_buf *b, const struct bld_attr *attr, uint64_t *t,
                        uint64_t leader, uint64_t member)
{
	struct bld_read_value values[] = { { leader, 21, 0 }, { member, 22, 0 } };
	struct bld_sample s = bld_sample_empty();

	s.ip = USER_EXE + 0x80;
	s.pid = 300;
	s.tid = 300;
	s.time = *t += 1000000;
	s.cpu = 0;
	s.period = 250000;
	s.id = 21;
	s.read_nr = 2;
	s.read_values = values;
	bld_sample(b, attr, PERF_RECORD_MISC_USER, &s);
}

static void places(struct bld_file *file)
{
	static const uint64_t ids[] = { 7 };
	static const uint64_t group_ids[] = { 21 };
	static const uint64_t member_ids[] = { 22 };
	struct bld_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = 128,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 250000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		               PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
		.flags = FLAGS | SAMPLE_ID_ALL,
		.ids = ids,
		.nr_ids = 1,
	};
	/* '{cpu-clock,task-clock}:S': the leader samples both counters */
	struct bld_attr group = attr, member = attr;
	uint64_t st = attr.sample_type, t = 2000000000ull;
	struct bld_buf *b = &file->data;

	group.sample_type |= PERF_SAMPLE_READ;
	group.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	group.ids = group_ids;
	member.sample_type = group.sample_type;
	member.read_format = group.read_format;
	member.config = PERF_COUNT_SW_TASK_CLOCK;
	member.ids = member_ids;
	bld_file_add_attr(file, &attr);
	bld_file_add_attr(file, &group);
	bld_file_add_attr(file, &member);

	mmap_record(b, st, PERF_RECORD_MISC_KERNEL, -1, TEXT, TEXT_LEN, TEXT,
	            "[kernel.kallsyms]_text");
	comm_record(b, st, 100, 100, "work");
	mmap2_record(b, st, 100, USER_EXE, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
	             "/usr/bin/work");
	mmap2_record(b, st, 100, USER_JIT, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE, "//anon");
	/* the older MMAP: executable unless its data bit is set */
	mmap_record(b, st, PERF_RECORD_MISC_USER, 100, USER_JIT_OLD, 0x1000, 0, "//anon");
	mmap2_record(b, st, 100, USER_DATA, 0x1000, PROT_READ | PROT_WRITE, MAP_PRIVATE, "//anon");
	comm_record(b, st, 300, 300, "reader");
	mmap2_record(b, st, 300, USER_EXE, 0x1000, PROT_READ | PROT_EXEC, MAP_PRIVATE,
	             "/usr/bin/reader");
	finished_round(b);

	/* past _etext: no map holds it until perf has loaded the kernel's */
	one_sample(b, &attr, PERF_RECORD_MISC_KERNEL, 0, 0, &t, INIT + 0x10);
	one_sample(b, &attr, PERF_RECORD_MISC_KERNEL, 0, 0, &t, TEXT + 0x104);
	one_sample(b, &attr, PERF_RECORD_MISC_KERNEL, 100, 100, &t, INIT + 0x10);
	one_sample(b, &attr, PERF_RECORD_MISC_KERNEL, 100, 100, &t, 0xffffffff90000000ull);
	one_sample(b, &attr, PERF_RECORD_MISC_HYPERVISOR, 100, 100, &t, TEXT + 0x104);
	one_sample(b, &attr, PERF_RECORD_MISC_GUEST_KERNEL, 100, 100, &t, TEXT + 0x104);
	one_sample(b, &attr, PERF_RECORD_MISC_GUEST_USER, 100, 100, &t, USER_EXE + 0x10);
	one_sample(b, &attr, PERF_RECORD_MISC_CPUMODE_UNKNOWN, 100, 100, &t, USER_EXE + 0x10);
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 100, 100, &t, USER_EXE + 0x10);
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 100, 100, &t, USER_JIT + 0x20);
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 100, 100, &t, USER_JIT_OLD + 0x20);
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 100, 100, &t, USER_DATA + 0x20);
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 100, 100, &t, 0x10);
	/* a thread of the process never named: ":101", in its maps */
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 100, 101, &t, USER_EXE + 0x10);
	/* a process never seen: ":400", no maps */
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 400, 400, &t, USER_EXE + 0x10);
	/* both counters moved, then only the leader, then neither */
	read_sample(b, &group, &t, 1000, 2000);
	read_sample(b, &group, &t, 1500, 2000);
	read_sample(b, &group, &t, 1500, 2000);
	finished_round(b);
}

static void unordered(struct bld_file *file)
{
	static const uint64_t ids[] = { 9 };
	struct bld_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = 128,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 250000,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD,
		.flags = FLAGS,
		.ids = ids,
		.nr_ids = 1,
	};
	uint64_t t = 3000000000ull;
	struct bld_buf *b = &file->data;

	bld_file_add_attr(file, &attr);
	mmap_record(b, 0, PERF_RECORD_MISC_KERNEL, -1, TEXT, TEXT_LEN, TEXT,
	            "[kernel.kallsyms]_text");
	comm_record(b, 0, 100, 100, "work");
	/* samples without a pid: perf's thread -1 */
	one_sample(b, &attr, PERF_RECORD_MISC_KERNEL, 0, 0, &t, TEXT + 0x404);
	one_sample(b, &attr, PERF_RECORD_MISC_USER, 0, 0, &t, USER_EXE + 0x10);
	finished_round(b);
	one_sample(b, &attr, PERF_RECORD_MISC_KERNEL, 0, 0, &t, INIT + 0x10);
	finished_round(b);
}

int main(int argc, char **argv)
{
	struct bld_file file;
	struct bld_buf image;
	FILE *out;

	/* KIND-be: the same written by a big-endian machine */
	size_t kind_len = argc == 4 ? strlen(argv[3]) : 0;
	bool be = kind_len > 3 && strcmp(argv[3] + kind_len - 3, "-be") == 0;

	if (be)
		argv[3][kind_len - 3] = 0;
	if (argc != 4 || (strcmp(argv[3], "places") != 0 && strcmp(argv[3], "unordered") != 0)) {
		fprintf(stderr, "usage: dump_capture CAPTURE KALLSYMS "
		                "places|unordered|places-be|unordered-be\n");
		return 2;
	}
	bld_file_init(&file, be);
	bld_header_string(bld_file_feature(&file, PS_FEAT_HOSTNAME), "pystitch-test");
	bld_header_string(bld_file_feature(&file, PS_FEAT_OSRELEASE), "6.1.0-test");
	bld_header_string(bld_file_feature(&file, PS_FEAT_ARCH), "x86_64");
	if (strcmp(argv[3], "places") == 0)
		places(&file);
	else
		unordered(&file);

	bld_buf_init(&image, be);
	bld_file_assemble(&file, &image, NULL);
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
