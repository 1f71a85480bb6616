/* The public machine model (ps_model_*): a pipeline that only follows
 * the records a caller reads itself, with the same kernel symbols as a
 * session would use, and perf's machine__resolve() for a sample: its
 * thread and the DSO of the map that holds its IP. It never unwinds.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "base/message.h"
#include "base/opts.h"
#include "machine/machine.h"
#include "reader/reader.h"
#include "session/session_priv.h"

struct ps_model {
	struct ps_pipeline *pipeline;
	struct ps_file_hooks files;
	struct ps_model_opts opts;
};

const char *ps_model_text_poke_symbol(void *model, uint64_t addr, uint64_t *start)
{
	struct ps_model *m = model;

	return m ? ps_pipeline_text_poke_symbol(m->pipeline, addr, start) : NULL;
}

int ps_model_open(const struct ps_reader *reader, const struct ps_model_opts *opts,
                  struct ps_model **out)
{
	struct ps_session_opts so = { .sz = sizeof(so) };
	struct ps_archive *archive;
	struct ps_model *model;
	const char *path;
	char errmsg[PS_MSG_MAX];
	int err;

	*out = NULL;
	if (!reader)
		return -EINVAL;
	model = calloc(1, sizeof(*model));
	if (!model)
		return -ENOMEM;
	if (ps_opts_copy(&model->opts, sizeof(model->opts), opts)) {
		ps_log(opts->log, opts->log_ctx, PS_LOG_ERROR, "%s", PS_OPTS_ERRMSG);
		free(model);
		return -EINVAL;
	}
	so.symfs = model->opts.symfs;
	so.buildid_dir = model->opts.buildid_dir;
	so.kallsyms = model->opts.kallsyms;
	archive = ps_reader_archive(reader);
	if (archive)
		ps_feed_archive_opts(archive, &so, &model->files, &path);
	struct ps_pipeline_opts popts = {
		.sz = sizeof(popts),
		.symbols = {
			.sz = sizeof(popts.symbols),
			.symfs = so.symfs,
			.buildid_dir = so.buildid_dir,
			.kallsyms = so.kallsyms,
			.vmlinux = so.vmlinux,
			.log = model->opts.log,
			.log_ctx = model->opts.log_ctx,
			.files = model->files,
		},
		.unwind = { .sz = sizeof(popts.unwind) },
		.features = ps_reader_features(reader),
	};
	err = ps_pipeline_new(&popts, &model->pipeline, errmsg, sizeof(errmsg));
	if (err) {
		ps_log(model->opts.log, model->opts.log_ctx, PS_LOG_ERROR, "%s", errmsg);
		free(model);
		return err;
	}
	*out = model;
	return 0;
}

void ps_model_close(struct ps_model *model)
{
	if (!model)
		return;
	ps_pipeline_free(model->pipeline);
	free(model);
}

int ps_model_apply(struct ps_model *model, const struct ps_event *event)
{
	const struct ps_sample *s = &event->u.sample;

	/* a sample makes its thread when it is new, which a FORK delivered
	 * later then replaces, as perf does */
	if (event->type == PERF_RECORD_SAMPLE)
		return ps_machine_thread(ps_pipeline_machine(model->pipeline), (int32_t)s->pid,
		                         (int32_t)s->tid)
		               ? 0
		               : -ENOMEM;
	return ps_pipeline_apply(model->pipeline, event);
}

/* The DSO's long name, which `perf report -D` prints: the kernel's is
 * "[kernel.kallsyms]" (the map is recorded as "[kernel.kallsyms]_text"),
 * a module's the path its MMAP recorded, any other the recorded name as
 * the machine model keeps it ("/tmp/perf-PID.map" for JIT code). */
static const char *long_name(const struct ps_mapped_object *object)
{
	if (object->kernel && strncmp(object->name, "[kernel.kallsyms]", 17) == 0)
		return "[kernel.kallsyms]";
	return object->name;
}

int ps_model_locate(struct ps_model *model, const struct ps_event *sample,
                    struct ps_sample_location *out)
{
	struct ps_machine *machine = ps_pipeline_machine(model->pipeline);
	const struct ps_sample *s = &sample->u.sample;
	unsigned cpumode = sample->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	struct ps_process *process = NULL;
	const struct ps_map *map;
	struct ps_thread *thread;

	memset(out, 0, sizeof(*out));
	if (sample->type != PERF_RECORD_SAMPLE)
		return -EINVAL;
	thread = ps_machine_thread(machine, (int32_t)s->pid, (int32_t)s->tid);
	if (!thread)
		return -ENOMEM;
	out->comm = thread->comm;
	out->tid = thread->tid;
	if (cpumode != PERF_RECORD_MISC_KERNEL && cpumode != PERF_RECORD_MISC_USER) {
		out->hypervisor = true;
		return 0;
	}
	/* a thread of unknown process (pid -1) has maps of its own, which
	 * no MMAP can fill */
	if (cpumode == PERF_RECORD_MISC_USER && thread->pid != -1) {
		process = ps_machine_thread_process(machine, thread);
		if (!process)
			return -ENOMEM;
	}
	/* without PERF_SAMPLE_IP the ip is 0, for the reader as for perf */
	map = ps_pipeline_find_map(model->pipeline, process, cpumode, s->ip);
	out->dso = map ? long_name(map->object) : NULL;
	return 0;
}
