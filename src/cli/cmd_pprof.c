/* `pystitch pprof`: the stitched stacks of a capture as a gzipped pprof
 * profile (profile.proto), for pprof, Grafana Pyroscope, Parca and other
 * profiling back ends. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

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
        "them, and raw addresses for the kernel. The first mapping (pprof's main\n"
        "binary) is the program most samples ran; a mapping's build id is the\n"
        "capture's, or that of the file read when the capture has none.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -o, --output FILE     profile to write (default profile.pb.gz, named on\n"
        "                        stderr when written; - for stdout, unless it is\n"
        "                        a terminal); written once the capture is read\n"
        "                        (of a damaged capture: what came before the\n"
        "                        damage, and exit status 2)\n"
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

struct pprof_state {
	struct ps_pprof_opts pprof;
	const char *output;
	bool output_given; /* -o: else the default name, said when written */
};

static void pprof_init(void *state)
{
	struct pprof_state *st = state;

	st->pprof.sz = sizeof(st->pprof);
	st->output = "profile.pb.gz";
}

static int pprof_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                        const char *arg)
{
	struct pprof_state *st = state;

	switch (opt) {
	case 'o':
		if (!*arg)
			return ps_cli_bad_value(cli, "--output", arg);
		st->output = arg;
		st->output_given = true;
		break;
	case OPT_SRCLINE:
		st->pprof.srcline = args->opts.srcline = true;
		break;
	}
	return 0;
}

/* SECONDS (a file's mtime) in nanoseconds less SPAN, or -1 when that is
 * not a time after 1970 that int64_t holds: a damaged sample time or an
 * archive's MANIFEST can give any value, and a wrong start time is worse
 * in a profile than none. */
static int64_t seconds_less_span(int64_t seconds, uint64_t span)
{
	if (seconds < 0 || seconds > INT64_MAX / 1000000000)
		return -1;
	if (span > (uint64_t)(seconds * 1000000000))
		return -1;
	return seconds * 1000000000 - (int64_t)span;
}

/* When the capture started, in wall-clock time: from perf's clock data
 * (record -k) when it has them, else the capture file's mtime (when perf
 * finished writing it) less the time the samples span; 0 for a pipe, and
 * 0 with a warning when the figures give no time pprof can hold. */
static int64_t start_time(struct ps_cli *cli, struct ps_session *session,
                          const struct ps_pprof *pprof)
{
	const struct ps_features *features = ps_reader_features(ps_session_reader(session));
	uint64_t first, last, wall;
	int64_t archived, start;
	struct stat st;

	if (!ps_pprof_time_range(pprof, &first, &last))
		return 0;
	if (features->has_clock_data && features->clock_wall_ns) {
		/* unsigned: a first sample before the clock reference wraps
		 * back to the right value; past INT64_MAX it is no time */
		wall = features->clock_wall_ns + (first - features->clock_clockid_ns);
		start = wall <= INT64_MAX ? (int64_t)wall : -1;
	} else if (ps_reader_is_archive(ps_session_reader(session), &archived)) {
		/* an archive keeps its perf.data's mtime in seconds, so whole
		 * seconds here too: the profile from the archive is the same */
		start = seconds_less_span(archived, last - first);
	} else if (strcmp(cli->input, "-") == 0 || stat(cli->input, &st) != 0 ||
	           !S_ISREG(st.st_mode)) {
		return 0;
	} else {
		start = seconds_less_span((int64_t)st.st_mtim.tv_sec, last - first);
	}
	if (start < 0) {
		char msg[160];

		snprintf(msg, sizeof(msg),
		         "the profile has no start time: the samples' times (%" PRIu64
		         " to %" PRIu64 " ns) and the %s give none after 1970",
		         first, last,
		         features->has_clock_data ? "clock data" : "capture's modification time");
		ps_cli_log(cli, PS_LOG_WARN, msg);
		return 0;
	}
	return start;
}

static int add_stack(void *pprof, const struct ps_stack *stack)
{
	return ps_pprof_add(pprof, stack);
}

static int pprof_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct pprof_state *st = state;
	struct ps_pprof *pprof = NULL;
	struct ps_session *session = NULL;
	const struct ps_build_id *build_ids;
	size_t nr_build_ids;
	struct ps_cli_output output = { 0 };
	int64_t written;
	int status, ret;

	if (ps_pprof_open(&st->pprof, &pprof))
		return ps_cli_out_of_memory(cli);
	/* before the capture is read, so a bad name fails at once; the file
	 * appears only when the whole profile is written */
	status = ps_cli_output_start(cli, &output, st->output, "a gzipped profile", "FILE");
	if (status)
		goto out;
	if (!ps_cli_session_run(cli, args, add_stack, pprof, &session, &status))
		goto out;
	/* the capture's build ids, and those of the files it lacks that
	 * pystitch read */
	if (ps_session_build_ids(session, &build_ids, &nr_build_ids)) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	written = ps_pprof_write(pprof,
	                         &(struct ps_pprof_write_opts){
	                                 .sz = sizeof(struct ps_pprof_write_opts),
	                                 .time_nanos = start_time(cli, session, pprof),
	                                 .nr_build_ids = nr_build_ids,
	                                 .build_ids = build_ids,
	                         },
	                         ps_output_file_write, output.file);
	if (written == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	ret = written < 0 ? (int)written : ps_cli_output_close(&output, true);
	if (ret) {
		ps_cli_command_error(cli, "%s: cannot write: %s", st->output, strerror(-ret));
		status = PS_EXIT_USAGE;
	} else if (cli->verbose) {
		const struct ps_pprof_stats *stats = ps_pprof_stats(pprof);
		ps_cli_command_error(
		        cli,
		        "%s: %llu samples as %zu stacks, %zu locations, %zu functions, "
		        "%zu mappings, %lld bytes",
		        st->output, (unsigned long long)stats->nr_added, stats->samples,
		        stats->locations, stats->functions, stats->mappings, (long long)written);
	} else if (!st->output_given && !cli->quiet) {
		/* a file the user did not name: say where it went */
		ps_cli_command_error(cli, "wrote %s (%llu samples, %lld bytes)", st->output,
		                     (unsigned long long)ps_pprof_stats(pprof)->nr_added,
		                     (long long)written);
	}
out:
	ps_cli_output_close(&output, false);
	ps_pprof_close(pprof);
	ps_session_close(session);
	return status;
}

static const struct option pprof_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "srcline", no_argument, NULL, OPT_SRCLINE },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_pprof = {
	.name = "pprof",
	.summary = "write a gzipped pprof profile (-o FILE) for pprof, Grafana\n"
	           "              Pyroscope, Parca\n",
	.help = pprof_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = pprof_options,
	.short_options = "o:",
	.state_size = sizeof(struct pprof_state),
	.init = pprof_init,
	.option = pprof_option,
	.run = pprof_run,
};
