/* Streaming the data section: buffered input over the descriptor, framing
 * the next record (from the input or from decompressed COMPRESSED data),
 * and delivering records in file order or in perf's time order.
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cursor.h"
#include "reader/perf_format_priv.h"

/* ---- buffered input ---------------------------------------------- */

/* Below this a data section is read: the many small inputs of tests and
 * fuzzing gain nothing from a mapping. */
#define MAP_MIN_DATA (1u << 20)
/* Pages read are dropped from the mapping every this many bytes. */
#define MAP_DROP_STEP (4u << 20)

/* Map the data section [r->data_offset, r->data_end) read-only, which lies
 * in the file (reader.c clamps data_size to the file's size), and make it
 * the input's buffer. On any failure the input stays a buffered read. */
void ps_input_map(struct ps_reader *r, uint64_t file_size)
{
	if (r->is_pipe)
		return;
	ps_input_map_range(&r->in, r->data_offset, r->data_end, file_size);
}

void ps_input_map_range(struct ps_input *in, uint64_t data_offset, uint64_t data_end,
                        uint64_t file_size)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t start, len;
	void *map;

	if (page <= 0 || !in->seekable || data_end > file_size ||
	    data_end - data_offset < MAP_MIN_DATA || getenv("PYSTITCH_NO_MMAP"))
		return;
	start = data_offset & ~(uint64_t)(page - 1);
	len = data_end - start;
	if (len > SIZE_MAX)
		return;
	map = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, in->fd, (off_t)start);
	if (map == MAP_FAILED)
		return;
	(void)madvise(map, (size_t)len, MADV_SEQUENTIAL);
	free(in->buf);
	in->map = map;
	in->map_len = (size_t)len;
	in->map_offset = start;
	in->page = (uint64_t)page;
	in->dropped = start;
	in->checked = data_offset;
	in->buf = map;
	in->cap = (size_t)len;
	in->head = (size_t)(data_offset - start);
	in->tail = (size_t)len;
	in->offset = data_offset;
	in->eof = true;
}

void ps_input_unmap(struct ps_input *in)
{
	if (in->map)
		munmap(in->map, in->map_len);
	in->map = NULL;
	in->buf = NULL;
}

/* Drop the mapped pages no record still in use lies in: those before the
 * input's position and before every queued record read from the mapping.
 * Dropping is advice about residency: a page touched again is read back
 * from the file, so a late reader of a record still sees its bytes. */
static void input_drop_behind(struct ps_reader *r)
{
	struct ps_input *in = &r->in;
	uint64_t low;

	/* the queue is scanned at most once per MAP_DROP_STEP bytes and once
	 * per 16 bytes read for each record it holds: a capture whose records
	 * all wait for the end (no FINISHED_ROUND) is not scanned again and
	 * again */
	if (!in->map || in->offset - in->checked < MAP_DROP_STEP ||
	    in->offset - in->checked < (uint64_t)r->queue.nr * 16)
		return;
	in->checked = in->offset;
	low = ps_queue_lowest_mapped(r, in->offset) & ~(in->page - 1);
	if (low <= in->dropped)
		return;
	(void)madvise(in->map + (in->dropped - in->map_offset), (size_t)(low - in->dropped),
	              MADV_DONTNEED);
	in->dropped = low;
}

/* Make at least `need` bytes available at in->buf + in->head. Returns the
 * number available (less than need only at end of input), or -errno. */
ssize_t ps_input_fill(struct ps_reader *r, size_t need)
{
	struct ps_input *in = &r->in;

	if (in->tail - in->head >= need || in->map)
		return (ssize_t)(in->tail - in->head);
	if (need > in->cap) {
		size_t cap = in->cap;
		while (cap < need)
			cap *= 2;
		uint8_t *nb = malloc(cap);
		if (!nb)
			return -ENOMEM;
		memcpy(nb, in->buf + in->head, in->tail - in->head);
		free(in->buf);
		in->buf = nb;
		in->cap = cap;
		in->tail -= in->head;
		in->head = 0;
	} else if (in->cap - in->head < need) {
		memmove(in->buf, in->buf + in->head, in->tail - in->head);
		in->tail -= in->head;
		in->head = 0;
	}
	while (!in->eof && in->tail - in->head < need) {
		ssize_t n = read(in->fd, in->buf + in->tail, in->cap - in->tail);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			in->eof = true;
		in->tail += (size_t)n;
	}
	return (ssize_t)(in->tail - in->head);
}

/* Skip n bytes of input (extra payloads), seeking when possible. */
static int input_skip(struct ps_reader *r, uint64_t n)
{
	struct ps_input *in = &r->in;
	size_t have = in->tail - in->head;

	if (n <= have) {
		ps_input_consume(in, (size_t)n);
		return 0;
	}
	if (in->map)
		return -ENODATA; /* the mapping holds the whole data section */
	n -= have;
	in->offset += have;
	in->head = in->tail = 0;
	if (in->seekable) {
		struct stat st;
		off_t at = lseek(in->fd, (off_t)n, SEEK_CUR);
		if (at < 0)
			return -errno;
		if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) && at > st.st_size)
			return -ENODATA;
		in->offset += n;
		return 0;
	}
	while (n) {
		ssize_t got = ps_input_fill(r, 1);
		if (got < 0)
			return (int)got;
		if (got == 0)
			return -ENODATA;
		size_t take = (uint64_t)got < n ? (size_t)got : (size_t)n;
		ps_input_consume(in, take);
		n -= take;
	}
	return 0;
}

/* ---- record framing ----------------------------------------------- */

/* A raw record, framed but not decoded. */
struct raw_record {
	const uint8_t *bytes;
	uint32_t type;
	uint16_t size;
	uint64_t offset;
	bool from_compressed;
	uint64_t payload; /* bytes after the record that belong to it */
};

static bool record_known(uint32_t type)
{
	return (type >= 1 && type <= PS_RECORD_CALLCHAIN_DEFERRED) ||
	       (type >= PS_RECORD_HEADER_ATTR && type < PS_RECORD_TYPE_MAX);
}

/* A damaged record: fail, or with force stop cleanly before it. */
static int damaged(struct ps_reader *r, int err, uint64_t offset)
{
	if (!r->opts.force)
		return err;
	ps_reader_log(r, PS_LOG_WARN, "%s; --force: skipping the rest of the input",
	              r->errmsg + strlen(ps_reader_input_name(r)) + 2);
	r->failed = false;
	r->stats.damaged = true;
	r->stats.damaged_offset = offset;
	r->done = true;
	return 0;
}

/* Next record from the decompressor, if it holds a whole one. */
static int next_decompressed(struct ps_reader *r, struct raw_record *rec)
{
	struct ps_decompressor *z = &r->zstd;
	size_t avail = z->tail - z->head;
	struct ps_cursor c;
	uint32_t type;
	uint16_t size;

	if (avail < 8)
		return 0;
	c = ps_cursor_make(z->buf + z->head, 8, r->swap);
	type = ps_cursor_u32(&c);
	ps_cursor_u16(&c);
	size = ps_cursor_u16(&c);
	if (size < 8)
		return ps_reader_fail_at(
		        r, -EINVAL, z->offset, type,
		        "record inside COMPRESSED: size %u smaller than its header", size);
	if (avail < size)
		return 0; /* the rest arrives with the next COMPRESSED record */
	if (type == PS_RECORD_HEADER_TRACING_DATA || type == PS_RECORD_AUXTRACE ||
	    type == PS_RECORD_COMPRESSED || type == PS_RECORD_COMPRESSED2)
		return ps_reader_fail_at(r, -EINVAL, z->offset, type,
		                         "record not allowed inside a COMPRESSED record");
	rec->bytes = z->buf + z->head;
	rec->type = type;
	rec->size = size;
	rec->offset = z->offset;
	rec->from_compressed = true;
	rec->payload = 0;
	z->head += size;
	return 1;
}

static int next_raw(struct ps_reader *r, struct raw_record *rec)
{
	struct ps_input *in = &r->in;
	struct ps_cursor c;
	uint64_t offset;
	ssize_t got;
	int err;

again:
	if (r->done)
		return 0;
	err = next_decompressed(r, rec);
	if (err)
		return err;
	/* a folder's file has had its turn once its COMPRESSED records'
	 * contents are read too */
	if (r->nr_streams > 1 && r->stream_read >= PS_DIR_TURN_BYTES)
		ps_dir_next_turn(r);

	/* the records framed before were queued or are done with */
	input_drop_behind(r);
	offset = in->offset;
	if (offset >= r->data_end)
		goto end;
	got = ps_input_fill(r, 8);
	if (got < 0)
		return ps_reader_fail_at(r, (int)got, offset, 0, "read error: %s",
		                         strerror((int)-got));
	if (got == 0 && r->is_pipe)
		goto end;
	if (got < 8 || (!r->is_pipe && r->data_end - offset < 8)) {
		err = ps_reader_fail_at(r, -EINVAL, offset, 0,
		                        "truncated record header (%zd bytes left)",
		                        got < 8 ? got : (ssize_t)(r->data_end - offset));
		return damaged(r, err, offset);
	}
	c = ps_cursor_make(in->buf + in->head, 8, r->swap);
	rec->type = ps_cursor_u32(&c);
	ps_cursor_u16(&c);
	rec->size = ps_cursor_u16(&c);
	rec->offset = offset;
	rec->from_compressed = false;
	rec->payload = 0;

	if (rec->size < 8) {
		err = ps_reader_fail_at(r, -EINVAL, offset, rec->type,
		                        "record size %u smaller than its 8-byte header", rec->size);
		return damaged(r, err, offset);
	}
	if (!record_known(rec->type)) {
		r->stats.nr_unknown_type++;
		err = ps_reader_fail_at(r, -EINVAL, offset, 0, "unknown record type %u (size %u)",
		                        rec->type, rec->size);
		return damaged(r, err, offset);
	}
	if (!r->is_pipe && rec->size > r->data_end - offset) {
		err = ps_reader_fail_at(
		        r, -EINVAL, offset, rec->type,
		        "record size %u runs past the end of the data section at %#" PRIx64,
		        rec->size, r->data_end);
		return damaged(r, err, offset);
	}
	got = ps_input_fill(r, rec->size);
	if (got < 0)
		return ps_reader_fail_at(r, (int)got, offset, rec->type, "read error: %s",
		                         strerror((int)-got));
	if ((size_t)got < rec->size) {
		err = ps_reader_fail_at(r, -EINVAL, offset, rec->type,
		                        "truncated: record of %u bytes, input ends after %zd",
		                        rec->size, got);
		return damaged(r, err, offset);
	}
	rec->bytes = in->buf + in->head;
	return 1;

end:
	if (r->zstd.tail > r->zstd.head) {
		/* perf record can stop with the tail of a record still in its
		 * compressor; perf drops that piece, and so do we, saying so */
		ps_reader_log(r, PS_LOG_WARN,
		              "offset 0x%" PRIx64
		              ": PERF_RECORD_COMPRESSED: the capture ends inside a "
		              "record (%zu bytes of it dropped)",
		              r->zstd.offset, r->zstd.tail - r->zstd.head);
		r->stats.nr_skipped++;
		r->zstd.head = r->zstd.tail;
	}
	if (r->nr_streams > 1) {
		/* the next file of the folder, if one is left */
		ps_dir_stream_done(r);
		goto again;
	}
	r->done = true;
	return 0;
}

/* Extra payload after a record that its size does not cover. */
static int payload_size(struct ps_reader *r, const struct raw_record *rec, uint64_t *out)
{
	struct ps_cursor c = ps_cursor_make(rec->bytes + 8, rec->size - 8u, r->swap);
	uint64_t n = 0;

	*out = 0;
	if (rec->type == PS_RECORD_HEADER_TRACING_DATA) {
		n = ps_cursor_u32(&c);
		n = (n + 7) & ~7ull; /* perf pads it to 8 */
	} else if (rec->type == PS_RECORD_AUXTRACE) {
		n = ps_cursor_u64(&c);
	} else {
		return 0;
	}
	if (!ps_cursor_ok(&c))
		return ps_reader_fail_at(r, -EINVAL, rec->offset, rec->type,
		                         "record of %u bytes too small for its payload size",
		                         rec->size);
	if (!r->is_pipe && n > r->data_end - rec->offset - rec->size)
		return ps_reader_fail_at(
		        r, -EINVAL, rec->offset, rec->type,
		        "payload of %" PRIu64 " bytes runs past the end of the data section", n);
	*out = n;
	return 0;
}

/* Frame one record from the input, handle what the reader itself needs
 * (attrs, features, tracing data, compression) and leave it in *rec.
 * The record's bytes stay valid until the next call. */
static int frame_next(struct ps_reader *r, struct raw_record *rec)
{
	int ret = next_raw(r, rec);
	int err;

	if (ret <= 0)
		return ret;
	if (rec->type < PS_RECORD_TYPE_MAX)
		r->stats.nr_records[rec->type]++;
	if (rec->from_compressed)
		return 1;

	err = payload_size(r, rec, &rec->payload);
	if (err)
		return damaged(r, err, rec->offset);
	r->stream_read += rec->size + rec->payload;

	if (rec->type == PS_RECORD_HEADER_TRACING_DATA) {
		/* the tracing blob follows the record; hand it over now */
		uint64_t n = rec->payload;
		if (n > PS_MAX_TRACING_DATA)
			return ps_reader_fail_at(r, -EINVAL, rec->offset, rec->type,
			                         "tracing data of %" PRIu64 " bytes (limit %u)", n,
			                         PS_MAX_TRACING_DATA);
		ssize_t got = ps_input_fill(r, rec->size + (size_t)n);
		if (got < 0 || (uint64_t)got < rec->size + n) {
			err = ps_reader_fail_at(
			        r, -EINVAL, rec->offset, rec->type,
			        "truncated: %" PRIu64 " bytes of tracing data expected", n);
			return damaged(r, err, rec->offset);
		}
		rec->bytes = r->in.buf + r->in.head;
		err = ps_tracing_parse(r, rec->bytes + rec->size, (size_t)n,
		                       rec->offset + rec->size);
		if (err)
			return damaged(r, err, rec->offset);
		ps_tracing_name_events(r);
		r->features.has_tracing_data = true;
		r->features.tracing_data_size = n;
		r->features.present[0] |= 1ull << PS_FEAT_TRACING_DATA;
		ps_input_consume(&r->in, rec->size + (size_t)n);
		return 1;
	}
	ps_input_consume(&r->in, rec->size);
	if (rec->payload) {
		err = input_skip(r, rec->payload);
		if (err) {
			err = ps_reader_fail_at(r, err, rec->offset, rec->type,
			                        "truncated: payload of %" PRIu64 " bytes",
			                        rec->payload);
			return damaged(r, err, rec->offset);
		}
	}
	return 1;
}

/* Decode into r->event. Returns 1, or 0 when --force skipped a damaged
 * record (counted and logged), or a negative errno. */
static int decode(struct ps_reader *r, const uint8_t *bytes, uint16_t size, uint64_t offset,
                  bool from_compressed, uint64_t payload)
{
	int err = ps_decode_record(r, bytes, size, offset, from_compressed, payload);
	if (!err)
		return 1;
	if (!r->opts.force || err == -ENOMEM)
		return err;
	ps_reader_log(r, PS_LOG_WARN, "%s; --force: record skipped",
	              r->errmsg + strlen(ps_reader_input_name(r)) + 2);
	r->failed = false;
	r->stats.nr_skipped++;
	if (!r->stats.damaged) {
		r->stats.damaged = true;
		r->stats.damaged_offset = offset;
	}
	return 0;
}

static int next_file_order(struct ps_reader *r, const struct ps_event **event)
{
	for (;;) {
		struct raw_record rec;
		int ret = frame_next(r, &rec);

		if (ret <= 0)
			return ret;
		r->event_stream = r->cur_stream;
		ret = decode(r, rec.bytes, rec.size, rec.offset, rec.from_compressed, rec.payload);
		if (ret < 0)
			return ret;
		if (ret > 0) {
			*event = &r->event;
			return 1;
		}
	}
}

static int deliver_queued(struct ps_reader *r, const struct ps_event **event)
{
	struct ps_queued q;

	while (ps_queue_pop(r, &q)) {
		const char *reading = r->input_name;
		int ret;

		/* its messages name the folder's file it came from */
		r->event_stream = q.stream;
		if (r->is_dir && q.stream < r->nr_streams)
			r->input_name = r->streams[q.stream].path;
		ret = decode(r, q.bytes, (uint16_t)q.size, q.offset, q.from_compressed, 0);
		r->input_name = reading;
		if (ret < 0)
			return ret;
		if (ret > 0) {
			*event = &r->event;
			return 1;
		}
	}
	return 0;
}

/* Decode and hand out a record at once (records perf does not queue). */
static int deliver_now(struct ps_reader *r, const struct raw_record *rec,
                       const struct ps_event **event)
{
	int ret;

	r->event_stream = r->cur_stream;
	ret = decode(r, rec->bytes, rec->size, rec->offset, rec->from_compressed, rec->payload);
	if (ret > 0)
		*event = &r->event;
	return ret;
}

static int next_time_order(struct ps_reader *r, const struct ps_event **event)
{
	for (;;) {
		struct raw_record rec;
		int ret;

		ps_queue_release(r);
		ret = deliver_queued(r, event);
		if (ret)
			return ret;
		if (r->queue.final)
			return 0;

		ret = frame_next(r, &rec);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			/* end of input: release everything */
			r->queue.final = true;
			r->queue.flushing = true;
			r->queue.flush_limit = UINT64_MAX;
			continue;
		}
		if (rec.type == PS_RECORD_COMPRESSED || rec.type == PS_RECORD_COMPRESSED2) {
			/* its contents are what perf script sees */
			ret = decode(r, rec.bytes, rec.size, rec.offset, false, 0);
			if (ret < 0)
				return ret;
			continue;
		}
		if (rec.type == PS_RECORD_FINISHED_ROUND) {
			/* perf flushes up to the previous round's high-water mark
			 * and only moves the mark when something was queued. The
			 * round itself is delivered first, as perf reports it when
			 * read, and the flushed records follow. */
			if (r->queue.nr) {
				r->queue.flushing = true;
				r->queue.flush_limit = r->queue.next_flush;
				r->queue.next_flush = r->queue.max_timestamp;
			}
		}
		if (rec.type >= PS_RECORD_HEADER_ATTR) {
			ret = deliver_now(r, &rec, event);
			if (ret)
				return ret;
			continue;
		}
		/* Without sample_id_all most records have no time: perf then
		 * gives up ordering a file and delivers everything as read (not
		 * in pipe mode, where it cannot know at the start). */
		bool untimed =
		        !r->is_pipe && r->nr_attrs && !(r->attrs[0].flags & PS_ATTR_SAMPLE_ID_ALL);
		uint64_t ts = untimed ? UINT64_MAX : ps_record_timestamp(r, rec.bytes, rec.size);
		if (ts == 0 || ts == UINT64_MAX) {
			/* no usable timestamp: perf delivers it at once */
			ret = deliver_now(r, &rec, event);
			if (ret)
				return ret;
			continue;
		}
		ret = ps_queue_push(r, rec.bytes, rec.size, rec.offset, rec.from_compressed, ts);
		if (ret < 0)
			return ret;
	}
}

int ps_reader_next(struct ps_reader *r, const struct ps_event **event)
{
	int ret;

	*event = NULL;
	if (r->failed)
		return -EINVAL;
	if (r->opts.order == PS_ORDER_TIME)
		ret = next_time_order(r, event);
	else
		ret = next_file_order(r, event);
	if (ret == 0 && !r->failed)
		*event = NULL;
	return ret;
}
