/* CPython's perf trampoline (-X perf, 3.12+): reading the template between
 * _Py_trampoline_func_start and _Py_trampoline_func_end from the
 * interpreter's ELF file (the symbols module's handle, opened once per
 * feed), and deriving its unwind rules by decoding it with
 * capstone and simulating what it does to rsp and rbp, so that no version's
 * rule is hard-coded.
 */
#include "python/python_priv.h"

#include <capstone/capstone.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/message.h"

#define START_SYMBOL "_Py_trampoline_func_start"
#define END_SYMBOL "_Py_trampoline_func_end"
/* how far the template may move rsp: it only aligns the stack */
#define MAX_FRAME 4096

/* ---- the template's bytes in the ELF file ----------------------------- */

struct template_symbols {
	uint64_t start, end;
	size_t start_section;
};

/* Look both symbols up in one symbol table (.symtab, else .dynsym). */
static bool find_symbols(const struct ps_elf *elf, int index, struct template_symbols *out)
{
	struct ps_elf_symtab table;
	bool have_start = false, have_end = false;

	if (index < 0 || !ps_elf_symtab_open(elf, index, &table))
		return false;
	for (size_t i = 0; i < table.count && !(have_start && have_end); i++) {
		struct ps_elf_sym sym;

		if (!ps_elf_symtab_get(&table, i, &sym) || sym.shndx == SHN_UNDEF)
			continue;
		if (!have_start && strcmp(sym.name, START_SYMBOL) == 0) {
			out->start = sym.value;
			out->start_section = sym.shndx;
			have_start = true;
		} else if (!have_end && strcmp(sym.name, END_SYMBOL) == 0) {
			out->end = sym.value;
			have_end = true;
		}
	}
	return have_start && have_end;
}

/* The bytes [start, start + size) of the file's address space: from the
 * first allocated section holding them, else from the PT_LOAD segment
 * holding them. */
static bool template_bytes(const struct ps_elf *elf, uint64_t start, size_t size,
                           struct ps_cursor *out)
{
	size_t section = SIZE_MAX;

	for (size_t i = 0; i < ps_elf_nr_sections(elf) && section == SIZE_MAX; i++) {
		const struct ps_elf_section *sec = ps_elf_section(elf, i);

		if (sec->type != SHT_NOBITS && (sec->flags & SHF_ALLOC) && start >= sec->addr &&
		    start - sec->addr < sec->size && size <= sec->size - (start - sec->addr))
			section = i;
	}
	return ps_elf_vaddr_cursor(elf, section, start, size, out);
}

int ps_trampoline_read_template(const struct ps_elf *elf, uint8_t *buf, size_t cap, size_t *size,
                                char *errmsg, size_t errmsg_size)
{
	struct template_symbols symbols = { 0 };
	struct ps_cursor bytes;
	const uint8_t *code;
	const char *path;

	if (!elf || !buf || !size)
		return ps_fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	*size = 0;
	path = ps_elf_file(elf);
	if (ps_elf_machine(elf) != EM_X86_64 || !ps_elf_is64(elf))
		return ps_fail(errmsg, errmsg_size, -EOPNOTSUPP,
		               "%s: not an x86-64 file: trampolines are decoded for x86-64 only",
		               path);
	if (!find_symbols(elf, ps_elf_symbol_table(elf, false), &symbols) &&
	    !find_symbols(elf, ps_elf_symbol_table(elf, true), &symbols))
		return ps_fail(
		        errmsg, errmsg_size, -ENOENT,
		        "%s: no " START_SYMBOL "/" END_SYMBOL
		        " symbols (not a CPython 3.12+ interpreter built with perf trampolines)",
		        path);
	if (symbols.end <= symbols.start || symbols.end - symbols.start > cap ||
	    symbols.end - symbols.start > PS_TRAMPOLINE_MAX_SIZE)
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "%s: the trampoline template spans %#llx..%#llx, not 1 to %d bytes",
		               path, (unsigned long long)symbols.start,
		               (unsigned long long)symbols.end, PS_TRAMPOLINE_MAX_SIZE);
	*size = (size_t)(symbols.end - symbols.start);
	code = template_bytes(elf, symbols.start, *size, &bytes) ? ps_cursor_peek(&bytes, 0, *size)
	                                                         : NULL;
	if (!code) {
		*size = 0;
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "%s: the trampoline template at %#llx is not in the file", path,
		               (unsigned long long)symbols.start);
	}
	memcpy(buf, code, *size);
	return 0;
}

/* ---- decoding and simulation ------------------------------------------ */

/* What the template has done to the stack so far, relative to the CFA (the
 * value of rsp before the call that entered it). */
struct frame_state {
	int64_t depth; /* CFA - rsp: 8 at entry (the return address) */
	bool rbp_saved; /* the caller's rbp is at CFA + rbp_offset */
	int64_t rbp_offset;
	bool rbp_changed; /* rbp no longer holds the caller's value */
	bool rbp_is_fp; /* rbp == CFA - fp_depth (mov %rsp,%rbp) */
	int64_t fp_depth;
};

struct simulation {
	csh handle;
	struct frame_state state;
	bool seen_call, seen_ret;
	char *errmsg;
	size_t errmsg_size;
};

static bool is_sp(x86_reg reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP || reg == X86_REG_SPL;
}

static bool is_bp(x86_reg reg)
{
	return reg == X86_REG_RBP || reg == X86_REG_EBP || reg == X86_REG_BP || reg == X86_REG_BPL;
}

static int reject(struct simulation *sim, const cs_insn *insn, const char *why)
{
	return ps_fail(sim->errmsg, sim->errmsg_size, -EINVAL,
	               "cannot analyse the trampoline template: `%s%s%s` at offset %llu %s",
	               insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str,
	               (unsigned long long)insn->address, why);
}

/* rsp moved by delta bytes towards lower addresses. */
static int move_sp(struct simulation *sim, const cs_insn *insn, int64_t delta)
{
	struct frame_state *st = &sim->state;

	if (delta < -MAX_FRAME || delta > MAX_FRAME || st->depth + delta < 8 ||
	    st->depth + delta > MAX_FRAME)
		return reject(sim, insn, "moves rsp out of the frame");
	st->depth += delta;
	/* a saved rbp released below rsp is gone */
	if (st->rbp_saved && -st->rbp_offset > st->depth) {
		if (st->rbp_changed)
			return reject(sim, insn, "drops the saved rbp");
		st->rbp_saved = false;
	}
	return 0;
}

/* rbp now holds something other than the caller's value. */
static int clobber_bp(struct simulation *sim, const cs_insn *insn)
{
	struct frame_state *st = &sim->state;

	if (!st->rbp_saved && !st->rbp_changed)
		return reject(sim, insn, "overwrites rbp before saving it");
	st->rbp_changed = true;
	st->rbp_is_fp = false;
	return 0;
}

static bool op_is_reg(const cs_x86_op *op, bool (*pred)(x86_reg))
{
	return op->type == X86_OP_REG && pred(op->reg);
}

static int sim_push(struct simulation *sim, const cs_insn *insn, const cs_x86 *x86)
{
	struct frame_state *st = &sim->state;

	if (x86->op_count != 1 || x86->operands[0].type != X86_OP_REG || x86->operands[0].size != 8)
		return reject(sim, insn, "(only pushes of 64-bit registers are understood)");
	int err = move_sp(sim, insn, 8);
	if (err)
		return err;
	if (is_bp(x86->operands[0].reg) && !st->rbp_saved && !st->rbp_changed) {
		st->rbp_saved = true;
		st->rbp_offset = -st->depth;
	}
	return 0;
}

static int sim_pop(struct simulation *sim, const cs_insn *insn, const cs_x86 *x86)
{
	struct frame_state *st = &sim->state;

	if (x86->op_count != 1 || x86->operands[0].type != X86_OP_REG || x86->operands[0].size != 8)
		return reject(sim, insn, "(only pops into 64-bit registers are understood)");
	x86_reg reg = x86->operands[0].reg;
	if (is_sp(reg))
		return reject(sim, insn, "loads rsp from the stack");
	bool restores = st->rbp_saved && st->rbp_offset == -st->depth;
	if (is_bp(reg)) {
		if (restores) {
			st->rbp_saved = false;
			st->rbp_changed = false;
			st->rbp_is_fp = false;
		} else {
			int err = clobber_bp(sim, insn);
			if (err)
				return err;
		}
	}
	return move_sp(sim, insn, -8);
}

/* add/sub $imm, %rsp */
static int sim_add_sub(struct simulation *sim, const cs_insn *insn, const cs_x86 *x86, bool sub)
{
	if (x86->op_count != 2 || !op_is_reg(&x86->operands[0], is_sp) ||
	    x86->operands[0].size != 8 || x86->operands[1].type != X86_OP_IMM)
		return 1; /* not about rsp: the generic check decides */
	int64_t imm = x86->operands[1].imm;
	if (imm < -MAX_FRAME || imm > MAX_FRAME)
		return reject(sim, insn, "moves rsp out of the frame");
	return move_sp(sim, insn, sub ? imm : -imm);
}

/* mov %rsp,%rbp and mov %rbp,%rsp */
static int sim_mov(struct simulation *sim, const cs_insn *insn, const cs_x86 *x86)
{
	struct frame_state *st = &sim->state;

	if (x86->op_count != 2 || x86->operands[0].size != 8)
		return 1;
	const cs_x86_op *dst = &x86->operands[0], *src = &x86->operands[1];
	if (op_is_reg(dst, is_bp) && op_is_reg(src, is_sp)) {
		int err = clobber_bp(sim, insn);
		if (err)
			return err;
		st->rbp_is_fp = true;
		st->fp_depth = st->depth;
		return 0;
	}
	if (op_is_reg(dst, is_sp) && op_is_reg(src, is_bp)) {
		if (!st->rbp_is_fp)
			return reject(sim, insn,
			              "sets rsp from an rbp that is not a frame pointer");
		return move_sp(sim, insn, st->fp_depth - st->depth);
	}
	return 1;
}

/* Anything else must leave rsp, rbp, the stack and the control flow alone. */
static int sim_other(struct simulation *sim, const cs_insn *insn, const cs_x86 *x86)
{
	static const uint8_t branches[] = { CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_RET,
		                            CS_GRP_INT,  CS_GRP_IRET, CS_GRP_BRANCH_RELATIVE };
	cs_regs read, written;
	uint8_t nr_read = 0, nr_written = 0;

	for (size_t i = 0; i < sizeof(branches); i++)
		if (cs_insn_group(sim->handle, insn, branches[i]))
			return reject(sim, insn, "changes the control flow");
	if (cs_regs_access(sim->handle, insn, read, &nr_read, written, &nr_written) != CS_ERR_OK)
		return reject(sim, insn, "(its registers are unknown)");
	for (uint8_t i = 0; i < x86->op_count; i++) {
		const cs_x86_op *op = &x86->operands[i];

		if (op->type == X86_OP_MEM && (op->access & CS_AC_WRITE) &&
		    (is_sp(op->mem.base) || is_bp(op->mem.base) || is_sp(op->mem.index)))
			return reject(sim, insn, "writes to the stack");
	}
	for (uint8_t i = 0; i < nr_written; i++) {
		if (is_sp((x86_reg)written[i]))
			return reject(sim, insn, "changes rsp");
		if (is_bp((x86_reg)written[i])) {
			int err = clobber_bp(sim, insn);
			if (err)
				return err;
		}
	}
	return 0;
}

static bool is_padding(const cs_insn *insn)
{
	return insn->id == X86_INS_NOP || insn->id == X86_INS_INT3;
}

static int simulate(struct simulation *sim, const cs_insn *insn)
{
	const cs_x86 *x86 = &insn->detail->x86;
	struct frame_state *st = &sim->state;
	int rc;

	if (sim->seen_ret)
		return is_padding(insn) ? 0 : reject(sim, insn, "follows the ret");
	switch (insn->id) {
	case X86_INS_ENDBR64:
	case X86_INS_NOP:
		return 0;
	case X86_INS_PUSH:
		return sim_push(sim, insn, x86);
	case X86_INS_POP:
		return sim_pop(sim, insn, x86);
	case X86_INS_SUB:
	case X86_INS_ADD:
		rc = sim_add_sub(sim, insn, x86, insn->id == X86_INS_SUB);
		return rc <= 0 ? rc : sim_other(sim, insn, x86);
	case X86_INS_MOV:
		rc = sim_mov(sim, insn, x86);
		return rc <= 0 ? rc : sim_other(sim, insn, x86);
	case X86_INS_LEAVE:
		if (!st->rbp_is_fp || !st->rbp_saved || st->rbp_offset != -st->fp_depth)
			return reject(sim, insn, "without a frame pointer over the saved rbp");
		st->depth = st->fp_depth;
		st->rbp_saved = false;
		st->rbp_changed = false;
		st->rbp_is_fp = false;
		return move_sp(sim, insn, -8);
	case X86_INS_CALL:
		/* the callee returns with rsp as it was */
		if (sim->seen_call)
			return reject(sim, insn, "is a second call");
		sim->seen_call = true;
		return 0;
	case X86_INS_RET:
		if (x86->op_count != 0)
			return reject(sim, insn, "pops arguments");
		if (!sim->seen_call)
			return reject(sim, insn, "returns before any call");
		if (st->depth != 8 || st->rbp_changed)
			return reject(sim, insn, "returns with the stack or rbp not restored");
		sim->seen_ret = true;
		return 0;
	default:
		return sim_other(sim, insn, x86);
	}
}

static struct ps_unwind_rule rule_of(const struct frame_state *st)
{
	return (struct ps_unwind_rule){
		.cfa_base = PS_UNWIND_CFA_SP,
		.cfa_offset = st->depth,
		.ra_offset = -8,
		.rbp_saved = st->rbp_saved,
		.rbp_offset = st->rbp_saved ? st->rbp_offset : 0,
	};
}

int ps_trampoline_decode(const uint8_t *code, size_t size, struct ps_trampoline *out, char *errmsg,
                         size_t errmsg_size)
{
	struct simulation sim = {
		.state = { .depth = 8 },
		.errmsg = errmsg,
		.errmsg_size = errmsg_size,
	};
	cs_insn *insns = NULL;
	int rc = 0;

	if (!code || !out)
		return ps_fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (size == 0 || size > PS_TRAMPOLINE_MAX_SIZE)
		return ps_fail(errmsg, errmsg_size, -EINVAL,
		               "a trampoline template of %zu bytes: expected 1 to %d", size,
		               PS_TRAMPOLINE_MAX_SIZE);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &sim.handle) != CS_ERR_OK)
		return ps_fail(errmsg, errmsg_size, -ENOMEM,
		               "capstone: cannot open an x86-64 decoder");
	cs_option(sim.handle, CS_OPT_DETAIL, CS_OPT_ON);
	size_t count = cs_disasm(sim.handle, code, size, 0, 0, &insns);
	size_t decoded = 0;

	for (size_t i = 0; i < count && rc == 0; i++) {
		const cs_insn *insn = &insns[i];

		if (!sim.seen_ret) {
			struct ps_trampoline_insn *slot = &out->insns[out->nr_insns++];

			/* the state before the instruction runs */
			slot->offset = (uint32_t)insn->address;
			slot->rule = rule_of(&sim.state);
		}
		bool was_call = insn->id == X86_INS_CALL && !sim.seen_call;
		rc = simulate(&sim, insn);
		if (rc == 0 && was_call)
			out->return_offset = (uint32_t)(insn->address + insn->size);
		if (rc == 0 && sim.seen_ret && !out->code_end)
			out->code_end = (uint32_t)(insn->address + insn->size);
		decoded = (size_t)(insn->address + insn->size);
	}
	if (rc == 0 && decoded < size)
		rc = ps_fail(
		        errmsg, errmsg_size, -EINVAL,
		        "cannot analyse the trampoline template: no x86-64 instruction at offset "
		        "%zu (byte %#04x)",
		        decoded, code[decoded]);
	if (rc == 0 && !sim.seen_call)
		rc = ps_fail(errmsg, errmsg_size, -EINVAL,
		             "cannot analyse the trampoline template: it calls nothing");
	if (rc == 0 && !sim.seen_ret)
		rc = ps_fail(errmsg, errmsg_size, -EINVAL,
		             "cannot analyse the trampoline template: it does not end with ret");
	/* the return site is an instruction of the template, before the ret */
	if (rc == 0 && !ps_trampoline_rule_at(out, out->return_offset, &out->return_rule))
		rc = ps_fail(
		        errmsg, errmsg_size, -EINVAL,
		        "cannot analyse the trampoline template: the call is its last instruction");
	cs_free(insns, count);
	cs_close(&sim.handle);
	if (rc == 0)
		out->size = (uint32_t)size;
	else
		memset(out, 0, sizeof(*out));
	return rc;
}

int ps_trampoline_from_elf(const struct ps_elf *elf, struct ps_trampoline *out, char *errmsg,
                           size_t errmsg_size)
{
	uint8_t code[PS_TRAMPOLINE_MAX_SIZE];
	size_t size;

	if (!out || !elf)
		return ps_fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	memset(out, 0, sizeof(*out));
	int rc = ps_trampoline_read_template(elf, code, sizeof(code), &size, errmsg, errmsg_size);
	if (rc)
		return rc;
	rc = ps_trampoline_decode(code, size, out, errmsg, errmsg_size);
	if (rc && errmsg && errmsg_size) {
		/* say which file */
		char detail[PS_MSG_MAX];
		snprintf(detail, sizeof(detail), "%s", errmsg);
		snprintf(errmsg, errmsg_size, "%s: %s", ps_elf_file(elf), detail);
	}
	return rc;
}

bool ps_trampoline_rule_at(const struct ps_trampoline *t, uint64_t offset,
                           struct ps_unwind_rule *out)
{
	if (!t || !out || offset >= t->code_end)
		return false;
	for (uint32_t i = 0; i < t->nr_insns; i++) {
		if (t->insns[i].offset == offset) {
			*out = t->insns[i].rule;
			return true;
		}
	}
	return false;
}
