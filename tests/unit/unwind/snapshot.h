/* Test plumbing for the unwind module: a snapshot of this process's own
 * registers and stack, taken with inline assembly a few calls deep (so the
 * expected frames are known), and its mappings read from /proc/self/maps,
 * served through a find_map callback the tests can doctor. */
#ifndef PS_TEST_UNWIND_SNAPSHOT_H
#define PS_TEST_UNWIND_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

/* perf x86 register numbers */
#define SNAP_REG_AX 0
#define SNAP_REG_SP 7
#define SNAP_REG_IP 8
#define SNAP_REG_R8 16
/* AX..IP and R8..R15: what perf record --call-graph dwarf asks for */
#define SNAP_REGS_MASK 0xff01ffULL
#define SNAP_NR_REGS 17
#define SNAP_LEVELS 4 /* capture() and the three functions above it */

struct snapshot {
	uint64_t regs[SNAP_NR_REGS]; /* packed in mask order, as in a sample */
	uint64_t ip, sp;
	/* return addresses: ra[0] is capture()'s (into level1), ra[3]
	 * level3's (into its caller) */
	uint64_t ra[SNAP_LEVELS];
	uint64_t signal_ra; /* SNAP_SIGNAL: the handler's return address */
	uint64_t nocfi_ra; /* SNAP_NO_CFI: return address of the function without CFI */
	/* SNAP_TRAMPOLINE*: the copy of the template in anonymous executable
	 * memory (ra[1], level1's return address, is tramp + tramp_return),
	 * the trampoline's own return address (into level2), and the
	 * registers as level1 returns into the trampoline (packed like regs:
	 * callee-saved ones and SP, after the return, are real; the IP is
	 * the return site) */
	uint8_t *tramp;
	uint64_t tramp_return;
	uint64_t tramp_ra;
	uint64_t at_return_regs[SNAP_NR_REGS];
	uint8_t *stack;
	uint64_t stack_size;
};

enum snap_mode {
	SNAP_PLAIN,
	/* level2 raises SIGUSR1 and the handler calls level1: the stack
	 * holds a signal frame between level1 and level2 */
	SNAP_SIGNAL,
	/* level2 calls level1 through an assembly function without CFI that
	 * keeps a frame pointer and 32 bytes of locals */
	SNAP_NO_CFI,
	/* level2 calls level1 through a copy of CPython 3.12's -X perf
	 * trampoline (sub $8,%rsp; call *%rcx; add $8,%rsp; ret) in
	 * anonymous executable memory: no module, no CFI */
	SNAP_TRAMPOLINE,
	/* the same with CPython 3.14's (push %rbp; mov %rsp,%rbp;
	 * call *%rcx; pop %rbp; ret) */
	SNAP_TRAMPOLINE_FP,
	/* level2 calls level1 through an assembly function whose CFA is rbx
	 * + 16 after it aligns the stack (as ld.so's _dl_runtime_resolve),
	 * and an assembly hop whose CFI does not mention rbx: libdw takes
	 * rbx for undefined there (libunwind for unchanged) */
	SNAP_RBX_CFA,
};

/* Take a snapshot through level3 -> level2 -> level1 -> capture. Returns
 * false if the stack's extent could not be found. */
bool snapshot_take(struct snapshot *snap, enum snap_mode mode);
void snapshot_free(struct snapshot *snap);
/* Where the return address ra[level] is stored in the stack copy (offset
 * from sp), or -1. */
long snapshot_ra_offset(const struct snapshot *snap, int level);
/* A sample over the snapshot (the pointers stay the snapshot's). */
struct ps_unwind_sample snapshot_sample(const struct snapshot *snap);
/* SNAP_TRAMPOLINE*: a sample taken at the trampoline's return site, just
 * after level1 returned into it (regs is the caller's storage). */
struct ps_unwind_sample snapshot_sample_at_return(const struct snapshot *snap,
                                                  uint64_t regs[SNAP_NR_REGS]);

/* /proc/self/maps as a find_map table. */
struct test_map {
	uint64_t start, end, pgoff;
	char *name; /* as in /proc/self/maps ("" for anonymous) */
	const char *path; /* name if it is a file, else NULL; tests may override */
	const char *debug_path; /* NULL; tests may set one */
	bool exec;
	uint64_t libunwind_base; /* passed through to ps_unwind_map */
};

struct test_maps {
	struct test_map *maps;
	size_t nr;
	uint64_t hide; /* if not 0, find_map does not see the mapping holding it */
	uint64_t generation; /* what test_maps_generation() says */
	uint64_t lookups; /* test_find_map() calls */
};

bool test_maps_load(struct test_maps *tm);
/* xorshift: the next of a reproducible series of garbage words. */
uint64_t snapshot_random(uint64_t *state);
void test_maps_free(struct test_maps *tm);
struct test_map *test_maps_find(struct test_maps *tm, uint64_t addr);
bool test_find_map(void *ctx, uint64_t addr, struct ps_unwind_map *out);
/* ps_unwind_callbacks.maps_generation over a struct test_maps: the tests
 * bump tm->generation when they change the maps. */
uint64_t test_maps_generation(void *ctx);

#endif /* PS_TEST_UNWIND_SNAPSHOT_H */
