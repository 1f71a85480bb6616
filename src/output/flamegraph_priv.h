/* What flamegraph.c (the call tree) and flamegraph_svg.c (the drawing)
 * share; private to src/output. */
#ifndef PS_OUTPUT_FLAMEGRAPH_PRIV_H
#define PS_OUTPUT_FLAMEGRAPH_PRIV_H

#include "base/arena.h"
#include "output/output.h"

struct flame_node {
	const char *name; /* in the arena, NUL-terminated */
	uint64_t hash;
	uint64_t self; /* weight of the samples whose stack ends here */
	uint64_t total; /* self plus the children's totals (after finish) */
	uint32_t parent; /* node index; the root (0) is its own */
	uint32_t name_len;
	unsigned kind; /* enum ps_flame_kind, maybe | PS_FLAME_INLINED */
};

struct ps_flamegraph {
	struct ps_flamegraph_opts opts;
	struct flame_node *nodes; /* [0] is the root; parents before children */
	uint32_t nr_nodes;
	size_t nodes_cap;
	/* open addressing: node index, 0 for an empty slot */
	uint32_t *slots;
	size_t nr_slots; /* a power of two */
	struct ps_arena names;
	struct ps_strbuf label; /* the process label being looked up, reused */
	/* after ps_flamegraph_finish(): the children of node n, sorted by
	 * name, are children[first_child[n] .. first_child[n + 1]) */
	uint32_t *children, *first_child;
	bool finished;
};

/* flamegraph_script.c: the SVG's JavaScript */
extern const char ps_flamegraph_script[];

#endif /* PS_OUTPUT_FLAMEGRAPH_PRIV_H */
