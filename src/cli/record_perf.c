/* Running `perf record` for `pystitch record`: finding perf, knowing
 * before it starts whether this process may record, building perf's
 * command line, and waiting for it with the progress line drawn, Ctrl-C
 * and --duration turned into a clean stop (perf still writes its
 * capture). perf runs in pystitch's process group, so that a Ctrl-C
 * typed at the terminal reaches perf and the recorded command as it
 * would without pystitch; pystitch passes the signal on to perf as well,
 * for the Ctrl-C that reaches pystitch alone (kill -INT). */
#define _GNU_SOURCE /* execvpe */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_priv.h"

#define POLL_NS 100000000ull /* how often perf's state is looked at */
#define REDRAW_NS 250000000ull
#define TICK_NS 1000000000ull
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *search_path(const char *name)
{
	const char *path = getenv("PATH");
	size_t name_len = strlen(name);

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char *candidate = malloc(len + name_len + 3);
		struct stat st;

		if (!candidate)
			return NULL;
		sprintf(candidate, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(candidate, X_OK) == 0)
			return candidate;
		free(candidate);
		path += len + (path[len] == ':');
	}
	return NULL;
}

char *record_find_perf(const struct ps_cli *cli, const char *given)
{
	char *path;

	if (given && strchr(given, '/')) {
		if (access(given, X_OK) != 0) {
			ps_cli_command_error(cli, "cannot run --perf %s: %s", given,
			                     strerror(errno));
			return NULL;
		}
		return strdup(given);
	}
	path = search_path(given ? given : "perf");
	if (!path)
		ps_cli_command_error(
		        cli,
		        "%s not found on PATH: install perf (Debian: linux-perf; Ubuntu: "
		        "linux-tools-$(uname -r); Fedora: perf), or give --perf PATH",
		        given ? given : "perf");
	return path;
}

/* Whether the effective capability set holds bit (/proc/self/status). */
static bool has_capability(unsigned bit)
{
	char line[256];
	unsigned long long caps = 0;
	bool found = false;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			found = true;
			break;
		}
	fclose(f);
	return found && (caps >> bit) & 1;
}

bool record_may_record(const struct ps_cli *cli, const struct record_settings *settings)
{
	int paranoid = 2, needed = settings->all_cpus ? 0 : 2;
	FILE *f;

	if (geteuid() == 0 || has_capability(CAP_PERFMON_BIT) || has_capability(CAP_SYS_ADMIN_BIT))
		return true;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (!f || fscanf(f, "%d", &paranoid) != 1) {
		if (f)
			fclose(f);
		return true; /* perf will say */
	}
	fclose(f);
	if (paranoid <= needed)
		return true;
	ps_cli_command_error(
	        cli,
	        "kernel.perf_event_paranoid is %d: %s needs root (or CAP_PERFMON), or "
	        "`sysctl kernel.perf_event_paranoid=%d` (-1: everything)",
	        paranoid,
	        settings->all_cpus ? "recording every CPU (-a)" : "recording without root", needed);
	return false;
}

/* perf record's command line (argv, NULL-terminated; the strings it
 * makes are in owned, freed by the caller). */
static char **perf_argv(const char *perf, const struct record_settings *s, const char *data,
                        bool quiet, char ***owned)
{
	size_t cap = 24 + 2 * s->nr_events, n = 0, nr_owned = 0, command_len = 0;
	char **argv, **made;
	char frequency[32], call_graph[48], *pids = NULL;

	while (s->command && s->command[command_len])
		command_len++;
	argv = calloc(cap + command_len, sizeof(*argv));
	made = calloc(4, sizeof(*made));
	if (!argv || !made) {
		free(argv);
		free(made);
		return NULL;
	}
	argv[n++] = (char *)perf;
	argv[n++] = "record";
	if (quiet)
		argv[n++] = "-q";
	snprintf(frequency, sizeof(frequency), "%u", s->frequency);
	argv[n++] = "-F";
	argv[n++] = made[nr_owned++] = strdup(frequency);
	argv[n++] = "--call-graph";
	if (s->frame_pointers)
		snprintf(call_graph, sizeof(call_graph), "fp");
	else
		snprintf(call_graph, sizeof(call_graph), "dwarf,%u", s->stack_size);
	argv[n++] = made[nr_owned++] = strdup(call_graph);
	/* the clock the Python side's timestamps use (perf maps, jitdumps,
	 * pystitch_perf's side file), and wall-clock times in pprof */
	argv[n++] = "-k";
	argv[n++] = "CLOCK_MONOTONIC";
	/* the build ids stay in the capture's header; copying every file into
	 * ~/.debug at the end would only make the user wait */
	argv[n++] = "--no-buildid-cache";
	for (size_t i = 0; i < s->nr_events; i++) {
		argv[n++] = "-e";
		argv[n++] = (char *)s->events[i];
	}
	argv[n++] = "-o";
	argv[n++] = (char *)data;
	if (s->all_cpus) {
		argv[n++] = "-a";
	} else if (s->nr_pids) {
		size_t len = 12 * s->nr_pids + 1, at = 0;

		pids = made[nr_owned++] = malloc(len);
		if (pids)
			for (size_t i = 0; i < s->nr_pids; i++)
				at += (size_t)snprintf(pids + at, len - at, "%s%d", i ? "," : "",
				                       s->pids[i]);
		argv[n++] = "-p";
		argv[n++] = pids;
	}
	if (s->command) {
		argv[n++] = "--";
		for (size_t i = 0; i < command_len; i++)
			argv[n++] = s->command[i];
	}
	*owned = made;
	for (size_t i = 0; i < nr_owned; i++)
		if (!made[i]) {
			for (size_t j = 0; j < nr_owned; j++)
				free(made[j]);
			free(made);
			free(argv);
			return NULL;
		}
	return argv;
}

static void format_bytes(char *buf, size_t size, uint64_t bytes)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, size, "%.2f GB", (double)bytes / (1ull << 30));
	else
		snprintf(buf, size, "%.1f MB", (double)bytes / (1ull << 20));
}

static void draw_progress(struct ps_cli *cli, const struct ps_growing_capture *growing,
                          uint64_t elapsed_ns, bool stopping)
{
	char line[160], bytes[32];
	uint64_t secs = elapsed_ns / 1000000000ull;

	format_bytes(bytes, sizeof(bytes), growing->bytes);
	snprintf(line, sizeof(line), "recording %u:%02u  %llu samples  %s  (%s)",
	         (unsigned)(secs / 60), (unsigned)(secs % 60), (unsigned long long)growing->samples,
	         bytes, stopping ? "stopping" : "Ctrl-C stops");
	ps_progress_line(cli->progress, line);
}

/* The child: perf, with the additions to the environment and the signal
 * dispositions of a fresh process. A failed exec is told through the
 * pipe. */
static void exec_perf(char **argv, char *const *env, int report_fd)
{
	int err;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	for (size_t i = 0; env && env[i]; i++)
		putenv(env[i]);
	execv(argv[0], argv);
	err = errno;
	if (write(report_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int record_run_perf(struct ps_cli *cli, const char *perf, const struct record_settings *settings,
                    const char *data, char *const *env, record_tick_fn tick, void *tick_ctx,
                    struct record_outcome *outcome)
{
	struct sigaction action = { .sa_handler = on_stop_signal }, old[3];
	static const int signals[3] = { SIGINT, SIGTERM, SIGHUP };
	struct ps_growing_capture growing = { 0 };
	char **owned = NULL, **argv;
	uint64_t start, next_redraw, next_tick;
	int report[2], exec_errno = 0, status = 0;
	bool counting = true, stop_sent = false;
	pid_t pid;

	*outcome = (struct record_outcome){ 0 };
	argv = perf_argv(perf, settings, data, cli->verbose == 0, &owned);
	if (!argv)
		return ps_cli_out_of_memory(cli);
	if (cli->verbose) {
		ps_progress_clear(cli->progress);
		fprintf(stderr, "%s: record: running", cli->program);
		for (size_t i = 0; argv[i]; i++)
			fprintf(stderr, " %s", argv[i]);
		fputc('\n', stderr);
	}
	if (pipe2(report, O_CLOEXEC) != 0) {
		ps_cli_command_error(cli, "cannot start perf: %s", strerror(errno));
		status = PS_EXIT_USAGE;
		goto out;
	}
	stop_signal = 0;
	sigemptyset(&action.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(signals[i], &action, &old[i]);
	start = monotonic_ns();
	pid = fork();
	if (pid == 0)
		exec_perf(argv, env, report[1]);
	close(report[1]);
	if (pid < 0) {
		close(report[0]);
		ps_cli_command_error(cli, "cannot start perf: %s", strerror(errno));
		status = PS_EXIT_USAGE;
		goto restore;
	}
	if (read(report[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
		close(report[0]);
		waitpid(pid, NULL, 0);
		ps_cli_command_error(cli, "cannot run %s: %s", perf, strerror(exec_errno));
		status = PS_EXIT_USAGE;
		goto restore;
	}
	close(report[0]);
	outcome->started = true;
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	next_redraw = start + REDRAW_NS;
	next_tick = start + TICK_NS;
	for (;;) {
		struct timespec pause = { 0, (long)POLL_NS };
		uint64_t now;
		int wstatus;
		pid_t done = waitpid(pid, &wstatus, WNOHANG);

		if (done == pid) {
			outcome->perf_status = wstatus;
			break;
		}
		if (done < 0 && errno != EINTR) {
			outcome->perf_status = 0;
			break;
		}
		now = monotonic_ns();
		if (!stop_sent && settings->duration_ns && now - start >= settings->duration_ns) {
			outcome->by_duration = true;
			stop_signal = SIGINT;
		}
		if (stop_signal) {
			/* every stop asks perf for the same clean end: stop
			 * recording, write the capture */
			kill(pid, SIGINT);
			if (!stop_sent) {
				outcome->interrupted = true;
				outcome->recorded_ns = now - start;
				stop_sent = true;
			}
			stop_signal = 0;
		}
		if (now >= next_tick) {
			if (tick)
				tick(tick_ctx, pid);
			next_tick = now + TICK_NS;
		}
		if (now >= next_redraw && cli->progress->enabled) {
			if (counting && ps_capture_count_growing(data, &growing) != 0)
				counting = false;
			draw_progress(cli, &growing, now - start, stop_sent);
			next_redraw = now + REDRAW_NS;
		}
		nanosleep(&pause, NULL);
	}
	outcome->elapsed_ns = monotonic_ns() - start;
	if (!stop_sent)
		outcome->recorded_ns = outcome->elapsed_ns;
	ps_progress_end(cli->progress);
restore:
	for (int i = 0; i < 3; i++)
		sigaction(signals[i], &old[i], NULL);
out:
	for (size_t i = 0; owned && owned[i]; i++)
		free(owned[i]);
	free(owned);
	free(argv);
	return status;
}
