/* `pystitch dump`: every record of a capture as `perf report -D` prints
 * it, then the counts per record type. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char dump_usage[] =
        "usage: pystitch dump [-i FILE] [--no-hex] [--file-order] [--kallsyms FILE]\n"
        "                     [--force] [-v]\n"
        "\n"
        "Print every record of a perf.data capture as perf report -D prints it,\n"
        "line for line: a line with the record's offset, input, size and type,\n"
        "the record's bytes in hex, then \"[CPU] [TIME] 0xOFFSET [0xSIZE]:\n"
        "PERF_RECORD_NAME fields\" and perf's detail lines; after each sample\n"
        "the thread and the DSO that holds its address. Then the count of\n"
        "records per type and of samples per event.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin,\n"
        "                        file or pipe format)\n"
        "      --no-hex          leave out the hex dump of each record (the lines\n"
        "                        from \".\" to the empty line after them)\n"
        "      --file-order      records in the order they are stored, not in\n"
        "                        perf's timestamp order (perf report -D\n"
        "                        --disable-order)\n"
        "      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n"
        "                        /proc/kallsyms when the capture's kernel is the\n"
        "                        running one, else perf record's copy of it in\n"
        "                        the build-id cache):\n"
        "                        they tell how far the kernel's map reaches\n"
        "      --symfs DIR       look for the recorded files under DIR\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n" PS_CLI_COMMON_HELP;

enum {
	OPT_FILE_ORDER = PS_OPT_COMMAND_FIRST,
	OPT_NO_HEX,
	OPT_KALLSYMS,
};

struct dump_state {
	enum ps_order order;
	bool no_hex;
	const char *kallsyms;
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
	else if (opt == OPT_NO_HEX)
		st->no_hex = true;
	else if (opt == OPT_KALLSYMS)
		st->kallsyms = arg;
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
	struct ps_model_opts mopts = {
		.sz = sizeof(mopts),
		.symfs = args->opts.symfs,
		.buildid_dir = args->opts.buildid_dir,
		.kallsyms = st->kallsyms,
		.log = ps_cli_log,
		.log_ctx = cli,
	};
	struct ps_output_file *out = NULL;
	struct ps_reader *reader = NULL;
	struct ps_model *model = NULL;
	struct ps_dump *dump = NULL;
	const struct ps_event *event;
	int status = PS_EXIT_OK, ret, err = 0;

	ret = ps_reader_open(cli->input, &opts, &reader);
	if (ret)
		return ps_cli_status(ret); /* ps_cli_log said why */
	ret = ps_model_open(reader, &mopts, &model);
	if (ret) {
		status = ps_cli_status(ret); /* ps_cli_log said why */
		goto out;
	}
	if (ps_output_file_open_fd(STDOUT_FILENO, &out) ||
	    ps_dump_open(reader,
	                 &(struct ps_dump_opts){ .sz = sizeof(struct ps_dump_opts),
	                                         .write = ps_output_file_write,
	                                         .write_ctx = out,
	                                         .no_hex = st->no_hex,
	                                         .model = model },
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
	if (err == -ENOMEM) {
		status = ps_cli_out_of_memory(cli);
	} else if (err) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_reader_errmsg(reader));
		status = ps_cli_status(ret);
	}
out:
	ps_dump_close(dump);
	ps_model_close(model);
	ps_output_file_abort(out);
	ps_reader_close(reader);
	return status;
}

static const struct option dump_options[] = {
	{ "file-order", no_argument, NULL, OPT_FILE_ORDER },
	{ "no-hex", no_argument, NULL, OPT_NO_HEX },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_dump = {
	.name = "dump",
	.summary = "print every record as perf report -D does, then counts per\n"
	           "              record type\n",
	.help = dump_usage,
	.takes = PS_CLI_TAKES_SYMBOLS,
	.options = dump_options,
	.state_size = sizeof(struct dump_state),
	.init = dump_init,
	.option = dump_option,
	.run = dump_run,
};
