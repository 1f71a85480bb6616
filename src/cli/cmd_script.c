/* `pystitch script` (the default command): every sample with its stack,
 * as `perf script` prints it, streamed out in large blocks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"

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
        "                        then next to the capture, then in /tmp; may be\n"
        "                        given again (one per container): maps of any\n"
        "                        name there are matched to processes by content\n"
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

struct script_state {
	const char *fields;
	bool ns;
};

static int script_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                         const char *arg)
{
	struct script_state *st = state;
	struct ps_session_opts *o = &args->opts;

	switch (opt) {
	case 'F':
		st->fields = arg;
		break;
	case 'G':
		o->no_callchain = true;
		break;
	case OPT_NS:
		st->ns = true;
		break;
	case OPT_MAX_STACK: {
		char *end;
		long n = strtol(arg, &end, 10);
		if (*end || n < 1 || n > 254)
			return ps_cli_bad_value(cli, "--max-stack", arg);
		o->max_stack = (unsigned)n;
		break;
	}
	case OPT_LIBDW:
		o->unwind_style = PS_UNWIND_PERF_LIBDW;
		break;
	}
	return 0;
}

static int write_stdout(void *ctx, const void *data, size_t size)
{
	return ps_output_file_write(ctx, data, size);
}

static int script_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct script_state *st = state;
	struct ps_session_opts *opts = &args->opts;
	struct ps_output_file *out = NULL;
	struct ps_session *session = NULL;
	struct ps_script *script = NULL;
	const struct ps_stack *stack;
	int status, ret, err = 0;

	/* source lines cost a DWARF line lookup per frame: only on request */
	opts->srcline = ps_script_fields_need_srcline(st->fields);
	ps_cli_session_defaults(args);
	status = ps_cli_session_open(cli, args, &session);
	if (status)
		return status;
	if (ps_output_file_open_fd(STDOUT_FILENO, &out) ||
	    ps_script_open(ps_session_reader(session),
	                   &(struct ps_script_opts){ .sz = sizeof(struct ps_script_opts),
	                                             .fields = st->fields,
	                                             .hide_call_graph = opts->no_callchain,
	                                             .ns = st->ns,
	                                             .write = write_stdout,
	                                             .write_ctx = out },
	                   &script)) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	ps_progress_start(cli->progress, "samples", cli->quiet, true);
	while ((ret = ps_session_next(session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(session));
		err = ps_script_write(script, stack);
		if (err)
			break;
	}
	ps_progress_end(cli->progress);
	if (err == -EINVAL) {
		ps_cli_command_error(cli, "%s", ps_script_errmsg(script));
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (err || ps_script_flush(script)) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
	}
out:
	ps_script_close(script);
	ps_output_file_abort(out);
	ps_session_close(session);
	return status;
}

static const struct option script_options[] = {
	{ "fields", required_argument, NULL, 'F' },
	{ "hide-call-graph", no_argument, NULL, 'G' },
	{ "ns", no_argument, NULL, OPT_NS },
	{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
	{ "libdw-unwind", no_argument, NULL, OPT_LIBDW },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_script = {
	.name = "script",
	.summary = "print every sample with its stack, as perf script does (the\n"
	           "              default: `pystitch -i perf.data` is `pystitch script -i "
	           "perf.data`)\n",
	.help = script_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = script_options,
	.short_options = "F:G",
	.state_size = sizeof(struct script_state),
	.option = script_option,
	.run = script_run,
};
