/* The interface of src/reader to the other modules, beyond the public
 * ps_reader_* API of include/pystitch/pystitch.h: what the session needs
 * to know of the input it reads (see docs/architecture.md for the header
 * rule). */
#ifndef PS_READER_READER_H
#define PS_READER_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* perf's deliver_sample_value() of PERF_SAMPLE_READ samples: each read
 * value whose counter moved since the last sample of its id is delivered
 * as the event that owns the id, with the difference as its period; an
 * id no event owns delivers nothing. The tracker remembers each id's last
 * value; it must see every sample, in perf's order, before any filter. */
struct ps_read_tracker;
int ps_read_tracker_new(struct ps_read_tracker **out);
void ps_read_tracker_free(struct ps_read_tracker *tracker);
/* The deliveries of sample event ev (whose attr samples READ), valid until
 * the next call and, their attrs, while ev is (until the reader's next
 * record); 0, or -ENOMEM. */
int ps_read_tracker_deliver(struct ps_read_tracker *tracker, const struct ps_reader *reader,
                            const struct ps_event *ev, const struct ps_sample_delivery **out,
                            size_t *nr);

#endif /* PS_READER_READER_H */
