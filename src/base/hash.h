/* The one hash of in-memory indexes (DSOs, objects, messages, stacks,
 * names): bytes a word at a time, strings, and integer keys. Only for
 * finding entries again; nothing written out depends on its values. */
#ifndef PS_BASE_HASH_H
#define PS_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A 64-bit integer key mixed so that every bit of it reaches every bit
 * of the result (murmur3's finaliser): low bits serve as a table index. */
static inline uint64_t ps_hash_u64(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ull;
	key ^= key >> 33;
	return key;
}

/* len bytes, a word at a time (stacks are hundreds of bytes and every
 * sample's is hashed); seed chains several fields into one hash. */
static inline uint64_t ps_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ seed ^ len, word;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&word, p, 8);
		h = (h ^ word) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	word = 0;
	if (len)
		memcpy(&word, p, len);
	h = (h ^ word) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 32);
}

static inline uint64_t ps_hash_string(const char *text, uint64_t seed)
{
	return ps_hash_bytes(text, strlen(text), seed);
}

#endif /* PS_BASE_HASH_H */
