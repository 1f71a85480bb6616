/* kernel_capture: writes a synthetic perf.data (file mode) of kernel
 * samples, for what this machine cannot record: kernel-module maps (it has
 * no modules), idle-task samples without a COMM (it is never idle), kernel
 * frames in init text past _etext, on a fixed-period event (-c N). Also
 * writes the kallsyms file the capture's kernel addresses belong to.
 * tests/e2e/script_kernel.sh compares `perf script --kallsyms` with
 * `pystitch script --kallsyms` on the pair.
 *
 *   kernel_capture CAPTURE KALLSYMS [guest|modules|bpf]
 *
 * "guest": the event counts in guests too (exclude_guest clear), which
 * perf's name for an event without EVENT_DESC shows as cpu-clock:HG.
 * "modules": the first samples are in modules, before any in the
 * kernel's own text, which decides where perf takes their symbols from
 * (a module's .ko file under --symfs; without one, kallsyms only when it
 * had loaded the kernel's map before).
 * "bpf": samples of a BPF output event (the data bpf_perf_event_output()
 * gives, which this machine cannot record without a BPF program) beside
 * cpu-clock samples, for -F bpf-output.
 * "poke": TEXT_POKE records (perf record --kcore, which needs /proc/kcore)
 * at addresses in modules, in the kernel's text, in init text past
 * _etext and past every symbol, before the first sample and after, for
 * the kernel symbol perf prints after the address. perf loads the map a
 * record's new bytes go into (machine__process_text_poke()), so the first
 * records load modules before the kernel's map (perf then leaves out the
 * first kallsyms symbol of each), and the first load of a module without
 * a .ko fails (perf report -D prints before loading; perf script after,
 * unless there are no new bytes).
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/reader/builder.h"
#include "pystitch/pystitch.h"

#define SAMPLE_PERIOD 250000
#define TEXT 0xffffffff81000000ull
#define TEXT_LEN 0x200000ull /* _text to _etext, as perf record maps it */
#define INIT 0xffffffff81300000ull /* .init.text, past _etext */
#define MOD_FOO 0xffffffffc0000000ull
#define MOD_BAZ 0xffffffffc0100000ull
#define MOD_QUX 0xffffffffc0200000ull
#define MOD_ZST 0xffffffffc0300000ull
#define MOD_GZ 0xffffffffc0500000ull

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81000000 T _text\n"
                               "ffffffff81000100 T do_idle\n"
                               "ffffffff81000200 T cpu_startup_entry\n"
                               "ffffffff81000300 t rest_init\n"
                               "ffffffff81000400 T vfs_read\n"
                               "ffffffff81200000 T _etext\n"
                               "ffffffff81300000 T _sinittext\n"
                               "ffffffff81300000 T start_kernel\n"
                               "ffffffff81300200 T x86_64_start_kernel\n"
                               "ffffffff81301000 T _einittext\n"
                               "ffffffff81400000 D init_task\n"
                               "ffffffff81500000 B __bss_start\n"
                               "ffffffffc0000000 t foo_read\t[foo_bar]\n"
                               "ffffffffc0000100 t foo_write\t[foo_bar]\n"
                               "ffffffffc0100000 t baz_poll\t[baz]\n"
                               "ffffffffc0200000 t qux_init\t[qux-mod]\n"
                               "ffffffffc0300000 t zst_fn\t[zst_mod]\n"
                               "ffffffffc0500000 t gz_fn\t[gz_mod]\n";

static const struct bld_sid no_sid = { .pid = 0, .tid = 0, .cpu = 0 };

static void kernel_mmap(struct bld_buf *b, uint64_t sample_type, uint64_t start, uint64_t len,
                        uint64_t pgoff, const char *name)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);

	bld_u32(b, (uint32_t)-1);
	bld_u32(b, 0);
	bld_u64(b, start);
	bld_u64(b, len);
	bld_u64(b, pgoff);
	bld_str(b, name, 0);
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

/* A kernel sample at time t: the callchain is the kernel marker and ips
 * (ips[0] the sampled ip). */
static void sample(struct bld_buf *b, const struct bld_attr *attr, uint32_t pid, uint32_t tid,
                   uint64_t t, const uint64_t *ips, size_t nr)
{
	uint64_t chain[16];
	struct bld_sample s = bld_sample_empty();

	chain[0] = (uint64_t)PERF_CONTEXT_KERNEL;
	memcpy(chain + 1, ips, nr * sizeof(*ips));
	s.ip = ips[0];
	s.pid = pid;
	s.tid = tid;
	s.time = t;
	s.cpu = tid % 2;
	s.callchain = chain;
	s.callchain_nr = nr + 1;
	/* written only when the event samples them (the mem captures): an
	 * address, a weight whose struct form has an instruction latency
	 * in its second half-word, the data source of a load hitting L1 or
	 * missing to DRAM, with the TLB and snoop bits varied */
	s.addr = 0xffff888100000000ull + (t % 7919) * 64;
	s.weight = (t / 1000000 % 500) | ((t / 1000000 % 37) << 32) | (3ull << 48);
	s.data_src = (t / 1000000 % 2) ? 0x68100142ull : 0x29080842ull;
	bld_sample(b, attr, PERF_RECORD_MISC_KERNEL, &s);
}

/* A TEXT_POKE record at addr: old_len bytes replaced by new_len others. */
static void text_poke(struct bld_buf *b, uint64_t sample_type, uint64_t t, uint64_t addr,
                      uint16_t old_len, uint16_t new_len)
{
	static const uint8_t pattern[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xe9, 0x12, 0x34,
		                           0x56, 0x78, 0xe8, 0xaa, 0xbb, 0xcc, 0xdd, 0x90,
		                           0xcc, 0xc3, 0x66, 0x90, 0x48, 0x89, 0xe5, 0x55 };
	uint8_t bytes[2 * UINT16_MAX];
	size_t pos = bld_rec_begin(b, PERF_RECORD_TEXT_POKE, PERF_RECORD_MISC_KERNEL);
	struct bld_sid sid = { .pid = (uint32_t)-1, .tid = (uint32_t)-1, .time = t, .cpu = 1 };

	for (size_t i = 0; i < (size_t)old_len + new_len; i++)
		bytes[i] = pattern[i % sizeof(pattern)];

	bld_u64(b, addr);
	bld_u16(b, old_len);
	bld_u16(b, new_len);
	bld_bytes(b, bytes, (size_t)old_len + new_len);
	bld_align(b, 8);
	bld_sample_id(b, sample_type, &sid);
	bld_rec_end(b, pos);
}

/* The bpf-output samples: strings and binary data, each padded as the
 * kernel pads raw data (the size field and data end on 8 bytes). */
static void bpf_samples(struct bld_buf *b, const struct bld_attr *bpf, const struct bld_attr *clock,
                        uint64_t t)
{
	static const struct {
		uint32_t size;
		const char data[48]; /* zeros past the literal */
	} outputs[] = {
		/* each holds size bytes of data (the rest zeros) */
		{ 12, "hello world" }, /* a string */
		{ 20, "\x01\x02\xff\x80\x7f\x00\x10 ~AZ\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" },
		{ 12, "abc\0def\0xyz" }, /* text after its NUL: no string */
		{ 20, "0123456789abcdefghij" }, /* no NUL: no string */
		{ 4, "\0\0\0" }, /* an empty string */
		{ 12, "tab\there\0\0" }, /* a tab is not printable */
		{ 12, "caf\xe9 cr\xe8me" }, /* Latin-1 is, to perf */
		{ 44, "The quick brown fox jumps over the lazy dog" },
	};
	const uint64_t ip = TEXT + 0x404;

	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
		struct bld_sample s = bld_sample_empty();

		s.ip = ip;
		s.pid = 100;
		s.tid = 100;
		s.time = t += 1000000;
		s.cpu = (uint32_t)i % 2;
		s.period = 1;
		s.raw_size = outputs[i].size;
		s.raw = (const uint8_t *)outputs[i].data;
		s.identifier = bpf->ids[0];
		bld_sample(b, bpf, PERF_RECORD_MISC_KERNEL, &s);
		/* a cpu-clock sample between: bpf-output prints nothing there */
		s.time = t += 1000000;
		s.ip = TEXT + 0x104;
		s.raw_size = 0;
		s.raw = NULL;
		s.identifier = clock->ids[0];
		bld_sample(b, clock, PERF_RECORD_MISC_KERNEL, &s);
	}
}

int main(int argc, char **argv)
{
	/* perf record -c 250000 -e cpu-clock -g: no PERF_SAMPLE_PERIOD */
	struct bld_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = 128,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = SAMPLE_PERIOD,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		               PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_CPU,
		/* disabled, inherit, mmap, comm, task, sample_id_all,
		 * exclude_guest (so perf, without EVENT_DESC, names it plainly
		 * "cpu-clock", as pystitch does) */
		.flags = (1ull << 0) | (1ull << 1) | (1ull << 8) | (1ull << 9) | (1ull << 13) |
		         (1ull << 18) | (1ull << 20),
	};
	static const uint64_t ids[] = { 7 };
	struct bld_file file;
	struct bld_buf image, *b;
	uint64_t t = 2000000000ull;
	FILE *out;

	bool modules_first = argc == 4 && strcmp(argv[3], "modules") == 0;
	bool bpf = argc == 4 && strcmp(argv[3], "bpf") == 0;
	bool poke = argc == 4 && strcmp(argv[3], "poke") == 0;
	/* a memory-sampling event, as perf mem records: addresses, weights
	 * (plain, or the struct with instruction latencies) and data sources */
	bool mem = argc == 4 && strcmp(argv[3], "mem") == 0;
	bool mem_struct = argc == 4 && strcmp(argv[3], "mem-struct") == 0;
	/* the plain capture as a big-endian machine writes it */
	bool be = argc == 4 && strcmp(argv[3], "be") == 0;
	/* perf's bpf-output event, written to by a BPF program */
	struct bld_attr bpf_attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = 128,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		               PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW |
		               PERF_SAMPLE_IDENTIFIER,
		.flags = (1ull << 0) | (1ull << 8) | (1ull << 9) | (1ull << 18) | (1ull << 20),
	};
	static const uint64_t bpf_ids[] = { 8 };

	if (argc < 3 || argc > 4 ||
	    (argc == 4 && strcmp(argv[3], "guest") != 0 && !modules_first && !bpf && !mem &&
	     !mem_struct && !be && !poke)) {
		fprintf(stderr, "usage: kernel_capture CAPTURE KALLSYMS "
		                "[guest|modules|bpf|mem|mem-struct|be|poke]\n");
		return 2;
	}
	if (mem || mem_struct)
		attr.sample_type |= PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |
		                    (mem ? PERF_SAMPLE_WEIGHT : PERF_SAMPLE_WEIGHT_STRUCT);
	if (argc == 4 && strcmp(argv[3], "guest") == 0)
		attr.flags &= ~(1ull << 20);
	if (bpf) {
		/* both events' samples carry their ids */
		attr.sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_PERIOD;
		attr.sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
		bpf_attr.ids = bpf_ids;
		bpf_attr.nr_ids = 1;
	}
	attr.ids = ids;
	attr.nr_ids = 1;
	bld_file_init(&file, be);
	bld_file_add_attr(&file, &attr);
	if (bpf)
		bld_file_add_attr(&file, &bpf_attr);
	bld_header_string(bld_file_feature(&file, PS_FEAT_HOSTNAME), "pystitch-test");
	bld_header_string(bld_file_feature(&file, PS_FEAT_OSRELEASE), "6.1.0-test");
	bld_header_string(bld_file_feature(&file, PS_FEAT_ARCH), "x86_64");
	b = &file.data;

	kernel_mmap(b, attr.sample_type, TEXT, TEXT_LEN, TEXT, "[kernel.kallsyms]_text");
	kernel_mmap(b, attr.sample_type, MOD_FOO, 0x10000, 0,
	            "/lib/modules/6.1.0-test/kernel/fs/foo/foo-bar.ko.xz");
	kernel_mmap(b, attr.sample_type, MOD_BAZ, 0x10000, 0,
	            "/lib/modules/6.1.0-test/kernel/drivers/baz.ko");
	kernel_mmap(b, attr.sample_type, MOD_QUX, 0x10000, 0, "[qux-mod]");
	/* zstd is not among the compressions perf 6.1 knows: no module */
	kernel_mmap(b, attr.sample_type, MOD_ZST, 0x10000, 0,
	            "/lib/modules/6.1.0-test/kernel/zst-mod.ko.zst");
	kernel_mmap(b, attr.sample_type, MOD_GZ, 0x10000, 0,
	            "/lib/modules/6.1.0-test/kernel/net/gz-mod.ko.gz");
	comm(b, attr.sample_type, 100, "work");
	if (bpf) {
		bpf_samples(b, &bpf_attr, &attr, t);
		goto write;
	}

	{
		/* the idle task: no COMM, an idle stack down to init text */
		const uint64_t idle[] = { TEXT + 0x104, TEXT + 0x210, TEXT + 0x3cc, INIT + 0x13d,
			                  INIT + 0x200 + 0xd1 };
		/* foo + 0x400: past the functions of the foo-bar.ko the tests
		 * build, within foo_write by kallsyms */
		const uint64_t read_foo[] = { MOD_FOO + 0x24, MOD_FOO + 0x400, TEXT + 0x450 };
		const uint64_t read_baz[] = { MOD_BAZ + 0x8, MOD_FOO + 0x130, TEXT + 0x400 };
		const uint64_t qux[] = { MOD_QUX + 0x10, MOD_ZST + 0x4, INIT + 0x1000 + 0x10 };
		const uint64_t outside[] = { TEXT + 0x500, INIT + 0x5000, 0xffffffff81600010ull,
			                     0xffffffffc0400000ull };
		const uint64_t baz_alone[] = { MOD_BAZ + 0x2c, MOD_BAZ + 0x10 };
		const uint64_t foo_alone[] = { MOD_FOO + 0x104 };
		const uint64_t gz[] = { MOD_GZ + 0x14, MOD_FOO + 0x104, TEXT + 0x400 };

		/* before any sample, then after each round of them */
		const uint64_t pokes[] = {
			MOD_FOO + 0x104, MOD_QUX + 0x10,        TEXT + 0x404, MOD_BAZ + 0x8,
			INIT + 0x210,    0xffffffff81600010ull, TEXT,         MOD_QUX + 0x10,
			MOD_GZ + 0x14
		};

		if (poke)
			for (size_t i = 0; i < sizeof(pokes) / sizeof(pokes[0]); i++)
				/* no new bytes at gz: nothing loads its map first */
				text_poke(b, attr.sample_type, t += 1000, pokes[i],
				          (uint16_t)(i % 6), (uint16_t)(i == 8 ? 0 : 5 + i * 3));
		if (modules_first) {
			sample(b, &attr, 100, 100, t += 1000000, baz_alone, 2);
			sample(b, &attr, 100, 100, t += 1000000, foo_alone, 1);
		}
		for (int i = 0; i < 3; i++) {
			sample(b, &attr, 0, 0, t += 1000000, idle, 5);
			sample(b, &attr, 100, 100, t += 1000000, read_foo, 3);
			sample(b, &attr, 100, 100, t += 1000000, read_baz, 3);
			/* a thread never named: perf's ":tid" */
			sample(b, &attr, 100, 101, t += 1000000, qux, 3);
			sample(b, &attr, 100, 100, t += 1000000, gz, 3);
			sample(b, &attr, 0, 0, t += 1000000, outside, 4);
			if (poke)
				text_poke(b, attr.sample_type, t += 1000, pokes[i * 3],
				          (uint16_t)(i + 1), 5);
		}
	}

write:
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
