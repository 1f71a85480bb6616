/* The per-process report of the Python side (pystitch info, and what
 * pystitch archive packs): every process of the machine model that mapped
 * a CPython interpreter or JIT code, with what names its Python frames.
 * It reads no records: it tells what the pipeline has seen so far.
 */
#include <errno.h>
#include <stdlib.h>

#include "base/array.h"
#include "python/python_priv.h"

struct pid_list {
	int32_t *pids;
	size_t nr, cap;
	bool nomem;
};

static void collect_pid(void *ctx, struct ps_process *process)
{
	struct pid_list *list = ctx;

	if (!ps_process_next_map(process, NULL) || list->nomem)
		return;
	if (!ps_array_reserve((void **)&list->pids, &list->cap, list->nr + 1, sizeof(*list->pids),
	                      64)) {
		list->nomem = true;
		return;
	}
	list->pids[list->nr++] = ps_process_pid(process);
}

static int compare_pids(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
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
		out->lines_codes = ps_py_codes_count(lines->codes);
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
	struct pid_list list = { 0 };

	ps_machine_for_each_process(machine, collect_pid, &list);
	if (list.nomem) {
		free(list.pids);
		return -ENOMEM;
	}
	if (list.nr)
		qsort(list.pids, list.nr, sizeof(*list.pids), compare_pids);
	for (size_t i = 0; i < list.nr; i++) {
		struct ps_process *p = ps_machine_process(machine, list.pids[i]);
		struct ps_thread *t = ps_machine_thread(machine, list.pids[i], list.pids[i]);
		/* looked up afresh, not through the process's cache */
		struct python_process probe = { .process = p };
		struct ps_python_process out = { .pid = list.pids[i] };

		if (!p || !t) {
			free(list.pids);
			return -ENOMEM;
		}
		ps_python_find_interpreter(python, &probe);
		out.jit_code = ps_python_has_jit_code(p);
		if (!probe.interp && !out.jit_code)
			continue;
		out.comm = t->comm;
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
		describe_sources(python, list.pids[i], &out);
		describe_lines(python, p, &out);
		fn(ctx, &out);
	}
	free(list.pids);
	return 0;
}
