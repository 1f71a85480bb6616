/* Writing an output file without harming what the path names: a regular
 * file is replaced atomically once all of it is written, anything else (a
 * device, a FIFO, a terminal) is written through, and a run that fails or
 * is killed leaves neither a cut-short output nor a temporary file behind.
 *
 * - Symbolic links are followed, as a shell's `>` follows them: the file
 *   they lead to is replaced (or made, for a dangling link) and the links
 *   stay.
 * - A regular file (or a new one) is written as an unnamed file in the
 *   target's directory (O_TMPFILE) and linked into place by commit: killed
 *   before that, it never had a name. A file system without unnamed files
 *   gets a named temporary "TARGET.XXXXXX", removed on failure.
 * - A replaced file keeps its mode (and, where permitted, its owner); a new
 *   one gets 0666 less the umask, as a shell's redirection makes it.
 * - A directory is refused (-EISDIR); a device, FIFO or socket is opened
 *   for writing as it is, never truncated, removed or renamed over.
 */
#ifndef PS_BASE_OUTPUT_FILE_H
#define PS_BASE_OUTPUT_FILE_H

#include <stdbool.h>

struct ps_output_file {
	int fd; /* write here; -1 when closed */
	/* commit links the written file to target (a regular file, or a
	 * path that did not exist) */
	bool replace;
	char *target; /* path with its symbolic links resolved */
	char *temporary; /* the named temporary, without unnamed files */
};

/* Start writing path. 0, or -errno: -EISDIR for a directory, -ELOOP for
 * too many links, -ENOMEM, or the errno of open(2). */
int ps_output_file_open(struct ps_output_file *of, const char *path);
/* Put the written file into place (nothing to do for a device or FIFO)
 * and close it. 0, or -errno (then nothing was replaced). Either way the
 * struct is closed. */
int ps_output_file_commit(struct ps_output_file *of);
/* Close without keeping what was written: an unnamed file vanishes, a
 * named temporary is removed, a written-through device stays as it is.
 * Safe on a closed struct. */
void ps_output_file_abort(struct ps_output_file *of);

#endif /* PS_BASE_OUTPUT_FILE_H */
