/* Folded stacks for flame graphs (`pystitch collapse`): each sample's stack
 * becomes one line of text, root first, and equal lines are counted in a
 * hash table. Memory grows with the number of unique stacks only: a
 * sample whose stack was seen before costs a lookup and no allocation. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/hash.h"
#include "base/hash_slots.h"
#include "base/opts.h"
#include "output/output.h"
#include "output/sink.h"

struct collapse_entry {
	uint64_t hash;
	const char *text; /* in the arena; not NUL-terminated */
	size_t len;
	uint64_t weight;
};

struct ps_collapse {
	struct ps_collapse_opts opts;
	struct collapse_entry *entries; /* in order of first appearance */
	size_t nr_entries, entries_cap;
	/* open addressing: entry index + 1, 0 for an empty slot */
	uint32_t *slots;
	size_t nr_slots; /* a power of two */
	struct ps_arena texts;
	struct ps_strbuf key; /* the stack being counted, reused */
	size_t *order; /* entry indexes, sorted by ps_collapse_sort() */
};

int ps_collapse_open(const struct ps_collapse_opts *opts, struct ps_collapse **out)
{
	struct ps_collapse *collapse = calloc(1, sizeof(*collapse));

	*out = NULL;
	if (!collapse)
		return -ENOMEM;
	if (ps_opts_copy(&collapse->opts, sizeof(collapse->opts), opts)) {
		free(collapse);
		return -EINVAL;
	}
	collapse->nr_slots = 1024;
	collapse->slots = calloc(collapse->nr_slots, sizeof(*collapse->slots));
	if (!collapse->slots) {
		free(collapse);
		return -ENOMEM;
	}
	*out = collapse;
	return 0;
}

void ps_collapse_close(struct ps_collapse *collapse)
{
	if (!collapse)
		return;
	free(collapse->entries);
	free(collapse->slots);
	free(collapse->order);
	ps_arena_free(&collapse->texts);
	ps_strbuf_release(&collapse->key);
	free(collapse);
}

/* ';' separates frames and ' ' the count from the stack: a name keeps
 * neither (';' becomes ':' as in stackcollapse-perf.pl, and the process
 * name's spaces become '_' as there). */
static void add_name(struct ps_strbuf *key, const char *name, bool process_name)
{
	size_t start = key->len;

	ps_strbuf_addstr(key, name);
	if (ps_strbuf_failed(key))
		return;
	for (char *c = key->buf + start; *c; c++) {
		if (*c == ';')
			*c = ':';
		else if (*c == ' ' && process_name)
			*c = '_';
	}
}

/* The frame's DSO as perf script prints it, and what stackcollapse-perf.pl
 * reads from there. */
static const char *printed_dso(const struct ps_frame *f)
{
	return f->inlined ? "inlined" : f->dso ? f->dso : "[unknown]";
}

/* "/tmp/perf-PID.map" anywhere in dso: where JIT frames come from */
static bool is_perf_map(const char *dso)
{
	for (const char *p = strstr(dso, "/tmp/perf-"); p; p = strstr(p + 1, "/tmp/perf-")) {
		const char *digits = p + 10, *end = digits;

		while (*end >= '0' && *end <= '9')
			end++;
		if (end > digits && strncmp(end, ".map", 4) == 0)
			return true;
	}
	return false;
}

/* stackcollapse-perf.pl --all's mark for a frame, from its DSO: "_[k]"
 * for a DSO in brackets or a vmlinux (but not [unknown]), else "_[j]" for
 * a perf map unless the name has one already; NULL for none. Inlined
 * frames print "(inlined)" in place of the DSO, so they get neither. */
static const char *annotation(const struct ps_frame *f, const char *name)
{
	const char *dso = printed_dso(f);
	size_t len = strlen(dso);

	if ((dso[0] == '[' || (len >= 7 && strcmp(dso + len - 7, "vmlinux") == 0)) &&
	    !strstr(dso, "unknown"))
		return "_[k]";
	if (is_perf_map(dso) && !strstr(name, "_[j]"))
		return "_[j]";
	return NULL;
}

static void build_key(struct ps_collapse *collapse, const struct ps_stack *stack)
{
	struct ps_strbuf *key = &collapse->key;
	size_t nr = stack->nr_frames;

	ps_strbuf_reset(key);
	if (collapse->opts.per != PS_COLLAPSE_PER_NONE) {
		add_name(key, stack->comm ? stack->comm : "[unknown]", true);
		if (collapse->opts.per != PS_COLLAPSE_PER_COMM) {
			ps_strbuf_addch(key, '-');
			ps_strbuf_add_int(key, (int32_t)stack->event->u.sample.pid, 0, false);
		}
		if (collapse->opts.per == PS_COLLAPSE_PER_TID) {
			ps_strbuf_addch(key, '/');
			ps_strbuf_add_int(key, (int32_t)stack->event->u.sample.tid, 0, false);
		}
	}
	/* without a call chain, frames[0] is the sampled IP and the rest is
	 * not printed by script either */
	if (!stack->has_callchain && nr > 1)
		nr = 1;
	for (size_t i = nr; i-- > 0;) {
		const struct ps_frame *f = &stack->frames[i];
		if (key->len)
			ps_strbuf_addch(key, ';');
		const char *name = f->sym ? f->sym : "[unknown]";
		const char *mark = collapse->opts.annotate ? annotation(f, name) : NULL;

		add_name(key, name, false);
		if (collapse->opts.lines && f->python && f->line) {
			ps_strbuf_addch(key, ':');
			ps_strbuf_add_int(key, (int32_t)f->line, 0, false);
		}
		if (mark)
			ps_strbuf_add(key, mark, 4);
	}
	if (!key->len)
		ps_strbuf_addstr(key, "[unknown]");
}

int ps_collapse_add(struct ps_collapse *collapse, const struct ps_stack *stack)
{
	struct ps_strbuf *key = &collapse->key;
	uint64_t weight = collapse->opts.period ? stack->event->u.sample.period : 1;
	struct collapse_entry *entry;
	size_t mask = collapse->nr_slots - 1, slot;
	uint64_t hash;
	char *text;

	build_key(collapse, stack);
	if (ps_strbuf_failed(key))
		return -ENOMEM;
	hash = ps_hash_bytes(key->buf, key->len, 0);
	for (slot = (size_t)hash & mask; collapse->slots[slot]; slot = (slot + 1) & mask) {
		entry = &collapse->entries[collapse->slots[slot] - 1];
		if (entry->hash == hash && entry->len == key->len &&
		    memcmp(entry->text, key->buf, key->len) == 0) {
			entry->weight += weight;
			return 0;
		}
	}
	/* a new stack; the table stays at most half full, for short probes */
	if ((collapse->nr_entries + 1) * 2 > collapse->nr_slots) {
		if (!ps_hash_slots_grow(&collapse->slots, &collapse->nr_slots, 1024,
		                        collapse->entries, sizeof(*collapse->entries),
		                        offsetof(struct collapse_entry, hash), 0,
		                        collapse->nr_entries, 1))
			return -ENOMEM;
		mask = collapse->nr_slots - 1;
		for (slot = (size_t)hash & mask; collapse->slots[slot]; slot = (slot + 1) & mask)
			;
	}
	if (collapse->nr_entries >= UINT32_MAX - 1 ||
	    !ps_array_reserve((void **)&collapse->entries, &collapse->entries_cap,
	                      collapse->nr_entries + 1, sizeof(*collapse->entries), 1024))
		return -ENOMEM;
	text = ps_arena_alloc(&collapse->texts, key->len);
	if (!text)
		return -ENOMEM;
	memcpy(text, key->buf, key->len);
	entry = &collapse->entries[collapse->nr_entries++];
	*entry = (struct collapse_entry){
		.hash = hash, .text = text, .len = key->len, .weight = weight
	};
	collapse->slots[slot] = (uint32_t)collapse->nr_entries;
	return 0;
}

/* The byte at pos of an entry's line without its newline ("text weight"),
 * or -1 past its end; digits holds the weight in decimal. */
static int line_byte(const struct collapse_entry *entry, const char *digits, size_t pos)
{
	if (pos < entry->len)
		return (unsigned char)entry->text[pos];
	if (pos == entry->len)
		return ' ';
	pos -= entry->len + 1;
	return digits[pos] ? (unsigned char)digits[pos] : -1;
}

static void format_weight(char *digits, uint64_t weight)
{
	char reversed[24];
	size_t n = 0;

	do
		reversed[n++] = (char)('0' + weight % 10);
	while (weight /= 10);
	for (size_t i = 0; i < n; i++)
		digits[i] = reversed[n - 1 - i];
	digits[n] = 0;
}

/* qsort has no context argument: the entries travel with the indexes */
struct sort_item {
	const struct collapse_entry *entry;
	size_t index;
};

static int compare_lines(const void *left, const void *right)
{
	const struct collapse_entry *a = ((const struct sort_item *)left)->entry;
	const struct collapse_entry *b = ((const struct sort_item *)right)->entry;
	size_t common = a->len < b->len ? a->len : b->len;
	char digits_a[24], digits_b[24];
	int diff = memcmp(a->text, b->text, common);

	if (diff)
		return diff;
	/* one stack is a prefix of the other: the rest of the lines decides,
	 * as sort(1) compares them, the weights included */
	format_weight(digits_a, a->weight);
	format_weight(digits_b, b->weight);
	for (size_t pos = common;; pos++) {
		int byte_a = line_byte(a, digits_a, pos), byte_b = line_byte(b, digits_b, pos);
		if (byte_a != byte_b)
			return byte_a < byte_b ? -1 : 1;
		if (byte_a < 0)
			return 0;
	}
}

/* Sort the lines as `LC_ALL=C sort` sorts the output: how many there are,
 * or -ENOMEM. */
static int64_t sort_lines(struct ps_collapse *collapse)
{
	size_t nr = collapse->nr_entries;
	struct sort_item *items;

	free(collapse->order);
	collapse->order = NULL;
	if (!nr)
		return 0;
	items = calloc(nr, sizeof(*items));
	collapse->order = calloc(nr, sizeof(*collapse->order));
	if (!items || !collapse->order) {
		free(items);
		free(collapse->order);
		collapse->order = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++)
		items[i] = (struct sort_item){ .entry = &collapse->entries[i], .index = i };
	qsort(items, nr, sizeof(*items), compare_lines);
	for (size_t i = 0; i < nr; i++)
		collapse->order[i] = items[i].index;
	free(items);
	return (int64_t)nr;
}

int64_t ps_collapse_write(struct ps_collapse *collapse, ps_write_fn write, void *ctx)
{
	int64_t nr_lines = sort_lines(collapse);
	struct ps_sink sink;
	int err = 0;

	if (nr_lines < 0)
		return nr_lines;
	ps_sink_init(&sink, write, ctx);
	for (int64_t i = 0; i < nr_lines && !err; i++) {
		const struct collapse_entry *entry = &collapse->entries[collapse->order[i]];

		ps_strbuf_add(&sink.text, entry->text, entry->len);
		ps_strbuf_addch(&sink.text, ' ');
		ps_strbuf_add_uint(&sink.text, entry->weight, 0, false);
		ps_strbuf_addch(&sink.text, '\n');
		err = ps_sink_maybe_drain(&sink);
	}
	if (!err)
		err = ps_sink_drain(&sink);
	ps_sink_release(&sink);
	return err ? err : nr_lines;
}
