/* Jitdumps (jit-PID.dump, perf's binary format that CPython 3.13 writes for
 * -X perf_jit): code loads with their names and the .eh_frame of the
 * unwinding-info record before each, read through the bounds-checked cursor. */
#include "python/python_priv.h"

#include "base/array.h"
#include "base/cursor.h"
#include "base/message.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* tools/perf/Documentation/jitdump-specification.txt */
#define JITDUMP_MAGIC 0x4A695444u /* "JiTD" */
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au /* written on the other endianness */
#define JITDUMP_VERSION 1 /* perf reads nothing newer */
#define HEADER_SIZE 40
#define HEADER_MAX 4096 /* a header claiming more is damaged */
#define RECORD_HEADER_SIZE 16 /* u32 id, u32 total_size, u64 timestamp */
#define LOAD_FIXED 40 /* pid, tid, vma, code_addr, code_size, code_index */
#define UNWIND_FIXED 24 /* unwind_data_size, eh_frame_hdr_size, mapped_size */
#define BODY_READ_MAX ((size_t)1 << 20) /* more of a record is skipped unread */
#define WINDOW_SIZE (BODY_READ_MAX + ((size_t)64 << 10))
#define MOVES_MAX ((size_t)16 << 20)
/* Resynchronising after a damaged record header: the next offset, at most
 * RESYNC_SCAN bytes on, where RESYNC_CHAIN records of a known type and of
 * at most RESYNC_RECORD_MAX bytes follow one another (or the records that
 * follow reach the end of the file exactly). CPython's records are far
 * smaller; the scan reads one window. */
#define RESYNC_SCAN ((size_t)64 << 10)
#define RESYNC_RECORD_MAX ((size_t)64 << 10)
#define RESYNC_CHAIN 4

enum jit_record_type {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

/* A window on the file: records are read in order, a megabyte at a time,
 * and the parts of large records nobody needs are jumped over. */
struct window {
	int fd;
	uint8_t *buf;
	uint64_t base; /* file offset of buf[0] */
	size_t len;
	uint64_t file_size; /* at open: a file still being written is read up to here */
};

struct pending_move {
	uint64_t offset, order;
	uint64_t code_index, start, size;
};

struct dump_reader {
	struct ps_jit_table *table;
	const char *path;
	struct window window;
	bool swap;
	uint32_t pending_unwind; /* for the next JIT_CODE_LOAD */
	struct pending_move *moves;
	size_t nr_moves, cap_moves, max_moves;
};

/* The bytes [offset, offset + n) (n <= WINDOW_SIZE) or NULL: past the end,
 * or *err set on a read error. */
static const uint8_t *window_get(struct window *w, uint64_t offset, size_t n, int *err)
{
	size_t want, got = 0;

	if (offset >= w->base && offset - w->base <= w->len && n <= w->len - (offset - w->base))
		return w->buf + (offset - w->base);
	if (offset > w->file_size || n > w->file_size - offset)
		return NULL;
	want = w->file_size - offset < WINDOW_SIZE ? (size_t)(w->file_size - offset) : WINDOW_SIZE;
	while (got < want) {
		ssize_t r = pread(w->fd, w->buf + got, want - got, (off_t)(offset + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = -errno;
			break;
		}
		if (r == 0)
			break; /* truncated under us */
		got += (size_t)r;
	}
	w->base = offset;
	w->len = got;
	if (*err || n > got)
		return NULL;
	return w->buf;
}

static void damaged(struct dump_reader *reader, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void damaged(struct dump_reader *reader, uint64_t offset, const char *fmt, ...)
{
	char what[PS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	ps_vformat(what, sizeof(what), NULL, fmt, ap);
	va_end(ap);
	ps_jit_table_counters(reader->table)->damaged++;
	ps_jit_table_note(reader->table, "%s: offset 0x%" PRIx64 ": %s", reader->path, offset,
	                  what);
}

static int add_failed(struct dump_reader *reader, int err)
{
	if (err == -ENOSPC) {
		ps_jit_table_counters(reader->table)->over_limit++;
		return 0;
	}
	return err;
}

static int code_load(struct dump_reader *reader, struct ps_cursor *body, uint64_t body_size,
                     uint64_t offset, uint64_t order)
{
	uint32_t unwind = reader->pending_unwind;
	uint64_t code_addr, code_size, code_index;
	const char *name;
	size_t name_len;

	reader->pending_unwind = PS_JIT_NO_UNWIND; /* it belongs to this load, good or bad */
	ps_cursor_u32(body); /* pid: the file is per process already */
	ps_cursor_u32(body); /* tid */
	ps_cursor_u64(body); /* vma: perf uses code_addr */
	code_addr = ps_cursor_u64(body);
	code_size = ps_cursor_u64(body);
	code_index = ps_cursor_u64(body);
	if (!ps_cursor_ok(body)) {
		damaged(reader, offset, "JIT_CODE_LOAD shorter than its fixed fields");
		return 0;
	}
	if (code_size >= body_size - LOAD_FIXED) {
		damaged(reader, offset,
		        "JIT_CODE_LOAD code_size %" PRIu64 " larger than the record (%" PRIu64
		        " bytes)",
		        code_size, body_size + RECORD_HEADER_SIZE);
		return 0;
	}
	/* the name lies between the fixed fields and the code */
	name = ps_cursor_string(body, (size_t)(body_size - LOAD_FIXED - code_size), false);
	if (!name) {
		damaged(reader, offset, "JIT_CODE_LOAD name without NUL");
		return 0;
	}
	name_len = strlen(name);
	if (name_len == 0) {
		damaged(reader, offset, "JIT_CODE_LOAD with an empty name");
		return 0;
	}
	if (code_addr + code_size < code_addr) {
		damaged(reader, offset, "JIT_CODE_LOAD code_addr + code_size overflows");
		return 0;
	}
	if (code_size == 0)
		return 0; /* allowed by the spec; no address can hit it */
	return add_failed(reader, ps_jit_table_add(reader->table, code_addr, code_size, name,
	                                           name_len, unwind, code_index, order));
}

static int code_move(struct dump_reader *reader, struct ps_cursor *body, uint64_t offset,
                     uint64_t order)
{
	struct pending_move move = { .offset = offset, .order = order };

	ps_cursor_u32(body); /* pid */
	ps_cursor_u32(body); /* tid */
	ps_cursor_u64(body); /* vma */
	ps_cursor_u64(body); /* old_code_addr */
	move.start = ps_cursor_u64(body);
	move.size = ps_cursor_u64(body);
	move.code_index = ps_cursor_u64(body);
	if (!ps_cursor_ok(body)) {
		damaged(reader, offset, "JIT_CODE_MOVE shorter than its fixed fields");
		return 0;
	}
	if (move.size == 0 || move.start + move.size < move.start) {
		damaged(reader, offset, "JIT_CODE_MOVE with a bad code range");
		return 0;
	}
	/* applied once every load is known */
	if (reader->nr_moves >= reader->max_moves)
		return add_failed(reader, -ENOSPC);
	if (!ps_array_reserve((void **)&reader->moves, &reader->cap_moves, reader->nr_moves + 1,
	                      sizeof(*reader->moves), 16))
		return -ENOMEM;
	reader->moves[reader->nr_moves++] = move;
	return 0;
}

/* Validated and ignored: trampolines carry no line numbers. */
static void debug_info(struct dump_reader *reader, struct ps_cursor *body, bool whole,
                       uint64_t offset)
{
	uint64_t nr_entries;

	ps_cursor_u64(body); /* code_addr */
	nr_entries = ps_cursor_u64(body);
	/* each entry takes at least 17 bytes, so a damaged count fails fast */
	for (uint64_t i = 0; whole && ps_cursor_ok(body) && i < nr_entries; i++) {
		ps_cursor_u64(body); /* addr */
		ps_cursor_u32(body); /* line */
		ps_cursor_u32(body); /* discriminator */
		ps_cursor_string(body, ps_cursor_left(body), false);
	}
	if (!ps_cursor_ok(body))
		damaged(reader, offset, "JIT_CODE_DEBUG_INFO entries pass the end of the record");
}

static int unwinding_info(struct dump_reader *reader, struct ps_cursor *body, uint64_t body_size,
                          uint64_t offset)
{
	uint64_t data_size, hdr_size;
	const uint8_t *data;
	int64_t id;

	reader->pending_unwind = PS_JIT_NO_UNWIND; /* a newer one replaces it */
	data_size = ps_cursor_u64(body);
	hdr_size = ps_cursor_u64(body);
	ps_cursor_u64(body); /* mapped_size: how much the process mapped */
	if (!ps_cursor_ok(body)) {
		damaged(reader, offset, "JIT_CODE_UNWINDING_INFO shorter than its fixed fields");
		return 0;
	}
	if (data_size > body_size - UNWIND_FIXED) {
		damaged(reader, offset,
		        "JIT_CODE_UNWINDING_INFO unwind_data_size %" PRIu64
		        " larger than the record (%" PRIu64 " bytes)",
		        data_size, body_size + RECORD_HEADER_SIZE);
		return 0;
	}
	if (hdr_size > data_size) {
		damaged(reader, offset,
		        "JIT_CODE_UNWINDING_INFO eh_frame_hdr_size %" PRIu64
		        " larger than unwind_data_size %" PRIu64,
		        hdr_size, data_size);
		return 0;
	}
	if (data_size == hdr_size)
		return 0; /* no .eh_frame */
	/* .eh_frame, then .eh_frame_hdr, then padding (perf's genelf) */
	data = data_size <= BODY_READ_MAX ? ps_cursor_take(body, (size_t)data_size) : NULL;
	if (!data) {
		ps_jit_table_counters(reader->table)->unwind_dropped++; /* past BODY_READ_MAX */
		return 0;
	}
	id = ps_jit_table_add_unwind(reader->table, data, (size_t)(data_size - hdr_size),
	                             (size_t)hdr_size);
	if (id == -ENOSPC) {
		ps_jit_table_counters(reader->table)->unwind_dropped++;
		return 0;
	}
	if (id < 0)
		return (int)id;
	reader->pending_unwind = (uint32_t)id;
	return 0;
}

/* The least total_size of a record of a type CPython writes (or perf
 * defines); 0 for an unknown type. */
static uint32_t least_record_size(uint32_t id)
{
	switch (id) {
	case JIT_CODE_LOAD:
		return RECORD_HEADER_SIZE + LOAD_FIXED + 2; /* a name of one byte */
	case JIT_CODE_MOVE:
		return RECORD_HEADER_SIZE + 48;
	case JIT_CODE_DEBUG_INFO:
		return RECORD_HEADER_SIZE + 16;
	case JIT_CODE_CLOSE:
		return RECORD_HEADER_SIZE;
	case JIT_CODE_UNWINDING_INFO:
		return RECORD_HEADER_SIZE + UNWIND_FIXED;
	default:
		return 0;
	}
}

/* Whether RESYNC_CHAIN plausible records start at pos of bytes[0, len),
 * which ends at the end of the file when at_end. */
static bool records_follow(const struct dump_reader *reader, const uint8_t *bytes, size_t len,
                           size_t pos, bool at_end)
{
	for (int n = 0; n < RESYNC_CHAIN; n++) {
		struct ps_cursor cursor;
		uint32_t id, total_size, least;

		if (pos == len)
			return at_end;
		cursor = ps_cursor_make(bytes + pos, len - pos, reader->swap);
		id = ps_cursor_u32(&cursor);
		total_size = ps_cursor_u32(&cursor);
		least = least_record_size(id);
		if (!ps_cursor_ok(&cursor) || !least || total_size < least ||
		    total_size > RESYNC_RECORD_MAX || total_size > len - pos)
			return false;
		pos += total_size;
	}
	return true;
}

/* Where reading goes on after a damaged record header at offset at: the
 * first offset after it where records follow one another again, or the
 * end of the file. A forked CPython child shares its parent's jitdump
 * (the same open file) and, when it closes it, writes the copy of the
 * parent's unwritten buffer it was forked with: the file then holds part
 * of a record spliced into another, and whole records after it. */
static uint64_t resync(struct dump_reader *reader, uint64_t at, int *err)
{
	struct window *w = &reader->window;
	uint64_t from = at + 1, left = w->file_size - from;
	size_t len = left < RESYNC_SCAN + RESYNC_CHAIN * RESYNC_RECORD_MAX
	                     ? (size_t)left
	                     : RESYNC_SCAN + RESYNC_CHAIN * RESYNC_RECORD_MAX;
	const uint8_t *bytes = len ? window_get(w, from, len, err) : NULL;

	if (!bytes)
		return w->file_size;
	for (size_t pos = 0; pos < len && pos <= RESYNC_SCAN; pos++)
		if (records_follow(reader, bytes, len, pos, len == left))
			return from + pos;
	return w->file_size;
}

/* The record at *offset; advances *offset past it. 1: read one, 0: the end
 * (or the rest dropped), <0: an error. */
static int next_record(struct dump_reader *reader, uint64_t *offset, uint64_t order)
{
	struct window *w = &reader->window;
	uint64_t at = *offset, left = w->file_size - at, body_size;
	struct ps_cursor cursor, body;
	const uint8_t *bytes;
	uint32_t id, total_size;
	size_t header_read, body_read;
	int err = 0;

	if (left == 0)
		return 0;
	header_read = left < RECORD_HEADER_SIZE ? (size_t)left : RECORD_HEADER_SIZE;
	bytes = window_get(w, at, header_read, &err);
	if (err)
		return err;
	cursor = ps_cursor_make(bytes, bytes ? header_read : 0, reader->swap);
	id = ps_cursor_u32(&cursor);
	total_size = ps_cursor_u32(&cursor);
	ps_cursor_u64(&cursor); /* timestamp: names hold for the whole run */
	if (!ps_cursor_ok(&cursor) || total_size < RECORD_HEADER_SIZE || total_size > left) {
		/* nothing to skip by: on where records follow again */
		uint64_t next = ps_cursor_ok(&cursor) ? resync(reader, at, &err) : w->file_size;

		if (err)
			return err;
		ps_jit_table_counters(reader->table)->bytes_dropped += next - at;
		ps_jit_table_counters(reader->table)->ends_cut |= next == w->file_size;
		damaged(reader, at,
		        !ps_cursor_ok(&cursor) ? "record header cut by the end of the file"
		        : total_size < RECORD_HEADER_SIZE
		                ? "record total_size smaller than its header"
		                : "record passes the end of the file");
		*offset = next;
		return next < w->file_size ? 1 : 0;
	}
	*offset = at + total_size;
	body_size = total_size - RECORD_HEADER_SIZE;
	body_read = body_size < BODY_READ_MAX ? (size_t)body_size : BODY_READ_MAX;
	bytes = window_get(w, at + RECORD_HEADER_SIZE, body_read, &err);
	if (err)
		return err;
	if (!bytes && body_read) {
		/* the file shrank under us */
		ps_jit_table_counters(reader->table)->bytes_dropped += left;
		ps_jit_table_counters(reader->table)->ends_cut = true;
		damaged(reader, at, "record passes the end of the file");
		return 0;
	}
	body = ps_cursor_make(bytes, body_read, reader->swap);
	switch (id) {
	case JIT_CODE_LOAD:
		err = code_load(reader, &body, body_size, at, order);
		break;
	case JIT_CODE_MOVE:
		err = code_move(reader, &body, at, order);
		break;
	case JIT_CODE_DEBUG_INFO:
		debug_info(reader, &body, body_read == body_size, at);
		break;
	case JIT_CODE_CLOSE:
		break; /* perf reads on, and so do we */
	case JIT_CODE_UNWINDING_INFO:
		err = unwinding_info(reader, &body, body_size, at);
		break;
	default:
		ps_jit_table_counters(reader->table)->unknown++;
		break;
	}
	return err ? err : 1;
}

static int read_header(struct dump_reader *reader, uint64_t *records_offset)
{
	struct window *w = &reader->window;
	struct ps_cursor cursor;
	const uint8_t *bytes;
	uint32_t magic, version, total_size;
	int err = 0;

	bytes = window_get(w, 0, HEADER_SIZE, &err);
	if (err)
		return ps_jit_table_fail(reader->table, err, "%s: offset 0x0: read: %s",
		                         reader->path, strerror(-err));
	if (!bytes)
		return ps_jit_table_fail(reader->table, -EINVAL,
		                         "%s: offset 0x0: header cut by the end of the file "
		                         "(%" PRIu64 " of %d bytes)",
		                         reader->path, w->file_size, HEADER_SIZE);
	memcpy(&magic, bytes, sizeof(magic));
	if (magic != JITDUMP_MAGIC && magic != JITDUMP_MAGIC_SWAPPED)
		return ps_jit_table_fail(reader->table, -EINVAL,
		                         "%s: offset 0x0: not a jitdump (magic 0x%08x)",
		                         reader->path, magic);
	reader->swap = magic == JITDUMP_MAGIC_SWAPPED;
	cursor = ps_cursor_make(bytes + 4, HEADER_SIZE - 4, reader->swap);
	version = ps_cursor_u32(&cursor);
	total_size = ps_cursor_u32(&cursor);
	/* elf_mach, pad1, pid, timestamp and flags do not change any name */
	if (version > JITDUMP_VERSION)
		return ps_jit_table_fail(reader->table, -ENOTSUP,
		                         "%s: offset 0x4: jitdump version %u (perf reads %d)",
		                         reader->path, version, JITDUMP_VERSION);
	if (total_size < HEADER_SIZE || total_size > HEADER_MAX || total_size > w->file_size)
		return ps_jit_table_fail(reader->table, -EINVAL,
		                         "%s: offset 0x8: bad header total_size %u", reader->path,
		                         total_size);
	*records_offset = total_size;
	return 0;
}

static int apply_moves(struct dump_reader *reader)
{
	for (size_t i = 0; i < reader->nr_moves; i++) {
		const struct pending_move *move = &reader->moves[i];
		int err = ps_jit_table_add_moved(reader->table, move->code_index, move->start,
		                                 move->size, move->order);

		if (err == -ENOENT) {
			damaged(reader, move->offset,
			        "JIT_CODE_MOVE of code_index %" PRIu64 ", never loaded",
			        move->code_index);
			continue;
		}
		err = add_failed(reader, err);
		if (err)
			return err;
	}
	return 0;
}

static int read_dump(struct dump_reader *reader)
{
	uint64_t offset = 0, order = 0;
	int ret;

	ret = read_header(reader, &offset);
	if (ret)
		return ret;
	while ((ret = next_record(reader, &offset, ++order)) > 0)
		;
	if (ret == 0)
		ret = apply_moves(reader);
	if (ret == -ENOMEM)
		return ps_jit_table_fail(reader->table, ret, "%s: out of memory", reader->path);
	if (ret)
		return ps_jit_table_fail(reader->table, ret, "%s: offset 0x%" PRIx64 ": read: %s",
		                         reader->path, offset, strerror(-ret));
	return 0;
}

int ps_jitdump_read(const char *path, const struct ps_jit_limits *limits, struct ps_jit_table **out)
{
	return ps_jitdump_read_file(path, path, limits, out);
}

int ps_jitdump_read_file(const char *path, const char *file, const struct ps_jit_limits *limits,
                         struct ps_jit_table **out)
{
	struct dump_reader reader = {
		.path = path,
		.pending_unwind = PS_JIT_NO_UNWIND,
		.max_moves = limits && limits->max_entries ? limits->max_entries : MOVES_MAX,
	};
	struct stat st;
	int err;

	reader.table = ps_jit_table_new(PS_JIT_SOURCE_DUMP, path, limits);
	*out = reader.table;
	if (!reader.table)
		return -ENOMEM;
	/* O_NONBLOCK: a FIFO put in the file's place cannot block us */
	reader.window.fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (reader.window.fd < 0)
		return ps_jit_table_fail(reader.table, -errno, "%s: %s", path, strerror(errno));
	if (fstat(reader.window.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(reader.window.fd);
		return ps_jit_table_fail(reader.table, -EINVAL, "%s: not a regular file", path);
	}
	reader.window.file_size = (uint64_t)st.st_size;
	reader.window.buf = malloc(WINDOW_SIZE);
	err = reader.window.buf
	              ? read_dump(&reader)
	              : ps_jit_table_fail(reader.table, -ENOMEM, "%s: out of memory", path);
	close(reader.window.fd);
	free(reader.window.buf);
	free(reader.moves);
	if (err)
		return err;
	ps_jit_table_finish(reader.table);
	return 0;
}
