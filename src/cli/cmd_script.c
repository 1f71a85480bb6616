/* `pystitch script` (the default command): every sample with its stack,
 * as `perf script` prints it. Parses perf script's options, the filters
 * among them, and streams the text out in large blocks. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

static const char script_usage[] =
        "usage: pystitch [script] [-i FILE] [options]\n"
        "\n"
        "Print every sample of a perf.data capture with its stack, in the text\n"
        "format of `perf script`. DWARF captures (--call-graph dwarf) are unwound\n"
        "offline; frame-pointer captures (-g) use the recorded call chain.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -F, --fields LIST     fields to print, as perf script -F: comm, tid, pid,\n"
        "                        time, cpu, period, event, trace, ip, sym, symoff,\n"
        "                        dso, addr, srcline; TYPE:LIST for one event type\n"
        "                        (hw, sw, trace, raw, break); +f / -f edit the defaults\n"
        "  -G, --hide-call-graph one line per sample, without the stack\n"
        "      --ns              times in nanoseconds\n"
        "      --no-inline       no frames for inlined functions\n"
        "      --pid LIST        only these process ids (comma-separated)\n"
        "      --tid LIST        only these thread ids\n"
        "  -c, --comm LIST       only threads with these names (also --comms)\n"
        "  -C, --cpu LIST        only these CPUs (e.g. 0-3,6)\n"
        "      --time START,END  only samples in this time range, in seconds as\n"
        "                        printed (START, or END, may be empty)\n"
        "                        or, as perf, a share of the capture: P%/N (the\n"
        "                        Nth slice of P%) or A%-B%\n"
        "      --symfs DIR       look for the recorded files under DIR\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
        "  -k, --vmlinux FILE    kernel symbols from this vmlinux\n"
        "      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n"
        "                        /proc/kallsyms when the capture was made here)\n"
        "      --max-stack N     frames per stack part (default 127, as perf)\n"
        "      --libdw-unwind    at stacks cut by the stack-copy limit, print what perf\n"
        "                        built with libdw prints instead of Debian's perf\n"
        "      --python MODE     Python frames of CPython 3.12+ run with -X perf or\n"
        "                        -X perf_jit, or 3.8-3.11 with pystitch_perf:\n"
        "                        merged (default: Python frames replace\n"
        "                        the interpreter frames that ran them), all (every\n"
        "                        native frame too), native (what perf script prints)\n"
        "                        or only (Python frames alone)\n"
        "      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n"
        "                        then next to the capture, then in /tmp\n"
        "      --unwinder KIND   how DWARF stacks are unwound: table (default;\n"
        "                        compiled CFI rules, libdwfl for the frames they\n"
        "                        cannot express) or libdwfl (libdwfl alone); the\n"
        "                        output is the same\n" PS_CLI_JOBS_HELP
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";

enum {
	OPT_NS = PS_OPT_COMMAND_FIRST,
	OPT_MAX_STACK,
	OPT_LIBDW,
};

struct script_args {
	struct ps_cli_session_args session;
	const char *fields;
	bool ns;
};

static int parse_args(struct ps_cli *cli, int argc, char **argv, struct script_args *a)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "ns", no_argument, NULL, OPT_NS },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "libdw-unwind", no_argument, NULL, OPT_LIBDW },
		PS_CLI_SESSION_OPTIONS,
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ps_session_opts *o = &a->session.opts;
	int opt, shared;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:F:Gc:C:j:k:fqvh", options, NULL)) != -1) {
		shared = ps_cli_session_option(cli, "script", &a->session, opt, optarg);
		if (shared < 0)
			return PS_EXIT_USAGE;
		if (shared)
			continue;
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case 'F':
			a->fields = optarg;
			break;
		case 'G':
			o->no_callchain = true;
			break;
		case OPT_NS:
			a->ns = true;
			break;
		case OPT_MAX_STACK: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 254)
				return ps_cli_bad_value(cli, "script", "--max-stack", optarg);
			o->max_stack = (unsigned)n;
			break;
		}
		case OPT_LIBDW:
			o->unwind_style = PS_UNWIND_PERF_LIBDW;
			break;
		case 'f':
			o->force = cli->force = true;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		case 'h':
			fputs(script_usage, stdout);
			return -1;
		default:
			fputs(script_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "script: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	/* source lines cost a DWARF line lookup per frame: only on request */
	o->srcline = a->fields && strstr(a->fields, "srcline");
	return 0;
}

int ps_cmd_script(struct ps_cli *cli, int argc, char **argv)
{
	struct script_args a = { .session = { .opts = { .sz = sizeof(a.session.opts) } } };
	struct ps_session_opts *opts = &a.session.opts;
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_script_format fmt;
	struct ps_session *session = NULL;
	const struct ps_stack *stack;
	bool format_ready = false;
	char err[256];
	int status, ret;

	status = parse_args(cli, argc, argv, &a);
	if (status) {
		status = status < 0 ? PS_EXIT_OK : status;
		goto out;
	}
	opts->log = ps_cli_log;
	opts->log_ctx = cli;
	ps_cli_session_defaults(&a.session);
	ret = ps_session_open(cli->input, opts, &session);
	if (ret) {
		/* ps_cli_log said why */
		status = ps_cli_status(ret);
		goto out;
	}
	ps_progress_start(cli->progress, "samples", cli->quiet, true);
	while ((ret = ps_session_next(session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(session));
		if (!format_ready) {
			/* in pipe mode the events are known only once records
			 * have arrived, so the format waits for the first sample */
			if (ps_script_format_init(&fmt, ps_session_reader(session), a.fields,
			                          !opts->no_callchain, a.ns, err, sizeof(err))) {
				ps_cli_error(cli, "script: %s", err);
				status = PS_EXIT_USAGE;
				goto out;
			}
			format_ready = true;
		}
		ps_script_print(&out, &fmt, stack);
		if (out.len > (1u << 16) && !ps_strbuf_flush(&out, stdout))
			break;
	}
	ps_progress_end(cli->progress);
	if (!ps_strbuf_flush(&out, stdout) || fflush(stdout) != 0) {
		ps_cli_error(cli, "script: cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
	}
out:
	ps_strbuf_release(&out);
	ps_session_close(session);
	ps_cli_session_args_release(&a.session);
	return status;
}
