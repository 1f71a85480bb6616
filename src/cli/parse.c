/* The one parser of every command's command line: the options all
 * commands take (-i, -f, -q, -v, -h), the shared ones a command's table
 * entry names (where symbols come from, Python frames, threads, sample
 * filters), and the command's own, handed to it; an unknown option is
 * one line and the usage line. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* A comma-separated list of integers, with a-b ranges when allowed. */
static int parse_int_list(const char *text, bool ranges, int32_t **out, size_t *nr)
{
	const char *p = text;
	size_t cap = 0;

	free(*out);
	*out = NULL;
	*nr = 0;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi;
		if (end == p || lo < 0 || lo > INT32_MAX)
			return -EINVAL;
		hi = lo;
		p = end;
		if (ranges && *p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi > INT32_MAX || hi - lo > 65536)
				return -EINVAL;
			p = end;
		}
		for (long v = lo; v <= hi; v++) {
			if (*nr == cap) {
				cap = cap ? cap * 2 : 8;
				int32_t *n = realloc(*out, cap * sizeof(**out));
				if (!n)
					return -ENOMEM;
				*out = n;
			}
			(*out)[(*nr)++] = (int32_t)v;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return *nr ? 0 : -EINVAL;
}

/* "572.348106" -> ns; empty -> 0 */
static int parse_seconds(const char *text, size_t len, uint64_t *ns)
{
	uint64_t secs = 0, frac = 0, scale = 1000000000ull;
	size_t i = 0;

	*ns = 0;
	if (!len)
		return 0;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		if (secs > UINT64_MAX / 10 / 1000000000ull)
			return -EINVAL;
		secs = secs * 10 + (uint64_t)(text[i] - '0');
	}
	if (i < len && text[i] == '.')
		for (i++; i < len && text[i] >= '0' && text[i] <= '9'; i++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(text[i] - '0') * scale;
			}
	if (i != len)
		return -EINVAL;
	*ns = secs * 1000000000ull + frac;
	return 0;
}

/* perf's percentage forms: "P%/N" (the Nth slice of P%) and "A%-B%". */
static int parse_time_percent(const char *text, struct ps_session_opts *o)
{
	char *end;
	double a = strtod(text, &end), b;

	if (end == text || *end != '%' || a < 0.0 || a > 100.0)
		return -EINVAL;
	if (end[1] == '/') {
		char *num_end;
		unsigned long n = strtoul(end + 2, &num_end, 10);

		if (num_end == end + 2 || *num_end || n < 1 || a <= 0.0 || a * (double)n > 100.0)
			return -EINVAL;
		o->time_percent_start = a * (double)(n - 1) / 100.0;
		o->time_percent_end = a * (double)n / 100.0;
	} else if (end[1] == '-') {
		const char *second = end + 2;

		b = strtod(second, &end);
		if (end == second || strcmp(end, "%") != 0 || b < a || b > 100.0)
			return -EINVAL;
		o->time_percent_start = a / 100.0;
		o->time_percent_end = b / 100.0;
	} else {
		return -EINVAL;
	}
	o->time_percent = true;
	return 0;
}

static int parse_time_range(const char *text, uint64_t *start, uint64_t *end)
{
	const char *comma = strchr(text, ',');
	if (!comma)
		return -EINVAL;
	if (parse_seconds(text, (size_t)(comma - text), start) ||
	    parse_seconds(comma + 1, strlen(comma + 1), end))
		return -EINVAL;
	if (*end && *start > *end)
		return -EINVAL;
	return 0;
}

static int split_names(char *text, const char ***out, size_t *nr)
{
	size_t cap = 0;
	*out = NULL;
	*nr = 0;
	for (char *save = NULL, *t = strtok_r(text, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (*nr == cap) {
			cap = cap ? cap * 2 : 8;
			const char **n = realloc(*out, cap * sizeof(**out));
			if (!n)
				return -ENOMEM;
			*out = n;
		}
		(*out)[(*nr)++] = t;
	}
	return *nr ? 0 : -EINVAL;
}

static int parse_python_mode(const char *text, enum ps_python_mode *out)
{
	static const struct {
		const char *name;
		enum ps_python_mode mode;
	} modes[] = {
		{ "merged", PS_PYTHON_MERGED },
		{ "all", PS_PYTHON_ALL },
		{ "native", PS_PYTHON_NATIVE },
		{ "only", PS_PYTHON_ONLY },
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(text, modes[i].name) == 0) {
			*out = modes[i].mode;
			return 0;
		}
	}
	return -EINVAL;
}

/* The values getopt gives the shared long options without a short one;
 * a command's own start at PS_OPT_COMMAND_FIRST. */
enum {
	PS_OPT_NO_INLINE = 256,
	PS_OPT_PID,
	PS_OPT_TID,
	PS_OPT_COMM,
	PS_OPT_TIME,
	PS_OPT_SYMFS,
	PS_OPT_BUILDID_DIR,
	PS_OPT_KALLSYMS,
	PS_OPT_PYTHON,
	PS_OPT_PERF_MAP_DIR,
	PS_OPT_UNWINDER,
};

/* The shared options, each with the group that takes it (0: every
 * command) and its short letter in getopt's spelling. */
static const struct shared_option {
	struct option option;
	unsigned takes;
	const char *short_option;
} shared_options[] = {
	{ { "input", required_argument, NULL, 'i' }, 0, "i:" },
	{ { "force", no_argument, NULL, 'f' }, 0, "f" },
	{ { "quiet", no_argument, NULL, 'q' }, 0, "q" },
	{ { "verbose", no_argument, NULL, 'v' }, 0, "v" },
	{ { "help", no_argument, NULL, 'h' }, 0, "h" },
	{ { "symfs", required_argument, NULL, PS_OPT_SYMFS }, PS_CLI_TAKES_SYMBOLS, NULL },
	{ { "buildid-dir", required_argument, NULL, PS_OPT_BUILDID_DIR },
	  PS_CLI_TAKES_SYMBOLS,
	  NULL },
	{ { "vmlinux", required_argument, NULL, 'k' }, PS_CLI_TAKES_KERNEL, "k:" },
	{ { "kallsyms", required_argument, NULL, PS_OPT_KALLSYMS }, PS_CLI_TAKES_KERNEL, NULL },
	{ { "perf-map-dir", required_argument, NULL, PS_OPT_PERF_MAP_DIR },
	  PS_CLI_TAKES_PERF_MAPS,
	  NULL },
	{ { "no-inline", no_argument, NULL, PS_OPT_NO_INLINE }, PS_CLI_TAKES_STACKS, NULL },
	{ { "python", required_argument, NULL, PS_OPT_PYTHON }, PS_CLI_TAKES_STACKS, NULL },
	{ { "unwinder", required_argument, NULL, PS_OPT_UNWINDER }, PS_CLI_TAKES_STACKS, NULL },
	{ { "jobs", required_argument, NULL, 'j' }, PS_CLI_TAKES_STACKS, "j:" },
	{ { "pid", required_argument, NULL, PS_OPT_PID }, PS_CLI_TAKES_FILTERS, NULL },
	{ { "tid", required_argument, NULL, PS_OPT_TID }, PS_CLI_TAKES_FILTERS, NULL },
	{ { "comm", required_argument, NULL, PS_OPT_COMM }, PS_CLI_TAKES_FILTERS, NULL },
	{ { "comms", required_argument, NULL, 'c' }, PS_CLI_TAKES_FILTERS, "c:" },
	{ { "cpu", required_argument, NULL, 'C' }, PS_CLI_TAKES_FILTERS, "C:" },
	{ { "time", required_argument, NULL, PS_OPT_TIME }, PS_CLI_TAKES_FILTERS, NULL },
};
#define NR_SHARED (sizeof(shared_options) / sizeof(shared_options[0]))

static const char *option_name(int opt)
{
	switch (opt) {
	case PS_OPT_PID:
		return "--pid";
	case PS_OPT_TID:
		return "--tid";
	case PS_OPT_COMM:
	case 'c':
		return "--comm";
	case 'C':
		return "--cpu";
	case PS_OPT_TIME:
		return "--time";
	case PS_OPT_PYTHON:
		return "--python";
	case 'j':
		return "--jobs";
	case PS_OPT_UNWINDER:
		return "--unwinder";
	case 'k':
		return "--vmlinux";
	case PS_OPT_KALLSYMS:
		return "--kallsyms";
	default:
		return "option";
	}
}

/* A shared option into a. 0, -EINVAL for a bad value, -ENOMEM. */
static int apply_option(struct ps_cli_args *a, int opt, const char *arg)
{
	struct ps_session_opts *o = &a->opts;

	switch (opt) {
	case PS_OPT_NO_INLINE:
		o->no_inline = true;
		return 0;
	case PS_OPT_PID:
		o->pids = NULL;
		if (parse_int_list(arg, false, &a->pids, &o->nr_pids))
			return -EINVAL;
		o->pids = a->pids;
		return 0;
	case PS_OPT_TID:
		o->tids = NULL;
		if (parse_int_list(arg, false, &a->tids, &o->nr_tids))
			return -EINVAL;
		o->tids = a->tids;
		return 0;
	case 'C':
		o->cpus = NULL;
		if (parse_int_list(arg, true, &a->cpus, &o->nr_cpus))
			return -EINVAL;
		o->cpus = a->cpus;
		return 0;
	case PS_OPT_COMM:
	case 'c': /* perf script's -c/--comms */
		o->comms = NULL;
		o->nr_comms = 0;
		free(a->comm_text);
		free(a->comms);
		a->comms = NULL;
		a->comm_text = strdup(arg);
		if (!a->comm_text || split_names(a->comm_text, &a->comms, &o->nr_comms))
			return -EINVAL;
		o->comms = a->comms;
		return 0;
	case PS_OPT_TIME:
		o->time_percent = false;
		if (strchr(arg, '%'))
			return parse_time_percent(arg, o);
		return parse_time_range(arg, &o->time_start, &o->time_end);
	case PS_OPT_SYMFS: {
		/* several: one exported root file system per container; the
		 * first is symfs (perf's: its .debug is the build-id cache) */
		const char **dirs;

		if (!o->symfs) {
			o->symfs = arg;
			return 0;
		}
		dirs = realloc(a->symfs_dirs, (o->nr_symfs_dirs + 1) * sizeof(*dirs));
		if (!dirs)
			return -ENOMEM;
		dirs[o->nr_symfs_dirs++] = arg;
		a->symfs_dirs = dirs;
		o->symfs_dirs = dirs;
		return 0;
	}
	case PS_OPT_BUILDID_DIR:
		o->buildid_dir = arg;
		return 0;
	case 'k':
	case PS_OPT_KALLSYMS:
		/* perf refuses a kernel symbol file it cannot read (its
		 * symbol__validate_sym_arguments()), as a relative -k
		 * is looked up, here, before it is joined to --symfs */
		if (access(arg, R_OK) != 0)
			return errno ? -errno : -ENOENT;
		if (opt == 'k')
			o->vmlinux = arg;
		else
			o->kallsyms = arg;
		return 0;
	case PS_OPT_PYTHON:
		return parse_python_mode(arg, &o->python);
	case PS_OPT_PERF_MAP_DIR: {
		/* several: one directory per container; the first is also
		 * perf_map_dir, which an archive records */
		const char **dirs =
		        realloc(a->perf_map_dirs, (o->nr_perf_map_dirs + 1) * sizeof(*dirs));

		if (!dirs)
			return -ENOMEM;
		dirs[o->nr_perf_map_dirs++] = arg;
		a->perf_map_dirs = dirs;
		o->perf_map_dirs = dirs;
		if (!o->perf_map_dir)
			o->perf_map_dir = arg;
		return 0;
	}
	case 'j': {
		char *end;
		long n;

		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || end == arg || *end || n < 1 || n > 64)
			return -EINVAL;
		o->jobs = (unsigned)n;
		return 0;
	}
	case PS_OPT_UNWINDER:
		if (strcmp(arg, "table") == 0)
			o->unwind_engine = PS_UNWIND_ENGINE_TABLE;
		else if (strcmp(arg, "libdwfl") == 0)
			o->unwind_engine = PS_UNWIND_ENGINE_LIBDWFL;
		else
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

int ps_cli_bad_value(const struct ps_cli *cli, const char *option, const char *value)
{
	ps_cli_command_error(cli, "bad value '%s' for %s (see --help)", value, option);
	return PS_EXIT_USAGE;
}

void ps_cli_args_release(struct ps_cli_args *a)
{
	free(a->pids);
	free(a->tids);
	free(a->cpus);
	free(a->comms);
	free(a->perf_map_dirs);
	free(a->symfs_dirs);
	free(a->comm_text);
	a->pids = a->tids = a->cpus = NULL;
	a->comms = NULL;
	a->perf_map_dirs = NULL;
	a->opts.perf_map_dirs = NULL;
	a->opts.nr_perf_map_dirs = 0;
	a->symfs_dirs = NULL;
	a->opts.symfs_dirs = NULL;
	a->opts.nr_symfs_dirs = 0;
	a->comm_text = NULL;
}

int ps_cli_parse_per(const char *text, enum ps_collapse_per *out)
{
	static const struct {
		const char *name;
		enum ps_collapse_per per;
	} pers[] = {
		{ "comm", PS_COLLAPSE_PER_COMM },
		{ "pid", PS_COLLAPSE_PER_PID },
		{ "tid", PS_COLLAPSE_PER_TID },
		{ "none", PS_COLLAPSE_PER_NONE },
	};
	for (size_t i = 0; i < sizeof(pers) / sizeof(pers[0]); i++) {
		if (strcmp(text, pers[i].name) == 0) {
			*out = pers[i].per;
			return 0;
		}
	}
	return -EINVAL;
}

int ps_cli_parse_weight(const char *text, bool *period)
{
	if (strcmp(text, "samples") == 0)
		*period = false;
	else if (strcmp(text, "period") == 0)
		*period = true;
	else
		return -EINVAL;
	return 0;
}

/* getopt's tables for one command: the shared options it takes, then its
 * own. */
struct option_tables {
	struct option *options;
	char *short_options;
};

static int build_tables(const struct ps_cli_command *command, struct option_tables *t)
{
	size_t nr_own = 0, nr = 0,
	       len = 1 + (command->short_options ? strlen(command->short_options) : 0);

	while (command->options && command->options[nr_own].name)
		nr_own++;
	for (size_t i = 0; i < NR_SHARED; i++)
		len += shared_options[i].short_option ? strlen(shared_options[i].short_option) : 0;
	t->options = calloc(NR_SHARED + nr_own + 1, sizeof(*t->options));
	/* ':' first: a missing value is told from an unknown option; '+'
	 * before it: options end at a command to run, whose own options are
	 * its own */
	t->short_options = calloc(len + 2, 1);
	if (!t->options || !t->short_options)
		return -ENOMEM;
	strcpy(t->short_options, command->takes_command ? "+:" : ":");
	for (size_t i = 0; i < NR_SHARED; i++) {
		const struct shared_option *shared = &shared_options[i];

		if (shared->takes && !(shared->takes & command->takes))
			continue;
		t->options[nr++] = shared->option;
		if (shared->short_option)
			strcat(t->short_options, shared->short_option);
	}
	for (size_t i = 0; i < nr_own; i++)
		t->options[nr++] = command->options[i];
	if (command->short_options)
		strcat(t->short_options, command->short_options);
	return 0;
}

/* How the user spelled the option getopt stopped at (opt is what getopt
 * returned: '?' unknown, ':' without its value), for messages. */
static void spelled(char **argv, int opt, char *buf, size_t size)
{
	const char *arg = argv[optind - 1];
	bool long_option = arg[0] == '-' && arg[1] == '-';

	/* an unknown letter may sit in a bundle ("-qx"), and optind moves
	 * on only at its end: optopt is the letter */
	if ((opt == '?' && optopt) || (opt == ':' && !long_option))
		snprintf(buf, size, "-%c", optopt);
	else
		snprintf(buf, size, "%.*s", (int)strcspn(arg, "="), arg);
}

/* One line saying what was wrong, then the command's usage line. */
static int usage_error(const struct ps_cli *cli, const struct ps_cli_command *command,
                       const char *what, const char *option)
{
	const char *help = command->help;

	ps_cli_command_error(cli, "%s '%s' (see --help)", what, option);
	fprintf(stderr, "%.*s\n", (int)strcspn(help, "\n"), help);
	return PS_EXIT_USAGE;
}

/* An option every command takes: 0 or -1 after --help; 1 when it is not
 * one of those. */
static int common_option(struct ps_cli *cli, const struct ps_cli_command *command,
                         struct ps_cli_args *args, int opt, const char *arg)
{
	switch (opt) {
	case 'i':
		cli->input = arg;
		cli->input_given = true;
		return 0;
	case 'f':
		args->opts.force = cli->force = true;
		return 0;
	case 'q':
		cli->quiet = true;
		return 0;
	case 'v':
		cli->verbose++;
		return 0;
	case 'h':
		fputs(command->help, stdout);
		return -1;
	default:
		return 1;
	}
}

static bool is_shared(int opt)
{
	for (size_t i = 0; i < NR_SHARED; i++)
		if (shared_options[i].option.val == opt)
			return true;
	return false;
}

int ps_cli_parse(struct ps_cli *cli, const struct ps_cli_command *command, int argc, char **argv,
                 struct ps_cli_args *args, void *state)
{
	struct option_tables t = { 0 };
	char option[64];
	int opt, status = 0;

	if (build_tables(command, &t)) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	optind = 1;
	opterr = 0; /* the messages are ours */
	while (!status && (opt = getopt_long(argc, argv, t.short_options, t.options, NULL)) != -1) {
		int err;

		if (opt == '?' || opt == ':') {
			spelled(argv, opt, option, sizeof(option));
			status = usage_error(cli, command,
			                     opt == ':' ? "no value for option" : "unknown option",
			                     option);
			break;
		}
		status = common_option(cli, command, args, opt, optarg);
		if (status <= 0)
			continue;
		status = 0;
		if (!is_shared(opt)) {
			status = command->option ? command->option(cli, args, state, opt, optarg)
			                         : PS_EXIT_USAGE;
			continue;
		}
		err = apply_option(args, opt, optarg);
		if (err == -ENOMEM) {
			status = ps_cli_out_of_memory(cli);
		} else if (err && err != -EINVAL) {
			ps_cli_command_error(cli, "%s %s: %s", option_name(opt), optarg,
			                     strerror(-err));
			status = PS_EXIT_USAGE;
		} else if (err) {
			status = ps_cli_bad_value(cli, option_name(opt), optarg);
		}
	}
	if (!status && optind < argc && command->takes_command) {
		args->command = argv + optind;
	} else if (!status && optind < argc) {
		ps_cli_command_error(cli, "unexpected argument '%s'", argv[optind]);
		status = PS_EXIT_USAGE;
	}
out:
	free(t.options);
	free(t.short_options);
	return status;
}
