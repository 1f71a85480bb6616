/* `pystitch speedscope`: the stitched stacks of a capture as a speedscope
 * profile (JSON, speedscope's own file format): one profile per thread,
 * its samples in time order, for speedscope's time-ordered, left-heavy
 * and sandwich views. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* clang-format off */
static const char speedscope_usage[] =
        "usage: pystitch speedscope [-i FILE] [-o OUT.json] [options]\n"
        "\n"
        "Write the stacks of a perf.data capture as a speedscope profile (JSON in\n"
        "speedscope's file format: https://www.speedscope.app, or `speedscope\n"
        "OUT.json` from npm). Each thread is a profile named \"comm pid: PID tid:\n"
        "TID\" (as speedscope names the threads of perf script text) holding its\n"
        "samples in time order, so speedscope's \"Time Order\" view shows what the\n"
        "thread ran when; speedscope opens on the heaviest thread. Python frames\n"
        "are stitched in as by `pystitch script`: a Python frame is its qualified\n"
        "name in its Python file, a native frame its symbol in its DSO.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -o, --output FILE     where to write the JSON (default, or -: stdout,\n"
        "                        unless it is a terminal); a regular file is\n"
        "                        replaced once complete\n"
        "      --weight WHAT     period (default: each sample weighs its period,\n"
        "                        in nanoseconds for cpu-clock and task-clock) or\n"
        "                        samples (1 per sample)\n"
        "      --per WHAT        what one profile holds: tid (default: a thread),\n"
        "                        pid (a process: \"comm pid: PID\"), comm (the\n"
        "                        threads of one name) or none (every sample)\n"
        "      --srcline         native frames in their source file at their line\n"
        "                        (slower); without it a native frame's file is its\n"
        "                        DSO\n"
        PS_CLI_SESSION_HELP
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr (-v: what was written)\n"
        "  -h, --help            this text\n";
/* clang-format on */

enum {
	OPT_WEIGHT = PS_OPT_COMMAND_FIRST,
	OPT_PER,
	OPT_SRCLINE,
};

struct speedscope_state {
	struct ps_speedscope_opts speedscope;
	const char *output;
};

static void speedscope_init(void *state)
{
	struct speedscope_state *st = state;

	/* the periods: speedscope then shows cpu-clock samples as time */
	st->speedscope = (struct ps_speedscope_opts){ .sz = sizeof(st->speedscope),
		                                      .per = PS_SPEEDSCOPE_PER_TID,
		                                      .period = true };
}

static int speedscope_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                             const char *arg)
{
	static const enum ps_speedscope_per pers[] = {
		[PS_COLLAPSE_PER_COMM] = PS_SPEEDSCOPE_PER_COMM,
		[PS_COLLAPSE_PER_PID] = PS_SPEEDSCOPE_PER_PID,
		[PS_COLLAPSE_PER_TID] = PS_SPEEDSCOPE_PER_TID,
		[PS_COLLAPSE_PER_NONE] = PS_SPEEDSCOPE_PER_NONE,
	};
	struct speedscope_state *st = state;
	enum ps_collapse_per per;

	switch (opt) {
	case 'o':
		st->output = arg;
		break;
	case OPT_WEIGHT:
		if (ps_cli_parse_weight(arg, &st->speedscope.period))
			return ps_cli_bad_value(cli, "--weight", arg);
		break;
	case OPT_PER:
		if (ps_cli_parse_per(arg, &per))
			return ps_cli_bad_value(cli, "--per", arg);
		st->speedscope.per = pers[per];
		break;
	case OPT_SRCLINE:
		st->speedscope.srcline = args->opts.srcline = true;
		break;
	}
	return 0;
}

static int add_stack(void *speedscope, const struct ps_stack *stack)
{
	return ps_speedscope_add(speedscope, stack);
}

static int speedscope_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct speedscope_state *st = state;
	struct ps_speedscope *speedscope = NULL;
	struct ps_session *session = NULL;
	struct ps_cli_output output = { 0 };
	const char *base = strrchr(cli->input, '/');
	int64_t written;
	int status, ret;

	/* the file's name in speedscope's title: the capture's */
	st->speedscope.name = cli->profile_name              ? cli->profile_name
	                      : strcmp(cli->input, "-") == 0 ? "standard input"
	                      : base && base[1]              ? base + 1
	                                                     : cli->input;
	if (ps_speedscope_open(&st->speedscope, &speedscope))
		return ps_cli_out_of_memory(cli);
	/* before the capture is read, so a bad name fails at once */
	status = ps_cli_output_start(cli, &output, st->output, "JSON", "FILE.json");
	if (status)
		goto out;
	if (!ps_cli_session_run(cli, args, add_stack, speedscope, &session, &status))
		goto out;
	written = ps_speedscope_write(speedscope, ps_output_file_write, output.file);
	if (written == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	ret = written < 0 ? (int)written : ps_cli_output_close(&output, true);
	if (ret) {
		ps_cli_command_error(cli, "cannot write %s: %s", output.name, strerror(-ret));
		status = PS_EXIT_USAGE;
	} else if (cli->verbose) {
		const struct ps_speedscope_stats *stats = ps_speedscope_stats(speedscope);
		ps_cli_command_error(cli,
		                     "%s: %llu samples in %zu profiles, %zu stacks, %zu frames, "
		                     "%lld bytes",
		                     output.name, (unsigned long long)stats->nr_added,
		                     stats->profiles, stats->stacks, stats->frames,
		                     (long long)written);
	}
out:
	ps_cli_output_close(&output, false);
	ps_speedscope_close(speedscope);
	ps_session_close(session);
	return status;
}

static const struct option speedscope_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "per", required_argument, NULL, OPT_PER },
	{ "srcline", no_argument, NULL, OPT_SRCLINE },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_speedscope = {
	.name = "speedscope",
	.summary = "write a speedscope profile (-o out.json): one profile per\n"
	           "              thread, samples in time order\n",
	.help = speedscope_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = speedscope_options,
	.short_options = "o:",
	.state_size = sizeof(struct speedscope_state),
	.init = speedscope_init,
	.option = speedscope_option,
	.run = speedscope_run,
};
