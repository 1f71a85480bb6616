/* pystitch's entry point: picks the sub-command and holds what every
 * sub-command shares (opening the input, messages, exit statuses).
 */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
        "usage: pystitch [<command>] [options]\n"
        "\n"
        "Read a perf.data capture made by `perf record`.\n"
        "\n"
        "commands:\n"
        "  script      print every sample with its stack, as perf script does (the\n"
        "              default: `pystitch -i perf.data` is `pystitch script -i perf.data`)\n"
        "  collapse    print folded stacks, one line per unique stack with its count,\n"
        "              for flame graphs (flamegraph.pl, inferno, speedscope)\n"
        "  flamegraph  write an interactive SVG flame graph (-o out.svg): click\n"
        "              to zoom, search, Python/native/CPython/kernel colours\n"
        "  pprof       write a gzipped pprof profile (-o FILE) for pprof, Grafana\n"
        "              Pyroscope, Parca\n"
        "  archive     pack the capture and every file needed to analyse it into\n"
        "              one file, which every command reads in place of perf.data\n"
        "  info        print the capture's header and features (like perf report\n"
        "              --header-only)\n"
        "  dump        print every record (like perf report -D), then counts per\n"
        "              record type\n"
        "\n"
        "Run `pystitch <command> --help` for a command's options.\n"
        "Also runs as `perf pystitch <command> ...` when perf-pystitch is on PATH.\n"
        "\n"
        "exit status: 0 success, 1 usage error, 2 damaged or unreadable input\n";

void ps_cli_error(const struct ps_cli *cli, const char *fmt, ...)
{
	va_list ap;

	if (cli && cli->progress)
		ps_progress_clear(cli->progress);
	fprintf(stderr, "%s: ", cli && cli->program ? cli->program : "pystitch");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void ps_cli_log(void *ctx, enum ps_log_level level, const char *msg)
{
	const struct ps_cli *cli = ctx;

	/* an open that failed: said as every error is, even with -q */
	if (level == PS_LOG_ERROR) {
		ps_cli_error(cli, "%s", msg);
		return;
	}
	if ((int)level > (cli ? cli->verbose : 0))
		return;
	if (cli && cli->quiet)
		return;
	if (cli && cli->progress)
		ps_progress_clear(cli->progress);
	fprintf(stderr, "%s: %s%s\n", cli && cli->program ? cli->program : "pystitch",
	        level == PS_LOG_WARN ? "warning: " : "", msg);
}

int ps_cli_status(int err)
{
	switch (-err) {
	case 0:
		return PS_EXIT_OK;
	case ENOMEM:
	case EPIPE:
		return PS_EXIT_USAGE;
	default:
		return PS_EXIT_BAD_INPUT;
	}
}

struct ps_reader *ps_cli_open(const struct ps_cli *cli, enum ps_order order, int *status)
{
	struct ps_reader_opts opts = {
		.sz = sizeof(opts),
		.order = order,
		.force = cli->force,
		.log = ps_cli_log,
		.log_ctx = (void *)cli,
	};
	struct ps_reader *reader = NULL;
	int err = ps_reader_open(cli->input, &opts, &reader);

	if (err) {
		/* ps_cli_log said why */
		*status = ps_cli_status(err);
		return NULL;
	}
	return reader;
}

int main(int argc, char **argv)
{
	struct ps_progress progress = { 0 };
	struct ps_cli cli = { .program = "pystitch", .input = "perf.data", .progress = &progress };
	const char *base = strrchr(argv[0], '/');

	ps_cli_use_huge_pages(argv);
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "perf-pystitch") == 0)
		cli.program = "perf pystitch";

	if (argc < 2)
		return ps_cmd_script(&cli, argc, argv);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage_text, stdout);
		return PS_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("pystitch %s\n", PS_VERSION_STRING);
		return PS_EXIT_OK;
	}
	if (strcmp(argv[1], "script") == 0)
		return ps_cmd_script(&cli, argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return ps_cmd_script(&cli, argc, argv);
	if (strcmp(argv[1], "dump") == 0)
		return ps_cmd_dump(&cli, argc - 1, argv + 1);
	if (strcmp(argv[1], "info") == 0)
		return ps_cmd_info(&cli, argc - 1, argv + 1);
	if (strcmp(argv[1], "collapse") == 0)
		return ps_cmd_collapse(&cli, argc - 1, argv + 1);
	if (strcmp(argv[1], "pprof") == 0)
		return ps_cmd_pprof(&cli, argc - 1, argv + 1);
	if (strcmp(argv[1], "flamegraph") == 0)
		return ps_cmd_flamegraph(&cli, argc - 1, argv + 1);
	if (strcmp(argv[1], "archive") == 0)
		return ps_cmd_archive(&cli, argc - 1, argv + 1);
	ps_cli_error(&cli, "unknown command '%s' (try --help)", argv[1]);
	return PS_EXIT_USAGE;
}
