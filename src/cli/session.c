/* Opening the capture for the commands that read stacks, and reading all
 * of them with the progress line drawn. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <sched.h>
#include <unistd.h>

#include "cli.h"

void ps_cli_session_defaults(struct ps_cli_args *args)
{
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

bool ps_cli_session_run(struct ps_cli *cli, struct ps_cli_args *args,
                        int (*add)(void *ctx, const struct ps_stack *stack), void *ctx,
                        struct ps_session **session, int *status)
{
	const struct ps_stack *stack;
	int ret;

	ps_cli_session_defaults(args);
	*status = ps_cli_session_open(cli, args, session);
	if (*status)
		return false;
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	while ((ret = ps_session_next(*session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(*session));
		if (add(ctx, stack)) {
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
