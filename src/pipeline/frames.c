/* Building a sample's stack of named frames: the recorded callchain as
 * perf walks it, the LBR call stack (lbr.c), or the sampled IP alone, then
 * the unwound user stack.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "pipeline/pipeline_priv.h"

/* The recorded callchain, as perf's thread__resolve_callchain_sample
 * walks it: context markers switch the address space, at most max_stack
 * real entries, an unknown marker discards the chain. */
static int add_callchain(struct ps_pipeline *pipeline, struct ps_process *process,
                         const struct ps_sample *sample)
{
	unsigned cpumode = PERF_RECORD_MISC_USER;
	size_t entries = 0;

	for (size_t i = 0; i < sample->callchain_nr && entries < pipeline->max_stack; i++) {
		uint64_t ip = sample->callchain[i];
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (!ps_pipeline_switch_context(ip, &cpumode)) {
				pipeline->stack.nr_frames = 0;
				return 0;
			}
			continue;
		}
		entries++;
		int err = ps_pipeline_add_frames(pipeline, process, cpumode, ip, false);
		if (err)
			return err;
	}
	return 0;
}

/* Where the user frames start: after the kernel ones. */
static void find_user_first(struct ps_pipeline_stack *stack)
{
	stack->user_first = 0;
	while (stack->user_first < stack->nr_frames && stack->frames[stack->user_first].kernel)
		stack->user_first++;
}

int ps_pipeline_begin_stack(struct ps_pipeline *pipeline, const struct ps_event *event,
                            struct ps_thread *thread, struct ps_process *process)
{
	const struct ps_sample *sample = &event->u.sample;
	struct ps_pipeline_stack *stack = &pipeline->stack;
	int err;

	stack->frames = pipeline->frames;
	stack->nr_frames = 0;
	stack->notes = NULL;
	stack->unwound = false;
	stack->stop = PS_UNWIND_STOP_END;
	pipeline->nr_hints = 0;
	stack->has_callchain =
	        !pipeline->no_callchain && (event->attr->sample_type & PERF_SAMPLE_CALLCHAIN);
	if (!stack->has_callchain) {
		err = ps_pipeline_add_frames(pipeline, process,
		                             event->misc & PERF_RECORD_MISC_CPUMODE_MASK,
		                             sample->ip, false);
		if (!err && stack->nr_frames)
			stack->frames[0].addr = sample->ip; /* printed raw without a callchain */
	} else {
		err = 0;
		if (event->attr->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK)
			err = ps_pipeline_add_lbr(pipeline, thread, process, event);
		if (err == 0)
			err = add_callchain(pipeline, process, sample);
		else if (err > 0)
			err = 0;
	}
	find_user_first(stack);
	return err;
}

/* The notes of the frames from first on: note, those before 0. */
static int set_notes(struct ps_pipeline *pipeline, size_t first, uint64_t note)
{
	struct ps_pipeline_stack *stack = &pipeline->stack;

	if (!ps_array_reserve((void **)&pipeline->notes, &pipeline->cap_notes, stack->nr_frames,
	                      sizeof(*pipeline->notes), 256))
		return -ENOMEM;
	if (!stack->notes)
		memset(pipeline->notes, 0, first * sizeof(*pipeline->notes));
	for (size_t i = first; i < stack->nr_frames; i++)
		pipeline->notes[i] = note;
	stack->notes = pipeline->notes;
	return 0;
}

int ps_pipeline_add_unwound(struct ps_pipeline *pipeline, struct ps_process *process,
                            const uint64_t *pcs, const uint64_t *notes, int n,
                            enum ps_unwind_stop stop)
{
	struct ps_pipeline_stack *stack = &pipeline->stack;

	/* the process's unwinding state follows its maps from now on, when
	 * another pipeline unwound the sample too */
	if (!ps_pipeline_process(pipeline, process))
		return -ENOMEM;
	stack->unwound = true;
	stack->stop = stop;
	for (int i = 0; i < n; i++) {
		size_t first = stack->nr_frames;
		int err = ps_pipeline_add_frames(pipeline, process, PERF_RECORD_MISC_USER, pcs[i],
		                                 !pipeline->no_inline);
		/* every frame of the address (its inline chain) has the note */
		if (!err && ((notes && notes[i]) || stack->notes))
			err = set_notes(pipeline, first, notes ? notes[i] : 0);
		if (err)
			return err;
	}
	find_user_first(stack);
	return 0;
}

struct ps_pipeline_stack *ps_pipeline_stack(struct ps_pipeline *pipeline)
{
	return &pipeline->stack;
}
