/* `pystitch info`: the capture's header and features (the counterpart of
 * `perf report --header-only`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char info_usage[] =
        "usage: pystitch info [-i FILE] [-I] [-P] [options]\n"
        "\n"
        "Print the header of a perf.data capture: where and how it was recorded,\n"
        "its events, and the features perf stored with it, byte for byte as\n"
        "`perf report --header-only` prints them. A file capture's header is all\n"
        "that is read; a pipe capture's features arrive as records, so the whole\n"
        "stream is read (a damaged record ends the read with an error, after the\n"
        "header is printed; -f reads past it).\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -I, --show-info       what perf shows only with -I: the CPU, NUMA, cache,\n"
        "                        memory and hybrid topology in place of their\n"
        "                        \"use -I\" hints\n"
        "  -P, --pystitch        then pystitch's own lines: the build ids, the size\n"
        "                        of the tracing data, and for every process that ran\n"
        "                        CPython or JIT code the interpreter and its version,\n"
        "                        the perf map and jitdump found to name its Python\n"
        "                        frames, and the side file that gives them lines with\n"
        "                        the share of its Python frames that have one and\n"
        "                        where they came from (the whole capture is read and\n"
        "                        its stacks unwound for that)\n"
        "      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n"
        "                        then next to the capture, then in /tmp; may be\n"
        "                        given again (one per container): maps of any\n"
        "                        name there are matched to processes by content\n"
        "                        (with -P)\n"
        "      --symfs DIR       look for the recorded files under DIR (build-id\n"
        "                        cache: DIR/.debug; with -P); may be given again\n"
        "                        (one exported root file system per container)\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug; with -P)\n"
        "  -f, --force           read past damaged records\n"
        "  -q, --quiet           no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";

/* The Python section, kept until the header is written (which in pipe
 * mode is complete only after the whole capture has been read). */
struct python_lines {
	FILE *text;
	size_t nr;
	int error;
};

static int append(void *ctx, const void *data, size_t size)
{
	return fwrite(data, 1, size, ctx) == size ? 0 : -ENOMEM;
}

static void add_python_process(void *ctx, const struct ps_python_process *process)
{
	struct python_lines *lines = ctx;

	if (!lines->error)
		lines->error = ps_info_write_python(process, lines->nr++ == 0, append, lines->text);
}

/* What perf prints as "captured on": the file's modification time. */
static int64_t captured_on(const struct ps_cli *cli, struct ps_session *session)
{
	int64_t archived_mtime;
	struct stat st;

	if (ps_reader_is_archive(ps_session_reader(session), &archived_mtime))
		return archived_mtime; /* the perf.data's, kept in the archive */
	/* a folder's: its header file's */
	if (strcmp(cli->input, "-") == 0
	            ? fstat(0, &st) == 0
	            : stat(ps_reader_header_file(ps_session_reader(session)), &st) == 0)
		return st.st_mtime;
	return 0;
}

enum {
	OPT_SHOW_INFO = 'I',
	OPT_PYSTITCH = 'P',
};

struct info_state {
	bool show_info;
	bool pystitch;
};

static int info_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                       const char *arg)
{
	struct info_state *st = state;

	if (opt == OPT_SHOW_INFO)
		st->show_info = true;
	else if (opt == OPT_PYSTITCH)
		st->pystitch = true;
	return 0;
}

static int info_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	const struct info_state *st = state;
	struct python_lines lines = { 0 };
	struct ps_output_file *out = NULL;
	struct ps_session *session = NULL;
	char *python = NULL;
	size_t python_len = 0;
	int status, ret, err;

	status = ps_cli_session_open(cli, args, &session);
	if (status)
		return status;
	lines.text = open_memstream(&python, &python_len);
	if (!lines.text || ps_output_file_open_fd(STDOUT_FILENO, &out)) {
		if (lines.text)
			fclose(lines.text);
		free(python);
		ps_session_close(session);
		return ps_cli_out_of_memory(cli);
	}
	/* every record when a pipe capture's features (which arrive as
	 * records) or the processes (known only at the end) are wanted; a
	 * file's features were read with its header */
	ret = 0;
	if (st->pystitch) {
		/* the stacks, for the share of Python frames with a line */
		const struct ps_stack *stack;

		while ((ret = ps_session_next(session, &stack)) > 0)
			;
	} else if (ps_reader_is_pipe(ps_session_reader(session))) {
		ret = ps_session_read_to_end(session);
	}
	if (st->pystitch && ps_session_python_processes(session, add_python_process, &lines) < 0 &&
	    !lines.error)
		lines.error = -ENOMEM;
	if (fclose(lines.text) != 0 && !lines.error)
		lines.error = -ENOMEM;
	err = lines.error;
	if (!err)
		err = ps_info_write(ps_session_reader(session),
		                    &(struct ps_info_opts){
		                            .sz = sizeof(struct ps_info_opts),
		                            .captured_on = captured_on(cli, session),
		                            .show_info = st->show_info,
		                            .pystitch = st->pystitch,
		                    },
		                    ps_output_file_write, out);
	if (!err && python_len)
		err = ps_output_file_write(out, python, python_len);
	if (err == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
	} else if (err) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
	}
	free(python);
	ps_output_file_abort(out);
	ps_session_close(session);
	return status;
}

static const struct option info_options[] = {
	{ "show-info", no_argument, NULL, OPT_SHOW_INFO },
	{ "pystitch", no_argument, NULL, OPT_PYSTITCH },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_info = {
	.name = "info",
	.summary = "print the capture's header and features (like perf report\n"
	           "              --header-only)\n",
	.help = info_usage,
	.takes = PS_CLI_TAKES_SYMBOLS | PS_CLI_TAKES_PERF_MAPS,
	.options = info_options,
	.short_options = "IP",
	.state_size = sizeof(struct info_state),
	.option = info_option,
	.run = info_run,
};
