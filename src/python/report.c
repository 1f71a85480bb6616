/* The per-process report of the Python side (pystitch info, and what
 * pystitch archive packs): every process of the machine model that mapped
 * a CPython interpreter or JIT code, with what names its Python frames.
 * It reads no records: it tells what the pipeline has seen so far, the
 * processes the machine model has freed included.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "base/hash_slots.h"
#include "python/python_priv.h"

/* ---- processes freed before the report ------------------------------ */

void ps_python_gone_free(struct ps_python *python)
{
	for (size_t i = 0; i < python->nr_shapes; i++) {
		free(python->shapes[i].comm);
		free(python->shapes[i].objects);
	}
	free(python->shapes);
	free(python->shape_slots);
	for (size_t i = 0; i < python->nr_gone; i++) {
		struct python_gone_lines *lines = python->gone[i].lines;

		if (lines) {
			free(lines->file);
			free(lines->error);
			free(lines);
		}
	}
	free(python->gone);
}

static uint64_t shape_hash(const char *comm, bool jit_code, struct ps_mapped_object *const *objects,
                           size_t nr)
{
	uint64_t hash = ps_hash_string(comm ? comm : "", jit_code);

	return ps_hash_bytes(objects, nr * sizeof(*objects), hash);
}

static bool shape_is(const struct python_shape *shape, uint64_t hash, const char *comm,
                     bool jit_code, struct ps_mapped_object *const *objects, size_t nr)
{
	return shape->hash == hash && shape->jit_code == jit_code && shape->nr_objects == nr &&
	       (shape->comm && comm ? strcmp(shape->comm, comm) == 0 : shape->comm == comm) &&
	       memcmp(shape->objects, objects, nr * sizeof(*objects)) == 0;
}

/* The number of the shape, entered when new; -1 when out of memory. */
static long find_shape(struct ps_python *python, const char *comm, bool jit_code,
                       struct ps_mapped_object *const *objects, size_t nr)
{
	uint64_t hash = shape_hash(comm, jit_code, objects, nr);
	size_t mask, slot;
	struct python_shape *shape;

	if ((python->nr_shapes + 1) * 2 > python->nr_shape_slots &&
	    !ps_hash_slots_grow(&python->shape_slots, &python->nr_shape_slots, 64, python->shapes,
	                        sizeof(*python->shapes), offsetof(struct python_shape, hash), 0,
	                        python->nr_shapes, 1))
		return -1;
	mask = python->nr_shape_slots - 1;
	for (slot = (size_t)hash & mask; python->shape_slots[slot]; slot = (slot + 1) & mask) {
		uint32_t i = python->shape_slots[slot] - 1;

		if (shape_is(&python->shapes[i], hash, comm, jit_code, objects, nr))
			return i;
	}
	if (python->nr_shapes >= UINT32_MAX - 1 ||
	    !ps_array_reserve((void **)&python->shapes, &python->cap_shapes, python->nr_shapes + 1,
	                      sizeof(*python->shapes), 16))
		return -1;
	shape = &python->shapes[python->nr_shapes];
	*shape = (struct python_shape){ .hash = hash, .jit_code = jit_code, .nr_objects = nr };
	shape->comm = comm ? strdup(comm) : NULL;
	shape->objects = nr ? malloc(nr * sizeof(*objects)) : NULL;
	if ((comm && !shape->comm) || (nr && !shape->objects)) {
		free(shape->comm);
		free(shape->objects);
		return -1;
	}
	if (nr)
		memcpy(shape->objects, objects, nr * sizeof(*objects));
	python->shape_slots[slot] = (uint32_t)++python->nr_shapes;
	return (long)python->nr_shapes - 1;
}

/* A process is freed: the report keeps what it would have said of it, as
 * the files it mapped, to be looked at only if a report is asked for
 * (opening every program a machine ran to look for CPython in it would
 * cost a run that prints stacks more than the report saves). */
static void describe_lines(struct ps_python *python, struct ps_process *p,
                           struct ps_python_process *out);

/* What describe_lines() would say of a process about to be freed. */
static struct python_gone_lines *keep_lines(struct ps_python *python, struct ps_process *process)
{
	struct python_process *state = ps_python_process(process);
	struct python_gone_lines *kept;
	struct ps_python_process out = { 0 };

	if (!state || (!state->python_frames && !state->lines))
		return NULL;
	describe_lines(python, process, &out);
	kept = calloc(1, sizeof(*kept));
	if (!kept)
		return NULL; /* the report then says less of it */
	kept->file = out.lines_file ? strdup(out.lines_file) : NULL;
	kept->error = out.lines_error ? strdup(out.lines_error) : NULL;
	kept->codes = out.lines_codes;
	kept->python_frames = out.python_frames;
	kept->dwarf = out.lines_dwarf;
	kept->scan = out.lines_scan;
	return kept;
}

void ps_python_process_gone(void *ctx, struct ps_process *process, const char *comm)
{
	struct ps_python *python = ctx;
	struct ps_mapped_object **objects = NULL;
	size_t nr = 0, cap = 0;
	bool jit_code = false;
	long shape;

	if (python->gone_nomem || !ps_process_next_map(process, NULL))
		return;
	for (const struct ps_map *map = ps_process_next_map(process, NULL); map;
	     map = ps_process_next_map(process, map)) {
		if (!ps_process_map_current(process, map))
			continue; /* a program run before the last exec */
		if (map->object->jit_pid)
			jit_code = true;
		if (!ps_python_searched_map(map) || (nr && objects[nr - 1] == map->object))
			continue;
		if (!ps_array_reserve((void **)&objects, &cap, nr + 1, sizeof(*objects), 16)) {
			python->gone_nomem = true;
			free(objects);
			return;
		}
		objects[nr++] = map->object;
	}
	/* nothing the report would tell */
	if (!nr && !jit_code) {
		free(objects);
		return;
	}
	shape = find_shape(python, comm, jit_code, objects, nr);
	free(objects);
	if (shape < 0 || !ps_array_reserve((void **)&python->gone, &python->cap_gone,
	                                   python->nr_gone + 1, sizeof(*python->gone), 256)) {
		python->gone_nomem = true;
		return;
	}
	python->gone[python->nr_gone++] = (struct python_gone){
		.pid = ps_process_pid(process),
		.shape = (uint32_t)shape,
		.lines = keep_lines(python, process),
	};
}

/* ---- the report ------------------------------------------------------ */

/* One process of the report: a live one (process) or a freed one (gone,
 * the index of its python_gone); seq keeps the freed ones of a pid before
 * the live one, in the order they went. */
struct report_entry {
	int32_t pid;
	size_t seq;
	struct ps_process *process;
	size_t gone;
};

struct report_list {
	struct report_entry *entries;
	size_t nr, cap;
	bool nomem;
};

static void add_entry(struct report_list *list, int32_t pid, struct ps_process *process,
                      size_t gone)
{
	if (list->nomem)
		return;
	if (!ps_array_reserve((void **)&list->entries, &list->cap, list->nr + 1,
	                      sizeof(*list->entries), 64)) {
		list->nomem = true;
		return;
	}
	list->entries[list->nr] = (struct report_entry){
		.pid = pid, .seq = list->nr, .process = process, .gone = gone
	};
	list->nr++;
}

static void collect_live(void *ctx, struct ps_process *process)
{
	if (ps_process_next_map(process, NULL))
		add_entry(ctx, ps_process_pid(process), process, 0);
}

static int compare_entries(const void *a, const void *b)
{
	const struct report_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static const char *version_source_name(enum ps_py_version_source source)
{
	switch (source) {
	case PS_PY_VERSION_SYMBOL:
		return "Py_Version";
	case PS_PY_VERSION_DEBUG_OFFSETS:
		return "_Py_DebugOffsets";
	case PS_PY_VERSION_STRING:
		return "version string";
	case PS_PY_VERSION_RODATA:
		return ".rodata";
	case PS_PY_VERSION_UNKNOWN:
	default:
		return NULL;
	}
}

static void describe_sources(struct ps_python *python, int32_t pid, struct ps_python_process *out)
{
	struct ps_jit_names *names = ps_python_pid_names(python, pid, true);
	const struct ps_jit_table *t;

	if (!names)
		return;
	t = ps_jit_names_table(names, PS_JIT_SOURCE_MAP);
	if (t) {
		out->perf_map = ps_jit_table_path(t);
		out->perf_map_entries = ps_jit_table_count(t);
	}
	t = ps_jit_names_table(names, PS_JIT_SOURCE_DUMP);
	if (t) {
		struct ps_jit_symbol sym;
		out->jitdump = ps_jit_table_path(t);
		out->jitdump_entries = ps_jit_table_count(t);
		for (size_t i = 0; i < out->jitdump_entries; i++)
			if (ps_jit_table_at(t, i, &sym) && sym.eh_frame)
				out->jitdump_unwind++;
	}
	out->missing = ps_jit_names_where(names);
	out->error = ps_jit_names_errmsg(names);
}

/* The side file and the counts of the merged frames (the process's own
 * state, which the merge keeps). */
static void describe_lines(struct ps_python *python, struct ps_process *p,
                           struct ps_python_process *out)
{
	struct python_process *state = ps_python_process(p);
	struct python_lines *lines;

	if (!state)
		return;
	lines = ps_python_lines(python, state);
	if (lines) {
		out->lines_file = lines->path;
		out->lines_codes = ps_py_codes_objects(lines->codes);
	} else if (state->lines && state->lines->error != -ENOENT) {
		out->lines_file = state->lines->path;
		out->lines_error = state->lines->message;
	}
	out->python_frames = state->python_frames;
	out->lines_dwarf = state->lined[PS_PY_LINE_DWARF];
	out->lines_scan = state->lined[PS_PY_LINE_SCAN];
}

int ps_python_report(struct ps_python *python, ps_python_process_fn fn, void *ctx)
{
	struct ps_machine *machine = ps_pipeline_machine(python->pipeline);
	struct report_list list = { 0 };

	if (python->gone_nomem)
		return -ENOMEM;
	for (size_t i = 0; i < python->nr_gone; i++)
		add_entry(&list, python->gone[i].pid, NULL, i);
	ps_machine_for_each_process(machine, collect_live, &list);
	if (list.nomem) {
		free(list.entries);
		return -ENOMEM;
	}
	if (list.nr)
		qsort(list.entries, list.nr, sizeof(*list.entries), compare_entries);
	for (size_t i = 0; i < list.nr; i++) {
		const struct report_entry *e = &list.entries[i];
		/* looked up afresh, not through the process's cache */
		struct python_process probe = { .process = e->process };
		struct ps_python_process out = { .pid = e->pid };
		char unnamed[16];

		if (e->process) {
			const struct ps_thread *t = ps_machine_find_thread(machine, e->pid);

			ps_python_find_interpreter(python, &probe);
			out.jit_code = ps_python_has_jit_code(e->process);
			out.comm = t ? t->comm : NULL;
		} else {
			const struct python_shape *shape =
			        &python->shapes[python->gone[e->gone].shape];

			ps_python_find_interpreter_in(python, &probe, shape->objects,
			                              shape->nr_objects);
			out.jit_code = shape->jit_code;
			out.comm = shape->comm;
		}
		if (!probe.interp && !out.jit_code)
			continue;
		if (!out.comm) {
			/* the name perf gives a thread it never saw named */
			snprintf(unnamed, sizeof(unnamed), ":%d", (int)e->pid);
			out.comm = unnamed;
		}
		if (probe.interp) {
			out.interpreter = probe.interp_object->name;
			out.major = probe.interp->major;
			out.minor = probe.interp->minor;
			out.micro = probe.interp->micro;
			out.version_source = version_source_name(probe.interp->version_source);
			out.dynsym_only = probe.interp->dynsym_only;
		}
		out.has_trampoline = probe.template_object != NULL;
		out.trampoline_decoded = probe.trampoline != NULL;
		if (probe.template_object && probe.template_object != probe.interp_object)
			out.trampoline_file = probe.template_object->name;
		describe_sources(python, e->pid, &out);
		if (e->process) {
			describe_lines(python, e->process, &out);
		} else if (python->gone[e->gone].lines) {
			const struct python_gone_lines *kept = python->gone[e->gone].lines;

			out.lines_file = kept->file;
			out.lines_error = kept->error;
			out.lines_codes = kept->codes;
			out.python_frames = kept->python_frames;
			out.lines_dwarf = kept->dwarf;
			out.lines_scan = kept->scan;
		}
		fn(ctx, &out);
	}
	free(list.entries);
	return 0;
}
