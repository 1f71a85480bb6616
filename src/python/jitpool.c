/* The candidate perf maps and jitdumps of a capture, each read once and
 * shared by the processes it may belong to: those listed in the
 * --perf-map-dir folders (or, reading an archive, packed from them) and
 * those found by a pid's name (jitnames.c adds them). */
#include "python/jitpool_priv.h"

#include "base/array.h"
#include "base/message.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dup_dir(char **out, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	*out = strndup(dir, len);
	return *out ? 0 : -ENOMEM;
}

int ps_jit_pool_new(const char *const *dirs, size_t nr_dirs, const struct ps_file_hooks *files,
                    const struct ps_jit_limits *limits, ps_log_fn log, void *log_ctx,
                    struct ps_jit_pool **out)
{
	struct ps_jit_pool *pool = calloc(1, sizeof(*pool));

	*out = NULL;
	if (!pool)
		return -ENOMEM;
	pool->hooks = files;
	if (limits)
		pool->limits = *limits;
	pool->log = log;
	pool->log_ctx = log_ctx;
	if (nr_dirs) {
		pool->dirs = calloc(nr_dirs, sizeof(*pool->dirs));
		if (!pool->dirs)
			goto nomem;
	}
	for (size_t i = 0; i < nr_dirs; i++) {
		bool seen = false;

		if (!dirs[i] || !dirs[i][0])
			continue;
		if (dup_dir(&pool->dirs[pool->nr_dirs], dirs[i]))
			goto nomem;
		for (size_t j = 0; j < pool->nr_dirs && !seen; j++)
			seen = strcmp(pool->dirs[j], pool->dirs[pool->nr_dirs]) == 0;
		if (seen)
			free(pool->dirs[pool->nr_dirs]);
		else
			pool->nr_dirs++;
	}
	*out = pool;
	return 0;
nomem:
	ps_jit_pool_free(pool);
	return -ENOMEM;
}

void ps_jit_pool_free(struct ps_jit_pool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->nr_dirs; i++)
		free(pool->dirs[i]);
	free(pool->dirs);
	for (size_t i = 0; i < pool->nr_files; i++) {
		free(pool->files[i].path);
		free(pool->files[i].errmsg);
		ps_jit_table_free(pool->files[i].table);
	}
	free(pool->files);
	free(pool);
}

/* The index of path's entry, added when new; -ENOMEM or -ENOSPC. */
long ps_jit_pool_add(struct ps_jit_pool *pool, const char *path, enum ps_jit_source source,
                     bool listed)
{
	struct pool_file *f;

	for (size_t i = 0; i < pool->nr_files; i++)
		if (strcmp(pool->files[i].path, path) == 0) {
			pool->files[i].listed |= listed;
			return (long)i;
		}
	if (pool->nr_files >= PS_JIT_POOL_FILES_MAX)
		return -ENOSPC;
	if (!ps_array_reserve((void **)&pool->files, &pool->cap_files, pool->nr_files + 1,
	                      sizeof(*pool->files), 16))
		return -ENOMEM;
	f = &pool->files[pool->nr_files];
	*f = (struct pool_file){ .path = strdup(path), .source = source, .listed = listed };
	if (!f->path)
		return -ENOMEM;
	return (long)pool->nr_files++;
}

/* perf-DIGITS.map or jit-DIGITS.dump: the source, else -1. */
int ps_jit_file_source(const char *name)
{
	const char *p, *end;

	if (strncmp(name, "perf-", 5) == 0) {
		p = name + 5;
		end = strstr(p, ".map");
	} else if (strncmp(name, "jit-", 4) == 0) {
		p = name + 4;
		end = strstr(p, ".dump");
	} else {
		return -1;
	}
	if (!end || end == p || strcmp(end, name[0] == 'p' ? ".map" : ".dump") != 0)
		return -1;
	for (; p < end; p++)
		if (*p < '0' || *p > '9')
			return -1;
	return name[0] == 'p' ? PS_JIT_SOURCE_MAP : PS_JIT_SOURCE_DUMP;
}

static int compare_files(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every perf map and jitdump in one directory, in name order (so that the
 * precedence of candidates does not depend on the directory's order). */
static int list_dir(struct ps_jit_pool *pool, const char *dir)
{
	char **names = NULL;
	size_t nr = 0, cap = 0;
	struct dirent *entry;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return 0; /* said when no file is found for a pid */
	while (!err && (entry = readdir(d))) {
		if (ps_jit_file_source(entry->d_name) < 0)
			continue;
		if (nr >= PS_JIT_POOL_FILES_MAX) {
			ps_log(pool->log, pool->log_ctx, PS_LOG_WARN,
			       "%s: more than %d perf maps and jitdumps; the rest are not read",
			       dir, PS_JIT_POOL_FILES_MAX);
			break;
		}
		if (!ps_array_reserve((void **)&names, &cap, nr + 1, sizeof(*names), 16) ||
		    !(names[nr] = strdup(entry->d_name)))
			err = -ENOMEM;
		else
			nr++;
	}
	closedir(d);
	if (nr)
		qsort(names, nr, sizeof(*names), compare_files);
	for (size_t i = 0; i < nr; i++) {
		char path[4096];
		int len = snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		long index;

		if (!err && len > 0 && (size_t)len < sizeof(path)) {
			index = ps_jit_pool_add(
			        pool, path, (enum ps_jit_source)ps_jit_file_source(names[i]), true);
			if (index == -ENOMEM)
				err = -ENOMEM;
		}
		free(names[i]);
	}
	free(names);
	return err;
}

/* Reading an archive, the folders are not there: the perf maps and
 * jitdumps it holds that were read in a folder of the candidates when it
 * was made are listed, wherever they are now. Those are the archived
 * ones outside the places searched by name (the capture's directory,
 * /tmp and a running process's /tmp), as the manifest keeps only the
 * first --perf-map-dir. */
static int list_archived(struct ps_jit_pool *pool, const char *const *by_name, size_t nr_by_name)
{
	const char *path;

	for (size_t i = 0; (path = pool->hooks->path_at(pool->hooks->resolve_ctx, i)); i++) {
		const char *slash = strrchr(path, '/');
		bool searched = false;
		int source;
		long index;

		if (!slash || (source = ps_jit_file_source(slash + 1)) < 0 ||
		    strncmp(path, "/proc/", 6) == 0)
			continue;
		for (size_t j = 0; j < nr_by_name && !searched; j++)
			searched = strlen(by_name[j]) == (size_t)(slash - path) &&
			           strncmp(by_name[j], path, (size_t)(slash - path)) == 0;
		for (size_t j = 0; j < pool->nr_dirs && searched; j++)
			if (strlen(pool->dirs[j]) == (size_t)(slash - path) &&
			    strncmp(pool->dirs[j], path, (size_t)(slash - path)) == 0)
				searched = false; /* the recorded --perf-map-dir */
		if (searched)
			continue;
		index = ps_jit_pool_add(pool, path, (enum ps_jit_source)source, true);
		if (index == -ENOMEM)
			return -ENOMEM;
	}
	return 0;
}

/* List the folders once. by_name: the places a pid's files are searched
 * by name, besides the folders (for an archive). */
int ps_jit_pool_list(struct ps_jit_pool *pool, const char *const *by_name, size_t nr_by_name)
{
	int err = 0;

	if (pool->listed)
		return 0;
	pool->listed = true;
	if (pool->hooks && pool->hooks->resolve)
		return pool->hooks->path_at ? list_archived(pool, by_name, nr_by_name) : 0;
	for (size_t i = 0; i < pool->nr_dirs && !err; i++)
		err = list_dir(pool, pool->dirs[i]);
	return err;
}

/* Read the file on first use; its table, or NULL (see f->err). */
const struct ps_jit_table *ps_jit_pool_table(struct ps_jit_pool *pool, size_t index)
{
	struct pool_file *f = &pool->files[index];
	const char *local;

	if (f->tried)
		return f->table;
	f->tried = true;
	local = ps_file_local(pool->hooks, f->path);
	if (!local) {
		f->err = -ENOENT;
		return NULL;
	}
	f->err = f->source == PS_JIT_SOURCE_DUMP
	                 ? ps_jitdump_read_file(f->path, local, &pool->limits, &f->table)
	                 : ps_perf_map_read_file(f->path, local, &pool->limits, &f->table);
	if (f->err == -ENOTDIR)
		f->err = -ENOENT;
	if (f->err == -ENOENT) {
		ps_jit_table_free(f->table);
		f->table = NULL;
		return NULL;
	}
	/* found, even if it could not be used: what it says counts */
	ps_file_note_used(pool->hooks, f->path, local,
	                  f->source == PS_JIT_SOURCE_DUMP ? PS_FILE_JITDUMP : PS_FILE_PERF_MAP);
	if (f->err) {
		/* a file that failed is not used; its message is kept */
		f->errmsg = strdup(f->table && ps_jit_table_errmsg(f->table)
		                           ? ps_jit_table_errmsg(f->table)
		                           : "out of memory");
		ps_jit_table_free(f->table);
		f->table = NULL;
	}
	return f->table;
}

void ps_jit_pool_report_unused(struct ps_jit_pool *pool)
{
	if (!pool)
		return;
	for (size_t i = 0; i < pool->nr_files; i++) {
		struct pool_file *f = &pool->files[i];

		if (!f->listed || f->taken_by || f->said)
			continue;
		f->said = true;
		ps_log(pool->log, pool->log_ctx, PS_LOG_WARN,
		       "%s: matches no process of the capture (its entries account for no "
		       "process's sampled JIT addresses)",
		       f->path);
	}
}
