/* Which file system a DSO's recorded path is read in. A process in a
 * container saw its own root file system: its interpreter, libraries and
 * extension modules need not be at their recorded paths on this machine,
 * or another file may be there. While it runs in another mount namespace
 * than ours, perf reads its files inside that namespace (util/namespaces.c
 * nsinfo: the namespace differs when the inodes of /proc/self/ns/mnt and
 * /proc/PID/ns/mnt do); pystitch reads them under /proc/PID/root, the same
 * files seen through the process's root. Offline, several --symfs trees
 * (one exported per container) may hold them: the one whose file has the
 * recorded build-id is taken.
 */
#include "symbols/dso_priv.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ROOT_MAX 64 /* "/proc/PID/root" */
#define NAMESPACE_PIDS_MAX 64 /* live processes found per recorded namespace */

/* The mount namespace of pid now (nsfs device and inode). */
static bool mount_namespace_of(const char *pid_dir, struct stat *out)
{
	char path[ROOT_MAX + 8];
	int n = snprintf(path, sizeof(path), "%s/ns/mnt", pid_dir);

	return n > 0 && (size_t)n < sizeof(path) && stat(path, out) == 0;
}

static bool ours(struct ps_symbols *symbols, const struct stat *st)
{
	if (!symbols->own_mnt_ns_known) {
		struct stat own;

		if (!mount_namespace_of("/proc/self", &own))
			return true; /* no /proc: nothing to enter either */
		symbols->own_mnt_ns_dev = own.st_dev;
		symbols->own_mnt_ns_ino = own.st_ino;
		symbols->own_mnt_ns_known = true;
	}
	return st->st_ino == symbols->own_mnt_ns_ino;
}

static bool regular_file_under(const char *root, const char *path)
{
	char file[4096];
	struct stat st;
	int n = snprintf(file, sizeof(file), "%s%s", root, path);

	return n > 0 && (size_t)n < sizeof(file) && stat(file, &st) == 0 && S_ISREG(st.st_mode);
}

/* A running process whose mount namespace is (dev, ino): a walk of
 * /proc, bounded by the processes there. 0: none. */
static int32_t find_namespace_pid(uint64_t dev, uint64_t ino)
{
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	int32_t found = 0;

	if (!proc)
		return 0;
	while (!found && (entry = readdir(proc)) != NULL) {
		char dir[ROOT_MAX], *end;
		struct stat st;
		long pid = strtol(entry->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%ld", pid);
		if (mount_namespace_of(dir, &st) && st.st_dev == dev && st.st_ino == ino)
			found = (int32_t)pid;
	}
	closedir(proc);
	return found;
}

/* A process running now in the recorded mount namespace: the capture's
 * own process, or, once it has ended, another of the same namespace (the
 * container still runs). Found by a walk of /proc, once per namespace. */
static int32_t live_in_namespace(struct ps_symbols *symbols, const struct ps_dso_origin *origin)
{
	char dir[ROOT_MAX];
	struct stat st;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)origin->pid);
	if (mount_namespace_of(dir, &st) && !ours(symbols, &st) &&
	    (!origin->has_mnt_ns ||
	     (st.st_dev == origin->mnt_ns_dev && st.st_ino == origin->mnt_ns_ino)))
		return origin->pid;
	if (!origin->has_mnt_ns)
		return 0;
	return ps_symbols_live_in_namespace(symbols, origin->mnt_ns_dev, origin->mnt_ns_ino);
}

int32_t ps_symbols_live_in_namespace(struct ps_symbols *symbols, uint64_t dev, uint64_t ino)
{
	char dir[ROOT_MAX];
	struct stat st;
	int32_t found;

	if (symbols->files.resolve || symbols->no_live_processes)
		return 0; /* an archive, or another machine's capture */
	for (size_t i = 0; i < symbols->nr_namespace_pids; i++)
		if (symbols->namespace_pids[i].dev == dev && symbols->namespace_pids[i].ino == ino)
			return symbols->namespace_pids[i].pid;
	if (symbols->nr_namespace_pids == NAMESPACE_PIDS_MAX)
		return 0;
	found = find_namespace_pid(dev, ino);
	if (found > 0) {
		snprintf(dir, sizeof(dir), "/proc/%d", (int)found);
		if (!mount_namespace_of(dir, &st) || ours(symbols, &st))
			found = 0;
	}
	symbols->namespace_pids[symbols->nr_namespace_pids++] =
	        (struct namespace_pid){ .dev = dev, .ino = ino, .pid = found };
	return found;
}

/* Reading an archive: the copy it packed from a process's root, of the
 * mapping process or (its namespace's) of another. */
static bool archived_root(struct ps_symbols *symbols, const char *path,
                          const struct ps_dso_origin *origin, char *root, size_t size)
{
	const struct ps_file_hooks *files = &symbols->files;
	char mine[4096];
	const char *archived;
	size_t len = strlen(path);

	snprintf(root, size, "/proc/%d/root", (int)origin->pid);
	if (snprintf(mine, sizeof(mine), "%s%s", root, path) < (int)sizeof(mine) &&
	    ps_file_local(files, mine))
		return true;
	if (!files->path_at)
		return false;
	for (size_t i = 0; (archived = files->path_at(files->resolve_ctx, i)); i++) {
		size_t alen = strlen(archived);
		const char *rest;
		char *end;

		if (alen <= len || strcmp(archived + alen - len, path) != 0 ||
		    strncmp(archived, "/proc/", 6) != 0)
			continue;
		strtol(archived + 6, &end, 10);
		rest = end;
		if (end == archived + 6 || strncmp(rest, "/root", 5) != 0 ||
		    rest + 5 != archived + alen - len || (size_t)(rest + 5 - archived) >= size)
			continue;
		memcpy(root, archived, (size_t)(rest + 5 - archived));
		root[rest + 5 - archived] = 0;
		return true;
	}
	return false;
}

bool ps_symbols_root(struct ps_symbols *symbols, const char *path,
                     const struct ps_dso_origin *origin, char *root, size_t size)
{
	int32_t pid;

	if (!origin || origin->pid <= 0 || path[0] != '/' || size < ROOT_MAX)
		return false;
	if (symbols->files.resolve)
		return archived_root(symbols, path, origin, root, size);
	/* the user said where the files are: --symfs trees are read, not a
	 * live process's root (whose pid may be another process's by now) */
	if (symbols->no_live_processes || (symbols->symfs && symbols->symfs[0]) ||
	    symbols->nr_trees > 1)
		return false;
	pid = live_in_namespace(symbols, origin);
	if (pid <= 0)
		return false;
	snprintf(root, size, "/proc/%d/root", (int)pid);
	return regular_file_under(root, path);
}

/* Whether the tree's file for the DSO is the recorded one: its build-id,
 * or, none recorded, that it exists. */
static bool tree_holds(struct ps_dso *dso, const char *tree)
{
	char path[4096];
	bool warned = dso->warned_build_id;
	struct ps_elf *elf;

	if (!ps_dso_join(tree, dso->name, path, sizeof(path)))
		return false;
	if (!dso->build_id_recorded) {
		const char *local = ps_file_local(&dso->owner->files, path);

		return local && regular_file_under("", local);
	}
	/* a tree of another container's file is not a mismatch to tell */
	dso->warned_build_id = true;
	elf = ps_dso_open_candidate(dso, path);
	dso->warned_build_id = warned;
	return elf != NULL;
}

/* Reading an archive made with several --symfs trees: the archive
 * keeps each file under its tree, which it does not record; a copy of
 * the recorded path under any prefix whose file is the recorded one. */
static void choose_archived_tree(struct ps_dso *dso)
{
	const struct ps_file_hooks *files = &dso->owner->files;
	size_t len = strlen(dso->name);
	char path[4096];
	const char *archived;

	if (!files->path_at || !ps_dso_join(dso->tree, dso->name, path, sizeof(path)) ||
	    ps_file_local(files, path))
		return;
	for (size_t i = 0; (archived = files->path_at(files->resolve_ctx, i)); i++) {
		size_t alen = strlen(archived);
		char *prefix;

		/* a container's root is its process's DSO's, not this one's */
		if (alen <= len || strcmp(archived + alen - len, dso->name) != 0 ||
		    strncmp(archived, "/proc/", 6) == 0)
			continue;
		prefix = strndup(archived, alen - len);
		if (!prefix)
			return;
		if (tree_holds(dso, prefix)) {
			free(dso->tree_owned);
			dso->tree_owned = prefix;
			dso->tree = prefix;
			return;
		}
		free(prefix);
	}
}

void ps_dso_choose_tree(struct ps_dso *dso)
{
	const struct ps_symbols *symbols = dso->owner;

	if (dso->tree_chosen)
		return;
	dso->tree_chosen = true;
	if (dso->root) {
		dso->tree = dso->root;
		return;
	}
	dso->tree = symbols->symfs;
	if (dso->kind != DSO_USER || dso->name[0] != '/')
		return;
	if (symbols->files.resolve) {
		choose_archived_tree(dso);
		return;
	}
	if (symbols->nr_trees < 2)
		return;
	for (size_t i = 0; i < symbols->nr_trees; i++) {
		if (tree_holds(dso, symbols->trees[i])) {
			dso->tree = symbols->trees[i];
			return;
		}
	}
}
