/* Reading options structs by the rule of base/opts.h, the one place every
 * *_opts struct of the library is checked and copied. */
#include "base/opts.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int ps_opts_copy(void *ours, size_t our_size, const void *theirs)
{
	size_t their_size;

	memset(ours, 0, our_size);
	*(size_t *)ours = our_size;
	if (!theirs)
		return 0;
	memcpy(&their_size, theirs, sizeof(their_size));
	if (their_size < sizeof(size_t))
		return -EINVAL;
	for (size_t i = our_size; i < their_size; i++)
		if (((const uint8_t *)theirs)[i])
			return -EINVAL;
	memcpy(ours, theirs, their_size < our_size ? their_size : our_size);
	*(size_t *)ours = our_size;
	return 0;
}
