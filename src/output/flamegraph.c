/* The call tree behind `pystitch flamegraph`: every sample's stack is
 * walked from the root and each frame found among its parent's children
 * in one hash table keyed by (parent, name, kind). Memory grows with the
 * number of unique call paths; a path seen before costs lookups and no
 * allocation. flamegraph_svg.c draws the tree. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "base/hash_slots.h"
#include "base/opts.h"
#include "output/flamegraph_priv.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A node is referred to by a 32-bit index: the table stops growing well
 * before that, at a size no flame graph could show anyway. */
#define FLAME_MAX_NODES (UINT32_MAX / 4)

int ps_flamegraph_open(const struct ps_flamegraph_opts *opts, struct ps_flamegraph **out)
{
	struct ps_flamegraph *fg = calloc(1, sizeof(*fg));

	*out = NULL;
	if (!fg)
		return -ENOMEM;
	if (ps_opts_copy(&fg->opts, sizeof(fg->opts), opts)) {
		free(fg);
		return -EINVAL;
	}
	fg->nr_slots = 1024;
	fg->slots = calloc(fg->nr_slots, sizeof(*fg->slots));
	if (!fg->slots ||
	    !ps_array_reserve((void **)&fg->nodes, &fg->nodes_cap, 1, sizeof(*fg->nodes), 1024)) {
		free(fg->slots);
		free(fg->nodes);
		free(fg);
		return -ENOMEM;
	}
	fg->nodes[0] = (struct flame_node){ .name = "all", .name_len = 3, .kind = PS_FLAME_ROOT };
	fg->nr_nodes = 1;
	*out = fg;
	return 0;
}

void ps_flamegraph_close(struct ps_flamegraph *fg)
{
	if (!fg)
		return;
	free(fg->nodes);
	free(fg->slots);
	free(fg->children);
	free(fg->first_child);
	ps_arena_free(&fg->names);
	ps_strbuf_release(&fg->label);
	free(fg);
}

/* The interpreter's own file: libpython3.12.so.1.0, or a statically
 * linked python3.12 / python3 / python executable. */
static bool is_interpreter_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "libpython", 9) == 0)
		return true;
	if (strncmp(base, "python", 6) != 0)
		return false;
	for (base += 6; *base; base++)
		if ((*base < '0' || *base > '9') && *base != '.')
			return false;
	return true;
}

enum ps_flame_kind ps_flame_frame_kind(const struct ps_frame *frame)
{
	if (frame->truncated)
		return PS_FLAME_OTHER;
	if (frame->python || frame->python_unnamed)
		return PS_FLAME_PYTHON;
	if (frame->kernel)
		return PS_FLAME_KERNEL;
	if (frame->dso && is_interpreter_file(frame->dso))
		return PS_FLAME_INTERPRETER;
	if (!frame->sym)
		return PS_FLAME_OTHER;
	return PS_FLAME_NATIVE;
}

/* The child of parent with this name and kind, made when new; 0 when out
 * of memory (node 0 is the root, never anyone's child). */
static uint32_t child(struct ps_flamegraph *fg, uint32_t parent, unsigned kind, const char *name,
                      size_t len)
{
	uint64_t hash = ps_hash_bytes(name, len, (uint64_t)parent << 8 | kind);
	size_t mask = fg->nr_slots - 1, slot;
	struct flame_node *node;
	char *copy;

	for (slot = (size_t)hash & mask; fg->slots[slot]; slot = (slot + 1) & mask) {
		node = &fg->nodes[fg->slots[slot]];
		if (node->hash == hash && node->parent == parent && node->kind == kind &&
		    node->name_len == len && memcmp(node->name, name, len) == 0)
			return fg->slots[slot];
	}
	/* at most half full, for short probes */
	if ((size_t)fg->nr_nodes * 2 >= fg->nr_slots) {
		if (!ps_hash_slots_grow(&fg->slots, &fg->nr_slots, 1024, fg->nodes,
		                        sizeof(*fg->nodes), offsetof(struct flame_node, hash), 1,
		                        fg->nr_nodes, 0))
			return 0;
		mask = fg->nr_slots - 1;
		for (slot = (size_t)hash & mask; fg->slots[slot]; slot = (slot + 1) & mask)
			;
	}
	if (fg->nr_nodes >= FLAME_MAX_NODES || len >= UINT32_MAX ||
	    !ps_array_reserve((void **)&fg->nodes, &fg->nodes_cap, (size_t)fg->nr_nodes + 1,
	                      sizeof(*fg->nodes), 1024))
		return 0;
	copy = ps_arena_alloc(&fg->names, len + 1);
	if (!copy)
		return 0;
	memcpy(copy, name, len);
	copy[len] = 0;
	node = &fg->nodes[fg->nr_nodes];
	*node = (struct flame_node){ .name = copy,
		                     .name_len = (uint32_t)len,
		                     .hash = hash,
		                     .parent = parent,
		                     .kind = kind };
	fg->slots[slot] = fg->nr_nodes;
	fg->finished = false;
	return fg->nr_nodes++;
}

/* "comm", "comm-PID" or "comm-PID/TID", as collapse starts its lines */
static void build_label(struct ps_flamegraph *fg, const struct ps_stack *stack)
{
	struct ps_strbuf *label = &fg->label;

	ps_strbuf_reset(label);
	ps_strbuf_addstr(label, stack->comm ? stack->comm : "[unknown]");
	if (fg->opts.per != PS_COLLAPSE_PER_COMM) {
		ps_strbuf_addch(label, '-');
		ps_strbuf_add_int(label, (int32_t)stack->event->u.sample.pid, 0, false);
	}
	if (fg->opts.per == PS_COLLAPSE_PER_TID) {
		ps_strbuf_addch(label, '/');
		ps_strbuf_add_int(label, (int32_t)stack->event->u.sample.tid, 0, false);
	}
}

int ps_flamegraph_add(struct ps_flamegraph *fg, const struct ps_stack *stack)
{
	uint64_t weight = fg->opts.period ? stack->event->u.sample.period : 1;
	size_t nr = stack->nr_frames;
	uint32_t node = 0;

	/* without a call chain, frames[0] is the sampled IP and the rest is
	 * not printed by script either (as collapse) */
	if (!stack->has_callchain && nr > 1)
		nr = 1;
	if (fg->opts.per != PS_COLLAPSE_PER_NONE) {
		build_label(fg, stack);
		if (ps_strbuf_failed(&fg->label))
			return -ENOMEM;
		node = child(fg, node, PS_FLAME_PROCESS, fg->label.buf, fg->label.len);
		if (!node)
			return -ENOMEM;
	} else if (!nr) {
		/* collapse counts an empty stack as "[unknown]": so does the tree */
		node = child(fg, node, PS_FLAME_OTHER, "[unknown]", 9);
		if (!node)
			return -ENOMEM;
	}
	for (size_t i = nr; i-- > 0;) {
		const struct ps_frame *frame = &stack->frames[i];
		const char *name = frame->sym ? frame->sym : "[unknown]";
		size_t len = strlen(name);
		unsigned kind =
		        ps_flame_frame_kind(frame) | (frame->inlined ? PS_FLAME_INLINED : 0);

		/* a Python frame's line: "py::qualname:file:line" */
		if (fg->opts.lines && frame->python && frame->line) {
			ps_strbuf_reset(&fg->label);
			ps_strbuf_add(&fg->label, name, len);
			ps_strbuf_addch(&fg->label, ':');
			ps_strbuf_add_int(&fg->label, (int32_t)frame->line, 0, false);
			if (ps_strbuf_failed(&fg->label))
				return -ENOMEM;
			name = fg->label.buf;
			len = fg->label.len;
		}
		node = child(fg, node, kind, name, len);
		if (!node)
			return -ENOMEM;
	}
	/* saturating: a hostile capture's periods must not wrap a total */
	fg->nodes[node].self = sat_add(fg->nodes[node].self, weight);
	/* totals are summed up the tree in ps_flamegraph_finish(), so a
	 * sample costs one addition here whatever its depth */
	fg->finished = false;
	return 0;
}

/* qsort has no context argument: the names travel with the indexes */
struct sort_item {
	const struct flame_node *node;
	uint32_t index;
};

static int compare_children(const void *left, const void *right)
{
	const struct flame_node *a = ((const struct sort_item *)left)->node;
	const struct flame_node *b = ((const struct sort_item *)right)->node;
	int diff;

	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	diff = strcmp(a->name, b->name);
	if (diff)
		return diff;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

int ps_flamegraph_finish(struct ps_flamegraph *fg)
{
	size_t nr = fg->nr_nodes;
	struct sort_item *items;
	uint32_t *children, *first_child;

	if (fg->finished)
		return 0;
	items = calloc(nr, sizeof(*items));
	children = calloc(nr, sizeof(*children));
	first_child = calloc(nr + 1, sizeof(*first_child));
	if (!items || !children || !first_child) {
		free(items);
		free(children);
		free(first_child);
		return -ENOMEM;
	}
	/* children are made after their parent, so walking the nodes
	 * backwards adds every subtree's total to its parent once */
	for (size_t i = 0; i < nr; i++)
		fg->nodes[i].total = fg->nodes[i].self;
	for (size_t i = nr; i-- > 1;)
		fg->nodes[fg->nodes[i].parent].total =
		        sat_add(fg->nodes[fg->nodes[i].parent].total, fg->nodes[i].total);
	/* children grouped by parent and sorted by name (as flamegraph.pl
	 * sorts its input), so the picture does not depend on sample order */
	for (size_t i = 1; i < nr; i++)
		items[i - 1] = (struct sort_item){ .node = &fg->nodes[i], .index = (uint32_t)i };
	if (nr > 1)
		qsort(items, nr - 1, sizeof(*items), compare_children);
	for (size_t i = 0; i + 1 < nr; i++) {
		children[i] = items[i].index;
		first_child[items[i].node->parent + 1]++;
	}
	for (size_t i = 0; i < nr; i++)
		first_child[i + 1] += first_child[i];
	free(items);
	free(fg->children);
	free(fg->first_child);
	fg->children = children;
	fg->first_child = first_child;
	fg->finished = true;
	return 0;
}

uint64_t ps_flamegraph_total(const struct ps_flamegraph *fg)
{
	uint64_t total = 0;

	for (size_t i = 0; i < fg->nr_nodes; i++)
		total = sat_add(total, fg->nodes[i].self);
	return total;
}

size_t ps_flamegraph_nr_nodes(const struct ps_flamegraph *fg)
{
	return fg->nr_nodes;
}

uint64_t ps_flamegraph_path_weight(struct ps_flamegraph *fg, const char *const *path, size_t nr,
                                   bool self)
{
	uint64_t weight = 0;

	if (ps_flamegraph_finish(fg))
		return 0;
	/* every node whose names from the root match path, whatever the
	 * kinds: there can be several */
	for (size_t i = 1; i < fg->nr_nodes; i++) {
		uint32_t node = (uint32_t)i;
		size_t depth = nr;
		while (depth > 0 && node && strcmp(fg->nodes[node].name, path[depth - 1]) == 0) {
			node = fg->nodes[node].parent;
			depth--;
		}
		if (depth == 0 && node == 0)
			weight += self ? fg->nodes[i].self : fg->nodes[i].total;
	}
	return weight;
}
