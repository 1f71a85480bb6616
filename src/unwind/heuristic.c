/* Frames that no CFI describes.
 *  - Quirk mode: what Debian's perf does for a frame that .eh_frame does
 *    not describe. Its libunwind is used without .debug_frame support (perf
 *    was built without it), so such a frame is unwound by libunwind's
 *    frame-chain guess (x86_64 unw_step() after dwarf_step() fails), not by
 *    libdwfl's.
 *  - Both modes: JIT code outside any ELF module (CPython's -X perf
 *    trampolines) for which the caller gives a ps_unwind_rule through
 *    callbacks.frame_rule.
 */
#include "unwind/unwind_priv.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define DWARF_RBX 3
#define DWARF_RBP 6
#define DWARF_R12 12
#define DWARF_R15 15

/* Whether cfi has a row for addr (its own addresses). */
static bool cfi_covers(Dwarf_CFI *cfi, uint64_t addr)
{
	Dwarf_Frame *frame = NULL;
	bool covered = cfi && dwarf_cfi_addrframe(cfi, addr, &frame) == 0;

	free(frame);
	return covered;
}

bool ps_unwind_eh_covered(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
	/* samples repeat their PCs: a small direct-mapped cache spares most
	 * lookups (dwarf_cfi_addrframe() allocates and runs the CFI program) */
	struct ps_unwind_coverage *slot =
	        &u->caches
	                 ->coverage[(pc * 0x9e3779b97f4a7c15ULL) >> (64 - PS_UNWIND_COVERAGE_BITS)];

	if (slot->generation == u->generation && slot->pc == pc && slot->mod == mod)
		return slot->covered;

	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	bool covered = cfi_covers(cfi, pc - bias);

	*slot = (struct ps_unwind_coverage){
		.pc = pc, .mod = mod, .generation = u->generation, .covered = covered
	};
	return covered;
}

/* perf's read_unwind_spec_eh_frame() finds the header by section name in
 * the file; libunwind's table search needs version 1 and a table of
 * datarel|sdata4 entries. */
static bool elf_has_eh_frame_hdr(Elf *elf)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = ps_unwind_elf_section(elf, ".eh_frame_hdr", &shdr);
	Elf_Data *data;

	if (!scn || shdr.sh_type == SHT_NOBITS)
		return false;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf || data->d_size < 4)
		return false;
	const unsigned char *hdr = data->d_buf;
	/* version, eh_frame_ptr_enc, fde_count_enc, table_enc */
	return hdr[0] == 1 && hdr[3] == (DW_EH_PE_datarel | DW_EH_PE_sdata4);
}

bool ps_unwind_has_eh_frame_hdr(struct ps_unwinder *u, Dwfl_Module *mod)
{
	struct ps_unwind_module *m = NULL;

	if (u->last_module < u->nr_modules && u->modules[u->last_module].mod == mod)
		m = &u->modules[u->last_module];
	for (size_t i = 0; !m && i < u->nr_modules; i++)
		if (u->modules[i].mod == mod)
			m = &u->modules[i];
	if (m && m->eh_frame_hdr)
		return m->eh_frame_hdr > 0;

	Dwarf_Addr bias;
	bool usable = elf_has_eh_frame_hdr(dwfl_module_getelf(mod, &bias));

	if (m)
		m->eh_frame_hdr = usable ? 1 : -1;
	return usable;
}

/* A PLT entry: jmp *x(%rip); push $n; jmp first-entry */
static bool is_plt_entry(struct ps_unwinder *u, uint64_t ip)
{
	uint64_t w0, w1;

	if (ip > UINT64_MAX - 16 || ps_unwind_access_mem(u, ip, &w0) < 0 ||
	    ps_unwind_access_mem(u, ip + 8, &w1) < 0)
		return false;
	return (w0 & 0xffff) == 0x25ff && ((w0 >> 48) & 0xff) == 0x68 &&
	       ((w1 >> 24) & 0xff) == 0xe9;
}

bool ps_unwind_guess_caller(struct ps_unwinder *u, Dwfl_Frame *state, uint64_t ip)
{
	Dwarf_Word regs[PS_UNWIND_NR_DWARF_REGS] = { 0 };
	uint32_t present = 0;

	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
		if (dwfl_frame_reg(state, regno, &regs[regno]) == 0)
			present |= 1u << regno;
	/* libunwind reads the SP as the CFA it computed: the same value */
	if (!(present & 1u << PS_UNWIND_DWARF_SP) || !(present & 1u << DWARF_RBP))
		return false;
	uint64_t cfa = regs[PS_UNWIND_DWARF_SP];
	uint64_t next_ip;

	if (is_plt_entry(u, ip)) {
		/* the return address is on top of the stack, nothing saved */
		if (ps_unwind_access_mem(u, cfa, &next_ip) < 0 || cfa > UINT64_MAX - 8)
			return false;
		regs[PS_UNWIND_DWARF_SP] = cfa + 8;
	} else {
		uint64_t rbp = regs[DWARF_RBP], saved_rbp, code;

		/* reading the code at ip fails only outside a mapped file;
		 * libunwind then tries a "rip fixup" not emulated here */
		if (ps_unwind_access_mem(u, ip, &code) != 0 || rbp == 0)
			return false;
		/* a frame pointer must point a little above the CFA */
		if (ps_unwind_access_mem(u, rbp, &saved_rbp) < 0 || rbp < cfa ||
		    rbp - cfa > 0x4000 || rbp > UINT64_MAX - 16)
			return false;
		if (ps_unwind_access_mem(u, rbp + 8, &next_ip) < 0)
			return false;
		/* every other register is lost; the SP is the old CFA + 16,
		 * not rbp + 16 */
		present = 1u << DWARF_RBP | 1u << PS_UNWIND_DWARF_SP | 1u << PS_UNWIND_DWARF_IP;
		regs[DWARF_RBP] = saved_rbp;
		regs[PS_UNWIND_DWARF_SP] = cfa + 16;
	}
	if (next_ip == ip && regs[PS_UNWIND_DWARF_SP] == cfa)
		return false;
	regs[PS_UNWIND_DWARF_IP] = next_ip;
	present |= 1u << PS_UNWIND_DWARF_IP;
	memcpy(u->dwarf_regs, regs, sizeof(regs));
	u->dwarf_regs_present = present;
	return true;
}

/* ---- PLT stubs without CFI ---------------------------------------------- */

/* The executable section of mod holding pc, when it is a PLT section, and
 * the module's bias. */
static bool plt_section(Dwfl_Module *mod, uint64_t pc, GElf_Shdr *out, const char **name,
                        Dwarf_Addr *bias_out)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t names;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &names) != 0)
		return false;
	uint64_t addr = pc - bias;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) ||
		    addr < shdr.sh_addr || addr - shdr.sh_addr >= shdr.sh_size)
			continue;
		const char *n = elf_strptr(elf, names, shdr.sh_name);
		if (!n || (strncmp(n, ".plt", 4) != 0 && strcmp(n, ".iplt") != 0))
			return false;
		*out = shdr;
		*name = n;
		*bias_out = bias;
		return true;
	}
	return false;
}

bool ps_unwind_no_cfi(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc)
{
	Dwarf_Addr debug_bias = 0;

	if (ps_unwind_eh_covered(u, mod, pc))
		return false;
	return !cfi_covers(dwfl_module_dwarf_cfi(mod, &debug_bias), pc - debug_bias);
}

bool ps_unwind_plt_rule(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc,
                        struct ps_unwind_rule *out)
{
	GElf_Shdr shdr;
	const char *name;
	Dwarf_Addr bias;

	if (!plt_section(mod, pc, &shdr, &name, &bias) || !ps_unwind_no_cfi(u, mod, pc))
		return false;

	uint64_t offset = pc - bias - shdr.sh_addr, start = pc - offset;
	/* the return address is on top of the stack, one word higher once
	 * lazy binding's stubs have pushed the symbol's index (an entry of
	 * .plt: jmp *GOT, push, jmp to the header; endbr64 first with IBT),
	 * two in the header (entered after an entry's push, it pushes the
	 * link map) */
	int64_t words = 1;
	if (strcmp(name, ".plt") == 0) {
		uint64_t first;
		bool ibt = offset >= 16 && ps_unwind_access_mem(u, start + 16, &first) == 0 &&
		           (first & 0xffffffff) == 0xfa1e0ff3;

		if (offset < 16)
			words = offset < 6 ? 2 : 3;
		else
			words = (offset - 16) % 16 >= (ibt ? 9u : 11u) ? 2 : 1;
	}
	*out = (struct ps_unwind_rule){ .cfa_base = PS_UNWIND_CFA_SP,
		                        .cfa_offset = 8 * words,
		                        .ra_offset = -8 };
	return true;
}

/* ---- caller-given rules ------------------------------------------------ */

/* What a DWARF step keeps when the CFI says nothing about a register: the
 * x86-64 psABI's callee-saved registers (elfutils' abi_cfi marks them
 * same-value and leaves the others undefined). */
static uint32_t callee_saved_mask(void)
{
	uint32_t mask = 1u << DWARF_RBX | 1u << DWARF_RBP;

	for (unsigned regno = DWARF_R12; regno <= DWARF_R15; regno++)
		mask |= 1u << regno;
	return mask;
}

/* One word at addr; only bytes the sample really holds (the stack copy or
 * a mapped file) count. */
static bool read_word(struct ps_unwinder *u, uint64_t addr, uint64_t *value)
{
	return ps_unwind_access_mem(u, addr, value) == 0;
}

bool ps_unwind_apply_rule(struct ps_unwinder *u, Dwfl_Frame *state,
                          const struct ps_unwind_rule *rule)
{
	Dwarf_Word regs[PS_UNWIND_NR_DWARF_REGS] = { 0 };
	uint32_t present = 0;

	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
		if (dwfl_frame_reg(state, regno, &regs[regno]) == 0)
			present |= 1u << regno;
	return ps_unwind_apply_rule_regs(u, regs, present, rule);
}

bool ps_unwind_apply_rule_regs(struct ps_unwinder *u, const Dwarf_Word *frame_regs,
                               uint32_t present, const struct ps_unwind_rule *rule)
{
	unsigned base;

	switch (rule->cfa_base) {
	case PS_UNWIND_CFA_SP:
		base = PS_UNWIND_DWARF_SP;
		break;
	case PS_UNWIND_CFA_RBP:
		base = DWARF_RBP;
		break;
	default:
		return false;
	}
	if (!(present & 1u << base) || !(present & 1u << PS_UNWIND_DWARF_SP))
		return false;

	/* offsets are signed; the sums wrap like the machine's */
	uint64_t cfa = frame_regs[base] + (uint64_t)rule->cfa_offset;
	uint64_t ra, rbp = (present & 1u << DWARF_RBP) ? frame_regs[DWARF_RBP] : 0;

	/* the caller's frame lies above this one: this also rejects a CFA
	 * that wrapped around */
	if (cfa <= frame_regs[PS_UNWIND_DWARF_SP])
		return false;
	if (!read_word(u, cfa + (uint64_t)rule->ra_offset, &ra))
		return false;
	if (rule->rbp_saved) {
		if (!read_word(u, cfa + (uint64_t)rule->rbp_offset, &rbp))
			return false;
		present |= 1u << DWARF_RBP;
	}

	present &= callee_saved_mask();
	present |= 1u << PS_UNWIND_DWARF_SP | 1u << PS_UNWIND_DWARF_IP;
	/* the callee-saved registers carry over, the rest are unknown (0);
	 * in place, register by register, should frame_regs be dwarf_regs */
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++)
		u->dwarf_regs[regno] = (present & 1u << regno) ? frame_regs[regno] : 0;
	if (present & 1u << DWARF_RBP)
		u->dwarf_regs[DWARF_RBP] = rbp;
	u->dwarf_regs[PS_UNWIND_DWARF_SP] = cfa;
	u->dwarf_regs[PS_UNWIND_DWARF_IP] = ra;
	u->dwarf_regs_present = present;
	return true;
}
