/* Unit tests of the compiled CFI table (src/unwind/cfi.c and table.c): a
 * walk with the table must equal libdwfl's walk of the same sample
 * (ps_unwind_opts.engine), PC for PC and stop reason for stop
 * reason. Samples: this process's own stack in every snapshot mode (signal
 * frame, code without CFI, CPython's trampolines), cut at every length and
 * walked with every frame limit; and random stacks over the process's real
 * ELF files (this program, libc, libdw, ...): PCs anywhere in their code,
 * stack words that look like return addresses and frame pointers. The rows
 * the table compiled are then checked against libdw's answer at their
 * address. */
#include <check.h>
#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "unwind/unwind_priv.h"

#define MAX PS_UNWIND_DEFAULT_MAX_FRAMES

struct pair {
	struct test_maps maps; /* first: find_map's ctx */
	struct ps_unwinder *table, *libdwfl;
	/* what frame_rule answers: rule for PCs in [rule_low, rule_high) */
	uint64_t rule_low, rule_high;
	struct ps_unwind_rule rule;
	uint64_t pcs[2][MAX];
	struct ps_unwind_frame_regs regs[2][MAX];
	uint64_t walks, frames;
};

static bool pair_frame_rule(void *ctx, uint64_t pc, struct ps_unwind_rule *out)
{
	const struct pair *p = ctx;

	if (pc < p->rule_low || pc >= p->rule_high)
		return false;
	*out = p->rule;
	return true;
}

static void pair_open(struct pair *p, bool quirks, bool rules)
{
	static const struct ps_unwind_callbacks plain = { .find_map = test_find_map };
	static const struct ps_unwind_callbacks with_rules = { .find_map = test_find_map,
		                                               .frame_rule = pair_frame_rule };
	const struct ps_unwind_callbacks *callbacks = rules ? &with_rules : &plain;
	struct ps_unwind_opts opts = { .sz = sizeof(opts),
		                       .style = quirks ? PS_UNWIND_PERF_LIBUNWIND
		                                       : PS_UNWIND_PERF_LIBDW };

	memset(p, 0, sizeof(*p));
	ck_assert(test_maps_load(&p->maps));
	ck_assert_int_eq(ps_unwinder_new(callbacks, p, &opts, &p->table), 0);
	opts.engine = PS_UNWIND_ENGINE_LIBDWFL;
	ck_assert_int_eq(ps_unwinder_new(callbacks, p, &opts, &p->libdwfl), 0);
}

static void pair_close(struct pair *p)
{
	ps_unwinder_free(p->table);
	ps_unwinder_free(p->libdwfl);
	test_maps_free(&p->maps);
}

/* Unwind sample with both; they must agree. Returns the frame count. */
static int pair_check(struct pair *p, const struct ps_unwind_sample *sample, size_t cap,
                      const char *what, long arg)
{
	enum ps_unwind_stop stop[2];
	int n[2];

	struct ps_unwind_sample with_regs[2] = { *sample, *sample };

	memset(p->pcs, 0, sizeof(p->pcs));
	memset(p->regs, 0, sizeof(p->regs));
	/* every other walk keeps the frames' registers, which must change
	 * nothing of the walk */
	if (p->walks % 2) {
		with_regs[0].frame_regs = p->regs[0];
		with_regs[1].frame_regs = p->regs[1];
	}
	n[0] = ps_unwinder_unwind(p->table, &with_regs[0], p->pcs[0], cap, &stop[0]);
	n[1] = ps_unwinder_unwind(p->libdwfl, &with_regs[1], p->pcs[1], cap, &stop[1]);
	int diff = 0;

	while (diff < n[0] && diff < n[1] && p->pcs[0][diff] == p->pcs[1][diff])
		diff++;
	ck_assert_msg(n[0] == n[1] && stop[0] == stop[1] && diff == n[0],
	              "%s %ld: table %d frames (%s), libdwfl %d (%s); frame %d: %#llx, %#llx", what,
	              arg, n[0], ps_unwind_stop_name(stop[0]), n[1], ps_unwind_stop_name(stop[1]),
	              diff, (unsigned long long)p->pcs[0][diff],
	              (unsigned long long)p->pcs[1][diff]);
	/* the registers the two walks had for each frame: the same rsp, rip
	 * and callee-saved ones */
	for (int k = 0; with_regs[0].frame_regs && k < n[0]; k++) {
		const struct ps_unwind_frame_regs *a = &p->regs[0][k], *b = &p->regs[1][k];
		const uint32_t kept = 1u << 3 | 1u << 6 | 1u << 7 | 0xf000u | 1u << 16;

		ck_assert_msg((a->present & kept) == (b->present & kept),
		              "%s %ld: frame %d: registers %#x (table) and %#x (libdwfl)", what,
		              arg, k, a->present, b->present);
		for (unsigned r = 0; r < PS_UNWIND_NR_REGS; r++)
			if (a->present & kept & (1u << r))
				ck_assert_msg(a->regs[r] == b->regs[r],
				              "%s %ld: frame %d register %u: %#llx, %#llx", what,
				              arg, k, r, (unsigned long long)a->regs[r],
				              (unsigned long long)b->regs[r]);
	}
	p->walks++;
	p->frames += n[0] > 0 ? (uint64_t)n[0] : 0;
	return n[0];
}

/* Every cut of the stack copy and every frame limit. */
static void check_sample(struct pair *p, const struct ps_unwind_sample *full, const char *what)
{
	struct ps_unwind_sample sample = *full;
	int n = pair_check(p, &sample, MAX, what, -1);

	for (size_t cap = 1; cap <= (size_t)n + 1 && cap <= MAX; cap++)
		pair_check(p, &sample, cap, what, (long)cap);
	/* byte by byte near the top, where the frames under test live */
	for (uint64_t size = 0; size < full->stack_size && size < 2048; size++) {
		sample.stack_size = size;
		pair_check(p, &sample, MAX, what, (long)size);
	}
	for (uint64_t size = 2048; size < full->stack_size; size += 24) {
		sample.stack_size = size;
		pair_check(p, &sample, MAX, what, (long)size);
	}
}

/* The rules CPython 3.12's and 3.14's trampolines have at their return
 * site. */
static const struct ps_unwind_rule rule_312 = { .cfa_base = PS_UNWIND_CFA_SP,
	                                        .cfa_offset = 16,
	                                        .ra_offset = -8 };
static const struct ps_unwind_rule rule_314 = { .cfa_base = PS_UNWIND_CFA_SP,
	                                        .cfa_offset = 16,
	                                        .ra_offset = -8,
	                                        .rbp_saved = true,
	                                        .rbp_offset = -16 };

static const enum snap_mode modes[] = { SNAP_PLAIN,      SNAP_SIGNAL,        SNAP_NO_CFI,
	                                SNAP_TRAMPOLINE, SNAP_TRAMPOLINE_FP, SNAP_RBX_CFA };
static const char *const mode_names[] = { "plain",      "signal",        "no-cfi",
	                                  "trampoline", "trampoline-fp", "rbx-cfa" };

/* _i: mode * 2 + quirks */
START_TEST(test_snapshots)
{
	enum snap_mode mode = modes[_i / 2];
	bool quirks = _i % 2;
	bool trampoline = mode == SNAP_TRAMPOLINE || mode == SNAP_TRAMPOLINE_FP;
	struct snapshot snap;
	struct pair p;

	ck_assert(snapshot_take(&snap, mode));
	for (int rules = 0; rules <= (trampoline ? 1 : 0); rules++) {
		pair_open(&p, quirks, rules);
		if (rules) {
			p.rule_low = snap.tramp_return;
			p.rule_high = snap.tramp_return + 1;
			p.rule = mode == SNAP_TRAMPOLINE ? rule_312 : rule_314;
		}
		struct ps_unwind_sample sample = snapshot_sample(&snap);

		check_sample(&p, &sample, mode_names[_i / 2]);
		if (trampoline) {
			uint64_t regs[SNAP_NR_REGS];

			sample = snapshot_sample_at_return(&snap, regs);
			check_sample(&p, &sample, "at return");
		}
		/* the table did walk, and left some frames to libdwfl */
		ck_assert_uint_gt(ps_unwinder_stats(p.table)->table_frames, 0);
		ck_assert_uint_eq(ps_unwinder_stats(p.libdwfl)->table_frames, 0);
		pair_close(&p);
	}
	snapshot_free(&snap);
}
END_TEST

/* A random address in the code of one of the process's ELF files. */
static uint64_t random_code(const struct test_maps *maps, uint64_t *state)
{
	for (;;) {
		const struct test_map *m = &maps->maps[snapshot_random(state) % maps->nr];

		if (m->exec && m->path && m->end > m->start)
			return m->start + snapshot_random(state) % (m->end - m->start);
	}
}

/* The row of every (module, address) the table compiled is what libdw
 * answers at that address. */
static void check_rows(struct ps_unwinder *u)
{
	size_t simple = 0;

	for (size_t i = 0; i < u->rows_cap; i++) {
		const struct ps_unwind_row *row = &u->rows[i];
		Dwarf_Addr bias, start, end;
		Dwarf_Frame *frame = NULL;
		bool signal = false;
		Dwarf_Op *ops, mem[3];
		size_t nops;

		if (!row->mod || !row->from_eh)
			continue;
		Dwarf_CFI *cfi = dwfl_module_eh_cfi(row->mod, &bias);
		ck_assert_ptr_nonnull(cfi);
		ck_assert_int_eq(dwarf_cfi_addrframe(cfi, row->pc - bias, &frame), 0);
		int ra = dwarf_frame_info(frame, &start, &end, &signal);
		ck_assert_int_eq(signal, row->kind == PS_UNWIND_ROW_SIGNAL);
		ck_assert(row->pc - bias >= start && row->pc - bias < end);
		if (row->kind == PS_UNWIND_ROW_SIMPLE) {
			simple++;
			ck_assert_int_eq(ra, PS_UNWIND_DWARF_IP);
			ck_assert_int_eq(dwarf_frame_cfa(frame, &ops, &nops), 0);
			ck_assert_uint_eq(nops, 1);
			ck_assert_uint_eq(ops[0].atom, DW_OP_bregx);
			ck_assert_uint_eq(ops[0].number, row->cfa_reg);
			ck_assert_int_eq((int64_t)ops[0].number2, row->cfa_offset);
			ck_assert_int_eq(
			        dwarf_frame_register(frame, PS_UNWIND_DWARF_IP, mem, &ops, &nops),
			        0);
			if (row->regs[PS_UNWIND_DWARF_IP] == PS_UNWIND_REG_UNDEFINED) {
				ck_assert_uint_eq(nops, 0);
			} else {
				/* CFA + offset: call_frame_cfa, plus_uconst */
				ck_assert_uint_eq(nops, 2);
				ck_assert_uint_eq(ops[0].atom, DW_OP_call_frame_cfa);
				ck_assert_int_eq((int64_t)ops[1].number,
				                 row->offsets[PS_UNWIND_DWARF_IP]);
			}
		}
		free(frame);
	}
	ck_assert_uint_gt(simple, 0);
}

/* _i: quirks + 2 * rules (a JIT range outside any mapping) */
START_TEST(test_random_stacks)
{
	bool quirks = _i & 1, rules = _i & 2;
	uint64_t state = 0x2545f4914f6cdd1dULL + (uint64_t)_i;
	uint64_t regs[SNAP_NR_REGS];
	struct snapshot snap;
	struct pair p;

	ck_assert(snapshot_take(&snap, SNAP_PLAIN));
	pair_open(&p, quirks, rules);
	/* JIT code in a range no mapping holds */
	p.rule_low = 0x10000000;
	p.rule_high = p.rule_low + 4096;
	p.rule = rule_314;
	struct ps_unwind_sample sample = snapshot_sample(&snap);
	uint64_t size = snap.stack_size < 16384 ? snap.stack_size & ~7ULL : 16384;

	sample.regs = regs;
	for (int round = 0; round < 1500; round++) {
		for (int i = 0; i < SNAP_NR_REGS; i++)
			regs[i] = round % 4 ? snapshot_random(&state) : snap.regs[i];
		regs[SNAP_REG_IP] = random_code(&p.maps, &state);
		regs[SNAP_REG_SP] = snap.sp + 8 * (snapshot_random(&state) % 4);
		/* rbp: a frame pointer into the copy, often */
		if (round % 2)
			regs[6] = snap.sp + 8 * (snapshot_random(&state) % (size / 8));
		for (uint64_t off = 0; off + 8 <= size; off += 8) {
			uint64_t word = snapshot_random(&state);

			switch (word % 12) {
			case 0:
			case 1:
			case 2:
			case 3:
				word = random_code(&p.maps, &state);
				break;
			case 4:
			case 5:
				word = snap.sp + off + 8 * (snapshot_random(&state) % 64);
				break;
			case 6:
				word = 0;
				break;
			case 7:
				if (rules)
					word = p.rule_low + snapshot_random(&state) % 4096;
				break;
			default:
				break;
			}
			memcpy(snap.stack + off, &word, 8);
		}
		sample.stack_size = round % 3 ? size : snapshot_random(&state) % size;
		pair_check(&p, &sample, MAX, "round", round);
	}
	const struct ps_unwind_stats *stats = ps_unwinder_stats(p.table);
	/* both paths ran */
	ck_assert_uint_gt(stats->table_frames, 1000);
	ck_assert_uint_gt(stats->dwfl_frames, 100);
	check_rows(p.table);
	pair_close(&p);
	snapshot_free(&snap);
}
END_TEST

static Suite *suite_table(void)
{
	Suite *s = suite_create("unwind-table");
	TCase *tc = tcase_create("same as libdwfl");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_snapshots, 0, 2 * (int)(sizeof(modes) / sizeof(modes[0])));
	tcase_add_loop_test(tc, test_random_stacks, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(suite_table());
	int failed;

	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
