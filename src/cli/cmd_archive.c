/* `pystitch archive`: one file with the capture and every file its
 * analysis reads (ELF objects, kernel symbols, perf maps, jitdumps), found
 * by reading the whole capture once as `pystitch script` would and noting
 * each file the session opens. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive.h"
#include "base/strbuf.h"
#include "cli/cli.h"
#include "session/session.h"

static const char archive_usage[] =
        "usage: pystitch archive [-i FILE] [-o ARCHIVE] [options]\n"
        "\n"
        "Pack a perf.data capture and every file needed to analyse it into one\n"
        "zstd-compressed tar: the ELF files the samples ran in (as found by\n"
        "path, --symfs or the build-id cache), the kernel symbols, and the perf\n"
        "maps and jitdumps of the processes. The capture is read once to learn\n"
        "which files are used. Every command reads the archive with -i in place\n"
        "of perf.data, on any machine, and prints what it prints here: the\n"
        "symbol options below are stored in the archive and replace the\n"
        "reader's own. Files that cannot be found are named in a warning.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data)\n"
        "  -o, --output FILE     archive to write (default: the input's name with\n"
        "                        .pst added)\n"
        "      --with-debuginfo  also pack the separate debug files symbols were\n"
        "                        read from (.gnu_debuglink, /usr/lib/debug, the\n"
        "                        build-id cache's debug); without it the archive\n"
        "                        holds only the answers they gave for the addresses\n"
        "                        this capture reached (names, inline frames, source\n"
        "                        lines), which is what every command prints from it\n"
        "      --symfs DIR       look for the recorded files under DIR\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
        "  -k, --vmlinux FILE    kernel symbols from this vmlinux\n"
        "      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n"
        "                        /proc/kallsyms when the capture was made here)\n"
        "      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n"
        "                        then next to the capture, then in /tmp\n"
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr; list the packed files\n"
        "  -h, --help            this text\n";

enum {
	OPT_WITH_DEBUGINFO = PS_OPT_COMMAND_FIRST,
	OPT_SYMFS,
	OPT_BUILDID_DIR,
	OPT_KALLSYMS,
	OPT_PERF_MAP_DIR,
};

static void warn(struct ps_cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct ps_cli *cli, const char *fmt, ...)
{
	char msg[4200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps_cli_log(cli, PS_LOG_WARN, msg);
}

struct used_file {
	char *path, *file;
	enum ps_file_kind kind;
};

struct collector {
	struct ps_cli *cli;
	struct used_file *files;
	size_t nr, cap;
	bool nomem;
};

static void note_file(void *ctx, const char *path, const char *file, enum ps_file_kind kind)
{
	struct collector *c = ctx;

	if (!file) {
		warn(c->cli, "archive: %s: no file found, left out", path);
		return;
	}
	for (size_t i = 0; i < c->nr; i++) {
		if (strcmp(c->files[i].path, path) == 0) {
			/* a file used both ways is needed as code */
			if (kind == PS_FILE_ELF)
				c->files[i].kind = kind;
			return;
		}
	}
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct used_file *files = realloc(c->files, cap * sizeof(*files));

		if (!files) {
			c->nomem = true;
			return;
		}
		c->files = files;
		c->cap = cap;
	}
	c->files[c->nr] = (struct used_file){ strdup(path), strdup(file), kind };
	if (!c->files[c->nr].path || !c->files[c->nr].file) {
		free(c->files[c->nr].path);
		free(c->files[c->nr].file);
		c->nomem = true;
		return;
	}
	c->nr++;
}

static void note_python(void *ctx, const struct ps_python_process *process)
{
	struct collector *c = ctx;

	if (process->missing)
		ps_cli_log(c->cli, PS_LOG_WARN, process->missing);
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
		return PS_ARCHIVE_PERF_MAP;
	case PS_FILE_JITDUMP:
		return PS_ARCHIVE_JITDUMP;
	case PS_FILE_ELF:
	default:
		return PS_ARCHIVE_ELF;
	}
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
static int names_in_place(struct ps_cli *cli, struct ps_session *session, const char *path,
                          struct ps_strbuf *text)
{
	int rc = ps_session_recorded_names(session, path, text);

	if (rc == 0) {
		char msg[4200];

		snprintf(msg, sizeof(msg),
		         "archive: %s: separate debug file left out (it named nothing)", path);
		ps_cli_log(cli, PS_LOG_INFO, msg);
	}
	return rc < 0 ? -ENOMEM : rc > 0;
}

/* Manifest and file list from what the session read. */
static int pack(struct ps_cli *cli, struct ps_session *session, const struct ps_session_opts *opts,
                struct collector *c, bool with_debuginfo, const char *output, int64_t mtime)
{
	struct ps_manifest m = { .perf_data_mtime = mtime };
	const char **files = calloc(c->nr + 1, sizeof(*files));
	/* the tables of symbol answers, in memory, by manifest index */
	struct ps_archive_blob *blobs = calloc(c->nr + 1, sizeof(*blobs));
	struct ps_strbuf *names = calloc(c->nr + 1, sizeof(*names));
	size_t nr_names = 0;
	char err[PS_ARCHIVE_ERRMSG_MAX];
	int rc = -ENOMEM;

	if (!blobs || !names)
		goto out;
	m.perf_data_path = strdup(cli->input);
	m.symfs = dup_or_null(opts->symfs);
	m.buildid_dir = opts->buildid_dir ? strdup(opts->buildid_dir) : default_buildid_dir();
	m.perf_map_dir = dup_or_null(opts->perf_map_dir);
	if (!files || !m.perf_data_path || (opts->symfs && !m.symfs) || !m.buildid_dir ||
	    (opts->perf_map_dir && !m.perf_map_dir) ||
	    ps_manifest_add(&m, PS_ARCHIVE_PERF_DATA, cli->input))
		goto out;
	files[0] = cli->input;
	for (size_t i = 0; i < c->nr; i++) {
		/* the capture itself is packed already (as perf.data) */
		if (strcmp(c->files[i].path, cli->input) == 0)
			continue;
		enum ps_archive_kind kind = archive_kind(c->files[i].kind);
		const char *file = c->files[i].file;

		if (kind == PS_ARCHIVE_DEBUGINFO && !with_debuginfo) {
			rc = names_in_place(cli, session, c->files[i].path, &names[nr_names]);
			if (rc < 0)
				goto out;
			if (rc == 0)
				continue;
			kind = PS_ARCHIVE_NAMES;
		}
		rc = -ENOMEM;
		if (ps_manifest_add(&m, kind, c->files[i].path))
			goto out;
		files[m.nr_files - 1] = file;
		if (kind == PS_ARCHIVE_NAMES) {
			blobs[m.nr_files - 1].data = names[nr_names].buf;
			blobs[m.nr_files - 1].size = names[nr_names].len;
			nr_names++;
		}
		if (cli->verbose)
			fprintf(stderr, "%s: archive: %s %s\n", cli->program,
			        ps_archive_kind_name(kind), c->files[i].path);
	}
	rc = ps_archive_write(output, &m, files, blobs, err, sizeof(err));
	if (rc) {
		ps_cli_error(cli, "archive: %s", err);
		goto done;
	}
	struct stat st;
	printf("%s: %zu files, %lld bytes\n", output, m.nr_files,
	       stat(output, &st) == 0 ? (long long)st.st_size : -1LL);
	goto done;
out:
	if (rc == -ENOMEM)
		ps_cli_error(cli, "archive: out of memory");
done:
	for (size_t i = 0; names && i <= nr_names; i++)
		ps_strbuf_release(&names[i]);
	free(names);
	free(blobs);
	free(files);
	ps_manifest_release(&m);
	return rc;
}

/* Checked before the session unpacks it only to be refused. */
static bool is_archive(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool archive = fd >= 0 && ps_archive_detect(fd);

	if (fd >= 0)
		close(fd);
	return archive;
}

int ps_cmd_archive(struct ps_cli *cli, int argc, char **argv)
{
	static const struct option options[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "with-debuginfo", no_argument, NULL, OPT_WITH_DEBUGINFO },
		{ "symfs", required_argument, NULL, OPT_SYMFS },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "perf-map-dir", required_argument, NULL, OPT_PERF_MAP_DIR },
		{ "force", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct collector c = { .cli = cli };
	struct ps_session_opts opts = {
		.sz = sizeof(opts),
		.log = ps_cli_log,
		.log_ctx = cli,
		.file_used = note_file,
		.file_used_ctx = &c,
	};
	struct ps_session *session = NULL;
	const struct ps_stack *stack;
	const char *output = NULL;
	char *default_output = NULL;
	bool with_debuginfo = false;
	int status = PS_EXIT_OK, opt, ret;
	struct stat st;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "i:o:k:fqvh", options, NULL)) != -1) {
		switch (opt) {
		case 'i':
			cli->input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_WITH_DEBUGINFO:
			with_debuginfo = true;
			break;
		case OPT_SYMFS:
			opts.symfs = optarg;
			break;
		case OPT_BUILDID_DIR:
			opts.buildid_dir = optarg;
			break;
		case 'k':
			opts.vmlinux = optarg;
			break;
		case OPT_KALLSYMS:
			opts.kallsyms = optarg;
			break;
		case OPT_PERF_MAP_DIR:
			opts.perf_map_dir = optarg;
			break;
		case 'f':
			opts.force = cli->force = true;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		case 'h':
			fputs(archive_usage, stdout);
			return PS_EXIT_OK;
		default:
			fputs(archive_usage, stderr);
			return PS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		ps_cli_error(cli, "archive: unexpected argument '%s'", argv[optind]);
		return PS_EXIT_USAGE;
	}
	/* the capture is read twice: once here, once to pack it */
	if (strcmp(cli->input, "-") == 0) {
		ps_cli_error(cli, "archive: the input must be a file, not standard input");
		return PS_EXIT_USAGE;
	}
	if (!output) {
		default_output = malloc(strlen(cli->input) + sizeof(".pst"));
		if (!default_output) {
			ps_cli_error(cli, "archive: out of memory");
			return PS_EXIT_USAGE;
		}
		sprintf(default_output, "%s.pst", cli->input);
		output = default_output;
	}
	if (is_archive(cli->input)) {
		ps_cli_error(cli, "archive: %s is an archive already", cli->input);
		status = PS_EXIT_USAGE;
		goto out;
	}
	/* the answers of debug files are kept when the files are left out */
	ret = with_debuginfo ? ps_session_open(cli->input, &opts, &session)
	                     : ps_session_open_recording(cli->input, &opts, &session);
	if (ret) {
		/* ps_cli_log said why */
		status = ps_cli_status(ret);
		goto out;
	}
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	while ((ret = ps_session_next(session, &stack)) > 0)
		ps_progress_tick(cli->progress, ps_session_reader(session));
	ps_progress_end(cli->progress);
	/* every process's interpreter and perf maps, sampled or not */
	if (ret == 0)
		ret = ps_session_python_processes(session, note_python, &c);
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
		goto out;
	}
	if (c.nomem) {
		ps_cli_error(cli, "archive: out of memory");
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (stat(cli->input, &st) != 0) {
		ps_cli_error(cli, "archive: %s: %s", cli->input, strerror(errno));
		status = PS_EXIT_BAD_INPUT;
		goto out;
	}
	/* the session stays open: its copy of our vdso may be packed */
	ret = pack(cli, session, &opts, &c, with_debuginfo, output, (int64_t)st.st_mtime);
	if (ret)
		status = ret == -ENOMEM ? PS_EXIT_USAGE : PS_EXIT_BAD_INPUT;
out:
	ps_session_close(session);
	for (size_t i = 0; i < c.nr; i++) {
		free(c.files[i].path);
		free(c.files[i].file);
	}
	free(c.files);
	free(default_output);
	return status;
}
