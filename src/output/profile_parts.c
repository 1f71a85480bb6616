/* What the profile writers share (profile_parts_priv.h): interning tables
 * (open addressing over the entries' hashes, at most half full, keys
 * copied once into the owner's arena) and the parts of frame texts. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "base/hash_slots.h"
#include "output/profile_parts_priv.h"

void ps_intern_release(struct intern *table)
{
	free(table->entries);
	free(table->slots);
	*table = (struct intern){ 0 };
}

int64_t ps_intern_add(struct intern *table, struct ps_arena *arena, const void *key, size_t len)
{
	uint64_t hash = ps_hash_bytes(key, len, 0);
	size_t mask, slot;
	char *copy;

	if ((table->nr + 1) * 2 > table->nr_slots &&
	    !ps_hash_slots_grow(&table->slots, &table->nr_slots, 256, table->entries,
	                        sizeof(*table->entries), offsetof(struct intern_entry, hash), 0,
	                        table->nr, 1))
		return -ENOMEM;
	mask = table->nr_slots - 1;
	for (slot = (size_t)hash & mask; table->slots[slot]; slot = (slot + 1) & mask) {
		const struct intern_entry *entry = &table->entries[table->slots[slot] - 1];
		if (entry->hash == hash && entry->len == len &&
		    (len == 0 || memcmp(entry->key, key, len) == 0))
			return table->slots[slot] - 1;
	}
	if (table->nr >= UINT32_MAX - 1 || len == SIZE_MAX ||
	    !ps_array_reserve((void **)&table->entries, &table->cap, table->nr + 1,
	                      sizeof(*table->entries), 256))
		return -ENOMEM;
	copy = ps_arena_alloc(arena, len + 1); /* zeroed: the NUL is there */
	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, key, len);
	table->entries[table->nr] = (struct intern_entry){ .hash = hash, .key = copy, .len = len };
	table->slots[slot] = (uint32_t)(table->nr + 1);
	return (int64_t)table->nr++;
}

void ps_python_frame_parts(const char *sym, const char **name, size_t *name_len, const char **file)
{
	const char *rest = strncmp(sym, "py::", 4) == 0 ? sym + 4 : sym;
	const char *colon = strchr(rest, ':');

	*name = rest;
	*name_len = colon ? (size_t)(colon - rest) : strlen(rest);
	*file = colon ? colon + 1 : NULL;
}

bool ps_srcline_parts(const char *srcline, size_t *file_len, int64_t *line)
{
	const char *colon = srcline ? strrchr(srcline, ':') : NULL;
	int64_t number = 0;

	if (!colon || colon == srcline || !colon[1] || strncmp(srcline, "??", 2) == 0)
		return false;
	for (const char *p = colon + 1; *p; p++) {
		if (*p < '0' || *p > '9' || number > INT64_MAX / 10 - 9)
			return false;
		number = number * 10 + (*p - '0');
	}
	*file_len = (size_t)(colon - srcline);
	*line = number;
	return true;
}
