/* The slots of an open-addressing hash index over entries kept in an
 * array of their own (output tables keyed by stacks, names, locations):
 * each slot holds an entry's number plus a bias, 0 marks an empty slot,
 * and collisions go to the next slot. */
#ifndef PS_BASE_HASH_SLOTS_H
#define PS_BASE_HASH_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Replace *slots by twice as many (first_size when there are none yet)
 * and put entries [first, nr) back in: entry i, whose uint64_t hash lies
 * hash_offset bytes into entries[i] (entry_size bytes each), is stored as
 * i + bias, which must not be 0 for any i in [first, nr). false, with
 * *slots untouched, when out of memory. */
bool ps_hash_slots_grow(uint32_t **slots, size_t *nr_slots, size_t first_size, const void *entries,
                        size_t entry_size, size_t hash_offset, size_t first, size_t nr,
                        uint32_t bias);

#endif /* PS_BASE_HASH_SLOTS_H */
