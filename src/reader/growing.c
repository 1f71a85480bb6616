/* Counting the records of a capture that perf record is still writing
 * (ps_capture_count_growing(), for `pystitch record`'s progress line).
 * perf writes the file header and attrs first, with the data section's
 * offset, then appends whole records as it drains its ring buffers; the
 * counter walks the record headers from where it stopped last time to
 * the file's current end, and waits at a record that is not all there
 * yet. It reads headers only, eight bytes each, with pread(2). */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cursor.h"
#include "perf_format_priv.h"

#include <pystitch/pystitch.h>

/* At most this many record headers per call: a call stays short even on
 * a capture that grew by gigabytes since the last one. */
#define GROWING_MAX_STEPS (1u << 20)
#define GROWING_BATCH 4096 /* bytes read at once while walking */

static int read_header(int fd, struct ps_growing_capture *state)
{
	uint8_t header[PS_FILE_HEADER_SIZE];
	struct ps_cursor c;
	uint64_t magic, header_size, data_offset;
	ssize_t n = pread(fd, header, sizeof(header), 0);

	if (n < (ssize_t)sizeof(header))
		return n < 0 ? -errno : 0; /* not written yet */
	c = ps_cursor_make(header, sizeof(header), false);
	magic = ps_cursor_u64(&c);
	if (magic != PS_PERF_MAGIC2 && magic != PS_PERF_MAGIC2_SWAPPED)
		return -EINVAL; /* pipe mode or not perf.data: nothing to count */
	c.swap = magic == PS_PERF_MAGIC2_SWAPPED;
	header_size = ps_cursor_u64(&c);
	ps_cursor_skip(&c, 24); /* attr_size, attrs {offset, size} */
	data_offset = ps_cursor_u64(&c);
	if (!ps_cursor_ok(&c) || header_size < PS_FILE_HEADER_SIZE_NOFEAT ||
	    data_offset < header_size)
		return -EINVAL;
	state->swap = c.swap;
	state->next = data_offset;
	return 0;
}

int ps_capture_count_growing(const char *path, struct ps_growing_capture *state)
{
	uint8_t batch[GROWING_BATCH];
	uint64_t batch_start = 0, batch_len = 0;
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out;
	}
	state->bytes = (uint64_t)st.st_size;
	if (!state->next) {
		err = read_header(fd, state);
		if (err || !state->next)
			goto out;
	}
	for (unsigned steps = 0; steps < GROWING_MAX_STEPS; steps++) {
		struct ps_cursor c;
		uint32_t type;
		uint16_t size;

		if (state->next + 8 > state->bytes)
			break;
		if (state->next < batch_start || state->next + 8 > batch_start + batch_len) {
			ssize_t n = pread(fd, batch, sizeof(batch), (off_t)state->next);

			if (n < 8)
				break;
			batch_start = state->next;
			batch_len = (uint64_t)n;
		}
		c = ps_cursor_make(batch + (state->next - batch_start), 8, state->swap);
		type = ps_cursor_u32(&c);
		ps_cursor_u16(&c); /* misc */
		size = ps_cursor_u16(&c);
		if (size < 8) {
			/* not a record perf wrote: stop counting for good */
			err = -EINVAL;
			break;
		}
		if (state->next + size > state->bytes)
			break; /* still being written */
		if (type == PERF_RECORD_SAMPLE)
			state->samples++;
		else if (type == PERF_RECORD_LOST)
			state->lost_records++;
		state->next += size;
	}
out:
	close(fd);
	return err;
}
