/* `pystitch pprof`: the stitched stacks of a capture as a gzipped pprof
 * profile (profile.proto), for pprof, Grafana Pyroscope, Parca and other
 * profiling back ends. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "output/output.h"

/* clang-format off */
static const char pprof_usage[] =
        "usage: pystitch pprof [-i FILE] [-o FILE] [options]\n"
        "\n"
        "Write the stacks of a perf.data capture as a gzipped pprof profile\n"
        "(profile.proto), as pprof, Grafana Pyroscope and Parca read it. Python\n"
        "frames are stitched in as by `pystitch script`; a Python frame is a\n"
        "function named by its qualified name, in its Python file. Samples with\n"
        "the same stack, pid, tid and thread name are one pprof sample with two\n"
        "values: the number of samples, and the sum of their periods (cpu\n"
        "nanoseconds for cpu-clock and task-clock, else the event's count).\n"
        "Labels: pid and tid (numbers), comm (the thread's name).\n"
        "Native addresses are file offsets for user code, as perf script prints\n"
        "them, and raw addresses for the kernel.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -o, --output FILE     profile to write (default profile.pb.gz; - for\n"
        "                        stdout); written once the capture is read (of a\n"
        "                        damaged capture: what came before the damage,\n"
        "                        and exit status 2)\n"
        "      --srcline         source file names and line numbers of native\n"
        "                        functions (slower); without it a native\n"
        "                        function's file is its DSO\n"
        PS_CLI_SESSION_HELP
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr (-v: what was written)\n"
        "  -h, --help            this text\n";
/* clang-format on */

enum {
	OPT_SRCLINE = PS_OPT_COMMAND_FIRST,
};

struct pprof_args {
	struct ps_cli_session_args session;
	struct ps_pprof_opts pprof;
	const char *output;
};

/* 0, -1 after --help, or an exit status */
static int parse_args(struct ps_cli *cli, int argc, char **argv, struct pprof_args *a)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "srcline", no_argument, NULL, OPT_SRCLINE },
		PS_CLI_SESSION_OPTIONS,
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, shared;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:o:c:C:j:k:fqvh", options, NULL)) != -1) {
		shared = ps_cli_session_option(cli, "pprof", &a->session, opt, optarg);
		if (shared < 0)
			return PS_EXIT_USAGE;
		if (shared)
			continue;
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case 'o':
			if (!*optarg)
				return ps_cli_bad_value(cli, "pprof", "--output", optarg);
			a->output = optarg;
			break;
		case OPT_SRCLINE:
			a->pprof.srcline = a->session.opts.srcline = true;
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
			fputs(pprof_usage, stdout);
			return -1;
		default:
			fputs(pprof_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "pprof: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	return 0;
}

/* When the capture started, in wall-clock time: from perf's clock data
 * (record -k) when it has them, else the capture file's mtime (when perf
 * finished writing it) less the time the samples span; 0 for a pipe. */
static int64_t start_time(const struct ps_cli *cli, struct ps_session *session,
                          const struct ps_pprof *pprof)
{
	const struct ps_features *features = ps_reader_features(ps_session_reader(session));
	uint64_t first, last;
	int64_t archived;
	struct stat st;

	if (!ps_pprof_time_range(pprof, &first, &last))
		return 0;
	if (features->has_clock_data && features->clock_wall_ns)
		return (int64_t)(features->clock_wall_ns + (first - features->clock_clockid_ns));
	/* an archive keeps its perf.data's mtime in seconds, so whole
	 * seconds here too: the profile from the archive is the same */
	if (ps_reader_is_archive(ps_session_reader(session), &archived))
		return archived * 1000000000 - (int64_t)(last - first);
	if (strcmp(cli->input, "-") == 0 || stat(cli->input, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000000000 - (int64_t)(last - first);
}

static int add_stack(void *pprof, const struct ps_stack *stack)
{
	return ps_pprof_add(pprof, stack);
}

int ps_cmd_pprof(struct ps_cli *cli, int argc, char **argv)
{
	struct pprof_args a = { .session = { .opts = { .sz = sizeof(a.session.opts) } },
		                .output = "profile.pb.gz" };
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_pprof *pprof = NULL;
	struct ps_session *session = NULL;
	const struct ps_features *features;
	struct ps_pprof_info info;
	struct ps_cli_output output = { 0 };
	int status, ret;

	status = parse_args(cli, argc, argv, &a);
	if (status) {
		status = status < 0 ? PS_EXIT_OK : status;
		goto out;
	}
	pprof = ps_pprof_new(&a.pprof);
	if (!pprof) {
		ps_cli_error(cli, "pprof: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	/* before the capture is read, so a bad name fails at once; the file
	 * appears only when the whole profile is written */
	ret = ps_cli_output_open(&output, a.output);
	if (ret) {
		ps_cli_error(cli, "pprof: %s: cannot create: %s", a.output, strerror(-ret));
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (!ps_cli_session_run(cli, "pprof", &a.session, add_stack, pprof, &session, &status))
		goto out;
	features = ps_reader_features(ps_session_reader(session));
	info = (struct ps_pprof_info){
		.time_nanos = start_time(cli, session, pprof),
		.nr_build_ids = features->nr_build_ids,
		.build_ids = features->build_ids,
	};
	if (ps_pprof_write(pprof, &info, &out)) {
		ps_cli_error(cli, "pprof: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	ps_cli_output_write(&output, out.buf, out.len);
	ret = ps_cli_output_close(&output, true);
	if (ret) {
		ps_cli_error(cli, "pprof: %s: cannot write: %s", a.output, strerror(-ret));
		status = PS_EXIT_USAGE;
	} else if (cli->verbose) {
		const struct ps_pprof_stats *stats = ps_pprof_stats(pprof);
		ps_cli_error(cli,
		             "pprof: %s: %llu samples as %zu stacks, %zu locations, %zu functions, "
		             "%zu mappings, %zu bytes",
		             a.output, (unsigned long long)stats->nr_added, stats->samples,
		             stats->locations, stats->functions, stats->mappings, out.len);
	}
out:
	ps_cli_output_close(&output, false);
	ps_strbuf_release(&out);
	ps_pprof_free(pprof);
	ps_session_close(session);
	ps_cli_session_args_release(&a.session);
	return status;
}
