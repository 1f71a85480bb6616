/* The interface of src/reader to the other modules, beyond the public
 * ps_reader_* API of include/pystitch/pystitch.h: what the session needs
 * to know of the input it reads (see docs/architecture.md for the header
 * rule). */
#ifndef PS_READER_READER_H
#define PS_READER_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "pystitch/pystitch.h"

struct ps_archive;

/* The archive the capture came out of, or NULL. */
struct ps_archive *ps_reader_archive(const struct ps_reader *reader);

/* ps_reader_open() for a caller that says the failure itself (the
 * session): on failure its message goes to errmsg, not to the log. */
int ps_reader_open_errmsg(const char *path, const struct ps_reader_opts *opts,
                          struct ps_reader **out, char *errmsg, size_t errmsg_size);

/* Whether path names the very file the reader reads: a regular file
 * (not "-", a FIFO or an archive's contents) with the reader's device,
 * inode and size, so that another reader opened on path reads the same
 * bytes (it was not replaced, nor is it still growing). */
bool ps_reader_reads_file(const struct ps_reader *reader, const char *path);

#endif /* PS_READER_READER_H */
