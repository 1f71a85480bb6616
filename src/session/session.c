/* The public stack API (ps_session_*): opens a reading of the capture
 * (and the unwinding workers), and gives each sample that passes the
 * filters its stack: the pipeline's named frames, the user part unwound
 * here or taken from a worker, then merged with its Python frames. Also
 * the per-process report of the Python side.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/opts.h"
#include "reader/reader.h"
#include "session/session_priv.h"
#include "symbols/symbols.h"

/* ps_frame.line took the struct's tail padding: the stride of the frames
 * a stack points to is what programs built before it use. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct ps_frame) == 64, "struct ps_frame changed size: an ABI break");
#endif

/* The stage PYSTITCH_BENCH_STAGE asks for (read, unwind, name, merge), or
 * off: an internal switch of bench/stages.sh, not an interface. */
static enum ps_bench_stage bench_stage(void)
{
	static const char *const names[] = { "", "read", "unwind", "name", "merge" };
	const char *value = getenv("PYSTITCH_BENCH_STAGE");

	for (unsigned i = 1; value && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(value, names[i]) == 0)
			return (enum ps_bench_stage)i;
	return PS_BENCH_OFF;
}

/* Open the session (*s, which the caller closes either way). 0 or -errno
 * with the reason in s->errmsg. */
static int session_open(struct ps_session *s, const char *path, struct ps_session_opts *o,
                        bool record_names)
{
	int err;

	if (o->jobs > 1) {
		err = ps_jobs_new(o, &s->jobs);
		if (err)
			return ps_feed_fail(&s->feed, err, "out of memory");
	}
	if (!o->max_stack)
		o->max_stack = PS_UNWIND_DEFAULT_MAX_FRAMES;
	if (o->max_stack > PS_PIPELINE_MAX_PCS)
		o->max_stack = PS_PIPELINE_MAX_PCS;
	err = ps_feed_open(&s->feed, path, o, record_names, false, s->errmsg, sizeof(s->errmsg));
	if (err)
		return err;
	s->native_arch = ps_session_native_arch(s->feed.reader);
	s->record_names = record_names;
	s->bench_stage = bench_stage();
	if (o->jobs > 1 && !ps_reader_archive(s->feed.reader)) {
		/* the naming's one-time costs, on a thread of their own */
		const struct ps_features *features = ps_reader_features(s->feed.reader);

		err = ps_symbols_ahead(ps_pipeline_symbols(s->feed.pipeline), features->build_ids,
		                       features->nr_build_ids);
		if (err)
			return ps_feed_fail(&s->feed, err, "out of memory");
	}
	/* a capture that can be read once per worker (not an archive) and
	 * has user stacks to unwind */
	if (o->jobs > 1 && !ps_reader_archive(s->feed.reader) && ps_feed_has_user_stacks(&s->feed))
		return ps_jobs_start(s->jobs, path, &s->feed, s->errmsg, sizeof(s->errmsg));
	return 0;
}

/* The open convention of the public header: the handle, or NULL and the
 * reason told to the log at PS_LOG_ERROR. */
static int open_session(const char *path, const struct ps_session_opts *opts, bool record_names,
                        struct ps_session **out)
{
	struct ps_session_opts o;
	struct ps_session *s;
	int err;

	*out = NULL;
	if (ps_opts_copy(&o, sizeof(o), opts)) {
		/* the caller's log, if the struct is large enough to hold it */
		if (opts->sz >= offsetof(struct ps_session_opts, log_ctx) + sizeof(void *) &&
		    opts->log)
			opts->log(opts->log_ctx, PS_LOG_ERROR, PS_OPTS_ERRMSG);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		if (o.log)
			o.log(o.log_ctx, PS_LOG_ERROR, "out of memory");
		return -ENOMEM;
	}
	s->feed.errmsg = s->errmsg;
	s->feed.errmsg_size = sizeof(s->errmsg);
	err = session_open(s, path, &o, record_names);
	if (err) {
		/* o.log: through the jobs' log when there are jobs, which
		 * passes on what the workers said first */
		if (o.log)
			o.log(o.log_ctx, PS_LOG_ERROR, s->errmsg[0] ? s->errmsg : "out of memory");
		ps_session_close(s);
		return err;
	}
	*out = s;
	return 0;
}

int ps_session_open(const char *path, const struct ps_session_opts *opts, struct ps_session **out)
{
	return open_session(path, opts, false, out);
}

int ps_session_open_recording(const char *path, const struct ps_session_opts *opts,
                              struct ps_session **out)
{
	return open_session(path, opts, true, out);
}

void ps_session_close(struct ps_session *s)
{
	if (!s)
		return;
	ps_feed_close(&s->feed);
	free(s->branches);
	free(s->branch_lines);
	ps_session_listing_free(s->listing);
	/* last: the workers and everything above log through it */
	ps_jobs_free(s->jobs);
	free(s->build_ids);
	free(s);
}

const char *ps_session_errmsg(const struct ps_session *s)
{
	return s ? s->errmsg : "out of memory";
}

struct ps_reader *ps_session_reader(const struct ps_session *s)
{
	return s->feed.reader;
}

int ps_session_recorded_names(struct ps_session *s, const char *debug_path, struct ps_strbuf *out)
{
	return ps_symbols_recorded_names(ps_pipeline_symbols(s->feed.pipeline), debug_path, out);
}

/* ---- build ids ------------------------------------------------------ */

struct build_id_list {
	struct ps_session *session;
	size_t nr_recorded; /* the capture's table, at the start */
	bool failed;
};

/* One DSO's build id, added unless the capture's table names its file. */
static void add_build_id(void *ctx, const char *name, bool kernel, const uint8_t *id, size_t size)
{
	struct build_id_list *list = ctx;
	struct ps_session *s = list->session;
	struct ps_build_id *entry;

	for (size_t i = 0; i < list->nr_recorded; i++)
		if (s->build_ids[i].filename && strcmp(s->build_ids[i].filename, name) == 0)
			return;
	if (list->failed || !ps_array_reserve((void **)&s->build_ids, &s->build_ids_cap,
	                                      s->nr_build_ids + 1, sizeof(*s->build_ids), 64)) {
		list->failed = true;
		return;
	}
	entry = &s->build_ids[s->nr_build_ids++];
	*entry = (struct ps_build_id){
		.misc = kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		.pid = -1,
		.size = (uint8_t)(size < sizeof(entry->id) ? size : sizeof(entry->id)),
		.filename = name,
	};
	memcpy(entry->id, id, entry->size);
}

int ps_session_build_ids(struct ps_session *s, const struct ps_build_id **ids, size_t *nr)
{
	const struct ps_features *features = ps_reader_features(s->feed.reader);
	struct build_id_list list = { .session = s, .nr_recorded = features->nr_build_ids };

	*ids = NULL;
	*nr = 0;
	s->nr_build_ids = 0;
	if (!ps_array_reserve((void **)&s->build_ids, &s->build_ids_cap,
	                      features->nr_build_ids ? features->nr_build_ids : 1,
	                      sizeof(*s->build_ids), 64))
		return -ENOMEM;
	if (features->nr_build_ids)
		memcpy(s->build_ids, features->build_ids,
		       features->nr_build_ids * sizeof(*s->build_ids));
	s->nr_build_ids = features->nr_build_ids;
	ps_symbols_for_each_build_id(ps_pipeline_symbols(s->feed.pipeline), add_build_id, &list);
	if (list.failed)
		return -ENOMEM;
	*ids = s->build_ids;
	*nr = s->nr_build_ids;
	return 0;
}

/* ---- stacks --------------------------------------------------------- */

/* The user part of the stack unwound, by its worker or here: its PCs in
 * s->pcs (the number returned, or -errno), their notes in s->notes when
 * *noted, and why the walk stopped. */
static int unwind_user(struct ps_session *s, const struct ps_feed_sample *sample,
                       enum ps_unwind_stop *stop_out, bool *noted_out)
{
	struct ps_pipeline *pipeline = s->feed.pipeline;
	enum ps_unwind_stop stop;
	bool noted = false;
	int n;

	if (ps_jobs_running(s->jobs)) {
		size_t nsteps = 0;
		int ret = ps_jobs_take(s->jobs, sample->seq, s->pcs, s->notes, &noted, &n, &stop,
		                       s->steps, &nsteps, s->errmsg, sizeof(s->errmsg));

		if (ret < 0) {
			s->errmsg_set = true;
			return ret;
		}
		/* unwound here when the worker has no result, or when
		 * libunwind's cache, which the session keeps, would have
		 * changed it */
		if (ret > 0 || !ps_pipeline_replay(pipeline, sample->process, s->steps, nsteps))
			n = ps_pipeline_unwind(pipeline, sample->event, sample->process, s->pcs,
			                       &stop, s->notes, &noted);
	} else {
		n = ps_pipeline_unwind(pipeline, sample->event, sample->process, s->pcs, &stop,
		                       s->notes, &noted);
	}
	*stop_out = stop;
	*noted_out = noted;
	return n;
}

/* The user part of the stack: unwound by its worker, or here. */
static int add_unwound(struct ps_session *s, const struct ps_feed_sample *sample)
{
	enum ps_unwind_stop stop;
	bool noted = false;
	int n = unwind_user(s, sample, &stop, &noted);

	if (n < 0)
		return n;
	int err = ps_pipeline_add_unwound(s->feed.pipeline, sample->process, s->pcs,
	                                  noted ? s->notes : NULL, n, stop);

	if (!err && s->record_names)
		err = ps_pipeline_name_as_perf(s->feed.pipeline, sample->event, sample->process,
		                               s->pcs);
	return err;
}

/* The sample's stack in s->stack, its Python frames merged unless merge is
 * false (PS_BENCH_NAME). 0 or -errno. */
static int build_stack(struct ps_session *s, const struct ps_feed_sample *sample, bool merge)
{
	struct ps_pipeline *pipeline = s->feed.pipeline;
	const struct ps_event *ev = sample->event;
	enum ps_python_mode mode = s->feed.opts.python;
	const struct ps_mapped_object *executable;
	struct ps_pipeline_stack *stack;
	bool python, eval;
	int err;

	err = ps_pipeline_begin_stack(pipeline, ev, sample->thread, sample->process);
	stack = ps_pipeline_stack(pipeline);
	if (!err && stack->has_callchain &&
	    ps_pipeline_has_user_stack(pipeline, ev, sample->process))
		err = add_unwound(s, sample);
	if (err && s->errmsg_set)
		return err; /* a worker failed: s->errmsg says how */
	if (err)
		return ps_feed_fail(&s->feed, err, "out of memory");
	python = ps_python_mark_frames(stack->frames, stack->nr_frames, &eval);
	s->stack.event = ev;
	s->stack.comm = sample->thread->comm;
	s->stack.sample_read = ev->attr && (ev->attr->sample_type & PERF_SAMPLE_READ);
	s->stack.deliveries = sample->deliveries;
	s->stack.nr_deliveries = sample->nr_deliveries;
	executable = ps_process_executable(sample->process);
	s->stack.executable = executable ? executable->name : NULL;
	s->stack.has_callchain = stack->has_callchain;
	s->stack.frames = stack->frames;
	s->stack.nr_frames = stack->nr_frames;
	err = ps_session_sample_extras(s, sample);
	if (err)
		return ps_feed_fail(&s->feed, err, "out of memory");
	if (mode == PS_PYTHON_NATIVE || !stack->has_callchain || !merge)
		return 0;
	/* the merged and only modes mark the eval loop's activations that
	 * nothing names, and the stacks of processes that ran CPython's
	 * trampolines that were cut short; the all mode leaves a stack
	 * without Python frames as it is */
	if (!python &&
	    (mode == PS_PYTHON_ALL ||
	     !(eval || ps_python_process_runs_trampolines(s->feed.python, sample->process)))) {
		if (mode == PS_PYTHON_ONLY)
			s->stack.nr_frames = 0;
		return 0;
	}
	err = ps_python_merge(s->feed.python, sample->process, stack, &s->stack.frames,
	                      &s->stack.nr_frames);
	if (err)
		return ps_feed_fail(&s->feed, err, "out of memory");
	return 0;
}

/* PYSTITCH_BENCH_STAGE: every sample's work up to the stage asked, none
 * delivered. 0 at the end, or -errno. */
static int bench_run(struct ps_session *s)
{
	struct ps_feed_sample sample;
	enum ps_unwind_stop stop;
	bool noted;
	int ret;

	while ((ret = ps_feed_next(&s->feed, &sample)) > 0) {
		switch (s->bench_stage) {
		case PS_BENCH_UNWIND:
			if (!ps_pipeline_has_user_stack(s->feed.pipeline, sample.event,
			                                sample.process))
				break;
			ret = unwind_user(s, &sample, &stop, &noted);
			if (ret < 0 && s->errmsg_set)
				return ret;
			if (ret < 0)
				return ps_feed_fail(&s->feed, ret, "out of memory");
			break;
		case PS_BENCH_NAME:
		case PS_BENCH_MERGE:
			ret = build_stack(s, &sample, s->bench_stage == PS_BENCH_MERGE);
			if (ret)
				return ret;
			break;
		default:
			break;
		}
	}
	if (ret == 0)
		ps_python_finish(s->feed.python);
	return ret;
}

int ps_session_next(struct ps_session *s, const struct ps_stack **out)
{
	struct ps_feed_sample sample;
	int ret;

	*out = NULL;
	if (s->bench_stage)
		return bench_run(s);
	ret = ps_feed_next(&s->feed, &sample);
	if (ret == 0)
		ps_python_finish(s->feed.python);
	if (ret <= 0)
		return ret;
	ret = build_stack(s, &sample, true);
	if (ret)
		return ret;
	*out = &s->stack;
	return 1;
}

const char *ps_session_comm(struct ps_session *s, int32_t pid, int32_t tid)
{
	struct ps_thread *thread =
	        ps_machine_thread(ps_pipeline_machine(s->feed.pipeline), pid, tid);

	return thread ? thread->comm : NULL;
}

/* ---- the per-process report ----------------------------------------- */

int ps_session_python_processes(struct ps_session *s, ps_python_process_fn fn, void *ctx)
{
	int err = ps_python_report(s->feed.python, fn, ctx);

	return err ? ps_feed_fail(&s->feed, err, "out of memory") : 0;
}

int ps_session_read_to_end(struct ps_session *s)
{
	int err = ps_feed_read_to_end(&s->feed);

	if (!err)
		ps_python_finish(s->feed.python);
	return err;
}
