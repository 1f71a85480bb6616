/* `pystitch collapse`: folded stacks, one line per unique stack with its
 * count, root first and sorted, as `stackcollapse-perf.pl | sort` writes
 * them for flamegraph.pl, inferno and speedscope. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* clang-format off */
static const char collapse_usage[] =
        "usage: pystitch collapse [-i FILE] [options]\n"
        "\n"
        "Print the folded stacks of a perf.data capture: one line per unique\n"
        "stack, its frames from the root down separated by ';', then its count,\n"
        "sorted; what stackcollapse-perf.pl makes of perf script's output, and\n"
        "what flamegraph.pl, inferno and speedscope read. Python frames are\n"
        "stitched in as by `pystitch script`. Each line starts with the thread's\n"
        "name (spaces become '_'); ';' in names becomes ':'.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "      --weight WHAT     samples (default: count 1 per sample) or period\n"
        "                        (sum the samples' periods)\n"
        "      --per WHAT        what starts each stack: comm (default), pid\n"
        "                        (comm-PID), tid (comm-PID/TID) or none\n"
        "      --annotate        '_[k]' after kernel frames and '_[i]' after\n"
        "                        inlined ones (as stackcollapse-perf.pl --all)\n"
        PS_CLI_SESSION_HELP
        PS_CLI_COMMON_HELP;
/* clang-format on */

enum {
	OPT_WEIGHT = PS_OPT_COMMAND_FIRST,
	OPT_PER,
	OPT_ANNOTATE,
};

struct collapse_state {
	struct ps_collapse_opts collapse;
};

static void collapse_init(void *state)
{
	struct collapse_state *st = state;

	st->collapse.sz = sizeof(st->collapse);
}

static int collapse_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                           const char *arg)
{
	struct collapse_state *st = state;

	switch (opt) {
	case OPT_WEIGHT:
		if (ps_cli_parse_weight(arg, &st->collapse.period))
			return ps_cli_bad_value(cli, "--weight", arg);
		break;
	case OPT_PER:
		if (ps_cli_parse_per(arg, &st->collapse.per))
			return ps_cli_bad_value(cli, "--per", arg);
		break;
	case OPT_ANNOTATE:
		st->collapse.annotate = true;
		break;
	}
	return 0;
}

static int add_stack(void *collapse, const struct ps_stack *stack)
{
	return ps_collapse_add(collapse, stack);
}

static int collapse_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct collapse_state *st = state;
	struct ps_cli_output output = { 0 };
	struct ps_collapse *collapse = NULL;
	struct ps_session *session = NULL;
	int64_t written;
	int status;

	if (ps_collapse_open(&st->collapse, &collapse))
		return ps_cli_out_of_memory(cli);
	if (ps_cli_output_open(&output, NULL)) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	if (!ps_cli_session_run(cli, args, add_stack, collapse, &session, &status))
		goto out;
	written = ps_collapse_write(collapse, ps_output_file_write, output.file);
	if (written == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	if (written < 0 || ps_cli_output_close(&output, true)) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	}
out:
	ps_cli_output_close(&output, false);
	ps_collapse_close(collapse);
	ps_session_close(session);
	return status;
}

static const struct option collapse_options[] = {
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "per", required_argument, NULL, OPT_PER },
	{ "annotate", no_argument, NULL, OPT_ANNOTATE },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_collapse = {
	.name = "collapse",
	.summary = "print folded stacks, one line per unique stack with its count,\n"
	           "              for flame graphs (flamegraph.pl, inferno, speedscope)\n",
	.help = collapse_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = collapse_options,
	.state_size = sizeof(struct collapse_state),
	.init = collapse_init,
	.option = collapse_option,
	.run = collapse_run,
};
