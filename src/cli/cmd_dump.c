/* `pystitch dump`: every record of a capture, decoded, then the counts per
 * record type (the counterpart of `perf report -D`). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

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

enum {
	OPT_FILE_ORDER = PS_OPT_COMMAND_FIRST,
};

struct dump_state {
	enum ps_order order;
};

static void dump_init(void *state)
{
	struct dump_state *st = state;

	st->order = PS_ORDER_TIME;
}

static int dump_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                       const char *arg)
{
	struct dump_state *st = state;

	if (opt == OPT_FILE_ORDER)
		st->order = PS_ORDER_FILE;
	return 0;
}

static int dump_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct dump_state *st = state;
	struct ps_reader_opts opts = {
		.sz = sizeof(opts),
		.order = st->order,
		.force = cli->force,
		.log = ps_cli_log,
		.log_ctx = cli,
	};
	struct ps_output_file *out = NULL;
	struct ps_reader *reader = NULL;
	struct ps_dump *dump = NULL;
	const struct ps_event *event;
	int status = PS_EXIT_OK, ret, err = 0;

	ret = ps_reader_open(cli->input, &opts, &reader);
	if (ret)
		return ps_cli_status(ret); /* ps_cli_log said why */
	if (ps_output_file_open_fd(STDOUT_FILENO, &out) ||
	    ps_dump_open(reader,
	                 &(struct ps_dump_opts){ .sz = sizeof(struct ps_dump_opts),
	                                         .write = ps_output_file_write,
	                                         .write_ctx = out },
	                 &dump)) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	ps_progress_start(cli->progress, "records", cli->quiet, true);
	while ((ret = ps_reader_next(reader, &event)) > 0) {
		ps_progress_tick(cli->progress, reader);
		err = ps_dump_write(dump, event);
		if (err)
			break;
	}
	ps_progress_end(cli->progress);
	if (!err)
		err = ret == 0 ? ps_dump_finish(dump) : ps_dump_flush(dump);
	if (err) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_reader_errmsg(reader));
		status = ps_cli_status(ret);
	}
out:
	ps_dump_close(dump);
	ps_output_file_abort(out);
	ps_reader_close(reader);
	return status;
}

static const struct option dump_options[] = {
	{ "file-order", no_argument, NULL, OPT_FILE_ORDER },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_dump = {
	.name = "dump",
	.summary = "print every record (like perf report -D), then counts per\n"
	           "              record type\n",
	.help = dump_usage,
	.options = dump_options,
	.state_size = sizeof(struct dump_state),
	.init = dump_init,
	.option = dump_option,
	.run = dump_run,
};
