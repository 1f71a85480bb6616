/* A kernel module's symbols as perf 6.1 loads them at its first lookup
 * (dso__load() of a module map): from its .ko file when perf finds one
 * with a symbol table (the build-id cache, or the path its MMAP recorded
 * under --symfs), whose .text symbols replace kallsyms's, and perf's map
 * of the module then starts at .text's file offset; otherwise kallsyms's,
 * when perf had loaded the kernel's map before. A module loaded before
 * that, from its .ko or empty (dso__load() found no file), gets, once
 * perf loads kallsyms, all its kallsyms symbols but the first of each
 * run: maps__split_kallsyms() walks the kernel's symbols in address order
 * and checks whether a module is loaded only when the module changes
 * from the symbol before, leaving that one symbol out.
 */
#include "symbols/dso_priv.h"

#include <stdlib.h>
#include <string.h>

void ps_kmodule_load(struct ps_dso *dso)
{
	struct ps_elf *elf;
	char err[PS_MSG_MAX];
	int text;

	if (dso->module_source != MODULE_UNDECIDED)
		return;
	elf = ps_dso_module_file(dso);
	if (elf) {
		/* kernel names are demangled only with --demangle-kernel;
		 * symbols of the other sections go to DSOs of their own */
		dso->symtab.no_demangle = true;
		dso->symtab.only_section = ".text";
		text = ps_elf_section_by_name(elf, ".text");
		if (text >= 0 && ps_symtab_load_dso(&dso->symtab, elf, elf, err, sizeof(err)) > 0) {
			dso->has_symtab = true;
			dso->module_text_offset = elf->sections[text].offset;
			dso->module_source = MODULE_FROM_KO;
		} else {
			/* the table replaced kallsyms's even when it gave none
			 * (and perf's map of it still starts at 0) */
			ps_symtab_release(&dso->symtab);
			ps_symtab_init(&dso->symtab);
			dso->module_source = MODULE_NO_SYMBOLS;
		}
		return;
	}
	dso->module_source =
	        dso->owner->kernel_map_loaded ? MODULE_FROM_KALLSYMS : MODULE_BEFORE_KERNEL;
}

void ps_kmodule_add_kallsyms(struct ps_dso *dso)
{
	const struct ps_symtab *tab = ps_kernel_symbols_module(dso->owner->kernel, dso->module);

	if (!tab || !ps_kmodule_from_file(dso))
		return;
	/* in address order, in the space of perf's map of the module (which
	 * starts at .text's offset), as maps__split_kallsyms() moves them */
	for (uint32_t i = ps_symtab_first(tab); i != PS_SYMTAB_NONE; i = ps_symtab_next(tab, i)) {
		const struct ps_sym *sym = &tab->syms[i];
		uint64_t start = sym->start - dso->module_start + dso->module_text_offset;

		if (sym->run_start)
			continue;
		if (ps_symtab_add(&dso->symtab, sym->name, start, 0, sym->binding, sym->type) < 0)
			return; /* out of memory: the .ko's symbols alone */
		dso->symtab.syms[dso->symtab.nr - 1].end = start + (sym->end - sym->start);
	}
}

void ps_dso_set_module_map(struct ps_dso *dso, const char *path, uint64_t start)
{
	if (dso->kind != DSO_MODULE || dso->module_path)
		return;
	dso->module_path = strdup(path);
	dso->module_start = start;
}

uint64_t ps_dso_module_pgoff(struct ps_dso *dso)
{
	if (dso->kind != DSO_MODULE)
		return 0;
	ps_kmodule_load(dso);
	return dso->module_text_offset;
}
