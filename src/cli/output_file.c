/* Output files of the commands that write one (-o), through the library's
 * safe output file (pystitch/output.h): a regular file is replaced only
 * once all of it was written, so a failed or killed run never leaves a
 * cut-short file nor spoils an older one, and a device, FIFO or terminal
 * is written through. "-" (or no name) is standard output. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int ps_cli_output_open(struct ps_cli_output *o, const char *path)
{
	*o = (struct ps_cli_output){ .name = path };
	if (!path || strcmp(path, "-") == 0) {
		o->name = "standard output";
		o->is_stdout = true;
		return ps_output_file_open_fd(STDOUT_FILENO, &o->file);
	}
	return ps_output_file_open(path, &o->file);
}

int ps_cli_output_start(const struct ps_cli *cli, struct ps_cli_output *o, const char *path,
                        const char *what, const char *file)
{
	int ret = ps_cli_output_open(o, path);

	if (ret) {
		ps_cli_command_error(cli, "cannot create %s: %s", o->name, strerror(-ret));
		return PS_EXIT_USAGE;
	}
	if (o->is_stdout && ps_cli_output_is_terminal(o)) {
		ps_cli_command_error(cli,
		                     "not writing %s to a terminal: give -o %s, or redirect "
		                     "standard output",
		                     what, file);
		return PS_EXIT_USAGE;
	}
	return 0;
}

bool ps_cli_output_is_terminal(const struct ps_cli_output *o)
{
	return o->file && isatty(ps_output_file_fd(o->file));
}

int ps_cli_output_close(struct ps_cli_output *o, bool keep)
{
	int err = 0;

	if (!o->file)
		return 0;
	if (keep)
		err = ps_output_file_commit(o->file);
	else
		ps_output_file_abort(o->file);
	o->file = NULL;
	return err;
}
