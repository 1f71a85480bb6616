/* Compiled unwind rules: the CFI row libdwfl would unwind a frame with,
 * asked from libdw once per (module, lookup address) and kept in a hash
 * table, in the few forms the table walk (table.c) can apply itself.
 *
 * libdwfl's step (frame_unwind.c in elfutils) looks the frame up in the
 * module's .eh_frame first and in .debug_frame when that fails, then
 * evaluates, for each of the 17 x86-64 DWARF registers in order, the
 * expression dwarf_frame_register() gives: none and "undefined", none and
 * "same value", or DW_OP_call_frame_cfa [DW_OP_plus_uconst N]
 * [DW_OP_stack_value] for the offset(N) and val_offset(N) rules. The CFA
 * is DW_OP_bregx REG OFFSET for a register-plus-offset CFA. Anything else
 * (expressions, register rules, a return address column other than rip)
 * is left to libdwfl, and so are signal frames, whose callers libdwfl
 * treats differently.
 *
 * The cache is keyed by exact address rather than by row range: libdw's
 * binary search over .eh_frame_hdr can answer differently inside one row
 * when FDEs overlap, so only the address asked is known to get this row.
 */
#include "unwind/unwind_priv.h"

#include "base/hash.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* Slots of the hash table at most (about 120 bytes each: 7.5 MiB); when it
 * is half full at that size, it is emptied and refilled by later lookups.
 * It starts small: a capture can hold thousands of short processes, each
 * with its own unwinder. */
#define PS_UNWIND_ROWS_MAX_CAP (1u << 16)
#define PS_UNWIND_ROWS_MIN_CAP 64u

void ps_unwind_rows_clear(struct ps_unwinder *u)
{
	if (u->rows && u->rows_used)
		memset(u->rows, 0, u->rows_cap * sizeof(*u->rows));
	u->rows_used = 0;
}

void ps_unwind_rows_release(struct ps_unwinder *u)
{
	free(u->rows);
	u->rows = NULL;
	u->rows_cap = 0;
	u->rows_used = 0;
}

static size_t row_hash(const struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
	uint64_t key = pc ^ ((uint64_t)(uintptr_t)mod >> 4);

	return (size_t)ps_hash_u64(key) & (u->rows_cap - 1);
}

static struct ps_unwind_row *row_slot(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
	size_t i = row_hash(u, mod, pc);

	while (u->rows[i].mod && !(u->rows[i].mod == mod && u->rows[i].pc == pc))
		i = (i + 1) & (u->rows_cap - 1);
	return &u->rows[i];
}

/* Make room for one more row: grow at half load, or empty at the bound. */
static bool rows_reserve(struct ps_unwinder *u)
{
	if (u->rows && 2 * (u->rows_used + 1) <= u->rows_cap)
		return true;
	if (u->rows && u->rows_cap >= PS_UNWIND_ROWS_MAX_CAP) {
		ps_unwind_rows_clear(u);
		return true;
	}
	size_t cap = u->rows ? 2 * u->rows_cap : PS_UNWIND_ROWS_MIN_CAP;
	struct ps_unwind_row *grown = calloc(cap, sizeof(*grown));

	if (!grown)
		return false;
	struct ps_unwind_row *old = u->rows;
	size_t old_cap = u->rows_cap;

	u->rows = grown;
	u->rows_cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].mod)
			*row_slot(u, old[i].mod, old[i].pc) = old[i];
	free(old);
	return true;
}

static bool fits_int32(Dwarf_Word n)
{
	int64_t v = (int64_t)n;

	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Classify what dwarf_frame_register() said of one register. */
static bool compile_register(struct ps_unwind_row *row, unsigned regno, const Dwarf_Op *mem,
                             const Dwarf_Op *ops, size_t nops)
{
	if (nops == 0) {
		if (ops == mem)
			row->regs[regno] = PS_UNWIND_REG_UNDEFINED;
		else if (ops == NULL)
			row->regs[regno] = PS_UNWIND_REG_SAME;
		else
			return false;
		return true;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	size_t i = 1;
	Dwarf_Word offset = 0;

	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		offset = ops[i++].number;
	bool value = false;

	if (i < nops && ops[i].atom == DW_OP_stack_value) {
		value = true;
		i++;
	}
	if (i != nops || !fits_int32(offset))
		return false;
	row->regs[regno] = value ? PS_UNWIND_REG_VAL_OFFSET : PS_UNWIND_REG_OFFSET;
	row->offsets[regno] = (int32_t)(int64_t)offset;
	return true;
}

/* The CFA expression of PLT stubs (DW_CFA_def_cfa_expression in the FDE
 * of .plt and .plt.sec: the entry's second half has pushed one more word):
 *   DW_OP_bregR A; DW_OP_breg16 B; DW_OP_litM; DW_OP_and; DW_OP_litK;
 *   DW_OP_ge; DW_OP_litS; DW_OP_shl; DW_OP_plus
 * into row's cfa_reg, cfa_offset and plt_*. libdwfl evaluates it with the
 * frame's own registers, which only reads registers; false for anything
 * else. */
static bool compile_plt_cfa(struct ps_unwind_row *row, const Dwarf_Op *ops, size_t nops)
{
	static const uint8_t shape[] = { DW_OP_breg0, DW_OP_breg16, DW_OP_lit0,
		                         DW_OP_and,   DW_OP_lit0,   DW_OP_ge,
		                         DW_OP_lit0,  DW_OP_shl,    DW_OP_plus };

	if (nops != sizeof(shape))
		return false;
	for (size_t i = 0; i < nops; i++) {
		uint8_t atom = ops[i].atom;

		if (shape[i] == DW_OP_breg0 || shape[i] == DW_OP_lit0) {
			if (atom < shape[i] || atom > shape[i] + 31)
				return false;
		} else if (atom != shape[i]) {
			return false;
		}
	}
	int64_t reg_offset = (int64_t)ops[0].number, rip_offset = (int64_t)ops[1].number;

	/* registers the table keeps, a shift that keeps the sum exact */
	if (ops[0].atom - DW_OP_breg0 >= PS_UNWIND_DWARF_IP ||
	    !fits_int32((Dwarf_Word)reg_offset) || !fits_int32((Dwarf_Word)rip_offset) ||
	    ops[6].atom - DW_OP_lit0 > 31)
		return false;
	row->cfa_reg = (unsigned char)(ops[0].atom - DW_OP_breg0);
	row->cfa_offset = reg_offset;
	row->plt_rip_offset = (int32_t)rip_offset;
	row->plt_mask = (unsigned char)(ops[2].atom - DW_OP_lit0);
	row->plt_min = (unsigned char)(ops[4].atom - DW_OP_lit0);
	row->plt_shift = (unsigned char)(ops[6].atom - DW_OP_lit0);
	return true;
}

/* Fill row from a CFI frame; the kind stays OTHER unless it all fits. */
static void compile_frame(struct ps_unwind_row *row, Dwarf_Frame *frame)
{
	Dwarf_Addr start, end;
	bool signal = false;
	int ra = dwarf_frame_info(frame, &start, &end, &signal);

	if (signal) {
		row->kind = PS_UNWIND_ROW_SIGNAL;
		return;
	}
	if (ra != PS_UNWIND_DWARF_IP)
		return;

	Dwarf_Op *ops;
	size_t nops;

	/* not rip: a frame the table reaches through a frame_rule frame
	 * holds its PC decremented there in libdwfl's walk */
	bool plt = false;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
		return;
	if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < PS_UNWIND_DWARF_IP) {
		row->cfa_reg = (unsigned char)ops[0].number;
		row->cfa_offset = (int64_t)ops[0].number2;
	} else if (compile_plt_cfa(row, ops, nops)) {
		plt = true;
	} else {
		return;
	}
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++) {
		Dwarf_Op mem[3];

		if (dwarf_frame_register(frame, (int)regno, mem, &ops, &nops) != 0 ||
		    !compile_register(row, regno, mem, ops, nops))
			return;
	}
	/* the return address must be read from the stack, or be undefined
	 * (the outermost frame); any other rule goes to libdwfl */
	unsigned char ra_rule = row->regs[PS_UNWIND_DWARF_IP];
	if (ra_rule != PS_UNWIND_REG_OFFSET && ra_rule != PS_UNWIND_REG_UNDEFINED)
		return;
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++) {
		uint32_t bit = 1u << regno;

		if (row->regs[regno] == PS_UNWIND_REG_SAME) {
			row->same_mask |= bit;
		} else if (row->regs[regno] == PS_UNWIND_REG_OFFSET) {
			int32_t offset = row->offsets[regno];

			row->read_low =
			        row->offset_mask && row->read_low < offset ? row->read_low : offset;
			row->read_high = row->offset_mask && row->read_high > offset
			                         ? row->read_high
			                         : offset;
			row->offset_mask |= bit;
		} else if (row->regs[regno] == PS_UNWIND_REG_VAL_OFFSET) {
			row->val_offset_mask |= bit;
		}
	}
	row->kind = plt ? PS_UNWIND_ROW_PLT : PS_UNWIND_ROW_SIMPLE;
}

/* Look pc up as libdwfl's step does: .eh_frame, then .debug_frame. */
static void compile_row(struct ps_unwind_row *row, Dwfl_Module *mod, uint64_t pc, bool eh_only)
{
	Dwarf_Addr bias;
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *cfi;

	if (row->kind != PS_UNWIND_ROW_NOT_EH) {
		cfi = dwfl_module_eh_cfi(mod, &bias);
		if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
			row->kind = PS_UNWIND_ROW_OTHER;
			row->from_eh = true;
			compile_frame(row, frame);
			free(frame);
			return;
		}
		row->kind = PS_UNWIND_ROW_NOT_EH;
		if (eh_only)
			return;
	}
	row->kind = PS_UNWIND_ROW_OTHER;
	frame = NULL;
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
		return;
	compile_frame(row, frame);
	free(frame);
}

const struct ps_unwind_row *ps_unwind_row_get(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc,
                                              bool eh_only)
{
	if (u->rows) {
		struct ps_unwind_row *row = row_slot(u, mod, pc);

		if (row->mod) {
			if (row->kind == PS_UNWIND_ROW_NOT_EH && !eh_only)
				compile_row(row, mod, pc, false);
			return row;
		}
	}
	if (!rows_reserve(u))
		return NULL;
	struct ps_unwind_row *row = row_slot(u, mod, pc);

	*row = (struct ps_unwind_row){ .pc = pc, .mod = mod };
	compile_row(row, mod, pc, eh_only);
	u->rows_used++;
	u->stats.table_rules++;
	return row;
}
