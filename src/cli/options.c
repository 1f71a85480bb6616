/* Command-line options that several sub-commands share: the sample
 * filters, where symbols come from, and Python frames. Each command lists
 * PS_CLI_SESSION_OPTIONS in its getopt table and hands those options here,
 * so `script` and `collapse` read them the same way. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "output/output.h"

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

int ps_cli_bad_value(const struct ps_cli *cli, const char *command, const char *option,
                     const char *value)
{
	ps_cli_error(cli, "%s: bad value '%s' for %s (see --help)", command, value, option);
	return PS_EXIT_USAGE;
}

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
	default:
		return "option";
	}
}

static int apply_option(struct ps_cli_session_args *a, int opt, const char *arg)
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
	case PS_OPT_SYMFS:
		o->symfs = arg;
		return 0;
	case PS_OPT_BUILDID_DIR:
		o->buildid_dir = arg;
		return 0;
	case 'k':
		o->vmlinux = arg;
		return 0;
	case PS_OPT_KALLSYMS:
		o->kallsyms = arg;
		return 0;
	case PS_OPT_PYTHON:
		return parse_python_mode(arg, &o->python);
	case PS_OPT_PERF_MAP_DIR:
		o->perf_map_dir = arg;
		return 0;
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
		return 1;
	}
}

int ps_cli_session_option(const struct ps_cli *cli, const char *command,
                          struct ps_cli_session_args *a, int opt, const char *arg)
{
	int ret = apply_option(a, opt, arg);

	if (ret > 0)
		return 0;
	if (ret < 0) {
		ps_cli_bad_value(cli, command, option_name(opt), arg);
		return -1;
	}
	return 1;
}

void ps_cli_session_args_release(struct ps_cli_session_args *a)
{
	free(a->pids);
	free(a->tids);
	free(a->cpus);
	free(a->comms);
	free(a->comm_text);
	a->pids = a->tids = a->cpus = NULL;
	a->comms = NULL;
	a->comm_text = NULL;
}

void ps_cli_session_defaults(struct ps_cli_session_args *a)
{
	if (!a->opts.jobs) {
		/* the CPUs this process may run on (taskset, cpusets) */
		cpu_set_t set;
		long n = sched_getaffinity(0, sizeof(set), &set) == 0
		                 ? CPU_COUNT(&set)
		                 : sysconf(_SC_NPROCESSORS_ONLN);

		a->opts.jobs = n < 1                         ? 1
		               : n > PS_CLI_MAX_DEFAULT_JOBS ? PS_CLI_MAX_DEFAULT_JOBS
		                                             : (unsigned)n;
	}
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

bool ps_cli_session_run(struct ps_cli *cli, const char *command, struct ps_cli_session_args *a,
                        int (*add)(void *ctx, const struct ps_stack *stack), void *ctx,
                        struct ps_session **session, int *status)
{
	const struct ps_stack *stack;
	int ret;

	*status = PS_EXIT_OK;
	a->opts.log = ps_cli_log;
	a->opts.log_ctx = cli;
	ps_cli_session_defaults(a);
	ret = ps_session_open(cli->input, &a->opts, session);
	if (ret) {
		/* ps_cli_log said why */
		*status = ps_cli_status(ret);
		return false;
	}
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	while ((ret = ps_session_next(*session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(*session));
		if (add(ctx, stack)) {
			ps_progress_end(cli->progress);
			ps_cli_error(cli, "%s: out of memory", command);
			*status = PS_EXIT_USAGE;
			return false;
		}
	}
	ps_progress_end(cli->progress);
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(*session));
		*status = ps_cli_status(ret);
	}
	return true;
}
