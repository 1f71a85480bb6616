/* Private to src/reader: the reader's state and the functions its files
 * share (the unit tests in tests/unit/reader reach in here too). Other
 * modules use include/pystitch/pystitch.h and reader/reader.h.
 */
#ifndef PS_READER_READER_PRIV_H
#define PS_READER_READER_PRIV_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pystitch/pystitch.h"
#include "archive/archive.h"
#include "reader/reader.h"
#include "base/arena.h"
#include "base/cursor.h"
#include "base/message.h"

struct ZSTD_DCtx_s;

/* id -> attr index, open addressing */
struct ps_id_map {
	uint64_t *ids;
	uint32_t *attr_index;
	size_t cap; /* power of two or 0 */
	size_t used;
};

/* A growable array of host-order values that decoding reuses from record
 * to record, so steady-state decoding allocates nothing. */
struct ps_scratch {
	void *data;
	size_t cap; /* bytes */
};

/* Buffered input over a descriptor, or the data section of a regular
 * file mapped read-only (stream.c, ps_input_map): then buf[head, tail)
 * is the rest of the data section, records are used where they lie
 * instead of being copied twice (read(2) into the buffer, then into the
 * ordering queue), and the pages already read are dropped from the
 * mapping as the reading goes (the file's pages stay in the page cache,
 * but not in the process's resident memory). */
struct ps_input {
	int fd;
	bool seekable;
	uint8_t *buf;
	size_t cap;
	size_t head, tail; /* valid bytes are buf[head, tail) */
	uint64_t offset; /* input offset of buf[head] */
	bool eof;
	uint8_t *map; /* the mapping (page aligned), or NULL */
	size_t map_len;
	uint64_t map_offset; /* file offset of map[0] */
	uint64_t dropped; /* file offset below which map's pages were dropped */
	uint64_t checked; /* input offset where the queue was last scanned */
	uint64_t page; /* the page size */
};

/* One queued record for timestamp ordering. */
struct ps_queued {
	uint64_t timestamp;
	uint64_t seq;
	uint64_t offset;
	bool from_compressed;
	bool mapped; /* bytes lie in the input's mapping: not a queue copy */
	uint16_t stream; /* the folder's file it was read from */
	uint32_t size;
	uint8_t *bytes;
};

struct ps_order_queue {
	struct ps_queued *heap;
	size_t nr, cap;
	uint64_t seq;
	uint64_t bytes; /* record bytes held */
	uint64_t next_flush;
	uint64_t max_timestamp;
	uint64_t last_delivered;
	uint64_t flush_limit; /* deliver while top <= this */
	bool flushing;
	bool final;
	/* recycled record buffers, by power-of-two size class */
	uint8_t *free_lists[18];
	/* the record being delivered, returned to a free list on the next call */
	uint8_t *in_flight;
	uint32_t in_flight_size;
	bool in_flight_mapped;
	uint64_t in_flight_offset;
};

struct ps_decompressor {
	struct ZSTD_DCtx_s *dctx;
	uint8_t *buf; /* decompressed bytes not yet consumed */
	size_t cap, head, tail;
	uint64_t offset; /* offset of the COMPRESSED record they came from */
};

/* One file of a capture perf record --threads wrote as a folder, while
 * another is being read (dir_streams.c): the state the reader's input,
 * decompressor and data end have while it is read. */
struct ps_dir_stream {
	char *path;
	struct ps_input in;
	struct ps_decompressor zstd;
	uint64_t data_end;
	bool done;
};

struct ps_reader {
	char *path;
	/* the input was an archive: its unpacked files, perf.data among them */
	struct ps_archive *archive;
	struct ps_reader_opts opts;
	char errmsg[PS_MSG_MAX];
	bool failed;
	bool done;

	struct ps_input in;
	bool own_fd;
	bool is_pipe;
	bool swap;
	/* a folder (perf record --threads, --kcore): in is its header file
	 * "data"; with DIR_FORMAT version 1 the files data.N beside it are
	 * read too, each in turn (dir_streams.c). streams[cur_stream] is
	 * the one in `in`, zstd and data_end now; the others keep theirs. */
	bool is_dir;
	struct ps_dir_stream *streams;
	size_t nr_streams, cur_stream;
	uint64_t stream_read; /* bytes read from the current one in its turn */
	size_t event_stream; /* the file of the record delivered last */
	/* the file records now come from, for messages (NULL: path) */
	const char *input_name;

	/* file header */
	uint64_t header_size;
	uint64_t attr_size;
	uint64_t attrs_offset, attrs_size;
	uint64_t data_offset, data_size;
	uint64_t data_end; /* UINT64_MAX in pipe mode */

	struct ps_attr *attrs;
	/* per attr: named by a record or feature, not perf's fallback name
	 * (evsel->name set): EVENT_DESC and tracing data name only the
	 * others */
	bool *attr_named;
	size_t nr_attrs, cap_attrs;
	struct ps_id_map id_map;
	bool attrs_dirty; /* positions must be recomputed */
	size_t common_id_pos, common_is_pos; /* from the first attr */

	struct ps_features features;
	struct ps_arena arena; /* strings and arrays owned by the reader */
	struct ps_build_id *build_ids;
	size_t cap_build_ids;
	void *tep; /* struct tep_handle * */

	struct ps_decompressor zstd;
	struct ps_order_queue queue;

	/* the event being delivered and the arrays its fields point into */
	struct ps_event event;
	struct ps_scratch scratch_callchain, scratch_branch, scratch_regs_user, scratch_regs_intr,
	        scratch_read, scratch_misc, scratch_record;

	struct ps_reader_stats stats;
	bool warned_unknown;
};

/* messages.c */
int ps_reader_fail(struct ps_reader *r, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int ps_reader_fail_at(struct ps_reader *r, int err, uint64_t offset, uint32_t type, const char *fmt,
                      ...) __attribute__((format(printf, 5, 6)));
/* Turn the failure just recorded into a warning ("MESSAGE; consequence")
 * and go on as if nothing had failed: for damage perf reads past. */
void ps_reader_warn_failure(struct ps_reader *r, const char *consequence);
void ps_reader_log(struct ps_reader *r, enum ps_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void *ps_scratch_get(struct ps_scratch *s, size_t bytes);
void ps_scratch_free(struct ps_scratch *s);

/* Read nr groups of `width` u64 values that follow a count in a record (a
 * callchain, namespace pairs, a register set) into scratch, in host order.
 * Returns 0 with *out set; -EINVAL, with the cursor failed but not moved,
 * when the cursor had failed already or the values run past its end; or
 * -ENOMEM. Inline because the sample callchain goes through it: it copies
 * nothing more than the plain reads did and allocates only to grow. */
static inline int ps_scratch_read_u64s(struct ps_scratch *s, struct ps_cursor *c, uint64_t nr,
                                       size_t width, const uint64_t **out)
{
	uint64_t *values;

	if (!ps_cursor_ok(c) || nr > ps_cursor_left(c) / (8 * width)) {
		c->failed = true;
		return -EINVAL;
	}
	values = ps_scratch_get(s, (size_t)(nr ? nr : 1) * 8 * width);
	if (!values)
		return -ENOMEM;
	ps_cursor_u64_array(c, values, (size_t)nr * width);
	*out = values;
	return 0;
}

/* stream.c: buffered input and record delivery (ps_reader_next) */
ssize_t ps_input_fill(struct ps_reader *r, size_t need);
void ps_input_map(struct ps_reader *r, uint64_t file_size);
/* Maps [data_offset, data_end) of in's file (file_size bytes) as
 * ps_input_map() does. */
void ps_input_map_range(struct ps_input *in, uint64_t data_offset, uint64_t data_end,
                        uint64_t file_size);

/* an input's read buffer, and the largest record (its size is 16 bits) */
#define PS_INPUT_BUFFER (1u << 20)
#define PS_MAX_RECORD 65536

/* The read buffer of a regular file of file_size bytes: a small file gets
 * a small one (it grows on demand), so that the many small inputs of tests
 * and fuzzing need not each fault in a megabyte. */
static inline size_t ps_input_buffer_size(uint64_t file_size)
{
	if (file_size >= PS_INPUT_BUFFER)
		return PS_INPUT_BUFFER;
	return file_size < PS_MAX_RECORD ? PS_MAX_RECORD : (size_t)file_size;
}

/* dir_streams.c */
/* perf's READER_MAX_SIZE: bytes read from one file of a folder before
 * the next gets its turn */
#define PS_DIR_TURN_BYTES (2u << 20)
/* The name records are read from now, for messages. */
static inline const char *ps_reader_input_name(const struct ps_reader *r)
{
	return r->input_name ? r->input_name : r->path ? r->path : "(input)";
}
/* Opens path (a folder) as perf does: its header file "data" becomes the
 * input. Returns 0 or a negative errno with the reader failed. */
int ps_dir_open(struct ps_reader *r, const char *path);
/* The same for an archived folder: the header file PATH/data is read at
 * local, its unpacked copy. */
int ps_dir_open_at(struct ps_reader *r, const char *path, const char *local);
/* After the header: with DIR_FORMAT version 1, opens the data.N files
 * perf reads (readdir's order, regular and not empty; an archived
 * folder's, in the archive's order). */
int ps_dir_open_streams(struct ps_reader *r);
/* The current file is read to its end: the next one that is not gets the
 * turn (r->done when none). */
void ps_dir_stream_done(struct ps_reader *r);
/* The current file's turn is over (perf reads 2 MB from each in turn):
 * the next one that is not done gets it. */
void ps_dir_next_turn(struct ps_reader *r);
void ps_dir_close(struct ps_reader *r);
/* compress.c: frees a decompressor's state (the reader's or a waiting
 * file's) */
void ps_decompressor_free(struct ps_decompressor *z);
void ps_input_unmap(struct ps_input *in);

static inline void ps_input_consume(struct ps_input *in, size_t n)
{
	in->head += n;
	in->offset += n;
}

/* attrs.c */
int ps_attr_parse(struct ps_reader *r, const uint8_t *data, size_t size, uint64_t offset,
                  uint32_t record_type, struct ps_attr *out, size_t *consumed);
int ps_attrs_add(struct ps_reader *r, const struct ps_attr *attr, const uint64_t *ids,
                 size_t nr_ids, uint64_t offset);
int ps_attrs_finish(struct ps_reader *r, uint64_t offset);
const struct ps_attr *ps_attrs_find_id(const struct ps_reader *r, uint64_t id);
/* EVENT_UPDATE's name: replaces any other */
void ps_attrs_set_name(struct ps_reader *r, struct ps_attr *attr, const char *name);
/* EVENT_DESC's and the tracing data's: only for an attr not yet named */
void ps_attrs_name_unnamed(struct ps_reader *r, struct ps_attr *attr, const char *name);
/* A HEADER_ATTR's attr, just added: the name perf script may keep */
void ps_attrs_pipe_check(struct ps_reader *r, struct ps_attr *attr);
void ps_attrs_free(struct ps_reader *r);
const struct ps_attr *ps_attr_for_sample(const struct ps_reader *r, const uint8_t *raw,
                                         size_t size);
const struct ps_attr *ps_attr_for_trailer(const struct ps_reader *r, const uint8_t *raw,
                                          size_t size);

/* features.c */
int ps_features_read_file(struct ps_reader *r);
int ps_feature_decode(struct ps_reader *r, unsigned bit, const uint8_t *data, size_t size,
                      uint64_t offset);
void ps_features_free(struct ps_reader *r);

/* tracing.c */
int ps_tracing_parse(struct ps_reader *r, const uint8_t *data, size_t size, uint64_t offset);
void ps_tracing_free(struct ps_reader *r);
/* evlist__prepare_tracepoint_events(): tracepoint attrs not yet named
 * take "system:name" of the tracing data's event with their config as
 * id. Pipe mode: at the tracing data; file mode: after the features. */
void ps_tracing_name_events(struct ps_reader *r);

/* sample.c */
int ps_sample_parse(struct ps_reader *r, const struct ps_attr *attr, const uint8_t *raw,
                    size_t size, uint64_t offset, struct ps_sample *out);
int ps_sample_id_parse(struct ps_reader *r, const struct ps_attr *attr, const uint8_t *raw,
                       size_t size, uint64_t offset, uint32_t type, struct ps_sample_id *out);
uint64_t ps_record_timestamp(const struct ps_reader *r, const uint8_t *raw, size_t size);
int ps_read_values_parse(struct ps_reader *r, struct ps_cursor *c, uint64_t read_format,
                         struct ps_read_data *out);

/* decode.c: fills r->event from one record */
int ps_decode_record(struct ps_reader *r, const uint8_t *raw, size_t size, uint64_t offset,
                     bool from_compressed, uint64_t payload_size);

/* compress.c */
int ps_decompress_feed(struct ps_reader *r, const uint8_t *data, size_t size, uint64_t offset);
void ps_decompress_free(struct ps_reader *r);

/* order.c */
int ps_queue_push(struct ps_reader *r, const uint8_t *raw, size_t size, uint64_t offset,
                  bool from_compressed, uint64_t timestamp);
bool ps_queue_pop(struct ps_reader *r, struct ps_queued *out);
void ps_queue_release(struct ps_reader *r);
uint64_t ps_queue_lowest_mapped(const struct ps_reader *r, uint64_t low);
void ps_queue_free(struct ps_reader *r);

#endif /* PS_READER_READER_PRIV_H */
