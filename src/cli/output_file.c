/* Output files of the commands that write one (-o), through the base
 * module's safe output file: a regular file is replaced only once all of
 * it was written, so a failed or killed run never leaves a cut-short file
 * nor spoils an older one, and a device, FIFO or terminal is written
 * through. "-" (or no name) is standard output. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

int ps_cli_output_open(struct ps_cli_output *o, const char *path)
{
	int err, fd;

	*o = (struct ps_cli_output){ .target = { .fd = -1 } };
	if (!path || strcmp(path, "-") == 0) {
		o->file = stdout;
		return 0;
	}
	o->path = path;
	err = ps_output_file_open(&o->target, path);
	if (err)
		return err;
	/* the stream has a descriptor of its own: closing it flushes and
	 * reports write errors, and leaves the target's for commit */
	fd = dup(o->target.fd);
	if (fd < 0 || !(o->file = fdopen(fd, "w"))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		ps_output_file_abort(&o->target);
		return err;
	}
	return 0;
}

bool ps_cli_output_write(struct ps_cli_output *o, const void *data, size_t len)
{
	if (o->error)
		return false;
	if (len && fwrite(data, 1, len, o->file) != len) {
		o->error = errno ? errno : EIO;
		return false;
	}
	return true;
}

int ps_cli_output_close(struct ps_cli_output *o, bool keep)
{
	int err = o->error;

	if (!o->file)
		return 0;
	if (fflush(o->file) != 0 && !err)
		err = errno ? errno : EIO;
	if (o->file != stdout) {
		if (fclose(o->file) != 0 && !err)
			err = errno ? errno : EIO;
		if (keep && !err)
			err = -ps_output_file_commit(&o->target);
		else
			ps_output_file_abort(&o->target);
	}
	o->file = NULL;
	return -err;
}
