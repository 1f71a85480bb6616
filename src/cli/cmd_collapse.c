/* `pystitch collapse`: folded stacks, one line per unique stack with its
 * count, root first and sorted, as `stackcollapse-perf.pl | sort` writes
 * them for flamegraph.pl, inferno and speedscope. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

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
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";
/* clang-format on */

enum {
	OPT_WEIGHT = PS_OPT_COMMAND_FIRST,
	OPT_PER,
	OPT_ANNOTATE,
};

struct collapse_args {
	struct ps_cli_session_args session;
	struct ps_collapse_opts collapse;
};

/* 0, -1 after --help, or an exit status */
static int parse_args(struct ps_cli *cli, int argc, char **argv, struct collapse_args *a)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "per", required_argument, NULL, OPT_PER },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		PS_CLI_SESSION_OPTIONS,
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, shared;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:c:C:j:k:fqvh", options, NULL)) != -1) {
		shared = ps_cli_session_option(cli, "collapse", &a->session, opt, optarg);
		if (shared < 0)
			return PS_EXIT_USAGE;
		if (shared)
			continue;
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case OPT_WEIGHT:
			if (ps_cli_parse_weight(optarg, &a->collapse.period))
				return ps_cli_bad_value(cli, "collapse", "--weight", optarg);
			break;
		case OPT_PER:
			if (ps_cli_parse_per(optarg, &a->collapse.per))
				return ps_cli_bad_value(cli, "collapse", "--per", optarg);
			break;
		case OPT_ANNOTATE:
			a->collapse.annotate = true;
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
			fputs(collapse_usage, stdout);
			return -1;
		default:
			fputs(collapse_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "collapse: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	return 0;
}

static int add_stack(void *collapse, const struct ps_stack *stack)
{
	return ps_collapse_add(collapse, stack);
}

int ps_cmd_collapse(struct ps_cli *cli, int argc, char **argv)
{
	struct collapse_args a = { .session = { .opts = { .sz = sizeof(a.session.opts) } } };
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_collapse *collapse = NULL;
	struct ps_session *session = NULL;
	int64_t nr_lines;
	int status;

	status = parse_args(cli, argc, argv, &a);
	if (status) {
		status = status < 0 ? PS_EXIT_OK : status;
		goto out;
	}
	collapse = ps_collapse_new(&a.collapse);
	if (!collapse) {
		ps_cli_error(cli, "collapse: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (!ps_cli_session_run(cli, "collapse", &a.session, add_stack, collapse, &session,
	                        &status))
		goto out;
	nr_lines = ps_collapse_sort(collapse);
	if (nr_lines < 0) {
		ps_cli_error(cli, "collapse: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	for (int64_t i = 0; i < nr_lines; i++) {
		ps_collapse_print_line(&out, collapse, (size_t)i);
		if (out.len > (1u << 16) && !ps_strbuf_flush(&out, stdout))
			break;
	}
	if (!ps_strbuf_flush(&out, stdout) || fflush(stdout) != 0) {
		ps_cli_error(cli, "collapse: cannot write output");
		status = PS_EXIT_USAGE;
	}
out:
	ps_strbuf_release(&out);
	ps_collapse_free(collapse);
	ps_session_close(session);
	ps_cli_session_args_release(&a.session);
	return status;
}
