/* `pystitch info`: the capture's header and features (the counterpart of
 * `perf report --header-only`). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "output/output.h"

static const char info_usage[] =
        "usage: pystitch info [-i FILE] [options]\n"
        "\n"
        "Print the header of a perf.data capture: where and how it was recorded,\n"
        "its events, and the features perf stored with it. Then, for every\n"
        "process that ran CPython or JIT code, the interpreter and its version,\n"
        "and the perf map and jitdump found to name its Python frames (the\n"
        "whole capture is read for that: a damaged record ends the read with\n"
        "an error, after the header is printed; -f reads past it).\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n"
        "                        then next to the capture, then in /tmp\n"
        "      --symfs DIR       look for the recorded files under DIR\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
        "  -f, --force           read past damaged records\n"
        "  -q, --quiet           no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";

struct python_lines {
	struct ps_strbuf *out;
	size_t nr;
};

static void add_python_process(void *ctx, const struct ps_python_process *process)
{
	struct python_lines *lines = ctx;

	ps_info_print_python(lines->out, process, lines->nr++ == 0);
}

int ps_cmd_info(struct ps_cli *cli, int argc, char **argv)
{
	enum { OPT_PERF_MAP_DIR = 256, OPT_SYMFS, OPT_BUILDID_DIR };
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ps_session_opts opts = { .sz = sizeof(opts), .log = ps_cli_log, .log_ctx = cli };
	struct ps_strbuf out = PS_STRBUF_INIT, python = PS_STRBUF_INIT;
	struct python_lines lines = { .out = &python };
	struct ps_session *session = NULL;
	int status = PS_EXIT_OK, opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:fqvh", options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case OPT_PERF_MAP_DIR:
			opts.perf_map_dir = optarg;
			break;
		case OPT_SYMFS:
			opts.symfs = optarg;
			break;
		case OPT_BUILDID_DIR:
			opts.buildid_dir = optarg;
			break;
		case 'f':
			opts.force = cli->force = true;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		case 'h':
			fputs(info_usage, stdout);
			return PS_EXIT_OK;
		default:
			fputs(info_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "info: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	ret = ps_session_open(cli->input, &opts, &session);
	if (ret)
		return ps_cli_status(ret); /* ps_cli_log said why */
	/* every record: a pipe capture's features arrive as records, and the
	 * processes are known only at the end */
	ret = ps_session_read_to_end(session);
	if (ps_session_python_processes(session, add_python_process, &lines) < 0)
		ret = -ENOMEM;
	/* perf shows the file's modification time as "captured on" */
	struct stat st;
	time_t captured_on = 0;
	int64_t archived_mtime;
	if (ps_reader_is_archive(ps_session_reader(session), &archived_mtime))
		captured_on = (time_t)archived_mtime; /* the perf.data's, kept in the archive */
	else if (strcmp(cli->input, "-") == 0 ? fstat(0, &st) == 0 : stat(cli->input, &st) == 0)
		captured_on = st.st_mtime;
	ps_info_print(&out, ps_session_reader(session), captured_on);
	if (python.len)
		ps_strbuf_add(&out, python.buf, python.len);
	if (!ps_strbuf_flush(&out, stdout) || fflush(stdout) != 0) {
		ps_cli_error(cli, "info: cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
	}
	ps_strbuf_release(&out);
	ps_strbuf_release(&python);
	ps_session_close(session);
	return status;
}
