/* Captures perf record writes as a folder. With --threads (DIR_FORMAT
 * version 1) the folder holds a header file "data", whose data section
 * has the records perf synthesized, and one file of raw records per
 * recording thread, data.0, data.1, ...; with --kcore (version 0) only
 * "data". perf 6.1 (__perf_session__process_dir_events) reads the header
 * file's data section first and then the data.N files in the order
 * readdir gives them, 2 MB from each in turn until all are read, and
 * sorts what it read by time as it sorts one file's records. No
 * FINISHED_ROUND is written in this mode: the ordering queue holds every
 * record until the end. The reader does the same: the file being read
 * is the reader's input (r->in, r->zstd, r->data_end), and the others
 * wait in r->streams with the state they had.
 */
#include "reader/reader_priv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "base/array.h"

/* data.N files opened at most (perf record --threads makes one per CPU
 * at most) */
#define MAX_STREAMS 65536
/* and in an archive (CPUs a machine may have) */
#define MAX_ARCHIVED_STREAMS 8192

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *path = malloc(n);

	if (path)
		snprintf(path, n, "%s/%s", dir, name);
	return path;
}

int ps_dir_open(struct ps_reader *r, const char *path)
{
	return ps_dir_open_at(r, path, NULL);
}

int ps_dir_open_at(struct ps_reader *r, const char *path, const char *local)
{
	char *data = join(path, "data");

	if (!data)
		return ps_reader_fail(r, -ENOMEM, "out of memory");
	r->is_dir = true;
	if (!ps_array_reserve((void **)&r->streams, &r->nr_streams, 1, sizeof(*r->streams), 1)) {
		free(data);
		return ps_reader_fail(r, -ENOMEM, "out of memory");
	}
	memset(r->streams, 0, sizeof(*r->streams));
	r->streams[0].path = data;
	r->nr_streams = 1;
	r->cur_stream = 0;
	r->in.fd = open(local ? local : data, O_RDONLY | O_CLOEXEC);
	if (r->in.fd < 0)
		return ps_reader_fail(
		        r, -errno,
		        "a folder without a header file \"data\" (cannot open it: %s), "
		        "not a capture perf record wrote",
		        strerror(errno));
	r->own_fd = true;
	r->input_name = data;
	return 0;
}

/* Opens the next data.N file, path (the stream takes it over), at local
 * (an archive's unpacked copy; NULL: at path). */
static int add_stream(struct ps_reader *r, size_t *cap, char *path, const char *local,
                      uint64_t size)
{
	struct ps_dir_stream *s;
	int fd;

	if (r->nr_streams >= MAX_STREAMS) {
		free(path);
		return ps_reader_fail(r, -E2BIG, "more than %u data.N files in the folder",
		                      MAX_STREAMS);
	}
	fd = open(local ? local : path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		r->input_name = NULL;
		ps_reader_fail(r, err, "cannot open %s: %s", path, strerror(-err));
		free(path);
		return err;
	}
	if (!ps_array_reserve((void **)&r->streams, cap, r->nr_streams + 1, sizeof(*r->streams),
	                      8)) {
		close(fd);
		free(path);
		return ps_reader_fail(r, -ENOMEM, "out of memory");
	}
	s = &r->streams[r->nr_streams++];
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->in.fd = fd;
	s->in.seekable = true;
	s->in.offset = 0;
	s->data_end = size;
	s->in.cap = ps_input_buffer_size(size);
	s->in.buf = malloc(s->in.cap);
	if (!s->in.buf)
		return ps_reader_fail(r, -ENOMEM, "out of memory");
	ps_input_map_range(&s->in, 0, size, size);
	return 0;
}

/* An archived folder's data.N files: its perf.data entries after the
 * header file, in the order the folder was read where it was packed (the
 * order readdir gave there, which decides between records of one time),
 * each as large as the archive says; empty ones skipped, as perf skips
 * them in a folder. */
static int open_archived_streams(struct ps_reader *r, size_t *cap)
{
	const struct ps_manifest *m = ps_archive_manifest(r->archive);
	bool header = true;
	int err = 0;

	for (size_t i = 0; !err && i < m->nr_files; i++) {
		const struct ps_archive_file *f = &m->files[i];
		char *path;

		if (f->kind != PS_ARCHIVE_PERF_DATA)
			continue;
		if (header || f->size == 0) {
			header = false;
			continue;
		}
		/* perf record --threads writes one per CPU at most; each
		 * takes a buffer, and an archive may list one blob for many */
		if (r->nr_streams > MAX_ARCHIVED_STREAMS)
			return ps_reader_fail(r, -E2BIG,
			                      "more than %u data.N files in the archived folder",
			                      MAX_ARCHIVED_STREAMS);
		path = strdup(f->path);
		if (!path)
			return ps_reader_fail(r, -ENOMEM, "out of memory");
		err = add_stream(r, cap, path, ps_archive_resolve(r->archive, f->path), f->size);
	}
	return err;
}

int ps_dir_open_streams(struct ps_reader *r)
{
	const char *dir = r->path;
	size_t cap = r->nr_streams;
	struct dirent *entry;
	DIR *d;
	int err = 0;

	if (!r->is_dir || !r->features.has_dir_format || r->features.dir_format_version == 0)
		return 0; /* --kcore: "data" alone */
	if (r->features.dir_format_version != 1)
		return ps_reader_fail(
		        r, -ENOTSUP,
		        "feature DIR_FORMAT: folder layout version %llu (perf 6.1 reads "
		        "version 1)",
		        (unsigned long long)r->features.dir_format_version);
	if (r->archive)
		return open_archived_streams(r, &cap);
	d = opendir(dir);
	if (!d) {
		r->input_name = NULL;
		return ps_reader_fail(r, -errno, "cannot read the folder: %s", strerror(errno));
	}
	while (!err && (entry = readdir(d)) != NULL) {
		char *path;
		struct stat st;
		bool take;

		if (strncmp(entry->d_name, "data.", 5) != 0)
			continue;
		path = join(dir, entry->d_name);
		if (!path) {
			err = ps_reader_fail(r, -ENOMEM, "out of memory");
			break;
		}
		/* perf skips what stat refuses, what is not a regular file,
		 * and (when reading) the empty files */
		take = stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
		if (take)
			err = add_stream(r, &cap, path, NULL, (uint64_t)st.st_size);
		else
			free(path);
	}
	closedir(d);
	return err;
}

/* Parks the current file's state and makes stream i the input. */
static void switch_to(struct ps_reader *r, size_t i)
{
	struct ps_dir_stream *cur = &r->streams[r->cur_stream];

	cur->in = r->in;
	cur->zstd = r->zstd;
	cur->data_end = r->data_end;
	r->in = r->streams[i].in;
	r->zstd = r->streams[i].zstd;
	r->data_end = r->streams[i].data_end;
	r->cur_stream = i;
	r->input_name = r->streams[i].path;
	r->stream_read = 0;
}

/* The next stream after the current one, in turn, that is not done;
 * the current one when no other is left. */
static size_t next_stream(const struct ps_reader *r)
{
	for (size_t k = 1; k <= r->nr_streams; k++) {
		size_t i = (r->cur_stream + k) % r->nr_streams;

		if (!r->streams[i].done)
			return i;
	}
	return r->cur_stream;
}

void ps_dir_next_turn(struct ps_reader *r)
{
	size_t i = next_stream(r);

	r->stream_read = 0;
	if (i != r->cur_stream)
		switch_to(r, i);
}

void ps_dir_stream_done(struct ps_reader *r)
{
	size_t i;

	r->streams[r->cur_stream].done = true;
	i = next_stream(r);
	if (r->streams[i].done) {
		r->done = true;
		return;
	}
	switch_to(r, i);
}

void ps_dir_close(struct ps_reader *r)
{
	for (size_t i = 0; i < r->nr_streams; i++) {
		struct ps_dir_stream *s = &r->streams[i];

		/* the current one's state is the reader's, freed with it */
		if (i != r->cur_stream) {
			if (s->in.fd >= 0 && (i != 0 || r->own_fd))
				close(s->in.fd);
			if (s->in.map)
				ps_input_unmap(&s->in);
			else
				free(s->in.buf);
			ps_decompressor_free(&s->zstd);
		}
		free(s->path);
	}
	free(r->streams);
	r->streams = NULL;
	r->nr_streams = 0;
	r->input_name = NULL;
}
