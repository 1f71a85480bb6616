/* One reading of a capture: the reader in perf's order, the pipeline kept
 * in step with its records, the Python side plugged into the pipeline,
 * and the sample filters. The session owns one and each unwinding worker
 * another, so that all of them number the samples that pass alike.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "archive/archive.h"
#include "machine/machine.h"
#include "reader/reader.h"
#include "session/session_priv.h"

#include "base/message.h"

int ps_feed_fail(struct ps_feed *feed, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vfail(feed->errmsg, feed->errmsg_size, err, NULL, fmt, ap);
	va_end(ap);
	return err;
}

/* ---- opening -------------------------------------------------------- */

/* Whether the capture may have been made on this machine: its host name
 * and kernel release are ours, or it does not record them. Only then can
 * a pid of the capture running now be the process it recorded. */
static bool made_here(const struct ps_reader *reader)
{
	const struct ps_features *f = ps_reader_features(reader);
	struct utsname u;

	if (!f->hostname && !f->osrelease)
		return true;
	if (uname(&u) != 0)
		return false;
	return (!f->hostname || strcmp(u.nodename, f->hostname) == 0) &&
	       (!f->osrelease || strcmp(u.release, f->osrelease) == 0);
}

/* An archive's capture is analysed with the options and only the files
 * it was made with (session_priv.h). */
void ps_feed_archive_opts(struct ps_archive *archive, struct ps_session_opts *o,
                          struct ps_file_hooks *files, const char **path)
{
	const struct ps_manifest *m = ps_archive_manifest(archive);
	enum ps_archive_kind kind;
	const char *kernel = ps_archive_kernel(archive, &kind);

	o->symfs = m->symfs;
	o->buildid_dir = m->buildid_dir;
	o->perf_map_dir = m->perf_map_dir;
	o->perf_map_dirs = NULL;
	o->nr_perf_map_dirs = 0;
	/* the files read from further trees are in the archive under their
	 * trees' paths (found there by their recorded path) */
	o->symfs_dirs = NULL;
	o->nr_symfs_dirs = 0;
	o->vmlinux = kernel && kind == PS_ARCHIVE_VMLINUX ? kernel : NULL;
	/* no kernel symbols were read: a path the archive lacks keeps it so */
	o->kallsyms = kernel && kind == PS_ARCHIVE_KALLSYMS ? kernel
	              : kernel                              ? NULL
	                                                    : "/proc/kallsyms";
	files->resolve = ps_archive_resolve;
	files->path_at = ps_archive_path_at;
	files->resolve_ctx = archive;
	*path = m->perf_data_path;
}

/* perf's --time percentages (util/time-utils.c): the range is that share
 * of the span from the first to the last sample, rounded to the
 * nanosecond; an end short of the last sample is one nanosecond earlier,
 * so that 0%-50% and 50%-100% do not share a sample. */
static int percent_time_range(struct ps_feed *feed)
{
	const struct ps_features *f = ps_reader_features(feed->reader);
	struct ps_session_opts *o = &feed->opts;
	double start = o->time_percent_start, end = o->time_percent_end;
	uint64_t total;

	if (!(start >= 0.0 && start <= end && end <= 1.0))
		return ps_feed_fail(feed, -EINVAL, "a --time percentage outside 0%%-100%%");
	if (!f->has_sample_time || f->last_sample_time < f->first_sample_time)
		return ps_feed_fail(
		        feed, -EINVAL,
		        "%s: --time with percentages needs the capture's first and last "
		        "sample times (the SAMPLE_TIME feature), which it does not have",
		        ps_reader_path(feed->reader));
	total = f->last_sample_time - f->first_sample_time;
	o->time_start = f->first_sample_time + (uint64_t)llround(start * (double)total);
	o->time_end = f->first_sample_time + (uint64_t)llround(end * (double)total);
	if (o->time_end > o->time_start && o->time_end != f->last_sample_time)
		o->time_end--;
	/* 0 would mean "open" to sample_wanted() */
	if (!o->time_start)
		o->time_start = 1;
	return 0;
}

/* perf script takes --stitch-lbr only when callchain_param_setup() finds
 * LBR call graphs in the events' sample types taken together (user
 * registers and stack make them DWARF ones), which it asks before any
 * record is read: in pipe mode there is no event yet. */
static void check_stitch_lbr(struct ps_feed *feed)
{
	uint64_t type = 0;

	for (size_t i = 0; i < ps_reader_nr_attrs(feed->reader); i++)
		type |= ps_reader_attr(feed->reader, i)->sample_type;
	if ((type & PERF_SAMPLE_BRANCH_STACK) &&
	    (type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) !=
	            (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER))
		return;
	feed->opts.stitch_lbr = false;
	ps_log(feed->opts.log, feed->opts.log_ctx, PS_LOG_WARN,
	       "Can't find LBR callchain. Switch off --stitch-lbr. "
	       "Please apply --call-graph lbr when recording.");
}

int ps_feed_open(struct ps_feed *feed, const char *path, const struct ps_session_opts *opts,
                 bool record_names, bool unwind_only, char *errmsg, size_t errmsg_size)
{
	struct ps_reader_opts ropts = { .sz = sizeof(ropts),
		                        .order = opts->file_order ? PS_ORDER_FILE : PS_ORDER_TIME };
	const struct ps_session_opts *o = &feed->opts;
	struct ps_archive *archive;
	int err;

	memset(feed, 0, sizeof(*feed));
	feed->opts = *opts;
	feed->errmsg = errmsg;
	feed->errmsg_size = errmsg_size;
	ropts.force = o->force;
	ropts.log = o->log;
	ropts.log_ctx = o->log_ctx;
	err = ps_reader_open_errmsg(path, &ropts, &feed->reader, errmsg, errmsg_size);
	if (err)
		return err;
	feed->files.used = o->file_used;
	feed->files.used_ctx = o->file_used_ctx;
	archive = ps_reader_archive(feed->reader);
	if (archive)
		ps_feed_archive_opts(archive, &feed->opts, &feed->files, &path);
	if (o->stitch_lbr)
		check_stitch_lbr(feed);
	if (o->time_percent) {
		err = percent_time_range(feed);
		if (err)
			return err;
	}

	struct ps_pipeline_opts popts = {
		.sz = sizeof(popts),
		.symbols = {
			.sz = sizeof(popts.symbols),
			.symfs = o->symfs,
			.symfs_dirs = o->symfs_dirs,
			.nr_symfs_dirs = o->nr_symfs_dirs,
			.buildid_dir = o->buildid_dir,
			/* none given: which file, as perf decides (the
			 * capture's kernel build-id against the running one's) */
			.kallsyms = o->kallsyms,
			.vmlinux = o->vmlinux,
			.no_inline = o->no_inline,
			.srcline = o->srcline,
			.full_source_path = o->full_source_path,
			.no_demangle = o->no_demangle,
			.srccode = o->srccode,
			.log = o->log,
			.log_ctx = o->log_ctx,
			.files = feed->files,
			.record_names = record_names,
			.no_live_processes = !made_here(feed->reader),
			.names_unused = unwind_only,
		},
		.unwind = {
			.sz = sizeof(popts.unwind),
			.style = o->unwind_style,
			.engine = o->unwind_engine,
			.log = o->log,
			.log_ctx = o->log_ctx,
		},
		.max_stack = o->max_stack,
		.no_inline = o->no_inline,
		.no_callchain = o->no_callchain,
		.features = ps_reader_features(feed->reader),
		.stitch_lbr = o->stitch_lbr,
		.show_kernel_path = o->show_kernel_path,
	};
	err = ps_pipeline_new(&popts, &feed->pipeline, errmsg, errmsg_size);
	if (err)
		return err;

	struct ps_python_opts pyopts = {
		.sz = sizeof(pyopts),
		.mode = o->python,
		.perf_map_dir = o->perf_map_dir,
		.perf_map_dirs = o->perf_map_dirs,
		.nr_perf_map_dirs = o->nr_perf_map_dirs,
		.perf_data_path = path,
		.files = &feed->files,
		.log = o->log,
		.log_ctx = o->log_ctx,
		.srcline = o->srcline,
		.full_source_path = o->full_source_path,
	};
	err = ps_python_new(&pyopts, feed->pipeline, &feed->python);
	if (err)
		return ps_feed_fail(feed, err, "out of memory");
	return 0;
}

void ps_feed_close(struct ps_feed *feed)
{
	ps_deferred_free(feed->deferred);
	feed->deferred = NULL;
	ps_read_tracker_free(feed->reads);
	feed->reads = NULL;
	ps_pipeline_free(feed->pipeline);
	ps_python_free(feed->python);
	ps_reader_close(feed->reader);
}

bool ps_feed_has_user_stacks(const struct ps_feed *feed)
{
	const uint64_t bits =
	        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	if (feed->opts.no_callchain)
		return false;
	for (size_t i = 0; i < ps_reader_nr_attrs(feed->reader); i++)
		if ((ps_reader_attr(feed->reader, i)->sample_type & bits) == bits)
			return true;
	return false;
}

/* ---- filters -------------------------------------------------------- */

static bool in_list(const int32_t *list, size_t nr, int32_t v)
{
	if (!nr)
		return true;
	for (size_t i = 0; i < nr; i++)
		if (list[i] == v)
			return true;
	return false;
}

static bool comm_wanted(const struct ps_session_opts *o, const char *comm)
{
	if (!o->nr_comms)
		return true;
	for (size_t i = 0; i < o->nr_comms; i++)
		if (strcmp(o->comms[i], comm) == 0)
			return true;
	return false;
}

static bool sample_wanted(const struct ps_session_opts *o, const struct ps_sample *sample)
{
	if (!in_list(o->pids, o->nr_pids, (int32_t)sample->pid) ||
	    !in_list(o->tids, o->nr_tids, (int32_t)sample->tid) ||
	    !in_list(o->cpus, o->nr_cpus, (int32_t)sample->cpu))
		return false;
	if (o->time_start && sample->time < o->time_start)
		return false;
	if (o->time_end && sample->time > o->time_end)
		return false;
	return true;
}

/* ---- reading -------------------------------------------------------- */

static int apply(struct ps_feed *feed, const struct ps_event *ev)
{
	int err = ps_pipeline_apply(feed->pipeline, ev);

	return err ? ps_feed_fail(feed, err, "out of memory") : 0;
}

/* Samples whose user callchain was deferred wait for it (deferred.c);
 * the others, and the records, go through in order. */
static int hold_deferred(struct ps_feed *feed, const struct ps_event *ev)
{
	int ret;

	if (!feed->deferred && ps_deferred_new(&feed->deferred))
		return ps_feed_fail(feed, -ENOMEM, "out of memory");
	ret = ps_deferred_hold(feed->deferred, ev);
	if (ret < 0)
		return ps_feed_fail(feed, ret, "out of memory");
	if (ret > 0 && !feed->deferred_full_warned) {
		feed->deferred_full_warned = true;
		ps_log(feed->opts.log, feed->opts.log_ctx, PS_LOG_WARN,
		       "at offset %#" PRIx64 ": more than %d samples wait for their deferred user "
		       "callchain; the oldest are printed without it",
		       ev->offset, PS_DEFERRED_MAX_HELD);
	}
	return 0;
}

/* The next sample to deliver: a held one that is ready, else the next
 * one read. 0 at the end. */
static int next_sample(struct ps_feed *feed, const struct ps_event **out)
{
	const struct ps_event *ev;
	int ret;

	for (;;) {
		if (feed->deferred && (*out = ps_deferred_next(feed->deferred, feed->reader)))
			return 1;
		ret = ps_reader_next(feed->reader, &ev);
		if (ret < 0)
			return ps_feed_fail(feed, ret, "%s", ps_reader_errmsg(feed->reader));
		if (ret == 0) {
			if (!feed->deferred || feed->deferred_flushed)
				return 0;
			feed->deferred_flushed = true;
			ps_deferred_flush(feed->deferred);
			continue;
		}
		if (ev->type == PERF_RECORD_SAMPLE) {
			if (!ps_deferred_is_deferred(ev)) {
				*out = ev;
				return 1;
			}
			ret = hold_deferred(feed, ev);
			if (ret)
				return ret;
			continue;
		}
		if (ev->type == PS_RECORD_CALLCHAIN_DEFERRED && feed->deferred &&
		    ps_deferred_release(feed->deferred, ev))
			return ps_feed_fail(feed, -ENOMEM, "out of memory");
		ret = apply(feed, ev);
		if (!ret && feed->opts.record)
			ret = feed->opts.record(feed->opts.record_ctx, ev);
		if (ret)
			return ret;
	}
}

int ps_feed_next(struct ps_feed *feed, struct ps_feed_sample *out)
{
	struct ps_machine *machine = ps_pipeline_machine(feed->pipeline);
	const struct ps_event *ev = NULL;
	int ret;

	while ((ret = next_sample(feed, &ev)) > 0) {
		const struct ps_sample *sample = &ev->u.sample;
		const struct ps_sample_delivery *deliveries = NULL;
		size_t nr_deliveries = 0;

		/* perf delivers a sample's read values before any filter */
		if (ev->attr && (ev->attr->sample_type & PERF_SAMPLE_READ) &&
		    ((!feed->reads && ps_read_tracker_new(&feed->reads)) ||
		     ps_read_tracker_deliver(feed->reads, feed->reader, ev, &deliveries,
		                             &nr_deliveries)))
			return ps_feed_fail(feed, -ENOMEM, "out of memory");
		if (!sample_wanted(&feed->opts, sample))
			continue;
		struct ps_thread *thread =
		        ps_machine_thread(machine, (int32_t)sample->pid, (int32_t)sample->tid);
		if (!thread)
			return ps_feed_fail(feed, -ENOMEM, "out of memory");
		if (!comm_wanted(&feed->opts, thread->comm))
			continue;
		/* thread__find_map() marks a guest's samples filtered (perf's
		 * perf_guest is off outside perf kvm): perf script and perf
		 * report pass them over, once their thread is made */
		if ((ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_GUEST_KERNEL ||
		    (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_GUEST_USER)
			continue;
		out->event = ev;
		out->thread = thread;
		out->process = ps_machine_thread_process(machine, thread);
		out->seq = feed->passed++;
		out->deliveries = deliveries;
		out->nr_deliveries = nr_deliveries;
		return 1;
	}
	return ret;
}

int ps_feed_read_to_end(struct ps_feed *feed)
{
	const struct ps_event *ev;
	int ret;

	while ((ret = ps_reader_next(feed->reader, &ev)) > 0) {
		if (ev->type == PERF_RECORD_SAMPLE)
			continue;
		ret = apply(feed, ev);
		if (ret)
			return ret;
	}
	if (ret < 0)
		return ps_feed_fail(feed, ret, "%s", ps_reader_errmsg(feed->reader));
	return 0;
}
