/* LBR call stacks (perf record --call-graph lbr): the user part of a
 * sample's stack built from its branch stack as perf 6.1's
 * resolve_lbr_callchain_sample() builds it, and perf script --stitch-lbr:
 * each thread keeps the frames its last LBR stack gave, and a stack whose
 * oldest entries are the ones the thread's previous sample held in the
 * same LBR registers gets the frames that sample saw further out.
 *
 * Only perf's default order (callee first) is built: pystitch has no
 * caller order.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline_priv.h"

#include "base/array.h"
#include "base/message.h"

/* The most stitched frames a thread keeps. perf's list has no bound: it
 * keeps what it had and grows with every sample stitched to the one
 * before, so a long run of stitched samples would grow it without end.
 * Past the bound the outermost frames go (a warning says so, once). */
#define LBR_STITCH_MAX 1024

/* One thread's stitching state (perf's struct lbr_stitch), created by
 * its first sample that can be stitched. */
struct lbr_thread {
	/* the branch stack of the thread's last sample that went through
	 * the stitching check (perf's prev_sample) */
	bool has_prev;
	size_t prev_nr, cap_prev;
	uint64_t prev_hw_idx;
	struct ps_branch_entry *prev;
	/* the frame each branch entry of the thread's last LBR stack gave,
	 * when it gave one (perf's prev_lbr_cursor): entries past nr_saved
	 * have given none */
	struct ps_frame *saved;
	bool *saved_valid;
	size_t nr_saved, cap_saved, cap_valid;
	/* the stitched frames, outermost first: perf's list reversed, so that
	 * what perf puts at its head is appended */
	struct ps_frame *stitched;
	size_t nr_stitched, cap_stitched;
};

void ps_pipeline_free_lbr(void *state)
{
	struct lbr_thread *t = state;

	if (!t)
		return;
	free(t->prev);
	free(t->saved);
	free(t->saved_valid);
	free(t->stitched);
	free(t);
}

unsigned ps_pipeline_max_lbr(const struct ps_features *features)
{
	unsigned max = 0;

	if (!features)
		return 0;
	/* the last "branches" capability counts, read as atoi() reads it */
	for (size_t i = 0; i < features->cpu_pmu_caps.nr; i++) {
		const char *cap = features->cpu_pmu_caps.items[i];
		if (strncmp(cap, "branches=", 9) == 0)
			max = (unsigned)(int)strtol(cap + 9, NULL, 10);
	}
	return max;
}

/* ---- stitching ------------------------------------------------------ */

static bool same_branch(const struct ps_branch_entry *a, const struct ps_branch_entry *b)
{
	return a->from == b->from && a->to == b->to && a->flags == b->flags;
}

/* Append the saved frames of the previous sample's entries older than the
 * current sample's oldest one (indexes first..prev_nr - 1, the outermost
 * first), keeping at most LBR_STITCH_MAX. */
static int stitch_frames(struct ps_pipeline *pipeline, struct lbr_thread *t, size_t first,
                         int32_t tid)
{
	size_t n = t->nr_stitched;

	if (!ps_array_reserve((void **)&t->stitched, &t->cap_stitched, n + (t->prev_nr - first),
	                      sizeof(*t->stitched), 16))
		return -ENOMEM;
	for (size_t i = t->prev_nr; i-- > first;)
		if (i < t->nr_saved && t->saved_valid[i])
			t->stitched[n++] = t->saved[i];
	if (n > LBR_STITCH_MAX) {
		memmove(t->stitched, t->stitched + (n - LBR_STITCH_MAX),
		        LBR_STITCH_MAX * sizeof(*t->stitched));
		n = LBR_STITCH_MAX;
		if (!pipeline->warned_stitch_max) {
			pipeline->warned_stitch_max = true;
			ps_log(pipeline->log, pipeline->log_ctx, PS_LOG_WARN,
			       "thread %d: its stitched LBR stack reached %d frames: the outermost "
			       "ones are left out from here on (perf keeps them all)",
			       (int)tid, LBR_STITCH_MAX);
		}
	}
	t->nr_stitched = n;
	return 0;
}

/* perf's has_stitched_lbr(): whether the current sample's oldest entries
 * are the ones the previous sample held in the same LBR registers; if so,
 * the frames the previous sample saw below them join the stitched ones. */
static int check_stitch(struct ps_pipeline *pipeline, struct lbr_thread *t,
                        const struct ps_sample *cur, bool *stitched)
{
	uint64_t max_lbr = pipeline->max_lbr;
	size_t identical = 0;

	*stitched = false;
	if (!t->has_prev)
		return 0;
	/* the LBR register of the current sample's oldest entry, and where
	 * the previous sample held that register (u64 arithmetic, as perf's) */
	uint64_t cur_base = max_lbr - cur->branch_nr + cur->branch_hw_idx + 1;
	uint64_t distance = t->prev_hw_idx > cur_base ? t->prev_hw_idx - cur_base
	                                              : max_lbr + t->prev_hw_idx - cur_base;
	/* perf's test is distance + 1 > nr, which lets a distance of -1
	 * through to a loop that then compares nothing */
	if (distance + 1 > t->prev_nr || distance >= t->prev_nr)
		return 0;
	for (size_t i = (size_t)distance + 1, j = cur->branch_nr; i > 0 && j > 0; i--, j--) {
		if (!same_branch(&t->prev[i - 1], &cur->branches[j - 1]))
			break;
		identical++;
	}
	if (!identical)
		return 0;
	*stitched = true;
	return stitch_frames(pipeline, t, (size_t)distance + 1, (int32_t)cur->tid);
}

static int keep_prev(struct lbr_thread *t, const struct ps_sample *s)
{
	if (!ps_array_reserve((void **)&t->prev, &t->cap_prev, s->branch_nr, sizeof(*t->prev), 32))
		return -ENOMEM;
	if (s->branch_nr)
		memcpy(t->prev, s->branches, s->branch_nr * sizeof(*t->prev));
	t->prev_nr = s->branch_nr;
	t->prev_hw_idx = s->branch_hw_idx;
	t->has_prev = true;
	return 0;
}

/* perf's save_lbr_cursor_node(): entry k gave frame f (NULL: none). perf
 * keeps max_lbr + 1 of them; a deeper stack than that (no CPU records
 * one) overruns its array, and here its further entries are not kept. */
static int save_frame(struct ps_pipeline *pipeline, struct lbr_thread *t, size_t k,
                      const struct ps_frame *f, const struct ps_event *event)
{
	if (k > pipeline->max_lbr) {
		if (!pipeline->warned_lbr_depth) {
			pipeline->warned_lbr_depth = true;
			ps_log(pipeline->log, pipeline->log_ctx, PS_LOG_WARN,
			       "offset 0x%llx: a branch stack of %zu entries, more than the %u "
			       "branches CPU_PMU_CAPS records: the entries past %u are not "
			       "stitched",
			       (unsigned long long)event->offset, event->u.sample.branch_nr,
			       pipeline->max_lbr, pipeline->max_lbr + 1);
		}
		return 0;
	}
	if (k >= t->nr_saved) {
		if (!ps_array_reserve((void **)&t->saved, &t->cap_saved, k + 1, sizeof(*t->saved),
		                      32) ||
		    !ps_array_reserve((void **)&t->saved_valid, &t->cap_valid, k + 1,
		                      sizeof(*t->saved_valid), 32))
			return -ENOMEM;
		for (size_t i = t->nr_saved; i <= k; i++)
			t->saved_valid[i] = false;
		t->nr_saved = k + 1;
	}
	t->saved_valid[k] = f != NULL;
	if (f)
		t->saved[k] = *f;
	return 0;
}

/* ---- the stack ------------------------------------------------------- */

/* One address, as perf's add_callchain_ip() takes it: a context marker
 * switches the address space and adds nothing; 1 for a marker perf does
 * not know (it discards the chain). */
static int add_ip(struct ps_pipeline *pipeline, struct ps_process *process, unsigned *cpumode,
                  uint64_t ip)
{
	if (ip >= (uint64_t)PERF_CONTEXT_MAX)
		return ps_pipeline_switch_context(ip, cpumode) ? 0 : 1;
	return ps_pipeline_add_frames(pipeline, process, *cpumode, ip, false);
}

/* A failure of add_ip(): a discarded chain is walked as a recorded one
 * (perf's resolve_lbr_callchain_sample() then returns 0). */
static int lbr_failed(struct ps_pipeline *pipeline, int err)
{
	pipeline->stack.nr_frames = 0;
	return err < 0 ? err : 0;
}

int ps_pipeline_add_lbr(struct ps_pipeline *pipeline, struct ps_thread *thread,
                        struct ps_process *process, const struct ps_event *event)
{
	const struct ps_sample *s = &event->u.sample;
	size_t chain_nr =
	        s->callchain_nr < pipeline->max_stack ? s->callchain_nr : pipeline->max_stack;
	struct lbr_thread *t = thread ? thread->state : NULL;
	unsigned cpumode = PERF_RECORD_MISC_USER;
	bool stitched = false;
	size_t user;
	int err;

	for (user = 0; user < chain_nr; user++)
		if (s->callchain[user] == (uint64_t)PERF_CONTEXT_USER)
			break;
	/* no user part (a kernel thread, or a chain cut by max_stack): the
	 * recorded chain is walked; without a branch stack perf 6.1 reads
	 * through a NULL pointer here */
	if (user == chain_nr || !(s->sample_type & PERF_SAMPLE_BRANCH_STACK))
		return 0;
	if (thread && pipeline->stitch_lbr && s->has_branch_hw_idx && pipeline->max_lbr > 0) {
		if (!t) {
			t = calloc(1, sizeof(*t));
			if (!t)
				return -ENOMEM;
			thread->state = t;
		}
		err = check_stitch(pipeline, t, s, &stitched);
		if (!err && !stitched)
			t->nr_stitched = 0;
		if (!err)
			err = keep_prev(t, s);
		if (err)
			return err;
	}

	/* the kernel part: the chain up to its user marker, in order */
	for (size_t k = 0; k <= user; k++) {
		err = add_ip(pipeline, process, &cpumode, s->callchain[k]);
		if (err)
			return lbr_failed(pipeline, err);
	}
	/* the user part: where the latest call went, then every call site,
	 * the latest first, taken as they are (no return address to step
	 * back from). With no entries perf reads the entry past the branch
	 * stack (whatever the record, or the next one, holds there): nothing
	 * is added for it here. */
	cpumode = PERF_RECORD_MISC_USER;
	if (s->branch_nr) {
		err = add_ip(pipeline, process, &cpumode, s->branches[0].to);
		if (err)
			return lbr_failed(pipeline, err);
	}
	for (size_t k = 0; k < s->branch_nr; k++) {
		size_t before = pipeline->stack.nr_frames;
		err = add_ip(pipeline, process, &cpumode, s->branches[k].from);
		if (err)
			return lbr_failed(pipeline, err);
		if (t) {
			const struct ps_frame *f = pipeline->stack.nr_frames > before
			                                   ? &pipeline->frames[before]
			                                   : NULL;
			err = save_frame(pipeline, t, k, f, event);
			if (err)
				return err;
		}
	}
	if (stitched) {
		for (size_t k = t->nr_stitched; k-- > 0;) {
			struct ps_frame *f = ps_pipeline_push_frame(pipeline);
			if (!f)
				return -ENOMEM;
			*f = t->stitched[k];
		}
	}
	return 1;
}
