/* Bump allocation in chunks, released together (see arena.h). */
#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ps_arena_block {
	struct ps_arena_block *next;
	size_t size, used;
	max_align_t data[];
};

#define PS_ARENA_BLOCK 65536

/* size bytes, not cleared */
static void *arena_take(struct ps_arena *arena, size_t size)
{
	struct ps_arena_block *b = arena->head;
	size_t aligned = (size + 15) & ~(size_t)15;

	if (size == 0)
		aligned = 16;
	if (aligned < size)
		return NULL;
	if (!b || b->size - b->used < aligned) {
		size_t cap = aligned > PS_ARENA_BLOCK ? aligned : PS_ARENA_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->size = cap;
		b->used = 0;
		b->next = arena->head;
		arena->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += aligned;
	arena->total += aligned;
	return p;
}

void *ps_arena_alloc(struct ps_arena *arena, size_t size)
{
	void *p = arena_take(arena, size);

	if (p)
		memset(p, 0, size);
	return p;
}

char *ps_arena_strndup(struct ps_arena *arena, const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *d = arena_take(arena, n + 1); /* every byte is written below */
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void ps_arena_free(struct ps_arena *arena)
{
	struct ps_arena_block *b = arena->head;
	while (b) {
		struct ps_arena_block *next = b->next;
		free(b);
		b = next;
	}
	arena->head = NULL;
	arena->total = 0;
}
