/* Work done ahead, on a helper thread, of the first time the session's
 * thread needs it (ps_symbols_ahead()).
 *
 * Two costs of naming come once per run and early: the kernel's symbol
 * table (the kernel formats /proc/kallsyms line by line, and the lines
 * are parsed) and the decompression of the debug sections of separate
 * debug files (Debian's and Fedora's are SHF_COMPRESSED: libc's takes
 * about 100 ms of zlib), which libdw does all at once in
 * dwarf_begin_elf(). The capture's build-id table lists the DSOs its
 * samples hit, so both can start as soon as the capture is open.
 *
 * Each piece of work is a task the helper takes, the kernel's first, then
 * the files from the end of the list, while the session's thread, when it
 * needs one, takes it from wherever it is: one not started yet it does
 * itself, as without a helper (so the helper and the session's thread work
 * on different tasks, not one waiting for the other); one running it waits
 * for, doing the tasks still pending meanwhile; one done it adopts. (The
 * kernel's comes first: the first kernel frame needs it, and it is the
 * longest task; the session's thread, waiting for it, decompresses the
 * files in the meantime instead of loading the kernel's symbols itself
 * while the helper does the files.)
 * What a task makes is what the session's thread would make from the same
 * input: the kernel table from the same source, and the same file's ELF
 * handle with its sections decompressed by the same libelf call, on which
 * libdw then opens the DWARF. The helper only ever touches its own
 * handles; a task's result changes hands under the lock. */
#include "symbols/dso_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* build-ids looked at: a capture of a whole machine lists thousands */
#define AHEAD_MAX_TASKS 256

enum task_state { TASK_PENDING, TASK_RUNNING, TASK_DONE, TASK_TAKEN };

struct ps_ahead_task {
	struct ps_ahead *ahead;
	enum task_state state;
	bool kernel;
	/* the kernel's: where its symbols are read from (the build-id the
	 * capture's table has for it), and what loading them gave */
	uint8_t build_id[PS_BUILD_ID_MAX];
	struct ps_kernel_source source;
	struct ps_kernel_symbols *symbols;
	struct ps_kernel_load_result result;
	int rc;
	/* a file's: which file (ps_elf_file_id()), and its ELF handle with
	 * the debug sections decompressed (NULL: none were compressed), on
	 * copy when that is not NULL */
	char *file;
	struct ps_elf_file_id id;
	unsigned dso; /* the files of one DSO are tried in perf's order */
	Elf *elf;
	struct ps_elf_inflated *copy;
};

struct ps_ahead {
	pthread_mutex_t lock;
	pthread_cond_t done; /* a task is done */
	pthread_t thread;
	bool started, stop;
	/* PYSTITCH_AHEAD_WAIT=1, for the tests: the session's thread waits
	 * for every task, so the helper does them all */
	bool wait_all;
	struct ps_ahead_task *tasks;
	size_t nr_tasks;
	ps_log_fn log;
	void *log_ctx;
	/* for the summary at -vv: what the helper made and what was used */
	unsigned files_made, files_taken;
	bool kernel_made, kernel_taken;
};

static void run_kernel(struct ps_ahead_task *task)
{
	task->rc = ps_kernel_symbols_load(&task->source, &task->symbols, &task->result);
}

static bool stopping(struct ps_ahead *ahead)
{
	return __atomic_load_n(&ahead->stop, __ATOMIC_RELAXED);
}

/* The file's ELF handle with every compressed debug section libdw reads
 * decompressed, as dwarf_begin_elf() would: on a copy inflated apart
 * (*copy; elf_inflate.c), else on the file by libelf; NULL when none is
 * compressed or on error (the session's thread then opens the file as it
 * always does). */
static Elf *decompressed(const char *file, const struct ps_elf_file_id *id, struct ps_ahead *ahead,
                         struct ps_elf_inflated **copy)
{
	size_t names = 0, compressed = 0, raw_size = 0;
	struct ps_elf_file_id now;
	Elf_Scn *scn = NULL;
	/* not blocking: the path may have become a FIFO since it was looked at */
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	const char *raw;
	Elf *elf, *inflated;

	*copy = NULL;
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* the same file the task was made for, read whole, descriptor given
	 * back */
	if (!elf || elf_kind(elf) != ELF_K_ELF || !ps_elf_file_id_of(fd, &now) ||
	    !ps_elf_file_id_equal(&now, id) || elf_cntl(elf, ELF_C_FDREAD) != 0 ||
	    elf_getshdrstrndx(elf, &names) != 0 || !(raw = elf_rawfile(elf, &raw_size))) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	close(fd);
	if (ps_elf_inflate((const uint8_t *)raw, raw_size, &inflated, copy)) {
		elf_end(elf);
		return inflated;
	}
	while (!stopping(ahead) && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_COMPRESSED) ||
		    !ps_elf_libdw_section(elf_strptr(elf, names, shdr.sh_name)))
			continue;
		if (elf_compress(scn, 0, 0) < 0)
			break;
		compressed++;
	}
	if (scn || !compressed) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

static struct ps_ahead_task *kernel_task(struct ps_ahead *ahead)
{
	for (size_t i = 0; ahead && i < ahead->nr_tasks; i++)
		if (ahead->tasks[i].kernel)
			return &ahead->tasks[i];
	return NULL;
}

/* The next task to start, under the lock: the kernel's first (the session's
 * thread needs it for the first kernel frame, and it is the longest), then
 * files from the end of the list, each DSO's first file still to try. */
static struct ps_ahead_task *pick_task(struct ps_ahead *ahead)
{
	struct ps_ahead_task *task;

	if (stopping(ahead))
		return NULL;
	task = kernel_task(ahead);
	if (task && task->state == TASK_PENDING)
		return task;
	task = NULL;
	for (size_t i = ahead->nr_tasks; i-- > 0;)
		if (ahead->tasks[i].state == TASK_PENDING) {
			task = &ahead->tasks[i];
			break;
		}
	while (task && !task->kernel && task > ahead->tasks && task[-1].state == TASK_PENDING &&
	       !task[-1].kernel && task[-1].dso == task->dso)
		task--;
	return task;
}

/* Runs a task pick_task() gave, called and returning with the lock held
 * (which it lets go of while it works). */
static void run_task(struct ps_ahead *ahead, struct ps_ahead_task *task)
{
	task->state = TASK_RUNNING;
	pthread_mutex_unlock(&ahead->lock);
	if (task->kernel)
		run_kernel(task);
	else
		task->elf = decompressed(task->file, &task->id, ahead, &task->copy);
	pthread_mutex_lock(&ahead->lock);
	if (task->kernel)
		ahead->kernel_made = task->symbols != NULL;
	else
		ahead->files_made += task->elf != NULL;
	task->state = TASK_DONE;
	/* the DSO's DWARF is what the first file with compressed sections
	 * holds: its later files are left alone */
	for (struct ps_ahead_task *next = task + 1;
	     task->elf && next < ahead->tasks + ahead->nr_tasks && !next->kernel &&
	     next->dso == task->dso && next->state == TASK_PENDING;
	     next++)
		next->state = TASK_DONE;
	pthread_cond_broadcast(&ahead->done);
}

static void *helper_main(void *arg)
{
	struct ps_ahead *ahead = arg;
	struct ps_ahead_task *task;

	pthread_mutex_lock(&ahead->lock);
	while ((task = pick_task(ahead)) != NULL)
		run_task(ahead, task);
	pthread_mutex_unlock(&ahead->lock);
	return NULL;
}

/* The task for the session's thread: true with its result when it was
 * done ahead (waiting while it runs), false when it is the caller's to do
 * (not started: the helper will not start it now). While the helper runs
 * it, the session's thread does the tasks still pending rather than wait
 * idle: they are the DSOs its samples will name. */
static bool claim(struct ps_ahead_task *task)
{
	struct ps_ahead *ahead = task->ahead;
	struct ps_ahead_task *other;
	bool done;

	pthread_mutex_lock(&ahead->lock);
	while (task->state == TASK_RUNNING || (ahead->wait_all && task->state == TASK_PENDING)) {
		if (!ahead->wait_all && (other = pick_task(ahead)) != NULL)
			run_task(ahead, other);
		else
			pthread_cond_wait(&ahead->done, &ahead->lock);
	}
	done = task->state == TASK_DONE;
	task->state = TASK_TAKEN;
	pthread_mutex_unlock(&ahead->lock);
	return done;
}

static struct ps_ahead_task *add_task(struct ps_ahead *ahead)
{
	struct ps_ahead_task *task;

	if (ahead->nr_tasks == AHEAD_MAX_TASKS)
		return NULL;
	task = &ahead->tasks[ahead->nr_tasks++];
	memset(task, 0, sizeof(*task));
	task->ahead = ahead;
	return task;
}

/* A task for the file at path, unless it is missing or already has one. */
static void add_file(struct ps_ahead *ahead, const char *path, unsigned dso)
{
	struct ps_ahead_task *task;
	struct ps_elf_file_id id;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool known;

	if (fd < 0)
		return;
	known = ps_elf_file_id_of(fd, &id);
	close(fd);
	if (!known)
		return;
	for (size_t i = 0; i < ahead->nr_tasks; i++)
		if (!ahead->tasks[i].kernel && ps_elf_file_id_equal(&ahead->tasks[i].id, &id))
			return;
	task = add_task(ahead);
	if (!task)
		return;
	task->file = strdup(path);
	task->id = id;
	task->dso = dso;
	if (!task->file)
		ahead->nr_tasks--;
}

/* The files a user DSO's DWARF may come from where a separate debug file
 * is, in perf's order (dso_locate.c's candidates): the build-id cache's
 * copies, the distribution's debug file by build-id, the file itself. */
static void add_dso_files(struct ps_ahead *ahead, const struct ps_symbols *symbols,
                          const struct ps_build_id *bid, unsigned dso)
{
	char hex[2 * PS_BUILD_ID_MAX + 1], path[4096], base[4096];

	ps_build_id_hex(bid->id, bid->size, hex);
	for (int i = 0; i < 2; i++)
		if (snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s/%s", symbols->buildid_dir,
		             hex, hex + 2, i ? "debug" : "elf") < (int)sizeof(path))
			add_file(ahead, path, dso);
	if (ps_dso_join(symbols->symfs, "/usr/lib/debug/.build-id/", base, sizeof(base)) &&
	    snprintf(path, sizeof(path), "%s%.2s/%s.debug", base, hex, hex + 2) < (int)sizeof(path))
		add_file(ahead, path, dso);
	if (ps_dso_join(symbols->symfs, bid->filename, path, sizeof(path)))
		add_file(ahead, path, dso);
}

int ps_symbols_ahead(struct ps_symbols *symbols, const struct ps_build_id *ids, size_t nr)
{
	struct ps_ahead *ahead;

	/* the helper must not tell an observer (an archive writer) what it
	 * reads, nor read through a resolver, at the same time as the
	 * session's thread */
	if (symbols->ahead || symbols->files.resolve || symbols->files.used || !nr)
		return 0;
	ahead = calloc(1, sizeof(*ahead));
	if (!ahead)
		return -ENOMEM;
	ahead->tasks = calloc(AHEAD_MAX_TASKS, sizeof(*ahead->tasks));
	if (!ahead->tasks) {
		free(ahead);
		return -ENOMEM;
	}
	pthread_mutex_init(&ahead->lock, NULL);
	pthread_cond_init(&ahead->done, NULL);
	ahead->log = symbols->log;
	ahead->log_ctx = symbols->log_ctx;
	symbols->ahead = ahead;
	/* the kernel's task (pick_task() takes it first) */
	for (size_t i = 0; i < nr; i++) {
		struct ps_ahead_task *task;

		if (!ids[i].filename || strcmp(ids[i].filename, "[kernel.kallsyms]") != 0 ||
		    ids[i].size > PS_BUILD_ID_MAX || (task = add_task(ahead)) == NULL)
			continue;
		task->kernel = true;
		memcpy(task->build_id, ids[i].id, ids[i].size);
		task->source = (struct ps_kernel_source){
			.kallsyms = symbols->kallsyms,
			.vmlinux = symbols->vmlinux,
			.build_id = task->build_id,
			.build_id_size = ids[i].size,
			.buildid_dir = symbols->buildid_dir,
			.symfs = symbols->symfs,
		};
		break;
	}
	/* DWARF is read for inline frames and source lines only */
	for (size_t i = 0; (!symbols->no_inline || symbols->srcline || symbols->srccode) && i < nr;
	     i++)
		if (ids[i].filename && ids[i].filename[0] == '/' && ids[i].size > 0 &&
		    ids[i].size <= PS_BUILD_ID_MAX)
			add_dso_files(ahead, symbols, &ids[i], (unsigned)i);
	ps_elf_library_init();
	if (ahead->nr_tasks && pthread_create(&ahead->thread, NULL, helper_main, ahead) == 0) {
		const char *wait = getenv("PYSTITCH_AHEAD_WAIT");

		ahead->started = true;
		ahead->wait_all = wait && strcmp(wait, "1") == 0;
	}
	return 0;
}

bool ps_ahead_take_kernel(struct ps_ahead *ahead, const struct ps_kernel_source *source,
                          struct ps_kernel_symbols **out, struct ps_kernel_load_result *result,
                          int *rc)
{
	struct ps_ahead_task *task = kernel_task(ahead);

	if (!task || !claim(task))
		return false;
	/* made from another file than the session's thread would read (the
	 * samples name another kernel than the table's) */
	if (!ps_kernel_symbols_same_load(&task->source, source)) {
		ps_kernel_symbols_free(task->symbols);
		task->symbols = NULL;
		return false;
	}
	*out = task->symbols;
	*result = task->result;
	*rc = task->rc;
	ahead->kernel_taken = task->symbols != NULL;
	task->symbols = NULL;
	return true;
}

void ps_ahead_offer(struct ps_ahead *ahead, struct ps_elf *elf)
{
	for (size_t i = 0; ahead && i < ahead->nr_tasks; i++)
		if (!ahead->tasks[i].kernel &&
		    ps_elf_file_id_equal(&ahead->tasks[i].id, &elf->id)) {
			elf->ahead = &ahead->tasks[i];
			return;
		}
}

Elf *ps_ahead_take_elf(struct ps_ahead_task *task, struct ps_elf_inflated **copy)
{
	Elf *elf;

	*copy = NULL;
	if (!task || !claim(task))
		return NULL;
	elf = task->elf;
	*copy = task->copy;
	task->elf = NULL;
	task->copy = NULL;
	task->ahead->files_taken += elf != NULL;
	return elf;
}

void ps_ahead_free(struct ps_ahead *ahead)
{
	if (!ahead)
		return;
	if (ahead->started) {
		__atomic_store_n(&ahead->stop, true, __ATOMIC_RELAXED);
		pthread_join(ahead->thread, NULL);
		/* bench/stages.sh and the tests read it */
		ps_log(ahead->log, ahead->log_ctx, PS_LOG_DEBUG,
		       "symbols: helper thread: kernel symbols %s; %u files of %zu "
		       "decompressed ahead, %u used",
		       ahead->kernel_taken  ? "loaded ahead, used"
		       : ahead->kernel_made ? "loaded ahead, not used"
		                            : "not loaded ahead",
		       ahead->files_made, ahead->nr_tasks - (kernel_task(ahead) != NULL),
		       ahead->files_taken);
	}
	for (size_t i = 0; i < ahead->nr_tasks; i++) {
		ps_kernel_symbols_free(ahead->tasks[i].symbols);
		if (ahead->tasks[i].elf)
			elf_end(ahead->tasks[i].elf);
		ps_elf_inflated_free(ahead->tasks[i].copy);
		free(ahead->tasks[i].file);
	}
	free(ahead->tasks);
	pthread_mutex_destroy(&ahead->lock);
	pthread_cond_destroy(&ahead->done);
	free(ahead);
}
