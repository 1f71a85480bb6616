/* `pystitch script` (the default command): every sample with its stack,
 * as `perf script` prints it. Parses perf script's options, the filters
 * among them, and streams the text out in large blocks. */
#include <errno.h>
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
        "      --comm LIST       only threads with these names\n"
        "  -C, --cpu LIST        only these CPUs (e.g. 0-3,6)\n"
        "      --time START,END  only samples in this time range, in seconds as\n"
        "                        printed (START, or END, may be empty)\n"
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
        "  -f, --force           stop quietly at a damaged record\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";

/* A comma-separated list of integers, with a-b ranges when allowed. */
static int parse_int_list(const char *text, bool ranges, int32_t **out, size_t *nr)
{
	const char *p = text;
	size_t cap = 0;

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

enum {
	OPT_NS = 256,
	OPT_NO_INLINE,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_TIME,
	OPT_SYMFS,
	OPT_BUILDID_DIR,
	OPT_KALLSYMS,
	OPT_MAX_STACK,
	OPT_LIBDW,
	OPT_PYTHON,
	OPT_PERF_MAP_DIR,
};

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

struct script_args {
	struct ps_session_opts opts;
	const char *fields;
	bool ns;
	char *comm_text;
	int32_t *pids, *tids, *cpus;
	const char **comms;
};

static int bad_value(struct ps_cli *cli, const char *option, const char *value)
{
	ps_cli_error(cli, "script: bad value '%s' for %s (see --help)", value, option);
	return PS_EXIT_USAGE;
}

static int parse_args(struct ps_cli *cli, int argc, char **argv, struct script_args *a)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "fields", required_argument, NULL, 'F' },
		{ "hide-call-graph", no_argument, NULL, 'G' },
		{ "ns", no_argument, NULL, OPT_NS },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "cpu", required_argument, NULL, 'C' },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "libdw-unwind", no_argument, NULL, OPT_LIBDW },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ps_session_opts *o = &a->opts;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:F:GC:k:fvh", options, NULL)) != -1) {
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
		case OPT_NO_INLINE:
			o->no_inline = true;
			break;
		case OPT_PID:
			if (parse_int_list(optarg, false, &a->pids, &o->nr_pids))
				return bad_value(cli, "--pid", optarg);
			o->pids = a->pids;
			break;
		case OPT_TID:
			if (parse_int_list(optarg, false, &a->tids, &o->nr_tids))
				return bad_value(cli, "--tid", optarg);
			o->tids = a->tids;
			break;
		case 'C':
			if (parse_int_list(optarg, true, &a->cpus, &o->nr_cpus))
				return bad_value(cli, "--cpu", optarg);
			o->cpus = a->cpus;
			break;
		case OPT_COMM:
			free(a->comm_text);
			a->comm_text = strdup(optarg);
			free(a->comms);
			if (!a->comm_text || split_names(a->comm_text, &a->comms, &o->nr_comms))
				return bad_value(cli, "--comm", optarg);
			o->comms = a->comms;
			break;
		case OPT_TIME:
			if (parse_time_range(optarg, &o->time_start, &o->time_end))
				return bad_value(cli, "--time", optarg);
			break;
		case OPT_SYMFS:
			o->symfs = optarg;
			break;
		case OPT_BUILDID_DIR:
			o->buildid_dir = optarg;
			break;
		case 'k':
			o->vmlinux = optarg;
			break;
		case OPT_KALLSYMS:
			o->kallsyms = optarg;
			break;
		case OPT_MAX_STACK: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 254)
				return bad_value(cli, "--max-stack", optarg);
			o->max_stack = (unsigned)n;
			break;
		}
		case OPT_LIBDW:
			o->libdw_unwind = true;
			break;
		case OPT_PYTHON:
			if (parse_python_mode(optarg, &o->python))
				return bad_value(cli, "--python", optarg);
			break;
		case OPT_PERF_MAP_DIR:
			o->perf_map_dir = optarg;
			break;
		case 'f':
			o->force = cli->force = true;
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
	struct script_args a = { .opts = { .sz = sizeof(a.opts) } };
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
	a.opts.log = ps_cli_log;
	a.opts.log_ctx = cli;
	ret = ps_session_open(cli->input, &a.opts, &session);
	if (ret) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
		goto out;
	}
	while ((ret = ps_session_next(session, &stack)) > 0) {
		if (!format_ready) {
			/* in pipe mode the events are known only once records
			 * have arrived, so the format waits for the first sample */
			if (ps_script_format_init(&fmt, ps_session_reader(session), a.fields,
			                          !a.opts.no_callchain, a.ns, err, sizeof(err))) {
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
	free(a.pids);
	free(a.tids);
	free(a.cpus);
	free(a.comms);
	free(a.comm_text);
	return status;
}
