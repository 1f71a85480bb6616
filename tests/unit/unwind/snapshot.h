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

/* /proc/self/maps as a find_map table. */
struct test_map {
	uint64_t start, end, pgoff;
	char *name; /* as in /proc/self/maps ("" for anonymous) */
	const char *path; /* name if it is a file, else NULL; tests may override */
	bool exec;
	uint64_t libunwind_base; /* passed through to ps_unwind_map */
};

struct test_maps {
	struct test_map *maps;
	size_t nr;
	uint64_t hide; /* if not 0, find_map does not see the mapping holding it */
};

bool test_maps_load(struct test_maps *tm);
void test_maps_free(struct test_maps *tm);
struct test_map *test_maps_find(struct test_maps *tm, uint64_t addr);
bool test_find_map(void *ctx, uint64_t addr, struct ps_unwind_map *out);

#endif /* PS_TEST_UNWIND_SNAPSHOT_H */
