/* `pystitch flamegraph`: an interactive SVG flame graph of a capture,
 * written by pystitch itself. A regular output file is replaced only once
 * the SVG is complete (base/output_file.h); devices and FIFOs are written
 * through. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* clang-format off */
static const char flamegraph_usage[] =
        "usage: pystitch flamegraph [-i FILE] [-o OUT.svg] [options]\n"
        "\n"
        "Write an interactive SVG flame graph of a perf.data capture: one box\n"
        "per function on a call path, as wide as the share of samples that ran\n"
        "through it, callers below callees. Click a box to zoom in on it, click\n"
        "\"Reset zoom\" (or press Escape) to zoom out, click \"Search\" (or press\n"
        "Ctrl-F) to highlight the frames matching a regular expression and see\n"
        "their share; hover for a frame's samples and percentage. OUT.svg#search=RE\n"
        "opens with that search done, OUT.svg#zoom=N zoomed on the Nth frame of\n"
        "the file (0: the root). Colours: green Python frames, red-orange\n"
        "native code, yellow CPython's own code (libpython, python3.x), blue\n"
        "kernel, grey unknown; inlined frames are lighter. Python frames are\n"
        "stitched in as by `pystitch script`; stacks are those of `pystitch\n"
        "collapse`.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -o, --output FILE     where to write the SVG (default, or -: stdout,\n"
        "                        unless it is a terminal); a regular file is\n"
        "                        replaced once complete\n"
        "      --title TEXT      title above the graph (default \"Flame Graph\",\n"
        "                        \"Icicle Graph\" with --icicle)\n"
        "      --width PX        width of the image in pixels (default 1200;\n"
        "                        120 to 100000)\n"
        "      --minwidth PX     leave out frames narrower than this, with their\n"
        "                        callees; their samples stay in their caller\n"
        "                        (default 0.1, as flamegraph.pl; 0 draws all)\n"
        "      --icicle          the root on top, callees below it\n"
        "      --weight WHAT     samples (default: count 1 per sample) or period\n"
        "                        (sum the samples' periods)\n"
        "      --per WHAT        what the frames above the root are: comm\n"
        "                        (default), pid (comm-PID), tid (comm-PID/TID) or\n"
        "                        none (stacks start at their root)\n"
        "      --lines           a box per line of each Python function,\n"
        "                        py::QUALNAME:FILE:LINE, where frames have one\n"
        "                        (pystitch_perf's side file: see LINE NUMBERS in\n"
        "                        pystitch(1))\n"
        PS_CLI_SESSION_HELP
        PS_CLI_COMMON_HELP;
/* clang-format on */

enum {
	OPT_WEIGHT = PS_OPT_COMMAND_FIRST,
	OPT_PER,
	OPT_ICICLE,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_MINWIDTH,
	OPT_LINES,
};

struct flamegraph_state {
	struct ps_flamegraph_opts flame;
	const char *output;
};

static void flamegraph_init(void *state)
{
	struct flamegraph_state *st = state;

	st->flame = (struct ps_flamegraph_opts){ .sz = sizeof(st->flame), .min_width = 0.1 };
}

/* A number of pixels in [min, max]. */
static int parse_pixels(const char *text, double min, double max, double *out)
{
	char *end;
	double value;

	errno = 0;
	value = strtod(text, &end);
	if (end == text || *end || errno || !(value >= min && value <= max))
		return -EINVAL;
	*out = value;
	return 0;
}

static int flamegraph_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                             const char *arg)
{
	struct flamegraph_state *st = state;
	double pixels;

	switch (opt) {
	case 'o':
		st->output = arg;
		break;
	case OPT_TITLE:
		st->flame.title = arg;
		break;
	case OPT_WIDTH:
		if (parse_pixels(arg, 120, 100000, &pixels) || pixels != (unsigned)pixels)
			return ps_cli_bad_value(cli, "--width", arg);
		st->flame.width = (unsigned)pixels;
		break;
	case OPT_MINWIDTH:
		if (parse_pixels(arg, 0, 100000, &st->flame.min_width))
			return ps_cli_bad_value(cli, "--minwidth", arg);
		break;
	case OPT_LINES:
		st->flame.lines = true;
		break;
	case OPT_ICICLE:
		st->flame.icicle = true;
		break;
	case OPT_WEIGHT:
		if (ps_cli_parse_weight(arg, &st->flame.period))
			return ps_cli_bad_value(cli, "--weight", arg);
		break;
	case OPT_PER:
		if (ps_cli_parse_per(arg, &st->flame.per))
			return ps_cli_bad_value(cli, "--per", arg);
		break;
	}
	return 0;
}

static int add_stack(void *fg, const struct ps_stack *stack)
{
	return ps_flamegraph_add(fg, stack);
}

static int flamegraph_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct flamegraph_state *st = state;
	struct ps_flamegraph *fg = NULL;
	struct ps_session *session = NULL;
	struct ps_cli_output output = { 0 };
	int status, ret;

	if (!st->flame.title && cli->profile_name)
		st->flame.title = cli->profile_name;
	if (ps_flamegraph_open(&st->flame, &fg))
		return ps_cli_out_of_memory(cli);
	/* before the capture is read, so a bad name fails at once */
	status = ps_cli_output_start(cli, &output, st->output, "SVG", "FILE.svg");
	if (status)
		goto out;
	if (!ps_cli_session_run(cli, args, add_stack, fg, &session, &status))
		goto out;
	ret = ps_flamegraph_write(fg, ps_output_file_write, output.file);
	if (ret == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	if (!ret)
		ret = ps_cli_output_close(&output, true);
	if (ret) {
		ps_cli_command_error(cli, "cannot write %s: %s", output.name, strerror(-ret));
		status = PS_EXIT_USAGE;
	} else if (cli->verbose) {
		fprintf(stderr, "%s: flamegraph: %zu call-tree nodes, %llu %s, in %s\n",
		        cli->program, ps_flamegraph_nr_nodes(fg),
		        (unsigned long long)ps_flamegraph_total(fg),
		        st->flame.period ? "period" : "samples", output.name);
	}
out:
	ps_cli_output_close(&output, false);
	ps_flamegraph_close(fg);
	ps_session_close(session);
	return status;
}

static const struct option flamegraph_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "title", required_argument, NULL, OPT_TITLE },
	{ "width", required_argument, NULL, OPT_WIDTH },
	{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
	{ "icicle", no_argument, NULL, OPT_ICICLE },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "per", required_argument, NULL, OPT_PER },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_flamegraph = {
	.name = "flamegraph",
	.summary = "write an interactive SVG flame graph (-o out.svg): click\n"
	           "              to zoom, search, Python/native/CPython/kernel colours\n",
	.help = flamegraph_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = flamegraph_options,
	.short_options = "o:",
	.state_size = sizeof(struct flamegraph_state),
	.init = flamegraph_init,
	.option = flamegraph_option,
	.run = flamegraph_run,
};
