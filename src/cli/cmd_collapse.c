/* `pystitch collapse`: folded stacks, one line per unique stack with its
 * weight, root first and sorted, in the format `stackcollapse-perf.pl |
 * sort` writes for flamegraph.pl, inferno and speedscope, and with its
 * default weight (the periods). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* clang-format off */
static const char collapse_usage[] =
        "usage: pystitch collapse [-i FILE] [-o FILE] [options]\n"
        "\n"
        "Print the folded stacks of a perf.data capture: one line per unique\n"
        "stack, its frames from the root down separated by ';', then its weight,\n"
        "sorted; the format stackcollapse-perf.pl writes from perf script's\n"
        "output, and what flamegraph.pl, inferno and speedscope read. Frames are\n"
        "named as `pystitch script` prints them, Python frames stitched in\n"
        "(stackcollapse-perf.pl also shortens some names, and names unknown\n"
        "frames after their DSO); samples of all events count together (it\n"
        "keeps the first event's). Each line starts with the thread's name\n"
        "(spaces become '_'); ';' in names becomes ':'.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -o, --output FILE     where to write the stacks (default, or -: stdout);\n"
        "                        a regular file is replaced once complete\n"
        "      --weight WHAT     period (default, as stackcollapse-perf.pl: sum\n"
        "                        the samples' periods) or samples (count 1 per\n"
        "                        sample)\n"
        "      --per WHAT        what starts each stack: comm (default), pid\n"
        "                        (comm-PID), tid (comm-PID/TID) or none\n"
        "      --annotate        mark frames as stackcollapse-perf.pl --all does:\n"
        "                        '_[k]' after kernel frames, '_[j]' after frames\n"
        "                        of perf maps (Python and other JIT code)\n"
        "      --lines           name Python frames with the line they were at,\n"
        "                        py::QUALNAME:FILE:LINE, where they have one\n"
        "                        (pystitch_perf's side file: see LINE NUMBERS in\n"
        "                        pystitch(1))\n"
        PS_CLI_SESSION_HELP
        PS_CLI_COMMON_HELP;
/* clang-format on */

enum {
	OPT_WEIGHT = PS_OPT_COMMAND_FIRST,
	OPT_PER,
	OPT_ANNOTATE,
	OPT_LINES,
};

struct collapse_state {
	struct ps_collapse_opts collapse;
	const char *output;
};

static void collapse_init(void *state)
{
	struct collapse_state *st = state;

	/* stackcollapse-perf.pl weighs each sample by its period */
	st->collapse = (struct ps_collapse_opts){ .sz = sizeof(st->collapse), .period = true };
}

static int collapse_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                           const char *arg)
{
	struct collapse_state *st = state;

	switch (opt) {
	case 'o':
		st->output = arg;
		break;
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
	case OPT_LINES:
		st->collapse.lines = true;
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
	int status, ret;

	if (ps_collapse_open(&st->collapse, &collapse))
		return ps_cli_out_of_memory(cli);
	/* before the capture is read, so a bad name fails at once */
	ret = ps_cli_output_open(&output, st->output);
	if (ret) {
		ps_cli_command_error(cli, "cannot create %s: %s", output.name, strerror(-ret));
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (!ps_cli_session_run(cli, args, add_stack, collapse, &session, &status))
		goto out;
	written = ps_collapse_write(collapse, ps_output_file_write, output.file);
	if (written == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	ret = written < 0 ? (int)written : ps_cli_output_close(&output, true);
	if (ret && output.is_stdout) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	} else if (ret) {
		ps_cli_command_error(cli, "cannot write %s: %s", output.name, strerror(-ret));
		status = PS_EXIT_USAGE;
	}
out:
	ps_cli_output_close(&output, false);
	ps_collapse_close(collapse);
	ps_session_close(session);
	return status;
}

static const struct option collapse_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "per", required_argument, NULL, OPT_PER },
	{ "annotate", no_argument, NULL, OPT_ANNOTATE },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_collapse = {
	.name = "collapse",
	.summary = "print folded stacks, one line per unique stack with its count,\n"
	           "              for flame graphs (flamegraph.pl, inferno, speedscope)\n",
	.help = collapse_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = collapse_options,
	.short_options = "o:",
	.state_size = sizeof(struct collapse_state),
	.init = collapse_init,
	.option = collapse_option,
	.run = collapse_run,
};
