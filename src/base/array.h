/* Growing an array by doubling, for buffers reused across samples and
 * tables built from untrusted files: sizes are checked for overflow, and
 * the caller bounds `want` by its own caps. */
#ifndef PS_BASE_ARRAY_H
#define PS_BASE_ARRAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Make room for at least want items of item_size bytes in *array, which
 * holds *cap; an empty array starts at first items. false (array
 * untouched) when out of memory or the size would overflow. */
static inline bool ps_array_reserve(void **array, size_t *cap, size_t want, size_t item_size,
                                    size_t first)
{
	size_t n = *cap ? *cap : first;
	void *grown;

	if (want <= *cap)
		return true;
	if (!n)
		n = 1;
	while (n < want) {
		if (n > SIZE_MAX / 2)
			return false;
		n *= 2;
	}
	if (item_size && n > SIZE_MAX / item_size)
		return false;
	grown = realloc(*array, n * item_size);
	if (!grown)
		return false;
	*array = grown;
	*cap = n;
	return true;
}

#endif /* PS_BASE_ARRAY_H */
