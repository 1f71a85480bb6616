/* The synthetic captures of test_info (info_captures.c). */
#ifndef PS_TESTS_UNIT_OUTPUT_INFO_CAPTURES_H
#define PS_TESTS_UNIT_OUTPUT_INFO_CAPTURES_H

#include <stdbool.h>
#include <stddef.h>

#include "../reader/builder.h"

enum build { MACHINE, BARE, NODIES, REFUSED, BEYOND, CPU_LISTS };

struct named_capture {
	const char *name;
	enum build build;
	bool pipe, be;
	unsigned refused;
	bool perf_safe; /* --write writes it */
};

extern const struct named_capture captures[];
extern const size_t nr_captures;

/* The capture's image: a perf.data file or a pipe stream. */
void build_capture(const struct named_capture *c, struct bld_buf *image);

#endif /* PS_TESTS_UNIT_OUTPUT_INFO_CAPTURES_H */
