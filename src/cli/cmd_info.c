/* `pystitch info`: the capture's header and features (the counterpart of
 * `perf report --header-only`). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "output/output.h"

static const char info_usage[] =
        "usage: pystitch info [-i FILE] [-v]\n"
        "\n"
        "Print the header of a perf.data capture: where and how it was recorded,\n"
        "its events, and the features perf stored with it.\n"
        "\n"
        "  -i, --input FILE  capture to read (default perf.data; - for stdin).\n"
        "                    A pipe-format capture is read to its end, since its\n"
        "                    features arrive as records.\n"
        "  -f, --force       read past damaged records of a pipe-format capture\n"
        "  -v, --verbose     more messages on stderr\n"
        "  -h, --help        this text\n";

int ps_cmd_info(struct ps_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_reader *reader;
	int status = PS_EXIT_OK, opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:fvh", options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case 'f':
			cli->force = true;
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
	reader = ps_cli_open(cli, PS_ORDER_FILE, &status);
	if (!reader)
		return status;
	if (ps_reader_is_pipe(reader)) {
		const struct ps_event *event;
		int ret;
		while ((ret = ps_reader_next(reader, &event)) > 0)
			;
		if (ret < 0) {
			ps_cli_error(cli, "%s", ps_reader_errmsg(reader));
			ps_reader_close(reader);
			return ps_cli_status(ret);
		}
	}
	/* perf shows the file's modification time as "captured on" */
	struct stat st;
	time_t captured_on = 0;
	if (strcmp(cli->input, "-") == 0 ? fstat(0, &st) == 0 : stat(cli->input, &st) == 0)
		captured_on = st.st_mtime;
	ps_info_print(&out, reader, captured_on);
	if (!ps_strbuf_flush(&out, stdout) || fflush(stdout) != 0) {
		ps_cli_error(cli, "info: cannot write output");
		status = PS_EXIT_USAGE;
	}
	ps_strbuf_release(&out);
	ps_reader_close(reader);
	return status;
}
