/* The Python side of a command `pystitch record` launches: every CPython
 * process it starts, children and grandchildren too, gets names for its
 * Python frames. 3.12+ through PYTHONPERFSUPPORT=1 (CPython's own perf
 * maps, as -X perf); 3.7-3.11 through the pystitch_perf module, turned on
 * by a start-up hook (record_hook.py, as sitecustomize on PYTHONPATH)
 * that builds the module for each interpreter on first use into a
 * per-user cache. Both are in the environment, which every process the
 * command starts inherits. The hook and the module's source are part of
 * the program (record_files.c) and written into the cache, so record
 * works the same from the build tree and when installed. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_priv.h"

#define PREPARE_TIMEOUT_MS 120000 /* a first build of the module */

/* A directory that is ours alone: created 0700 if missing, else it must
 * be a directory (not a link) of this user that nobody else may write,
 * since every recorded Python process runs code from it. */
static int private_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

/* mkdir -p, new directories 0700. */
static int make_parents(const char *path)
{
	char *copy = strdup(path);
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; !err; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char end = *p;

		*p = '\0';
		if (mkdir(copy, 0700) != 0 && errno != EEXIST)
			err = -errno;
		*p = end;
		if (!end)
			break;
	}
	free(copy);
	return err;
}

char *record_cache_dir(const struct ps_cli *cli)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *path = NULL;
	int err = -ENOENT;

	if (xdg && *xdg == '/') {
		if (make_parents(xdg) == 0 && asprintf(&path, "%s/pystitch", xdg) >= 0)
			err = private_dir(path);
	} else if (home && *home == '/') {
		char *cache;

		if (asprintf(&cache, "%s/.cache", home) < 0)
			return NULL;
		if (make_parents(cache) == 0 && asprintf(&path, "%s/pystitch", cache) >= 0)
			err = private_dir(path);
		free(cache);
	}
	if (err) {
		/* no usable home: a directory of this user's own in /tmp */
		free(path);
		path = NULL;
		if (asprintf(&path, "/tmp/pystitch-cache-%u", (unsigned)geteuid()) < 0)
			return NULL;
		err = private_dir(path);
	}
	if (err) {
		ps_cli_command_error(cli,
		                     "no private cache directory for the start-up hook (%s: %s)",
		                     path, strerror(-err));
		free(path);
		return NULL;
	}
	return path;
}

/* Write text to dir/name unless it holds it already; atomically, so that
 * a process starting meanwhile sees the old file or the new one. */
static int put_file(const char *dir, const char *name, const char *text)
{
	size_t len = strlen(text);
	char *path = NULL, *partial = NULL;
	struct stat st;
	int fd, err = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	if (stat(path, &st) == 0 && (size_t)st.st_size == len) {
		free(path);
		return 0; /* the directory is named by the content's hash */
	}
	if (asprintf(&partial, "%s.%d", path, (int)getpid()) < 0) {
		free(path);
		return -ENOMEM;
	}
	fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
	} else {
		if (write(fd, text, len) != (ssize_t)len)
			err = errno ? -errno : -EIO;
		if (close(fd) != 0 && !err)
			err = -errno;
		if (!err && rename(partial, path) != 0)
			err = -errno;
		if (err)
			unlink(partial);
	}
	free(partial);
	free(path);
	return err;
}

/* FNV-1a of every embedded file: the hook's directory changes with them,
 * and so do the modules built from them. */
static uint64_t files_hash(void)
{
	uint64_t hash = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < record_nr_files; i++)
		for (const char *s = record_files[i].text; *s; s++)
			hash = (hash ^ (unsigned char)*s) * 0x100000001b3ull;
	return hash;
}

int record_python_prepare(struct ps_cli *cli, struct record_python *python)
{
	const char *old_path = getenv("PYTHONPATH");
	char *cache;
	int err, n = 0;

	*python = (struct record_python){ 0 };
	cache = record_cache_dir(cli);
	if (!cache)
		return PS_EXIT_USAGE;
	if (asprintf(&python->hook_dir, "%s/record-%016llx", cache,
	             (unsigned long long)files_hash()) < 0) {
		free(cache);
		return ps_cli_out_of_memory(cli);
	}
	python->cache_dir = cache;
	err = private_dir(python->hook_dir);
	for (size_t i = 0; !err && i < record_nr_files; i++)
		err = put_file(python->hook_dir, record_files[i].name, record_files[i].text);
	if (err) {
		ps_cli_command_error(cli, "cannot write the start-up hook into %s: %s",
		                     python->hook_dir, strerror(-err));
		return PS_EXIT_USAGE;
	}
	if (asprintf(&python->env[n++], "PYTHONPERFSUPPORT=1") < 0 ||
	    asprintf(&python->env[n++], "PYSTITCH_RECORD_CACHE=%s", python->hook_dir) < 0 ||
	    asprintf(&python->env[n++], "PYTHONPATH=%s%s%s", python->hook_dir,
	             old_path && *old_path ? ":" : "", old_path ? old_path : "") < 0)
		return ps_cli_out_of_memory(cli);
	return PS_EXIT_OK;
}

void record_python_release(struct record_python *python)
{
	for (size_t i = 0; i < sizeof(python->env) / sizeof(python->env[0]); i++)
		free(python->env[i]);
	free(python->hook_dir);
	free(python->cache_dir);
	*python = (struct record_python){ 0 };
}

int record_run_capture(char *const *argv, char *const *env, char *out, size_t size,
                       unsigned timeout_ms)
{
	int fds[2], status = -1;
	size_t used = 0;
	struct timespec start, now;
	pid_t pid;

	if (size)
		out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		signal(SIGPIPE, SIG_DFL);
		for (size_t i = 0; env && env[i]; i++)
			putenv(env[i]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		long waited;
		char sink[512];
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 +
		         (now.tv_nsec - start.tv_nsec) / 1000000;
		if (waited >= (long)timeout_ms) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)(timeout_ms - (unsigned long)waited)) <= 0)
			continue;
		if (size && used + 1 < size)
			n = read(fds[0], out + used, size - 1 - used);
		else
			n = read(fds[0], sink, sizeof(sink));
		if (n <= 0)
			break;
		if (size && used + 1 < size) {
			used += (size_t)n;
			out[used] = '\0';
		}
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* Whether a file name is a CPython interpreter's: python, python3,
 * python3.12, python3.14t, python3.13d. */
static bool is_python_name(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p;

	base = base ? base + 1 : path;
	if (strncmp(base, "python", 6) != 0)
		return false;
	p = base + 6;
	while ((*p >= '0' && *p <= '9') || *p == '.')
		p++;
	while (*p >= 'a' && *p <= 'z')
		p++;
	return *p == '\0';
}

/* The interpreter command runs: command[0] itself, or the one its #!
 * line names (directly or through env). A malloc'd name or path, or
 * NULL. */
static char *command_interpreter(char *const *command)
{
	const char *name = command[0];
	char *path = NULL, line[256], *p, *word, *save = NULL;
	FILE *f;

	if (is_python_name(name))
		return strdup(name);
	if (!strchr(name, '/')) {
		const char *dirs = getenv("PATH");

		for (; dirs && *dirs && !path;) {
			size_t len = strcspn(dirs, ":");
			char *candidate;

			if (asprintf(&candidate, "%.*s/%s", (int)len, dirs, name) < 0)
				return NULL;
			if (access(candidate, X_OK) == 0)
				path = candidate;
			else
				free(candidate);
			dirs += len + (dirs[len] == ':');
		}
	} else {
		path = strdup(name);
	}
	if (!path)
		return NULL;
	f = fopen(path, "r");
	free(path);
	if (!f)
		return NULL;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || strncmp(line, "#!", 2) != 0)
		return NULL;
	line[strcspn(line, "\r\n")] = '\0';
	word = strtok_r(line + 2, " \t", &save);
	if (word && strcmp(strrchr(word, '/') ? strrchr(word, '/') + 1 : word, "env") == 0) {
		word = strtok_r(NULL, " \t", &save);
		while (word && word[0] == '-') /* env -S and friends */
			word = strtok_r(NULL, " \t", &save);
	}
	return word && is_python_name(word) ? strdup(word) : NULL;
}

int record_python_check_command(struct ps_cli *cli, const struct record_python *python,
                                char *const *command)
{
	char *interpreter = command_interpreter(command), *hook = NULL, *cache_env = NULL,
	     out[1024], *env[2] = { NULL, NULL };
	int status, major = 0, minor = 0;

	if (!interpreter)
		return 0;
	if (asprintf(&hook, "%s/sitecustomize.py", python->hook_dir) < 0 ||
	    asprintf(&cache_env, "PYSTITCH_RECORD_CACHE=%s", python->hook_dir) < 0)
		goto out;
	env[0] = cache_env;
	status = record_run_capture((char *[]){ interpreter, "-S", hook, "--prepare", NULL }, env,
	                            out, sizeof(out), PREPARE_TIMEOUT_MS);
	out[strcspn(out, "\n")] = '\0';
	if (sscanf(out, "%*s %d.%d", &major, &minor) != 2)
		major = minor = 0;
	if (status != 0 || (strncmp(out, "ready ", 6) != 0 && strncmp(out, "unnamed ", 8) != 0 &&
	                    strncmp(out, "names ", 6) != 0)) {
		ps_cli_command_error(cli, "could not ask %s how to name its Python frames%s%s",
		                     interpreter, *out ? ": " : "", out);
	} else if (strncmp(out, "unnamed ", 8) == 0) {
		const char *why = strchr(out + 8, ' ');

		ps_cli_command_error(cli, "%s: its Python frames will not be named: %s",
		                     interpreter, why ? why + 1 : out + 8);
	} else if (strncmp(out, "names ", 6) == 0) {
		const char *why = strchr(out + 6, ' ');

		ps_cli_command_error(cli, "%s: its Python frames will get no line numbers: %s",
		                     interpreter, why ? why + 1 : out + 6);
	} else if (cli->verbose) {
		ps_progress_clear(cli->progress);
		fprintf(stderr, "%s: record: %s: CPython %s\n", cli->program, interpreter, out + 6);
	}
out:
	free(hook);
	free(cache_env);
	free(interpreter);
	return major * 100 + minor;
}
