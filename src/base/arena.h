/* A bump allocator for data that lives as long as its owner (strings and
 * arrays decoded from headers). Freed all at once. */
#ifndef PS_BASE_ARENA_H
#define PS_BASE_ARENA_H

#include <stddef.h>

struct ps_arena_block;

struct ps_arena {
	struct ps_arena_block *head;
	size_t total; /* bytes handed out, for bounds */
};

void *ps_arena_alloc(struct ps_arena *arena, size_t size);
char *ps_arena_strndup(struct ps_arena *arena, const char *s, size_t max);
void ps_arena_free(struct ps_arena *arena);

#endif /* PS_BASE_ARENA_H */
