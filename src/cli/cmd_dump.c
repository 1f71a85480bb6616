/* `pystitch dump`: every record of a capture, decoded, then the counts per
 * record type (the counterpart of `perf report -D`). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "output/output.h"

static const char dump_usage[] =
        "usage: pystitch dump [-i FILE] [--file-order] [--force] [-v]\n"
        "\n"
        "Print every record of a perf.data capture, one summary line each\n"
        "(\"0xOFFSET [0xSIZE]: PERF_RECORD_NAME fields\", as perf report -D prints\n"
        "after its timestamp) plus detail lines, then the count of records per type.\n"
        "\n"
        "  -i, --input FILE  capture to read (default perf.data; - for stdin,\n"
        "                    file or pipe format)\n"
        "      --file-order  print records in the order they are stored instead of\n"
        "                    perf's timestamp order\n"
        "  -f, --force       stop quietly at a damaged record instead of failing\n"
        "                    (what came before it is still printed)\n"
        "  -q, --quiet       no progress line and no warnings on stderr\n"
        "  -v, --verbose     more messages on stderr\n"
        "  -h, --help        this text\n";

int ps_cmd_dump(struct ps_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "file-order", no_argument, NULL, 'O' },
		{ "force", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum ps_order order = PS_ORDER_TIME;
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_dump_state state;
	struct ps_reader *reader;
	const struct ps_event *event;
	int status = PS_EXIT_OK, opt, ret;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:fqvh", options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case 'O':
			order = PS_ORDER_FILE;
			break;
		case 'f':
			cli->force = true;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		case 'h':
			fputs(dump_usage, stdout);
			return PS_EXIT_OK;
		default:
			fputs(dump_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "dump: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	reader = ps_cli_open(cli, order, &status);
	if (!reader)
		return status;
	ps_dump_state_init(&state);
	ps_progress_start(cli->progress, "records", cli->quiet, true);
	while ((ret = ps_reader_next(reader, &event)) > 0) {
		ps_progress_tick(cli->progress, reader);
		ps_dump_event(&out, &state, reader, event);
		if (out.len > (1u << 16) && !ps_strbuf_flush(&out, stdout))
			break;
	}
	ps_progress_end(cli->progress);
	if (ret == 0)
		ps_dump_stats(&out, &state, reader);
	if (!ps_strbuf_flush(&out, stdout) || fflush(stdout) != 0) {
		ps_cli_error(cli, "dump: cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_reader_errmsg(reader));
		status = ps_cli_status(ret);
	}
	ps_dump_state_release(&state);
	ps_strbuf_release(&out);
	ps_reader_close(reader);
	return status;
}
