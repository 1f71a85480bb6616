/* The kernel's and its modules' symbols behind the DSO registry: loading
 * them as perf does (dso__load_kernel_sym, map__load of the kernel and of
 * a module), their relocation and extent, and the name of a kernel or
 * module address. */
#include "symbols/dso_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct ps_kernel_source kernel_source(const struct ps_symbols *symbols, bool whole)
{
	const struct ps_dso *kdso = symbols->kernel_dso;

	return (struct ps_kernel_source){
		.kallsyms = symbols->kallsyms,
		.vmlinux = symbols->vmlinux,
		.build_id = kdso ? kdso->build_id : NULL,
		.build_id_size = kdso ? kdso->build_id_size : 0,
		.buildid_dir = symbols->buildid_dir,
		.symfs = symbols->symfs,
		.files = &symbols->files,
		.whole = whole,
		.live = symbols->live_kernel,
	};
}

/* After a load: its warnings, the relocation. */
static void kernel_loaded(struct ps_symbols *symbols, const struct ps_kernel_load_result *result)
{
	if (result->bad_lines)
		ps_symbols_log(symbols, PS_LOG_WARN, "symbols: kernel: %s", result->err);
	if (symbols->have_reloc)
		ps_kernel_symbols_reloc(symbols->kernel, symbols->reloc_name, symbols->reloc_addr);
	if (ps_kernel_symbols_core_only(symbols->kernel))
		ps_symbols_log(symbols, PS_LOG_DEBUG,
		               "symbols: kernel: its own symbols from perf record's copy of "
		               "/proc/kallsyms (of this boot); the modules' from /proc/kallsyms "
		               "when asked for");
}

/* perf's dso__load_kernel_sym, without vmlinux_path and kcore. */
static void load_kernel(struct ps_symbols *symbols)
{
	struct ps_kernel_source source = kernel_source(symbols, false);
	struct ps_kernel_load_result result = { 0 };
	int rc;

	symbols->kernel_tried = true;
	if (!ps_ahead_take_kernel(symbols->ahead, &source, &symbols->kernel, &result, &rc))
		rc = ps_kernel_symbols_load(&source, &symbols->kernel, &result);
	if (rc < 0) {
		ps_symbols_log(symbols, PS_LOG_WARN, "symbols: kernel: %s", result.err);
		return;
	}
	kernel_loaded(symbols, &result);
}

/* The kernel's symbols, modules' included: a table of the kernel's own
 * (from perf record's copy, kernel_source.c) is replaced by all of
 * /proc/kallsyms, whose kernel part is the same. The first table stays
 * to the end: answers already given hold its names. */
static void kernel_whole(struct ps_symbols *symbols)
{
	struct ps_kernel_source source;
	struct ps_kernel_symbols *core = symbols->kernel;
	struct ps_kernel_load_result result = { 0 };
	int rc;

	if (!ps_kernel_symbols_core_only(core) || symbols->kernel_whole_tried)
		return;
	symbols->kernel_whole_tried = true;
	source = kernel_source(symbols, true);
	rc = ps_kernel_symbols_load(&source, &symbols->kernel, &result);
	if (rc < 0) {
		symbols->kernel = core;
		ps_symbols_log(symbols, PS_LOG_WARN, "symbols: kernel modules: %s", result.err);
		return;
	}
	symbols->kernel_core = core;
	kernel_loaded(symbols, &result);
}

int ps_symbols_kernel_reloc(struct ps_symbols *symbols, const char *ref_name, uint64_t ref_addr)
{
	char *name = strdup(ref_name);

	if (!name)
		return -ENOMEM;
	free(symbols->reloc_name);
	symbols->reloc_name = name;
	symbols->reloc_addr = ref_addr;
	symbols->have_reloc = true;
	if (symbols->kernel)
		return ps_kernel_symbols_reloc(symbols->kernel, ref_name, ref_addr);
	return 0;
}

bool ps_symbols_kernel_section(const struct ps_symbols *symbols, uint64_t addr, const char **name,
                               uint64_t *start, uint64_t *end, uint64_t *offset)
{
	return symbols->kernel_map_loaded &&
	       ps_kernel_symbols_section(symbols->kernel, addr, name, start, end, offset);
}

const char *ps_symbols_kernel_vmlinux(const struct ps_symbols *symbols, uint64_t *text_offset)
{
	if (!symbols->kernel_map_loaded || !ps_kernel_symbols_vmlinux(symbols->kernel, text_offset))
		return NULL;
	return symbols->vmlinux;
}

bool ps_symbols_kernel_extent(const struct ps_symbols *symbols, uint64_t *start, uint64_t *end)
{
	return symbols->kernel_map_loaded && ps_kernel_symbols_extent(symbols->kernel, start, end);
}

/* perf loads the kernel's map; from kallsyms, maps__split_kallsyms()
 * gives the modules loaded from their .ko before then kallsyms's symbols
 * too (ps_kmodule_add_kallsyms()), which changes answers already given
 * for them. */
static void kernel_map_loads(struct ps_symbols *symbols)
{
	if (symbols->kernel_map_loaded)
		return;
	symbols->kernel_map_loaded = true;
	for (size_t i = 0; symbols->kernel && symbols->buckets && i < symbols->nr_buckets; i++)
		for (struct ps_dso *dso = symbols->buckets[i]; dso; dso = dso->next) {
			if (dso->kind != DSO_MODULE || !ps_kmodule_from_file(dso))
				continue;
			kernel_whole(symbols);
			ps_kmodule_add_kallsyms(dso);
			free(dso->slots);
			dso->slots = NULL;
			dso->nr_slots = dso->used_slots = 0;
		}
}

int ps_dso_load(struct ps_dso *dso)
{
	struct ps_symbols *symbols = dso->owner;
	bool first = !dso->loaded;

	dso->loaded = true;
	if (dso->kind == DSO_KERNEL || dso->kind == DSO_MODULE) {
		if (!symbols->kernel_tried)
			load_kernel(symbols);
		if (dso->kind == DSO_MODULE) {
			kernel_whole(symbols);
			ps_kmodule_load(dso);
			/* dso__load() found no file to read */
			if (first && !ps_kmodule_from_file(dso))
				return -1;
		} else {
			kernel_map_loads(symbols);
		}
	}
	return 0;
}

size_t ps_dso_resolve_kernel(struct ps_dso *dso, uint64_t addr, struct ps_frame_name *frames)
{
	struct ps_symbols *symbols = dso->owner;
	const struct ps_sym *sym = NULL;
	uint64_t symbol_addr = addr;

	if (!symbols->kernel_tried)
		load_kernel(symbols);
	if (dso->kind == DSO_MODULE) {
		kernel_whole(symbols);
		ps_kmodule_load(dso);
		if (ps_kmodule_from_file(dso)) {
			/* perf's map of the module starts at .text's offset (0
			 * without symbols); kallsyms's may join the .ko's
			 * (kernel_map_loads()) */
			symbol_addr = addr - dso->module_start + dso->module_text_offset;
			sym = ps_symtab_find(&dso->symtab, symbol_addr);
		} else if (dso->module_source == MODULE_FROM_KALLSYMS && symbols->kernel) {
			sym = ps_kernel_symbols_find(symbols->kernel, dso->module, addr,
			                             &symbol_addr);
		} else if (dso->module_source == MODULE_BEFORE_KERNEL &&
		           !symbols->kernel_map_loaded) {
			/* none yet: kallsyms's come when perf loads it */
			symbols->answer_incomplete = true;
		} else if (dso->module_source == MODULE_BEFORE_KERNEL && symbols->kernel) {
			/* maps__split_kallsyms() met the module loaded: it left
			 * out the symbol that starts each run of the module's
			 * and moved the rest in */
			sym = ps_kernel_symbols_find(symbols->kernel, dso->module, addr,
			                             &symbol_addr);
			if (sym && sym->run_start)
				sym = NULL;
		}
	} else {
		if (dso->kind == DSO_KERNEL)
			kernel_map_loads(symbols);
		if (symbols->kernel)
			sym = ps_kernel_symbols_find(symbols->kernel, NULL, addr, &symbol_addr);
	}
	frames[0].sym = sym ? sym->name : NULL;
	frames[0].offset = sym ? symbol_addr - sym->start : 0;
	frames[0].size = sym ? sym->end - sym->start : 0;
	frames[0].inlined = false;
	frames[0].srcline = symbols->srcline ? ps_dso_addr_srcline(dso, addr) : NULL;
	return 1;
}
