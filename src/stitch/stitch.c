/* The public stack API (ps_session_*): reads a capture in perf's order,
 * keeps the machine model up to date, and gives each sample its stack:
 * the recorded callchain (kernel part, or everything with -g) followed by
 * the user stack unwound from the DWARF stack copy, every frame resolved
 * to the names perf script prints. Ties the reader, session, unwind and
 * symbols modules together; none of them knows about the others.
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "archive/archive.h"
#include "reader/reader.h"
#include "stitch/stitch.h"
#include "stitch/recorded.h"

#define MAX_INLINE 32

static int fail(struct ps_session *s, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int fail(struct ps_session *s, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* ---- objects and names ------------------------------------------- */

/* The name perf prints for an object: the kernel text map is recorded as
 * "[kernel.kallsyms]_text" but printed as "[kernel.kallsyms]". */
static const char *object_display_name(const struct ps_mapped_object *object)
{
	if (object->kernel && strncmp(object->name, "[kernel.kallsyms]", 17) == 0)
		return "[kernel.kallsyms]";
	return object->name;
}

/* Symbols know an object by the name perf gives its DSO: the kernel's is
 * "[kernel.kallsyms]" (-F srcline prints "[kernel.kallsyms][ADDR]"), not
 * the recorded map name "[kernel.kallsyms]_text". */
struct ps_dso *ps_stitch_object_dso(struct ps_session *s, struct ps_mapped_object *object)
{
	if (!object->user)
		object->user = ps_symbols_dso(s->symbols, object_display_name(object),
		                              object->has_build_id ? object->build_id : NULL,
		                              object->has_build_id ? object->build_id_size : 0);
	return object->user;
}

static struct ps_frame *push_frame(struct ps_session *s)
{
	if (s->nr_frames == s->cap_frames) {
		size_t cap = s->cap_frames ? s->cap_frames * 2 : 256;
		struct ps_frame *f = realloc(s->frames, cap * sizeof(*f));
		if (!f)
			return NULL;
		s->frames = f;
		s->cap_frames = cap;
	}
	struct ps_frame *f = &s->frames[s->nr_frames++];
	memset(f, 0, sizeof(*f));
	return f;
}

static const struct ps_map *find_frame_map(struct ps_session *s, const struct ps_process *process,
                                           uint64_t ip)
{
	const struct ps_map *map = s->hint_map;

	if (map && s->hint_process == process && ip >= map->start && ip < map->end)
		return map;
	map = ps_process_find_map(process, ip);
	if (map) {
		s->hint_process = process;
		s->hint_map = map;
	}
	return map;
}

/* Append the frame(s) for one address. cpumode picks the address space;
 * inlines expands inline chains (perf does so for DWARF-unwound frames). */
static int add_frames(struct ps_session *s, struct ps_process *process, unsigned cpumode,
                      uint64_t ip, bool inlines)
{
	struct ps_frame_name names[MAX_INLINE];
	const struct ps_map *map = NULL;
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
	struct ps_frame *f;

	if (kernel)
		map = find_frame_map(s, ps_machine_kernel(s->machine), ip);
	else if (cpumode == PERF_RECORD_MISC_USER && process)
		map = find_frame_map(s, process, ip);
	if (!map) {
		f = push_frame(s);
		if (!f)
			return -ENOMEM;
		f->addr = ip;
		f->kernel = kernel;
		return 0;
	}
	/* kernel objects are looked up by raw address, user ones by file offset */
	uint64_t addr = map->object->kernel || map->identity ? ip : ip - map->start + map->pgoff;
	size_t n = 0;
	if (map->object->jit_pid) {
		/* JIT code: named by the perf map (and jitdump) it wrote */
		f = push_frame(s);
		if (!f)
			return -ENOMEM;
		f->addr = addr;
		f->dso = map->object->name;
		ps_stitch_python_name_frame(s, map->object, process ? ps_process_pid(process) : 0,
		                            ip, f);
		s->saw_python |= f->python;
		return 0;
	}
	struct ps_dso *dso = ps_stitch_object_dso(s, map->object);
	if (dso)
		n = ps_dso_resolve(dso, addr, inlines, names, MAX_INLINE);
	if (n == 0) {
		names[0] = (struct ps_frame_name){ 0 };
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		f = push_frame(s);
		if (!f)
			return -ENOMEM;
		f->addr = addr;
		f->sym = names[i].sym;
		f->symoff = names[i].offset;
		f->inlined = names[i].inlined;
		f->srcline = names[i].srcline;
		f->kernel = map->object->kernel;
		f->dso = object_display_name(map->object);
		/* CPython's trampolines in the ELF files `perf inject --jit`
		 * makes of a jitdump (jitted-PID-N.so) */
		if (f->sym && f->sym[0] == 'p' && strncmp(f->sym, "py::", 4) == 0 && !f->kernel) {
			f->python = true;
			s->saw_python = true;
		}
	}
	return 0;
}

/* ---- unwinding ---------------------------------------------------- */

/* The base perf's libunwind path uses for an object: that of its lowest
 * mapping in the process (see ps_unwind_map.libunwind_base). */
static uint64_t lowest_base(struct process_unwind *pu, const struct ps_mapped_object *object)
{
	const struct ps_process *p = pu->process;
	size_t slot = ((uintptr_t)object >> 4) % BASE_CACHE;
	const struct ps_map *map;

	if (pu->base_generation != ps_process_generation(p)) {
		memset(pu->bases, 0, sizeof(pu->bases));
		pu->base_generation = ps_process_generation(p);
	}
	if (pu->bases[slot].object == object)
		return pu->bases[slot].base;
	map = ps_process_first_map_of(p, object);
	if (!map)
		return 0;
	pu->bases[slot].object = object;
	pu->bases[slot].base = map->start - map->pgoff;
	return pu->bases[slot].base;
}

static bool find_map(void *ctx, uint64_t addr, struct ps_unwind_map *out)
{
	struct process_unwind *pu = ctx;
	const struct ps_map *map;

	if (pu->last_valid && pu->last_generation == ps_process_generation(pu->process) &&
	    addr >= pu->last.start && addr < pu->last.end) {
		*out = pu->last;
		return true;
	}
	map = ps_process_find_map(pu->process, addr);
	if (!map)
		return false;
	memset(out, 0, sizeof(*out));
	out->start = map->start;
	out->end = map->end;
	out->pgoff = map->pgoff;
	out->name = map->object->name;
	out->exec = (map->prot & PROT_EXEC) != 0;
	out->libunwind_base = lowest_base(pu, map->object);
	if (!map->object->kernel) {
		struct ps_dso *dso = ps_stitch_object_dso(pu->session, map->object);
		if (dso) {
			out->path = ps_dso_file(dso);
			const char *debug = ps_dso_symbol_file(dso);
			if (debug && out->path && strcmp(debug, out->path) != 0)
				out->debug_path = debug;
		}
	}
	pu->last = *out;
	pu->last_generation = ps_process_generation(pu->process);
	pu->last_valid = true;
	return true;
}

static const struct ps_unwind_callbacks native_callbacks = { .find_map = find_map };
/* Python modes unwind through CPython's trampolines */
static const struct ps_unwind_callbacks python_callbacks = {
	.find_map = find_map,
	.frame_rule = ps_stitch_python_frame_rule,
};

static void process_unwind_free(void *user)
{
	struct process_unwind *pu = user;
	ps_unwinder_free(pu->unwinder);
	free(pu);
}

static struct process_unwind *process_unwinder(struct ps_session *s, struct ps_process *process)
{
	struct process_unwind *pu = ps_process_state(process, PS_PROCESS_SLOT_UNWIND);
	if (pu)
		return pu;
	pu = calloc(1, sizeof(*pu));
	if (!pu)
		return NULL;
	pu->session = s;
	pu->process = process;
	if (ps_unwinder_new(s->opts.python == PS_PYTHON_NATIVE ? &native_callbacks
	                                                       : &python_callbacks,
	                    pu, &s->unwind_opts, &pu->unwinder)) {
		free(pu);
		return NULL;
	}
	ps_process_set_state(process, PS_PROCESS_SLOT_UNWIND, pu, process_unwind_free);
	return pu;
}

/* Whether the sample has a user stack to unwind (perf bails out when
 * nothing was captured). */
static bool has_user_stack(const struct ps_session *s, const struct ps_event *ev,
                           const struct ps_process *process)
{
	const struct ps_sample *sample = &ev->u.sample;
	uint64_t type = ev->attr->sample_type;

	return !s->opts.no_callchain && (type & PERF_SAMPLE_CALLCHAIN) &&
	       (type & PERF_SAMPLE_REGS_USER) && (type & PERF_SAMPLE_STACK_USER) &&
	       sample->regs_user.abi && sample->stack_dyn_size && process;
}

/* Unwind the sample's user stack into s->pcs: the number of PCs, or
 * -ENOMEM. */
static int unwind_sample(struct ps_session *s, struct ps_process *process,
                         const struct ps_sample *sample, enum ps_unwind_stop *stop)
{
	struct ps_unwind_sample us = {
		.pid = sample->pid,
		.tid = sample->tid,
		.regs_abi = sample->regs_user.abi,
		.regs_mask = sample->regs_user.mask,
		.nr_regs = sample->regs_user.nr,
		.regs = sample->regs_user.regs,
		.stack = sample->stack_data,
		.stack_size = sample->stack_dyn_size,
	};
	struct process_unwind *pu = process_unwinder(s, process);
	int n;

	if (!pu)
		return -ENOMEM;
	/* Python modes: the leaf's saved registers, for the trampolines */
	us.recover_popped = s->opts.python != PS_PYTHON_NATIVE && ps_stitch_python_has_jit(pu);
	n = ps_unwinder_unwind(pu->unwinder, &us, s->pcs, s->opts.max_stack, stop);
	return n == -ENOMEM ? n : n < 0 ? 0 : n;
}

static int add_unwound(struct ps_session *s, struct ps_process *process, const struct ps_event *ev)
{
	enum ps_unwind_stop stop;
	int n;

	if (!has_user_stack(s, ev, process))
		return 0;
	if (ps_stitch_jobs_running(s->jobs)) {
		/* a worker unwound it; the process's unwind state still
		 * holds what the Python merge looks up */
		if (!process_unwinder(s, process))
			return -ENOMEM;
		int ret = ps_stitch_jobs_take(s, &n, &stop);

		if (ret < 0)
			return ret;
		if (ret > 0) /* the worker has no result: unwind here */
			n = unwind_sample(s, process, &ev->u.sample, &stop);
		if (n < 0)
			return n;
	} else {
		n = unwind_sample(s, process, &ev->u.sample, &stop);
		if (n < 0)
			return n;
	}
	s->unwound = true;
	s->stop = stop;
	for (int i = 0; i < n; i++) {
		int err = add_frames(s, process, PERF_RECORD_MISC_USER, s->pcs[i],
		                     !s->opts.no_inline);
		if (err)
			return err;
	}
	return 0;
}

/* The recorded callchain, as perf's thread__resolve_callchain_sample
 * walks it: context markers switch the address space, at most max_stack
 * real entries, an unknown marker discards the chain. */
static int add_callchain(struct ps_session *s, struct ps_process *process,
                         const struct ps_sample *sample)
{
	unsigned cpumode = PERF_RECORD_MISC_USER;
	size_t entries = 0;

	for (size_t i = 0; i < sample->callchain_nr && entries < s->opts.max_stack; i++) {
		uint64_t ip = sample->callchain[i];
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			switch (ip) {
			case (uint64_t)PERF_CONTEXT_HV:
				cpumode = PERF_RECORD_MISC_HYPERVISOR;
				break;
			case (uint64_t)PERF_CONTEXT_KERNEL:
				cpumode = PERF_RECORD_MISC_KERNEL;
				break;
			case (uint64_t)PERF_CONTEXT_USER:
				cpumode = PERF_RECORD_MISC_USER;
				break;
			default:
				s->nr_frames = 0;
				return 0;
			}
			continue;
		}
		entries++;
		int err = add_frames(s, process, cpumode, ip, false);
		if (err)
			return err;
	}
	return 0;
}

/* ---- filters ------------------------------------------------------ */

static bool in_list(const int32_t *list, size_t nr, int32_t v)
{
	if (!nr)
		return true;
	for (size_t i = 0; i < nr; i++)
		if (list[i] == v)
			return true;
	return false;
}

static bool comm_wanted(const struct ps_session *s, const char *comm)
{
	if (!s->opts.nr_comms)
		return true;
	for (size_t i = 0; i < s->opts.nr_comms; i++)
		if (strcmp(s->opts.comms[i], comm) == 0)
			return true;
	return false;
}

static bool sample_wanted(const struct ps_session *s, const struct ps_sample *sample)
{
	const struct ps_session_opts *o = &s->opts;
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

/* ---- the session -------------------------------------------------- */

/* Kernel symbols: an explicit file, or this machine's /proc/kallsyms when
 * the capture was made here (same host name and kernel release). */
static const char *kernel_symbols_file(const struct ps_session *s)
{
	static const char proc_kallsyms[] = "/proc/kallsyms";
	const struct ps_features *f = ps_reader_features(s->reader);
	struct utsname u;

	if (s->opts.kallsyms || s->opts.vmlinux)
		return s->opts.kallsyms;
	if (uname(&u) != 0 || !f->hostname || !f->osrelease)
		return NULL;
	if (strcmp(u.nodename, f->hostname) != 0 || strcmp(u.release, f->osrelease) != 0)
		return NULL;
	return proc_kallsyms;
}

/* A capture that came in an archive is analysed as it was where the
 * archive was made: with the options it was made with, and only the files
 * it holds (a path it does not hold does not exist). *path becomes the
 * capture's path as given then, whose directory is searched for perf
 * maps. */
static void use_archive(struct ps_session *s, struct ps_archive *archive, const char **path)
{
	const struct ps_manifest *m = ps_archive_manifest(archive);
	enum ps_archive_kind kind;
	const char *kernel = ps_archive_kernel(archive, &kind);

	s->opts.symfs = m->symfs;
	s->opts.buildid_dir = m->buildid_dir;
	s->opts.perf_map_dir = m->perf_map_dir;
	s->opts.vmlinux = kernel && kind == PS_ARCHIVE_VMLINUX ? kernel : NULL;
	/* no kernel symbols were read: a path the archive lacks keeps it so */
	s->opts.kallsyms = kernel && kind == PS_ARCHIVE_KALLSYMS ? kernel
	                   : kernel                              ? NULL
	                                                         : "/proc/kallsyms";
	s->files.resolve = ps_archive_resolve;
	s->files.resolve_ctx = archive;
	*path = m->perf_data_path;
}

/* perf's --time percentages (util/time-utils.c): the range is that share
 * of the span from the first to the last sample, rounded to the
 * nanosecond; an end short of the last sample is one nanosecond earlier,
 * so that 0%-50% and 50%-100% do not share a sample. */
static int percent_time_range(struct ps_session *s)
{
	const struct ps_features *f = ps_reader_features(s->reader);
	double start = s->opts.time_percent_start, end = s->opts.time_percent_end;
	uint64_t total;

	if (!(start >= 0.0 && start <= end && end <= 1.0))
		return fail(s, -EINVAL, "a --time percentage outside 0%%-100%%");
	if (!f->has_sample_time || f->last_sample_time < f->first_sample_time)
		return fail(s, -EINVAL,
		            "%s: --time with percentages needs the capture's first and last "
		            "sample times (the SAMPLE_TIME feature), which it does not have",
		            ps_reader_path(s->reader));
	total = f->last_sample_time - f->first_sample_time;
	s->opts.time_start = f->first_sample_time + (uint64_t)llround(start * (double)total);
	s->opts.time_end = f->first_sample_time + (uint64_t)llround(end * (double)total);
	if (s->opts.time_end > s->opts.time_start && s->opts.time_end != f->last_sample_time)
		s->opts.time_end--;
	/* 0 would mean "open" to sample_wanted() */
	if (!s->opts.time_start)
		s->opts.time_start = 1;
	return 0;
}

/* Whether an event of the capture records user stacks to unwind. */
static bool has_user_stacks(const struct ps_session *s)
{
	const uint64_t bits =
	        PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	if (s->opts.no_callchain)
		return false;
	for (size_t i = 0; i < ps_reader_nr_attrs(s->reader); i++)
		if ((ps_reader_attr(s->reader, i)->sample_type & bits) == bits)
			return true;
	return false;
}

static int session_open(const char *path, const struct ps_session_opts *opts, unsigned shard_index,
                        unsigned shard_count, bool record_names, struct ps_session **out)
{
	struct ps_session *s = calloc(1, sizeof(*s));
	struct ps_archive *archive;
	struct ps_reader_opts ropts = { .sz = sizeof(ropts), .order = PS_ORDER_TIME };
	const char *capture = path;
	int err;

	*out = s;
	if (!s)
		return -ENOMEM;
	if (opts) {
		size_t n = opts->sz < sizeof(s->opts) ? opts->sz : sizeof(s->opts);
		memcpy(&s->opts, opts, n);
	}
	s->opts.sz = sizeof(s->opts);
	s->worker = shard_count > 0;
	s->shard_index = shard_index;
	s->shard_count = shard_count;
	if (s->worker) {
		s->opts.jobs = 0;
	} else if (s->opts.jobs > 1) {
		err = ps_stitch_jobs_new(s);
		if (err)
			return fail(s, err, "out of memory");
	}
	if (!s->opts.max_stack)
		s->opts.max_stack = PS_UNWIND_DEFAULT_MAX_FRAMES;
	if (s->opts.max_stack > sizeof(s->pcs) / sizeof(s->pcs[0]))
		s->opts.max_stack = sizeof(s->pcs) / sizeof(s->pcs[0]);
	ropts.force = s->opts.force;
	ropts.log = s->opts.log;
	ropts.log_ctx = s->opts.log_ctx;
	err = ps_reader_open(path, &ropts, &s->reader);
	if (err)
		return fail(s, err, "%s", ps_reader_errmsg(s->reader));
	err = ps_machine_new(&s->machine);
	if (err)
		return fail(s, err, "out of memory");
	ps_machine_set_features(s->machine, ps_reader_features(s->reader));
	s->files.used = s->opts.file_used;
	s->files.used_ctx = s->opts.file_used_ctx;
	archive = ps_reader_archive(s->reader);
	if (archive)
		use_archive(s, archive, &path);
	if (s->opts.time_percent) {
		err = percent_time_range(s);
		if (err)
			return err;
	}

	struct ps_symbols_opts sopts = {
		.sz = sizeof(sopts),
		.symfs = s->opts.symfs,
		.buildid_dir = s->opts.buildid_dir,
		.vmlinux = s->opts.vmlinux,
		.no_inline = s->opts.no_inline,
		.srcline = s->opts.srcline,
		.log = s->opts.log,
		.log_ctx = s->opts.log_ctx,
		.files = s->files,
		.record_names = record_names,
	};
	sopts.kallsyms = archive ? s->opts.kallsyms : kernel_symbols_file(s);
	err = ps_symbols_new(&sopts, &s->symbols);
	if (err)
		return fail(s, err, "cannot set up symbol lookup: %s", strerror(-err));

	err = ps_stitch_python_new(s, path);
	if (err)
		return fail(s, err, "out of memory");

	s->unwind_opts = (struct ps_unwind_opts){
		.sz = sizeof(s->unwind_opts),
		.max_frames = s->opts.max_stack,
		.emulate_libunwind_quirks = !s->opts.libdw_unwind,
		.log = s->opts.log,
		.log_ctx = s->opts.log_ctx,
		.libdwfl_only = s->opts.unwind_libdwfl_only,
	};
	/* a capture that can be read once per worker (not an archive) and
	 * has user stacks to unwind */
	if (s->opts.jobs > 1 && !archive && has_user_stacks(s))
		return ps_stitch_jobs_start(s, capture);
	return 0;
}

int ps_session_open(const char *path, const struct ps_session_opts *opts, struct ps_session **out)
{
	return session_open(path, opts, 0, 0, false, out);
}

int ps_session_open_recording(const char *path, const struct ps_session_opts *opts,
                              struct ps_session **out)
{
	return session_open(path, opts, 0, 0, true, out);
}

int ps_stitch_open_worker(const char *path, const struct ps_session_opts *opts, unsigned index,
                          unsigned count, struct ps_session **out)
{
	return session_open(path, opts, index, count, false, out);
}

void ps_session_close(struct ps_session *s)
{
	if (!s)
		return;
	ps_machine_free(s->machine);
	ps_stitch_python_free(s->python);
	ps_symbols_free(s->symbols);
	ps_reader_close(s->reader);
	free(s->frames);
	/* last: the workers and everything above log through it */
	ps_stitch_jobs_free(s->jobs);
	free(s);
}

const char *ps_session_errmsg(const struct ps_session *s)
{
	return s ? s->errmsg : "out of memory";
}

int ps_session_recorded_names(struct ps_session *s, const char *debug_path, struct ps_strbuf *out)
{
	return ps_symbols_recorded_names(s->symbols, debug_path, out);
}

struct ps_reader *ps_session_reader(const struct ps_session *s)
{
	return s->reader;
}

/* Keep the model and the per-process unwinders in step with the record. */
static int apply_record(struct ps_session *s, const struct ps_event *ev)
{
	int err = ps_machine_process_event(s->machine, ev);
	if (err)
		return fail(s, err, "out of memory");
	if (ev->type == PERF_RECORD_MMAP || ev->type == PERF_RECORD_MMAP2) {
		const struct ps_record_mmap *m = &ev->u.mmap;
		unsigned cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
		if (cpumode == PERF_RECORD_MISC_KERNEL && m->filename &&
		    strncmp(m->filename, "[kernel.kallsyms]", 17) == 0) {
			/* pgoff holds the address of the reference symbol
			 * (_text), which tells how far KASLR moved the kernel */
			const char *ref = strchr(m->filename, ']');
			if (ref && ref[1] == '_')
				ps_symbols_kernel_reloc(s->symbols, ref + 2, m->pgoff);
			return 0;
		}
		struct ps_process *p = ps_machine_process(s->machine, (int32_t)m->pid);
		struct process_unwind *pu = p ? ps_process_state(p, PS_PROCESS_SLOT_UNWIND) : NULL;
		if (pu) {
			struct ps_unwind_map um;
			if (find_map(pu, m->start, &um))
				ps_unwinder_map_changed(pu->unwinder, &um);
		}
	} else if (ev->type == PERF_RECORD_COMM && (ev->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		struct ps_process *p = ps_machine_process(s->machine, (int32_t)ev->u.comm.pid);
		struct process_unwind *pu = p ? ps_process_state(p, PS_PROCESS_SLOT_UNWIND) : NULL;
		if (pu)
			ps_unwinder_reset(pu->unwinder);
	}
	return 0;
}

static int build_stack(struct ps_session *s, const struct ps_event *ev, struct ps_thread *thread)
{
	const struct ps_sample *sample = &ev->u.sample;
	const struct ps_attr *attr = ev->attr;
	struct ps_process *process = ps_machine_process(s->machine, thread->pid);
	int err = 0;

	s->nr_frames = 0;
	s->hint_map = NULL;
	s->unwound = false;
	s->saw_python = false;
	s->stack.event = ev;
	s->stack.sample = sample;
	s->stack.attr = attr;
	s->stack.comm = thread->comm;
	s->stack.has_callchain =
	        !s->opts.no_callchain && (attr->sample_type & PERF_SAMPLE_CALLCHAIN);
	if (!s->stack.has_callchain) {
		err = add_frames(s, process, ev->misc & PERF_RECORD_MISC_CPUMODE_MASK, sample->ip,
		                 false);
		if (!err && s->nr_frames)
			s->frames[0].addr = sample->ip; /* printed raw without a callchain */
	} else {
		err = add_callchain(s, process, sample);
		if (!err)
			err = add_unwound(s, process, ev);
	}
	if (err && s->errmsg_set)
		return err; /* a worker failed: s->errmsg says how */
	if (err)
		return fail(s, err, "out of memory");
	s->stack.nr_frames = s->nr_frames;
	s->stack.frames = s->frames;
	if (s->opts.python == PS_PYTHON_NATIVE || !s->stack.has_callchain)
		return 0;
	if (!s->saw_python) {
		if (s->opts.python == PS_PYTHON_ONLY)
			s->stack.nr_frames = 0;
		return 0;
	}
	s->user_first = 0;
	while (s->user_first < s->nr_frames && s->frames[s->user_first].kernel)
		s->user_first++;
	err = ps_stitch_python_merge(s, process ? ps_process_state(process, PS_PROCESS_SLOT_UNWIND)
	                                        : NULL);
	if (err)
		return fail(s, err, "out of memory");
	return 0;
}

/* Read up to the next sample that passes the filters, keeping the model
 * in step with the records before it; it becomes sample s->seq. 1, 0 at
 * the end, or -errno. */
static int next_sample(struct ps_session *s, const struct ps_event **ev_out,
                       struct ps_thread **thread_out)
{
	const struct ps_event *ev;
	int ret;

	while ((ret = ps_reader_next(s->reader, &ev)) > 0) {
		if (ev->type != PERF_RECORD_SAMPLE) {
			ret = apply_record(s, ev);
			if (ret)
				return ret;
			continue;
		}
		const struct ps_sample *sample = &ev->u.sample;
		if (!sample_wanted(s, sample))
			continue;
		struct ps_thread *thread =
		        ps_machine_thread(s->machine, (int32_t)sample->pid, (int32_t)sample->tid);
		if (!thread)
			return fail(s, -ENOMEM, "out of memory");
		if (!comm_wanted(s, thread->comm))
			continue;
		s->seq = s->passed++;
		*ev_out = ev;
		*thread_out = thread;
		return 1;
	}
	if (ret < 0)
		return fail(s, ret, "%s", ps_reader_errmsg(s->reader));
	return 0;
}

int ps_session_next(struct ps_session *s, const struct ps_stack **out)
{
	const struct ps_event *ev;
	struct ps_thread *thread;
	int ret;

	*out = NULL;
	ret = next_sample(s, &ev, &thread);
	if (ret <= 0)
		return ret;
	ret = build_stack(s, ev, thread);
	if (ret)
		return ret;
	*out = &s->stack;
	return 1;
}

int ps_stitch_unwind_next(struct ps_session *s, uint64_t *seq, int *n, enum ps_unwind_stop *stop)
{
	const struct ps_event *ev;
	struct ps_thread *thread;
	int ret;

	while ((ret = next_sample(s, &ev, &thread)) > 0) {
		if (s->closing && __atomic_load_n(s->closing, __ATOMIC_RELAXED))
			return 0; /* the session is closing */
		if ((s->seq / PS_STITCH_BLOCK) % s->shard_count != s->shard_index)
			continue;
		struct ps_process *process = ps_machine_process(s->machine, thread->pid);
		if (!has_user_stack(s, ev, process))
			continue;
		*n = unwind_sample(s, process, &ev->u.sample, stop);
		if (*n < 0)
			return fail(s, *n, "out of memory");
		*seq = s->seq;
		return 1;
	}
	return ret;
}

int ps_session_python_processes(struct ps_session *s, ps_python_process_fn fn, void *ctx)
{
	const struct ps_event *ev;
	int ret, err;

	while ((ret = ps_reader_next(s->reader, &ev)) > 0) {
		if (ev->type == PERF_RECORD_SAMPLE)
			continue;
		ret = apply_record(s, ev);
		if (ret)
			break;
	}
	if (ret < 0 && !s->errmsg[0])
		fail(s, ret, "%s", ps_reader_errmsg(s->reader));
	err = ps_stitch_python_report(s, fn, ctx);
	if (err)
		return fail(s, err, "out of memory");
	return ret < 0 ? ret : 0;
}
