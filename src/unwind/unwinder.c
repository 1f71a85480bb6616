/* The unwinder's life cycle and one walk: checking a sample, loading its
 * registers, running dwfl_getthread_frames() and turning libdwfl's frames
 * into the PCs perf prints (callers decremented, libunwind quirks on demand).
 */
#include "base/message.h"
#include "base/opts.h"
#include "unwind/unwind_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PS_REGS_ABI_32 1
#define PS_REGS_ABI_64 2

/* perf's x86 register number for each DWARF register (x86-64 psABI order:
 * rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip) */
static const unsigned char perf_reg_of_dwarf[PS_UNWIND_NR_DWARF_REGS] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};

const char *ps_unwind_stop_name(enum ps_unwind_stop stop)
{
	switch (stop) {
	case PS_UNWIND_STOP_END:
		return "end";
	case PS_UNWIND_STOP_STACK_CUT:
		return "stack-cut";
	case PS_UNWIND_STOP_MAX_FRAMES:
		return "max-frames";
	case PS_UNWIND_STOP_NO_MODULE:
		return "no-module";
	case PS_UNWIND_STOP_BAD_FRAME:
		return "bad-frame";
	case PS_UNWIND_STOP_NO_STACK:
		return "no-stack";
	}
	return "?";
}

int ps_unwinder_new(const struct ps_unwind_callbacks *callbacks, void *ctx,
                    const struct ps_unwind_opts *opts, struct ps_unwinder **out)
{
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!callbacks || !callbacks->find_map)
		return -EINVAL;
	struct ps_unwind_opts o;
	if (ps_opts_copy(&o, sizeof(o), opts))
		return -EINVAL;

	struct ps_unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->callbacks = *callbacks;
	u->ctx = ctx;
	u->max_frames = o.max_frames ? o.max_frames : PS_UNWIND_DEFAULT_MAX_FRAMES;
	u->style_quirks = o.style == PS_UNWIND_PERF_LIBUNWIND;
	u->quirks = u->style_quirks;
	u->log = o.log;
	u->log_ctx = o.log_ctx;
	u->table = o.engine == PS_UNWIND_ENGINE_TABLE;
	u->rs_kept = u->style_quirks && !o.fresh_lookups;
	u->rs_on = u->rs_kept;
	ps_unwind_rs_flush(&u->rs);
	/* a lookup per frame, the last one's included */
	u->cap_steps = (size_t)u->max_frames + 2;
	u->steps = malloc(u->cap_steps * sizeof(*u->steps));
	if (!u->steps) {
		free(u);
		return -ENOMEM;
	}
	*out = u;
	return 0;
}

void ps_unwinder_free(struct ps_unwinder *u)
{
	if (!u)
		return;
	if (u->stats.samples)
		ps_unwind_log(u, PS_LOG_DEBUG,
		              "unwind: %llu samples, %llu frames by the compiled CFI table "
		              "(%llu rules), %llu by libdwfl",
		              (unsigned long long)u->stats.samples,
		              (unsigned long long)u->stats.table_frames,
		              (unsigned long long)u->stats.table_rules,
		              (unsigned long long)u->stats.dwfl_frames);
	ps_unwind_dwfl_destroy(u);
	if (u->arch_elf)
		elf_end(u->arch_elf);
	ps_unwind_caches_release(u);
	ps_unwind_rows_release(u);
	free(u->modules);
	free(u->steps);
	free(u);
}

void ps_unwinder_trim(struct ps_unwinder *u)
{
	if (!u)
		return;
	ps_unwind_dwfl_destroy(u);
	ps_unwind_caches_release(u);
	ps_unwind_rows_release(u);
	free(u->modules);
	u->modules = NULL;
	u->cap_modules = 0;
}

const char *ps_unwinder_errmsg(const struct ps_unwinder *u)
{
	return u ? u->errmsg : "";
}

const struct ps_unwind_stats *ps_unwinder_stats(const struct ps_unwinder *u)
{
	return u ? &u->stats : NULL;
}

/* Where each DWARF register's value lies among a sample's values for a
 * register mask: perf writes them in the order of the mask's bits. */
static void map_regs(struct ps_unwinder *u, uint64_t mask)
{
	u->regs_mask = mask;
	u->regs_mask_bits = (size_t)__builtin_popcountll(mask);
	u->regs_mask_known = true;
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++) {
		unsigned id = perf_reg_of_dwarf[regno];

		u->regs_index[regno] =
		        (mask & (1ULL << id))
		                ? (int8_t)__builtin_popcountll(mask & ((1ULL << id) - 1))
		                : -1;
	}
}

/* Check the sample and load its registers in DWARF order. */
static int load_sample(struct ps_unwinder *u, const struct ps_unwind_sample *s)
{
	if (s->regs_abi == PS_REGS_ABI_32)
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EOPNOTSUPP,
		               "32-bit user registers are not supported");
	if (s->regs_abi != PS_REGS_ABI_64)
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EINVAL,
		               "unknown user register ABI %llu", (unsigned long long)s->regs_abi);
	if (!u->regs_mask_known || u->regs_mask != s->regs_mask)
		map_regs(u, s->regs_mask);
	if (u->regs_mask_bits > s->nr_regs || (s->nr_regs && !s->regs))
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EINVAL,
		               "%zu register values for mask %#llx", s->nr_regs,
		               (unsigned long long)s->regs_mask);
	if (!s->stack)
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EINVAL, "no stack data");

	u->sample_regs_present = 0;
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++) {
		if (u->regs_index[regno] < 0)
			continue;
		u->sample_regs[regno] = s->regs[u->regs_index[regno]];
		u->sample_regs_present |= 1u << regno;
	}
	const uint32_t needed = 1u << PS_UNWIND_DWARF_SP | 1u << PS_UNWIND_DWARF_IP;
	if ((u->sample_regs_present & needed) != needed)
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EINVAL,
		               "user registers lack IP or SP (mask %#llx)",
		               (unsigned long long)s->regs_mask);

	u->sp = u->sample_regs[PS_UNWIND_DWARF_SP];
	if (s->stack_size > UINT64_MAX - u->sp)
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EINVAL,
		               "stack copy wraps around the address space");
	u->stack_end = u->sp + s->stack_size;
	u->sample = s;
	return 0;
}

/* Quirk mode: libunwind's registers at this frame, libdwfl's where it
 * has them (see ps_unwinder.carry). */
static void carry_update(struct ps_unwinder *u, Dwfl_Frame *state)
{
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++) {
		Dwarf_Word value;

		if (dwfl_frame_reg(state, regno, &value) == 0) {
			u->carry[regno] = value;
			u->carry_present |= 1u << regno;
		}
	}
}

bool ps_unwind_record_state(struct ps_unwinder *u, uint64_t pc, Dwfl_Frame *state, uint64_t raw)
{
	Dwarf_Word regs[PS_UNWIND_NR_DWARF_REGS] = { 0 };
	uint32_t present = 0;

	if (!u->frame_regs)
		return ps_unwind_record(u, pc);
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
		if (dwfl_frame_reg(state, regno, &regs[regno]) == 0)
			present |= 1u << regno;
	/* a walk restarted from a caller holds its call in rip: the frame
	 * keeps its return address, as the table walk's frames do */
	regs[PS_UNWIND_DWARF_IP] = raw;
	present |= 1u << PS_UNWIND_DWARF_IP;
	return ps_unwind_record_regs(u, pc, regs, present);
}

static int end_walk(struct ps_unwinder *u, enum ps_unwind_stop stop)
{
	ps_unwind_end_walk(u, stop);
	return DWARF_CB_ABORT;
}

/* Quirk mode, a frame .eh_frame does not describe: continue with
 * libunwind's guess at its caller, in a new libdwfl walk (libdwfl has
 * unwound the frame its own way already, to answer dwfl_frame_pc()). */
static int guess_caller(struct ps_unwinder *u, Dwfl_Frame *state, uint64_t ip)
{
	/* only the guess's own reads tell why it failed */
	u->step_read_cut = false;
	bool found = ps_unwind_guess_caller(u, state, ip);
	enum ps_unwind_stop stop =
	        u->step_read_cut ? PS_UNWIND_STOP_STACK_CUT : PS_UNWIND_STOP_BAD_FRAME;

	if (!found)
		return end_walk(u, stop);
	uint64_t next = u->dwarf_regs[PS_UNWIND_DWARF_IP];
	if (next == 0) {
		/* perf keeps IP 0, decremented; the next step fails */
		ps_unwind_record(u, UINT64_MAX);
		return end_walk(u, stop);
	}
	/* libunwind's guess forgets every other register */
	memcpy(u->carry, u->dwarf_regs, sizeof(u->carry));
	u->carry_present = u->dwarf_regs_present;
	/* libdwfl takes an initial PC as is: give it the decremented one
	 * (the caller's call instruction), which is also what perf prints */
	u->dwarf_regs[PS_UNWIND_DWARF_IP] = next - 1;
	u->restart = true;
	return DWARF_CB_ABORT;
}

/* Quirk mode, a frame libunwind unwinds with the row of another address
 * of its module (row_pc): that row applied, and a new libdwfl walk from
 * the caller it gives. */
static int other_row(struct ps_unwinder *u, Dwfl_Frame *state, Dwfl_Module *mod, uint64_t row_pc)
{
	Dwarf_Word regs[PS_UNWIND_NR_DWARF_REGS] = { 0 }, next[PS_UNWIND_NR_DWARF_REGS] = { 0 };
	uint32_t present = 0, next_present = 0;
	const struct ps_unwind_row *row = ps_unwind_row_get(u, mod, row_pc, true);

	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
		if (dwfl_frame_reg(state, regno, &regs[regno]) == 0)
			present |= 1u << regno;
	u->step_read_cut = false;
	/* rows the table cannot apply are not followed */
	int r = row && row->kind == PS_UNWIND_ROW_SIMPLE
	                ? ps_unwind_row_apply(u, row, regs, present, next, &next_present)
	                : -1;
	if (r <= 0)
		return end_walk(u, r == 0             ? PS_UNWIND_STOP_END
		                   : u->step_read_cut ? PS_UNWIND_STOP_STACK_CUT
		                                      : PS_UNWIND_STOP_BAD_FRAME);
	if (next[PS_UNWIND_DWARF_IP] == 0) {
		/* perf keeps IP 0, decremented; the next step fails */
		ps_unwind_record(u, UINT64_MAX);
		return end_walk(u, PS_UNWIND_STOP_BAD_FRAME);
	}
	memcpy(u->dwarf_regs, next, sizeof(next));
	u->dwarf_regs_present = next_present;
	u->dwarf_regs[PS_UNWIND_DWARF_IP] = next[PS_UNWIND_DWARF_IP] - 1;
	u->restart = true;
	return DWARF_CB_ABORT;
}

/* A frame without a module for which callbacks.frame_rule gave a rule:
 * show it and continue from its caller, in a new libdwfl walk. pc is the
 * frame's PC as shown: the sample's IP, or a caller's return address - 1;
 * raw is where it resumes. */
static int follow_rule(struct ps_unwinder *u, Dwfl_Frame *state, bool first, uint64_t pc,
                       uint64_t raw, const struct ps_unwind_rule *rule)
{
	Dwarf_Addr resume;
	bool activation = false;

	/* a caller interrupted by a signal shows its PC as is; asking
	 * unwinds the frame libdwfl's way, whose reads do not count */
	if (!first && dwfl_frame_pc(state, &resume, &activation) && activation)
		pc = resume;
	if (!ps_unwind_record_state(u, pc, state, raw))
		return end_walk(u, PS_UNWIND_STOP_MAX_FRAMES);
	u->step_read_zero = false;
	u->step_read_cut = false;
	u->step_read_failed = false;
	if (!ps_unwind_apply_rule(u, state, rule))
		return end_walk(u, u->step_read_cut ? PS_UNWIND_STOP_STACK_CUT
		                                    : PS_UNWIND_STOP_BAD_FRAME);
	uint64_t next = u->dwarf_regs[PS_UNWIND_DWARF_IP];
	/* a return address of 0 ends a stack, as in libdwfl */
	if (next == 0)
		return end_walk(u, PS_UNWIND_STOP_END);
	/* as in guess_caller(): libdwfl starts from the call instruction */
	u->dwarf_regs[PS_UNWIND_DWARF_IP] = next - 1;
	u->restart = true;
	return DWARF_CB_ABORT;
}

/* A caller libdwfl found, after the frame it walked for the table (or a
 * guess's, a rule's): the table takes the walk back from it when its row
 * is one the table applies, as if it had found the frame itself. The
 * frame is not recorded here; the table does it. */
static bool take_back(struct ps_unwinder *u, Dwfl_Frame *state, Dwfl_Module *mod, uint64_t lookup,
                      uint64_t raw, uint64_t guard_pc, uint64_t guard_sp)
{
	const struct ps_unwind_row *row;

	if (!u->table || !mod)
		return false;
	row = ps_unwind_row_get(u, mod, lookup, u->quirks);
	if (!row || row->kind != PS_UNWIND_ROW_SIMPLE)
		return false;
	u->back_present = 0;
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
		if (dwfl_frame_reg(state, regno, &u->back_regs[regno]) == 0)
			u->back_present |= 1u << regno;
	u->back_regs[PS_UNWIND_DWARF_IP] = raw;
	u->back_present |= 1u << PS_UNWIND_DWARF_IP;
	/* the table meets the frame anew */
	u->prev_pc = guard_pc;
	u->prev_sp = guard_sp;
	u->take_back = true;
	return true;
}

static int frame_callback(Dwfl_Frame *state, void *arg)
{
	struct ps_unwinder *u = arg;
	/* the first frame of a libdwfl walk: the sample's IP, or a caller
	 * found by guess_caller() or follow_rule() whose PC is already
	 * decremented */
	bool first = u->walk_frames++ == 0;
	Dwarf_Addr pc;

	u->stats.dwfl_frames++;
	Dwarf_Word sp = 0;
	bool activation;

	/* the reads of the step from this frame to its caller come next */
	u->step_read_zero = false;
	u->step_read_cut = false;
	u->step_read_failed = false;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return end_walk(u, PS_UNWIND_STOP_BAD_FRAME);
	/* the return address, or where execution resumes */
	uint64_t raw = first && u->restarted ? pc + 1 : pc;
	dwfl_frame_reg(state, PS_UNWIND_DWARF_SP, &sp);
	/* libunwind's guard against a step that moves neither pc nor sp */
	if (u->depth > 0 && raw == u->prev_pc && sp == u->prev_sp)
		return end_walk(u, PS_UNWIND_STOP_BAD_FRAME);
	uint64_t guard_pc = u->prev_pc, guard_sp = u->prev_sp;
	u->prev_pc = raw;
	u->prev_sp = sp;
	if (u->quirks)
		carry_update(u, state);

	/* The module must be reported before libdwfl unwinds this frame,
	 * which it does looking up pc - 1 for callers (the call, not the
	 * instruction after it). */
	uint64_t lookup = first ? pc : pc - 1;
	Dwfl_Module *mod = NULL;
	enum ps_unwind_lookup found = ps_unwind_module_ensure(u, lookup, &mod);
	switch (found) {
	case PS_UNWIND_MODULE_OK:
		break;
	case PS_UNWIND_MODULE_STALE:
		u->retry = true;
		return DWARF_CB_ABORT;
	case PS_UNWIND_MODULE_ERROR:
		return end_walk(u, PS_UNWIND_STOP_BAD_FRAME);
	case PS_UNWIND_MODULE_UNMAPPED:
	case PS_UNWIND_MODULE_NONE: {
		struct ps_unwind_rule rule;

		/* JIT code the caller knows how to unwind */
		if (u->callbacks.frame_rule && u->callbacks.frame_rule(u->ctx, raw, &rule))
			return follow_rule(u, state, first, lookup, raw, &rule);
		/* perf's find_proc_info() fails: perf shows the frame and
		 * stops; but in a readable ELF file libdwfl could not place,
		 * libunwind may find no FDE and guess. pystitch's own walk
		 * shows such a frame too (another runtime's JIT code), where
		 * perf's libdw glue would not. */
		if (u->quirks || (u->own && (first || found == PS_UNWIND_MODULE_NONE))) {
			bool room = ps_unwind_record_state(u, lookup, state, raw);

			if (room && found == PS_UNWIND_MODULE_NONE &&
			    ps_unwind_foreign_enoinfo(u, lookup))
				return guess_caller(u, state, raw);
			return end_walk(u, room ? PS_UNWIND_STOP_NO_MODULE
			                        : PS_UNWIND_STOP_MAX_FRAMES);
		}
		/* perf's libdw glue: without a module for the IP it cannot
		 * attach and shows no user frame; a caller in a mapping
		 * without ELF ends the walk unshown; a caller in no mapping
		 * is shown and libdwfl goes on with frame pointers */
		if (first || found == PS_UNWIND_MODULE_NONE)
			return end_walk(u, PS_UNWIND_STOP_NO_MODULE);
		break;
	}
	}

	/* pystitch's own walk, where perf's stops: the sample taken in a PLT
	 * stub without CFI */
	if (u->own && first && u->depth == 0 && mod) {
		struct ps_unwind_rule rule;

		if (ps_unwind_plt_rule(u, mod, lookup, &rule))
			return follow_rule(u, state, first, lookup, raw, &rule);
	}
	/* For callers this unwinds the frame to learn whether its caller
	 * was a signal frame. */
	if (!dwfl_frame_pc(state, &pc, &activation))
		return end_walk(u, PS_UNWIND_STOP_BAD_FRAME);
	/* libunwind decides from the previous frame alone, so it decrements
	 * the sigreturn trampoline's own PC; libdwfl does not */
	if (!first && activation && u->quirks && ps_unwind_is_sigreturn(u, pc))
		activation = false;
	/* the frame's CFA register libdwfl dropped and libunwind kept: a new
	 * walk from this frame with it (the table does the same) */
	if (u->quirks && !first && !activation && mod) {
		Dwarf_Word regs[PS_UNWIND_NR_DWARF_REGS] = { 0 };
		uint32_t present = 0;

		for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
			if (dwfl_frame_reg(state, regno, &regs[regno]) == 0)
				present |= 1u << regno;
		if (ps_unwind_fill_carried(u, mod, lookup, regs, &present, u->carry,
		                           u->carry_present)) {
			memcpy(u->dwarf_regs, regs, sizeof(regs));
			u->dwarf_regs_present = present;
			u->dwarf_regs[PS_UNWIND_DWARF_IP] = lookup;
			/* the frame is seen again, as the new walk's first */
			u->prev_pc = guard_pc;
			u->prev_sp = guard_sp;
			u->step_read_zero = false;
			u->step_read_cut = false;
			u->step_read_failed = false;
			u->restart = true;
			return DWARF_CB_ABORT;
		}
	}
	if (!first && !activation && found == PS_UNWIND_MODULE_OK &&
	    take_back(u, state, mod, lookup, raw, guard_pc, guard_sp))
		return DWARF_CB_ABORT;
	if (!activation)
		pc--;
	bool room = ps_unwind_record_state(u, pc, state, raw);

	if (u->quirks && mod) {
		/* libunwind's lookup (libunwind.c), made for the last frame
		 * too: perf's loop steps once more before it checks the
		 * count. A frame a signal interrupted is looked up at its PC,
		 * where it resumes (the signal frame's CIE clears libunwind's
		 * use_prev_instr), not at the byte before. */
		uint64_t row_pc;
		if (activation && !first && lookup != raw) {
			Dwfl_Module *at = NULL;

			/* the byte before may be another module's */
			lookup = raw;
			if (ps_unwind_module_ensure(u, lookup, &at) == PS_UNWIND_MODULE_OK)
				mod = at;
		}
		enum ps_unwind_info info = ps_unwind_libunwind_info(u, mod, raw, lookup, &row_pc);

		if (!room)
			return end_walk(u, PS_UNWIND_STOP_MAX_FRAMES);
		switch (info) {
		case PS_UNWIND_INFO_FAIL:
			return end_walk(u, PS_UNWIND_STOP_BAD_FRAME);
		case PS_UNWIND_INFO_ENOINFO:
			return guess_caller(u, state, raw);
		case PS_UNWIND_INFO_FOUND:
			if (row_pc != lookup)
				return other_row(u, state, mod, row_pc);
			break;
		}
	}
	if (!room)
		return end_walk(u, PS_UNWIND_STOP_MAX_FRAMES);
	return DWARF_CB_OK;
}

static int walk(struct ps_unwinder *u)
{
	u->nr = 0;
	u->depth = 0;
	u->stopped = false;
	u->retry = false;
	u->restarted = false;
	u->restart_pc_set = false;
	u->step_read_zero = false;
	u->step_read_cut = false;
	u->step_read_failed = false;
	memcpy(u->dwarf_regs, u->sample_regs, sizeof(u->dwarf_regs));
	u->dwarf_regs_present = u->sample_regs_present;
	memcpy(u->carry, u->sample_regs, sizeof(u->carry));
	u->carry_present = u->sample_regs_present;

	if (u->stale)
		ps_unwind_dwfl_destroy(u);
	if (!u->dwfl) {
		int err = ps_unwind_dwfl_create(u, u->sample->pid);
		if (err)
			return err;
	}

	int rc = 0;
	enum ps_unwind_table_result table =
	        u->table ? ps_unwind_table_walk(u) : PS_UNWIND_TABLE_HANDOVER;

	if (table == PS_UNWIND_TABLE_STOPPED)
		return 0;
	for (; table == PS_UNWIND_TABLE_HANDOVER;) {
		u->walk_frames = 0;
		u->restart = false;
		u->take_back = false;
		rc = dwfl_getthread_frames(u->dwfl, (pid_t)u->sample->tid, frame_callback, u);
		u->restart_pc_set = false;
		if (u->retry || u->stopped)
			return 0;
		if (u->take_back) {
			/* the table's end is as its own walk's */
			rc = 0;
			table = ps_unwind_table_resume(u);
			if (table == PS_UNWIND_TABLE_STOPPED)
				return 0;
			continue;
		}
		if (!u->restart)
			break;
		u->restarted = true;
	}
	/* libdwfl failed before the first frame: libunwind still shows the IP */
	if (u->depth == 0 && u->quirks)
		ps_unwind_record_regs(u, u->sample_regs[PS_UNWIND_DWARF_IP], u->sample_regs,
		                      u->sample_regs_present);

	/* libdwfl ended the walk: the return address was undefined, 0 or
	 * unreadable, or a step failed */
	if (u->step_read_cut)
		u->stop = PS_UNWIND_STOP_STACK_CUT;
	else if (rc != 0 || u->step_read_failed)
		u->stop = PS_UNWIND_STOP_BAD_FRAME;
	else
		u->stop = PS_UNWIND_STOP_END;
	/* libunwind steps to a return address read as 0 and perf keeps it,
	 * decremented */
	if (u->quirks && u->step_read_zero && u->depth < u->max)
		ps_unwind_record(u, UINT64_MAX);
	return 0;
}

int ps_unwinder_unwind(struct ps_unwinder *u, const struct ps_unwind_sample *sample, uint64_t *pcs,
                       size_t cap, enum ps_unwind_stop *stop)
{
	enum ps_unwind_stop ignored;

	if (!stop)
		stop = &ignored;
	*stop = PS_UNWIND_STOP_BAD_FRAME;
	if (!u)
		return -EINVAL;
	if (!sample || !pcs || !cap)
		return ps_fail(u->errmsg, sizeof(u->errmsg), -EINVAL, "invalid arguments");
	u->errmsg[0] = '\0';
	/* a sample without the quirks neither reads nor changes libunwind's
	 * cache, and logs no lookups to replay */
	u->quirks = u->style_quirks && !sample->no_quirks;
	u->own = sample->no_quirks;
	u->rs_on = u->rs_kept && u->quirks;
	ps_unwind_lookups_begin(u, false);
	/* perf unwinds nothing without registers or stack bytes */
	if (sample->regs_abi == 0 || sample->stack_size == 0) {
		*stop = PS_UNWIND_STOP_NO_STACK;
		return 0;
	}
	if (!u->caches) {
		u->caches = calloc(1, sizeof(*u->caches));
		if (!u->caches)
			return ps_fail(u->errmsg, sizeof(u->errmsg), -ENOMEM, "out of memory");
	}
	int err = load_sample(u, sample);
	if (err)
		return err;

	u->pcs = pcs;
	u->frame_regs = sample->frame_regs;
	u->max = cap < u->max_frames ? cap : u->max_frames;
	u->stats.samples++;
	for (int attempt = 0;; attempt++) {
		ps_unwind_lookups_begin(u, attempt > 0);
		err = walk(u);
		if (err)
			break;
		if (!u->retry)
			break;
		/* a module no longer matches the mappings */
		u->stale = true;
		if (attempt == 1) {
			u->stop = PS_UNWIND_STOP_BAD_FRAME;
			break;
		}
	}
	u->sample = NULL;
	u->pcs = NULL;
	u->frame_regs = NULL;
	if (err)
		return err;
	u->stats.frames += u->nr;
	*stop = u->stop;
	return (int)u->nr;
}
