/* The synthetic capture of perf record -b (every branch the LBR holds, no
 * call graph) of lbr_capture.h, for perf script's -F brstack, brstacksym,
 * brstackoff and brstackinsn: samples of tests/programs/deep at the
 * bottom of its recursion whose branch stacks hold its real calls (so
 * that the code between two branches is the code deep runs), and
 * branches perf names otherwise: from the kernel (a system call's return),
 * into and out of a library no sample is in until a later one, to an
 * address no map holds, and every kind of flags.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "lbr_capture.h"
#include "pystitch/pystitch.h"

#define ANY_SAMPLE_TYPE                                                                            \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_BRANCH_STACK)
#define ID_ANY 21
#define LIB_BASE 0x7f1234560000ull

/* the branch_flags bits perf reads */
#define F_MISPRED 1ull
#define F_PREDICTED 2ull
#define F_IN_TX 4ull
#define F_ABORT 8ull
#define F_CYCLES(n) ((uint64_t)(n) << 4)
#define F_TYPE(t) ((uint64_t)(t) << 20)
#define F_NEW_TYPE(t) ((uint64_t)(t) << 26)

static const uint64_t ids_any[] = { ID_ANY };

static const struct bld_attr any_attr = {
	.type = PERF_TYPE_HARDWARE,
	.size = 128,
	.config = PERF_COUNT_HW_CPU_CYCLES,
	.sample_period = 100003,
	.sample_type = ANY_SAMPLE_TYPE,
	.flags = (1ull << 0) | (1ull << 1) | (1ull << 8) | (1ull << 9) | (1ull << 13) |
	         (1ull << 18) | (1ull << 20) | (1ull << 23),
	.branch_sample_type = PERF_SAMPLE_BRANCH_ANY,
	.ids = ids_any,
	.nr_ids = 1,
};

static uint64_t in_deep(uint64_t vaddr)
{
	return LBR_BASE + vaddr;
}

static uint64_t in_lib(uint64_t vaddr)
{
	return LIB_BASE + vaddr;
}

static void mmap2(struct bld_buf *b, uint64_t start, uint64_t len, uint64_t pgoff, uint64_t ino,
                  const char *path, uint64_t t)
{
	struct bld_sid sid = { .pid = LBR_PID, .tid = LBR_PID, .time = t, .id = ID_ANY };
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);

	bld_u32(b, LBR_PID);
	bld_u32(b, LBR_PID);
	bld_u64(b, start);
	bld_u64(b, len);
	bld_u64(b, pgoff);
	bld_u32(b, 8); /* maj, min, ino, ino_generation */
	bld_u32(b, 1);
	bld_u64(b, ino);
	bld_u64(b, 0);
	bld_u32(b, 5); /* PROT_READ | PROT_EXEC */
	bld_u32(b, 2); /* MAP_PRIVATE */
	bld_str(b, path, 0);
	bld_sample_id(b, ANY_SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);
}

/* The executable segment of a file, mapped at base. */
static void map_text(struct bld_buf *b, uint64_t base, uint64_t vaddr, uint64_t offset,
                     uint64_t size, uint64_t ino, const char *path, uint64_t t)
{
	uint64_t page = vaddr & ~0xfffull;

	mmap2(b, base + page, (size + (vaddr - page) + 0xfff) & ~0xfffull, offset & ~0xfffull, ino,
	      path, t);
}

static void kernel_mmap(struct bld_buf *b, uint64_t t)
{
	struct bld_sid sid = { .pid = (uint32_t)-1, .tid = 0, .time = t, .id = ID_ANY };
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);

	bld_u32(b, (uint32_t)-1);
	bld_u32(b, 0);
	bld_u64(b, LBR_KERNEL_TEXT);
	bld_u64(b, 0x200000);
	bld_u64(b, LBR_KERNEL_TEXT);
	bld_str(b, "[kernel.kallsyms]_text", 0);
	bld_sample_id(b, ANY_SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);
}

static void comm(struct bld_buf *b, uint64_t t)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	struct bld_sid sid = { .pid = LBR_PID, .tid = LBR_PID, .time = t, .id = ID_ANY };

	bld_u32(b, LBR_PID);
	bld_u32(b, LBR_PID);
	bld_str(b, "deep", 0);
	bld_sample_id(b, ANY_SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);
}

/* What a sample adds to the calls of deep's recursion the LBR holds. */
enum extra {
	EXTRA_NONE,
	EXTRA_FOREIGN, /* a system call's return, a library's, a jump nowhere */
	EXTRA_FLAGS, /* transactions, aborts, the extended branch types */
};

static void branch_sample(struct bld_buf *b, const struct lbr_program *prog,
                          const struct lbr_library *lib, uint64_t ip, bool kernel, unsigned depth,
                          unsigned calls, enum extra extra, uint64_t t)
{
	static const uint64_t call_flags[] = {
		F_PREDICTED | F_CYCLES(7) | F_TYPE(PERF_BR_CALL),
		F_MISPRED | F_CYCLES(31) | F_TYPE(PERF_BR_CALL),
		F_CYCLES(2) | F_TYPE(PERF_BR_CALL),
		0,
	};
	struct bld_branch branches[LBR_MAX_ENTRIES];
	struct bld_sample s = bld_sample_empty();
	size_t n = 0;

	if (extra == EXTRA_FOREIGN) {
		/* back into deep from the kernel and from the library, and a
		 * jump to an address no map holds */
		branches[n++] =
		        (struct bld_branch){ LBR_KERNEL_TEXT + 0x300 + 0x90, in_deep(prog->bottom),
			                     F_PREDICTED | F_TYPE(PERF_BR_SYSRET) };
		branches[n++] = (struct bld_branch){ in_lib(lib->checksum) + 0x10,
			                             in_deep(prog->bottom) + 4,
			                             F_TYPE(PERF_BR_RET) | F_CYCLES(1) };
		branches[n++] = (struct bld_branch){ in_deep(prog->bottom) + 2, 0x1234,
			                             F_MISPRED | F_TYPE(PERF_BR_IND) };
	} else if (extra == EXTRA_FLAGS) {
		branches[n++] = (struct bld_branch){ in_deep(prog->bottom) + 6,
			                             in_deep(prog->bottom) + 0x10,
			                             F_IN_TX | F_ABORT | F_TYPE(PERF_BR_COND) };
		branches[n++] = (struct bld_branch){ in_deep(prog->bottom) + 8,
			                             in_deep(prog->bottom) + 0x10,
			                             F_IN_TX | F_TYPE(PERF_BR_EXTEND_ABI) |
			                                     F_NEW_TYPE(PERF_BR_NEW_FAULT_INST) };
		branches[n++] = (struct bld_branch){ in_deep(prog->bottom) + 9,
			                             in_deep(prog->bottom) + 0x10,
			                             F_TYPE(PERF_BR_EXTEND_ABI) | F_NEW_TYPE(12) };
	}
	/* the latest calls of the recursion, latest first */
	for (unsigned k = depth; k-- > depth - calls && n < LBR_MAX_ENTRIES; n++) {
		lbr_call(prog, k, depth, &branches[n].from, &branches[n].to);
		branches[n].flags = call_flags[k % 4];
	}
	s.identifier = ID_ANY;
	s.ip = ip;
	s.pid = LBR_PID;
	s.tid = LBR_PID;
	s.time = t;
	s.period = 100003;
	s.branch_nr = n;
	s.branches = branches;
	bld_sample(b, &any_attr, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER, &s);
}

/* A sample with these branches. */
static void listing_sample(struct bld_buf *b, uint64_t ip, const struct bld_branch *branches,
                           size_t nr, uint64_t t)
{
	struct bld_sample s = bld_sample_empty();

	s.identifier = ID_ANY;
	s.ip = ip;
	s.pid = LBR_PID;
	s.tid = LBR_PID;
	s.time = t;
	s.period = 100003;
	s.branch_nr = nr;
	s.branches = branches;
	bld_sample(b, &any_attr, PERF_RECORD_MISC_USER, &s);
}

void lbr_build_branch_capture(struct bld_file *file, const struct lbr_program *prog,
                              const struct lbr_library *lib)
{
	uint64_t t = 7000000000ull, leaf = in_deep(prog->bottom) + 0x20;

	bld_file_init(file, false);
	bld_file_add_attr(file, &any_attr);
	bld_header_string(bld_file_feature(file, PS_FEAT_HOSTNAME), "pystitch-test");
	bld_header_string(bld_file_feature(file, PS_FEAT_OSRELEASE), "6.1.0-test");
	bld_header_string(bld_file_feature(file, PS_FEAT_ARCH), "x86_64");
	kernel_mmap(&file->data, t);
	map_text(&file->data, LBR_BASE, prog->text_vaddr, prog->text_offset, prog->text_size, 4242,
	         prog->path, t);
	map_text(&file->data, LIB_BASE, lib->text_vaddr, lib->text_offset, lib->text_size, 4343,
	         lib->path, t);
	comm(&file->data, t + 1000);
	t += 3000;
	/* every branch in deep: its object is loaded from the first sample */
	branch_sample(&file->data, prog, lib, leaf, false, 12, 6, EXTRA_NONE, t += 1000000);
	/* into the library, which no sample has been in: brstackoff prints
	 * its addresses relative to its map, brstacksym loads it */
	branch_sample(&file->data, prog, lib, leaf, false, 20, 4, EXTRA_FOREIGN, t += 1000000);
	branch_sample(&file->data, prog, lib, leaf, false, 9, 8, EXTRA_FLAGS, t += 1000000);
	/* sampled in the kernel: user addresses are looked up there first */
	branch_sample(&file->data, prog, lib, LBR_KERNEL_TEXT + 0x400 + 0x1b, true, 14, 3,
	              EXTRA_FOREIGN, t += 1000000);
	/* sampled in the library: perf loads it */
	branch_sample(&file->data, prog, lib, in_lib(lib->norm) + 4, false, 16, 2, EXTRA_FOREIGN,
	              t += 1000000);
	/* and now its addresses print as they are */
	branch_sample(&file->data, prog, lib, leaf, false, 22, 5, EXTRA_FOREIGN, t += 1000000);
	/* a sample whose LBR holds the call to its own function only */
	branch_sample(&file->data, prog, lib, in_deep(prog->bottom), false, 3, 1, EXTRA_NONE,
	              t += 1000000);
	/* for -F brstackinsn: a call in a transaction, then the sampled IP
	 * past another call (a branch the LBR does not hold); an aborted
	 * one; a block from user code to the kernel's (the LBR filtered the
	 * entry: perf takes the block to the next branch instead) */
	{
		const struct bld_branch in_tx[] = {
			{ in_deep(prog->even_calls_odd), in_deep(prog->odd),
			  F_IN_TX | F_CYCLES(5) | F_TYPE(PERF_BR_CALL) },
			{ in_deep(prog->run_calls_even), in_deep(prog->even), F_CYCLES(9) },
			{ in_deep(prog->main_calls_run), in_deep(prog->run), 0 },
		};
		const struct bld_branch aborted[] = {
			{ in_deep(prog->odd_calls_even), in_deep(prog->even), F_CYCLES(3) },
			{ in_deep(prog->even_calls_odd), in_deep(prog->odd),
			  F_ABORT | F_MISPRED | F_TYPE(PERF_BR_CALL) },
			{ in_deep(prog->run_calls_even), in_deep(prog->even), 0 },
		};
		const struct bld_branch to_kernel[] = {
			{ in_deep(prog->odd_calls_bottom), in_deep(prog->bottom), F_CYCLES(4) },
			{ LBR_KERNEL_TEXT + 0x300 + 0x90, in_deep(prog->odd) + 0x10,
			  F_TYPE(PERF_BR_SYSRET) },
			{ in_deep(prog->even_calls_odd), in_deep(prog->odd), F_CYCLES(6) },
		};

		listing_sample(&file->data, in_deep(prog->odd) + 0x60, in_tx, 3, t += 1000000);
		listing_sample(&file->data, in_deep(prog->even) + 4, aborted, 3, t += 1000000);
		listing_sample(&file->data, leaf, to_kernel, 3, t += 1000000);
	}
}
