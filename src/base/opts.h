/* Copying a caller's options struct whose first field is its size (the
 * public API's convention): a struct from an older caller is shorter and
 * its missing fields are zero; one from a newer caller may be longer, and
 * is taken only when every byte past what this library knows is zero, so
 * an option this build cannot honour is refused rather than dropped. */
#ifndef PS_BASE_OPTS_H
#define PS_BASE_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Copy *opts (NULL: all defaults) into out, a struct of known bytes whose
 * first field is its size_t sz. 0, or -EINVAL for a size too small to
 * hold sz, or non-zero bytes past known. */
static inline int ps_opts_copy(void *out, size_t known, const void *opts)
{
	size_t sz;

	memset(out, 0, known);
	if (!opts) {
		*(size_t *)out = known;
		return 0;
	}
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = known; i < sz; i++)
		if (((const unsigned char *)opts)[i])
			return -EINVAL;
	memcpy(out, opts, sz < known ? sz : known);
	*(size_t *)out = known;
	return 0;
}

#endif /* PS_BASE_OPTS_H */
