/* Growing an open-addressing index (see hash_slots.h). */
#include "base/hash_slots.h"

#include <stdlib.h>
#include <string.h>

bool ps_hash_slots_grow(uint32_t **slots, size_t *nr_slots, size_t first_size, const void *entries,
                        size_t entry_size, size_t hash_offset, size_t first, size_t nr,
                        uint32_t bias)
{
	size_t size = *nr_slots ? *nr_slots * 2 : first_size, mask = size - 1;
	uint32_t *grown;

	if (size < *nr_slots || size > SIZE_MAX / sizeof(*grown))
		return false;
	grown = calloc(size, sizeof(*grown));
	if (!grown)
		return false;
	for (size_t i = first; i < nr; i++) {
		uint64_t hash;
		size_t slot;

		memcpy(&hash, (const char *)entries + i * entry_size + hash_offset, sizeof(hash));
		for (slot = (size_t)hash & mask; grown[slot]; slot = (slot + 1) & mask)
			;
		grown[slot] = (uint32_t)i + bias;
	}
	free(*slots);
	*slots = grown;
	*nr_slots = size;
	return true;
}
