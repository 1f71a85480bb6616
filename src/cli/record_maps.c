/* The perf maps, jitdumps and line tables (pystitch_perf's perf-PID.pylines)
 * of the processes `pystitch record` records.
 *
 * A process in a container writes /tmp/perf-NSPID.map into its own /tmp,
 * named by its pid inside its pid namespace; that /tmp may go away with
 * the container before the capture is read. So about once a second while
 * perf runs, and once after, the maps of the recorded processes that do
 * not share this process's mounts are copied (what they appended since
 * the last copy) to perf-HOSTPID.map in record's own directory, where the
 * capture is then read with --perf-map-dir. The recorded processes are
 * the descendants of perf (a launched command), the --pid targets and
 * theirs, or with -a every process.
 *
 * At the end, the files the recording made processes write to this
 * machine's /tmp are removed (unless --keep-maps): those of every
 * process of a launched command (the pids of the capture's COMM and FORK
 * records, and the namespace pids seen while it ran), written since the
 * recording started. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record_priv.h"

#define MAX_PROCESSES (1u << 22) /* pid_max's ceiling */
#define COPY_CHUNK 65536

/* The files a process's name sources write to its /tmp, by its pid: the
 * perf map, the jitdump, and pystitch_perf's line tables beside the map. */
static const char *const file_forms[] = { "perf-%d.map", "jit-%d.dump", "perf-%d.pylines" };
#define NR_FILE_FORMS (sizeof(file_forms) / sizeof(file_forms[0]))

/* One file of a container's process, and how much of it is copied. */
struct map_copy {
	pid_t pid;
	unsigned form; /* index in file_forms */
	uint64_t copied;
};

struct record_maps {
	const struct record_settings *settings;
	char *dir;
	time_t start; /* CLOCK_REALTIME seconds when recording started */
	struct map_copy *copies;
	size_t nr_copies, cap_copies, nr_files;
	/* files in this machine's /tmp named by a namespace pid that is not
	 * the host pid (a pid namespace without a /tmp of its own) */
	char **own_files;
	size_t nr_own_files, cap_own_files;
	pid_t *parents; /* by pid, filled at each tick */
	size_t nr_parents;
};

struct record_maps *record_maps_open(const struct record_settings *settings, const char *dir)
{
	struct record_maps *maps = calloc(1, sizeof(*maps));

	if (!maps)
		return NULL;
	maps->settings = settings;
	maps->dir = strdup(dir);
	maps->start = time(NULL);
	if (!maps->dir) {
		free(maps);
		return NULL;
	}
	return maps;
}

size_t record_maps_copied(const struct record_maps *maps)
{
	return maps->nr_files;
}

void record_maps_close(struct record_maps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->nr_own_files; i++)
		free(maps->own_files[i]);
	free(maps->own_files);
	free(maps->copies);
	free(maps->parents);
	free(maps->dir);
	free(maps);
}

static struct map_copy *copy_of(struct record_maps *maps, pid_t pid, unsigned form)
{
	for (size_t i = 0; i < maps->nr_copies; i++)
		if (maps->copies[i].pid == pid && maps->copies[i].form == form)
			return &maps->copies[i];
	if (maps->nr_copies == maps->cap_copies) {
		size_t cap = maps->cap_copies ? 2 * maps->cap_copies : 16;
		struct map_copy *grown = realloc(maps->copies, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		maps->copies = grown;
		maps->cap_copies = cap;
	}
	maps->copies[maps->nr_copies] = (struct map_copy){ .pid = pid, .form = form };
	return &maps->copies[maps->nr_copies++];
}

/* Append to the copy what the process added to its file since last time. */
static void copy_new_part(struct record_maps *maps, pid_t pid, pid_t inner, unsigned form)
{
	char from[96], name[64], *to = NULL, buf[COPY_CHUNK];
	struct map_copy *copy;
	struct stat st;
	int in, out;

	snprintf(name, sizeof(name), file_forms[form], (int)inner);
	snprintf(from, sizeof(from), "/proc/%d/root/tmp/%s", (int)pid, name);
	if (stat(from, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	copy = copy_of(maps, pid, form);
	if (!copy || (uint64_t)st.st_size <= copy->copied)
		return;
	/* named by the host pid, as the capture knows the process */
	snprintf(name, sizeof(name), file_forms[form], (int)pid);
	if (asprintf(&to, "%s/%s", maps->dir, name) < 0)
		return;
	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (in >= 0 && out >= 0) {
		if (!copy->copied)
			maps->nr_files++;
		for (;;) {
			ssize_t n = pread(in, buf, sizeof(buf), (off_t)copy->copied);

			if (n <= 0 || pwrite(out, buf, (size_t)n, (off_t)copy->copied) != n)
				break;
			copy->copied += (uint64_t)n;
		}
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(to);
}

static void note_own_file(struct record_maps *maps, pid_t inner)
{
	for (unsigned i = 0; i < NR_FILE_FORMS; i++) {
		char name[64], path[80];
		bool known = false;

		snprintf(name, sizeof(name), file_forms[i], (int)inner);
		snprintf(path, sizeof(path), "/tmp/%s", name);
		for (size_t j = 0; j < maps->nr_own_files && !known; j++)
			known = strcmp(maps->own_files[j], path) == 0;
		if (known)
			continue;
		if (maps->nr_own_files == maps->cap_own_files) {
			size_t cap = maps->cap_own_files ? 2 * maps->cap_own_files : 8;
			char **grown = realloc(maps->own_files, cap * sizeof(*grown));

			if (!grown)
				return;
			maps->own_files = grown;
			maps->cap_own_files = cap;
		}
		if ((maps->own_files[maps->nr_own_files] = strdup(path)))
			maps->nr_own_files++;
	}
}

/* Whether pid descends from one of roots (parents filled for every pid). */
static bool descends(const struct record_maps *maps, pid_t pid, const pid_t *roots, size_t nr)
{
	for (unsigned depth = 0; pid > 0 && depth < 4096; depth++) {
		for (size_t i = 0; i < nr; i++)
			if (pid == roots[i])
				return true;
		if ((size_t)pid >= maps->nr_parents)
			return false;
		pid = maps->parents[pid];
	}
	return false;
}

/* Every process's parent, indexed by pid; false when /proc cannot be read. */
static bool read_parents(struct record_maps *maps)
{
	struct dirent *entry;
	DIR *proc = opendir("/proc");

	if (!proc)
		return false;
	if (maps->parents)
		memset(maps->parents, 0, maps->nr_parents * sizeof(*maps->parents));
	while ((entry = readdir(proc))) {
		char *end;
		long pid = strtol(entry->d_name, &end, 10);

		if (*end || pid <= 0 || pid >= (long)MAX_PROCESSES)
			continue;
		if ((size_t)pid >= maps->nr_parents) {
			size_t nr = (size_t)pid * 2;
			pid_t *grown = realloc(maps->parents, nr * sizeof(*grown));

			if (!grown)
				continue;
			memset(grown + maps->nr_parents, 0, (nr - maps->nr_parents) * sizeof(*grown));
			maps->parents = grown;
			maps->nr_parents = nr;
		}
		maps->parents[pid] = record_parent_pid((pid_t)pid);
	}
	closedir(proc);
	return true;
}

void record_maps_tick(void *ctx, pid_t perf_pid)
{
	struct record_maps *maps = ctx;
	const struct record_settings *s = maps->settings;
	const pid_t *roots = s->command ? &perf_pid : s->pids;
	size_t nr_roots = s->command ? 1 : s->nr_pids;

	if (!read_parents(maps))
		return;
	for (size_t pid = 1; pid < maps->nr_parents; pid++) {
		pid_t inner;

		if (!maps->parents[pid] || (pid_t)pid == perf_pid)
			continue;
		if (!s->all_cpus && !descends(maps, (pid_t)pid, roots, nr_roots))
			continue;
		inner = record_namespace_pid((pid_t)pid);
		if (!record_same_mount_namespace((pid_t)pid)) {
			for (unsigned form = 0; form < NR_FILE_FORMS; form++)
				copy_new_part(maps, (pid_t)pid, inner, form);
		} else if (inner != (pid_t)pid && s->command) {
			note_own_file(maps, inner);
		}
	}
}

/* Remove path if it is a regular file written since the recording began. */
static bool remove_if_recent(const struct record_maps *maps, const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime < maps->start)
		return false;
	return unlink(path) == 0;
}

/* The pids of the capture's processes: those of its COMM and FORK records. */
static size_t capture_pids(const char *capture, pid_t **out)
{
	struct ps_reader *reader = NULL;
	const struct ps_event *event;
	pid_t *pids = NULL;
	size_t nr = 0, cap = 0;

	*out = NULL;
	if (ps_reader_open(capture, &(struct ps_reader_opts){ .sz = sizeof(struct ps_reader_opts),
	                                                      .order = PS_ORDER_FILE },
	                   &reader) != 0)
		return 0;
	while (ps_reader_next(reader, &event) > 0) {
		pid_t pid;

		if (event->type == PERF_RECORD_COMM)
			pid = (pid_t)event->u.comm.pid;
		else if (event->type == PERF_RECORD_FORK)
			pid = (pid_t)event->u.fork.pid;
		else
			continue;
		if (nr && pids[nr - 1] == pid)
			continue;
		if (nr == cap) {
			size_t grown_cap = cap ? 2 * cap : 64;
			pid_t *grown = realloc(pids, grown_cap * sizeof(*grown));

			if (!grown)
				break;
			pids = grown;
			cap = grown_cap;
		}
		pids[nr++] = pid;
	}
	ps_reader_close(reader);
	*out = pids;
	return nr;
}

size_t record_maps_remove(struct ps_cli *cli, struct record_maps *maps, const char *capture,
                          const struct record_target *targets, size_t nr_targets)
{
	size_t removed = 0;
	char path[128];

	if (maps->settings->command) {
		pid_t *pids;
		size_t nr = capture_pids(capture, &pids);

		for (size_t i = 0; i < nr; i++)
			for (unsigned form = 0; form < NR_FILE_FORMS; form++) {
				char name[64];

				snprintf(name, sizeof(name), file_forms[form], (int)pids[i]);
				snprintf(path, sizeof(path), "/tmp/%s", name);
				removed += remove_if_recent(maps, path);
			}
		free(pids);
		for (size_t i = 0; i < maps->nr_own_files; i++)
			removed += remove_if_recent(maps, maps->own_files[i]);
	}
	for (size_t i = 0; i < nr_targets; i++) {
		if (!targets[i].activated)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)targets[i].pid,
		         (int)record_namespace_pid(targets[i].pid));
		removed += remove_if_recent(maps, path);
	}
	if (cli->verbose && removed) {
		ps_progress_clear(cli->progress);
		fprintf(stderr,
		        "%s: record: removed %zu perf maps, jitdumps and line tables from /tmp\n",
		        cli->program, removed);
	}
	return removed;
}
