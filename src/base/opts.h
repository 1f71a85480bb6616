/* Options structs: every one starts with its own size (size_t sz), so a
 * caller built against an older or newer header can pass its own. The
 * one rule for reading them, after libbpf's OPTS_VALID: a size smaller
 * than that first field (0 included) is an error; a larger struct than
 * this build knows is taken when every byte past the known fields is zero
 * (else it asks for an option this build lacks, and that is an error);
 * fields past a smaller struct's end read as zero. Fields are only ever
 * added at the end of a struct. */
#ifndef PS_BASE_OPTS_H
#define PS_BASE_OPTS_H

#include <stddef.h>

/* What a failed check says. */
#define PS_OPTS_ERRMSG                                                                             \
	"bad options struct: its sz is smaller than the field itself, or it sets options past "    \
	"the end of the struct this build knows"

/* Copy the caller's struct (NULL: the defaults) into ours, of our_size
 * bytes, zeroing what it does not hold, and set our sz to our_size. 0, or
 * -EINVAL (ours is then all zero but sz). */
int ps_opts_copy(void *ours, size_t our_size, const void *theirs);

#endif /* PS_BASE_OPTS_H */
