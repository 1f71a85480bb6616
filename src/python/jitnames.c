/* Which perf map and jitdump belong to a process. A file's name is not
 * enough: a process in a pid namespace (a container) names its files by
 * its namespace pid, so that several containers write perf-1.map, and a
 * perf-PID.map found by the host pid may be left by an earlier process
 * that had the pid, or by a later one that reused it. So every file that
 * may be the process's is a candidate, and the one whose entries account
 * for the process's JIT addresses is taken (see python_priv.h). */
#include "python/jitpool_priv.h"

#include "base/array.h"
#include "base/message.h"
#include "base/opts.h"
#include "base/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATUS_MAX 8192 /* of /proc/PID/status, read for NStgid */
#define NR_SOURCES 3 /* indexed by enum ps_jit_source, which starts at 1 */
#define FOR_EACH_SOURCE(s) for (int s = PS_JIT_SOURCE_MAP; s <= PS_JIT_SOURCE_DUMP; s++)

/* ------------------------------------------------------------------ */
/* One process's candidates                                            */
/* ------------------------------------------------------------------ */

struct candidate {
	size_t file; /* in the pool */
	bool by_name; /* found by the pid's name (or its namespace pid's) */
	uint64_t hits;
};

/* The choice among the candidates of one source. */
struct choice {
	struct candidate *candidates;
	size_t nr, cap;
	bool decided;
	long chosen; /* candidate index, -1: none */
};

struct ps_jit_names {
	int32_t pid;
	struct ps_jit_pool *pool;
	bool own_pool;
	char **dirs; /* searched by name */
	size_t nr_dirs, cap_dirs;
	bool loaded;
	int load_result;
	struct choice choice[NR_SOURCES];
	uint64_t lookups; /* JIT addresses looked up before the choice */
	size_t nr_listed; /* candidates listed from --perf-map-dir */
	bool decided;
	char *where;
	/* the root of a process running now in the pid's recorded mount
	 * namespace ("/proc/PID/root"), whose /tmp holds candidates */
	char *namespace_root;
	char errmsg[PS_MSG_MAX];
	ps_log_fn log;
	void *log_ctx;
};

/* Add dir (len bytes) to the search list unless it is there already;
 * trailing slashes do not count. */
static int add_dir(struct ps_jit_names *names, const char *dir, size_t len)
{
	char *copy;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 0)
		return 0;
	for (size_t i = 0; i < names->nr_dirs; i++)
		if (strlen(names->dirs[i]) == len && memcmp(names->dirs[i], dir, len) == 0)
			return 0;
	if (!ps_array_reserve((void **)&names->dirs, &names->cap_dirs, names->nr_dirs + 1,
	                      sizeof(*names->dirs), 1))
		return -ENOMEM;
	copy = strndup(dir, len);
	if (!copy)
		return -ENOMEM;
	names->dirs[names->nr_dirs++] = copy;
	return 0;
}

int ps_jit_names_new(const struct ps_jit_names_opts *opts, int32_t pid, struct ps_jit_names **out)
{
	struct ps_jit_names_opts o;
	struct ps_jit_names *names;
	const char *data;
	int err = 0;

	*out = NULL;
	if (pid < 0 || ps_opts_copy(&o, sizeof(o), opts))
		return -EINVAL;
	names = calloc(1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	names->pid = pid;
	names->log = o.log;
	names->log_ctx = o.log_ctx;
	if (o.perf_map_dir)
		err = add_dir(names, o.perf_map_dir, strlen(o.perf_map_dir));
	for (size_t i = 0; !err && i < o.nr_perf_map_dirs; i++)
		if (o.perf_map_dirs[i])
			err = add_dir(names, o.perf_map_dirs[i], strlen(o.perf_map_dirs[i]));
	names->pool = o.pool;
	if (!err && !names->pool) {
		/* the explicit directories are the first nr_dirs so far */
		err = ps_jit_pool_new((const char *const *)names->dirs, names->nr_dirs, o.files,
		                      &o.limits, o.log, o.log_ctx, &names->pool);
		names->own_pool = !err;
	}
	data = o.perf_data_path;
	if (!err && data && data[0] && strcmp(data, "-") != 0) {
		const char *slash = strrchr(data, '/');

		if (!slash)
			err = add_dir(names, ".", 1);
		else
			err = add_dir(names, data, slash == data ? 1 : (size_t)(slash - data));
	}
	if (!err)
		err = add_dir(names, "/tmp", 4);
	if (err) {
		ps_jit_names_free(names);
		return err;
	}
	*out = names;
	return 0;
}

void ps_jit_names_free(struct ps_jit_names *names)
{
	if (!names)
		return;
	for (size_t i = 0; i < names->nr_dirs; i++)
		free(names->dirs[i]);
	free(names->dirs);
	FOR_EACH_SOURCE(s)
	free(names->choice[s].candidates);
	if (names->own_pool)
		ps_jit_pool_free(names->pool);
	free(names->where);
	free(names->namespace_root);
	free(names);
}

int ps_jit_names_set_namespace_root(struct ps_jit_names *names, const char *root)
{
	free(names->namespace_root);
	names->namespace_root = root ? strdup(root) : NULL;
	return !root || names->namespace_root ? 0 : -ENOMEM;
}

static int add_candidate(struct ps_jit_names *names, const char *path, enum ps_jit_source source,
                         bool by_name)
{
	struct choice *c = &names->choice[source];
	long index = ps_jit_pool_add(names->pool, path, source, false);

	if (index == -ENOSPC)
		return 0;
	if (index < 0)
		return (int)index;
	for (size_t i = 0; i < c->nr; i++)
		if (c->candidates[i].file == (size_t)index)
			return 0;
	if (!ps_array_reserve((void **)&c->candidates, &c->cap, c->nr + 1, sizeof(*c->candidates),
	                      1))
		return -ENOMEM;
	c->candidates[c->nr++] = (struct candidate){ .file = (size_t)index, .by_name = by_name };
	return 0;
}

/* The innermost pid of NStgid in /proc/PID/status, and whether the pid
 * lives in another mount namespace than ours; false when the process is
 * not running here (or the files are read from an archive). */
static bool live_namespace_pid(const struct ps_jit_names *names, int32_t *nspid)
{
	char path[64], buf[STATUS_MAX];
	struct stat mine, theirs;
	const char *line, *last;
	ssize_t n;
	int fd;
	long value;
	char *end;

	if (names->pool->hooks && names->pool->hooks->resolve)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)names->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	line = strstr(buf, "\nNStgid:");
	if (!line)
		return false;
	line += strlen("\nNStgid:");
	last = line;
	for (const char *p = line; *p && *p != '\n'; p++)
		if ((*p == '\t' || *p == ' ') && p[1] >= '0' && p[1] <= '9')
			last = p + 1;
	errno = 0;
	value = strtol(last, &end, 10);
	if (errno || end == last || value <= 0 || value > INT32_MAX)
		return false;
	*nspid = (int32_t)value;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)names->pid);
	if (stat("/proc/self/ns/mnt", &mine) || stat(path, &theirs))
		return *nspid != names->pid;
	return *nspid != names->pid || mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev;
}

/* Every perf map and jitdump in the /tmp of the pid's mount namespace,
 * seen through a process that still runs there: the pid's own files are
 * among them when the pid has ended (its namespace pid, which names
 * them, is not known then). Candidates by content, as a --perf-map-dir
 * folder's are, but not reported as left over. */
static int gather_namespace(struct ps_jit_names *names)
{
	char dir[96], path[4096];
	struct dirent *entry;
	DIR *tmp;
	int err = 0;

	if (snprintf(dir, sizeof(dir), "%s/tmp", names->namespace_root) >= (int)sizeof(dir))
		return 0;
	tmp = opendir(dir);
	if (!tmp)
		return 0;
	while (!err && (entry = readdir(tmp)) != NULL) {
		int source = ps_jit_file_source(entry->d_name);

		if (source < 0 ||
		    snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name) >= (int)sizeof(path))
			continue;
		err = add_candidate(names, path, (enum ps_jit_source)source, false);
	}
	closedir(tmp);
	return err;
}

static int gather(struct ps_jit_names *names)
{
	static const char *const patterns[NR_SOURCES] = {
		[PS_JIT_SOURCE_MAP] = "%s/perf-%d.map",
		[PS_JIT_SOURCE_DUMP] = "%s/jit-%d.dump",
	};
	const struct ps_file_hooks *hooks = names->pool->hooks;
	char path[4096];
	int32_t nspid;
	int err = 0;

	if (hooks && hooks->resolve && hooks->path_at) {
		/* an archive of a process that ran in a namespace: its file
		 * was read (and packed) under /proc/PID/root/tmp */
		const char *archived;
		char prefix[64];
		int len = snprintf(prefix, sizeof(prefix), "/proc/%d/root/tmp/", (int)names->pid);

		for (size_t i = 0; !err && (archived = hooks->path_at(hooks->resolve_ctx, i));
		     i++) {
			int source;

			if (strncmp(archived, prefix, (size_t)len) != 0 ||
			    strchr(archived + len, '/') ||
			    (source = ps_jit_file_source(archived + len)) < 0)
				continue;
			err = add_candidate(names, archived, (enum ps_jit_source)source, true);
		}
	}
	if (!err && live_namespace_pid(names, &nspid))
		FOR_EACH_SOURCE(s)
		{
			char root[64];

			if (err)
				break;

			snprintf(root, sizeof(root), "/proc/%d/root/tmp", (int)names->pid);
			snprintf(path, sizeof(path), patterns[s], root, (int)nspid);
			err = add_candidate(names, path, (enum ps_jit_source)s, true);
		}
	if (!err && names->namespace_root)
		err = gather_namespace(names);
	for (size_t i = 0; i < names->nr_dirs && !err; i++)
		FOR_EACH_SOURCE(s)
		{
			if (err)
				break;
			int len = snprintf(path, sizeof(path), patterns[s], names->dirs[i],
			                   (int)names->pid);

			if (len > 0 && (size_t)len < sizeof(path))
				err = add_candidate(names, path, (enum ps_jit_source)s, true);
		}
	if (!err)
		err = ps_jit_pool_list(names->pool, (const char *const *)names->dirs,
		                       names->nr_dirs);
	for (size_t i = 0; i < names->pool->nr_files && !err; i++)
		if (names->pool->files[i].listed)
			err = add_candidate(names, names->pool->files[i].path,
			                    names->pool->files[i].source, false);
	return err;
}

static char *describe_search(const struct ps_jit_names *names)
{
	struct ps_strbuf text = PS_STRBUF_INIT;

	ps_strbuf_addf(&text, "no perf-%d.map or jit-%d.dump in ", (int)names->pid,
	               (int)names->pid);
	for (size_t i = 0; i < names->nr_dirs; i++)
		ps_strbuf_addf(&text, "%s%s", i ? ", " : "", names->dirs[i]);
	if (ps_strbuf_failed(&text)) {
		ps_strbuf_release(&text);
		return NULL;
	}
	return text.buf;
}

int ps_jit_names_load(struct ps_jit_names *names)
{
	int found[NR_SOURCES] = { 0 }, failure = 0, err;

	if (names->loaded)
		return names->load_result;
	names->loaded = true;
	err = gather(names);
	if (err) {
		names->load_result = err;
		snprintf(names->errmsg, sizeof(names->errmsg), "out of memory");
		return err;
	}
	FOR_EACH_SOURCE(s)
	{
		struct choice *c = &names->choice[s];
		bool seen = false;

		c->chosen = -1;
		for (size_t i = 0; i < c->nr; i++) {
			struct pool_file *f = &names->pool->files[c->candidates[i].file];

			ps_jit_pool_table(names->pool, c->candidates[i].file);
			/* the result is of the files of the pid's name, as
			 * before there were listed ones; those are reported by
			 * the choice and the pool */
			if (!c->candidates[i].by_name) {
				names->nr_listed += f->table != NULL;
				continue;
			}
			/* the first of the pid's name found says what loading
			 * found (a file that failed and a good one after it:
			 * the failure is said, the good one used) */
			if (f->err == -ENOENT || seen)
				continue;
			seen = true;
			if (!f->err) {
				found[s] = 1;
				continue;
			}
			if (!failure) {
				failure = f->err;
				snprintf(names->errmsg, sizeof(names->errmsg), "%s",
				         f->errmsg ? f->errmsg : "out of memory");
			}
		}
	}
	if (found[PS_JIT_SOURCE_MAP] || found[PS_JIT_SOURCE_DUMP])
		names->load_result = found[PS_JIT_SOURCE_MAP] + found[PS_JIT_SOURCE_DUMP];
	else if (failure)
		names->load_result = failure;
	else
		names->load_result = -ENOENT;
	if (names->load_result == -ENOENT) {
		names->where = describe_search(names);
		if (!names->where)
			names->load_result = -ENOMEM;
	}
	return names->load_result;
}

static const struct ps_jit_table *candidate_table(const struct ps_jit_names *names,
                                                  const struct candidate *c)
{
	return names->pool->files[c->file].table;
}

/* Two tables of the same entries (a file and its copy) are one answer. */
static bool same_entries(const struct ps_jit_table *a, const struct ps_jit_table *b)
{
	struct ps_jit_symbol x, y;
	size_t n = ps_jit_table_count(a);

	if (n != ps_jit_table_count(b))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!ps_jit_table_at(a, i, &x) || !ps_jit_table_at(b, i, &y) ||
		    x.start != y.start || x.size != y.size || strcmp(x.name, y.name) != 0)
			return false;
	}
	return true;
}

/* Covers at least 9 in 10 of the pid's lookups; before any lookup, a file
 * of the pid's name does (as it always did), a listed one does not. */
static bool accounts_for(const struct ps_jit_names *names, const struct candidate *c)
{
	if (!candidate_table(names, c))
		return false;
	if (!names->lookups)
		return c->by_name;
	return c->hits * 10 >= names->lookups * 9;
}

/* The candidate answering now: the chosen one; before the choice, the
 * first (in precedence) that accounts for the lookups so far, else the
 * first file of the pid's name. -1: none. */
static long leader(const struct ps_jit_names *names, const struct choice *c)
{
	long first_by_name = -1;

	if (c->decided)
		return c->chosen;
	for (size_t i = 0; i < c->nr; i++) {
		if (accounts_for(names, &c->candidates[i]))
			return (long)i;
		if (first_by_name < 0 && c->candidates[i].by_name &&
		    candidate_table(names, &c->candidates[i]))
			first_by_name = (long)i;
	}
	return first_by_name;
}

static const char *file_path(const struct ps_jit_names *names, const struct candidate *c)
{
	return names->pool->files[c->file].path;
}

static void decide_source(struct ps_jit_names *names, enum ps_jit_source source)
{
	struct choice *c = &names->choice[source];
	struct ps_jit_pool *pool = names->pool;
	unsigned long long n = names->lookups;
	long best = -1;

	if (c->decided)
		return;
	for (size_t i = 0; i < c->nr && best < 0; i++)
		if (accounts_for(names, &c->candidates[i]))
			best = (long)i;
	c->decided = true;
	c->chosen = best;
	if (best >= 0) {
		const struct candidate *chosen = &c->candidates[best];

		pool->files[chosen->file].taken_by = names->pid;
		for (size_t i = (size_t)best + 1; i < c->nr; i++) {
			const struct candidate *other = &c->candidates[i];

			if (!accounts_for(names, other))
				continue;
			/* a copy of the same file is no rival */
			pool->files[other->file].taken_by = names->pid;
			if (same_entries(candidate_table(names, other),
			                 candidate_table(names, chosen)))
				continue;
			ps_log(names->log, names->log_ctx, PS_LOG_WARN,
			       "pid %d: %s and %s both account for its sampled JIT addresses (%llu "
			       "and %llu of %llu); the first is used",
			       (int)names->pid, file_path(names, chosen), file_path(names, other),
			       (unsigned long long)chosen->hits, (unsigned long long)other->hits,
			       n);
		}
		if (!chosen->by_name)
			ps_log(names->log, names->log_ctx, PS_LOG_INFO,
			       "%s: taken for pid %d: its entries account for %llu of its %llu "
			       "sampled JIT addresses",
			       file_path(names, chosen), (int)names->pid,
			       (unsigned long long)chosen->hits, n);
	}
	/* a file of the pid's name that is not taken is said */
	for (size_t i = 0; i < c->nr; i++) {
		const struct candidate *other = &c->candidates[i];

		if ((long)i == best || !other->by_name || !candidate_table(names, other) ||
		    pool->files[other->file].taken_by == names->pid)
			continue;
		ps_log(names->log, names->log_ctx, PS_LOG_WARN,
		       "%s: refused for pid %d: its entries account for %llu of its %llu sampled "
		       "JIT addresses (%s)",
		       file_path(names, other), (int)names->pid, (unsigned long long)other->hits, n,
		       ps_jit_table_stats(candidate_table(names, other))->ends_cut
		               ? "it ends inside a record: its process did not finish writing "
		                 "it, as a forked CPython child that ends with os._exit() leaves "
		                 "its jitdump"
		               : "the file of another process that had the pid, or stale");
	}
}

/* Both sources at once, when the evidence is in (or at the end). A pid
 * whose files were not found by name and that no listed file accounts
 * for is said here, not at loading (the listed files might have). */
static void decide(struct ps_jit_names *names)
{
	if (names->decided)
		return;
	names->decided = true;
	FOR_EACH_SOURCE(s)
	decide_source(names, (enum ps_jit_source)s);
	if (names->load_result == -ENOENT && names->nr_listed &&
	    names->choice[PS_JIT_SOURCE_MAP].chosen < 0 &&
	    names->choice[PS_JIT_SOURCE_DUMP].chosen < 0)
		ps_log(names->log, names->log_ctx, PS_LOG_WARN,
		       "%s, and none of the %zu perf maps and jitdumps of --perf-map-dir accounts "
		       "for its %llu sampled JIT addresses: JIT frames of pid %d (Python's "
		       "included) stay unnamed",
		       names->where, names->nr_listed, (unsigned long long)names->lookups,
		       (int)names->pid);
}

void ps_jit_names_decide(struct ps_jit_names *names)
{
	if (names->loaded && names->lookups)
		decide(names);
}

bool ps_jit_names_lookup(struct ps_jit_names *names, uint64_t addr, struct ps_jit_symbol *out)
{
	return ps_jit_names_lookup_as(names, addr, true, out);
}

bool ps_jit_names_lookup_as(struct ps_jit_names *names, uint64_t addr, bool evidence,
                            struct ps_jit_symbol *out)
{
	long dump, map;

	if (!names->loaded)
		ps_jit_names_load(names);
	if (evidence && !names->decided) {
		names->lookups++;
		FOR_EACH_SOURCE(s)
		for (size_t i = 0; i < names->choice[s].nr; i++) {
			struct candidate *c = &names->choice[s].candidates[i];

			c->hits += ps_jit_table_lookup(candidate_table(names, c), addr, NULL);
		}
		if (names->lookups >= PS_JIT_MATCH_EVIDENCE)
			decide(names);
	}
	dump = leader(names, &names->choice[PS_JIT_SOURCE_DUMP]);
	map = leader(names, &names->choice[PS_JIT_SOURCE_MAP]);
	return (dump >= 0 &&
	        ps_jit_table_lookup(
	                candidate_table(names, &names->choice[PS_JIT_SOURCE_DUMP].candidates[dump]),
	                addr, out)) ||
	       (map >= 0 &&
	        ps_jit_table_lookup(
	                candidate_table(names, &names->choice[PS_JIT_SOURCE_MAP].candidates[map]),
	                addr, out));
}

bool ps_jit_names_decided(const struct ps_jit_names *names)
{
	return names->decided;
}

const char *ps_jit_names_where(const struct ps_jit_names *names)
{
	/* a file of another name taken (or answering so far) was found */
	if (leader(names, &names->choice[PS_JIT_SOURCE_MAP]) >= 0 ||
	    leader(names, &names->choice[PS_JIT_SOURCE_DUMP]) >= 0)
		return NULL;
	return names->where;
}

size_t ps_jit_names_nr_listed(const struct ps_jit_names *names)
{
	return names->nr_listed;
}

const char *ps_jit_names_errmsg(const struct ps_jit_names *names)
{
	return names->errmsg[0] ? names->errmsg : NULL;
}

const struct ps_jit_table *ps_jit_names_table(const struct ps_jit_names *names,
                                              enum ps_jit_source source)
{
	const struct choice *c = &names->choice[source];
	long i = leader(names, c);

	return i >= 0 ? candidate_table(names, &c->candidates[i]) : NULL;
}

const struct ps_jit_table *ps_jit_names_by_name(const struct ps_jit_names *names,
                                                enum ps_jit_source source)
{
	const struct choice *c = &names->choice[source];

	for (size_t i = 0; i < c->nr; i++) {
		const struct pool_file *f = &names->pool->files[c->candidates[i].file];

		if (!c->candidates[i].by_name || f->err == -ENOENT)
			continue;
		/* the first found, even if it could not be used, as perf */
		return f->table;
	}
	return NULL;
}
