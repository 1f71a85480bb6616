/* Python frames in the session's stacks.
 *
 * CPython 3.12+ run with -X perf (or -X perf_jit) calls every Python
 * function through a trampoline: a copy of a small template in executable
 * anonymous memory, named "py::qualname:filename" in /tmp/perf-PID.map (or
 * in jit-PID.dump). Three things follow from that, all done here:
 *  - naming: a frame in such memory takes its name from the perf map (and,
 *    outside native mode, the jitdump), as perf names it from the map;
 *  - unwinding: trampolines have no CFI, so the unwinder asks
 *    frame_rule(); the rule comes from the jitdump's .eh_frame for that
 *    trampoline, else from decoding the interpreter's template;
 *  - merging: each sample's user frames go through the python module's
 *    merger, which replaces interpreter frames with the py:: frames.
 * Per-pid name sources are loaded on first use and shared by the
 * processes whose JIT objects name that pid (a forked child keeps its
 * parent's trampolines).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/array.h"
#include "stitch/stitch.h"

#define NAMES_BUCKETS 256
#define MAX_TRAMPOLINES 16 /* interpreter files with a template, per session */
#define TRUNCATED_NAME "[truncated]"

struct pid_names {
	int32_t pid;
	struct ps_jit_names *names;
	bool loaded; /* ps_jit_names_load() ran and its outcome was reported */
	struct pid_names *next;
};

/* A decoded template, per interpreter file. */
struct trampoline_entry {
	char *path;
	int rc; /* 0: trampoline is usable */
	struct ps_trampoline trampoline;
};

struct ps_stitch_python {
	struct ps_session *session;
	enum ps_python_mode mode;
	struct ps_jit_names_opts names_opts;
	char *data_path;
	struct pid_names *buckets[NAMES_BUCKETS];
	struct ps_py_registry *registry;
	struct trampoline_entry trampolines[MAX_TRAMPOLINES];
	size_t nr_trampolines;
	struct ps_py_merger *merger;
	/* per-sample buffers, grown to the largest stack seen */
	struct ps_py_native_frame *native;
	size_t cap_native;
	struct ps_frame *merged;
	size_t cap_merged;
};

static void say(struct ps_session *s, enum ps_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void say(struct ps_session *s, enum ps_log_level level, const char *fmt, ...)
{
	char msg[640];
	va_list ap;

	if (!s->opts.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->opts.log(s->opts.log_ctx, level, msg);
}

int ps_stitch_python_new(struct ps_session *s, const char *perf_data_path)
{
	struct ps_stitch_python *py = calloc(1, sizeof(*py));

	if (!py)
		return -ENOMEM;
	py->session = s;
	py->mode = s->opts.python;
	if (perf_data_path && strcmp(perf_data_path, "-") != 0) {
		py->data_path = strdup(perf_data_path);
		if (!py->data_path)
			goto nomem;
	}
	py->names_opts = (struct ps_jit_names_opts){
		.sz = sizeof(py->names_opts),
		.perf_map_dir = s->opts.perf_map_dir,
		.perf_data_path = py->data_path,
		.files = &s->files,
	};
	if (ps_py_registry_new(&py->registry) || ps_py_merger_new(&py->merger))
		goto nomem;
	s->python = py;
	return 0;
nomem:
	ps_stitch_python_free(py);
	return -ENOMEM;
}

void ps_stitch_python_free(struct ps_stitch_python *py)
{
	if (!py)
		return;
	for (size_t b = 0; b < NAMES_BUCKETS; b++) {
		struct pid_names *n = py->buckets[b];
		while (n) {
			struct pid_names *next = n->next;
			ps_jit_names_free(n->names);
			free(n);
			n = next;
		}
	}
	for (size_t i = 0; i < py->nr_trampolines; i++)
		free(py->trampolines[i].path);
	ps_py_registry_free(py->registry);
	ps_py_merger_free(py->merger);
	free(py->native);
	free(py->merged);
	free(py->data_path);
	free(py);
}

/* ---- name sources --------------------------------------------------- */

/* Say once per pid what loading its files found: nothing (with where it
 * looked), a file that could not be read, or damage skipped. */
static void report_load(struct ps_session *s, struct pid_names *n, int rc)
{
	static const enum ps_jit_source sources[] = { PS_JIT_SOURCE_MAP, PS_JIT_SOURCE_DUMP };

	if (rc == -ENOENT) {
		say(s, PS_LOG_WARN, "%s: Python frames of pid %d stay unnamed",
		    ps_jit_names_where(n->names), (int)n->pid);
		return;
	}
	if (ps_jit_names_errmsg(n->names))
		say(s, PS_LOG_WARN, "%s", ps_jit_names_errmsg(n->names));
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		const struct ps_jit_table *t = ps_jit_names_table(n->names, sources[i]);
		const struct ps_jit_file_stats *st = t ? ps_jit_table_stats(t) : NULL;
		if (!st)
			continue;
		if (st->damaged || st->over_limit || st->unwind_dropped || st->bytes_dropped) {
			const char *first = ps_jit_table_errmsg(t);
			size_t plen = strlen(ps_jit_table_path(t));
			if (first && strncmp(first, ps_jit_table_path(t), plen) == 0 &&
			    strncmp(first + plen, ": ", 2) == 0)
				first += plen + 2; /* the path is said once */
			say(s, PS_LOG_WARN,
			    "%s: skipped %zu damaged and %zu over-limit entries, dropped %zu "
			    "unwinding infos and %llu trailing bytes%s%s",
			    ps_jit_table_path(t), st->damaged, st->over_limit, st->unwind_dropped,
			    (unsigned long long)st->bytes_dropped, first ? "; first: " : "",
			    first ? first : "");
		}
		say(s, PS_LOG_INFO, "%s: %zu named code ranges", ps_jit_table_path(t), st->entries);
	}
}

/* The loaded name sources of pid, or NULL (none found, out of memory). */
static struct ps_jit_names *pid_names(struct ps_session *s, int32_t pid, bool quiet)
{
	struct ps_stitch_python *py = s->python;
	size_t bucket = (uint32_t)pid % NAMES_BUCKETS;
	struct pid_names *n;

	for (n = py->buckets[bucket]; n; n = n->next)
		if (n->pid == pid)
			break;
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return NULL;
		if (ps_jit_names_new(&py->names_opts, pid, &n->names)) {
			free(n);
			return NULL;
		}
		n->pid = pid;
		n->next = py->buckets[bucket];
		py->buckets[bucket] = n;
	}
	if (!n->loaded) {
		int rc = ps_jit_names_load(n->names);
		n->loaded = true;
		if (!quiet)
			report_load(s, n, rc);
	}
	return n->names;
}

/* The named range holding addr, for JIT code named after jit_pid. Native
 * mode reads only the perf map, as perf does. */
static bool lookup_jit(struct ps_session *s, int32_t jit_pid, uint64_t addr,
                       struct ps_jit_symbol *out)
{
	struct ps_jit_names *names = pid_names(s, jit_pid, false);

	if (!names)
		return false;
	if (s->python->mode == PS_PYTHON_NATIVE) {
		const struct ps_jit_table *map = ps_jit_names_table(names, PS_JIT_SOURCE_MAP);
		return map && ps_jit_table_lookup(map, addr, out);
	}
	return ps_jit_names_lookup(names, addr, out);
}

/* The named range of JIT code at addr in a process (pid) whose JIT
 * object is named after jit_pid. perf reads only the map its name gives
 * (after fork, the parent's); the other modes first read the process's
 * own files, which a forked child starts with a copy of its parent's
 * lines and goes on with its own. */
static bool lookup_process_jit(struct ps_session *s, int32_t jit_pid, int32_t pid, uint64_t addr,
                               struct ps_jit_symbol *out)
{
	if (s->python->mode == PS_PYTHON_NATIVE || pid <= 0 || pid == jit_pid)
		return lookup_jit(s, jit_pid, addr, out);
	return lookup_jit(s, pid, addr, out) || lookup_jit(s, jit_pid, addr, out);
}

void ps_stitch_python_name_frame(struct ps_session *s, const struct ps_mapped_object *object,
                                 int32_t pid, uint64_t ip, struct ps_frame *f)
{
	struct ps_jit_symbol sym;

	if (!lookup_process_jit(s, object->jit_pid, pid, ip, &sym))
		return;
	f->sym = sym.name;
	f->symoff = ip - sym.start;
	f->python = strncmp(sym.name, "py::", 4) == 0;
}

/* ---- trampoline unwind rules ---------------------------------------- */

static const struct ps_trampoline *decoded_template(struct ps_session *s, const char *path)
{
	struct ps_stitch_python *py = s->python;
	struct trampoline_entry *e;
	char err[256] = "";

	for (size_t i = 0; i < py->nr_trampolines; i++)
		if (strcmp(py->trampolines[i].path, path) == 0)
			return py->trampolines[i].rc ? NULL : &py->trampolines[i].trampoline;
	if (py->nr_trampolines == MAX_TRAMPOLINES)
		return NULL;
	e = &py->trampolines[py->nr_trampolines];
	e->path = strdup(path);
	if (!e->path)
		return NULL;
	py->nr_trampolines++;
	e->rc = ps_trampoline_from_elf(path, &e->trampoline, err, sizeof(err));
	if (e->rc)
		say(s, PS_LOG_WARN, "%s: cannot use the -X perf trampoline template: %s", path,
		    err[0] ? err : strerror(-e->rc));
	return e->rc ? NULL : &e->trampoline;
}

/* Whether an object found earlier is still mapped where it was. */
static bool still_mapped(const struct process_unwind *pu, const struct ps_mapped_object *object,
                         uint64_t start)
{
	const struct ps_map *map;

	if (!object)
		return false;
	map = ps_process_find_map(pu->process, start);
	return map && map->object == object;
}

/* The CPython interpreter mapped in the process (libpython or a static
 * interpreter: the first executable file mapping that defines the eval
 * loop), and the file whose trampoline template the perf-map entries are
 * copies of: the interpreter's own (3.12+), else a mapped file exporting
 * the template's symbols (the pystitch_perf module, 3.8-3.11). Searched
 * again when the maps have changed and either is missing or gone. */
static void find_interpreter(struct process_unwind *pu)
{
	struct ps_session *s = pu->session;
	const struct ps_process *p = pu->process;
	const struct ps_mapped_object *last = NULL;

	if (pu->interp_searched && pu->interp_generation == ps_process_generation(p))
		return;
	pu->interp_generation = ps_process_generation(p);
	pu->interp_searched = true;
	if (still_mapped(pu, pu->interp_object, pu->interp_map_start) &&
	    still_mapped(pu, pu->template_object, pu->template_map_start))
		return;
	pu->interp_object = NULL;
	pu->interp = NULL;
	pu->template_object = NULL;
	pu->trampoline = NULL;
	for (const struct ps_map *map = ps_process_next_map(p, NULL);
	     map && !(pu->interp && pu->template_object); map = ps_process_next_map(p, map)) {
		const struct ps_py_interp *interp;
		const char *path;
		struct ps_dso *dso;
		int rc;

		if (!(map->prot & PROT_EXEC) || map->identity || map->object->kernel)
			continue;
		if (map->object == last)
			continue; /* one file, several mappings */
		last = map->object;
		dso = ps_stitch_object_dso(s, map->object);
		path = dso ? ps_dso_file(dso) : NULL;
		if (!path || (rc = ps_py_registry_detect(s->python->registry, path, &interp)) < 0)
			continue;
		if (rc == 1 && !pu->interp) {
			pu->interp_object = map->object;
			pu->interp_map_start = map->start;
			pu->interp = interp;
		}
		if (interp->has_trampoline && !pu->template_object) {
			pu->template_object = map->object;
			pu->template_map_start = map->start;
			pu->trampoline = decoded_template(s, path);
		}
	}
}

static bool has_jit_code(const struct ps_process *p)
{
	for (const struct ps_map *map = ps_process_next_map(p, NULL); map;
	     map = ps_process_next_map(p, map))
		if (map->object->jit_pid)
			return true;
	return false;
}

bool ps_stitch_python_has_jit(struct process_unwind *pu)
{
	if (!pu->jit_checked || pu->jit_generation != ps_process_generation(pu->process)) {
		pu->has_jit = has_jit_code(pu->process);
		pu->jit_generation = ps_process_generation(pu->process);
		pu->jit_checked = true;
	}
	return pu->has_jit;
}

bool ps_stitch_python_frame_rule(void *ctx, uint64_t pc, struct ps_unwind_rule *out)
{
	struct process_unwind *pu = ctx;
	struct ps_session *s = pu->session;
	const struct ps_map *map = ps_process_find_map(pu->process, pc);
	struct ps_jit_symbol sym;
	int32_t jit_pid;

	if (!map || !map->object->jit_pid)
		return false;
	jit_pid = map->object->jit_pid;
	if (!lookup_process_jit(s, jit_pid, ps_process_pid(pu->process), pc, &sym))
		return false;
	if (sym.eh_frame &&
	    ps_eh_frame_rule(sym.eh_frame, sym.eh_frame_size, sym.start, pc, out, NULL, 0) == 0)
		return true;
	/* -X perf: every trampoline is a copy of the interpreter's template;
	 * other JIT code in the map is not */
	if (strncmp(sym.name, "py::", 4) != 0)
		return false;
	find_interpreter(pu);
	return pu->trampoline && ps_trampoline_rule_at(pu->trampoline, pc - sym.start, out);
}

/* The object name the interpreter's frames carry: that of a frame running
 * the eval loop itself. */
static const char *interpreter_dso(const struct ps_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (frames[i].sym && ps_py_eval_name_kind(frames[i].sym) == PS_PY_EVAL_MAIN)
			return frames[i].dso;
	return NULL;
}

int ps_stitch_python_merge(struct ps_session *s, struct process_unwind *pu)
{
	struct ps_stitch_python *py = s->python;
	const struct ps_frame *user = s->frames + s->user_first;
	size_t nr_user = s->nr_frames - s->user_first, nr_kernel = s->user_first, n = 0;
	struct ps_py_merge_input in = { 0 };
	struct ps_py_merge_result res;
	const char *interp_dso, *module_dso = NULL;
	int rc;

	in.native_truncated = s->unwound && s->stop == PS_UNWIND_STOP_STACK_CUT;
	/* Debian perf's bogus last frame at a cut stack: the marker says it */
	if (in.native_truncated && nr_user && user[nr_user - 1].addr == UINT64_MAX &&
	    !user[nr_user - 1].sym)
		nr_user--;
	/* the unwinder found it when it met the first trampoline of the
	 * sample; with unwinding workers (jobs.c) this session did not
	 * unwind, so it is looked up here (a no-op when already found for
	 * these maps) */
	if (pu) {
		find_interpreter(pu);
		if (pu->template_object && pu->template_object != pu->interp_object)
			module_dso = pu->template_object->name;
	}
	if (!ps_array_reserve((void **)&py->native, &py->cap_native, nr_user, sizeof(*py->native),
	                      64))
		return -ENOMEM;
	interp_dso = interpreter_dso(user, nr_user);
	for (size_t i = 0; i < nr_user; i++) {
		const struct ps_frame *f = &user[i];
		struct ps_py_native_frame *nf = &py->native[i];

		nf->sym = f->sym;
		nf->python_name = f->python ? f->sym : NULL;
		nf->eval = f->sym && !f->python ? ps_py_eval_name_kind(f->sym) : PS_PY_EVAL_NONE;
		nf->in_interpreter = interp_dso && f->dso == interp_dso;
		/* the module that gives 3.8-3.11 trampolines is call machinery
		 * between Python frames, whatever its functions are called */
		if (module_dso && f->dso == module_dso) {
			nf->in_interpreter = true;
			nf->sym = NULL;
		}
	}
	in.native = py->native;
	in.nr_native = nr_user;
	rc = ps_py_merge(py->merger, &in, py->mode, &res);
	if (rc)
		return rc;
	if (py->mode == PS_PYTHON_ONLY)
		nr_kernel = 0;
	if (!ps_array_reserve((void **)&py->merged, &py->cap_merged, nr_kernel + res.nr_frames,
	                      sizeof(*py->merged), 64))
		return -ENOMEM;
	if (nr_kernel)
		memcpy(py->merged, s->frames, nr_kernel * sizeof(*py->merged));
	n = nr_kernel;
	for (size_t i = 0; i < res.nr_frames; i++) {
		struct ps_frame *f = &py->merged[n++];

		if (res.frames[i].kind == PS_PY_OUT_NATIVE) {
			*f = user[res.frames[i].index];
			continue;
		}
		/* Python frames are native ones: only the marker is new */
		memset(f, 0, sizeof(*f));
		f->sym = TRUNCATED_NAME;
		f->truncated = true;
	}
	s->stack.frames = py->merged;
	s->stack.nr_frames = n;
	return 0;
}

/* ---- the per-process report (pystitch info) ------------------------- */

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

static void describe_sources(struct ps_session *s, int32_t pid, struct ps_python_process *out)
{
	struct ps_jit_names *names = pid_names(s, pid, true);
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

int ps_stitch_python_report(struct ps_session *s, ps_python_process_fn fn, void *ctx)
{
	struct pid_list list = { 0 };

	ps_machine_for_each_process(s->machine, collect_pid, &list);
	if (list.nomem) {
		free(list.pids);
		return -ENOMEM;
	}
	if (list.nr)
		qsort(list.pids, list.nr, sizeof(*list.pids), compare_pids);
	for (size_t i = 0; i < list.nr; i++) {
		struct ps_process *p = ps_machine_process(s->machine, list.pids[i]);
		struct ps_thread *t = ps_machine_thread(s->machine, list.pids[i], list.pids[i]);
		struct process_unwind probe = { .session = s, .process = p };
		struct ps_python_process out = { .pid = list.pids[i] };

		if (!p || !t) {
			free(list.pids);
			return -ENOMEM;
		}
		find_interpreter(&probe);
		out.jit_code = has_jit_code(p);
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
		describe_sources(s, list.pids[i], &out);
		fn(ctx, &out);
	}
	free(list.pids);
	return 0;
}
