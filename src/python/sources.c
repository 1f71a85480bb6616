/* The name sources of the Python side: per pid, the perf map and jitdump
 * the process wrote, loaded on first use (and what loading found said
 * once), and the naming of JIT code from them. Also how the Python side
 * says things (ps_python_say), which its other parts share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/python_priv.h"

#include "base/message.h"

void ps_python_say(const struct ps_python *python, enum ps_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vlog(python->log, python->log_ctx, level, NULL, fmt, ap);
	va_end(ap);
}

void ps_python_sources_free(struct ps_python *python)
{
	for (size_t b = 0; b < PS_PYTHON_NAMES_BUCKETS; b++) {
		struct python_pid_names *n = python->names[b];

		while (n) {
			struct python_pid_names *next = n->next;

			ps_jit_names_free(n->names);
			free(n);
			n = next;
		}
	}
}

/* Say once per pid what loading its files found: nothing (with where it
 * looked), a file that could not be read, or damage skipped. */
static void report_load(struct ps_python *python, struct python_pid_names *n, int rc)
{
	static const enum ps_jit_source sources[] = { PS_JIT_SOURCE_MAP, PS_JIT_SOURCE_DUMP };

	if (rc == -ENOENT && ps_jit_names_nr_listed(n->names) && python->mode != PS_PYTHON_NATIVE)
		return; /* said when the files are chosen */
	if (rc == -ENOENT) {
		ps_python_say(python, PS_LOG_WARN,
		              "%s: JIT frames of pid %d (Python's included) stay unnamed",
		              ps_jit_names_where(n->names), (int)n->pid);
		return;
	}
	if (ps_jit_names_errmsg(n->names))
		ps_python_say(python, PS_LOG_WARN, "%s", ps_jit_names_errmsg(n->names));
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
			ps_python_say(
			        python, PS_LOG_WARN,
			        "%s: skipped %zu damaged and %zu over-limit entries, dropped %zu "
			        "unwinding infos and %llu bytes that hold no whole record%s%s",
			        ps_jit_table_path(t), st->damaged, st->over_limit,
			        st->unwind_dropped, (unsigned long long)st->bytes_dropped,
			        first ? "; first: " : "", first ? first : "");
		}
		ps_python_say(python, PS_LOG_INFO, "%s: %zu named code ranges",
		              ps_jit_table_path(t), st->entries);
	}
}

/* A container whose process has ended may still run: the /tmp of its
 * mount namespace (PERF_RECORD_NAMESPACES, perf record --namespaces),
 * seen through another process there, holds the process's files. */
static int set_namespace_root(struct ps_python *python, struct python_pid_names *n)
{
	struct ps_machine *machine = ps_pipeline_machine(python->pipeline);
	struct ps_process *process = ps_machine_process(machine, n->pid);
	uint64_t dev, ino;
	int32_t live;
	char root[64];

	if (!process || !ps_process_mount_namespace(process, &dev, &ino))
		return 0;
	live = ps_symbols_live_in_namespace(ps_pipeline_symbols(python->pipeline), dev, ino);
	if (live <= 0)
		return 0;
	snprintf(root, sizeof(root), "/proc/%d/root", (int)live);
	return ps_jit_names_set_namespace_root(n->names, root);
}

struct ps_jit_names *ps_python_pid_names(struct ps_python *python, int32_t pid, bool quiet)
{
	size_t bucket = (uint32_t)pid % PS_PYTHON_NAMES_BUCKETS;
	struct python_pid_names *n;

	for (n = python->names[bucket]; n; n = n->next)
		if (n->pid == pid)
			break;
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return NULL;
		if (ps_jit_names_new(&python->names_opts, pid, &n->names)) {
			free(n);
			return NULL;
		}
		n->pid = pid;
		n->next = python->names[bucket];
		python->names[bucket] = n;
		/* out of memory there: no more candidates than by name */
		(void)set_namespace_root(python, n);
	}
	if (!n->loaded) {
		int rc = ps_jit_names_load(n->names);
		n->loaded = true;
		if (!quiet)
			report_load(python, n, rc);
	}
	return n->names;
}

/* The named range holding addr, for JIT code named after jit_pid. Native
 * mode reads only the perf map, as perf does. */
static bool lookup_jit(struct ps_python *python, int32_t jit_pid, bool own, uint64_t addr,
                       struct ps_jit_symbol *out, bool *settled)
{
	struct ps_jit_names *names = ps_python_pid_names(python, jit_pid, false);
	bool found;

	if (!names) {
		*settled = false;
		return false;
	}
	if (python->mode == PS_PYTHON_NATIVE) {
		/* perf's file: by name, never refused */
		const struct ps_jit_table *map = ps_jit_names_by_name(names, PS_JIT_SOURCE_MAP);
		return map && ps_jit_table_lookup(map, addr, out);
	}
	/* before the choice, the files answering may change with the
	 * evidence, and every lookup of the pid's own is evidence */
	found = ps_jit_names_lookup_as(names, addr, own, out);
	if (!ps_jit_names_decided(names))
		*settled = false;
	return found;
}

/* perf reads only the map the JIT object's name gives (after fork, the
 * parent's); the other modes first read the process's own files, which a
 * forked child starts with a copy of its parent's lines and goes on with
 * its own. */
bool ps_python_lookup_jit(struct ps_python *python, int32_t jit_pid, int32_t pid, uint64_t addr,
                          struct ps_jit_symbol *out, bool *settled)
{
	bool ignored = true;

	if (!settled)
		settled = &ignored;
	if (python->mode == PS_PYTHON_NATIVE || pid <= 0 || pid == jit_pid)
		return lookup_jit(python, jit_pid, true, addr, out, settled);
	/* JIT code the child inherited is no evidence about which files are
	 * the child's (its own map need not name its parent's trampolines:
	 * CPython starts a new map in a forked child unless told to copy the
	 * parent's), nor, asked for what the child's lack, about the
	 * parent's */
	return lookup_jit(python, pid, false, addr, out, settled) ||
	       lookup_jit(python, jit_pid, false, addr, out, settled);
}

static struct python_jit_hit *jit_hit_slot(struct python_process *state, uint64_t addr)
{
	if (!state->jit_hits &&
	    !(state->jit_hits = calloc((size_t)1 << PS_PY_JIT_HITS_BITS, sizeof(*state->jit_hits))))
		return NULL;
	return &state->jit_hits[(addr * 0x9e3779b97f4a7c15ULL) >> (64 - PS_PY_JIT_HITS_BITS)];
}

bool ps_python_jit_symbol(struct ps_python *python, struct ps_process *process, int32_t jit_pid,
                          uint64_t addr, struct ps_jit_symbol *out)
{
	struct python_process *state = ps_python_process(process);
	struct python_jit_hit *hit;
	bool settled = true, found;

	if (!jit_pid) {
		const struct ps_map *map = ps_process_find_map(process, addr);

		if (!map || !map->object->jit_pid)
			return false;
		jit_pid = map->object->jit_pid;
	}
	/* settled, the answer depends on the address, the process and
	 * jit_pid alone */
	hit = state ? jit_hit_slot(state, addr) : NULL;
	if (hit && hit->jit_pid == jit_pid && hit->addr == addr) {
		if (hit->found)
			*out = hit->sym;
		return hit->found;
	}
	found = ps_python_lookup_jit(python, jit_pid, ps_process_pid(process), addr, out, &settled);
	if (hit && settled)
		*hit = (struct python_jit_hit){ .addr = addr,
			                        .jit_pid = jit_pid,
			                        .found = found,
			                        .sym = found ? *out : (struct ps_jit_symbol){ 0 } };
	return found;
}

void ps_python_finish(struct ps_python *python)
{
	/* native mode takes files by name alone, as perf: nothing to decide */
	if (python->finished || python->mode == PS_PYTHON_NATIVE)
		return;
	python->finished = true;
	for (size_t b = 0; b < PS_PYTHON_NAMES_BUCKETS; b++)
		for (struct python_pid_names *n = python->names[b]; n; n = n->next)
			ps_jit_names_decide(n->names);
	ps_jit_pool_report_unused(python->pool);
}

void ps_python_name_jit(void *ctx, struct ps_process *process,
                        const struct ps_mapped_object *object, uint64_t ip, struct ps_frame *f)
{
	struct ps_python *python = ctx;
	struct ps_jit_symbol sym;

	if (process ? !ps_python_jit_symbol(python, process, object->jit_pid, ip, &sym)
	            : !ps_python_lookup_jit(python, object->jit_pid, 0, ip, &sym, NULL))
		return;
	f->sym = sym.name;
	f->symoff = ip - sym.start;
	f->python = strncmp(sym.name, "py::", 4) == 0;
}
