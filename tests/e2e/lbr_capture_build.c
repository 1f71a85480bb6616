/* The synthetic LBR capture of lbr_capture.h: what each sample holds is
 * what a 32-entry LBR in call-stack mode holds at that moment, so that
 * consecutive samples of a thread can be stitched (or not) as on a real
 * CPU, with the cases perf's stitching treats apart.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "lbr_capture.h"
#include "pystitch/pystitch.h"

const char lbr_kallsyms[] = "ffffffff81000000 T _stext\n"
                            "ffffffff81000000 T _text\n"
                            "ffffffff81000100 T asm_sysvec_apic_timer_interrupt\n"
                            "ffffffff81000200 T sysvec_apic_timer_interrupt\n"
                            "ffffffff81000300 T do_syscall_64\n"
                            "ffffffff81000400 T schedule\n"
                            "ffffffff81200000 T _etext\n";

#define ATTR_FLAGS                                                                                 \
	((1ull << 0) | (1ull << 1) | (1ull << 8) | (1ull << 9) | (1ull << 13) | (1ull << 18) |     \
	 (1ull << 20) | (1ull << 23))
#define SAMPLE_TYPE                                                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD | PERF_SAMPLE_BRANCH_STACK)
/* perf record --call-graph lbr's branch sample type */
#define LBR_BRANCH_TYPE                                                                            \
	(PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK | PERF_SAMPLE_BRANCH_NO_CYCLES |  \
	 PERF_SAMPLE_BRANCH_NO_FLAGS | PERF_SAMPLE_BRANCH_HW_INDEX)
#define ID_CYCLES 11
#define ID_INSTRUCTIONS 12
#define ID_BRANCHES 13

static uint64_t at(uint64_t vaddr)
{
	return LBR_BASE + vaddr;
}

void lbr_call(const struct lbr_program *prog, unsigned k, unsigned d, uint64_t *from, uint64_t *to)
{
	/* the function call k goes to: run, then descend_even and
	 * descend_odd by turns */
	bool into_even = k % 2 == 1;

	if (k == 0) {
		*from = at(prog->main_calls_run);
		*to = at(prog->run);
	} else if (k + 1 == d && k >= 2) {
		/* the deepest call: from the function call k - 1 went to */
		*from = at((k - 1) % 2 == 1 ? prog->even_calls_bottom : prog->odd_calls_bottom);
		*to = at(prog->bottom);
	} else if (k == 1) {
		*from = at(prog->run_calls_even);
		*to = at(prog->even);
	} else {
		*from = at(into_even ? prog->odd_calls_even : prog->even_calls_odd);
		*to = at(into_even ? prog->even : prog->odd);
	}
}

static const uint64_t ids_cycles[] = { ID_CYCLES }, ids_instructions[] = { ID_INSTRUCTIONS },
                      ids_branches[] = { ID_BRANCHES };

const struct bld_attr lbr_attrs[LBR_NR_EVENTS] = {
	{ .type = PERF_TYPE_HARDWARE,
	  .size = 128,
	  .config = PERF_COUNT_HW_CPU_CYCLES,
	  .sample_period = 100003,
	  .sample_type = SAMPLE_TYPE,
	  .flags = ATTR_FLAGS,
	  .branch_sample_type = LBR_BRANCH_TYPE,
	  .sample_max_stack = 127,
	  .ids = ids_cycles,
	  .nr_ids = 1 },
	{ .type = PERF_TYPE_HARDWARE,
	  .size = 128,
	  .config = PERF_COUNT_HW_INSTRUCTIONS,
	  .sample_period = 100003,
	  .sample_type = SAMPLE_TYPE,
	  .flags = ATTR_FLAGS,
	  .branch_sample_type = LBR_BRANCH_TYPE & ~(uint64_t)PERF_SAMPLE_BRANCH_HW_INDEX,
	  .sample_max_stack = 127,
	  .ids = ids_instructions,
	  .nr_ids = 1 },
	{ .type = PERF_TYPE_HARDWARE,
	  .size = 128,
	  .config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	  .sample_period = 100003,
	  .sample_type = SAMPLE_TYPE & ~(uint64_t)PERF_SAMPLE_BRANCH_STACK,
	  .flags = ATTR_FLAGS,
	  .branch_sample_type = LBR_BRANCH_TYPE,
	  .sample_max_stack = 127,
	  .ids = ids_branches,
	  .nr_ids = 1 },
};

static void comm(struct bld_buf *b, uint32_t tid, const char *name, uint64_t t)
{
	size_t pos = bld_rec_begin(b, PERF_RECORD_COMM, 0);
	struct bld_sid sid = { .pid = LBR_PID, .tid = tid, .time = t, .id = ID_CYCLES };

	bld_u32(b, LBR_PID);
	bld_u32(b, tid);
	bld_str(b, name, 0);
	bld_sample_id(b, SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);
}

void lbr_task(struct bld_buf *b, uint32_t type, uint32_t tid, uint64_t t)
{
	size_t pos = bld_rec_begin(b, type, 0);
	struct bld_sid sid = { .pid = LBR_PID, .tid = tid, .time = t, .id = ID_CYCLES };

	bld_u32(b, LBR_PID);
	bld_u32(b, LBR_PID);
	bld_u32(b, tid);
	bld_u32(b, LBR_PID);
	bld_u64(b, t);
	bld_sample_id(b, SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);
}

static void mmaps(struct bld_buf *b, const struct lbr_program *prog, uint64_t t)
{
	struct bld_sid sid = { .pid = (uint32_t)-1, .tid = 0, .time = t, .id = ID_CYCLES };
	size_t pos = bld_rec_begin(b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	uint64_t page = prog->text_vaddr & ~0xfffull;

	bld_u32(b, (uint32_t)-1);
	bld_u32(b, 0);
	bld_u64(b, LBR_KERNEL_TEXT);
	bld_u64(b, 0x200000);
	bld_u64(b, LBR_KERNEL_TEXT);
	bld_str(b, "[kernel.kallsyms]_text", 0);
	bld_sample_id(b, SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);

	sid.pid = LBR_PID;
	sid.tid = LBR_PID;
	pos = bld_rec_begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	bld_u32(b, LBR_PID);
	bld_u32(b, LBR_PID);
	bld_u64(b, LBR_BASE + page);
	bld_u64(b, (prog->text_size + (prog->text_vaddr - page) + 0xfff) & ~0xfffull);
	bld_u64(b, prog->text_offset & ~0xfffull);
	bld_u32(b, 8); /* maj, min, ino, ino_generation */
	bld_u32(b, 1);
	bld_u64(b, 4242);
	bld_u64(b, 0);
	bld_u32(b, 5); /* PROT_READ | PROT_EXEC */
	bld_u32(b, 2); /* MAP_PRIVATE */
	bld_str(b, prog->path, 0);
	bld_sample_id(b, SAMPLE_TYPE, &sid);
	bld_rec_end(b, pos);
}

void lbr_sample(struct bld_buf *b, const struct lbr_program *prog, const struct lbr_spec *sp,
                uint64_t t)
{
	const struct bld_attr *attr = &lbr_attrs[sp->event];
	struct bld_branch branches[LBR_MAX_ENTRIES];
	uint64_t chain[16], leaf = at(prog->bottom) + 0x20;
	struct bld_sample s = bld_sample_empty();
	size_t n = 0;

	if (sp->kernel || sp->kernel_only) {
		chain[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
		chain[n++] = LBR_KERNEL_TEXT + 0x400 + 0x1b;
		chain[n++] = LBR_KERNEL_TEXT + 0x300 + 0x4c;
		if (!sp->kernel_only)
			chain[n++] = LBR_KERNEL_TEXT + 0x100 + 0x16;
	}
	if (!sp->kernel_only) {
		/* the frame-pointer walk's user part: what perf script prints
		 * without LBR (its sampled ip, then return addresses) */
		chain[n++] = (uint64_t)PERF_CONTEXT_USER;
		chain[n++] = leaf;
		for (unsigned k = sp->depth; k-- > 0 && k + 3 >= sp->depth;) {
			uint64_t from, to;
			lbr_call(prog, k, sp->depth, &from, &to);
			chain[n++] = from + 5;
		}
		/* the LBR: the latest call first, the oldest it holds last */
		for (unsigned k = sp->depth; k-- > sp->oldest && s.branch_nr < LBR_MAX_ENTRIES;) {
			struct bld_branch *e = &branches[s.branch_nr++];
			lbr_call(prog, k, sp->depth, &e->from, &e->to);
			e->flags = 0;
		}
		if (sp->marker_at > 0)
			branches[sp->marker_at - 1].from = (uint64_t)PERF_CONTEXT_GUEST;
		/* the register the latest entry is in */
		s.branch_hw_idx = (sp->depth - 1) % LBR_MAX_BRANCHES;
		s.branches = branches;
	}
	s.identifier = attr->ids[0];
	s.ip = chain[1];
	s.pid = LBR_PID;
	s.tid = sp->tid;
	s.time = t;
	s.period = 100003;
	s.callchain = chain;
	s.callchain_nr = n;
	bld_sample(b, attr,
	           sp->kernel || sp->kernel_only ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
	           &s);
}

void lbr_capture_begin(struct bld_file *file, const struct lbr_program *prog, bool pmu_caps,
                       uint64_t t)
{
	bld_file_init(file, false);
	for (size_t i = 0; i < LBR_NR_EVENTS; i++)
		bld_file_add_attr(file, &lbr_attrs[i]);
	bld_header_string(bld_file_feature(file, PS_FEAT_HOSTNAME), "pystitch-test");
	bld_header_string(bld_file_feature(file, PS_FEAT_OSRELEASE), "6.1.0-test");
	bld_header_string(bld_file_feature(file, PS_FEAT_ARCH), "x86_64");
	if (pmu_caps) {
		struct bld_buf *caps = bld_file_feature(file, PS_FEAT_CPU_PMU_CAPS);
		bld_u32(caps, 2);
		bld_header_string(caps, "branches");
		bld_header_string(caps, "32");
		bld_header_string(caps, "max_precise");
		bld_header_string(caps, "3");
	}
	mmaps(&file->data, prog, t);
	comm(&file->data, LBR_PID, "deep", t + 1000);
	comm(&file->data, LBR_PID + 1, "deep", t + 2000);
}

void lbr_build_capture(struct bld_file *file, const struct lbr_program *prog)
{
	/* In order, with what perf does with each (see
	 * machine.c: resolve_lbr_callchain_sample, has_stitched_lbr). */
	static const struct lbr_spec specs[] = {
		/* the LBR holds the whole stack */
		{ .tid = LBR_PID, .depth = 20, .oldest = 0 },
		/* deeper: its oldest entries are the previous sample's, in the
		 * same registers: the 8 calls the LBR lost are stitched on */
		{ .tid = LBR_PID, .depth = 40, .oldest = 8, .kernel = true },
		/* deeper still: 4 more, before the 8 kept from before */
		{ .tid = LBR_PID, .depth = 44, .oldest = 12 },
		/* another thread: nothing of the first one's */
		{ .tid = LBR_PID + 1, .depth = 44, .oldest = 12 },
		/* a new recursion: nothing matches, the stitched frames go */
		{ .tid = LBR_PID, .depth = 10, .oldest = 0 },
		{ .tid = LBR_PID, .depth = 36, .oldest = 4 },
		/* no hw_idx: not checked, but its frames are kept for the next */
		{ .event = LBR_EVENT_NO_HW_IDX, .tid = LBR_PID, .depth = 30, .oldest = 0 },
		{ .tid = LBR_PID, .depth = 40, .oldest = 8 },
		/* no user part: the recorded chain */
		{ .tid = LBR_PID, .kernel_only = true },
		/* an unknown marker in the LBR: the recorded chain instead */
		{ .tid = LBR_PID, .depth = 40, .oldest = 8, .marker_at = 4 },
		{ .tid = LBR_PID, .depth = 44, .oldest = 12 },
		{ .tid = LBR_PID + 1, .depth = 40, .oldest = 8, .kernel = true },
	};
	/* after the second thread exits and its tid comes back: a fresh
	 * thread, which the old one's frames do not join */
	static const struct lbr_spec after_fork = { .tid = LBR_PID + 1, .depth = 48, .oldest = 16 };
	uint64_t t = 5000000000ull;

	lbr_capture_begin(file, prog, true, t);
	t += 3000;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		lbr_sample(&file->data, prog, &specs[i], t += 1000000);
	lbr_task(&file->data, PERF_RECORD_EXIT, LBR_PID + 1, t += 1000000);
	lbr_task(&file->data, PERF_RECORD_FORK, LBR_PID + 1, t += 1000000);
	lbr_sample(&file->data, prog, &after_fork, t += 1000000);
}
