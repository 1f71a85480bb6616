/* The pool of candidate perf maps and jitdumps (jitpool.c), as the choice
 * of a process's files (jitnames.c) reads it. */
#ifndef PS_PYTHON_JITPOOL_PRIV_H
#define PS_PYTHON_JITPOOL_PRIV_H

#include "python/python_priv.h"

#define PS_JIT_POOL_FILES_MAX 4096 /* listed from the --perf-map-dir folders */

struct pool_file {
	char *path;
	enum ps_jit_source source;
	bool listed; /* found in a --perf-map-dir directory */
	bool tried;
	int err; /* of reading it; -ENOENT: not there */
	struct ps_jit_table *table;
	char *errmsg; /* why it could not be read */
	int32_t taken_by; /* a pid that took it; 0: none */
	bool said; /* that no process took it was said */
};

struct ps_jit_pool {
	char **dirs;
	size_t nr_dirs;
	bool listed;
	struct pool_file *files;
	size_t nr_files, cap_files;
	const struct ps_file_hooks *hooks;
	struct ps_jit_limits limits;
	ps_log_fn log;
	void *log_ctx;
};

/* The index of path's entry, added when new (listed: found in a folder);
 * -ENOMEM, or -ENOSPC past PS_JIT_POOL_FILES_MAX. */
long ps_jit_pool_add(struct ps_jit_pool *pool, const char *path, enum ps_jit_source source,
                     bool listed);
/* perf-DIGITS.map or jit-DIGITS.dump: its source, else -1. */
int ps_jit_file_source(const char *name);
/* List the folders once (an archive: its files that were read in them);
 * by_name: the places searched by a pid's name. 0 or -ENOMEM. */
int ps_jit_pool_list(struct ps_jit_pool *pool, const char *const *by_name, size_t nr_by_name);
/* Read the file on first use: its table, or NULL (see its err). */
const struct ps_jit_table *ps_jit_pool_table(struct ps_jit_pool *pool, size_t index);

#endif /* PS_PYTHON_JITPOOL_PRIV_H */
