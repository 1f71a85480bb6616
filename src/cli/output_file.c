/* Output files of the commands that write one (-o): the text goes to a
 * temporary file next to the target, renamed over it only when all of it
 * was written, so a failed run never leaves a cut-short file nor spoils
 * an older one. "-" (or no name) is standard output. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

int ps_cli_output_open(struct ps_cli_output *o, const char *path)
{
	size_t len;
	mode_t mask;
	int fd;

	*o = (struct ps_cli_output){ 0 };
	if (!path || strcmp(path, "-") == 0) {
		o->file = stdout;
		return 0;
	}
	o->path = path;
	len = strlen(path);
	o->temporary = malloc(len + 8);
	if (!o->temporary)
		return -ENOMEM;
	memcpy(o->temporary, path, len);
	memcpy(o->temporary + len, ".XXXXXX", 8);
	fd = mkstemp(o->temporary);
	if (fd < 0) {
		int err = errno;

		free(o->temporary);
		o->temporary = NULL;
		return -err;
	}
	/* mkstemp makes the file private; the output gets the usual mode */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0 || !(o->file = fdopen(fd, "w"))) {
		int err = errno;

		close(fd);
		unlink(o->temporary);
		free(o->temporary);
		o->temporary = NULL;
		return -err;
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
		if (keep && !err && rename(o->temporary, o->path) != 0)
			err = errno;
		if (!keep || err)
			unlink(o->temporary);
	}
	o->file = NULL;
	free(o->temporary);
	o->temporary = NULL;
	return -err;
}
