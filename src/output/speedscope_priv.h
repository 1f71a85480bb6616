/* What src/output/speedscope.c (collecting samples) and speedscope_write.c
 * (writing the JSON document) share: the tables and the key layouts.
 * Private to the output module. */
#ifndef PS_OUTPUT_SPEEDSCOPE_PRIV_H
#define PS_OUTPUT_SPEEDSCOPE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strbuf.h"
#include "output/profile_parts_priv.h"
#include "output/output.h"

/* Key layouts:
 *   frame  three u64 words: line (0: none), name length, file length
 *          (FRAME_NO_FILE: none), then the name's bytes and the file's
 *   stack  u32 frame indexes, root first
 *   profile name  the profile's name */
enum { FRAME_HEAD = 3 };
#define FRAME_NO_FILE UINT64_MAX

/* One sample: 24 bytes whatever its stack. seq is its place among the
 * profile's samples as they came, which keeps samples of equal times in
 * that order when the profile has to be sorted. */
struct speedscope_sample {
	uint64_t time;
	uint64_t weight;
	uint32_t stack;
	uint32_t seq;
};

struct speedscope_profile {
	struct speedscope_sample *samples;
	size_t nr, cap;
	uint64_t weight; /* saturating sum */
	bool unordered; /* a sample came with a time before its predecessor's */
};

struct ps_speedscope {
	struct ps_speedscope_opts opts;
	char *name; /* opts.name, copied */
	struct ps_arena keys;
	struct intern frames, stacks, profile_names;
	struct speedscope_profile *profiles; /* by index in profile_names */
	size_t profiles_cap;
	struct ps_strbuf key; /* the frame or profile name being looked up */
	uint32_t *path; /* the stack being added, root first */
	size_t path_cap;
	bool only_clock; /* every sample is of cpu-clock or task-clock */
	struct ps_speedscope_stats stats;
};

/* text[0..len) as a JSON string, quotes included: '"', '\\' and control
 * characters escaped, U+2028 and U+2029 too (JavaScript source cannot hold
 * them raw), and every byte that does not belong to a well-formed UTF-8
 * sequence (RFC 3629: no overlong forms, surrogates or code points past
 * U+10FFFF) replaced by U+FFFD. */
void ps_speedscope_add_json_string(struct ps_strbuf *out, const char *text, size_t len);

#endif /* PS_OUTPUT_SPEEDSCOPE_PRIV_H */
