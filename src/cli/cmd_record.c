/* `pystitch record`: one command from a Python program, running
 * processes or the whole machine to a profile with whole Python stacks.
 * It runs perf record with what pystitch needs (DWARF stacks deep enough
 * for Python, the clock the Python side uses), turns Python frame names
 * on in every Python process a launched command starts, keeps every perf
 * map the capture needs, and writes one output. The recording goes into
 * a directory beside the output, removed at the end; when the output
 * cannot be written, that directory is kept and named, so nothing
 * recorded is lost. */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_priv.h"

/* Measured with bench/stack_copy.sh (man page, "pystitch record"): 32
 * KiB holds about 55 Python frames of CPython 3.12/3.13 -X perf, and
 * about 25 of an -O3 3.14, whose eval loop takes 1.3 KiB a frame: 3.14
 * gets perf's largest copy, about 50 frames */
#define DEFAULT_STACK_SIZE 32768
#define MAX_STACK_SIZE 65528 /* perf's limit */
#define LARGE_STACK_VERSION 314 /* from this CPython on, MAX_STACK_SIZE */
#define DEFAULT_FREQUENCY 999
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* clang-format off */
static const char record_usage[] =
        "usage: pystitch record [options] -- COMMAND [ARGS...]\n"
        "       pystitch record [options] --pid PID[,PID...] | -a\n"
        "\n"
        "Record COMMAND (or running processes, or every CPU) with perf record,\n"
        "with Python frames named, and write one profile. Every CPython process\n"
        "COMMAND starts, children and grandchildren too, names its Python frames:\n"
        "3.12+ through PYTHONPERFSUPPORT=1 (as -X perf), 3.7-3.11 through the\n"
        "pystitch_perf module, built for each interpreter on first use into\n"
        "~/.cache/pystitch (its headers and a C compiler are all it takes).\n"
        "Recording stops when COMMAND ends, after --duration, or at Ctrl-C; the\n"
        "output is written in every case. Exit status: COMMAND's when it failed,\n"
        "130 after Ctrl-C, else 0 (1 and 2: pystitch's own errors).\n"
        "\n"
        "  -o, --output FILE     the profile, its format by its name: .svg flame\n"
        "                        graph, .pb.gz pprof, .json speedscope, .folded\n"
        "                        folded stacks, .txt perf script text, .pst\n"
        "                        archive (default: an archive named after the\n"
        "                        command and the time, with a table of the hottest\n"
        "                        Python functions on stderr)\n"
        "      --format FORMAT   svg, pprof, speedscope, folded, text or archive,\n"
        "                        whatever the output's name\n"
        "  -p, --pid PID,...     record these running processes (CPython); on\n"
        "                        3.14+ perf trampolines are turned on through\n"
        "                        sys.remote_exec() for the recording and off after\n"
        "  -a, --all-cpus        record every process on every CPU\n"
        "      --duration SECS   stop after this many seconds (a launched COMMAND\n"
        "                        is then ended with SIGTERM)\n"
        "  -F, --freq HZ         samples per second (default 999)\n"
        "      --call-graph MODE dwarf[,SIZE] (default dwarf,32768: the bytes of\n"
        "                        stack copied per sample, at most 65528) or fp\n"
        "                        (frame pointers: small captures, for interpreters\n"
        "                        built with frame pointers); -g is fp\n"
        "  -e, --event EVENT     record this perf event (perf list) instead of\n"
        "                        cpu-clock; may be given again\n"
        "      --keep-maps       leave the perf maps, jitdumps and line tables the\n"
        "                        recording made processes write in /tmp (default:\n"
        "                        removed once the output is written)\n"
        "      --perf PATH       the perf program (default: perf on PATH)\n"
        "      --python MODE     Python frames in the output, as `pystitch script`:\n"
        "                        merged (default), all, native or only\n"
        "      --no-inline       no frames for inlined functions\n"
        "      --unwinder KIND   table (default) or libdwfl, as `pystitch script`\n"
        PS_CLI_JOBS_HELP
        "  -q, --quiet           no progress line, table or notes on stderr\n"
        "  -v, --verbose         more messages: perf's own, its command line\n"
        "  -h, --help            this text\n";
/* clang-format on */

enum {
	OPT_FORMAT = PS_OPT_COMMAND_FIRST,
	OPT_DURATION,
	OPT_CALL_GRAPH,
	OPT_KEEP_MAPS,
	OPT_PERF,
};

struct record_state {
	struct record_settings settings;
	size_t cap_events;
};

static void record_init(void *state)
{
	struct record_state *st = state;

	st->settings.frequency = DEFAULT_FREQUENCY;
	st->settings.stack_size = DEFAULT_STACK_SIZE;
}

static int parse_pid_list(const char *text, struct record_settings *s)
{
	const char *p = text;

	free(s->pids);
	s->pids = NULL;
	s->nr_pids = 0;
	while (*p) {
		char *end;
		long pid = strtol(p, &end, 10);
		int32_t *grown;

		if (end == p || pid < 1 || pid > INT32_MAX || (*end && *end != ','))
			return -EINVAL;
		grown = realloc(s->pids, (s->nr_pids + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->pids = grown;
		s->pids[s->nr_pids++] = (int32_t)pid;
		p = *end ? end + 1 : end;
	}
	return s->nr_pids ? 0 : -EINVAL;
}

static int record_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                         const char *arg)
{
	struct record_state *st = state;
	struct record_settings *s = &st->settings;
	char *end;

	switch (opt) {
	case 'o':
		if (!*arg)
			return ps_cli_bad_value(cli, "--output", arg);
		s->output = arg;
		break;
	case OPT_FORMAT:
		if (!record_format_of_name(arg, &s->format))
			return ps_cli_bad_value(cli, "--format", arg);
		s->format_given = true;
		break;
	case 'p': {
		int err = parse_pid_list(arg, s);

		if (err == -ENOMEM)
			return ps_cli_out_of_memory(cli);
		if (err)
			return ps_cli_bad_value(cli, "--pid", arg);
		break;
	}
	case 'a':
		s->all_cpus = true;
		break;
	case OPT_DURATION: {
		double secs;

		errno = 0;
		secs = strtod(arg, &end);
		if (end == arg || *end || errno || !(secs > 0 && secs <= 31 * 86400.0))
			return ps_cli_bad_value(cli, "--duration", arg);
		s->duration_ns = (uint64_t)(secs * 1e9);
		break;
	}
	case 'F': {
		unsigned long hz;

		errno = 0;
		hz = strtoul(arg, &end, 10);
		if (end == arg || *end || errno || hz < 1 || hz > 100000)
			return ps_cli_bad_value(cli, "--freq", arg);
		s->frequency = (unsigned)hz;
		break;
	}
	case 'g':
		s->frame_pointers = true;
		break;
	case OPT_CALL_GRAPH:
		if (strcmp(arg, "fp") == 0) {
			s->frame_pointers = true;
		} else if (strcmp(arg, "dwarf") == 0) {
			s->frame_pointers = false;
			s->stack_size = DEFAULT_STACK_SIZE;
			s->stack_size_given = false;
		} else if (strncmp(arg, "dwarf,", 6) == 0) {
			unsigned long size;

			errno = 0;
			size = strtoul(arg + 6, &end, 10);
			if (end == arg + 6 || *end || errno || size < 8 || size > MAX_STACK_SIZE ||
			    size % 8)
				return ps_cli_bad_value(cli, "--call-graph", arg);
			s->frame_pointers = false;
			s->stack_size = (unsigned)size;
			s->stack_size_given = true;
		} else {
			return ps_cli_bad_value(cli, "--call-graph", arg);
		}
		break;
	case 'e': {
		const char **grown;

		if (s->nr_events == st->cap_events) {
			size_t cap = st->cap_events ? 2 * st->cap_events : 4;

			grown = realloc(s->events, cap * sizeof(*grown));
			if (!grown)
				return ps_cli_out_of_memory(cli);
			s->events = grown;
			st->cap_events = cap;
		}
		s->events[s->nr_events++] = arg;
		break;
	}
	case OPT_KEEP_MAPS:
		s->keep_maps = true;
		break;
	case OPT_PERF:
		s->perf = arg;
		break;
	}
	return 0;
}

/* The name a default output takes: the script a Python command runs
 * (app.py -> app), else the command's, else "pid-N" or "all". */
static char *default_output(const struct record_settings *s)
{
	char stamp[32], *path = NULL;
	const char *what = "all", *base;
	char pid_name[32];
	size_t len;
	time_t now = time(NULL);
	struct tm tm;

	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	if (s->command) {
		what = s->command[0];
		base = strrchr(what, '/');
		if (strncmp(base ? base + 1 : what, "python", 6) == 0) {
			/* the first argument that is not an option: the script */
			for (size_t i = 1; s->command[i]; i++) {
				if (strcmp(s->command[i], "-m") == 0 && s->command[i + 1]) {
					what = s->command[i + 1];
					break;
				}
				if (s->command[i][0] != '-') {
					what = s->command[i];
					break;
				}
			}
		}
	} else if (s->nr_pids) {
		snprintf(pid_name, sizeof(pid_name), "pid-%d", (int)s->pids[0]);
		what = pid_name;
	}
	base = strrchr(what, '/');
	what = base ? base + 1 : what;
	len = strlen(what);
	if (len > 3 && strcmp(what + len - 3, ".py") == 0)
		len -= 3;
	if (len > 64)
		len = 64;
	if (asprintf(&path, "%.*s-%s.pst", (int)len, what, stamp) < 0)
		return NULL;
	for (char *p = path; *p; p++)
		if (*p == ' ' || *p == ':')
			*p = '_';
	return path;
}

/* What was recorded, in words, for a flame graph's title: the command
 * line (cut at 120 bytes), "pid 1234, 5678" or "every CPU". */
static char *profile_name(const struct record_settings *s)
{
	char name[160];
	size_t at = 0;

	name[0] = '\0';
	if (s->command) {
		for (size_t i = 0; s->command[i] && at < 120; i++)
			at += (size_t)snprintf(name + at, sizeof(name) - at, "%s%s", i ? " " : "",
			                       s->command[i]);
	} else if (s->nr_pids) {
		at = (size_t)snprintf(name, sizeof(name), "pid");
		for (size_t i = 0; i < s->nr_pids && at < 120; i++)
			at += (size_t)snprintf(name + at, sizeof(name) - at, "%s %d", i ? "," : "",
			                       (int)s->pids[i]);
	} else {
		snprintf(name, sizeof(name), "every CPU");
	}
	if (at >= 120)
		snprintf(name + 117, sizeof(name) - 117, "...");
	return strdup(name);
}

/* The directory the output goes to (the recording's own goes there). */
static char *output_dir(const char *output)
{
	const char *slash = strrchr(output, '/');

	if (!slash)
		return strdup(".");
	if (slash == output)
		return strdup("/");
	return strndup(output, (size_t)(slash - output));
}

/* The program a command names: on PATH, or a path; false if it is not
 * there to run. */
static bool command_exists(const char *name)
{
	const char *dirs = getenv("PATH");
	struct stat st;

	if (strchr(name, '/'))
		return stat(name, &st) == 0 && !S_ISDIR(st.st_mode) && access(name, X_OK) == 0;
	for (; dirs && *dirs;) {
		size_t len = strcspn(dirs, ":");
		char *candidate;
		bool found;

		if (asprintf(&candidate, "%.*s/%s", (int)len, len ? dirs : ".", name) < 0)
			return false;
		found = stat(candidate, &st) == 0 && !S_ISDIR(st.st_mode) &&
		        access(candidate, X_OK) == 0;
		free(candidate);
		if (found)
			return true;
		dirs += len + (dirs[len] == ':');
	}
	return false;
}

/* Check what to record, and where the output goes, before anything runs. */
static int check_request(struct ps_cli *cli, struct ps_cli_args *args, struct record_state *st,
                         char **made_output)
{
	struct record_settings *s = &st->settings;
	struct ps_output_file *probe = NULL;
	int ways = !!args->command + !!s->nr_pids + s->all_cpus, ret;

	if (cli->input_given) {
		ps_cli_command_error(cli, "record makes its own capture: -i is for the other "
		                          "commands");
		return PS_EXIT_USAGE;
	}
	if (ways != 1) {
		ps_cli_command_error(cli, ways ? "give one of -- COMMAND, --pid and -a"
		                               : "nothing to record: give -- COMMAND, --pid PID "
		                                 "or -a (see --help)");
		return PS_EXIT_USAGE;
	}
	s->command = args->command;
	if (s->command && !command_exists(s->command[0])) {
		ps_cli_command_error(cli, "%s: command not found", s->command[0]);
		return 127; /* as a shell says it */
	}
	if (!s->output) {
		*made_output = default_output(s);
		if (!*made_output)
			return ps_cli_out_of_memory(cli);
		s->output = *made_output;
		if (!s->format_given)
			s->format = RECORD_FORMAT_ARCHIVE;
	} else if (!s->format_given && !record_format_of_path(s->output, &s->format)) {
		ps_cli_command_error(cli,
		                     "%s: which format? name it .svg, .pb.gz, .json, .folded, .txt "
		                     "or .pst, or give --format",
		                     s->output);
		return PS_EXIT_USAGE;
	}
	/* the output path now, not after a long recording */
	ret = ps_output_file_open(s->output, &probe);
	if (ret) {
		ps_cli_command_error(cli, "cannot write %s: %s", s->output, strerror(-ret));
		return PS_EXIT_USAGE;
	}
	ps_output_file_abort(probe);
	return PS_EXIT_OK;
}

/* The exit status perf's end gives record, said in one line when the
 * command failed. */
static int command_status(struct ps_cli *cli, const struct record_settings *s,
                          const struct record_outcome *outcome)
{
	int status = outcome->perf_status;

	if (outcome->interrupted && !outcome->by_duration)
		return 130; /* 128 + SIGINT, as a shell gives a Ctrl-C'd command */
	if (!s->command || outcome->by_duration)
		return PS_EXIT_OK;
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		ps_cli_command_error(cli, "%s exited with status %d", s->command[0],
		                     WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		ps_cli_command_error(cli, "%s was killed by signal %d (%s)", s->command[0],
		                     WTERMSIG(status), strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return PS_EXIT_OK;
}

static bool disk_full(const char *dir)
{
	struct statvfs fs;

	return statvfs(dir, &fs) == 0 && (uint64_t)fs.f_bavail * fs.f_bsize < (1u << 20);
}

static void warn_if_disk_full(const struct ps_cli *cli, const char *dir)
{
	if (disk_full(dir))
		ps_cli_command_error(cli,
		                     "the disk holding %s is full: perf's capture may be cut "
		                     "short",
		                     dir);
}

/* Whether perf wrote a capture that can be read; else says why not. */
static bool capture_readable(struct ps_cli *cli, const char *data, const char *dir,
                             const struct record_outcome *outcome)
{
	struct ps_reader *reader = NULL;
	bool ok;

	ok = ps_reader_open(data, &(struct ps_reader_opts){ .sz = sizeof(struct ps_reader_opts) },
	                    &reader) == 0;
	ps_reader_close(reader);
	if (ok)
		return true;
	if (disk_full(dir))
		ps_cli_command_error(cli,
		                     "the disk holding %s is full: perf could not write the "
		                     "capture",
		                     dir);
	else if (WIFEXITED(outcome->perf_status))
		ps_cli_command_error(cli,
		                     "perf record failed (exit status %d) and wrote no capture; "
		                     "-v shows its own messages",
		                     WEXITSTATUS(outcome->perf_status));
	else
		ps_cli_command_error(cli, "perf record was killed (signal %d) and wrote no capture",
		                     WTERMSIG(outcome->perf_status));
	return false;
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *entry;

	while (d && (entry = readdir(d))) {
		char *path;
		struct stat st;

		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if (asprintf(&path, "%s/%s", dir, entry->d_name) < 0)
			continue;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
		free(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int record_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct record_state *st = state;
	struct record_settings *s = &st->settings;
	struct record_python python = { 0 };
	struct record_target *targets = NULL;
	struct record_maps *maps = NULL;
	struct record_outcome outcome;
	char *made_output = NULL, *perf = NULL, *out_dir = NULL, *work = NULL, *data = NULL,
	     *maps_dir = NULL, *title = NULL;
	int status, written, version = 0;

	status = check_request(cli, args, st, &made_output);
	if (status)
		goto out;
	perf = record_find_perf(cli, s->perf);
	if (!perf || !record_may_record(cli, s)) {
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (s->nr_pids) {
		status = record_attach(cli, s, &targets);
		if (status)
			goto out;
		for (size_t i = 0; i < s->nr_pids; i++)
			version = MAX(version, 100 * targets[i].major + targets[i].minor);
	}
	if (s->command) {
		status = record_python_prepare(cli, &python);
		if (status)
			goto out;
		version = record_python_check_command(cli, &python, s->command);
	}
	if (!s->stack_size_given && version >= LARGE_STACK_VERSION)
		s->stack_size = MAX_STACK_SIZE;
	/* the recording beside the output: where the user has room for it */
	out_dir = output_dir(s->output);
	if (!out_dir || asprintf(&work, "%s/.pystitch-record-XXXXXX", out_dir) < 0) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	if (!mkdtemp(work)) {
		ps_cli_command_error(cli, "cannot make a directory in %s: %s", out_dir,
		                     strerror(errno));
		free(work);
		work = NULL;
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (asprintf(&data, "%s/perf.data", work) < 0 || asprintf(&maps_dir, "%s/maps", work) < 0 ||
	    mkdir(maps_dir, 0700) != 0 || !(maps = record_maps_open(s, maps_dir))) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	/* a capture of every CPU takes one thread (ps_cli_session_defaults) */
	if (s->all_cpus && !args->opts.jobs)
		args->opts.jobs = 1;
	ps_cli_session_defaults(cli, args, NULL);
	status = record_run_perf(cli, perf, s, data, s->command ? python.env : NULL,
	                         record_maps_tick, maps, &outcome);
	if (status || !outcome.started)
		goto out;
	record_maps_tick(maps, 0); /* what the processes still running wrote last */
	record_detach(cli, targets, s->nr_pids);
	if (!capture_readable(cli, data, out_dir, &outcome)) {
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (outcome.interrupted && !cli->quiet) {
		ps_progress_clear(cli->progress);
		fprintf(stderr, "%s: record: stopped after %.1f s%s\n", cli->program,
		        (double)outcome.recorded_ns / 1e9,
		        outcome.by_duration ? " (--duration)" : "");
	}
	warn_if_disk_full(cli, out_dir);
	title = profile_name(s);
	cli->profile_name = title;
	written =
	        record_write_output(cli, args, s, data, record_maps_copied(maps) ? maps_dir : NULL,
	                            s->output, made_output != NULL && !cli->quiet);
	if (written != PS_EXIT_OK) {
		/* nothing recorded is lost: the capture and its maps stay */
		ps_cli_command_error(cli,
		                     "the output was not written; the capture is kept: "
		                     "pystitch script -i %s%s%s (its perf maps are left in /tmp)",
		                     data, record_maps_copied(maps) ? " --perf-map-dir " : "",
		                     record_maps_copied(maps) ? maps_dir : "");
		free(work);
		work = NULL; /* kept */
		status = written;
		goto out;
	}
	if (!s->keep_maps)
		record_maps_remove(cli, maps, data, targets, s->nr_pids);
	status = command_status(cli, s, &outcome);
out:
	if (work)
		remove_tree(work);
	record_maps_close(maps);
	record_python_release(&python);
	free(targets);
	free(data);
	free(maps_dir);
	free(work);
	free(out_dir);
	free(perf);
	free(made_output);
	free(title);
	cli->profile_name = NULL;
	free(s->pids);
	free(s->events);
	return status;
}

static const struct option record_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "pid", required_argument, NULL, 'p' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "freq", required_argument, NULL, 'F' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "event", required_argument, NULL, 'e' },
	{ "keep-maps", no_argument, NULL, OPT_KEEP_MAPS },
	{ "perf", required_argument, NULL, OPT_PERF },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_record = {
	.name = "record",
	.summary = "record a command, running processes (--pid) or the machine\n"
	           "              (-a) with perf, Python frames named, into one profile\n",
	.help = record_usage,
	.takes = PS_CLI_TAKES_STACKS,
	.takes_command = true,
	.options = record_options,
	.short_options = "o:p:aF:ge:",
	.state_size = sizeof(struct record_state),
	.init = record_init,
	.option = record_option,
	.run = record_run,
};
