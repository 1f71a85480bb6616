/* pprof profiles (`pystitch pprof`): stacks become the samples, locations,
 * functions and mappings of a profile.proto message. Every part is
 * interned once in a table keyed by its content, so memory grows with the
 * number of unique stacks and names, not with the number of samples; the
 * message is built from the tables at the end, packed by protobuf-c and
 * gzipped with zlib as it is packed. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/opts.h"
#include "output/pprof_priv.h"

/* saturating at what pprof's int64 values can hold: a hostile capture's
 * periods must not wrap a sum or turn it negative */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > (uint64_t)INT64_MAX - b || b > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : a + b;
}

/* Lines (inline frames) per location at most; the frames of a longer
 * chain continue in the next location. The symbols module gives 32. */
#define MAX_LINES 64

/* ---- collecting ---------------------------------------------------- */

int64_t ps_pprof_string_len(struct ps_pprof *pprof, const char *text, size_t len)
{
	return ps_intern_add(&pprof->strings, &pprof->keys, text, len);
}

int64_t ps_pprof_string(struct ps_pprof *pprof, const char *text)
{
	return ps_pprof_string_len(pprof, text ? text : "", text ? strlen(text) : 0);
}

int ps_pprof_open(const struct ps_pprof_opts *opts, struct ps_pprof **out)
{
	struct ps_pprof *pprof = calloc(1, sizeof(*pprof));

	*out = NULL;
	if (!pprof)
		return -ENOMEM;
	if (ps_opts_copy(&pprof->opts, sizeof(pprof->opts), opts)) {
		free(pprof);
		return -EINVAL;
	}
	/* string 0 is the empty string, as the format requires */
	if (ps_pprof_string(pprof, "") != 0) {
		ps_pprof_close(pprof);
		return -ENOMEM;
	}
	*out = pprof;
	return 0;
}

void ps_pprof_close(struct ps_pprof *pprof)
{
	if (!pprof)
		return;
	ps_intern_release(&pprof->strings);
	ps_intern_release(&pprof->mappings);
	ps_intern_release(&pprof->functions);
	ps_intern_release(&pprof->locations);
	ps_intern_release(&pprof->samples);
	ps_arena_free(&pprof->keys);
	free(pprof->mapping_info);
	free(pprof->values);
	free(pprof->key);
	free(pprof->stack);
	free(pprof->executable_samples);
	free(pprof);
}

const struct ps_pprof_stats *ps_pprof_stats(const struct ps_pprof *pprof)
{
	return &pprof->stats;
}

bool ps_pprof_time_range(const struct ps_pprof *pprof, uint64_t *first, uint64_t *last)
{
	*first = pprof->first_time;
	*last = pprof->last_time;
	return pprof->have_time;
}

static bool reserve_key(struct ps_pprof *pprof, size_t words)
{
	return ps_array_reserve((void **)&pprof->key, &pprof->key_cap, words, sizeof(*pprof->key),
	                        64);
}

/* Mapping ids are the index + 1. -ENOMEM. */
static int64_t mapping_id(struct ps_pprof *pprof, const struct ps_frame *frame)
{
	int64_t filename = ps_pprof_string(pprof, frame->dso), index;
	uint64_t key[MAPPING_WORDS];

	if (filename < 0)
		return filename;
	key[0] = frame->kernel;
	key[1] = (uint64_t)filename;
	index = ps_intern_add(&pprof->mappings, &pprof->keys, key, sizeof(key));
	if (index < 0)
		return index;
	if ((size_t)index >= pprof->stats.mappings) {
		if (!ps_array_reserve((void **)&pprof->mapping_info, &pprof->mapping_info_cap,
		                      (size_t)index + 1, sizeof(*pprof->mapping_info), 64))
			return -ENOMEM;
		pprof->mapping_info[index] =
		        (struct mapping_info){ .low = frame->addr, .high = frame->addr };
		pprof->stats.mappings = (size_t)index + 1;
	}
	return index + 1;
}

static int64_t function_id(struct ps_pprof *pprof, int64_t name, int64_t system_name,
                           int64_t filename)
{
	uint64_t key[FUNCTION_WORDS];
	int64_t index;

	if (name < 0 || system_name < 0 || filename < 0)
		return -ENOMEM;
	key[0] = (uint64_t)name;
	key[1] = (uint64_t)system_name;
	key[2] = (uint64_t)filename;
	index = ps_intern_add(&pprof->functions, &pprof->keys, key, sizeof(key));
	if (index < 0)
		return index;
	pprof->stats.functions = pprof->functions.nr;
	return index + 1;
}

/* "py::qualname:filename" -> qualname and filename. */
static int64_t python_function(struct ps_pprof *pprof, const char *sym)
{
	const char *name, *file;
	size_t name_len;

	ps_python_frame_parts(sym, &name, &name_len, &file);
	return function_id(pprof, ps_pprof_string_len(pprof, name, name_len),
	                   ps_pprof_string(pprof, sym), ps_pprof_string(pprof, file ? file : ""));
}

/* How many frames from frames[0] make up one address's inline chain:
 * the inlined frames perf lists at an address, then the function they
 * were inlined into. */
static size_t chain_length(const struct ps_frame *frames, size_t nr)
{
	size_t n = 1;

	while (n < nr && n < MAX_LINES && frames[n - 1].inlined && !frames[n].python &&
	       !frames[n].truncated && !frames[n].python_unnamed &&
	       frames[n].addr == frames[0].addr && frames[n].dso == frames[0].dso)
		n++;
	return n;
}

/* The location of the chain frames[0..nr): its id (index + 1), or -ENOMEM. */
static int64_t location_id(struct ps_pprof *pprof, const struct ps_frame *frames, size_t nr)
{
	const struct ps_frame *first = &frames[0];
	int64_t mapping = 0, index;
	size_t words = LOCATION_HEAD, nr_lines = 0;
	bool srcline_file = false;

	if (!reserve_key(pprof, LOCATION_HEAD + 2 * nr))
		return -ENOMEM;
	if (first->truncated || first->python || first->python_unnamed) {
		/* not code of a mapped file: no mapping and no address, the
		 * function names the frame (a marker by its own name) */
		int64_t function = first->python
		                           ? python_function(pprof, first->sym)
		                           : function_id(pprof, ps_pprof_string(pprof, first->sym),
		                                         ps_pprof_string(pprof, first->sym), 0);
		if (function < 0)
			return function;
		pprof->key[words++] = (uint64_t)function;
		pprof->key[words++] = first->python ? first->line : 0;
		nr_lines = 1;
		pprof->key[1] = 0;
	} else {
		if (first->dso) {
			mapping = mapping_id(pprof, first);
			if (mapping < 0)
				return mapping;
		}
		for (size_t i = 0; i < nr && frames[i].sym; i++) {
			const struct ps_frame *frame = &frames[i];
			size_t file_len = 0;
			int64_t line = 0, filename, function;
			if (pprof->opts.srcline &&
			    ps_srcline_parts(frame->srcline, &file_len, &line)) {
				filename = ps_pprof_string_len(pprof, frame->srcline, file_len);
				srcline_file = true;
			} else {
				filename = ps_pprof_string(pprof, frame->dso);
			}
			function = function_id(pprof, ps_pprof_string(pprof, frame->sym),
			                       ps_pprof_string(pprof, frame->sym), filename);
			if (function < 0)
				return function;
			pprof->key[words++] = (uint64_t)function;
			pprof->key[words++] = (uint64_t)line;
			nr_lines++;
		}
		pprof->key[1] = first->addr;
	}
	pprof->key[0] = (uint64_t)mapping;
	pprof->key[2] = nr_lines;
	index = ps_intern_add(&pprof->locations, &pprof->keys, pprof->key,
	                      words * sizeof(uint64_t));
	if (index < 0)
		return index;
	pprof->stats.locations = pprof->locations.nr;
	if (mapping > 0) {
		struct mapping_info *info = &pprof->mapping_info[mapping - 1];
		if (first->addr < info->low)
			info->low = first->addr;
		if (first->addr > info->high)
			info->high = first->addr;
		info->has_functions |= nr_lines > 0;
		info->has_filenames |= srcline_file;
		info->has_inline_frames |= nr_lines > 1;
	}
	return index + 1;
}

/* The event's name without perf's modifiers ("cycles:P" -> "cycles"). */
static int64_t event_string(struct ps_pprof *pprof, const struct ps_attr *attr)
{
	const char *name = attr && attr->name ? attr->name : "";
	const char *colon = strchr(name, ':');

	return ps_pprof_string_len(pprof, name, colon ? (size_t)(colon - name) : strlen(name));
}

static void note_event(struct ps_pprof *pprof, const struct ps_stack *stack, int64_t event)
{
	const struct ps_attr *attr = stack->event->attr;

	if (!pprof->have_event) {
		pprof->have_event = true;
		pprof->event_name = event;
		pprof->event_type = attr ? attr->type : 0;
		pprof->event_config = attr ? attr->config : 0;
		pprof->event_freq = attr && (attr->flags & PS_ATTR_FREQ);
		pprof->event_period = attr ? attr->sample_period : 0;
	} else if (event != pprof->event_name) {
		pprof->mixed_events = true;
	}
	if (stack->event->u.sample.sample_type & PERF_SAMPLE_TIME) {
		uint64_t time = stack->event->u.sample.time;
		if (!pprof->have_time || time < pprof->first_time)
			pprof->first_time = time;
		if (!pprof->have_time || time > pprof->last_time)
			pprof->last_time = time;
		pprof->have_time = true;
	}
}

/* One more sample of the stack's executable. -ENOMEM. */
static int count_executable(struct ps_pprof *pprof, const struct ps_stack *stack)
{
	int64_t name;

	if (!stack->executable)
		return 0;
	name = ps_pprof_string(pprof, stack->executable);
	if (name < 0)
		return -ENOMEM;
	if ((size_t)name >= pprof->nr_executable_samples) {
		if (!ps_array_reserve((void **)&pprof->executable_samples,
		                      &pprof->executable_samples_cap, (size_t)name + 1,
		                      sizeof(*pprof->executable_samples), 16))
			return -ENOMEM;
		memset(&pprof->executable_samples[pprof->nr_executable_samples], 0,
		       ((size_t)name + 1 - pprof->nr_executable_samples) *
		               sizeof(*pprof->executable_samples));
		pprof->nr_executable_samples = (size_t)name + 1;
	}
	pprof->executable_samples[name]++;
	return 0;
}

int ps_pprof_add(struct ps_pprof *pprof, const struct ps_stack *stack)
{
	const struct ps_sample *sample = &stack->event->u.sample;
	size_t nr = stack->nr_frames, nr_locations = 0, words;
	int64_t comm = ps_pprof_string(pprof, stack->comm ? stack->comm : "[unknown]");
	int64_t event = event_string(pprof, stack->event->attr), index;

	if (comm < 0 || event < 0 || count_executable(pprof, stack))
		return -ENOMEM;
	note_event(pprof, stack, event);
	/* without a call chain frames[0] is the sampled IP, the rest is not
	 * shown by script either */
	if (!stack->has_callchain && nr > 1)
		nr = 1;
	for (size_t i = 0; i < nr;) {
		size_t chain = chain_length(&stack->frames[i], nr - i);
		int64_t location = location_id(pprof, &stack->frames[i], chain);
		if (location < 0 || !ps_array_reserve((void **)&pprof->stack, &pprof->stack_cap,
		                                      nr_locations + 1, sizeof(*pprof->stack), 128))
			return -ENOMEM;
		pprof->stack[nr_locations++] = (uint64_t)location;
		i += chain;
	}
	words = SAMPLE_HEAD + nr_locations;
	if (!reserve_key(pprof, words))
		return -ENOMEM;
	pprof->key[0] = (uint64_t)comm;
	pprof->key[1] = sample->pid;
	pprof->key[2] = sample->tid;
	pprof->key[3] = (uint64_t)event;
	pprof->key[4] = nr_locations;
	if (nr_locations)
		memcpy(&pprof->key[SAMPLE_HEAD], pprof->stack, nr_locations * sizeof(uint64_t));
	index = ps_intern_add(&pprof->samples, &pprof->keys, pprof->key, words * sizeof(uint64_t));
	if (index < 0)
		return -ENOMEM;
	if ((size_t)index >= pprof->stats.samples) {
		if (!ps_array_reserve((void **)&pprof->values, &pprof->values_cap,
		                      (size_t)index + 1, sizeof(*pprof->values), 256))
			return -ENOMEM;
		pprof->values[index] = (struct sample_values){ 0 };
		pprof->stats.samples = (size_t)index + 1;
	}
	pprof->values[index].count++;
	pprof->values[index].period = sat_add(pprof->values[index].period, sample->period);
	pprof->stats.nr_added++;
	pprof->stats.period = sat_add(pprof->stats.period, sample->period);
	return 0;
}
