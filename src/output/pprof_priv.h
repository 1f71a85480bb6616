/* What src/output/pprof.c (collecting stacks) and pprof_write.c (writing
 * the profile) share: the tables and the key layouts. Private
 * to the output module. */
#ifndef PS_OUTPUT_PPROF_PRIV_H
#define PS_OUTPUT_PPROF_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "output/profile_parts_priv.h"
#include "output/output.h"

/* What the locations of one mapping showed, for its Mapping message. */
struct mapping_info {
	uint64_t low, high; /* addresses seen: [low, high] */
	bool has_functions, has_filenames, has_inline_frames;
};

struct sample_values {
	uint64_t count, period;
};

/* Key layouts, in u64 words:
 *   mapping   kernel, filename string
 *   function  name, system_name, filename (strings)
 *   location  mapping id, address, nr_lines, then function id and line
 *             number per line (innermost first)
 *   sample    comm string, pid, tid, event string, nr_locations, then
 *             the location ids (leaf first) */
enum { MAPPING_WORDS = 2, FUNCTION_WORDS = 3, LOCATION_HEAD = 3, SAMPLE_HEAD = 5 };

struct ps_pprof {
	struct ps_pprof_opts opts;
	struct ps_arena keys;
	struct intern strings, mappings, functions, locations, samples;
	struct mapping_info *mapping_info;
	size_t mapping_info_cap;
	struct sample_values *values;
	size_t values_cap;
	uint64_t *key; /* the key being built, reused */
	size_t key_cap;
	uint64_t *stack; /* location ids of the stack being added */
	size_t stack_cap;
	/* the first sample's event decides the sample types */
	bool have_event, mixed_events;
	int64_t event_name;
	uint32_t event_type;
	uint64_t event_config;
	bool event_freq;
	uint64_t event_period;
	struct ps_pprof_stats stats;
	bool have_time;
	uint64_t first_time, last_time;
	/* samples per executable (ps_stack.executable), by the index of its
	 * name in the string table: the main binary is the one with most */
	uint64_t *executable_samples;
	size_t nr_executable_samples, executable_samples_cap;
};

/* A string's index in the string table, added when new; -ENOMEM. */
int64_t ps_pprof_string_len(struct ps_pprof *pprof, const char *text, size_t len);
/* The same for a C string; NULL is "". */
int64_t ps_pprof_string(struct ps_pprof *pprof, const char *text);

#endif /* PS_OUTPUT_PPROF_PRIV_H */
