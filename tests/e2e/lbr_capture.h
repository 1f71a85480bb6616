/* A synthetic capture of LBR call graphs (perf record --call-graph lbr),
 * which this machine cannot record (its CPU has no LBR): samples of
 * tests/programs/deep recursing, each with the branch stack a 32-entry
 * LBR in call-stack mode holds, written with the reader's builder. Used
 * by tests/e2e/lbr_capture (script_lbr.sh compares perf script with
 * pystitch script on it) and by the pipeline's unit tests.
 */
#ifndef PS_TESTS_E2E_LBR_CAPTURE_H
#define PS_TESTS_E2E_LBR_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "../unit/reader/builder.h"

/* Where deep's code is: its executable segment and the addresses (ELF
 * virtual addresses, as objdump prints them) of the functions and call
 * sites the recursion goes through. */
struct lbr_program {
	const char *path;
	uint64_t text_vaddr, text_offset, text_size;
	uint64_t run, even, odd, bottom; /* run, descend_even, descend_odd, bottom */
	uint64_t main_calls_run, run_calls_even, even_calls_odd, odd_calls_even;
	uint64_t even_calls_bottom, odd_calls_bottom;
};

/* Where the program is mapped, and the kernel's symbols. */
#define LBR_BASE 0x555555554000ull
#define LBR_KERNEL_TEXT 0xffffffff81000000ull
#define LBR_MAX_BRANCHES 32
#define LBR_PID 300
extern const char lbr_kallsyms[];

/* The call at depth k (0: main calling run) of a recursion d calls deep
 * whose deepest call goes to bottom: its call site and target, as
 * addresses in the process. */
void lbr_call(const struct lbr_program *prog, unsigned k, unsigned d, uint64_t *from, uint64_t *to);

/* The events: cycles (perf record --call-graph lbr's branch sample
 * type), instructions (the same without hw_idx), branches (CALL_STACK
 * branch sampling, but no branch stack in the samples). */
enum { LBR_EVENT_CYCLES, LBR_EVENT_NO_HW_IDX, LBR_EVENT_NO_BRANCH_STACK, LBR_NR_EVENTS };
extern const struct bld_attr lbr_attrs[LBR_NR_EVENTS];

/* The most branch entries a sample can have here (more than a CPU's
 * LBR, for captures no CPU writes). */
#define LBR_MAX_ENTRIES 64

/* One sample of deep, in process LBR_PID. */
struct lbr_spec {
	unsigned event;
	uint32_t tid;
	unsigned depth, oldest; /* calls made, and the oldest the LBR holds */
	bool kernel; /* sampled in the kernel, on the way back to user space */
	bool kernel_only; /* a sample with no user part in its chain */
	/* > 0: the from of entry marker_at - 1 is a context marker perf does
	 * not know */
	unsigned marker_at;
};

/* A capture of the events (initialised here; the caller frees it) with
 * the kernel's and deep's maps and the threads' names, from time t on;
 * pmu_caps: with a CPU_PMU_CAPS feature saying branches=32. */
void lbr_capture_begin(struct bld_file *file, const struct lbr_program *prog, bool pmu_caps,
                       uint64_t t);
void lbr_sample(struct bld_buf *b, const struct lbr_program *prog, const struct lbr_spec *sp,
                uint64_t t);
/* PERF_RECORD_EXIT or PERF_RECORD_FORK of thread tid of LBR_PID. */
void lbr_task(struct bld_buf *b, uint32_t type, uint32_t tid, uint64_t t);

/* The capture script_lbr.sh compares perf script and pystitch on. */
void lbr_build_capture(struct bld_file *file, const struct lbr_program *prog);

/* A library of tests/programs (libpsworker.so): its executable segment
 * and two of its functions. */
struct lbr_library {
	const char *path;
	uint64_t text_vaddr, text_offset, text_size;
	uint64_t norm, checksum; /* psw_norm, psw_checksum */
};

/* The capture of perf record -b (lbr_branches.c) script_lbr.sh compares
 * -F brstack* on. */
void lbr_build_branch_capture(struct bld_file *file, const struct lbr_program *prog,
                              const struct lbr_library *lib);

#endif /* PS_TESTS_E2E_LBR_CAPTURE_H */
