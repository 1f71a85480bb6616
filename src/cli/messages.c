/* What the program says on stderr (errors, and the library's log lines
 * at the level -q and -v ask for) and the exit status an error maps to. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

static const char *program(const struct ps_cli *cli)
{
	return cli && cli->program ? cli->program : "pystitch";
}

static void print_error(const struct ps_cli *cli, bool with_command, const char *fmt, va_list ap)
{
	if (cli && cli->progress)
		ps_progress_clear(cli->progress);
	fprintf(stderr, "%s: ", program(cli));
	if (with_command && cli && cli->command)
		fprintf(stderr, "%s: ", cli->command);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ps_cli_error(const struct ps_cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_error(cli, false, fmt, ap);
	va_end(ap);
}

void ps_cli_command_error(const struct ps_cli *cli, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_error(cli, true, fmt, ap);
	va_end(ap);
}

int ps_cli_out_of_memory(const struct ps_cli *cli)
{
	ps_cli_command_error(cli, "out of memory");
	return PS_EXIT_USAGE;
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
	fprintf(stderr, "%s: %s%s\n", program(cli), level == PS_LOG_WARN ? "warning: " : "", msg);
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
