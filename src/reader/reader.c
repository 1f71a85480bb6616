/* The reader's front door: opening a capture (file or pipe format), the
 * file header and attrs section, buffered streaming of the data section,
 * record framing and delivery in file or perf order.
 */
#include "reader/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cursor.h"
#include "reader/perf_format.h"

#define PS_INPUT_BUFFER (1u << 20)
#define PS_MAX_RECORD 65536

/* ---- errors and logging ------------------------------------------ */

static void vformat_error(struct ps_reader *r, const char *prefix, const char *fmt, va_list ap)
{
	size_t n = (size_t)snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s",
	                            r->path ? r->path : "(input)", prefix);
	if (n < sizeof(r->errmsg))
		vsnprintf(r->errmsg + n, sizeof(r->errmsg) - n, fmt, ap);
	/* one line, whatever the input held */
	for (char *p = r->errmsg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

int ps_reader_fail(struct ps_reader *r, int err, const char *fmt, ...)
{
	va_list ap;
	if (r->failed)
		return err;
	va_start(ap, fmt);
	vformat_error(r, "", fmt, ap);
	va_end(ap);
	r->failed = true;
	return err;
}

int ps_reader_fail_at(struct ps_reader *r, int err, uint64_t offset, uint32_t type, const char *fmt,
                      ...)
{
	char prefix[96];
	const char *name = type ? ps_record_type_name(type) : NULL;
	va_list ap;

	if (r->failed)
		return err;
	if (type && name)
		snprintf(prefix, sizeof(prefix), "offset 0x%" PRIx64 ": %s: ", offset, name);
	else if (type)
		snprintf(prefix, sizeof(prefix), "offset 0x%" PRIx64 ": record type %u: ", offset,
		         type);
	else
		snprintf(prefix, sizeof(prefix), "offset 0x%" PRIx64 ": ", offset);
	va_start(ap, fmt);
	vformat_error(r, prefix, fmt, ap);
	va_end(ap);
	r->failed = true;
	return err;
}

void ps_reader_log(struct ps_reader *r, enum ps_log_level level, const char *fmt, ...)
{
	char msg[512];
	size_t n;
	va_list ap;

	if (!r->opts.log)
		return;
	n = (size_t)snprintf(msg, sizeof(msg), "%s: ", r->path ? r->path : "(input)");
	va_start(ap, fmt);
	if (n < sizeof(msg))
		vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	r->opts.log(r->opts.log_ctx, level, msg);
}

void *ps_scratch_get(struct ps_scratch *s, size_t bytes)
{
	if (bytes > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (cap < bytes)
			cap *= 2;
		void *d = realloc(s->data, cap);
		if (!d)
			return NULL;
		s->data = d;
		s->cap = cap;
	}
	return s->data;
}

void ps_scratch_free(struct ps_scratch *s)
{
	free(s->data);
	s->data = NULL;
	s->cap = 0;
}

/* ---- buffered input ---------------------------------------------- */

/* Make at least `need` bytes available at in->buf + in->head. Returns the
 * number available (less than need only at end of input), or -errno. */
static ssize_t input_fill(struct ps_reader *r, size_t need)
{
	struct ps_input *in = &r->in;

	if (in->tail - in->head >= need)
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

static void input_consume(struct ps_input *in, size_t n)
{
	in->head += n;
	in->offset += n;
}

/* Skip n bytes of input (extra payloads), seeking when possible. */
static int input_skip(struct ps_reader *r, uint64_t n)
{
	struct ps_input *in = &r->in;
	size_t have = in->tail - in->head;

	if (n <= have) {
		input_consume(in, (size_t)n);
		return 0;
	}
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
		ssize_t got = input_fill(r, 1);
		if (got < 0)
			return (int)got;
		if (got == 0)
			return -ENODATA;
		size_t take = (uint64_t)got < n ? (size_t)got : (size_t)n;
		input_consume(in, take);
		n -= take;
	}
	return 0;
}

static int read_exact_at(struct ps_reader *r, void *buf, size_t size, uint64_t offset)
{
	size_t done = 0;
	while (done < size) {
		ssize_t n =
		        pread(r->in.fd, (char *)buf + done, size - done, (off_t)(offset + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;
		done += (size_t)n;
	}
	return 0;
}

/* ---- file header -------------------------------------------------- */

static int read_file_header(struct ps_reader *r, const uint8_t *hdr, uint64_t file_size)
{
	struct ps_cursor c = ps_cursor_make(hdr, PS_FILE_HEADER_SIZE, r->swap);
	uint8_t *attrs;
	int err;

	ps_cursor_skip(&c, 8);
	r->header_size = ps_cursor_u64(&c);
	r->attr_size = ps_cursor_u64(&c);
	r->attrs_offset = ps_cursor_u64(&c);
	r->attrs_size = ps_cursor_u64(&c);
	r->data_offset = ps_cursor_u64(&c);
	r->data_size = ps_cursor_u64(&c);
	ps_cursor_skip(&c, 16); /* event_types, unused since 2012 */
	if (r->header_size != PS_FILE_HEADER_SIZE_NOFEAT) {
		if (r->header_size != PS_FILE_HEADER_SIZE)
			return ps_reader_fail_at(r, -EINVAL, 8, 0,
			                         "file header: size %" PRIu64
			                         " is neither 104 nor 72",
			                         r->header_size);
		for (int i = 0; i < 4; i++)
			r->features.present[i] = ps_cursor_u64(&c);
	}
	/* The feature bitmap is a bitmap of longs; in a swapped file the
	 * 64-bit swap above already puts bit n at position n. */

	if (r->attr_size < PS_ATTR_SIZE_VER0 + 16 || r->attr_size > PS_ATTR_SIZE_MAX + 16)
		return ps_reader_fail_at(r, -EINVAL, 16, 0,
		                         "file header: attr_size %" PRIu64 " out of range",
		                         r->attr_size);
	if (r->attrs_offset > file_size || r->attrs_size > file_size - r->attrs_offset)
		return ps_reader_fail_at(r, -EINVAL, 24, 0,
		                         "file header: attrs section [%#" PRIx64 ", +%#" PRIx64
		                         ") past end of file (%#" PRIx64 " bytes)",
		                         r->attrs_offset, r->attrs_size, file_size);
	if (r->opts.force && r->data_offset <= file_size &&
	    r->data_size > file_size - r->data_offset) {
		ps_reader_log(r, PS_LOG_WARN,
		              "data section past end of file; --force: reading to the end");
		r->data_size = file_size - r->data_offset;
	}
	if (r->data_offset > file_size || r->data_size > file_size - r->data_offset)
		return ps_reader_fail_at(r, -EINVAL, 40, 0,
		                         "file header: data section [%#" PRIx64 ", +%#" PRIx64
		                         ") past end of file (%#" PRIx64 " bytes)",
		                         r->data_offset, r->data_size, file_size);
	if (r->attrs_size % r->attr_size)
		return ps_reader_fail_at(r, -EINVAL, 32, 0,
		                         "file header: attrs section size %#" PRIx64
		                         " is not a multiple of attr_size %" PRIu64,
		                         r->attrs_size, r->attr_size);
	size_t nr = (size_t)(r->attrs_size / r->attr_size);
	if (nr > PS_MAX_ATTRS)
		return ps_reader_fail_at(r, -EINVAL, 32, 0, "file header: %zu attrs (limit %u)", nr,
		                         PS_MAX_ATTRS);

	attrs = malloc(r->attrs_size ? (size_t)r->attrs_size : 1);
	if (!attrs)
		return ps_reader_fail(r, -ENOMEM, "out of memory reading attrs");
	err = read_exact_at(r, attrs, (size_t)r->attrs_size, r->attrs_offset);
	if (err) {
		free(attrs);
		return ps_reader_fail_at(r, err, r->attrs_offset, 0, "attrs section: %s",
		                         strerror(-err));
	}
	for (size_t i = 0; i < nr && !err; i++) {
		const uint8_t *entry = attrs + i * r->attr_size;
		uint64_t entry_offset = r->attrs_offset + i * r->attr_size;
		struct ps_attr attr;
		size_t used;

		err = ps_attr_parse(r, entry, (size_t)r->attr_size - 16, entry_offset, 0, &attr,
		                    &used);
		if (err)
			break;
		/* the ids section follows the attr as stored by the writer */
		struct ps_cursor ids = ps_cursor_make(entry + r->attr_size - 16, 16, r->swap);
		uint64_t ids_offset = ps_cursor_u64(&ids);
		uint64_t ids_size = ps_cursor_u64(&ids);
		if (ids_offset > file_size || ids_size > file_size - ids_offset ||
		    ids_size / 8 > PS_MAX_IDS_PER_ATTR) {
			err = ps_reader_fail_at(r, -EINVAL, entry_offset + r->attr_size - 16, 0,
			                        "attr %zu: ids section [%#" PRIx64 ", +%#" PRIx64
			                        ") past end of file",
			                        i, ids_offset, ids_size);
			break;
		}
		size_t nr_ids = (size_t)(ids_size / 8);
		uint64_t *idv = malloc(nr_ids ? nr_ids * 8 : 8);
		if (!idv) {
			err = ps_reader_fail(r, -ENOMEM, "out of memory reading ids");
			break;
		}
		err = read_exact_at(r, idv, nr_ids * 8, ids_offset);
		if (err) {
			free(idv);
			err = ps_reader_fail_at(r, err, ids_offset, 0, "ids section: %s",
			                        strerror(-err));
			break;
		}
		if (r->swap)
			for (size_t k = 0; k < nr_ids; k++)
				idv[k] = __builtin_bswap64(idv[k]);
		err = ps_attrs_add(r, &attr, idv, nr_ids, entry_offset);
		free(idv);
	}
	free(attrs);
	if (err)
		return err;
	return ps_attrs_finish(r, r->attrs_offset);
}

/* ---- open / close ------------------------------------------------- */

static int reader_start(struct ps_reader *r)
{
	struct stat st;
	uint8_t hdr[PS_FILE_HEADER_SIZE];
	uint64_t magic;
	ssize_t got;
	int err;

	r->in.cap = PS_INPUT_BUFFER;
	r->in.buf = malloc(r->in.cap);
	if (!r->in.buf)
		return ps_reader_fail(r, -ENOMEM, "out of memory");
	if (fstat(r->in.fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(r->in.fd, 0, SEEK_CUR) == 0)
		r->in.seekable = true;

	got = input_fill(r, 16);
	if (got < 0)
		return ps_reader_fail(r, (int)got, "cannot read: %s", strerror((int)-got));
	if (got < 16)
		return ps_reader_fail_at(r, -EINVAL, 0, 0,
		                         "file header: truncated (%zd bytes), not a perf.data file",
		                         got);
	memcpy(&magic, r->in.buf + r->in.head, 8);
	if (magic == PS_PERF_MAGIC2) {
		r->swap = false;
	} else if (magic == PS_PERF_MAGIC2_SWAPPED) {
		r->swap = true;
	} else if (magic == PS_PERF_MAGIC1 || magic == __builtin_bswap64(PS_PERF_MAGIC1)) {
		return ps_reader_fail_at(
		        r, -ENOTSUP, 0, 0,
		        "file header: version 1 perf.data (PERFFILE) is not supported");
	} else {
		return ps_reader_fail_at(
		        r, -EINVAL, 0, 0,
		        "file header: bad magic %#018" PRIx64 ", not a perf.data file", magic);
	}
	struct ps_cursor c = ps_cursor_make(r->in.buf + r->in.head + 8, 8, r->swap);
	uint64_t size = ps_cursor_u64(&c);

	if (size == PS_PIPE_HEADER_SIZE) {
		r->is_pipe = true;
		input_consume(&r->in, PS_PIPE_HEADER_SIZE);
		/* perf numbers pipe records from the end of this header */
		r->in.offset = 0;
		r->data_offset = 0;
		r->data_end = UINT64_MAX;
		return 0;
	}
	if (!r->in.seekable)
		return ps_reader_fail_at(r, -ESPIPE, 0, 0,
		                         "file header: a file-mode perf.data cannot be read from a "
		                         "pipe (record with -o - for pipe mode, or pass a file)");
	got = input_fill(r, PS_FILE_HEADER_SIZE);
	if (got < 0)
		return ps_reader_fail(r, (int)got, "cannot read: %s", strerror((int)-got));
	if ((size_t)got < PS_FILE_HEADER_SIZE_NOFEAT ||
	    (size == PS_FILE_HEADER_SIZE && (size_t)got < PS_FILE_HEADER_SIZE))
		return ps_reader_fail_at(r, -EINVAL, (uint64_t)got, 0,
		                         "file header: truncated at %zd of %" PRIu64 " bytes", got,
		                         size);
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, r->in.buf + r->in.head, (size_t)got < sizeof(hdr) ? (size_t)got : sizeof(hdr));
	err = read_file_header(r, hdr, (uint64_t)st.st_size);
	if (err)
		return err;
	r->data_end = r->data_offset + r->data_size;
	err = ps_features_read_file(r);
	if (err && r->opts.force && err != -ENOMEM) {
		/* a capture cut short loses its features first: go on without */
		ps_reader_log(r, PS_LOG_WARN, "%s; --force: features ignored",
		              r->errmsg + strlen(r->path) + 2);
		r->failed = false;
		err = 0;
	}
	if (err)
		return err;
	/* position the stream at the data section */
	if (lseek(r->in.fd, (off_t)r->data_offset, SEEK_SET) < 0)
		return ps_reader_fail(r, -errno, "cannot seek: %s", strerror(errno));
	r->in.head = r->in.tail = 0;
	r->in.eof = false;
	r->in.offset = r->data_offset;
	return 0;
}

static int reader_new(const char *name, const struct ps_reader_opts *opts, struct ps_reader **out)
{
	struct ps_reader *r = calloc(1, sizeof(*r));
	*out = r;
	if (!r)
		return -ENOMEM;
	if (opts) {
		size_t n = opts->sz < sizeof(r->opts) ? opts->sz : sizeof(r->opts);
		memcpy(&r->opts, opts, n);
	}
	r->opts.sz = sizeof(r->opts);
	if (!r->opts.max_queue_bytes)
		r->opts.max_queue_bytes = 256u << 20;
	r->path = strdup(name ? name : "(input)");
	if (!r->path)
		return -ENOMEM;
	r->in.fd = -1;
	return 0;
}

int ps_reader_open_fd(int fd, const char *name, const struct ps_reader_opts *opts,
                      struct ps_reader **out)
{
	struct ps_reader *r;
	int err = reader_new(name, opts, &r);
	*out = r;
	if (err)
		return err;
	r->in.fd = fd;
	return reader_start(r);
}

int ps_reader_open(const char *path, const struct ps_reader_opts *opts, struct ps_reader **out)
{
	struct ps_reader *r;
	bool is_stdin = path && strcmp(path, "-") == 0;
	int err = reader_new(is_stdin ? "(stdin)" : path, opts, &r);

	*out = r;
	if (err)
		return err;
	if (!path)
		return ps_reader_fail(r, -EINVAL, "no input file");
	if (is_stdin) {
		r->in.fd = STDIN_FILENO;
	} else {
		r->in.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->in.fd < 0)
			return ps_reader_fail(r, -errno, "cannot open: %s", strerror(errno));
		r->own_fd = true;
	}
	return reader_start(r);
}

void ps_reader_close(struct ps_reader *r)
{
	if (!r)
		return;
	if (r->own_fd && r->in.fd >= 0)
		close(r->in.fd);
	free(r->in.buf);
	ps_queue_free(r);
	ps_decompress_free(r);
	ps_tracing_free(r);
	ps_features_free(r);
	ps_attrs_free(r);
	ps_scratch_free(&r->scratch_callchain);
	ps_scratch_free(&r->scratch_branch);
	ps_scratch_free(&r->scratch_regs_user);
	ps_scratch_free(&r->scratch_regs_intr);
	ps_scratch_free(&r->scratch_read);
	ps_scratch_free(&r->scratch_misc);
	ps_scratch_free(&r->scratch_record);
	ps_arena_free(&r->arena);
	free(r->path);
	free(r);
}

const char *ps_reader_errmsg(const struct ps_reader *r)
{
	if (!r)
		return "out of memory";
	return r->failed ? r->errmsg : "";
}

const char *ps_reader_path(const struct ps_reader *r)
{
	return r->path;
}
bool ps_reader_is_pipe(const struct ps_reader *r)
{
	return r->is_pipe;
}
bool ps_reader_is_swapped(const struct ps_reader *r)
{
	return r->swap;
}
uint64_t ps_reader_data_offset(const struct ps_reader *r)
{
	return r->data_offset;
}
uint64_t ps_reader_data_size(const struct ps_reader *r)
{
	return r->data_size;
}
size_t ps_reader_nr_attrs(const struct ps_reader *r)
{
	return r->nr_attrs;
}
const struct ps_features *ps_reader_features(const struct ps_reader *r)
{
	return &r->features;
}
const struct ps_reader_stats *ps_reader_stats(const struct ps_reader *r)
{
	return &r->stats;
}

const struct ps_attr *ps_reader_attr(const struct ps_reader *r, size_t index)
{
	return index < r->nr_attrs ? &r->attrs[index] : NULL;
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
	              r->errmsg + strlen(r->path) + 2);
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
	    type == PS_RECORD_COMPRESSED)
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

	if (r->done)
		return 0;
	err = next_decompressed(r, rec);
	if (err)
		return err;

	offset = in->offset;
	if (offset >= r->data_end)
		goto end;
	got = input_fill(r, 8);
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
	got = input_fill(r, rec->size);
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
	r->done = true;
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

	if (rec->type == PS_RECORD_HEADER_TRACING_DATA) {
		/* the tracing blob follows the record; hand it over now */
		uint64_t n = rec->payload;
		if (n > PS_MAX_TRACING_DATA)
			return ps_reader_fail_at(r, -EINVAL, rec->offset, rec->type,
			                         "tracing data of %" PRIu64 " bytes (limit %u)", n,
			                         PS_MAX_TRACING_DATA);
		ssize_t got = input_fill(r, rec->size + (size_t)n);
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
		r->features.has_tracing_data = true;
		r->features.tracing_data_size = n;
		r->features.present[0] |= 1ull << PS_FEAT_TRACING_DATA;
		input_consume(&r->in, rec->size + (size_t)n);
		return 1;
	}
	input_consume(&r->in, rec->size);
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
	              r->errmsg + strlen(r->path) + 2);
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
		int ret = decode(r, q.bytes, (uint16_t)q.size, q.offset, q.from_compressed, 0);
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
	int ret = decode(r, rec->bytes, rec->size, rec->offset, rec->from_compressed, rec->payload);
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
		if (rec.type == PS_RECORD_COMPRESSED) {
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
