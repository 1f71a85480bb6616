/* `pystitch flamegraph`: an interactive SVG flame graph of a capture,
 * written by pystitch itself. A regular output file is replaced only once
 * the SVG is complete (base/output_file.h); devices and FIFOs are written
 * through. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "output/output.h"

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
        "  -o, --output FILE     where to write the SVG (default, or -: stdout);\n"
        "                        a regular file is replaced once complete\n"
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
        PS_CLI_SESSION_HELP
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";
/* clang-format on */

enum {
	OPT_WEIGHT = PS_OPT_COMMAND_FIRST,
	OPT_PER,
	OPT_ICICLE,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_MINWIDTH,
};

struct flamegraph_args {
	struct ps_cli_session_args session;
	struct ps_flamegraph_opts flame;
	const char *output;
};

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

/* 0, -1 after --help, or an exit status */
static int parse_args(struct ps_cli *cli, int argc, char **argv, struct flamegraph_args *a)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
		{ "icicle", no_argument, NULL, OPT_ICICLE },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "per", required_argument, NULL, OPT_PER },
		PS_CLI_SESSION_OPTIONS,
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double pixels;
	int opt, shared;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:o:c:C:j:k:fqvh", options, NULL)) != -1) {
		shared = ps_cli_session_option(cli, "flamegraph", &a->session, opt, optarg);
		if (shared < 0)
			return PS_EXIT_USAGE;
		if (shared)
			continue;
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case OPT_TITLE:
			a->flame.title = optarg;
			break;
		case OPT_WIDTH:
			if (parse_pixels(optarg, 120, 100000, &pixels) ||
			    pixels != (unsigned)pixels)
				return ps_cli_bad_value(cli, "flamegraph", "--width", optarg);
			a->flame.width = (unsigned)pixels;
			break;
		case OPT_MINWIDTH:
			if (parse_pixels(optarg, 0, 100000, &a->flame.min_width))
				return ps_cli_bad_value(cli, "flamegraph", "--minwidth", optarg);
			break;
		case OPT_ICICLE:
			a->flame.icicle = true;
			break;
		case OPT_WEIGHT:
			if (ps_cli_parse_weight(optarg, &a->flame.period))
				return ps_cli_bad_value(cli, "flamegraph", "--weight", optarg);
			break;
		case OPT_PER:
			if (ps_cli_parse_per(optarg, &a->flame.per))
				return ps_cli_bad_value(cli, "flamegraph", "--per", optarg);
			break;
		case 'f':
			a->session.opts.force = cli->force = true;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		case 'h':
			fputs(flamegraph_usage, stdout);
			return -1;
		default:
			fputs(flamegraph_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "flamegraph: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	return 0;
}

static bool output_drain(void *ctx, struct ps_strbuf *out)
{
	if (!ps_cli_output_write(ctx, out->buf, out->len))
		return false;
	ps_strbuf_reset(out);
	return true;
}

static int add_stack(void *fg, const struct ps_stack *stack)
{
	return ps_flamegraph_add(fg, stack);
}

int ps_cmd_flamegraph(struct ps_cli *cli, int argc, char **argv)
{
	struct flamegraph_args a = { .session = { .opts = { .sz = sizeof(a.session.opts) } },
		                     .flame = { .min_width = 0.1 } };
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_flamegraph *fg = NULL;
	struct ps_session *session = NULL;
	struct ps_cli_output output = { 0 };
	const char *name;
	int status, ret;

	status = parse_args(cli, argc, argv, &a);
	if (status) {
		status = status < 0 ? PS_EXIT_OK : status;
		goto out;
	}
	name = a.output && strcmp(a.output, "-") != 0 ? a.output : "standard output";
	fg = ps_flamegraph_new(&a.flame);
	if (!fg) {
		ps_cli_error(cli, "flamegraph: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	/* before the capture is read, so a bad name fails at once */
	ret = ps_cli_output_open(&output, a.output);
	if (ret) {
		ps_cli_error(cli, "flamegraph: cannot create %s: %s", name, strerror(-ret));
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (!ps_cli_session_run(cli, "flamegraph", &a.session, add_stack, fg, &session, &status))
		goto out;
	ret = ps_flamegraph_svg(fg, &out, output_drain, &output);
	if (ret == -ENOMEM) {
		ps_cli_error(cli, "flamegraph: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	ret = ps_cli_output_close(&output, ret == 0);
	if (ret) {
		ps_cli_error(cli, "flamegraph: cannot write %s: %s", name, strerror(-ret));
		status = PS_EXIT_USAGE;
	} else if (cli->verbose) {
		fprintf(stderr, "%s: flamegraph: %zu call-tree nodes, %llu %s, in %s\n",
		        cli->program, ps_flamegraph_nr_nodes(fg),
		        (unsigned long long)ps_flamegraph_total(fg),
		        a.flame.period ? "period" : "samples", name);
	}
out:
	ps_cli_output_close(&output, false);
	ps_strbuf_release(&out);
	ps_flamegraph_free(fg);
	ps_session_close(session);
	ps_cli_session_args_release(&a.session);
	return status;
}
