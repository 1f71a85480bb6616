/* speedscope profiles (`pystitch speedscope`): the samples of a capture,
 * per thread and in time order, for speedscope's file format. Frames and
 * stacks are interned once in tables keyed by their content; a sample is
 * its stack's index, its weight and its time in its profile's array, so
 * memory grows with the samples and the unique stacks and frames, and a
 * sample allocates nothing of its own. speedscope_write.c writes the
 * document. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/opts.h"
#include "output/speedscope_priv.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int ps_speedscope_open(const struct ps_speedscope_opts *opts, struct ps_speedscope **out)
{
	struct ps_speedscope *speedscope = calloc(1, sizeof(*speedscope));

	*out = NULL;
	if (!speedscope)
		return -ENOMEM;
	if (ps_opts_copy(&speedscope->opts, sizeof(speedscope->opts), opts) ||
	    speedscope->opts.per > PS_SPEEDSCOPE_PER_NONE) {
		free(speedscope);
		return -EINVAL;
	}
	if (speedscope->opts.name) {
		speedscope->name = strdup(speedscope->opts.name);
		if (!speedscope->name) {
			free(speedscope);
			return -ENOMEM;
		}
	}
	speedscope->opts.name = NULL; /* the caller's; the copy is ours */
	speedscope->only_clock = true;
	*out = speedscope;
	return 0;
}

void ps_speedscope_close(struct ps_speedscope *speedscope)
{
	if (!speedscope)
		return;
	for (size_t i = 0; i < speedscope->profile_names.nr; i++)
		free(speedscope->profiles[i].samples);
	free(speedscope->profiles);
	ps_intern_release(&speedscope->frames);
	ps_intern_release(&speedscope->stacks);
	ps_intern_release(&speedscope->profile_names);
	ps_arena_free(&speedscope->keys);
	ps_strbuf_release(&speedscope->key);
	free(speedscope->path);
	free(speedscope->name);
	free(speedscope);
}

const struct ps_speedscope_stats *ps_speedscope_stats(const struct ps_speedscope *speedscope)
{
	return &speedscope->stats;
}

/* The index of the frame {name, file, line} (file NULL: none, line 0:
 * none), or -ENOMEM. */
static int64_t frame_index(struct ps_speedscope *speedscope, const char *name, size_t name_len,
                           const char *file, size_t file_len, int64_t line)
{
	struct ps_strbuf *key = &speedscope->key;
	uint64_t head[FRAME_HEAD] = { (uint64_t)line, name_len, file ? file_len : FRAME_NO_FILE };

	ps_strbuf_reset(key);
	ps_strbuf_add(key, head, sizeof(head));
	ps_strbuf_add(key, name, name_len);
	if (file)
		ps_strbuf_add(key, file, file_len);
	if (ps_strbuf_failed(key))
		return -ENOMEM;
	return ps_intern_add(&speedscope->frames, &speedscope->keys, key->buf, key->len);
}

/* What speedscope shows of a frame: a Python frame's qualname in its
 * file, at its line when it has one; the truncation marker alone; a native frame's symbol in its
 * DSO, or in its source file at its line (opts.srcline). */
static int64_t add_frame(struct ps_speedscope *speedscope, const struct ps_frame *frame)
{
	const char *name = frame->sym ? frame->sym : "[unknown]", *file = NULL;
	size_t name_len, file_len = 0;
	int64_t line = 0;

	if (frame->python && frame->sym) {
		ps_python_frame_parts(frame->sym, &name, &name_len, &file);
		/* its line when the capture gives one (ps_frame.line) */
		return frame_index(speedscope, name, name_len, file, file ? strlen(file) : 0,
		                   frame->line);
	}
	name_len = strlen(name);
	if (frame->truncated)
		return frame_index(speedscope, name, name_len, NULL, 0, 0);
	if (speedscope->opts.srcline && ps_srcline_parts(frame->srcline, &file_len, &line))
		file = frame->srcline;
	else if (frame->dso)
		file = frame->dso, file_len = strlen(frame->dso);
	return frame_index(speedscope, name, name_len, file, file_len, line);
}

/* The profile the stack belongs to (its name as speedscope's importer of
 * perf script text makes it), made when new; -ENOMEM. */
static int64_t profile_index(struct ps_speedscope *speedscope, const struct ps_stack *stack)
{
	struct ps_strbuf *key = &speedscope->key;
	const struct ps_sample *sample = &stack->event->u.sample;
	int64_t index;

	ps_strbuf_reset(key);
	if (speedscope->opts.per == PS_SPEEDSCOPE_PER_NONE) {
		ps_strbuf_addstr(key, speedscope->name ? speedscope->name : "all samples");
	} else {
		ps_strbuf_addstr(key, stack->comm ? stack->comm : "[unknown]");
		if (speedscope->opts.per != PS_SPEEDSCOPE_PER_COMM) {
			ps_strbuf_add(key, " pid: ", 6);
			ps_strbuf_add_int(key, (int32_t)sample->pid, 0, false);
		}
		if (speedscope->opts.per == PS_SPEEDSCOPE_PER_TID) {
			ps_strbuf_add(key, " tid: ", 6);
			ps_strbuf_add_int(key, (int32_t)sample->tid, 0, false);
		}
	}
	if (ps_strbuf_failed(key))
		return -ENOMEM;
	index = ps_intern_add(&speedscope->profile_names, &speedscope->keys, key->buf, key->len);
	if (index < 0)
		return index;
	if ((size_t)index >= speedscope->stats.profiles) {
		if (!ps_array_reserve((void **)&speedscope->profiles, &speedscope->profiles_cap,
		                      (size_t)index + 1, sizeof(*speedscope->profiles), 16))
			return -ENOMEM;
		speedscope->profiles[index] = (struct speedscope_profile){ 0 };
		speedscope->stats.profiles = (size_t)index + 1;
	}
	return index;
}

static bool clock_event(const struct ps_attr *attr)
{
	return attr && attr->type == PERF_TYPE_SOFTWARE &&
	       (attr->config == PERF_COUNT_SW_CPU_CLOCK ||
	        attr->config == PERF_COUNT_SW_TASK_CLOCK);
}

int ps_speedscope_add(struct ps_speedscope *speedscope, const struct ps_stack *stack)
{
	const struct ps_sample *sample = &stack->event->u.sample;
	uint64_t weight = speedscope->opts.period ? sample->period : 1;
	uint64_t time = (sample->sample_type & PERF_SAMPLE_TIME) ? sample->time : 0;
	struct speedscope_profile *profile;
	size_t nr = stack->nr_frames;
	int64_t stack_index, profile_at;

	/* without a call chain frames[0] is the sampled IP, the rest is not
	 * shown by script either (as collapse) */
	if (!stack->has_callchain && nr > 1)
		nr = 1;
	if (nr > UINT32_MAX / sizeof(uint32_t) ||
	    !ps_array_reserve((void **)&speedscope->path, &speedscope->path_cap, nr ? nr : 1,
	                      sizeof(*speedscope->path), 128))
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		int64_t frame = add_frame(speedscope, &stack->frames[nr - 1 - i]);
		if (frame < 0)
			return -ENOMEM;
		speedscope->path[i] = (uint32_t)frame;
	}
	speedscope->stats.frames = speedscope->frames.nr;
	stack_index = ps_intern_add(&speedscope->stacks, &speedscope->keys, speedscope->path,
	                            nr * sizeof(*speedscope->path));
	if (stack_index < 0)
		return -ENOMEM;
	speedscope->stats.stacks = speedscope->stacks.nr;
	profile_at = profile_index(speedscope, stack);
	if (profile_at < 0)
		return -ENOMEM;
	profile = &speedscope->profiles[profile_at];
	if (profile->nr >= UINT32_MAX ||
	    !ps_array_reserve((void **)&profile->samples, &profile->cap, profile->nr + 1,
	                      sizeof(*profile->samples), 256))
		return -ENOMEM;
	if (profile->nr && time < profile->samples[profile->nr - 1].time)
		profile->unordered = true;
	profile->samples[profile->nr] = (struct speedscope_sample){ .time = time,
		                                                    .weight = weight,
		                                                    .stack = (uint32_t)stack_index,
		                                                    .seq = (uint32_t)profile->nr };
	profile->nr++;
	profile->weight = sat_add(profile->weight, weight);
	speedscope->only_clock &= clock_event(stack->event->attr);
	speedscope->stats.nr_added++;
	speedscope->stats.weight = sat_add(speedscope->stats.weight, weight);
	return 0;
}
