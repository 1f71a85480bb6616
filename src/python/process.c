/* What the Python side knows of each process: the CPython interpreter it
 * mapped, the trampoline template its perf-map entries are copies of
 * (decoded once per file), whether it has JIT code; and from those the
 * unwind rules of its trampolines (ps_pipeline_rules.frame_rule).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "python/python_priv.h"

#include "base/message.h"

void ps_python_trampolines_free(struct ps_python *python)
{
	for (size_t i = 0; i < python->nr_trampolines; i++)
		free(python->trampolines[i].path);
}

static void python_process_free(void *state)
{
	struct python_process *p = state;

	if (p) {
		ps_python_lines_free(p->lines);
		free(p->jit_hits);
	}
	free(p);
}

struct python_process *ps_python_process(struct ps_process *process)
{
	struct python_process *state = ps_process_state(process, PS_PROCESS_SLOT_RULES);

	if (state)
		return state;
	state = calloc(1, sizeof(*state));
	if (!state)
		return NULL;
	state->process = process;
	ps_process_set_state(process, PS_PROCESS_SLOT_RULES, state, python_process_free);
	return state;
}

static const struct ps_trampoline *decoded_template(struct ps_python *python,
                                                    const struct ps_elf *elf)
{
	const char *path = ps_elf_file(elf);
	struct python_trampoline *e;
	char err[PS_MSG_MAX] = "";

	for (size_t i = 0; i < python->nr_trampolines; i++)
		if (strcmp(python->trampolines[i].path, path) == 0)
			return python->trampolines[i].rc ? NULL
			                                 : &python->trampolines[i].trampoline;
	if (python->nr_trampolines == PS_PYTHON_MAX_TRAMPOLINES)
		return NULL;
	e = &python->trampolines[python->nr_trampolines];
	e->path = strdup(path);
	if (!e->path)
		return NULL;
	python->nr_trampolines++;
	e->rc = ps_trampoline_from_elf(elf, &e->trampoline, err, sizeof(err));
	if (e->rc)
		ps_python_say(python, PS_LOG_WARN,
		              "%s: cannot use the -X perf trampoline template: %s", path,
		              err[0] ? err : strerror(-e->rc));
	return e->rc ? NULL : &e->trampoline;
}

/* Whether an object found earlier is still mapped where it was. */
static bool still_mapped(const struct ps_process *process, const struct ps_mapped_object *object,
                         uint64_t start)
{
	const struct ps_map *map;

	if (!object)
		return false;
	map = ps_process_find_map(process, start);
	return map && map->object == object && ps_process_map_current(process, map);
}

/* The CPython interpreter mapped in the process (libpython or a static
 * interpreter: the first executable file mapping that defines the eval
 * loop), and the file whose trampoline template the perf-map entries are
 * copies of: the interpreter's own (3.12+), else a mapped file exporting
 * the template's symbols (the pystitch_perf module, 3.8-3.11). Searched
 * again when the maps have changed and either is missing or gone. */
bool ps_python_searched_map(const struct ps_map *map)
{
	return (map->prot & PROT_EXEC) && !map->identity && !map->object->kernel;
}

/* One file of the search, mapped at start: is it the interpreter, does
 * it hold the template. */
static void examine_object(struct ps_python *python, struct python_process *state,
                           struct ps_mapped_object *object, uint64_t start)
{
	const struct ps_py_interp *interp;
	const struct ps_elf *elf;
	struct ps_dso *dso;
	int rc;

	dso = ps_pipeline_object_dso(python->pipeline, object);
	/* the DSO's own handle: each file is opened once per feed */
	elf = dso ? ps_dso_elf(dso) : NULL;
	if (!elf || (rc = ps_py_registry_detect(python->registry, elf, &interp)) < 0)
		return;
	if (rc == 1 && !state->interp) {
		state->interp_object = object;
		state->interp_map_start = start;
		state->interp = interp;
	}
	if (interp->has_trampoline && !state->template_object) {
		state->template_object = object;
		state->template_map_start = start;
		state->trampoline = decoded_template(python, elf);
	}
}

static void forget_interpreter(struct python_process *state)
{
	state->interp_object = NULL;
	state->interp = NULL;
	state->template_object = NULL;
	state->trampoline = NULL;
}

void ps_python_find_interpreter(struct ps_python *python, struct python_process *state)
{
	const struct ps_process *p = state->process;
	const struct ps_mapped_object *last = NULL;

	if (state->interp_searched && state->interp_generation == ps_process_generation(p))
		return;
	state->interp_generation = ps_process_generation(p);
	state->interp_searched = true;
	if (still_mapped(p, state->interp_object, state->interp_map_start) &&
	    still_mapped(p, state->template_object, state->template_map_start))
		return;
	forget_interpreter(state);
	for (const struct ps_map *map = ps_process_next_map(p, NULL);
	     map && !(state->interp && state->template_object); map = ps_process_next_map(p, map)) {
		/* a program run before the last exec is not this one's
		 * interpreter (perf keeps its maps) */
		if (!ps_python_searched_map(map) || !ps_process_map_current(p, map))
			continue;
		if (map->object == last)
			continue; /* one file, several mappings */
		last = map->object;
		examine_object(python, state, map->object, map->start);
	}
}

void ps_python_find_interpreter_in(struct ps_python *python, struct python_process *state,
                                   struct ps_mapped_object *const *objects, size_t nr)
{
	forget_interpreter(state);
	for (size_t i = 0; i < nr && !(state->interp && state->template_object); i++)
		examine_object(python, state, objects[i], 0);
}

bool ps_python_has_jit_code(const struct ps_process *p)
{
	for (const struct ps_map *map = ps_process_next_map(p, NULL); map;
	     map = ps_process_next_map(p, map))
		if (map->object->jit_pid && ps_process_map_current(p, map))
			return true;
	return false;
}

/* Trampolines are JIT code: only a process that has some needs the leaf's
 * popped registers recovered. */
bool ps_python_recover_popped(void *ctx, struct ps_process *process)
{
	struct python_process *state = ps_python_process(process);
	uint64_t generation = ps_process_generation(process);

	if (!state)
		return false;
	if (!state->jit_checked || state->jit_generation != generation) {
		state->has_jit = ps_python_has_jit_code(process);
		state->jit_generation = generation;
		state->jit_checked = true;
	}
	return state->has_jit;
}

bool ps_python_process_runs_trampolines(struct ps_python *python, struct ps_process *process)
{
	struct python_process *state;

	if (!process || !ps_python_recover_popped(python, process))
		return false;
	state = ps_python_process(process);
	if (!state)
		return false;
	ps_python_find_interpreter(python, state);
	return state->interp != NULL;
}

bool ps_python_frame_rule(void *ctx, struct ps_process *process, uint64_t pc,
                          struct ps_unwind_rule *out)
{
	struct ps_python *python = ctx;
	struct python_process *state;
	struct ps_jit_symbol sym;

	if (!ps_python_jit_symbol(python, process, 0, pc, &sym))
		return false;
	if (sym.eh_frame &&
	    ps_eh_frame_rule(sym.eh_frame, sym.eh_frame_size, sym.start, pc, out, NULL, 0) == 0)
		return true;
	/* -X perf: every trampoline is a copy of the interpreter's template;
	 * other JIT code in the map is not */
	if (strncmp(sym.name, "py::", 4) != 0)
		return false;
	state = ps_python_process(process);
	if (!state)
		return false;
	ps_python_find_interpreter(python, state);
	return state->trampoline && ps_trampoline_rule_at(state->trampoline, pc - sym.start, out);
}
