/* The pystitch program: sub-commands and what they share. */
#ifndef PS_CLI_CLI_H
#define PS_CLI_CLI_H

#include <stdbool.h>

#include "pystitch/pystitch.h"

/* Exit statuses */
#define PS_EXIT_OK 0
#define PS_EXIT_USAGE 1 /* bad command line, or the environment failed us */
#define PS_EXIT_BAD_INPUT 2 /* the capture (or a file it needs) is damaged */

struct ps_cli {
	const char *program; /* "pystitch" or "perf-pystitch" */
	const char *input; /* -i; default perf.data */
	bool force;
	int verbose;
};

/* Log callback the program installs in the library. */
void ps_cli_log(void *ctx, enum ps_log_level level, const char *msg);
/* Print "pystitch: <msg>" on stderr. */
void ps_cli_error(const struct ps_cli *cli, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Open the capture named by cli->input with the given order; prints the
 * error and returns NULL on failure (then *status is set). */
struct ps_reader *ps_cli_open(const struct ps_cli *cli, enum ps_order order, int *status);
/* Map a library error to an exit status. */
int ps_cli_status(int err);

int ps_cmd_script(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_dump(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_info(struct ps_cli *cli, int argc, char **argv);

#endif /* PS_CLI_CLI_H */
