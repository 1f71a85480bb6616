/* The table walk: the fast path of ps_unwinder_unwind(). It steps through
 * the frames of a sample with the compiled rules of cfi.c, doing for each
 * frame what the frame callback of unwinder.c and libdwfl's step would do
 * (the same module checks, the same memory reads in the same order, the
 * same PCs stored), and hands the walk to libdwfl at the first frame it
 * cannot do the same way: a rule it cannot express, a read that does not
 * come cleanly from the sample, a quirk situation, a signal frame.
 *
 * A hand-over restarts libdwfl from that frame's registers as
 * guess_caller() and follow_rule() already do: libdwfl takes the frame for
 * an initial frame, which it treats as a caller would be treated except
 * when the caller is an activation (a signal frame, or the frame of
 * __restore_rt), and the frame callback too, except at a caller outside
 * any mapping (shown and passed with frame pointers, but the end of the
 * walk when it comes first). Such frames are handed over from the frame
 * before them, whose row the table used.
 */
#include "unwind/unwind_priv.h"

#include <string.h>

#include "base/hash.h"

#define BIT(regno) (1u << (regno))

/* One frame of the table walk, with the walk's bookkeeping as it was
 * before the frame, to hand the walk over from it. */
struct table_frame {
	Dwarf_Word regs[PS_UNWIND_NR_DWARF_REGS]; /* rip undecremented */
	uint32_t present;
	/* quirk mode: libunwind's registers (ps_unwinder.carry) */
	Dwarf_Word carry[PS_UNWIND_NR_DWARF_REGS];
	uint32_t carry_present;
	/* the first frame of a libdwfl walk in the libdwfl-only unwinder:
	 * the sample's own frame, or the caller of a frame_rule frame */
	bool sample_first, restart_first;
	size_t nr, depth;
	uint64_t prev_pc, prev_sp;
};

static enum ps_unwind_table_result handover(struct ps_unwinder *u, const struct table_frame *f)
{
	u->nr = f->nr;
	u->depth = f->depth;
	u->prev_pc = f->prev_pc;
	u->prev_sp = f->prev_sp;
	memcpy(u->carry, f->carry, sizeof(u->carry));
	u->carry_present = f->carry_present;
	if (f->sample_first) {
		memcpy(u->dwarf_regs, u->sample_regs, sizeof(u->dwarf_regs));
		u->dwarf_regs_present = u->sample_regs_present;
		u->restarted = false;
	} else {
		/* libdwfl starts from the call instruction, as after
		 * follow_rule(), which also leaves it in rip; a caller the
		 * table found keeps its return address in rip */
		memcpy(u->dwarf_regs, f->regs, sizeof(u->dwarf_regs));
		u->dwarf_regs_present = f->present;
		if (f->restart_first) {
			u->dwarf_regs[PS_UNWIND_DWARF_IP] = f->regs[PS_UNWIND_DWARF_IP] - 1;
		} else {
			u->restart_pc = f->regs[PS_UNWIND_DWARF_IP] - 1;
			u->restart_pc_set = true;
		}
		u->restarted = true;
	}
	return PS_UNWIND_TABLE_HANDOVER;
}

static enum ps_unwind_table_result stop(struct ps_unwinder *u, enum ps_unwind_stop why)
{
	ps_unwind_end_walk(u, why);
	return PS_UNWIND_TABLE_STOPPED;
}

enum step_result {
	STEP_OK,
	STEP_END, /* the return address is undefined: the outermost frame */
	STEP_LIBDWFL, /* not a step the table can do the same way */
};

int ps_unwind_row_apply(struct ps_unwinder *u, const struct ps_unwind_row *row,
                        const Dwarf_Word *regs, uint32_t present, Dwarf_Word *next,
                        uint32_t *next_present)
{
	if (!(present & BIT(row->cfa_reg)))
		return -1;
	uint64_t cfa = regs[row->cfa_reg] + (uint64_t)row->cfa_offset;

	if (row->kind == PS_UNWIND_ROW_PLT) {
		/* libdwfl's expr_eval(): DW_OP_ge compares signed */
		if (!(present & BIT(PS_UNWIND_DWARF_IP)))
			return -1;
		uint64_t low = (regs[PS_UNWIND_DWARF_IP] + (uint64_t)(int64_t)row->plt_rip_offset) &
		               row->plt_mask;

		cfa += (uint64_t)((int64_t)low >= (int64_t)row->plt_min) << row->plt_shift;
	}
	/* only SIMPLE rows are applied: every register's rule is one of
	 * undefined, same, offset and val_offset (cfi.c), so the masks say
	 * it all; reads go in register order, as libdwfl's */
	uint32_t same = row->same_mask & present;
	uint32_t done = same | row->val_offset_mask;

	for (uint32_t todo = same; todo; todo &= todo - 1) {
		unsigned regno = (unsigned)__builtin_ctz(todo);

		next[regno] = regs[regno];
	}
	for (uint32_t todo = row->val_offset_mask; todo; todo &= todo - 1) {
		unsigned regno = (unsigned)__builtin_ctz(todo);

		next[regno] = cfa + (uint64_t)(int64_t)row->offsets[regno];
	}
	/* the stack copy [sp, end) that words are read from directly, held
	 * in locals: the loop stores into *u */
	const uint64_t sp = u->sp, end = u->stack_end - (u->quirks ? 1 : 0);
	const uint8_t *stack = u->sample->stack;
	const uint64_t low = cfa + (uint64_t)(int64_t)row->read_low;
	const uint64_t high = cfa + (uint64_t)(int64_t)row->read_high;

	/* every word in the copy (the usual case), tested once: the reads'
	 * addresses lie between low and high when these do not wrap */
	if (row->offset_mask && low <= high && low >= sp && high <= UINT64_MAX - sizeof(uint64_t) &&
	    high + sizeof(uint64_t) <= end) {
		uint64_t value = 0;

		for (uint32_t todo = row->offset_mask; todo; todo &= todo - 1) {
			unsigned regno = (unsigned)__builtin_ctz(todo);

			memcpy(&value, stack + (cfa + (uint64_t)(int64_t)row->offsets[regno] - sp),
			       sizeof(value));
			next[regno] = value;
		}
		u->step_read_zero = value == 0;
		done |= row->offset_mask;
	} else {
		for (uint32_t todo = row->offset_mask; todo; todo &= todo - 1) {
			unsigned regno = (unsigned)__builtin_ctz(todo);
			uint64_t value = 0;
			uint64_t at = cfa + (uint64_t)(int64_t)row->offsets[regno];

			/* ps_unwind_dwfl_read()'s answer for a word of the stack
			 * copy (ps_unwind_access_mem()'s test), without its
			 * calls; anything else goes through it */
			if (at >= sp && at <= UINT64_MAX - sizeof(value) &&
			    at + sizeof(value) <= end) {
				memcpy(&value, stack + (at - sp), sizeof(value));
				u->step_read_zero = value == 0;
			} else if (ps_unwind_dwfl_read(u, at, &value) != 0) {
				/* a failed read, or libunwind's "mapped but
				 * empty" success: libdwfl's own path decides */
				return -1;
			}
			next[regno] = value;
			done |= BIT(regno);
		}
	}
	*next_present = done;
	return row->regs[PS_UNWIND_DWARF_IP] == PS_UNWIND_REG_UNDEFINED ? 0 : 1;
}

/* libunwind's registers after a step: the caller's, and those it did
 * not find a value for kept from the frame before. */
static void carry_over(const struct ps_unwinder *u, const struct table_frame *f,
                       struct table_frame *next)
{
	/* only the quirks read them */
	if (!u->quirks)
		return;
	next->carry_present = f->carry_present | next->present;
	memcpy(next->carry, f->carry, sizeof(next->carry));
	for (uint32_t todo = next->present & (BIT(PS_UNWIND_NR_DWARF_REGS) - 1); todo;
	     todo &= todo - 1) {
		unsigned regno = (unsigned)__builtin_ctz(todo);

		next->carry[regno] = next->regs[regno];
	}
}

/* ps_unwind_fill_carried() with the frame's row (its .eh_frame row) */
static bool fill_carried(const struct ps_unwind_row *row, Dwarf_Word *regs, uint32_t *present,
                         const Dwarf_Word *carry, uint32_t carry_present)
{
	if (!row || row->kind != PS_UNWIND_ROW_SIMPLE || !row->from_eh ||
	    (*present & BIT(row->cfa_reg)) || !(carry_present & BIT(row->cfa_reg)))
		return false;
	regs[row->cfa_reg] = carry[row->cfa_reg];
	*present |= BIT(row->cfa_reg);
	return true;
}

bool ps_unwind_fill_carried(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t lookup,
                            Dwarf_Word *regs, uint32_t *present, const Dwarf_Word *carry,
                            uint32_t carry_present)
{
	return fill_carried(ps_unwind_row_get(u, mod, lookup, true), regs, present, carry,
	                    carry_present);
}

/* libdwfl's handle_cfi() for a compiled row, when every read comes from
 * the sample: the caller's registers in *next. */
static enum step_result step(struct ps_unwinder *u, const struct ps_unwind_row *row,
                             const struct table_frame *f, struct table_frame *next)
{
	int r = ps_unwind_row_apply(u, row, f->regs, f->present, next->regs, &next->present);

	if (r < 0)
		return STEP_LIBDWFL;
	carry_over(u, f, next);
	if (r == 0)
		return STEP_END;
	/* libdwfl ends at a return address of 0; libunwind's quirk adds a
	 * frame there: both are libdwfl's path */
	if (next->regs[PS_UNWIND_DWARF_IP] == 0)
		return STEP_LIBDWFL;
	return STEP_OK;
}

/* Whether libdwfl's walk would end at the frame f whose step the table
 * could not make (a read failed), and why (*why). Without the quirks,
 * libdwfl's handle_cfi() reads every saved register in register order,
 * leaves those it cannot read unset, and with the return address unset
 * ends the walk at f (its caller's PC undefined); nothing else happens
 * there, so the table can end the walk itself, as walk() (unwinder.c)
 * would after it: the frame shown, the reason the reads give. That is
 * where a stack deeper than the sample's copy of it ends, in one sample
 * of three of a CPython capture unwound through its trampolines. false:
 * libdwfl's path decides (the return address read, a frame of its own
 * walk's first, another kind of row). */
static bool ends_at_unreadable(struct ps_unwinder *u, const struct ps_unwind_row *row,
                               const struct table_frame *f, enum ps_unwind_stop *why)
{
	bool ra_read = false;
	uint64_t cfa;

	if (u->quirks || f->sample_first || row->kind != PS_UNWIND_ROW_SIMPLE ||
	    !(f->present & BIT(row->cfa_reg)) || !(row->offset_mask & BIT(PS_UNWIND_DWARF_IP)))
		return false;
	cfa = f->regs[row->cfa_reg] + (uint64_t)row->cfa_offset;
	u->step_read_zero = false;
	u->step_read_cut = false;
	u->step_read_failed = false;
	for (uint32_t todo = row->offset_mask; todo; todo &= todo - 1) {
		unsigned regno = (unsigned)__builtin_ctz(todo);
		uint64_t value;
		int found = ps_unwind_dwfl_read(u, cfa + (uint64_t)(int64_t)row->offsets[regno],
		                                &value);

		if (regno == PS_UNWIND_DWARF_IP)
			ra_read = found == 0;
	}
	if (ra_read)
		return false;
	*why = u->step_read_cut      ? PS_UNWIND_STOP_STACK_CUT
	       : u->step_read_failed ? PS_UNWIND_STOP_BAD_FRAME
	                             : PS_UNWIND_STOP_END;
	return true;
}

/* A frame without a module for which callbacks.frame_rule gives a rule,
 * as follow_rule() does it: on success *next is its caller. */
static enum ps_unwind_table_result jit_frame(struct ps_unwinder *u, const struct table_frame *f,
                                             uint64_t lookup, const struct ps_unwind_rule *rule,
                                             struct table_frame *next)
{
	u->stats.table_frames++;
	if (!ps_unwind_record_regs(u, lookup, f->regs, f->present))
		return stop(u, PS_UNWIND_STOP_MAX_FRAMES);
	u->step_read_zero = false;
	u->step_read_cut = false;
	u->step_read_failed = false;
	if (!ps_unwind_apply_rule_regs(u, f->regs, f->present, rule))
		return stop(u,
		            u->step_read_cut ? PS_UNWIND_STOP_STACK_CUT : PS_UNWIND_STOP_BAD_FRAME);
	if (u->dwarf_regs[PS_UNWIND_DWARF_IP] == 0)
		return stop(u, PS_UNWIND_STOP_END);
	memcpy(next->regs, u->dwarf_regs, sizeof(next->regs));
	next->present = u->dwarf_regs_present;
	carry_over(u, f, next);
	next->sample_first = false;
	next->restart_first = true;
	return PS_UNWIND_TABLE_HANDOVER; /* i.e. go on */
}

static bool dwfl_has_module(struct ps_unwinder *u, uint64_t addr)
{
	size_t i = (size_t)(ps_hash_u64(addr) % PS_UNWIND_JIT_MODULES);

	if (u->jit_modules[i].epoch != u->modules_epoch || u->jit_modules[i].addr != addr ||
	    u->jit_modules[i].nr_modules != u->nr_modules) {
		u->jit_modules[i].addr = addr;
		u->jit_modules[i].epoch = u->modules_epoch;
		u->jit_modules[i].nr_modules = u->nr_modules;
		u->jit_modules[i].has = dwfl_addrmodule(u->dwfl, addr) != NULL;
	}
	return u->jit_modules[i].has;
}

/* The walk from a first frame: its registers, libunwind's carried ones
 * (the quirks), and whether it is the sample's own. */
static enum ps_unwind_table_result walk_from(struct ps_unwinder *u, const Dwarf_Word *regs,
                                             uint32_t present, const Dwarf_Word *carry,
                                             uint32_t carry_present, bool sample_first)
{
	struct table_frame frames[2];
	struct table_frame *cur = &frames[0], *prev = &frames[1];

	memset(frames, 0, sizeof(frames));
	memcpy(cur->regs, regs, sizeof(cur->regs));
	cur->present = present;
	memcpy(cur->carry, carry, sizeof(cur->carry));
	cur->carry_present = carry_present;
	cur->sample_first = sample_first;

	for (;;) {
		cur->nr = u->nr;
		cur->depth = u->depth;
		cur->prev_pc = u->prev_pc;
		cur->prev_sp = u->prev_sp;
		bool first = cur->sample_first || cur->restart_first;
		/* the return address (undecremented), or the sample's IP */
		uint64_t raw = cur->regs[PS_UNWIND_DWARF_IP];
		uint64_t lookup = cur->sample_first ? raw : raw - 1;
		uint64_t sp = (cur->present & BIT(PS_UNWIND_DWARF_SP))
		                      ? cur->regs[PS_UNWIND_DWARF_SP]
		                      : 0;

		u->step_read_zero = false;
		u->step_read_cut = false;
		u->step_read_failed = false;
		if (u->depth > 0 && raw == u->prev_pc && sp == u->prev_sp)
			return stop(u, PS_UNWIND_STOP_BAD_FRAME);
		u->prev_pc = raw;
		u->prev_sp = sp;

		Dwfl_Module *mod = NULL;
		enum ps_unwind_lookup found = ps_unwind_module_ensure(u, lookup, &mod);
		struct ps_unwind_rule rule;

		switch (found) {
		case PS_UNWIND_MODULE_OK:
			break;
		case PS_UNWIND_MODULE_STALE:
			u->retry = true;
			return PS_UNWIND_TABLE_STOPPED;
		case PS_UNWIND_MODULE_ERROR:
			return stop(u, PS_UNWIND_STOP_BAD_FRAME);
		case PS_UNWIND_MODULE_UNMAPPED:
		case PS_UNWIND_MODULE_NONE:
			if (u->callbacks.frame_rule &&
			    u->callbacks.frame_rule(u->ctx, raw, &rule)) {
				/* libdwfl would ask whether a caller is an
				 * activation by unwinding it its own way; with
				 * a module of its own there, that could be a
				 * signal frame's row */
				if (!first && dwfl_has_module(u, lookup))
					return handover(u, prev);
				enum ps_unwind_table_result r =
				        jit_frame(u, cur, lookup, &rule, prev);
				if (r != PS_UNWIND_TABLE_HANDOVER)
					return r;
				struct table_frame *swap = cur;
				cur = prev;
				prev = swap;
				continue;
			}
			/* libunwind's guess in a file libdwfl could not
			 * place: the frame callback's (pystitch's own walk
			 * takes it too) */
			if ((u->quirks || u->own) && u->frame_file_mod)
				return handover(u, cur);
			/* perf's libunwind shows the frame and stops; so does
			 * pystitch's own walk, where perf's libdw glue would
			 * not show it: the sample's IP or a caller in code no
			 * file or rule describes (another runtime's JIT code) */
			if (u->quirks || (u->own && (first || found == PS_UNWIND_MODULE_NONE))) {
				ps_unwind_record_regs(u, lookup, cur->regs, cur->present);
				return stop(u, u->depth >= u->max ? PS_UNWIND_STOP_MAX_FRAMES
				                                  : PS_UNWIND_STOP_NO_MODULE);
			}
			if (first || found == PS_UNWIND_MODULE_NONE)
				return stop(u, PS_UNWIND_STOP_NO_MODULE);
			/* libdwfl shows it and goes on with frame pointers,
			 * but ends at it were it the first frame of a walk:
			 * hand over from the frame before */
			return handover(u, prev);
		}

		/* a register libunwind kept for the frame's CFA: the frame
		 * callback starts libdwfl again from here with it. The
		 * quirks' row is the .eh_frame one, asked once. */
		const struct ps_unwind_row *row = NULL;
		bool have_row = false;

		if (u->quirks && !first) {
			row = ps_unwind_row_get(u, mod, lookup, true);
			have_row = true;
			if (fill_carried(row, cur->regs, &cur->present, cur->carry,
			                 cur->carry_present)) {
				first = true;
				cur->restart_first = true;
			}
		}
		/* libdwfl does not unwind a first frame that ends the walk,
		 * nor (with the quirks) one .eh_frame does not describe;
		 * libunwind still looks the last frame up */
		if (first && u->depth + 1 >= u->max) {
			uint64_t row_pc;

			ps_unwind_record_regs(u, lookup, cur->regs, cur->present);
			if (u->quirks)
				ps_unwind_libunwind_info(u, mod, raw, lookup, &row_pc);
			return stop(u, PS_UNWIND_STOP_MAX_FRAMES);
		}
		/* with the quirks, libunwind's view: .eh_frame alone. A frame
		 * it does not describe is libdwfl's with the frame callback,
		 * which takes libunwind's guess there whatever .debug_frame
		 * says, so that the file's debug information is not read for
		 * it (decompressed anew for each process: ld.so's _start
		 * ends the stacks of every process starting up) */
		if (!have_row)
			row = ps_unwind_row_get(u, mod, lookup, u->quirks);
		if (!row || row->kind == PS_UNWIND_ROW_NOT_EH)
			return handover(u, cur);
		/* libdwfl shows a caller that is an activation undecremented,
		 * an initial frame never: hand over from the frame before */
		if (row->kind == PS_UNWIND_ROW_SIGNAL)
			return handover(u, first ? cur : prev);
		/* a PLT stub's CFA reads rip, which libdwfl holds decremented
		 * in the first frame of a walk restarted from a caller */
		if (row->kind != PS_UNWIND_ROW_SIMPLE &&
		    (row->kind != PS_UNWIND_ROW_PLT || u->quirks || cur->restart_first))
			return handover(u, cur);
		/* libunwind's view: .eh_frame only, at the file's own base, its
		 * table read from the file */
		if (u->quirks && (!row->from_eh || u->frame_libunwind_base != u->frame_base ||
		                  u->frame_partial || !ps_unwind_has_eh_frame_hdr(u, mod)))
			return handover(u, cur);
		/* the frame's own row, unless libunwind's cache holds another */
		if (u->quirks && ps_unwind_libunwind_other_row(u, raw))
			return handover(u, cur);

		enum step_result r = step(u, row, cur, prev);
		enum ps_unwind_stop why;
		if (r == STEP_LIBDWFL && !ends_at_unreadable(u, row, cur, &why))
			return handover(u, cur);
		u->stats.table_frames++;
		if (r == STEP_LIBDWFL)
			return stop(u, ps_unwind_record_regs(u, lookup, cur->regs, cur->present)
			                       ? why
			                       : PS_UNWIND_STOP_MAX_FRAMES);
		if (!ps_unwind_record_regs(u, lookup, cur->regs, cur->present))
			return stop(u, PS_UNWIND_STOP_MAX_FRAMES);
		if (r == STEP_END)
			return PS_UNWIND_TABLE_ENDED;
		prev->sample_first = false;
		prev->restart_first = false;
		struct table_frame *swap = cur;
		cur = prev;
		prev = swap;
	}
}

enum ps_unwind_table_result ps_unwind_table_walk(struct ps_unwinder *u)
{
	return walk_from(u, u->sample_regs, u->sample_regs_present, u->sample_regs,
	                 u->sample_regs_present, true);
}

enum ps_unwind_table_result ps_unwind_table_resume(struct ps_unwinder *u)
{
	/* a caller, neither the sample's frame nor a restarted walk's
	 * first: nothing hands over from the frame before it, which is
	 * libdwfl's (take_back() keeps to rows that do not) */
	return walk_from(u, u->back_regs, u->back_present, u->carry, u->carry_present, false);
}
