/* The side file pystitch_perf writes next to its perf map (perf-PID.pylines,
 * format in python/pystitch_perf.h): every code object the profiled program
 * ran, with its bytecode's address range, its line table and first line,
 * its name, the trampoline that ran it when known, and when it was seen
 * and freed (CLOCK_MONOTONIC); on a free-threaded CPython, the copies of
 * its bytecode other threads ran, each read as a code object of its own
 * with the copy's range. Read whole (up to a cap), checked record by
 * record through a cursor: a damaged record ends the reading there, with
 * what came before kept; then indexed by bytecode address, by trampoline
 * and by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/cursor.h"
#include "base/hash.h"
#include "base/message.h"
#include "python/python_priv.h"

#define MAGIC "PYSTLINE"
#define HEADER_SIZE 32
#define RECORD_HEADER 16
#define CODE_FIXED 40 /* the fields of a code record after its header */
#define DEFAULT_MAX_BYTES (1024ull << 20)

enum record_type {
	RECORD_CODE = 1,
	RECORD_TRAMPOLINE = 2,
	RECORD_FREE = 3,
	RECORD_COPY = 4,
};

struct named {
	uint64_t hash;
	uint32_t code;
};

/* A code object in the order of its bytecode's start. */
struct started {
	uint64_t bytecode, created;
	uint32_t code;
};

struct ps_py_codes {
	char *path;
	uint8_t *data; /* the file; tables and names point into it */
	size_t size;
	uint32_t python_hex;
	bool own_trampolines;
	struct ps_py_code *codes;
	size_t nr, cap;
	size_t nr_copies; /* of the nr, bytecode copies */
	/* indexes: by bytecode start (with the furthest end so far), by
	 * trampoline, by name */
	struct started *by_start;
	uint64_t *max_end;
	struct ps_py_trampoline_index {
		uint64_t trampoline;
		uint32_t code;
	} * by_trampoline;
	size_t nr_trampolines;
	struct named *by_name;
	size_t nr_named;
	struct ps_py_codes_stats stats;
	char errmsg[PS_MSG_MAX];
};

/* ---- the latest code record of each code object, while reading ------- */

struct latest {
	uint64_t *keys; /* 0: empty */
	uint32_t *values;
	size_t cap, used;
};

static bool latest_put(struct latest *l, uint64_t key, uint32_t value)
{
	size_t mask, i;

	if (2 * (l->used + 1) > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		uint32_t *values = calloc(cap, sizeof(*values));

		if (!keys || !values) {
			free(keys);
			free(values);
			return false;
		}
		for (size_t k = 0; k < l->cap; k++) {
			if (!l->keys[k])
				continue;
			for (i = ps_hash_u64(l->keys[k]) & (cap - 1); keys[i];
			     i = (i + 1) & (cap - 1))
				;
			keys[i] = l->keys[k];
			values[i] = l->values[k];
		}
		free(l->keys);
		free(l->values);
		l->keys = keys;
		l->values = values;
		l->cap = cap;
	}
	mask = l->cap - 1;
	for (i = ps_hash_u64(key) & mask; l->keys[i] && l->keys[i] != key; i = (i + 1) & mask)
		;
	if (!l->keys[i])
		l->used++;
	l->keys[i] = key;
	l->values[i] = value;
	return true;
}

static bool latest_get(const struct latest *l, uint64_t key, uint32_t *value)
{
	size_t mask = l->cap - 1, i;

	if (!l->cap)
		return false;
	for (i = ps_hash_u64(key) & mask; l->keys[i]; i = (i + 1) & mask) {
		if (l->keys[i] == key) {
			*value = l->values[i];
			return true;
		}
	}
	return false;
}

/* ---- reading ----------------------------------------------------------- */

static int note_damage(struct ps_py_codes *codes, size_t offset, const char *what)
{
	codes->stats.damaged++;
	if (!codes->errmsg[0])
		snprintf(codes->errmsg, sizeof(codes->errmsg), "%s: offset %#zx: %s", codes->path,
		         offset, what);
	return 0;
}

static uint64_t name_hash(const char *name, size_t name_size, const char *file, size_t file_size)
{
	return ps_hash_bytes(file, file_size, ps_hash_bytes(name, name_size, 0));
}

static int add_code(struct ps_py_codes *codes, struct latest *latest, struct ps_cursor *c,
                    uint64_t time, size_t offset)
{
	uint64_t object = ps_cursor_u64(c), bytecode = ps_cursor_u64(c);
	uint32_t bytecode_size = ps_cursor_u32(c);
	int32_t first_line = (int32_t)ps_cursor_u32(c);
	uint32_t format = ps_cursor_u32(c), table_size = ps_cursor_u32(c);
	uint32_t name_size = ps_cursor_u32(c), file_size = ps_cursor_u32(c);
	const uint8_t *table, *name, *file;
	struct ps_py_code *code;
	uint32_t previous;

	if (!ps_cursor_ok(c))
		return note_damage(codes, offset, "code record shorter than its fields");
	table = ps_cursor_take(c, table_size);
	name = ps_cursor_take(c, name_size);
	file = ps_cursor_take(c, file_size);
	if (!table || !name || !file)
		return note_damage(codes, offset, "code record shorter than its table and names");
	if (format < PS_PY_LINES_LNOTAB || format > PS_PY_LINES_311 || !object || !bytecode ||
	    !bytecode_size || bytecode_size % 2 || bytecode > UINT64_MAX - bytecode_size)
		return note_damage(codes, offset,
		                   "code record with a bad bytecode range or format");
	if (latest_get(latest, object, &previous)) {
		struct ps_py_code *p = &codes->codes[previous];

		/* written twice while the module started watching */
		if (p->freed == UINT64_MAX && p->bytecode == bytecode &&
		    p->bytecode_size == bytecode_size)
			return 0;
		/* its free went unseen: the object is another one now */
		if (p->freed == UINT64_MAX)
			p->freed = time;
	}
	if (codes->nr >= UINT32_MAX - 1 ||
	    !ps_array_reserve((void **)&codes->codes, &codes->cap, codes->nr + 1,
	                      sizeof(*codes->codes), 256))
		return -ENOMEM;
	code = &codes->codes[codes->nr];
	*code = (struct ps_py_code){
		.object = object,
		.bytecode = bytecode,
		.bytecode_size = bytecode_size,
		.first_line = first_line,
		.format = (enum ps_py_line_format)format,
		.table = table,
		.table_size = table_size,
		.name = (const char *)name,
		.name_size = name_size,
		.file = (const char *)file,
		.file_size = file_size,
		.created = time,
		.freed = UINT64_MAX,
		.next_copy = UINT32_MAX,
	};
	if (!latest_put(latest, object, (uint32_t)codes->nr))
		return -ENOMEM;
	codes->nr++;
	return 0;
}

/* A copy of a live code object's bytecode: a code object of its own, with
 * the copy's range, on the code object's list of copies (its trampoline
 * and free time are the code object's, given once all is read). A copy
 * seen before (seen: copy address to entry) is not added again. */
static int add_copy(struct ps_py_codes *codes, const struct latest *latest, struct latest *seen,
                    struct ps_cursor *c, size_t offset)
{
	uint64_t object = ps_cursor_u64(c), bytecode = ps_cursor_u64(c);
	struct ps_py_code *code;
	uint32_t index, before;

	if (!ps_cursor_ok(c))
		return note_damage(codes, offset, "copy record too short");
	/* of a code object freed before: nothing runs it any more */
	if (!latest_get(latest, object, &index) || codes->codes[index].freed != UINT64_MAX)
		return 0;
	if (!bytecode || bytecode > UINT64_MAX - codes->codes[index].bytecode_size)
		return note_damage(codes, offset, "copy record with a bad bytecode address");
	if (latest_get(seen, bytecode, &before) && codes->codes[before].original == index)
		return 0;
	if (codes->nr >= UINT32_MAX - 1 ||
	    !ps_array_reserve((void **)&codes->codes, &codes->cap, codes->nr + 1,
	                      sizeof(*codes->codes), 256) ||
	    !latest_put(seen, bytecode, (uint32_t)codes->nr))
		return -ENOMEM;
	code = &codes->codes[codes->nr];
	*code = codes->codes[index];
	code->bytecode = bytecode;
	code->copy = true;
	code->original = index;
	codes->codes[index].next_copy = (uint32_t)codes->nr;
	codes->nr++;
	codes->nr_copies++;
	return 0;
}

static int read_records(struct ps_py_codes *codes, struct latest *latest, struct latest *seen)
{
	struct ps_cursor file = ps_cursor_make(codes->data, codes->size, false);

	ps_cursor_skip(&file, HEADER_SIZE);
	while (ps_cursor_left(&file) > 0) {
		size_t offset = ps_cursor_pos(&file);
		uint16_t type = ps_cursor_u16(&file);
		uint32_t size;
		uint64_t time;
		struct ps_cursor record;
		uint32_t index;
		int err = 0;

		ps_cursor_u16(&file);
		size = ps_cursor_u32(&file);
		time = ps_cursor_u64(&file);
		if (!ps_cursor_ok(&file) || size < RECORD_HEADER || size % 8 ||
		    size - RECORD_HEADER > ps_cursor_left(&file))
			return note_damage(codes, offset, "record header damaged or cut short");
		record = ps_cursor_make(ps_cursor_take(&file, size - RECORD_HEADER),
		                        size - RECORD_HEADER, false);
		switch (type) {
		case RECORD_CODE:
			err = add_code(codes, latest, &record, time, offset);
			break;
		case RECORD_TRAMPOLINE: {
			uint64_t object = ps_cursor_u64(&record),
			         trampoline = ps_cursor_u64(&record);

			if (!ps_cursor_ok(&record))
				note_damage(codes, offset, "trampoline record too short");
			else if (latest_get(latest, object, &index) &&
			         codes->codes[index].freed == UINT64_MAX)
				codes->codes[index].trampoline = trampoline;
			break;
		}
		case RECORD_FREE: {
			uint64_t object = ps_cursor_u64(&record);

			if (!ps_cursor_ok(&record))
				note_damage(codes, offset, "free record too short");
			else if (latest_get(latest, object, &index) &&
			         codes->codes[index].freed == UINT64_MAX)
				codes->codes[index].freed = time;
			break;
		}
		case RECORD_COPY:
			err = add_copy(codes, latest, seen, &record, offset);
			break;
		default:
			codes->stats.unknown++;
			break;
		}
		if (err)
			return err;
	}
	return 0;
}

/* ---- indexes ----------------------------------------------------------- */

static int compare_start(const void *pa, const void *pb)
{
	const struct started *a = pa, *b = pb;

	if (a->bytecode != b->bytecode)
		return a->bytecode < b->bytecode ? -1 : 1;
	if (a->created != b->created)
		return a->created < b->created ? -1 : 1;
	return (a->code > b->code) - (a->code < b->code);
}

static int compare_trampoline(const void *pa, const void *pb)
{
	const struct ps_py_trampoline_index *a = pa, *b = pb;

	if (a->trampoline != b->trampoline)
		return a->trampoline < b->trampoline ? -1 : 1;
	return (a->code > b->code) - (a->code < b->code);
}

static int compare_named(const void *pa, const void *pb)
{
	const struct named *a = pa, *b = pb;

	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return (a->code > b->code) - (a->code < b->code);
}

static int build_indexes(struct ps_py_codes *codes)
{
	size_t n = codes->nr;

	if (!n)
		return 0;
	codes->by_start = malloc(n * sizeof(*codes->by_start));
	codes->max_end = malloc(n * sizeof(*codes->max_end));
	codes->by_trampoline = malloc(n * sizeof(*codes->by_trampoline));
	codes->by_name = malloc(n * sizeof(*codes->by_name));
	if (!codes->by_start || !codes->max_end || !codes->by_trampoline || !codes->by_name)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct ps_py_code *code = &codes->codes[i];

		codes->by_start[i] = (struct started){ code->bytecode, code->created, (uint32_t)i };
		/* a copy is found by its address alone, and through its code
		 * object's list of copies */
		if (code->copy)
			continue;
		codes->by_name[codes->nr_named++] = (struct named){
			.hash = name_hash(code->name, code->name_size, code->file, code->file_size),
			.code = (uint32_t)i,
		};
		if (code->trampoline)
			codes->by_trampoline[codes->nr_trampolines++] =
			        (struct ps_py_trampoline_index){ code->trampoline, (uint32_t)i };
	}
	qsort(codes->by_start, n, sizeof(*codes->by_start), compare_start);
	for (size_t i = 0; i < n; i++) {
		const struct ps_py_code *code = &codes->codes[codes->by_start[i].code];
		uint64_t end = code->bytecode + code->bytecode_size;

		codes->max_end[i] = i && codes->max_end[i - 1] > end ? codes->max_end[i - 1] : end;
	}
	qsort(codes->by_trampoline, codes->nr_trampolines, sizeof(*codes->by_trampoline),
	      compare_trampoline);
	qsort(codes->by_name, codes->nr_named, sizeof(*codes->by_name), compare_named);
	return 0;
}

/* ---- opening ----------------------------------------------------------- */

static int fail(struct ps_py_codes *codes, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vfail(codes->errmsg, sizeof(codes->errmsg), err, NULL, fmt, ap);
	va_end(ap);
	return err;
}

static int parse(struct ps_py_codes *codes)
{
	struct ps_cursor c = ps_cursor_make(codes->data, codes->size, false);
	const uint8_t *magic = ps_cursor_take(&c, 8);
	uint32_t version = ps_cursor_u32(&c), header_size = ps_cursor_u32(&c);
	struct latest latest = { 0 }, copies = { 0 };
	int err;

	codes->python_hex = ps_cursor_u32(&c);
	ps_cursor_u32(&c); /* the pid the writer saw (a namespace's, maybe) */
	codes->own_trampolines = ps_cursor_u32(&c) & 1;
	if (!magic || memcmp(magic, MAGIC, 8) != 0 || !ps_cursor_ok(&c) ||
	    codes->size < HEADER_SIZE)
		return fail(codes, -EINVAL, "%s: not a pystitch_perf side file", codes->path);
	if (version != 1)
		return fail(codes, -ENOTSUP, "%s: side file version %" PRIu32 " (this reads 1)",
		            codes->path, version);
	if (header_size != HEADER_SIZE)
		return fail(codes, -EINVAL, "%s: offset 0xc: header size %" PRIu32 " (not 32)",
		            codes->path, header_size);
	err = read_records(codes, &latest, &copies);
	free(latest.keys);
	free(latest.values);
	free(copies.keys);
	free(copies.values);
	/* a copy lives and runs as its code object (freed by a record, or
	 * when another code object took its address) */
	for (size_t i = 0; i < codes->nr; i++) {
		struct ps_py_code *code = &codes->codes[i];

		if (code->copy) {
			code->freed = codes->codes[code->original].freed;
			code->trampoline = codes->codes[code->original].trampoline;
		}
	}
	if (!err)
		err = build_indexes(codes);
	if (err == -ENOMEM)
		return fail(codes, err, "%s: out of memory", codes->path);
	return err;
}

static struct ps_py_codes *codes_new(const char *path)
{
	struct ps_py_codes *codes = calloc(1, sizeof(*codes));

	if (codes && !(codes->path = strdup(path))) {
		free(codes);
		codes = NULL;
	}
	return codes;
}

int ps_py_codes_parse(const char *path, const uint8_t *data, size_t size, struct ps_py_codes **out)
{
	struct ps_py_codes *codes = codes_new(path);

	*out = codes;
	if (!codes)
		return -ENOMEM;
	codes->data = malloc(size ? size : 1);
	if (!codes->data)
		return fail(codes, -ENOMEM, "%s: out of memory", path);
	if (size)
		memcpy(codes->data, data, size);
	codes->size = size;
	return parse(codes);
}

int ps_py_codes_read(const char *path, const char *file, uint64_t max_bytes,
                     struct ps_py_codes **out)
{
	struct ps_py_codes *codes = codes_new(path);
	struct stat st;
	size_t done = 0;
	int fd;

	*out = codes;
	if (!codes)
		return -ENOMEM;
	if (!max_bytes)
		max_bytes = DEFAULT_MAX_BYTES;
	/* not blocked by a FIFO put in its place: refused below */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return fail(codes, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(codes, -EINVAL, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > max_bytes) {
		close(fd);
		return fail(codes, -EFBIG, "%s: %lld bytes, over the %" PRIu64 " read", path,
		            (long long)st.st_size, max_bytes);
	}
	codes->size = (size_t)st.st_size;
	codes->data = malloc(codes->size ? codes->size : 1);
	if (!codes->data) {
		close(fd);
		return fail(codes, -ENOMEM, "%s: out of memory", path);
	}
	while (done < codes->size) {
		ssize_t got = read(fd, codes->data + done, codes->size - done);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break; /* shorter than it was: read what there is */
		done += (size_t)got;
	}
	close(fd);
	codes->size = done;
	return parse(codes);
}

void ps_py_codes_free(struct ps_py_codes *codes)
{
	if (!codes)
		return;
	free(codes->path);
	free(codes->data);
	free(codes->codes);
	free(codes->by_start);
	free(codes->max_end);
	free(codes->by_trampoline);
	free(codes->by_name);
	free(codes);
}

const char *ps_py_codes_errmsg(const struct ps_py_codes *codes)
{
	return codes && codes->errmsg[0] ? codes->errmsg : NULL;
}

const char *ps_py_codes_path(const struct ps_py_codes *codes)
{
	return codes->path;
}

uint32_t ps_py_codes_python(const struct ps_py_codes *codes)
{
	return codes->python_hex;
}

bool ps_py_codes_own_trampolines(const struct ps_py_codes *codes)
{
	return codes->own_trampolines;
}

size_t ps_py_codes_count(const struct ps_py_codes *codes)
{
	return codes->nr;
}

size_t ps_py_codes_objects(const struct ps_py_codes *codes)
{
	return codes->nr - codes->nr_copies;
}

const struct ps_py_code *ps_py_codes_at(const struct ps_py_codes *codes, size_t index)
{
	return index < codes->nr ? &codes->codes[index] : NULL;
}

const struct ps_py_codes_stats *ps_py_codes_stats(const struct ps_py_codes *codes)
{
	return &codes->stats;
}

/* ---- lookups ----------------------------------------------------------- */

bool ps_py_code_alive(const struct ps_py_code *code, uint64_t time, uint64_t margin)
{
	uint64_t from = code->created > margin ? code->created - margin : 0;
	uint64_t to = code->freed > UINT64_MAX - margin ? UINT64_MAX : code->freed + margin;

	return time >= from && time <= to;
}

size_t ps_py_codes_find(const struct ps_py_codes *codes, uint64_t address, uint64_t time,
                        uint64_t margin, const struct ps_py_code **out, size_t max)
{
	size_t low = 0, high = codes->nr, n = 0;

	/* the last code object starting at or before address */
	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (codes->by_start[mid].bytecode <= address)
			low = mid + 1;
		else
			high = mid;
	}
	/* back while an earlier one may still reach it */
	for (size_t i = low; i-- > 0 && codes->max_end[i] > address;) {
		const struct ps_py_code *code = &codes->codes[codes->by_start[i].code];

		if (address >= code->bytecode + code->bytecode_size ||
		    !ps_py_code_alive(code, time, margin))
			continue;
		if (n == max)
			return max + 1;
		out[n++] = code;
	}
	return n;
}

const struct ps_py_code *ps_py_codes_by_trampoline(const struct ps_py_codes *codes,
                                                   uint64_t trampoline, uint64_t time,
                                                   uint64_t margin)
{
	const struct ps_py_code *found = NULL;
	size_t low = 0, high = codes->nr_trampolines;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (codes->by_trampoline[mid].trampoline < trampoline)
			low = mid + 1;
		else
			high = mid;
	}
	for (size_t i = low; i < codes->nr_trampolines; i++) {
		const struct ps_py_code *code;

		if (codes->by_trampoline[i].trampoline != trampoline)
			break;
		code = &codes->codes[codes->by_trampoline[i].code];
		if (!ps_py_code_alive(code, time, margin))
			continue;
		if (found)
			return NULL;
		found = code;
	}
	return found;
}

size_t ps_py_codes_by_name(const struct ps_py_codes *codes, const char *name, size_t name_size,
                           const char *file, size_t file_size, uint64_t time, uint64_t margin,
                           const struct ps_py_code **out, size_t max)
{
	uint64_t hash = name_hash(name, name_size, file, file_size);
	size_t low = 0, high = codes->nr_named, n = 0;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (codes->by_name[mid].hash < hash)
			low = mid + 1;
		else
			high = mid;
	}
	for (size_t i = low; i < codes->nr_named && codes->by_name[i].hash == hash; i++) {
		const struct ps_py_code *code = &codes->codes[codes->by_name[i].code];

		if (code->name_size != name_size || code->file_size != file_size ||
		    memcmp(code->name, name, name_size) != 0 ||
		    memcmp(code->file, file, file_size) != 0 ||
		    !ps_py_code_alive(code, time, margin))
			continue;
		if (n == max)
			return max + 1; /* more than the caller takes */
		out[n++] = code;
	}
	return n;
}
