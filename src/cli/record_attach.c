/* `pystitch record --pid`: the running processes to record. Each must
 * exist and run CPython (its mappings name libpython or a python
 * executable). One that names no Python frames (it has no perf map open)
 * is told how to start so that it would; on CPython 3.14+, record turns
 * its perf trampolines on for the recording instead, through CPython's
 * own safe remote execution (PEP 768: sys.remote_exec(), run by the
 * target's own interpreter, inside its namespaces when it is in a
 * container), and off again at the end. Frames already running when they
 * were turned on have no trampoline: they stay unnamed. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record_priv.h"

#define REMOTE_TIMEOUT_MS 5000u /* the target runs the script at its next bytecode */
#define REMOTE_CALL_TIMEOUT_MS 20000

/* The version in a CPython file's name ("libpython3.12.so.1.0",
 * "python3.14t"): true and major, minor. */
static bool version_of_name(const char *base, int *major, int *minor)
{
	const char *p = NULL;

	if (strncmp(base, "libpython", 9) == 0)
		p = base + 9;
	else if (strncmp(base, "python", 6) == 0)
		p = base + 6;
	return p && sscanf(p, "%d.%d", major, minor) == 2 && *major >= 2;
}

/* The CPython a process runs, from the files it maps. */
static bool process_python(pid_t pid, int *major, int *minor)
{
	char path[64], line[PATH_MAX + 128];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/') + 1;
		found = version_of_name(base, major, minor);
	}
	fclose(f);
	return found;
}

/* Whether the process has its perf map (or jitdump) open: it is writing
 * names for its Python frames. */
static bool writes_names(pid_t pid)
{
	char dir_path[64], link[PATH_MAX], map[64], dump[64];
	pid_t inner = record_namespace_pid(pid);
	struct dirent *entry;
	bool found = false;
	DIR *dir;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)pid);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)inner);
	snprintf(dump, sizeof(dump), "jit-%d.dump", (int)inner);
	dir = opendir(dir_path);
	if (!dir)
		return false;
	while (!found && (entry = readdir(dir))) {
		char fd_path[PATH_MAX];
		ssize_t n;

		if (entry->d_name[0] == '.')
			continue;
		snprintf(fd_path, sizeof(fd_path), "%s/%s", dir_path, entry->d_name);
		n = readlink(fd_path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, map) == 0 ||
		        (strrchr(link, '/') && strcmp(strrchr(link, '/') + 1, dump) == 0);
	}
	closedir(dir);
	return found;
}

/* Run code in the target through sys.remote_exec() and wait for the one
 * line it writes: the line, or NULL (*why says why). The script and its
 * answer live in the target's own /tmp. */
static char *remote_run(pid_t pid, const char *code, char *why, size_t why_size)
{
	char script[96], answer[96], script_here[160], answer_here[160], exe[PATH_MAX], call[512],
	        out[512], line[256];
	pid_t inner = record_namespace_pid(pid);
	bool same = record_same_mount_namespace(pid);
	char pid_text[16];
	FILE *f;
	int status;
	ssize_t n;
	struct timespec pause = { 0, 50000000 };

	snprintf(script, sizeof(script), "/tmp/pystitch-record-%d-%d.py", (int)getpid(),
	         (int)inner);
	snprintf(answer, sizeof(answer), "/tmp/pystitch-record-%d-%d.answer", (int)getpid(),
	         (int)inner);
	snprintf(script_here, sizeof(script_here), "/proc/%d/root%s", (int)pid, script);
	snprintf(answer_here, sizeof(answer_here), "/proc/%d/root%s", (int)pid, answer);
	unlink(answer_here);
	f = fopen(script_here, "w");
	if (!f) {
		snprintf(why, why_size, "cannot write %s: %s", script_here, strerror(errno));
		return NULL;
	}
	fprintf(f,
	        "import sys\n"
	        "try:\n"
	        "%s"
	        "except Exception as error:\n"
	        "    state = 'failed ' + repr(error)\n"
	        "with open('%s', 'w') as answer:\n"
	        "    answer.write(state + '\\n')\n",
	        code, answer);
	if (fclose(f) != 0) {
		snprintf(why, why_size, "cannot write %s", script_here);
		unlink(script_here);
		return NULL;
	}
	snprintf(call, sizeof(call), "import sys; sys.remote_exec(%d, '%s')", (int)inner, script);
	if (same) {
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
		status = record_run_capture((char *[]){ exe, "-I", "-c", call, NULL }, NULL, out,
		                            sizeof(out), REMOTE_CALL_TIMEOUT_MS);
	} else {
		/* the target's interpreter, as its own filesystem names it */
		char link[64];

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
		status = record_run_capture((char *[]){ "nsenter", "-t", pid_text, "-m", "-p", "--",
		                                        exe, "-I", "-c", call, NULL },
		                            NULL, out, sizeof(out), REMOTE_CALL_TIMEOUT_MS);
	}
	if (status != 0) {
		/* the last line of a traceback says what went wrong */
		size_t len = strlen(out);
		char *last;

		while (len && out[len - 1] == '\n')
			out[--len] = '\0';
		last = strrchr(out, '\n');
		snprintf(why, why_size, "sys.remote_exec() failed%s%.300s", *out ? ": " : "",
		         last ? last + 1 : out);
		unlink(script_here);
		return NULL;
	}
	for (unsigned waited = 0; waited < REMOTE_TIMEOUT_MS; waited += 50) {
		f = fopen(answer_here, "r");
		if (f) {
			char *got = fgets(line, sizeof(line), f);

			fclose(f);
			if (got && strchr(line, '\n')) {
				line[strcspn(line, "\n")] = '\0';
				unlink(answer_here);
				unlink(script_here);
				return strdup(line);
			}
		}
		nanosleep(&pause, NULL);
	}
	snprintf(why, why_size, "it ran no Python code within %u s", REMOTE_TIMEOUT_MS / 1000);
	unlink(script_here);
	return NULL;
}

static void say(struct ps_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct ps_cli *cli, const char *fmt, ...)
{
	va_list ap;

	if (cli->quiet)
		return;
	ps_progress_clear(cli->progress);
	fprintf(stderr, "%s: record: ", cli->program);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void comm_of(pid_t pid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(comm, size, "?");
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, (int)size, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
}

/* Whether the process has ended (gone, or a zombie its parent has not
 * reaped yet): nothing runs there any more. */
static bool process_ended(pid_t pid)
{
	char path[64], line[512], *close;
	FILE *f;
	bool ended = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT;
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses */
	if (fgets(line, sizeof(line), f) && (close = strrchr(line, ')')) != NULL)
		ended = close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
	fclose(f);
	return ended;
}

/* Turn a 3.14+ target's trampolines on, or say why not. */
static void activate(struct ps_cli *cli, struct record_target *target, const char *comm)
{
	char why[512], *state;

	state = remote_run(target->pid,
	                   "    state = 'active'\n"
	                   "    if not sys.is_stack_trampoline_active():\n"
	                   "        sys.activate_stack_trampoline('perf')\n"
	                   "        state = 'activated'\n",
	                   why, sizeof(why));
	if (state && strcmp(state, "activated") == 0) {
		target->activated = target->names_frames = true;
		say(cli,
		    "pid %d (%s): turned CPython %d.%d's perf trampolines on (sys.remote_exec); "
		    "frames running before now stay unnamed",
		    (int)target->pid, comm, target->major, target->minor);
	} else if (state && strcmp(state, "active") == 0) {
		target->names_frames = true;
	} else {
		say(cli, "pid %d (%s): could not turn perf trampolines on: %s; recording anyway",
		    (int)target->pid, comm, state ? state : why);
	}
	free(state);
}

int record_attach(struct ps_cli *cli, const struct record_settings *settings,
                  struct record_target **out)
{
	struct record_target *targets =
	        calloc(settings->nr_pids ? settings->nr_pids : 1, sizeof(*targets));

	*out = targets;
	if (!targets)
		return ps_cli_out_of_memory(cli);
	for (size_t i = 0; i < settings->nr_pids; i++) {
		struct record_target *t = &targets[i];
		char proc[64], comm[64];
		struct stat st;

		t->pid = settings->pids[i];
		snprintf(proc, sizeof(proc), "/proc/%d", (int)t->pid);
		if (stat(proc, &st) != 0) {
			ps_cli_command_error(cli, "no process %d", (int)t->pid);
			return PS_EXIT_USAGE;
		}
		comm_of(t->pid, comm, sizeof(comm));
		if (!process_python(t->pid, &t->major, &t->minor)) {
			ps_cli_command_error(
			        cli,
			        "pid %d (%s) does not run CPython (it maps no libpython "
			        "nor python executable): record it with perf record -p %d",
			        (int)t->pid, comm, (int)t->pid);
			return PS_EXIT_USAGE;
		}
		t->names_frames = writes_names(t->pid);
		if (t->names_frames)
			continue;
		if (t->major > 3 || (t->major == 3 && t->minor >= 14))
			activate(cli, t, comm);
		else if (t->major == 3 && t->minor >= 12)
			say(cli,
			    "pid %d (%s): CPython %d.%d without perf trampolines: its Python "
			    "frames will not be named (start it with -X perf or "
			    "PYTHONPERFSUPPORT=1); recording anyway",
			    (int)t->pid, comm, t->major, t->minor);
		else if (t->major == 3 && t->minor >= 7)
			say(cli,
			    "pid %d (%s): CPython %d.%d without pystitch_perf: its Python frames "
			    "will not be named (start it with PYSTITCH_PERF=1 and pystitch_perf "
			    "installed, or under pystitch record); recording anyway",
			    (int)t->pid, comm, t->major, t->minor);
		else
			say(cli,
			    "pid %d (%s): CPython %d.%d has no perf support: native frames only; "
			    "recording anyway",
			    (int)t->pid, comm, t->major, t->minor);
	}
	return PS_EXIT_OK;
}

void record_detach(struct ps_cli *cli, struct record_target *targets, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		struct record_target *t = &targets[i];
		char why[512], comm[64], *state;

		if (!t->activated)
			continue;
		/* its trampolines went with it */
		if (process_ended(t->pid)) {
			say(cli, "pid %d: ended before the recording did; nothing to turn off",
			    (int)t->pid);
			continue;
		}
		comm_of(t->pid, comm, sizeof(comm));
		state = remote_run(t->pid,
		                   "    sys.deactivate_stack_trampoline()\n"
		                   "    state = 'deactivated'\n",
		                   why, sizeof(why));
		if (state && strcmp(state, "deactivated") == 0)
			say(cli, "pid %d (%s): turned perf trampolines off again", (int)t->pid,
			    comm);
		else
			say(cli, "pid %d (%s): could not turn perf trampolines off again: %s",
			    (int)t->pid, comm, state ? state : why);
		free(state);
	}
}
