/* The stack-copy scan for the frames _PyEval_EvalFrameDefault keeps on the C
 * stack: 3.12-3.14 entry _PyInterpreterFrames, 3.11/3.12 _PyCFrames. It sees
 * only the copied stack bytes, never the heap they point into.
 *
 * What each eval activation writes (CPython's ceval.c, checked for 3.12,
 * 3.13 and 3.14 against the ceval.c sources in the search index):
 *  3.12: entry_frame = { f_code = interp->interpreter_trampoline (a code
 *        object), prev_instr = _PyCode_CODE(that code) (= f_code +
 *        co_code_adaptive), stacktop = 0, owner = CSTACK (3), return_offset
 *        = 0, previous = the caller's current frame (NULL at the root) };
 *        and _PyCFrame cframe = { current_frame, previous = the caller's
 *        cframe (another eval's, on this stack, or tstate->root_cframe) }.
 *  3.13: entry_frame = { f_executable = Py_None, instr_ptr =
 *        _Py_INTERPRETER_TRAMPOLINE_INSTRUCTIONS + 1, stacktop = 0, owner =
 *        CSTACK (3), return_offset = 0, previous }.
 *  3.14: _PyEntryFrame entry = { frame = { f_executable = PyStackRef_None
 *        (tagged), instr_ptr as 3.13, stackpointer = entry.stack (the
 *        stub's own address + 88), owner = INTERPRETER (3), visited = 0,
 *        return_offset = 0, previous }, stack[1] }.
 *  3.11: only _PyCFrame cframe = { use_tracing (0 or 255), current_frame,
 *        previous } (the first heap frame carries is_entry).
 *
 * Tests, from strongest: 3.14's stackpointer points at the stub itself;
 * 3.12's prev_instr is f_code + co_code_adaptive; 3.12's cframes sit at the
 * same distance from their entry frame in every activation; a 3.11 cframe's
 * previous points at another cframe found on this stack. Those stubs are
 * "strong". 3.13 stubs and lone cframes rest on plausibility: zero fields,
 * owner in [3, 4], pointers that look like user addresses; 3.13 stubs become
 * strong when they agree with each other (same Py_None and instruction
 * pointer in every stub) or with a known _Py_NoneStruct address. A cframe's
 * previous is never NULL (the root one points at tstate->root_cframe).
 *
 * False positives: a stale stub left in a live frame's uninitialised
 * locals by an eval that has returned passes every test (it was real);
 * the caller should keep only stubs inside an eval frame's [SP, CFA).
 * Lone cframes (one eval activation, 3.11) are two pointer-like words and
 * are weak: ordinary spilled pointers can look the same. A spilled copy of
 * a cframe's address can look like a link to it; two links to one cframe
 * make both linking candidates weak. Stubs cut by the end of the copy are
 * not reported. */
#include "python/python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define USER_SPACE_END 0x0000800000000000ull /* x86-64 canonical user half */
#define LOWEST_MAPPING 0x10000ull /* mmap_min_addr */
#define SAME_OBJECT_SPAN (256ull << 20) /* two addresses in one DSO */
#define MAX_CANDIDATES 256
#define STACK_BEYOND_COPY (8ull << 20) /* a thread's stack: 8 MiB by default */

struct scan {
	const struct ps_py_stub_scan *in;
	const struct ps_py_offsets *off;
	struct ps_py_stub *out;
	size_t max, nr;
};

static uint64_t load64(const struct scan *s, size_t offset)
{
	uint64_t value;

	memcpy(&value, s->in->stack + offset, 8);
	return value;
}

static uint32_t load32(const struct scan *s, size_t offset)
{
	uint32_t value;

	memcpy(&value, s->in->stack + offset, 4);
	return value;
}

static uint16_t load16(const struct scan *s, size_t offset)
{
	uint16_t value;

	memcpy(&value, s->in->stack + offset, 2);
	return value;
}

static bool in_copy(const struct scan *s, uint64_t addr)
{
	return addr >= s->in->sp && addr - s->in->sp < s->in->size;
}

static bool user_pointer(uint64_t value, uint64_t align)
{
	return value >= LOWEST_MAPPING && value < USER_SPACE_END && value % align == 0;
}

/* Frames, code objects, thread states, Py_None: aligned user addresses off
 * this stack. */
static bool object_pointer(const struct scan *s, uint64_t value)
{
	return user_pointer(value, 8) && !in_copy(s, value);
}

static bool near(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < SAME_OBJECT_SPAN;
}

static void emit(struct scan *s, enum ps_py_stub_kind kind, size_t offset, uint64_t previous,
                 uint64_t code, bool strong)
{
	if (s->nr < s->max) {
		struct ps_py_stub *stub = &s->out[s->nr];

		stub->kind = kind;
		stub->offset = offset;
		stub->addr = s->in->sp + offset;
		stub->previous = previous;
		stub->code = code;
		stub->strong = strong;
	}
	s->nr++;
}

/* ---- entry frames (3.12+) -------------------------------------------- */

struct entry {
	size_t offset;
	uint64_t previous, code, instr;
	bool strong;
};

static bool owner_ok(const struct scan *s, size_t at)
{
	uint8_t owner = s->in->stack[at + s->off->frame.owner];

	return owner >= s->off->stub_owner_min && owner <= s->off->stub_owner_max;
}

/* The fields every version's entry frame shares; fills e. */
static bool entry_common(const struct scan *s, size_t at, struct entry *e)
{
	const struct ps_py_offsets *off = s->off;
	uint64_t code = load64(s, at + off->frame.code);

	if (!owner_ok(s, at) || load16(s, at + off->frame.return_offset) != 0)
		return false;
	if (off->code_tagged)
		code &= ~(uint64_t)3;
	e->offset = at;
	e->code = code;
	e->previous = load64(s, at + off->frame.previous);
	e->instr = load64(s, at + off->frame.instr);
	e->strong = false;
	/* previous is the caller's Python frame on the heap, NULL at the root */
	return (e->previous == 0 || object_pointer(s, e->previous)) && object_pointer(s, e->code);
}

static bool entry_312(const struct scan *s, size_t at, struct entry *e)
{
	uint64_t code_start;

	if (!entry_common(s, at, e) || load32(s, at + s->off->frame.stacktop) != 0)
		return false;
	/* prev_instr = _PyCode_CODE(f_code); INTERPRETER_EXIT, the next
	 * instruction, moves it by one code unit while the stub is popped */
	code_start = e->code + s->off->code.code_adaptive;
	e->strong = e->instr == code_start || e->instr == code_start + 2;
	return e->strong;
}

static bool entry_313(const struct scan *s, size_t at, struct entry *e)
{
	if (!entry_common(s, at, e) || load32(s, at + s->off->frame.stacktop) != 0)
		return false;
	/* Py_None and the trampoline instructions are both in libpython */
	if (!user_pointer(e->instr, 2) || in_copy(s, e->instr) || !near(e->instr, e->code))
		return false;
	if (s->in->none_addr) {
		if (e->code != s->in->none_addr)
			return false;
		e->strong = true;
	}
	return true;
}

static bool entry_314(const struct scan *s, size_t at, struct entry *e)
{
	uint64_t self = s->in->sp + at + s->off->frame.size;
	uint64_t stackpointer;

	if (!entry_common(s, at, e))
		return false;
	if (!user_pointer(e->instr, 2) || in_copy(s, e->instr) || !near(e->instr, e->code))
		return false;
	if (s->in->none_addr && e->code != s->in->none_addr)
		return false;
	/* stackpointer = entry.stack, right after the frame; one pushed
	 * result while INTERPRETER_EXIT runs */
	stackpointer = load64(s, at + s->off->frame.stackpointer);
	e->strong = stackpointer == self || stackpointer == self + 8;
	return e->strong;
}

/* 3.13 stubs without a known Py_None: every stub of an interpreter holds
 * the same f_executable and instr_ptr, so stubs that agree with another one
 * are strong and, when there is such a group, the stubs outside the
 * largest one are dropped. With no agreement all stay, weak. */
static size_t settle_313(struct entry *entries, size_t nr)
{
	size_t best = 0, best_count = 0, kept = 0;

	for (size_t i = 0; i < nr; i++) {
		size_t count = 0;

		for (size_t k = 0; k < nr; k++)
			count += entries[k].code == entries[i].code &&
			         entries[k].instr == entries[i].instr;
		if (count > best_count) {
			best = i;
			best_count = count;
		}
	}
	if (best_count < 2)
		return nr;
	for (size_t i = 0; i < nr; i++) {
		if (entries[i].code != entries[best].code ||
		    entries[i].instr != entries[best].instr)
			continue;
		entries[kept] = entries[i];
		entries[kept].strong = true;
		kept++;
	}
	return kept;
}

/* ---- _PyCFrame (3.11/3.12) ------------------------------------------- */

/* Real stacks hold many pointer pairs that pass cframe_plausible() (200+
 * in 16 KiB), so plausible slots are a bitmap and only candidates with more
 * evidence become a list. perf copies at most 64 KiB. */
#define MAX_SLOTS (65536 / 8)

struct cframe_work {
	uint8_t plausible[MAX_SLOTS / 8];
	size_t list[MAX_CANDIDATES]; /* offsets, ascending */
	size_t nr;
};

static bool is_plausible(const struct cframe_work *w, size_t at)
{
	return at / 8 < MAX_SLOTS && (w->plausible[at / 64] >> (at / 8 % 8) & 1);
}

static bool cframe_plausible(const struct scan *s, size_t at, const struct entry *entries,
                             size_t nr_entries)
{
	const struct ps_py_offsets *off = s->off;
	uint64_t current = load64(s, at + off->cframe.current_frame);
	uint64_t previous = load64(s, at + off->cframe.previous);
	uint64_t self = s->in->sp + at;

	if (off->cframe.use_tracing != PS_PY_NO_OFFSET) {
		uint8_t use_tracing = s->in->stack[at + off->cframe.use_tracing];

		if (use_tracing != 0 && use_tracing != 255)
			return false;
	}
	/* current_frame: a heap frame, or (3.12) the entry frame while it is
	 * being popped */
	if (in_copy(s, current)) {
		bool entry = false;

		for (size_t i = 0; i < nr_entries && !entry; i++)
			entry = current == s->in->sp + entries[i].offset;
		if (!entry)
			return false;
	} else if (!object_pointer(s, current)) {
		return false;
	}
	/* previous: an older cframe higher on this stack, or
	 * tstate->root_cframe (never NULL) */
	if (in_copy(s, previous))
		return previous > self && previous % 8 == 0;
	return object_pointer(s, previous) && previous != current;
}

static void add_candidate(struct cframe_work *w, size_t at)
{
	if (w->nr < MAX_CANDIDATES)
		w->list[w->nr++] = at;
}

/* 3.12: the cframe and the entry frame are locals of the same function,
 * so every activation holds them the same distance apart. The distance most
 * entry frames share (two at least) picks the cframes; with one activation
 * the entry frame alone marks it, and without entry frames none is kept. */
#define MAX_PAIR_DISTANCE 1024
#define NR_DISTANCES (2 * MAX_PAIR_DISTANCE / 8 + 1)

static void emit_paired_cframes(struct scan *s, const struct cframe_work *w,
                                const struct entry *entries, size_t nr_entries)
{
	uint16_t count[NR_DISTANCES] = { 0 };
	size_t best = NR_DISTANCES / 2, middle = NR_DISTANCES / 2;

	for (size_t e = 0; e < nr_entries; e++) {
		size_t at = entries[e].offset;

		for (size_t d = 0; d < NR_DISTANCES; d++)
			if (at + d * 8 >= MAX_PAIR_DISTANCE &&
			    is_plausible(w, at + d * 8 - MAX_PAIR_DISTANCE) &&
			    count[d] < UINT16_MAX)
				count[d]++;
	}
	for (size_t d = 0; d < NR_DISTANCES; d++) {
		size_t from_middle = d > middle ? d - middle : middle - d;
		size_t best_from_middle = best > middle ? best - middle : middle - best;

		if (count[d] > count[best] ||
		    (count[d] == count[best] && from_middle < best_from_middle))
			best = d;
	}
	if (count[best] < 2)
		return;
	for (size_t e = 0; e < nr_entries; e++) {
		size_t at = entries[e].offset + best * 8;

		if (at < MAX_PAIR_DISTANCE || !is_plausible(w, at - MAX_PAIR_DISTANCE))
			continue;
		at -= MAX_PAIR_DISTANCE;
		emit(s, PS_PY_STUB_CFRAME, at, load64(s, at + s->off->cframe.previous),
		     load64(s, at + s->off->cframe.current_frame), true);
	}
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Which of values[] (sorted) are aligned words of the copy; marks found[]. */
static void find_on_stack(const struct scan *s, const uint64_t *values, size_t nr, bool *found)
{
	for (size_t at = (size_t)((8 - s->in->sp % 8) % 8); at + 8 <= s->in->size; at += 8) {
		uint64_t word = load64(s, at);
		size_t lo = 0, hi = nr;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (values[mid] < word)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nr && values[lo] == word; lo++)
			found[lo] = true;
	}
}

/* The thread state behind a chain's end: previous = &tstate->root_cframe.
 * A known root (the end of a chain seen in an earlier sample) must match;
 * else the thread state must be on the stack, as the eval loop's callers
 * spill it (ordinary pointer pairs rarely pass that). A chain cut by the
 * end of the copy (previous just above it) ends well too. */
static void check_ends(const struct scan *s, const uint64_t *previous, size_t nr, bool *ok)
{
	uint64_t copy_end = s->in->sp + s->in->size, root = s->off->tstate.root_cframe;
	uint64_t tstates[MAX_CANDIDATES];
	bool found[MAX_CANDIDATES] = { false };
	size_t nr_tstates = 0;

	for (size_t i = 0; i < nr; i++) {
		ok[i] = previous[i] >= copy_end && previous[i] - copy_end < STACK_BEYOND_COPY;
		if (s->in->root_cframe)
			ok[i] |= previous[i] == s->in->root_cframe;
		else if (!ok[i] && previous[i] > root)
			tstates[nr_tstates++] = previous[i] - root;
	}
	if (!nr_tstates)
		return;
	qsort(tstates, nr_tstates, sizeof(tstates[0]), compare_u64);
	find_on_stack(s, tstates, nr_tstates, found);
	for (size_t i = 0; i < nr; i++) {
		uint64_t tstate = previous[i] - root;
		size_t lo = 0, hi = nr_tstates;

		if (ok[i] || s->in->root_cframe || previous[i] <= root)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (tstates[mid] < tstate)
				lo = mid + 1;
			else
				hi = mid;
		}
		ok[i] = lo < nr_tstates && found[lo];
	}
}

/* One activation: no candidate links to another. Candidates whose end is
 * the thread's (check_ends) are kept: strong with a known root, else weak.
 * Overlapping candidates: the first wins. */
static void emit_lone_cframes(struct scan *s, const struct cframe_work *w)
{
	size_t offsets[MAX_CANDIDATES], nr = 0, last_end = 0;
	uint64_t previous[MAX_CANDIDATES] = { 0 };
	bool ok[MAX_CANDIDATES];

	for (size_t at = (size_t)((8 - s->in->sp % 8) % 8);
	     at + 8 <= s->in->size && at / 8 < MAX_SLOTS && nr < MAX_CANDIDATES; at += 8) {
		if (!is_plausible(w, at) || in_copy(s, load64(s, at + s->off->cframe.previous)))
			continue;
		offsets[nr] = at;
		previous[nr++] = load64(s, at + s->off->cframe.previous);
	}
	check_ends(s, previous, nr, ok);
	for (size_t i = 0; i < nr; i++) {
		if (!ok[i] || offsets[i] < last_end)
			continue;
		emit(s, PS_PY_STUB_CFRAME, offsets[i], previous[i],
		     load64(s, offsets[i] + s->off->cframe.current_frame), s->in->root_cframe != 0);
		last_end = offsets[i] + s->off->cframe.size;
	}
}

/* 3.11: a thread has one chain of cframes, each previous pointing at the
 * next one up the stack. Links between candidates form paths that only go
 * up; the longest is the chain (spilled addresses of locals make shorter
 * look-alike paths), preferring one that ends at the thread (check_ends).
 * Where another path as long competes, the candidates not on both are
 * weak. */
static void emit_chained_cframes(struct scan *s, const struct cframe_work *w)
{
	const struct ps_py_offsets *off = s->off;
	const size_t *list = w->list;
	size_t nr = w->nr, best = SIZE_MAX;
	size_t target[MAX_CANDIDATES] = { 0 }, length[MAX_CANDIDATES] = { 0 };
	size_t end[MAX_CANDIDATES] = { 0 };
	uint64_t end_previous[MAX_CANDIDATES] = { 0 };
	bool on_path[MAX_CANDIDATES] = { false }, sure[MAX_CANDIDATES] = { false };
	bool end_ok[MAX_CANDIDATES] = { false };

	for (size_t i = nr; i-- > 0;) {
		uint64_t previous = load64(s, list[i] + off->cframe.previous);

		target[i] = SIZE_MAX;
		length[i] = 1;
		end[i] = i;
		for (size_t k = i + 1; k < nr && target[i] == SIZE_MAX; k++)
			if (previous == s->in->sp + list[k]) {
				target[i] = k;
				length[i] = length[k] + 1;
				end[i] = end[k];
			}
	}
	for (size_t i = 0; i < nr; i++)
		end_previous[i] = load64(s, list[end[i]] + off->cframe.previous);
	check_ends(s, end_previous, nr, end_ok);
	for (size_t i = 0; i < nr; i++) {
		if (length[i] < 2 || (s->in->root_cframe && !end_ok[i]))
			continue;
		if (best == SIZE_MAX || length[i] > length[best] ||
		    (length[i] == length[best] && end_ok[i] && !end_ok[best]))
			best = i;
	}
	if (best == SIZE_MAX)
		return;
	for (size_t i = best; i != SIZE_MAX; i = target[i])
		on_path[i] = sure[i] = true;
	/* a competing path as long: the chain is sure from where they join */
	for (size_t i = 0; i < nr; i++) {
		size_t join = i;

		if (i == best || length[i] != length[best] || (end_ok[best] && !end_ok[i]))
			continue;
		while (join != SIZE_MAX && !on_path[join])
			join = target[join];
		for (size_t k = best; k != join; k = target[k])
			sure[k] = false;
	}
	for (size_t i = best; i != SIZE_MAX; i = target[i])
		emit(s, PS_PY_STUB_CFRAME, list[i], load64(s, list[i] + off->cframe.previous),
		     load64(s, list[i] + off->cframe.current_frame), sure[i]);
}

/* Fills w: the plausible bitmap, then the candidates worth a closer look:
 * 3.12 those near an entry frame, 3.11 those linked to another. */
static void collect_cframes(const struct scan *s, const struct entry *entries, size_t nr_entries,
                            struct cframe_work *w)
{
	const struct ps_py_offsets *off = s->off;
	size_t first = (size_t)((8 - s->in->sp % 8) % 8), skip_until = 0, e = 0;
	uint8_t linked[MAX_SLOTS / 8] = { 0 };

	memset(w, 0, sizeof(*w));
	for (size_t at = first; at + off->cframe.size <= s->in->size && at / 8 < MAX_SLOTS;
	     at += 8) {
		/* nothing inside an entry frame is a cframe */
		while (e < nr_entries && entries[e].offset + off->stub_size <= at)
			e++;
		skip_until = e < nr_entries && entries[e].offset <= at
		                     ? entries[e].offset + off->stub_size
		                     : skip_until;
		if (at >= skip_until && cframe_plausible(s, at, entries, nr_entries))
			w->plausible[at / 64] |= (uint8_t)(1u << (at / 8 % 8));
	}
	if (off->stub_owner_min)
		return;
	for (size_t at = first; at / 8 < MAX_SLOTS && at + 8 <= s->in->size; at += 8) {
		uint64_t previous;

		if (!is_plausible(w, at))
			continue;
		previous = load64(s, at + off->cframe.previous);
		if (!in_copy(s, previous) || !is_plausible(w, previous - s->in->sp))
			continue;
		linked[at / 64] |= (uint8_t)(1u << (at / 8 % 8));
		linked[(previous - s->in->sp) / 64] |=
		        (uint8_t)(1u << ((previous - s->in->sp) / 8 % 8));
	}
	for (size_t at = first; at / 8 < MAX_SLOTS && at + 8 <= s->in->size; at += 8)
		if (linked[at / 64] >> (at / 8 % 8) & 1)
			add_candidate(w, at);
}

/* ---- the scan -------------------------------------------------------- */

static bool find_entry(const struct scan *s, size_t at, struct entry *e)
{
	const struct ps_py_offsets *off = s->off;

	if (!off->stub_owner_min || at + off->stub_size > s->in->size)
		return false;
	if (off->frame.stackpointer != PS_PY_NO_OFFSET)
		return entry_314(s, at, e);
	if (off->cframe.size)
		return entry_312(s, at, e);
	return entry_313(s, at, e);
}

/* Both lists are in address order: merges them into out, leaf first. */
static void emit_all(struct scan *s, const struct entry *entries, size_t nr_entries,
                     const struct ps_py_stub *cframes, size_t nr_cframes)
{
	size_t e = 0, c = 0;

	while (e < nr_entries || c < nr_cframes) {
		if (c == nr_cframes || (e < nr_entries && entries[e].offset < cframes[c].offset)) {
			emit(s, PS_PY_STUB_ENTRY_FRAME, entries[e].offset, entries[e].previous,
			     entries[e].code, entries[e].strong);
			e++;
		} else {
			if (s->nr < s->max)
				s->out[s->nr] = cframes[c];
			s->nr++;
			c++;
		}
	}
}

int ps_py_scan_stubs(const struct ps_py_stub_scan *in, struct ps_py_stub *out, size_t max)
{
	struct scan s = { in, in ? in->offsets : NULL, out, max, 0 };
	struct scan cframe_scan;
	struct entry entries[MAX_CANDIDATES];
	struct ps_py_stub cframes[MAX_CANDIDATES];
	struct cframe_work work;
	size_t nr_entries = 0;
	const struct ps_py_offsets *off = s.off;

	if (!in || !off || (!in->stack && in->size) || (max && !out))
		return -EINVAL;
	if (off->frame_is_object || in->size < 8)
		return 0;
	for (size_t at = (size_t)((8 - in->sp % 8) % 8); at + 8 <= in->size; at += 8)
		if (nr_entries < MAX_CANDIDATES && find_entry(&s, at, &entries[nr_entries]))
			nr_entries++;
	if (off->stub_owner_min && !off->code_tagged && !off->cframe.size && !in->none_addr)
		nr_entries = settle_313(entries, nr_entries);

	cframe_scan = s;
	cframe_scan.out = cframes;
	cframe_scan.max = MAX_CANDIDATES;
	cframe_scan.nr = 0;
	if (off->cframe.size) {
		collect_cframes(&s, entries, nr_entries, &work);
		if (off->stub_owner_min) /* 3.12: entry frames mark the activations */
			emit_paired_cframes(&cframe_scan, &work, entries, nr_entries);
		else if (work.nr)
			emit_chained_cframes(&cframe_scan, &work);
		else
			emit_lone_cframes(&cframe_scan, &work);
	}
	emit_all(&s, entries, nr_entries, cframes,
	         cframe_scan.nr < MAX_CANDIDATES ? cframe_scan.nr : MAX_CANDIDATES);
	return (int)s.nr;
}
