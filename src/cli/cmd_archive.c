/* `pystitch archive`: one file with the capture and every file its
 * analysis reads (ELF objects, kernel symbols, perf maps, jitdumps),
 * written by the library's archive writer, with the progress line drawn
 * while it reads the capture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char archive_usage[] =
        "usage: pystitch archive [-i FILE] [-o ARCHIVE] [options]\n"
        "\n"
        "Pack a perf.data capture (a file, or the folder perf record --threads\n"
        "writes) and every file needed to analyse it into one\n"
        "zstd-compressed tar: the ELF files the samples ran in (as found by\n"
        "path, --symfs or the build-id cache), the kernel symbols, and the perf\n"
        "maps and jitdumps of the processes. The capture is read once to learn\n"
        "which files are used. Every command reads the archive with -i in place\n"
        "of perf.data, on any machine, and prints what it prints here: the\n"
        "symbol options below are stored in the archive and replace the\n"
        "reader's own. Files that cannot be found are named in a warning.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data)\n"
        "  -o, --output FILE     archive to write (default: the input's name with\n"
        "                        .pst added)\n"
        "      --with-debuginfo  also pack the separate debug files symbols were\n"
        "                        read from (.gnu_debuglink, /usr/lib/debug, the\n"
        "                        build-id cache's debug); without it the archive\n"
        "                        holds only the answers they gave for the addresses\n"
        "                        this capture reached (names, inline frames, source\n"
        "                        lines), which is what every command prints from it\n"
        "      --symfs DIR       look for the recorded files under DIR (build-id\n"
        "                        cache: DIR/.debug); may be given again (one\n"
        "                        exported root file system per container)\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
        "  -k, --vmlinux FILE    kernel symbols from this vmlinux\n"
        "      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n"
        "                        /proc/kallsyms when the capture's kernel is the\n"
        "                        running one, else perf record's copy of it in\n"
        "                        the build-id cache)\n"
        "      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n"
        "                        then next to the capture, then in /tmp; may be\n"
        "                        given again (one per container): maps of any\n"
        "                        name there are matched to processes by content\n"
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr; list the packed files\n"
        "  -h, --help            this text\n";

enum {
	OPT_WITH_DEBUGINFO = PS_OPT_COMMAND_FIRST,
};

struct archive_state {
	const char *output;
	bool with_debuginfo;
};

static int archive_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                          const char *arg)
{
	struct archive_state *st = state;

	if (opt == 'o')
		st->output = arg;
	else if (opt == OPT_WITH_DEBUGINFO)
		st->with_debuginfo = true;
	return 0;
}

/* -v lists what is packed */
static void packed(void *ctx, const char *kind, const char *path)
{
	const struct ps_cli *cli = ctx;

	if (cli->verbose)
		fprintf(stderr, "%s: archive: %s %s\n", cli->program, kind, path);
}

static int archive_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct archive_state *st = state;
	struct ps_archive_writer *writer = NULL;
	struct ps_session *session;
	const struct ps_stack *stack;
	char *default_output = NULL;
	const char *output = st->output;
	int status = PS_EXIT_OK, ret;
	struct stat out_st;

	/* the capture is read twice: once here, once to pack it */
	if (strcmp(cli->input, "-") == 0) {
		ps_cli_command_error(cli, "the input must be a file, not standard input");
		return PS_EXIT_USAGE;
	}
	if (!output) {
		default_output = malloc(strlen(cli->input) + sizeof(".pst"));
		if (!default_output)
			return ps_cli_out_of_memory(cli);
		sprintf(default_output, "%s.pst", cli->input);
		output = default_output;
	}
	if (ps_path_is_archive(cli->input)) {
		ps_cli_command_error(cli, "%s is an archive already", cli->input);
		status = PS_EXIT_USAGE;
		goto out;
	}
	args->opts.log = ps_cli_log;
	args->opts.log_ctx = cli;
	ret = ps_archive_writer_open(cli->input,
	                             &(struct ps_archive_writer_opts){
	                                     .sz = sizeof(struct ps_archive_writer_opts),
	                                     .session = &args->opts,
	                                     .with_debuginfo = st->with_debuginfo,
	                                     .packed = packed,
	                                     .packed_ctx = cli,
	                             },
	                             &writer);
	if (ret) {
		status = ps_cli_status(ret); /* ps_cli_log said why */
		goto out;
	}
	session = ps_archive_writer_session(writer);
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	while ((ret = ps_session_next(session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(session));
		/* as perf script on the archive will: the kernel's symbols
		 * are packed when reading it loads them */
		ps_session_stack_printed(session);
	}
	ps_progress_end(cli->progress);
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
		goto out;
	}
	ret = ps_archive_writer_write(writer, output);
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_archive_writer_errmsg(writer));
		status = ps_cli_status(ret);
		goto out;
	}
	printf("%s: %d files, %lld bytes\n", output, ret,
	       stat(output, &out_st) == 0 ? (long long)out_st.st_size : -1LL);
out:
	ps_archive_writer_close(writer);
	free(default_output);
	return status;
}

static const struct option archive_options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "with-debuginfo", no_argument, NULL, OPT_WITH_DEBUGINFO },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_archive = {
	.name = "archive",
	.summary = "pack the capture and every file needed to analyse it into\n"
	           "              one file, which every command reads in place of perf.data\n",
	.help = archive_usage,
	.takes = PS_CLI_TAKES_SYMBOLS | PS_CLI_TAKES_KERNEL | PS_CLI_TAKES_PERF_MAPS,
	.options = archive_options,
	.short_options = "o:",
	.state_size = sizeof(struct archive_state),
	.option = archive_option,
	.run = archive_run,
};
