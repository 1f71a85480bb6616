/* A synthetic capture of LBR call graphs (perf record --call-graph lbr),
 * which this machine cannot record (its CPU has no LBR): samples of
 * tests/programs/deep recursing, each with the branch stack a 32-entry
 * LBR in call-stack mode holds, written with the reader's builder. Used
 * by tests/e2e/lbr_capture (script_lbr.sh compares perf script with
 * pystitch script on it) and by the pipeline's unit tests.
 */
#ifndef PS_TESTS_E2E_LBR_CAPTURE_H
#define PS_TESTS_E2E_LBR_CAPTURE_H

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

/* The whole capture into file (initialised here; the caller frees it). */
void lbr_build_capture(struct bld_file *file, const struct lbr_program *prog);

#endif /* PS_TESTS_E2E_LBR_CAPTURE_H */
