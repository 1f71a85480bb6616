/* Naming one address: the frame, or the inline chain, perf script prints
 * for an address of the kernel or of a process, found in the maps of the
 * moment.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_priv.h"

#include "base/array.h"

#define MAX_INLINE 32

struct ps_frame *ps_pipeline_push_frame(struct ps_pipeline *pipeline)
{
	struct ps_pipeline_stack *stack = &pipeline->stack;
	struct ps_frame *f;

	if (!ps_array_reserve((void **)&pipeline->frames, &pipeline->cap_frames,
	                      stack->nr_frames + 1, sizeof(*pipeline->frames), 256))
		return NULL;
	stack->frames = pipeline->frames;
	f = &pipeline->frames[stack->nr_frames++];
	memset(f, 0, sizeof(*f));
	return f;
}

static const struct ps_map *find_frame_map(struct ps_pipeline *pipeline,
                                           const struct ps_process *process, uint64_t ip)
{
	const struct ps_map *map;

	if (pipeline->hint_process == process)
		for (unsigned i = 0; i < pipeline->nr_hints; i++) {
			map = pipeline->hint_maps[i];
			if (ip >= map->start && ip < map->end)
				return map;
		}
	map = ps_process_find_map(process, ip);
	if (map) {
		if (pipeline->hint_process != process) {
			pipeline->hint_process = process;
			pipeline->nr_hints = 0;
		}
		if (pipeline->nr_hints < PS_PIPELINE_HINTS)
			pipeline->hint_maps[pipeline->nr_hints++] = map;
		else
			pipeline->hint_maps[pipeline->next_hint++ % PS_PIPELINE_HINTS] = map;
	}
	return map;
}

/* A kernel address no recorded map holds: perf finds it in the kernel
 * map once that map is loaded and covers every kernel symbol (init text,
 * past the _etext where perf record's kernel MMAP ends). */
static const struct ps_map *kernel_extent_map(struct ps_pipeline *pipeline, uint64_t ip)
{
	const struct ps_process *kernel = ps_machine_kernel(pipeline->machine);
	uint64_t start, end;

	if (!ps_symbols_kernel_extent(pipeline->symbols, &start, &end) || ip < start || ip >= end)
		return NULL;
	for (const struct ps_map *map = ps_process_next_map(kernel, NULL); map;
	     map = ps_process_next_map(kernel, map))
		if (ps_pipeline_is_kernel_text(map->object))
			return map;
	return NULL;
}

/* A section of the vmlinux the kernel's symbols come from, other than
 * .text: perf maps each apart (its DSO is "[kernel.kallsyms].init.text",
 * say). The maps are the pipeline's own. */
static const struct ps_map *kernel_section_map(struct ps_pipeline *pipeline, uint64_t ip)
{
	uint64_t start, end, offset;
	char name[256];
	const char *section;
	size_t i;

	if (!ps_symbols_kernel_section(pipeline->symbols, ip, &section, &start, &end, &offset))
		return NULL;
	for (i = 0; i < pipeline->nr_section_maps; i++)
		if (pipeline->section_maps[i].start == start &&
		    pipeline->section_maps[i].end == end)
			return &pipeline->section_maps[i];
	if (pipeline->nr_section_maps == PS_PIPELINE_SECTION_MAPS)
		return NULL;
	snprintf(name, sizeof(name), "[kernel.kallsyms]%s", section);
	struct ps_mapped_object *object = ps_machine_object(pipeline->machine, name, NULL);
	if (!object)
		return NULL;
	object->kernel = true;
	pipeline->section_maps[i] =
	        (struct ps_map){ .start = start, .end = end, .pgoff = offset, .object = object };
	pipeline->nr_section_maps++;
	return &pipeline->section_maps[i];
}

/* perf's thread__find_map(): the address space cpumode picks (the
 * kernel's, or the process's; none for the others), then the map in it
 * that holds ip. */
static const struct ps_map *find_map(struct ps_pipeline *pipeline, struct ps_process *process,
                                     unsigned cpumode, uint64_t ip)
{
	const struct ps_map *map = NULL;

	if (cpumode == PERF_RECORD_MISC_KERNEL) {
		uint64_t offset;

		map = find_frame_map(pipeline, ps_machine_kernel(pipeline->machine), ip);
		/* with a vmlinux the kernel's map is its .text */
		if (map && ps_pipeline_is_kernel_text(map->object) &&
		    ps_symbols_kernel_vmlinux(pipeline->symbols, &offset)) {
			uint64_t start, end;

			if (ps_symbols_kernel_extent(pipeline->symbols, &start, &end) &&
			    (ip < start || ip >= end))
				map = NULL;
		}
		if (!map)
			map = kernel_extent_map(pipeline, ip);
		if (!map)
			map = kernel_section_map(pipeline, ip);
	} else if (cpumode == PERF_RECORD_MISC_USER && process) {
		map = find_frame_map(pipeline, process, ip);
	}
	return map;
}

const struct ps_map *ps_pipeline_find_map(struct ps_pipeline *pipeline, struct ps_process *process,
                                          unsigned cpumode, uint64_t ip)
{
	const struct ps_map *map;
	struct ps_frame_name name;
	struct ps_dso *dso;

	/* records may have changed the maps since the last stack was built */
	pipeline->nr_hints = 0;
	map = find_map(pipeline, process, cpumode, ip);
	pipeline->nr_hints = 0;
	/* perf loads a kernel map as soon as it finds an address in it,
	 * which re-sizes the kernel's (ps_symbols_kernel_extent()) and
	 * decides where a module's symbols come from; resolving the address
	 * is what loads it here */
	if (map && map->object->kernel) {
		dso = ps_pipeline_object_dso(pipeline, map->object);
		if (dso)
			ps_dso_resolve(dso, ip, false, &name, 1);
	}
	return map;
}

/* perf's machine__kernel_start(): the first time it is asked, perf loads
 * the kernel map (machine__get_kernel_start()), which re-sizes it to every
 * kernel symbol (ps_symbols_kernel_extent()); on x86-64 kernel addresses
 * start at 1 << 63. */
static uint64_t kernel_start(struct ps_pipeline *pipeline)
{
	const struct ps_process *kernel = ps_machine_kernel(pipeline->machine);
	struct ps_frame_name name;

	if (pipeline->kernel_start_asked)
		return UINT64_C(1) << 63;
	pipeline->kernel_start_asked = true;
	for (const struct ps_map *map = ps_process_next_map(kernel, NULL); map;
	     map = ps_process_next_map(kernel, map)) {
		if (!ps_pipeline_is_kernel_text(map->object))
			continue;
		struct ps_dso *dso = ps_pipeline_object_dso(pipeline, map->object);

		if (dso)
			ps_dso_resolve(dso, map->start, false, &name, 1);
		break;
	}
	return UINT64_C(1) << 63;
}

void ps_pipeline_symbol_at(struct ps_pipeline *pipeline, struct ps_process *process,
                           unsigned cpumode, uint64_t addr, struct ps_pipeline_symbol *out)
{
	const struct ps_map *map = ps_pipeline_find_map(pipeline, process, cpumode, addr);
	struct ps_frame_name name;
	struct ps_dso *dso;

	memset(out, 0, sizeof(*out));
	if (!map)
		return;
	out->mapped = true;
	/* perf's map->map_ip(): raw for the kernel's and anonymous maps */
	out->addr = map->identity || ps_pipeline_is_kernel_text(map->object)
	                    ? addr
	                    : addr - map->start + map->pgoff;
	if (map->object->module_name)
		out->addr = addr - map->start;
	if (map->object->jit_pid) {
		struct ps_frame f = { 0 };

		if (pipeline->rules->name_jit)
			pipeline->rules->name_jit(pipeline->rules_ctx, process, map->object, addr,
			                          &f);
		if (f.sym) {
			out->sym = f.sym;
			out->start = out->addr - f.symoff;
			out->end = out->addr + 1;
		}
		return;
	}
	dso = ps_pipeline_object_dso(pipeline, map->object);
	if (!dso || !ps_dso_resolve(dso, map->object->kernel ? addr : out->addr, false, &name, 1))
		return;
	out->srcline = name.srcline;
	if (name.sym) {
		out->sym = name.sym;
		out->start = out->addr - name.offset;
		out->end = out->start + name.size;
	}
}

/* The DSO of the kernel-space map holding addr (maps__find() of the
 * machine's kernel maps, which does not load the map), or NULL. */
static struct ps_dso *kernel_space_dso(struct ps_pipeline *pipeline, uint64_t addr)
{
	const struct ps_map *map;

	pipeline->nr_hints = 0;
	map = find_map(pipeline, NULL, PERF_RECORD_MISC_KERNEL, addr);
	pipeline->nr_hints = 0;
	return map && !map->object->jit_pid ? ps_pipeline_object_dso(pipeline, map->object) : NULL;
}

void ps_pipeline_text_poke_load(struct ps_pipeline *pipeline, const struct ps_event *ev)
{
	struct ps_dso *dso;

	if (ev->type != PERF_RECORD_TEXT_POKE || !ev->u.text_poke.new_len ||
	    (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_KERNEL)
		return;
	dso = kernel_space_dso(pipeline, ev->u.text_poke.addr);
	if (dso)
		(void)ps_dso_load(dso);
}

const char *ps_pipeline_text_poke_symbol(struct ps_pipeline *pipeline, uint64_t addr,
                                         uint64_t *start)
{
	struct ps_dso *dso = kernel_space_dso(pipeline, addr);
	struct ps_frame_name name;

	/* perf_event__fprintf_text_poke() looks the symbol up only when
	 * map__load() succeeds; kernel objects by the raw address */
	if (!dso || ps_dso_load(dso) < 0 || !ps_dso_resolve(dso, addr, false, &name, 1) ||
	    !name.sym)
		return NULL;
	*start = addr - name.offset;
	return name.sym;
}

void ps_pipeline_load_kernel(struct ps_pipeline *pipeline)
{
	kernel_start(pipeline);
}

bool ps_pipeline_kernel_ip(struct ps_pipeline *pipeline, uint64_t ip)
{
	return ip >= kernel_start(pipeline);
}

ssize_t ps_pipeline_read_code(struct ps_pipeline *pipeline, struct ps_process *process, uint64_t ip,
                              void *buf, size_t size, bool *is64)
{
	unsigned cpumode =
	        ip >= kernel_start(pipeline) ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	const struct ps_map *map = ps_pipeline_find_map(pipeline, process, cpumode, ip);
	struct ps_dso *dso;

	*is64 = true;
	/* JIT code is named by a perf map, a text file perf reads at the
	 * address itself, past its end */
	if (!map || map->object->jit_pid)
		return -1;
	dso = ps_pipeline_object_dso(pipeline, map->object);
	if (!dso)
		return -1;
	/* perf loads the map before reading it */
	(void)ps_dso_load(dso);
	*is64 = ps_dso_code_is64(dso);
	/* perf's own map of a module starts at its .text, when it read the
	 * module's file; its map of the kernel, at a vmlinux's .text */
	if (map->object->module_name)
		return ps_dso_read_code(dso, ip - map->start + ps_dso_module_pgoff(dso), buf, size);
	if (ps_pipeline_is_kernel_text(map->object)) {
		uint64_t start, end, offset;

		if (!ps_symbols_kernel_vmlinux(pipeline->symbols, &offset) ||
		    !ps_symbols_kernel_extent(pipeline->symbols, &start, &end))
			return -1;
		return ps_dso_read_code(dso, ip - start + offset, buf, size);
	}
	return ps_dso_read_code(dso, map->identity ? ip : ip - map->start + map->pgoff, buf, size);
}

bool ps_pipeline_source(struct ps_pipeline *pipeline, struct ps_process *process, unsigned cpumode,
                        uint64_t ip, char *path, size_t size, unsigned *line)
{
	const struct ps_map *map = ps_pipeline_find_map(pipeline, process, cpumode, ip);
	struct ps_dso *dso;

	/* perf never asks addr2line about a perf map */
	if (!map || map->object->jit_pid || map->object->kernel)
		return false;
	dso = ps_pipeline_object_dso(pipeline, map->object);
	return dso && ps_dso_source(dso, map->identity ? ip : ip - map->start + map->pgoff, path,
	                            size, line);
}

void ps_pipeline_name_branch(struct ps_pipeline *pipeline, struct ps_process *process,
                             unsigned cpumode, uint64_t addr, bool symbols,
                             struct ps_branch_end *out)
{
	unsigned addr_cpumode =
	        addr >= kernel_start(pipeline) ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	const struct ps_map *map = ps_pipeline_find_map(pipeline, process, cpumode, addr);
	struct ps_dso *dso = NULL;
	struct ps_frame_name name;

	memset(out, 0, sizeof(*out));
	out->addr = out->offset = addr;
	/* thread__find_map_fb(): the other address space when that is where
	 * the address belongs */
	if (!map && (cpumode == PERF_RECORD_MISC_KERNEL || cpumode == PERF_RECORD_MISC_USER) &&
	    addr_cpumode != cpumode)
		map = ps_pipeline_find_map(pipeline, process, addr_cpumode, addr);
	if (!map)
		return;
	out->dso = ps_pipeline_object_label(pipeline, map->object);
	/* perf's map__map_ip(): perf's own maps of the kernel and its
	 * modules have no file offset, and the kernel's starts at its first
	 * symbol once loaded */
	uint64_t map_addr = map->identity ? addr : addr - map->start + map->pgoff, start, end;
	if (map->object->module_name) {
		map_addr = addr - map->start;
	} else if (ps_pipeline_is_kernel_text(map->object)) {
		map_addr = addr - map->start;
		if (ps_symbols_kernel_extent(pipeline->symbols, &start, &end))
			map_addr = addr - start;
	}
	if (!map->object->jit_pid)
		dso = ps_pipeline_object_dso(pipeline, map->object);
	if (symbols && map->object->jit_pid) {
		struct ps_frame f = { 0 };

		if (pipeline->rules->name_jit)
			pipeline->rules->name_jit(pipeline->rules_ctx, process, map->object, addr,
			                          &f);
		out->sym = f.sym;
		out->symoff = f.symoff;
	} else if (symbols && dso &&
	           ps_dso_resolve(dso,
	                          map->object->kernel || map->identity
	                                  ? addr
	                                  : addr - map->start + map->pgoff,
	                          false, &name, 1)) {
		out->sym = name.sym;
		out->symoff = name.offset;
	}
	if (!dso || !ps_dso_adjusts_symbols(dso))
		out->offset = map_addr;
}

int ps_pipeline_add_frames(struct ps_pipeline *pipeline, struct ps_process *process,
                           unsigned cpumode, uint64_t ip, bool inlines)
{
	struct ps_frame_name names[MAX_INLINE];
	const struct ps_map *map = find_map(pipeline, process, cpumode, ip);
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
	struct ps_frame *f;

	if (!map) {
		f = ps_pipeline_push_frame(pipeline);
		if (!f)
			return -ENOMEM;
		f->addr = ip;
		f->ip = ip;
		f->kernel = kernel;
		return 0;
	}
	/* kernel objects are looked up by raw address, user ones by file offset */
	uint64_t addr = map->object->kernel || map->identity ? ip : ip - map->start + map->pgoff;
	size_t n = 0;
	if (map->object->jit_pid) {
		/* JIT code: whoever knows it names it */
		f = ps_pipeline_push_frame(pipeline);
		if (!f)
			return -ENOMEM;
		f->addr = addr;
		f->ip = ip;
		f->dso = map->object->name;
		if (pipeline->rules->name_jit)
			pipeline->rules->name_jit(pipeline->rules_ctx, process, map->object, ip, f);
		return 0;
	}
	struct ps_dso *dso = ps_pipeline_object_dso(pipeline, map->object);
	if (dso)
		n = ps_dso_resolve(dso, addr, inlines, names, MAX_INLINE);
	if (n == 0) {
		names[0] = (struct ps_frame_name){ 0 };
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		f = ps_pipeline_push_frame(pipeline);
		if (!f)
			return -ENOMEM;
		f->addr = addr;
		f->ip = ip;
		f->sym = names[i].sym;
		f->symoff = names[i].offset;
		f->inlined = names[i].inlined;
		f->srcline = names[i].srcline;
		f->kernel = map->object->kernel;
		f->dso = ps_pipeline_object_label(pipeline, map->object);
	}
	return 0;
}

bool ps_pipeline_switch_context(uint64_t marker, unsigned *cpumode)
{
	switch (marker) {
	case (uint64_t)PERF_CONTEXT_HV:
		*cpumode = PERF_RECORD_MISC_HYPERVISOR;
		return true;
	case (uint64_t)PERF_CONTEXT_KERNEL:
		*cpumode = PERF_RECORD_MISC_KERNEL;
		return true;
	case (uint64_t)PERF_CONTEXT_USER:
	case PS_CONTEXT_USER_DEFERRED: /* perf 6.19+: a user marker */
		*cpumode = PERF_RECORD_MISC_USER;
		return true;
	default:
		return false;
	}
}
