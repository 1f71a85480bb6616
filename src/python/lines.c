/* The line of every Python frame. Each Python frame is an activation of
 * CPython's eval loop called by its trampoline (the py:: frame). The
 * activation keeps its instruction pointer (next_instr, or this_instr on
 * 3.13+) in a register or a slot of its C frame; the unwinder recovered
 * each frame's registers and the sample holds the stack, so the pointer
 * is read back here (ps_pipeline_rules.inspect_frames), in this order:
 *  - from libpython's DWARF: the variable's location at the frame's PC;
 *  - else from a scan of the frame's callee-saved registers, else of its
 *    stack slots, for pointers into the bytecode of the code object the
 *    trampoline runs; taken only when every such pointer gives the same
 *    line.
 * The pointer becomes a line through the side file pystitch_perf wrote
 * (codefile.c): the code object whose bytecode holds it at the sample's
 * time, whose name must be the trampoline's, and its line table
 * (linetable.c). The line goes on the trampoline's frame as a note that
 * the merge turns into ps_frame.line (stack.c). A line that cannot be had
 * so is not printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/message.h"
#include "python/python_priv.h"

/* The clocks of perf (local_clock) and of the side file (CLOCK_MONOTONIC)
 * differ by about half a millisecond here; a code object alive within
 * this much of a sample's time counts as alive then. */
#define TIME_MARGIN 20000000ull
/* code objects of one name looked at by the scan, and of the copies of
 * their bytecode other threads run (free-threaded 3.14+) */
#define SCAN_CANDIDATES 8
#define SCAN_COPIES 56
/* the most of a frame's stack the scan reads */
#define SCAN_BYTES 4096
/* the callee-saved registers (DWARF numbers): rbx, rbp, r12-r15 */
#define CALLEE_SAVED (1u << 3 | 1u << 6 | 1u << 12 | 1u << 13 | 1u << 14 | 1u << 15)
#define DWARF_SP 7
#define CODE_UNIT 2

/* The eval loop's instruction pointers, and how far before each the
 * instruction being run starts: this_instr (3.13+) is the instruction;
 * next_instr is past its first code unit (3.8-3.12) or past the whole
 * instruction (3.13+), so the code unit before it is the instruction's;
 * the specialising instructions' cache (3.11+) is their first cache entry,
 * right after the instruction's first unit, often where next_instr's own
 * location is lost. */
static const char *const pointer_names[] = { "this_instr", "next_instr", "cache" };
static const uint64_t pointer_back[] = { 0, CODE_UNIT, CODE_UNIT };

void ps_python_lines_free(struct python_lines *lines)
{
	if (!lines)
		return;
	ps_py_codes_free(lines->codes);
	free(lines->path);
	free(lines->message);
	free(lines);
}

/* ---- the side file ----------------------------------------------------- */

/* Whether a candidate exists (in the archive the capture came in, or
 * here). */
static bool candidate_exists(const struct ps_file_hooks *files, const char *path)
{
	const char *local = ps_file_local(files, path);

	return local && access(local, R_OK) == 0;
}

/* perf-N.pylines beside a perf map (DIR/perf-N.map) or a jitdump
 * (DIR/jit-N.dump) the process's frames are named from: a container's
 * namespace pid names them alike. false when source is not so named. */
static bool beside(const char *source, char *path, size_t size)
{
	const char *base = strrchr(source, '/');
	size_t dir_len = base ? (size_t)(base - source + 1) : 0;
	const char *number;
	size_t len;

	base = base ? base + 1 : source;
	if (strncmp(base, "perf-", 5) == 0)
		number = base + 5;
	else if (strncmp(base, "jit-", 4) == 0)
		number = base + 4;
	else
		return false;
	len = strspn(number, "0123456789");
	if (!len || (strcmp(number + len, ".map") != 0 && strcmp(number + len, ".dump") != 0))
		return false;
	return (size_t)snprintf(path, size, "%.*sperf-%.*s.pylines", (int)dir_len, source, (int)len,
	                        number) < size;
}

/* The side file of pid: beside the perf map or jitdump its frames are
 * named from, else perf-PID.pylines in the directories perf maps are
 * searched in (--perf-map-dir, the capture's directory, /tmp). */
static int find_side_file(struct ps_python *python, int32_t pid, char *path, size_t size)
{
	const struct ps_jit_names_opts *o = &python->names_opts;
	/* loaded as naming the frames loads them, saying what it found */
	struct ps_jit_names *names = ps_python_pid_names(python, pid, false);
	static const enum ps_jit_source sources[] = { PS_JIT_SOURCE_MAP, PS_JIT_SOURCE_DUMP };
	const char *data = o->perf_data_path, *slash;

	for (size_t i = 0; names && i < sizeof(sources) / sizeof(sources[0]); i++) {
		const struct ps_jit_table *table = ps_jit_names_table(names, sources[i]);

		if (table && beside(ps_jit_table_path(table), path, size) &&
		    candidate_exists(o->files, path))
			return 0;
	}
	for (size_t d = 0; d < o->nr_perf_map_dirs + 3; d++) {
		const char *dir = d == 0                         ? o->perf_map_dir
		                  : d <= o->nr_perf_map_dirs     ? o->perf_map_dirs[d - 1]
		                  : d == o->nr_perf_map_dirs + 1 ? NULL
		                                                 : "/tmp";
		int len = -1;

		if (d == o->nr_perf_map_dirs + 1 && data && data[0] && strcmp(data, "-") != 0) {
			slash = strrchr(data, '/');
			len = snprintf(path, size, "%.*s/perf-%d.pylines",
			               slash ? (int)(slash - data) : 1, slash ? data : ".",
			               (int)pid);
		} else if (dir) {
			len = snprintf(path, size, "%s/perf-%d.pylines", dir, (int)pid);
		}
		if (len > 0 && (size_t)len < size && candidate_exists(o->files, path))
			return 0;
	}
	return -ENOENT;
}

static int open_side_file(struct ps_python *python, struct python_lines *lines, int32_t pid)
{
	const struct ps_file_hooks *files = python->names_opts.files;
	char path[PS_MSG_MAX];
	int rc = find_side_file(python, pid, path, sizeof(path));

	if (rc)
		return rc;
	lines->path = strdup(path);
	if (!lines->path)
		return -ENOMEM;
	rc = ps_py_codes_read(path, ps_file_local(files, path), 0, &lines->codes);
	if (rc == -ENOENT) {
		ps_py_codes_free(lines->codes);
		lines->codes = NULL;
		return rc;
	}
	ps_file_note_used(files, path, ps_file_local(files, path), PS_FILE_PY_LINES);
	if (rc) {
		const char *why = ps_py_codes_errmsg(lines->codes)
		                          ? ps_py_codes_errmsg(lines->codes)
		                          : strerror(-rc);

		lines->message = strdup(why);
		ps_python_say(python, PS_LOG_WARN, "%s; Python frames of pid %d get no line", why,
		              (int)pid);
	} else if (ps_py_codes_errmsg(lines->codes))
		ps_python_say(python, PS_LOG_WARN, "%s; the records before it are used",
		              ps_py_codes_errmsg(lines->codes));
	return rc;
}

struct python_lines *ps_python_lines(struct ps_python *python, struct python_process *state)
{
	int rc;

	if (state->lines)
		return state->lines->codes ? state->lines : NULL;
	state->lines = calloc(1, sizeof(*state->lines));
	if (!state->lines)
		return NULL;
	rc = open_side_file(python, state->lines, ps_process_pid(state->process));
	if (rc) {
		ps_py_codes_free(state->lines->codes);
		state->lines->codes = NULL;
		state->lines->error = rc;
	}
	return state->lines->codes ? state->lines : NULL;
}

bool ps_python_inspects(void *ctx, struct ps_process *process)
{
	struct python_process *state = ps_python_process(process);

	if (!state || !ps_python_recover_popped(ctx, process))
		return false; /* no JIT code: no trampolines, no Python frames */
	return ps_python_lines(ctx, state) != NULL;
}

/* ---- one activation ---------------------------------------------------- */

/* What the inspection of one stack knows. */
struct activation {
	struct ps_python *python;
	struct python_process *state;
	struct python_lines *lines;
	const struct ps_event *event;
	uint64_t time;
	struct ps_frame_state frame;
	const struct ps_jit_symbol *trampoline;
};

/* Whether a code object is the one the trampoline's perf-map entry
 * names ("py::NAME:FILE") and, when the side file knows it, runs. */
static bool same_code(const struct ps_py_code *code, const struct ps_jit_symbol *trampoline)
{
	const char *name = trampoline->name;
	size_t len = strlen(name);

	if (code->trampoline && code->trampoline != trampoline->start)
		return false;
	return len == 4 + code->name_size + 1 + code->file_size && memcmp(name, "py::", 4) == 0 &&
	       memcmp(name + 4, code->name, code->name_size) == 0 &&
	       name[4 + code->name_size] == ':' &&
	       memcmp(name + 5 + code->name_size, code->file, code->file_size) == 0;
}

/* The code object of the activation whose bytecode holds address: of
 * those alive about then, the one named as the trampoline; NULL when none
 * or more than one is. */
static const struct ps_py_code *code_at(struct activation *a, uint64_t address)
{
	const struct ps_py_code *codes[SCAN_CANDIDATES], *found = NULL;
	size_t n = ps_py_codes_find(a->lines->codes, address, a->time, TIME_MARGIN, codes,
	                            SCAN_CANDIDATES);

	for (size_t i = 0; i < n && i < SCAN_CANDIDATES; i++) {
		if (!same_code(codes[i], a->trampoline))
			continue;
		if (found)
			return NULL;
		found = codes[i];
	}
	return found;
}

/* The line of the code unit at address in code; 0 when it has none. */
static int32_t line_of(const struct ps_py_code *code, uint64_t address)
{
	int32_t line;

	if (address < code->bytecode || address - code->bytecode >= code->bytecode_size)
		return 0;
	if (ps_py_line_at(code->format, code->table, code->table_size, code->first_line,
	                  address - code->bytecode, &line) != 1 ||
	    line <= 0)
		return 0;
	return line;
}

/* From the DWARF location of the eval loop's instruction pointer. */
static int32_t line_from_dwarf(struct activation *a, const struct ps_function_variables *vars,
                               uint64_t addr, bool caller)
{
	for (size_t v = 0; v < sizeof(pointer_names) / sizeof(pointer_names[0]); v++) {
		/* a caller's PC is its call's last byte: where the call
		 * returns, a value the call clobbered is elsewhere */
		for (unsigned at = 0; at < (caller ? 2u : 1u); at++) {
			const struct ps_py_code *code;
			uint64_t value;
			int32_t line;

			if (ps_variables_value(vars, v, addr + at, &a->frame, &value) != 1 ||
			    value < pointer_back[v])
				continue;
			code = code_at(a, value - pointer_back[v]);
			/* a value that is not inside the frame's code is not taken */
			if (!code)
				continue;
			line = line_of(code, value - pointer_back[v]);
			if (line)
				return line;
		}
	}
	return 0;
}

/* The code objects the trampoline may run: the one the side file says it
 * runs, else those named as its perf-map entry is; then the copies of
 * their bytecode other threads run, as many as there is room for. */
static size_t scan_candidates(struct activation *a, const struct ps_py_code **out)
{
	const struct ps_jit_symbol *t = a->trampoline;
	const struct ps_py_code *code =
	        ps_py_codes_by_trampoline(a->lines->codes, t->start, a->time, TIME_MARGIN);
	const char *name = t->name + 4, *colon;
	size_t n, objects;

	if (code) {
		out[0] = code;
		n = 1;
	} else {
		/* "py::NAME:FILE": NAME holds no ':' (qualified names use '.') */
		colon = strchr(name, ':');
		if (!colon)
			return 0;
		n = ps_py_codes_by_name(a->lines->codes, name, (size_t)(colon - name), colon + 1,
		                        strlen(colon + 1), a->time, TIME_MARGIN, out,
		                        SCAN_CANDIDATES);
		if (n > SCAN_CANDIDATES)
			return 0;
	}
	objects = n;
	for (size_t i = 0; i < objects; i++)
		for (uint32_t c = out[i]->next_copy;
		     c != UINT32_MAX && n < SCAN_CANDIDATES + SCAN_COPIES;
		     c = out[n - 1]->next_copy)
			out[n++] = ps_py_codes_at(a->lines->codes, c);
	return n;
}

/* From the callee-saved registers (the sample's own frame's too: they are
 * where a pointer lives across the calls of the eval loop): every one that
 * points inside a candidate's bytecode, past its first code unit, must
 * give the same line. */
/* The line a word gives when it points inside a candidate's bytecode,
 * past its first code unit: 0 when it does not, -1 when it does but its
 * line is not the line found so far (*found, 0 before the first). */
static int scan_word(const struct ps_py_code *const *candidates, size_t n, uint64_t value,
                     int32_t *found)
{
	int seen = 0;

	for (size_t c = 0; c < n; c++) {
		const struct ps_py_code *code = candidates[c];
		int32_t line;

		if (value <= code->bytecode || value > code->bytecode + code->bytecode_size ||
		    (value - code->bytecode) % CODE_UNIT)
			continue;
		line = line_of(code, value - CODE_UNIT);
		if (!line || (*found && line != *found))
			return -1;
		*found = line;
		seen = 1;
	}
	return seen;
}

/* From the frame's callee-saved registers, where the eval loop keeps what
 * lives across its calls (the sample's own frame's too), else from the
 * frame's own stack slots, [its SP, its CFA), at most SCAN_BYTES of them:
 * the pointers inside a candidate's bytecode must all give the same line. */
static int32_t line_from_scan(struct activation *a)
{
	const struct ps_py_code *candidates[SCAN_CANDIDATES + SCAN_COPIES];
	const struct ps_frame_state *f = &a->frame;
	size_t n = scan_candidates(a, candidates);
	int32_t found = 0;
	uint64_t from, to;

	if (!n)
		return 0;
	for (unsigned regno = 0; regno < PS_FRAME_REGS; regno++)
		if ((CALLEE_SAVED & f->present & (1u << regno)) &&
		    scan_word(candidates, n, f->regs[regno], &found) < 0)
			return 0;
	if (found || !f->has_cfa || !(f->present & (1u << DWARF_SP)))
		return found;
	from = f->regs[DWARF_SP];
	to = f->cfa;
	if (to <= from || to - from > SCAN_BYTES || from < f->stack_addr)
		return 0;
	for (uint64_t at = from; at + 8 <= to; at += 8) {
		uint64_t value;

		if (at - f->stack_addr + 8 > f->stack_size)
			return 0; /* the copy ends inside the frame */
		memcpy(&value, f->stack + (at - f->stack_addr), 8);
		if (scan_word(candidates, n, value, &found) < 0)
			return 0;
	}
	return found;
}

/* The registers and stack of frame i as a location expression reads
 * them; its CFA is its caller's stack pointer. */
static void frame_state(struct activation *a, const struct ps_unwind_frame_regs *regs, size_t i,
                        size_t n)
{
	const struct ps_sample *sample = &a->event->u.sample;
	struct ps_frame_state *f = &a->frame;

	memcpy(f->regs, regs[i].regs, sizeof(f->regs));
	f->present = regs[i].present;
	f->has_cfa = i + 1 < n && (regs[i + 1].present & (1u << DWARF_SP));
	f->cfa = f->has_cfa ? regs[i + 1].regs[DWARF_SP] : 0;
	f->stack = sample->stack_data;
	f->stack_size = sample->stack_dyn_size;
	f->stack_addr = (regs[0].present & (1u << DWARF_SP)) ? regs[0].regs[DWARF_SP] : 0;
	if (!(regs[0].present & (1u << DWARF_SP)))
		f->stack_size = 0;
}

/* Whether the frame at pc runs the eval loop; *vars its variables when
 * libpython has DWARF. */
static bool eval_frame(struct activation *a, uint64_t pc, struct ps_dso **dso_out,
                       uint64_t *addr_out, const struct ps_function_variables **vars)
{
	const struct ps_map *map = ps_process_find_map(a->state->process, pc);
	struct ps_frame_name name;
	struct ps_dso *dso;
	uint64_t addr;

	*vars = NULL;
	if (!map || map->object != a->state->interp_object)
		return false;
	dso = ps_pipeline_object_dso(a->python->pipeline, map->object);
	if (!dso)
		return false;
	addr = pc - map->start + map->pgoff;
	*dso_out = dso;
	*addr_out = addr;
	if (a->lines->vars && ps_variables_cover(a->lines->vars, addr)) {
		*vars = a->lines->vars;
		return true;
	}
	if (!ps_dso_resolve(dso, addr, false, &name, 1) || !name.sym ||
	    ps_py_eval_name_kind(name.sym) == PS_PY_EVAL_NONE)
		return false;
	if (!a->lines->vars_tried) {
		a->lines->vars_tried = true;
		ps_dso_variables(dso, addr, pointer_names,
		                 sizeof(pointer_names) / sizeof(pointer_names[0]), &a->lines->vars);
	}
	if (a->lines->vars && ps_variables_cover(a->lines->vars, addr))
		*vars = a->lines->vars;
	return true;
}

void ps_python_inspect_frames(void *ctx, struct ps_process *process, const struct ps_event *event,
                              const uint64_t *pcs, const struct ps_unwind_frame_regs *regs,
                              size_t n, uint64_t *notes)
{
	struct activation a = { .python = ctx, .event = event, .time = event->u.sample.time };

	a.state = ps_python_process(process);
	if (!a.state || !(a.lines = ps_python_lines(a.python, a.state)))
		return;
	ps_python_find_interpreter(a.python, a.state);
	if (!a.state->interp_object)
		return;
	for (size_t i = 0; i + 1 < n; i++) {
		const struct ps_function_variables *vars;
		struct ps_jit_symbol trampoline;
		struct ps_dso *dso;
		uint64_t addr;
		int32_t line = 0;
		enum ps_py_line_source source = PS_PY_LINE_DWARF;

		if (!regs[i].present || !eval_frame(&a, pcs[i], &dso, &addr, &vars))
			continue;
		/* the activation's caller is its trampoline: JIT code named py:: */
		if (!ps_python_jit_symbol(a.python, process, 0, pcs[i + 1], &trampoline) ||
		    strncmp(trampoline.name, "py::", 4) != 0)
			continue;
		a.trampoline = &trampoline;
		frame_state(&a, regs, i, n);
		if (vars)
			line = line_from_dwarf(&a, vars, addr, i > 0);
		if (!line) {
			line = line_from_scan(&a);
			source = PS_PY_LINE_SCAN;
		}
		if (line > 0)
			notes[i + 1] = (uint64_t)(uint32_t)line |
			               (uint64_t)source << PS_PY_NOTE_SOURCE_SHIFT;
	}
}
