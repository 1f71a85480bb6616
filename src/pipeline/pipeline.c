/* The pipeline handle: it owns the machine model and the DSO registry of
 * one reading of a capture, takes the frame rules, and keeps the model and
 * the per-process unwinders in step with each record.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/message.h"
#include "base/opts.h"
#include "pipeline/pipeline_priv.h"

/* No rules: JIT code stays unnamed and frames without CFI end the walk. */
static const struct ps_pipeline_rules no_rules;

static void process_died(void *ctx, struct ps_process *process)
{
	(void)ctx;
	ps_pipeline_process_died(process);
}

static void process_gone(void *ctx, struct ps_process *process, const char *comm)
{
	struct ps_pipeline *pipeline = ctx;

	if (pipeline->rules->process_gone)
		pipeline->rules->process_gone(pipeline->rules_ctx, process, comm);
}

static const struct ps_machine_hooks machine_hooks = {
	.died = process_died,
	.gone = process_gone,
};

int ps_pipeline_new(const struct ps_pipeline_opts *opts, struct ps_pipeline **out, char *errmsg,
                    size_t errmsg_size)
{
	struct ps_pipeline_opts o;
	struct ps_pipeline *pipeline;
	int err;

	*out = NULL;
	if (ps_opts_copy(&o, sizeof(o), opts)) {
		snprintf(errmsg, errmsg_size, "bad pipeline options");
		return -EINVAL;
	}
	pipeline = calloc(1, sizeof(*pipeline));
	if (!pipeline)
		goto nomem;
	pipeline->rules = &no_rules;
	pipeline->max_stack = o.max_stack ? o.max_stack : PS_UNWIND_DEFAULT_MAX_FRAMES;
	if (pipeline->max_stack > PS_PIPELINE_MAX_PCS)
		pipeline->max_stack = PS_PIPELINE_MAX_PCS;
	pipeline->no_inline = o.no_inline;
	pipeline->no_callchain = o.no_callchain;
	pipeline->stitch_lbr = o.stitch_lbr;
	pipeline->show_kernel_path = o.show_kernel_path;
	pipeline->max_lbr = ps_pipeline_max_lbr(o.features);
	pipeline->log = o.symbols.log;
	pipeline->log_ctx = o.symbols.log_ctx;
	pipeline->unwind_opts = o.unwind;
	pipeline->unwind_opts.sz = sizeof(pipeline->unwind_opts);
	pipeline->unwind_opts.max_frames = pipeline->max_stack;
	if (ps_machine_new(&pipeline->machine))
		goto nomem;
	ps_machine_set_features(pipeline->machine, o.features);
	pipeline->features = o.features;
	ps_machine_set_thread_free(pipeline->machine, ps_pipeline_free_lbr);
	ps_machine_set_hooks(pipeline->machine, &machine_hooks, pipeline);
	err = ps_symbols_new(&o.symbols, &pipeline->symbols);
	if (err) {
		snprintf(errmsg, errmsg_size, "cannot set up symbol lookup: %s", strerror(-err));
		ps_pipeline_free(pipeline);
		return err;
	}
	*out = pipeline;
	return 0;
nomem:
	snprintf(errmsg, errmsg_size, "out of memory");
	ps_pipeline_free(pipeline);
	return -ENOMEM;
}

void ps_pipeline_free(struct ps_pipeline *pipeline)
{
	if (!pipeline)
		return;
	if (pipeline->machine) {
		const struct ps_machine_stats *st = ps_machine_stats(pipeline->machine);

		ps_log(pipeline->log, pipeline->log_ctx, PS_LOG_DEBUG,
		       "machine: %llu processes and %llu threads made, %llu and %llu freed; at "
		       "most %llu and %llu kept at once",
		       (unsigned long long)st->processes_made, (unsigned long long)st->threads_made,
		       (unsigned long long)st->processes_freed,
		       (unsigned long long)st->threads_freed,
		       (unsigned long long)st->processes_peak,
		       (unsigned long long)st->threads_peak);
	}
	/* first: the processes' state holds unwinders over the DSOs' files */
	ps_machine_free(pipeline->machine);
	ps_symbols_free(pipeline->symbols);
	free(pipeline->frames);
	free(pipeline->notes);
	free(pipeline->frame_regs);
	free(pipeline);
}

void ps_pipeline_set_rules(struct ps_pipeline *pipeline, const struct ps_pipeline_rules *rules,
                           void *ctx)
{
	pipeline->rules = rules ? rules : &no_rules;
	pipeline->rules_ctx = ctx;
}

struct ps_machine *ps_pipeline_machine(const struct ps_pipeline *pipeline)
{
	return pipeline->machine;
}

struct ps_symbols *ps_pipeline_symbols(const struct ps_pipeline *pipeline)
{
	return pipeline->symbols;
}

int ps_pipeline_apply(struct ps_pipeline *pipeline, const struct ps_event *ev)
{
	struct pipeline_process *state;
	struct ps_process *p;
	bool named = false;
	int err;

	/* what the grace period has run out for goes before the record's
	 * thread is looked up */
	ps_machine_advance(pipeline->machine, ev->timestamp);
	/* perf flushes libunwind's cache at an exec only when the thread
	 * had a name already (____thread__set_comm()) */
	if (ev->type == PERF_RECORD_COMM && (ev->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		const struct ps_thread *t = ps_machine_thread(
		        pipeline->machine, (int32_t)ev->u.comm.pid, (int32_t)ev->u.comm.tid);
		named = t && t->comm_set;
	}
	err = ps_machine_process_event(pipeline->machine, ev);

	if (err)
		return err;
	if (ev->type == PERF_RECORD_MMAP || ev->type == PERF_RECORD_MMAP2) {
		const struct ps_record_mmap *m = &ev->u.mmap;
		unsigned cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;

		if (cpumode == PERF_RECORD_MISC_KERNEL && m->filename &&
		    strncmp(m->filename, "[kernel.kallsyms]", 17) == 0) {
			/* pgoff holds the address of the reference symbol
			 * (_text), which tells how far KASLR moved the kernel */
			const char *ref = strchr(m->filename, ']');
			if (ref && ref[1] == '_')
				ps_symbols_kernel_reloc(pipeline->symbols, ref + 2, m->pgoff);
			return 0;
		}
		/* the address space the map went into: its thread's */
		struct ps_thread *t =
		        ps_machine_thread(pipeline->machine, (int32_t)m->pid, (int32_t)m->tid);
		p = t ? ps_machine_thread_process(pipeline->machine, t) : NULL;
		if (!p)
			return -ENOMEM;
		ps_pipeline_map_inserted(pipeline, p, m->start);
		state = ps_process_state(p, PS_PROCESS_SLOT_UNWIND);
		if (state)
			ps_pipeline_map_changed(state, m->start);
	} else if (ev->type == PERF_RECORD_FORK) {
		p = ps_machine_process(pipeline->machine, (int32_t)ev->u.fork.pid);
		if (!p)
			return -ENOMEM;
		ps_pipeline_forked(pipeline, p,
		                   ev->u.fork.pid != ev->u.fork.ppid &&
		                           !(ev->misc & PERF_RECORD_MISC_FORK_EXEC));
	} else if (ev->type == PERF_RECORD_COMM && (ev->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		p = ps_machine_process(pipeline->machine, (int32_t)ev->u.comm.pid);
		state = p ? ps_process_state(p, PS_PROCESS_SLOT_UNWIND) : NULL;
		if (state)
			ps_pipeline_exec(state, named);
	} else if (ev->type == PERF_RECORD_TEXT_POKE) {
		ps_pipeline_text_poke_load(pipeline, ev);
	}
	return 0;
}
