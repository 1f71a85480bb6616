/* Packing a capture into an archive (the public ps_archive_writer,
 * pystitch/output.h), the one job of src/pack: above both the session it
 * runs and src/archive, whose format it writes, so that the archive
 * module stays below the reader and the session that read archives. A
 * session reads the capture noting every file it opens, then the capture
 * and those files are packed, with the answers of separate debug files
 * carried in their place unless they are packed too. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "base/array.h"
#include "base/message.h"
#include "base/opts.h"
#include "base/strbuf.h"
#include "session/session.h"

struct used_file {
	char *path, *file;
	enum ps_file_kind kind;
	int fd; /* a side file held open since it was read, or -1 */
};

/* The perf maps, jitdumps and line tables of processes live in the /tmp of
 * their process or container, which may be gone by the time the archive
 * is written: those read are held open (up to this many), and packed
 * through /proc/self/fd. */
#define HELD_FILES_MAX 256

struct ps_archive_writer {
	struct ps_archive_writer_opts opts;
	struct ps_session_opts session_opts; /* with file_used pointing here */
	char *capture;
	struct ps_session *session;
	struct used_file *files;
	size_t nr_files, files_cap, nr_held, held_max;
	bool nomem;
	char errmsg[PS_MSG_MAX];
};

static void log_line(const struct ps_archive_writer *w, enum ps_log_level level, const char *fmt,
                     ...) __attribute__((format(printf, 3, 4)));
static void log_line(const struct ps_archive_writer *w, enum ps_log_level level, const char *fmt,
                     ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vlog(w->session_opts.log, w->session_opts.log_ctx, level, NULL, fmt, ap);
	va_end(ap);
}

static void note_file(void *ctx, const char *path, const char *file, enum ps_file_kind kind)
{
	struct ps_archive_writer *w = ctx;
	const struct ps_session_opts *user = w->opts.session;

	if (user && user->file_used)
		user->file_used(user->file_used_ctx, path, file, kind);
	if (!file) {
		log_line(w, PS_LOG_WARN, "archive: %s: no file found, left out", path);
		return;
	}
	for (size_t i = 0; i < w->nr_files; i++) {
		if (strcmp(w->files[i].path, path) == 0) {
			/* a file used both ways is needed as code */
			if (kind == PS_FILE_ELF)
				w->files[i].kind = kind;
			return;
		}
	}
	if (!ps_array_reserve((void **)&w->files, &w->files_cap, w->nr_files + 1, sizeof(*w->files),
	                      64)) {
		w->nomem = true;
		return;
	}
	struct used_file *u = &w->files[w->nr_files];

	*u = (struct used_file){ strdup(path), NULL, kind, -1 };
	if (kind != PS_FILE_ELF && kind != PS_FILE_DEBUGINFO && kind != PS_FILE_KALLSYMS &&
	    kind != PS_FILE_VMLINUX && w->nr_held < w->held_max) {
		int fd = ps_archive_open_regular(file);

		/* what the session could not read as a file is not packed */
		if (fd < 0) {
			log_line(w, PS_LOG_WARN, "archive: %s: %s, left out", path,
			         fd == -EINVAL ? "not a regular file" : strerror(-fd));
			free(u->path);
			return;
		}
		u->fd = fd;
	}
	if (u->fd >= 0) {
		char held[32];

		snprintf(held, sizeof(held), "/proc/self/fd/%d", u->fd);
		u->file = strdup(held);
		w->nr_held++;
	} else {
		u->file = strdup(file);
	}
	if (!u->path || !u->file) {
		free(u->path);
		free(u->file);
		if (u->fd >= 0)
			close(u->fd);
		w->nomem = true;
		return;
	}
	w->nr_files++;
}

static void note_python(void *ctx, const struct ps_python_process *process)
{
	struct ps_archive_writer *w = ctx;

	if (process->missing)
		log_line(w, PS_LOG_WARN, "%s", process->missing);
}

static enum ps_archive_kind archive_kind(enum ps_file_kind kind)
{
	switch (kind) {
	case PS_FILE_DEBUGINFO:
		return PS_ARCHIVE_DEBUGINFO;
	case PS_FILE_KALLSYMS:
		return PS_ARCHIVE_KALLSYMS;
	case PS_FILE_VMLINUX:
		return PS_ARCHIVE_VMLINUX;
	case PS_FILE_PERF_MAP:
	case PS_FILE_PY_LINES: /* read as perf maps are: by path, beside them */
		return PS_ARCHIVE_PERF_MAP;
	case PS_FILE_JITDUMP:
		return PS_ARCHIVE_JITDUMP;
	case PS_FILE_ELF:
	default:
		return PS_ARCHIVE_ELF;
	}
}

bool ps_path_is_archive(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool archive = fd >= 0 && ps_archive_detect(fd);

	if (fd >= 0)
		close(fd);
	return archive;
}

int ps_archive_writer_open(const char *capture, const struct ps_archive_writer_opts *opts,
                           struct ps_archive_writer **out)
{
	struct ps_archive_writer *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w)
		return -ENOMEM; /* nothing left to say it with */
	rc = ps_opts_copy(&w->opts, sizeof(w->opts), opts);
	if (!rc)
		rc = ps_opts_copy(&w->session_opts, sizeof(w->session_opts), w->opts.session);
	if (rc)
		ps_fail(w->errmsg, sizeof(w->errmsg), rc, "archive: %s", PS_OPTS_ERRMSG);
	/* the capture is read twice: once here, once to pack it */
	else if (!capture || strcmp(capture, "-") == 0)
		rc = ps_fail(w->errmsg, sizeof(w->errmsg), -ESPIPE,
		             "archive: the input must be a file, not standard input");
	else if (ps_path_is_archive(capture))
		rc = ps_fail(w->errmsg, sizeof(w->errmsg), -EINVAL,
		             "archive: %s is an archive already", capture);
	else if (!(w->capture = strdup(capture)))
		rc = ps_fail(w->errmsg, sizeof(w->errmsg), -ENOMEM, "archive: out of memory");
	if (rc)
		log_line(w, PS_LOG_ERROR, "%s", w->errmsg);
	/* a quarter of the descriptors at most: the session opens files too */
	struct rlimit limit;
	w->held_max = HELD_FILES_MAX;
	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
	    limit.rlim_cur / 4 < w->held_max)
		w->held_max = (size_t)(limit.rlim_cur / 4);
	if (!rc) {
		w->session_opts.file_used = note_file;
		w->session_opts.file_used_ctx = w;
		/* the answers of debug files are kept when the files are left
		 * out; a failure is said by the session, through the same log */
		rc = w->opts.with_debuginfo
		             ? ps_session_open(capture, &w->session_opts, &w->session)
		             : ps_session_open_recording(capture, &w->session_opts, &w->session);
	}
	if (rc) {
		ps_archive_writer_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

void ps_archive_writer_close(struct ps_archive_writer *w)
{
	if (!w)
		return;
	ps_session_close(w->session);
	for (size_t i = 0; i < w->nr_files; i++) {
		free(w->files[i].path);
		free(w->files[i].file);
		if (w->files[i].fd >= 0)
			close(w->files[i].fd);
	}
	free(w->files);
	free(w->capture);
	free(w);
}

struct ps_session *ps_archive_writer_session(struct ps_archive_writer *w)
{
	return w->session;
}

const char *ps_archive_writer_errmsg(const struct ps_archive_writer *w)
{
	return w ? w->errmsg : "archive: out of memory";
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The build-id cache the symbols module uses when none is given. */
static char *default_buildid_dir(void)
{
	const char *home = getenv("HOME");
	char *dir = malloc((home ? strlen(home) : 0) + sizeof("/.debug"));

	if (dir)
		sprintf(dir, "%s%s", home ? home : "", home ? "/.debug" : ".debug");
	return dir;
}

/* A debug file left out: the answers it gave, which the archive carries
 * in its place (*text). 1 when there are some, 0 when it gave none
 * (nothing to carry), -ENOMEM. */
static int names_in_place(struct ps_archive_writer *w, const char *path, struct ps_strbuf *text)
{
	int rc = ps_session_recorded_names(w->session, path, text);

	if (rc == 0)
		log_line(w, PS_LOG_INFO,
		         "archive: %s: separate debug file left out (it named nothing)", path);
	return rc < 0 ? -ENOMEM : rc > 0;
}

/* path is the capture or one of its folder's files, packed as perf.data */
static bool is_capture_file(const struct ps_reader *reader, const char *input, const char *path)
{
	const char *file;

	if (strcmp(path, input) == 0)
		return true;
	for (size_t i = 0; (file = ps_reader_folder_file(reader, i)) != NULL; i++)
		if (strcmp(path, file) == 0)
			return true;
	return false;
}

/* Manifest and file list from what the session read, then the archive.
 * The number of files, or -errno with the message set. */
static int pack(struct ps_archive_writer *w, const char *output, int64_t mtime)
{
	const struct ps_session_opts *opts = &w->session_opts;
	const char *input = w->capture;
	struct ps_manifest m = { .perf_data_mtime = mtime };
	const struct ps_reader *reader = ps_session_reader(w->session);
	size_t nr_folder = 0;

	/* a folder's files (perf record --threads, --kcore), in the order
	 * they were read: the reader takes them in that order from the archive */
	while (ps_reader_folder_file(reader, nr_folder))
		nr_folder++;
	/* by manifest index: the files, and the tables of symbol answers in
	 * memory */
	const char **files = calloc(w->nr_files + nr_folder + 1, sizeof(*files));
	struct ps_archive_blob *blobs = calloc(w->nr_files + nr_folder + 1, sizeof(*blobs));
	struct ps_strbuf *names = calloc(w->nr_files + 1, sizeof(*names));
	size_t nr_names = 0;
	char err[PS_MSG_MAX];
	int rc = -ENOMEM;

	if (!blobs || !names)
		goto out;
	m.perf_data_path = strdup(input);
	m.symfs = dup_or_null(opts->symfs);
	m.buildid_dir = opts->buildid_dir ? strdup(opts->buildid_dir) : default_buildid_dir();
	m.perf_map_dir = dup_or_null(opts->perf_map_dir);
	if (!files || !m.perf_data_path || (opts->symfs && !m.symfs) || !m.buildid_dir ||
	    (opts->perf_map_dir && !m.perf_map_dir))
		goto out;
	for (size_t i = 0; i < (nr_folder ? nr_folder : 1); i++) {
		const char *file = nr_folder ? ps_reader_folder_file(reader, i) : input;

		if (ps_manifest_add(&m, PS_ARCHIVE_PERF_DATA, file))
			goto out;
		files[m.nr_files - 1] = file;
	}
	for (size_t i = 0; i < w->nr_files; i++) {
		/* the capture itself is packed already (as perf.data) */
		if (is_capture_file(reader, input, w->files[i].path))
			continue;
		enum ps_archive_kind kind = archive_kind(w->files[i].kind);
		const char *file = w->files[i].file;

		if (kind == PS_ARCHIVE_DEBUGINFO && !w->opts.with_debuginfo) {
			rc = names_in_place(w, w->files[i].path, &names[nr_names]);
			if (rc < 0)
				goto out;
			if (rc == 0)
				continue;
			kind = PS_ARCHIVE_NAMES;
		}
		rc = -ENOMEM;
		if (ps_manifest_add(&m, kind, w->files[i].path))
			goto out;
		files[m.nr_files - 1] = file;
		if (kind == PS_ARCHIVE_NAMES) {
			blobs[m.nr_files - 1].data = names[nr_names].buf;
			blobs[m.nr_files - 1].size = names[nr_names].len;
			nr_names++;
		}
		if (w->opts.packed)
			w->opts.packed(w->opts.packed_ctx, ps_archive_kind_name(kind),
			               w->files[i].path);
	}
	rc = ps_archive_write(output, &m, files, blobs, err, sizeof(err));
	if (rc)
		ps_fail(w->errmsg, sizeof(w->errmsg), rc, "archive: %s", err);
	else
		rc = (int)m.nr_files;
	goto done;
out:
	if (rc == -ENOMEM)
		ps_fail(w->errmsg, sizeof(w->errmsg), rc, "archive: out of memory");
done:
	for (size_t i = 0; names && i <= nr_names; i++)
		ps_strbuf_release(&names[i]);
	free(names);
	free(blobs);
	free(files);
	ps_manifest_release(&m);
	return rc;
}

int ps_archive_writer_write(struct ps_archive_writer *w, const char *output)
{
	const struct ps_stack *stack;
	struct stat st;
	int rc;

	/* the kernel's symbols are packed whenever perf script on the
	 * archive would load them: a printed sample of a native capture
	 * does, kernel frame or not */
	while ((rc = ps_session_next(w->session, &stack)) > 0)
		ps_session_stack_printed(w->session);
	/* every process's interpreter and perf maps, sampled or not */
	if (rc == 0)
		rc = ps_session_python_processes(w->session, note_python, w);
	if (rc < 0)
		return ps_fail(w->errmsg, sizeof(w->errmsg), rc, "%s",
		               ps_session_errmsg(w->session));
	if (w->nomem)
		return ps_fail(w->errmsg, sizeof(w->errmsg), -ENOMEM, "archive: out of memory");
	/* what perf prints as "captured on": the file's time, a folder's
	 * header file's */
	const char *header = ps_reader_header_file(ps_session_reader(w->session));

	if (stat(header, &st) != 0)
		return ps_fail(w->errmsg, sizeof(w->errmsg), -errno, "archive: %s: %s", header,
		               strerror(errno));
	/* the session stays open: its copy of our vdso may be packed */
	return pack(w, output, (int64_t)st.st_mtime);
}
