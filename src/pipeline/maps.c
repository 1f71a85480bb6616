/* Maps as the pipeline sees them: the DSO of each mapped object, and per
 * process the unwinder with the answers it asks for every frame (which
 * mapping holds an address, where its file is), cached for one map
 * generation; unwinding one sample's user stack.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pipeline/pipeline_priv.h"

#define BASE_CACHE 64

#define LAST_MAPS 4

struct pipeline_process {
	struct ps_pipeline *pipeline;
	struct ps_process *process;
	struct ps_unwinder *unwinder;
	/* lowest mapping base per object, valid for one map generation */
	uint64_t base_generation;
	struct {
		const struct ps_mapped_object *object;
		uint64_t base;
	} bases[BASE_CACHE];
	/* find_map()'s last answers, valid for one map generation: the
	 * unwinder asks for every frame, mostly about the same few maps
	 * (a Python stack goes back and forth between the interpreter and
	 * its trampolines) */
	uint64_t last_generation;
	unsigned nr_last, next_last;
	struct ps_unwind_map last[LAST_MAPS];
};

bool ps_pipeline_is_kernel_text(const struct ps_mapped_object *object)
{
	/* perf record names the kernel's map "[kernel.kallsyms]_text" (old
	 * perf: "[kernel.kallsyms]"), and pystitch the maps of a vmlinux's
	 * other sections "[kernel.kallsyms].init.text" and so on */
	return object->kernel && !object->module_name &&
	       strncmp(object->name, "[kernel.kallsyms]", 17) == 0 && object->name[17] != '.';
}

const char *ps_pipeline_object_name(const struct ps_mapped_object *object)
{
	if (ps_pipeline_is_kernel_text(object))
		return "[kernel.kallsyms]";
	/* perf prints a module's DSO name, not the path its MMAP recorded */
	if (object->module_name)
		return object->module_name;
	return object->name;
}

const char *ps_pipeline_object_label(const struct ps_pipeline *pipeline,
                                     const struct ps_mapped_object *object)
{
	/* --show-kernel-path: perf prints DSOs' long names; a module's is
	 * the path its MMAP recorded */
	uint64_t offset;
	const char *vmlinux;

	if (!pipeline->show_kernel_path)
		return ps_pipeline_object_name(object);
	if (object->kernel && object->module_name)
		return object->name;
	/* the kernel's long name is the vmlinux its symbols came from; its
	 * sections' maps keep the name it had before */
	if (ps_pipeline_is_kernel_text(object) &&
	    (vmlinux = ps_symbols_kernel_vmlinux(pipeline->symbols, &offset)) != NULL)
		return vmlinux;
	if (object->kernel && !object->module_name &&
	    strncmp(object->name, "[kernel.kallsyms].", 18) == 0)
		return "[kernel.kallsyms]";
	return ps_pipeline_object_name(object);
}

struct ps_dso *ps_pipeline_object_dso(struct ps_pipeline *pipeline, struct ps_mapped_object *object)
{
	if (!object->user) {
		/* where its file was mapped: a container's root file system
		 * is read while the container runs (see ps_symbols_dso_from()) */
		struct ps_dso_origin origin = {
			.pid = object->kernel ? 0 : object->mapper_pid,
			.has_mnt_ns = object->has_mnt_ns,
			.mnt_ns_dev = object->mnt_ns_dev,
			.mnt_ns_ino = object->mnt_ns_ino,
		};

		object->user = ps_symbols_dso_from(
		        pipeline->symbols, ps_pipeline_object_name(object),
		        object->has_build_id ? object->build_id : NULL,
		        object->has_build_id ? object->build_id_size : 0, &origin);
		/* perf's module DSO keeps the path of its first MMAP */
		if (object->user && object->module_name)
			ps_dso_set_module_map(object->user, object->name, object->module_start);
	}
	return object->user;
}

/* The base perf's libunwind path uses for an object: that of its lowest
 * mapping in the process (see ps_unwind_map.libunwind_base). */
static uint64_t lowest_base(struct pipeline_process *state, const struct ps_mapped_object *object)
{
	const struct ps_process *p = state->process;
	size_t slot = ((uintptr_t)object >> 4) % BASE_CACHE;
	const struct ps_map *map;

	if (state->base_generation != ps_process_generation(p)) {
		memset(state->bases, 0, sizeof(state->bases));
		state->base_generation = ps_process_generation(p);
	}
	if (state->bases[slot].object == object)
		return state->bases[slot].base;
	map = ps_process_first_map_of(p, object);
	if (!map)
		return 0;
	state->bases[slot].object = object;
	state->bases[slot].base = map->start - map->pgoff;
	return state->bases[slot].base;
}

static bool find_map(void *ctx, uint64_t addr, struct ps_unwind_map *out)
{
	struct pipeline_process *state = ctx;
	uint64_t generation = ps_process_generation(state->process);
	const struct ps_map *map;

	if (state->last_generation != generation)
		state->nr_last = state->next_last = 0;
	for (unsigned i = 0; i < state->nr_last; i++) {
		if (addr >= state->last[i].start && addr < state->last[i].end) {
			*out = state->last[i];
			return true;
		}
	}
	map = ps_process_find_map(state->process, addr);
	if (!map)
		return false;
	memset(out, 0, sizeof(*out));
	out->start = map->start;
	out->end = map->end;
	out->pgoff = map->pgoff;
	out->name = map->object->name;
	out->exec = (map->prot & PROT_EXEC) != 0;
	out->libunwind_base = lowest_base(state, map->object);
	if (!map->object->kernel) {
		struct ps_dso *dso = ps_pipeline_object_dso(state->pipeline, map->object);
		if (dso) {
			out->path = ps_dso_file(dso);
			const struct ps_elf *elf = out->path ? ps_dso_elf(dso) : NULL;
			if (elf) {
				out->file_base =
				        ps_elf_map_base(elf, map->start, map->pgoff, out->exec);
				ps_elf_first_load(elf, &out->first_load_vaddr,
				                  &out->first_load_align);
			}
			const char *debug = ps_dso_symbol_file(dso);
			if (debug && out->path && strcmp(debug, out->path) != 0)
				out->debug_path = debug;
		}
	}
	if (state->nr_last < LAST_MAPS)
		state->nr_last++;
	state->last[state->next_last] = *out;
	state->next_last = (state->next_last + 1) % LAST_MAPS;
	state->last_generation = generation;
	return true;
}

/* The rules' frame_rule for this process. */
static bool frame_rule(void *ctx, uint64_t pc, struct ps_unwind_rule *out)
{
	struct pipeline_process *state = ctx;
	const struct ps_pipeline *pipeline = state->pipeline;

	return pipeline->rules->frame_rule(pipeline->rules_ctx, state->process, pc, out);
}

static uint64_t maps_generation(void *ctx)
{
	const struct pipeline_process *state = ctx;

	return ps_process_generation(state->process);
}

static const struct ps_unwind_callbacks plain_callbacks = { .find_map = find_map,
	                                                    .maps_generation = maps_generation };
/* with rules for the frames that have no CFI (CPython's trampolines) */
static const struct ps_unwind_callbacks ruled_callbacks = {
	.find_map = find_map,
	.frame_rule = frame_rule,
	.maps_generation = maps_generation,
};

static void process_state_free(void *user)
{
	struct pipeline_process *state = user;

	ps_unwinder_free(state->unwinder);
	free(state);
}

struct pipeline_process *ps_pipeline_process(struct ps_pipeline *pipeline,
                                             struct ps_process *process)
{
	struct pipeline_process *state = ps_process_state(process, PS_PROCESS_SLOT_UNWIND);

	if (state)
		return state;
	state = calloc(1, sizeof(*state));
	if (!state)
		return NULL;
	state->pipeline = pipeline;
	state->process = process;
	if (ps_unwinder_new(pipeline->rules->frame_rule ? &ruled_callbacks : &plain_callbacks,
	                    state, &pipeline->unwind_opts, &state->unwinder)) {
		free(state);
		return NULL;
	}
	ps_process_set_state(process, PS_PROCESS_SLOT_UNWIND, state, process_state_free);
	return state;
}

bool ps_pipeline_unwinds(const struct ps_process *process)
{
	return ps_process_state(process, PS_PROCESS_SLOT_UNWIND) != NULL;
}

void ps_pipeline_map_changed(struct pipeline_process *state, uint64_t addr)
{
	struct ps_unwind_map map;

	if (find_map(state, addr, &map))
		ps_unwinder_map_changed(state->unwinder, &map);
}

void ps_pipeline_exec(struct pipeline_process *state, bool flush)
{
	if (flush)
		ps_unwinder_reset(state->unwinder);
	else
		ps_unwinder_forget_modules(state->unwinder);
}

void ps_pipeline_process_died(struct ps_process *process)
{
	struct pipeline_process *state = ps_process_state(process, PS_PROCESS_SLOT_UNWIND);

	if (state) {
		ps_unwinder_trim(state->unwinder);
		state->nr_last = state->next_last = 0;
	}
}

void ps_pipeline_unwind_afresh(struct ps_pipeline *pipeline)
{
	pipeline->unwind_opts.fresh_lookups = true;
}

const struct ps_unwind_step *ps_pipeline_steps(struct ps_pipeline *pipeline,
                                               struct ps_process *process, size_t *n)
{
	struct pipeline_process *state = ps_process_state(process, PS_PROCESS_SLOT_UNWIND);

	(void)pipeline;
	if (!state) {
		*n = 0;
		return NULL;
	}
	return ps_unwinder_steps(state->unwinder, n);
}

bool ps_pipeline_replay(struct ps_pipeline *pipeline, struct ps_process *process,
                        const struct ps_unwind_step *steps, size_t n)
{
	struct pipeline_process *state;

	if (n == SIZE_MAX)
		return false;
	state = ps_pipeline_process(pipeline, process);
	return state && ps_unwinder_replay(state->unwinder, steps, n);
}

/* Debian's perf (libunwind) unwinds a process's stacks only once
 * unwind__prepare_access() has registered its unwinder, which it does for
 * the first map inserted into the process whose DSO perf can read as a
 * 64-bit ELF (a 32-bit one would need libunwind's x86 unwinder, which
 * Debian's perf lacks); without the capture's ARCH feature, at the first
 * map of any kind. perf built with libdw has no such step. */
static bool map_registers(struct ps_pipeline *pipeline, const struct ps_map *map)
{
	struct ps_dso *dso;

	if (!pipeline->features || !pipeline->features->arch)
		return true;
	dso = ps_pipeline_object_dso(pipeline, map->object);
	return dso && ps_dso_is_elf64(dso);
}

static bool registration_applies(const struct ps_pipeline *pipeline)
{
	return pipeline->unwind_opts.style == PS_UNWIND_PERF_LIBUNWIND;
}

void ps_pipeline_map_inserted(struct ps_pipeline *pipeline, struct ps_process *process,
                              uint64_t addr)
{
	const struct ps_map *map;

	if (!registration_applies(pipeline) || ps_process_unwind_ready(process))
		return;
	map = ps_process_find_map(process, addr);
	if (map && map_registers(pipeline, map))
		ps_process_set_unwind_ready(process);
}

void ps_pipeline_forked(struct ps_pipeline *pipeline, struct ps_process *process, bool new_process)
{
	struct pipeline_process *state = ps_process_state(process, PS_PROCESS_SLOT_UNWIND);

	/* a new process in a pid seen before: perf gives it an address space
	 * (and libunwind cache) of its own */
	if (new_process && state)
		ps_unwinder_reset(state->unwinder);
	/* maps__clone() and thread__prepare_access() ask for each map in
	 * turn until one registers */
	if (!registration_applies(pipeline) || ps_process_unwind_ready(process))
		return;
	for (const struct ps_map *map = ps_process_next_map(process, NULL); map;
	     map = ps_process_next_map(process, map))
		if (map_registers(pipeline, map)) {
			ps_process_set_unwind_ready(process);
			return;
		}
}

bool ps_pipeline_has_user_stack(const struct ps_pipeline *pipeline, const struct ps_event *event,
                                const struct ps_process *process)
{
	const struct ps_sample *sample = &event->u.sample;
	uint64_t type = event->attr->sample_type;

	return !pipeline->no_callchain && (type & PERF_SAMPLE_CALLCHAIN) &&
	       (type & PERF_SAMPLE_REGS_USER) && (type & PERF_SAMPLE_STACK_USER) &&
	       sample->regs_user.abi && sample->stack_dyn_size && process &&
	       (!registration_applies(pipeline) || ps_process_unwind_ready(process));
}

static struct ps_unwind_sample unwind_sample(const struct ps_event *event)
{
	const struct ps_sample *sample = &event->u.sample;

	return (struct ps_unwind_sample){
		.pid = sample->pid,
		.tid = sample->tid,
		.regs_abi = sample->regs_user.abi,
		.regs_mask = sample->regs_user.mask,
		.nr_regs = sample->regs_user.nr,
		.regs = sample->regs_user.regs,
		.stack = sample->stack_data,
		.stack_size = sample->stack_dyn_size,
	};
}

int ps_pipeline_name_as_perf(struct ps_pipeline *pipeline, const struct ps_event *event,
                             struct ps_process *process, uint64_t *pcs)
{
	struct ps_unwind_sample us = unwind_sample(event);
	struct pipeline_process *state = ps_pipeline_process(pipeline, process);
	const struct ps_pipeline_rules *rules = pipeline->rules;
	struct ps_pipeline_stack *stack = &pipeline->stack;
	enum ps_unwind_stop stop;

	if (!state)
		return -ENOMEM;
	if (!rules->no_quirks || !rules->no_quirks(pipeline->rules_ctx, process))
		return 0;
	int n = ps_unwinder_unwind(state->unwinder, &us, pcs, pipeline->max_stack, &stop);
	size_t kept = stack->nr_frames;

	/* named, then dropped from the stack */
	for (int i = 0; i < n; i++) {
		int err = ps_pipeline_add_frames(pipeline, process, PERF_RECORD_MISC_USER, pcs[i],
		                                 !pipeline->no_inline);
		stack->nr_frames = kept;
		if (err)
			return err;
	}
	return n == -ENOMEM ? n : 0;
}

int ps_pipeline_unwind(struct ps_pipeline *pipeline, const struct ps_event *event,
                       struct ps_process *process, uint64_t *pcs, enum ps_unwind_stop *stop,
                       uint64_t *notes, bool *noted)
{
	struct ps_unwind_sample us = unwind_sample(event);
	struct pipeline_process *state = ps_pipeline_process(pipeline, process);
	const struct ps_pipeline_rules *rules = pipeline->rules;
	int n;

	if (!state)
		return -ENOMEM;
	us.recover_popped =
	        rules->recover_popped && rules->recover_popped(pipeline->rules_ctx, process);
	us.no_quirks = rules->no_quirks && rules->no_quirks(pipeline->rules_ctx, process);
	if (noted)
		*noted = false;
	/* the registers of every frame only for a process whose frames the
	 * rules look at */
	if (notes && rules->inspect_frames && rules->inspects &&
	    rules->inspects(pipeline->rules_ctx, process)) {
		if (!pipeline->frame_regs &&
		    !(pipeline->frame_regs =
		              malloc(PS_PIPELINE_MAX_PCS * sizeof(*pipeline->frame_regs))))
			return -ENOMEM;
		us.frame_regs = pipeline->frame_regs;
	}
	n = ps_unwinder_unwind(state->unwinder, &us, pcs, pipeline->max_stack, stop);
	if (n == -ENOMEM)
		return n;
	if (n < 0)
		n = 0;
	if (notes)
		memset(notes, 0, (size_t)n * sizeof(*notes));
	if (us.frame_regs && n > 0) {
		rules->inspect_frames(pipeline->rules_ctx, process, event, pcs, us.frame_regs,
		                      (size_t)n, notes);
		for (int i = 0; noted && i < n && !*noted; i++)
			*noted = notes[i] != 0;
	}
	return n;
}
