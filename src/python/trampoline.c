/* CPython's perf trampoline (-X perf, 3.12+): reading the template between
 * _Py_trampoline_func_start and _Py_trampoline_func_end from the
 * interpreter's ELF file, and deriving its unwind rules by decoding it with
 * capstone and simulating what it does to rsp and rbp, so that no version's
 * rule is hard-coded.
 */
#include "python/python_priv.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define START_SYMBOL "_Py_trampoline_func_start"
#define END_SYMBOL "_Py_trampoline_func_end"
/* how far the template may move rsp: it only aligns the stack */
#define MAX_FRAME 4096

static int fail(char *errmsg, size_t errmsg_size, int err, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail(char *errmsg, size_t errmsg_size, int err, const char *fmt, ...)
{
	if (errmsg && errmsg_size) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(errmsg, errmsg_size, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* ---- the template's bytes in the ELF file ----------------------------- */

/* Look both symbols up in one symbol table (.symtab, else .dynsym). */
static bool find_symbols(Elf *elf, Elf_Scn *table, uint64_t *start, uint64_t *end)
{
	GElf_Shdr shdr;
	Elf_Data *data = elf_getdata(table, NULL);
	bool have_start = false, have_end = false;

	if (!gelf_getshdr(table, &shdr) || !data || shdr.sh_entsize == 0)
		return false;
	size_t count = data->d_size / shdr.sh_entsize;
	for (size_t i = 0; i < count && !(have_start && have_end); i++) {
		GElf_Sym sym;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
		if (!name)
			continue;
		if (!have_start && strcmp(name, START_SYMBOL) == 0) {
			*start = sym.st_value;
			have_start = true;
		} else if (!have_end && strcmp(name, END_SYMBOL) == 0) {
			*end = sym.st_value;
			have_end = true;
		}
	}
	return have_start && have_end;
}

/* Copy [start, start + size) of the file's address space: from the section
 * holding it, else from the PT_LOAD segment holding it. */
static bool copy_code(Elf *elf, uint64_t start, size_t size, uint8_t *buf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    !(shdr.sh_flags & SHF_ALLOC) || start < shdr.sh_addr ||
		    start - shdr.sh_addr >= shdr.sh_size ||
		    size > shdr.sh_size - (start - shdr.sh_addr))
			continue;
		Elf_Data *data = elf_rawdata(scn, NULL);
		uint64_t at = start - shdr.sh_addr;
		if (!data || !data->d_buf || at > data->d_size || size > data->d_size - at)
			return false;
		memcpy(buf, (const uint8_t *)data->d_buf + at, size);
		return true;
	}

	size_t phnum, file_size;
	const char *image = elf_rawfile(elf, &file_size);
	if (!image || elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_LOAD ||
		    start < phdr.p_vaddr || start - phdr.p_vaddr >= phdr.p_filesz ||
		    size > phdr.p_filesz - (start - phdr.p_vaddr))
			continue;
		uint64_t offset = phdr.p_offset + (start - phdr.p_vaddr);
		if (offset < phdr.p_offset || offset > file_size || size > file_size - offset)
			return false;
		memcpy(buf, image + offset, size);
		return true;
	}
	return false;
}

static int read_template_elf(Elf *elf, const char *path, uint8_t *buf, size_t cap, size_t *size,
                             char *errmsg, size_t errmsg_size)
{
	GElf_Ehdr ehdr;
	Elf_Scn *symtab = NULL, *dynsym = NULL, *scn = NULL;
	uint64_t start = 0, end = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		return fail(errmsg, errmsg_size, -EINVAL, "%s: not an ELF file", path);
	if (ehdr.e_machine != EM_X86_64 || ehdr.e_ident[EI_CLASS] != ELFCLASS64)
		return fail(errmsg, errmsg_size, -EOPNOTSUPP,
		            "%s: not an x86-64 file: trampolines are decoded for x86-64 only",
		            path);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		if (shdr.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (shdr.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
	}
	if (!(symtab && find_symbols(elf, symtab, &start, &end)) &&
	    !(dynsym && find_symbols(elf, dynsym, &start, &end)))
		return fail(
		        errmsg, errmsg_size, -ENOENT,
		        "%s: no " START_SYMBOL "/" END_SYMBOL
		        " symbols (not a CPython 3.12+ interpreter built with perf trampolines)",
		        path);
	if (end <= start || end - start > cap || end - start > PS_TRAMPOLINE_MAX_SIZE)
		return fail(errmsg, errmsg_size, -EINVAL,
		            "%s: the trampoline template spans %#llx..%#llx, not 1 to %d bytes",
		            path, (unsigned long long)start, (unsigned long long)end,
		            PS_TRAMPOLINE_MAX_SIZE);
	*size = (size_t)(end - start);
	if (!copy_code(elf, start, *size, buf))
		return fail(errmsg, errmsg_size, -EINVAL,
		            "%s: the trampoline template at %#llx is not in the file", path,
		            (unsigned long long)start);
	return 0;
}

int ps_trampoline_read_template(const char *path, uint8_t *buf, size_t cap, size_t *size,
                                char *errmsg, size_t errmsg_size)
{
	if (!path || !buf || !size)
		return fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	*size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		return fail(errmsg, errmsg_size, -err, "%s: %s", path, strerror(err));
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc;
	if (!elf)
		rc = fail(errmsg, errmsg_size, -EINVAL, "%s: %s", path, elf_errmsg(-1));
	else
		rc = read_template_elf(elf, path, buf, cap, size, errmsg, errmsg_size);
	elf_end(elf);
	close(fd);
	return rc;
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
	return fail(sim->errmsg, sim->errmsg_size, -EINVAL,
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
		return fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	memset(out, 0, sizeof(*out));
	if (size == 0 || size > PS_TRAMPOLINE_MAX_SIZE)
		return fail(errmsg, errmsg_size, -EINVAL,
		            "a trampoline template of %zu bytes: expected 1 to %d", size,
		            PS_TRAMPOLINE_MAX_SIZE);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &sim.handle) != CS_ERR_OK)
		return fail(errmsg, errmsg_size, -ENOMEM,
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
		rc = fail(errmsg, errmsg_size, -EINVAL,
		          "cannot analyse the trampoline template: no x86-64 instruction at offset "
		          "%zu (byte %#04x)",
		          decoded, code[decoded]);
	if (rc == 0 && !sim.seen_call)
		rc = fail(errmsg, errmsg_size, -EINVAL,
		          "cannot analyse the trampoline template: it calls nothing");
	if (rc == 0 && !sim.seen_ret)
		rc = fail(errmsg, errmsg_size, -EINVAL,
		          "cannot analyse the trampoline template: it does not end with ret");
	/* the return site is an instruction of the template, before the ret */
	if (rc == 0 && !ps_trampoline_rule_at(out, out->return_offset, &out->return_rule))
		rc = fail(
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

int ps_trampoline_from_elf(const char *path, struct ps_trampoline *out, char *errmsg,
                           size_t errmsg_size)
{
	uint8_t code[PS_TRAMPOLINE_MAX_SIZE];
	size_t size;

	if (!out)
		return fail(errmsg, errmsg_size, -EINVAL, "invalid arguments");
	memset(out, 0, sizeof(*out));
	int rc = ps_trampoline_read_template(path, code, sizeof(code), &size, errmsg, errmsg_size);
	if (rc)
		return rc;
	rc = ps_trampoline_decode(code, size, out, errmsg, errmsg_size);
	if (rc && errmsg && errmsg_size) {
		/* say which file */
		char detail[256];
		snprintf(detail, sizeof(detail), "%s", errmsg);
		snprintf(errmsg, errmsg_size, "%s: %s", path, detail);
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
