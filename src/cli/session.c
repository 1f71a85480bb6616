/* Opening the capture for the commands that read stacks, and reading all
 * of them with the progress line drawn. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Whether a perf record option (one word of the command line) records
 * every CPU: -a, --all-cpus, -C/--cpu, or an a among short options
 * given together that take no value (-ag). */
static bool every_cpu_option(const char *word)
{
	if (strcmp(word, "--all-cpus") == 0 || strcmp(word, "--cpu") == 0 ||
	    strncmp(word, "--cpu=", 6) == 0 || strncmp(word, "-C", 2) == 0)
		return true;
	if (word[0] != '-' || word[1] == '-')
		return false;
	for (const char *c = word + 1; *c; c++) {
		if (*c == 'a')
			return true;
		if (!strchr("gqvnNBRPTdsWi", *c))
			return false;
	}
	return false;
}

/* perf record's options that take the next word as their value */
static bool takes_value(const char *word)
{
	static const char *const longs[] = { "--event",         "--freq",       "--count",
		                             "--output",        "--pid",        "--tid",
		                             "--uid",           "--mmap-pages", "--cgroup",
		                             "--delay",         "--clockid",    "--call-graph",
		                             "--branch-filter", "--filter" };

	if (word[0] == '-' && word[1] && !word[2])
		return strchr("eFcoptumGDrjk", word[1]) != NULL;
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
		if (strcmp(word, longs[i]) == 0)
			return true;
	return false;
}

/* Whether the perf.data file at path was recorded on every CPU, as its
 * header's command line says (perf record -a, -C): such a capture holds
 * every process of the machine, and a worker, which keeps a model and
 * unwind caches of each, made pystitch slower and bigger on each
 * whole-machine capture measured (bench/README.md). An archive, a pipe or
 * a file that cannot be read: false. */
static bool recorded_every_cpu(const char *path)
{
	const struct ps_string_list *cmdline;
	struct ps_reader *reader = NULL;
	bool every = false;

	if (!path || strcmp(path, "-") == 0 || ps_path_is_archive(path) ||
	    ps_reader_open(path, &(struct ps_reader_opts){ .sz = sizeof(struct ps_reader_opts) },
	                   &reader) != 0)
		return false;
	cmdline = &ps_reader_features(reader)->cmdline;
	/* perf, record, its options, the command */
	for (size_t i = 2; i < cmdline->nr && !every; i++) {
		const char *word = cmdline->items[i];

		if (strcmp(word, "--") == 0 || word[0] != '-')
			break;
		every = every_cpu_option(word);
		if (takes_value(word))
			i++;
	}
	ps_reader_close(reader);
	return every;
}

void ps_cli_session_defaults(const struct ps_cli *cli, struct ps_cli_args *args, const char *input)
{
	if (!args->opts.jobs && recorded_every_cpu(input)) {
		args->opts.jobs = 1;
		if (cli->verbose)
			ps_cli_command_error(cli,
			                     "one thread: %s was recorded on every CPU "
			                     "(--jobs N for more)",
			                     input);
	}
	if (!args->opts.jobs) {
		/* the CPUs this process may run on (taskset, cpusets) */
		cpu_set_t set;
		long n = sched_getaffinity(0, sizeof(set), &set) == 0
		                 ? CPU_COUNT(&set)
		                 : sysconf(_SC_NPROCESSORS_ONLN);

		args->opts.jobs = n < 1                         ? 1
		                  : n > PS_CLI_MAX_DEFAULT_JOBS ? PS_CLI_MAX_DEFAULT_JOBS
		                                                : (unsigned)n;
	}
}

int ps_cli_session_open(struct ps_cli *cli, struct ps_cli_args *args, struct ps_session **session)
{
	int ret;

	args->opts.log = ps_cli_log;
	args->opts.log_ctx = cli;
	ret = ps_session_open(cli->input, &args->opts, session);
	if (ret)
		return ps_cli_status(ret); /* ps_cli_log said why */
	return PS_EXIT_OK;
}

/* perf_session__cpu_bitmap(): -C needs the CPU in the samples of the
 * first event of each legacy type (hardware, software, tracepoint, cache,
 * raw, breakpoint); a pipe's events are not known yet when perf checks. */
static bool cpus_sampled(const struct ps_reader *reader)
{
	if (ps_reader_is_pipe(reader))
		return true;
	for (uint32_t type = 0; type < PERF_TYPE_MAX; type++)
		for (size_t i = 0; i < ps_reader_nr_attrs(reader); i++) {
			const struct ps_attr *attr = ps_reader_attr(reader, i);

			if (attr->type != type)
				continue;
			if (!(attr->sample_type & PERF_SAMPLE_CPU))
				return false;
			break;
		}
	return true;
}

int ps_cli_check_cpus(struct ps_cli *cli, const struct ps_cli_args *args,
                      struct ps_session *session)
{
	if (!args->opts.nr_cpus || cpus_sampled(ps_session_reader(session)))
		return PS_EXIT_OK;
	ps_cli_command_error(cli, "File does not contain CPU events. Remove -C option to proceed.");
	return PS_EXIT_USAGE;
}

int ps_cli_each_delivery(const struct ps_stack *stack,
                         int (*fn)(void *ctx, const struct ps_stack *stack), void *ctx)
{
	if (!stack->sample_read)
		return fn(ctx, stack);
	for (size_t i = 0; i < stack->nr_deliveries; i++) {
		struct ps_event event = *stack->event;
		struct ps_stack delivered = *stack;
		int err;

		event.attr = stack->deliveries[i].attr;
		event.u.sample.period = stack->deliveries[i].period;
		delivered.event = &event;
		err = fn(ctx, &delivered);
		if (err)
			return err;
	}
	return 0;
}

bool ps_cli_session_run(struct ps_cli *cli, struct ps_cli_args *args,
                        int (*add)(void *ctx, const struct ps_stack *stack), void *ctx,
                        struct ps_session **session, int *status)
{
	const struct ps_stack *stack;
	int ret;

	ps_cli_session_defaults(cli, args, cli->input);
	*status = ps_cli_session_open(cli, args, session);
	if (!*status)
		*status = ps_cli_check_cpus(cli, args, *session);
	if (*status)
		return false;
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	while ((ret = ps_session_next(*session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(*session));
		if (ps_cli_each_delivery(stack, add, ctx)) {
			ps_progress_end(cli->progress);
			*status = ps_cli_out_of_memory(cli);
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
