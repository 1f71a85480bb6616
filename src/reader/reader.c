/* The reader's front door: opening a capture (file or pipe format), the
 * file header and attrs section. Reading the data section record by
 * record is in stream.c, the reader's messages in messages.c.
 */
#include "reader/reader_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cursor.h"
#include "base/message.h"
#include "base/opts.h"
#include "reader/perf_format_priv.h"

/* ---- file header -------------------------------------------------- */

/* The header's sections are read at their offsets, past the stream. */
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
	if (fstat(r->in.fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(r->in.fd, 0, SEEK_CUR) == 0) {
		r->in.seekable = true;
		/* the data section is read front to back: a larger kernel
		 * read-ahead keeps a capture that is not cached from waiting
		 * on the disk every megabyte (advice only: errors ignored) */
		(void)posix_fadvise(r->in.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		r->in.cap = ps_input_buffer_size((uint64_t)st.st_size);
	}
	r->in.buf = malloc(r->in.cap);
	if (!r->in.buf)
		return ps_reader_fail(r, -ENOMEM, "out of memory");

	got = ps_input_fill(r, 16);
	if (got == -EISDIR)
		/* a descriptor of a folder: its files are found by path */
		return ps_reader_fail(r, -EISDIR,
		                      "a folder (perf record --threads writes its capture as one): "
		                      "give its path");
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
		ps_input_consume(&r->in, PS_PIPE_HEADER_SIZE);
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
	got = ps_input_fill(r, PS_FILE_HEADER_SIZE);
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
		              r->errmsg + strlen(ps_reader_input_name(r)) + 2);
		r->failed = false;
		err = 0;
	}
	if (err)
		return err;
	/* as perf_session__read_header() ends: after EVENT_DESC */
	ps_tracing_name_events(r);
	err = ps_dir_open_streams(r);
	if (err)
		return err;
	/* position the stream at the data section */
	if (lseek(r->in.fd, (off_t)r->data_offset, SEEK_SET) < 0)
		return ps_reader_fail(r, -errno, "cannot seek: %s", strerror(errno));
	r->in.head = r->in.tail = 0;
	r->in.eof = false;
	r->in.offset = r->data_offset;
	ps_input_map(r, (uint64_t)st.st_size);
	return 0;
}

static int reader_new(const char *name, const struct ps_reader_opts *opts, struct ps_reader **out)
{
	struct ps_reader *r = calloc(1, sizeof(*r));
	*out = r;
	if (!r)
		return -ENOMEM;
	r->in.fd = -1;
	r->path = strdup(name ? name : "(input)");
	if (!r->path)
		return -ENOMEM;
	if (ps_opts_copy(&r->opts, sizeof(r->opts), opts))
		return ps_reader_fail(r, -EINVAL, PS_OPTS_ERRMSG);
	if (!r->opts.max_queue_bytes)
		r->opts.max_queue_bytes = 256u << 20;
	return 0;
}

/* How an open ends: *out holds the reader, or on failure NULL, and the
 * failure's message is said through the log at PS_LOG_ERROR or, when the
 * caller says it itself, copied to errmsg. */
static int finish_open(struct ps_reader *r, int err, const struct ps_reader_opts *opts,
                       struct ps_reader **out, char *errmsg, size_t errmsg_size)
{
	const char *msg = r && r->errmsg[0] ? r->errmsg : "out of memory";
	ps_log_fn log = NULL;
	void *log_ctx = NULL;

	*out = NULL;
	if (!err) {
		*out = r;
		return 0;
	}
	if (errmsg) {
		snprintf(errmsg, errmsg_size, "%s", msg);
	} else if (opts && opts->sz >= offsetof(struct ps_reader_opts, log_ctx) + sizeof(void *)) {
		/* the caller's log, even in options that failed the check */
		log = opts->log;
		log_ctx = opts->log_ctx;
	}
	if (log)
		log(log_ctx, PS_LOG_ERROR, msg);
	ps_reader_close(r);
	return err;
}

static int open_fd(int fd, const char *name, const struct ps_reader_opts *opts,
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

int ps_reader_open_fd(int fd, const char *name, const struct ps_reader_opts *opts,
                      struct ps_reader **out)
{
	struct ps_reader *r;
	int err = open_fd(fd, name, opts, &r);

	return finish_open(r, err, opts, out, NULL, 0);
}

/* Unpack the archive at path and read its perf.data instead. */
static int open_archive(struct ps_reader *r, const char *path)
{
	char err[PS_MSG_MAX];
	size_t plen = strlen(path);
	int rc;

	/* the file just found to be an archive, not whatever has the name now */
	rc = ps_archive_open_fd(r->in.fd, path, NULL, &r->archive, err, sizeof(err));
	close(r->in.fd);
	r->in.fd = -1;
	if (rc) {
		/* the message names the archive already */
		bool named = strncmp(err, path, plen) == 0 && strncmp(err + plen, ": ", 2) == 0;

		return ps_reader_fail(r, rc, "%s", named ? err + plen + 2 : err);
	}
	/* a folder: its header file first, its data.N files once the header
	 * says how they are laid out (ps_dir_open_streams()) */
	if (ps_archive_perf_data_is_folder(r->archive))
		return ps_dir_open_at(r, ps_archive_manifest(r->archive)->perf_data_path,
		                      ps_archive_perf_data(r->archive));
	r->in.fd = open(ps_archive_perf_data(r->archive), O_RDONLY | O_CLOEXEC);
	if (r->in.fd < 0)
		return ps_reader_fail(r, -errno, "cannot open the archived perf.data: %s",
		                      strerror(errno));
	return 0;
}

static int open_path(const char *path, const struct ps_reader_opts *opts, struct ps_reader **out)
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
		/* unpacking needs the archive's name (a pipe cannot be told) */
		if (ps_archive_detect(r->in.fd))
			return ps_reader_fail(r, -EINVAL,
			                      "a pystitch archive is read from a named file (-i "
			                      "FILE), not from standard input");
	} else {
		struct stat st;

		r->in.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->in.fd < 0)
			return ps_reader_fail(r, -errno, "cannot open: %s", strerror(errno));
		r->own_fd = true;
		if (fstat(r->in.fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* perf record --threads (or --kcore) wrote a folder */
			close(r->in.fd);
			r->in.fd = -1;
			r->own_fd = false;
			err = ps_dir_open(r, path);
			if (err)
				return err;
		} else if (ps_archive_detect(r->in.fd)) {
			err = open_archive(r, path);
			if (err)
				return err;
		}
	}
	return reader_start(r);
}

int ps_reader_open(const char *path, const struct ps_reader_opts *opts, struct ps_reader **out)
{
	struct ps_reader *r;
	int err = open_path(path, opts, &r);

	return finish_open(r, err, opts, out, NULL, 0);
}

int ps_reader_open_errmsg(const char *path, const struct ps_reader_opts *opts,
                          struct ps_reader **out, char *errmsg, size_t errmsg_size)
{
	struct ps_reader *r;
	int err = open_path(path, opts, &r);

	return finish_open(r, err, opts, out, errmsg, errmsg_size);
}

void ps_reader_close(struct ps_reader *r)
{
	if (!r)
		return;
	ps_dir_close(r);
	if (r->own_fd && r->in.fd >= 0)
		close(r->in.fd);
	ps_archive_close(r->archive);
	ps_queue_free(r);
	if (r->in.map)
		ps_input_unmap(&r->in);
	else
		free(r->in.buf);
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

const char *ps_reader_capture_path(const struct ps_reader *r)
{
	const char *archived = r->archive ? ps_archive_manifest(r->archive)->perf_data_path : NULL;

	return archived ? archived : r->path;
}

const char *ps_reader_input_file(const struct ps_reader *r)
{
	return r->is_dir && r->event_stream < r->nr_streams ? r->streams[r->event_stream].path
	                                                    : ps_reader_capture_path(r);
}

const char *ps_reader_header_file(const struct ps_reader *r)
{
	return r->is_dir && r->streams ? r->streams[0].path : ps_reader_capture_path(r);
}

const char *ps_reader_folder_file(const struct ps_reader *r, size_t index)
{
	return r->is_dir && index < r->nr_streams ? r->streams[index].path : NULL;
}

struct ps_archive *ps_reader_archive(const struct ps_reader *r)
{
	return r->archive;
}

bool ps_reader_reads_file(const struct ps_reader *r, const char *path)
{
	struct stat st, mine;

	if (r->archive || !path || strcmp(path, "-") == 0)
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && fstat(r->in.fd, &mine) == 0 &&
	       st.st_dev == mine.st_dev && st.st_ino == mine.st_ino && st.st_size == mine.st_size;
}

bool ps_reader_is_archive(const struct ps_reader *r, int64_t *perf_data_mtime)
{
	if (r->archive && perf_data_mtime)
		*perf_data_mtime = ps_archive_manifest(r->archive)->perf_data_mtime;
	return r->archive != NULL;
}
bool ps_reader_is_pipe(const struct ps_reader *r)
{
	return r->is_pipe;
}

bool ps_reader_is_folder(const struct ps_reader *r)
{
	return r->is_dir;
}
enum ps_order ps_reader_order(const struct ps_reader *r)
{
	return r->opts.order;
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
void ps_reader_progress(const struct ps_reader *r, uint64_t *done, uint64_t *total)
{
	*done = r->in.offset;
	*total = r->is_pipe ? 0 : r->data_offset + r->data_size;
	if (r->nr_streams <= 1)
		return;
	/* a folder: the header file's position and size, and its data.N
	 * files' whole (the current file's position is the reader's) */
	*done = 0;
	for (size_t i = 0; i < r->nr_streams; i++) {
		*done += i == r->cur_stream ? r->in.offset : r->streams[i].in.offset;
		if (i > 0)
			*total += r->streams[i].data_end;
	}
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

const struct ps_attr *ps_reader_attr_of_id(const struct ps_reader *r, uint64_t id)
{
	return r ? ps_attrs_find_id(r, id) : NULL;
}
