/* What `pystitch record` writes once perf is done: one output, in the
 * format -o's name or --format asks for, made by the command that makes
 * it (flamegraph, pprof, collapse, script, speedscope) or by the archive
 * writer; without -o, an archive and, on stderr, the hottest Python
 * functions and the commands that turn the archive into each output. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record_priv.h"

#define SUMMARY_ROWS 10
#define MAX_FUNCTIONS (1u << 20) /* distinct Python functions counted */

static const struct {
	enum record_format format;
	const char *name, *extension;
} formats[] = {
	{ RECORD_FORMAT_ARCHIVE, "archive", ".pst" },
	{ RECORD_FORMAT_SVG, "svg", ".svg" },
	{ RECORD_FORMAT_PPROF, "pprof", ".pb.gz" },
	{ RECORD_FORMAT_TEXT, "text", ".txt" },
	{ RECORD_FORMAT_FOLDED, "folded", ".folded" },
	{ RECORD_FORMAT_SPEEDSCOPE, "speedscope", ".json" },
};
#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

bool record_format_of_path(const char *path, enum record_format *format)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < NR_FORMATS; i++) {
		size_t ext = strlen(formats[i].extension);

		if (len > ext && strcmp(path + len - ext, formats[i].extension) == 0) {
			*format = formats[i].format;
			return true;
		}
	}
	return false;
}

bool record_format_of_name(const char *name, enum record_format *format)
{
	for (size_t i = 0; i < NR_FORMATS; i++)
		if (strcmp(name, formats[i].name) == 0) {
			*format = formats[i].format;
			return true;
		}
	return false;
}

const char *record_format_extension(enum record_format format)
{
	for (size_t i = 0; i < NR_FORMATS; i++)
		if (formats[i].format == format)
			return formats[i].extension;
	return "";
}

/* ---- the hottest Python functions ------------------------------------ */

struct function_count {
	char *name; /* "py::qualname:file" */
	uint64_t self, total;
	uint64_t last_sample; /* the sample that counted it in total last */
};

struct summary {
	struct function_count *slots; /* open addressing by name */
	size_t nr_slots, nr_used;
	uint64_t samples, python_samples;
	uint64_t cut; /* stacks the stack-copy limit cut ([truncated]) */
};

static uint64_t name_hash(const char *s)
{
	uint64_t hash = 0xcbf29ce484222325ull;

	for (; *s; s++)
		hash = (hash ^ (unsigned char)*s) * 0x100000001b3ull;
	return hash;
}

static int grow(struct summary *sum)
{
	size_t nr = sum->nr_slots ? 2 * sum->nr_slots : 256;
	struct function_count *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < sum->nr_slots; i++) {
		size_t at;

		if (!sum->slots[i].name)
			continue;
		for (at = name_hash(sum->slots[i].name) & (nr - 1); slots[at].name;
		     at = (at + 1) & (nr - 1))
			;
		slots[at] = sum->slots[i];
	}
	free(sum->slots);
	sum->slots = slots;
	sum->nr_slots = nr;
	return 0;
}

static struct function_count *function_of(struct summary *sum, const char *name)
{
	size_t at;

	if ((sum->nr_used + 1) * 2 > sum->nr_slots) {
		if (sum->nr_used >= MAX_FUNCTIONS || grow(sum))
			return NULL;
	}
	for (at = name_hash(name) & (sum->nr_slots - 1); sum->slots[at].name;
	     at = (at + 1) & (sum->nr_slots - 1))
		if (strcmp(sum->slots[at].name, name) == 0)
			return &sum->slots[at];
	sum->slots[at].name = strdup(name);
	if (!sum->slots[at].name)
		return NULL;
	sum->nr_used++;
	return &sum->slots[at];
}

/* One sample: its leaf-most Python frame runs (self), every Python
 * function on its stack is in it (total, once however deep). */
static void summary_add(struct summary *sum, const struct ps_stack *stack)
{
	bool leaf = true;

	sum->samples++;
	for (size_t i = 0; i < stack->nr_frames; i++) {
		const struct ps_frame *frame = &stack->frames[i];
		struct function_count *count;

		if (frame->truncated)
			sum->cut++;
		if (!frame->python || !frame->sym)
			continue;
		count = function_of(sum, frame->sym);
		if (!count)
			return;
		if (leaf) {
			count->self++;
			sum->python_samples++;
			leaf = false;
		}
		if (count->last_sample != sum->samples) {
			count->total++;
			count->last_sample = sum->samples;
		}
	}
}

static int by_self(const void *a, const void *b)
{
	const struct function_count *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static void summary_print(const struct ps_cli *cli, const struct record_settings *settings,
                          struct summary *sum)
{
	size_t rows = 0;

	if (!sum->samples)
		return;
	fprintf(stderr, "%s: record: %llu samples, %llu (%.1f%%) in Python code\n", cli->program,
	        (unsigned long long)sum->samples, (unsigned long long)sum->python_samples,
	        100.0 * (double)sum->python_samples / (double)sum->samples);
	/* one stack in a hundred cut short is worth a bigger copy */
	if (sum->cut * 100 >= sum->samples && !settings->frame_pointers)
		fprintf(stderr,
		        "%s: record: %.1f%% of the stacks were deeper than the %u-byte stack copy "
		        "([truncated])%s\n",
		        cli->program, 100.0 * (double)sum->cut / (double)sum->samples,
		        settings->stack_size,
		        settings->stack_size < 65528
		                ? ": record with --call-graph dwarf,65528 to keep more"
		                : "");
	if (!sum->python_samples)
		return;
	qsort(sum->slots, sum->nr_slots, sizeof(*sum->slots), by_self);
	fprintf(stderr, "    self   total  Python function (file)\n");
	for (size_t i = 0; i < sum->nr_slots && rows < SUMMARY_ROWS; i++) {
		const struct function_count *c = &sum->slots[i];
		const char *name, *colon;

		if (!c->name || !c->self)
			continue;
		name = strncmp(c->name, "py::", 4) == 0 ? c->name + 4 : c->name;
		colon = strchr(name, ':');
		fprintf(stderr, "  %5.1f%%  %5.1f%%  %.*s (%s)\n",
		        100.0 * (double)c->self / (double)sum->samples,
		        100.0 * (double)c->total / (double)sum->samples,
		        (int)(colon ? (size_t)(colon - name) : strlen(name)), name,
		        colon ? colon + 1 : "?");
		rows++;
	}
}

static void summary_release(struct summary *sum)
{
	for (size_t i = 0; i < sum->nr_slots; i++)
		free(sum->slots[i].name);
	free(sum->slots);
}

/* ---- writing --------------------------------------------------------- */

static void packed(void *ctx, const char *kind, const char *path)
{
	const struct ps_cli *cli = ctx;

	if (cli->verbose > 1)
		fprintf(stderr, "%s: record: archive: %s %s\n", cli->program, kind, path);
}

static int write_archive(struct ps_cli *cli, struct ps_cli_args *args, const char *capture,
                         const char *output, struct summary *sum)
{
	struct ps_archive_writer *writer = NULL;
	const struct ps_stack *stack;
	struct ps_session *session;
	int status = PS_EXIT_OK, ret;

	args->opts.log = ps_cli_log;
	args->opts.log_ctx = cli;
	ret = ps_archive_writer_open(capture,
	                             &(struct ps_archive_writer_opts){
	                                     .sz = sizeof(struct ps_archive_writer_opts),
	                                     .session = &args->opts,
	                                     .packed = packed,
	                                     .packed_ctx = cli,
	                             },
	                             &writer);
	if (ret)
		return ps_cli_status(ret); /* ps_cli_log said why */
	session = ps_archive_writer_session(writer);
	ps_progress_start(cli->progress, "samples", cli->quiet, false);
	while ((ret = ps_session_next(session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(session));
		if (sum)
			summary_add(sum, stack);
	}
	ps_progress_end(cli->progress);
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(session));
		status = ps_cli_status(ret);
	} else if ((ret = ps_archive_writer_write(writer, output)) < 0) {
		ps_cli_error(cli, "%s", ps_archive_writer_errmsg(writer));
		status = ps_cli_status(ret);
	}
	ps_archive_writer_close(writer);
	return status;
}

/* perf script text into output: the script command writes to standard
 * output, so standard output is the output file while it runs. */
static int write_text(struct ps_cli *cli, struct ps_cli_args *args, const char *output)
{
	struct ps_cli_output out;
	int saved, status, ret;

	ret = ps_cli_output_open(&out, output);
	if (ret) {
		ps_cli_command_error(cli, "cannot create %s: %s", output, strerror(-ret));
		return PS_EXIT_USAGE;
	}
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(ps_output_file_fd(out.file), STDOUT_FILENO) < 0) {
		ps_cli_command_error(cli, "cannot write %s: %s", output, strerror(errno));
		if (saved >= 0)
			close(saved);
		ps_cli_output_close(&out, false);
		return PS_EXIT_USAGE;
	}
	status = ps_cli_run_command(cli, &ps_cmd_script, args, NULL, NULL);
	if (fflush(stdout) != 0 && status == PS_EXIT_OK) {
		ps_cli_command_error(cli, "cannot write %s: %s", output, strerror(errno));
		status = PS_EXIT_USAGE;
	}
	dup2(saved, STDOUT_FILENO);
	close(saved);
	ret = ps_cli_output_close(&out, status == PS_EXIT_OK);
	if (ret && status == PS_EXIT_OK) {
		ps_cli_command_error(cli, "cannot write %s: %s", output, strerror(-ret));
		status = PS_EXIT_USAGE;
	}
	return status;
}

static void print_conversions(const struct ps_cli *cli, const char *archive)
{
	size_t len = strlen(archive);
	int stem = (int)(len > 4 && strcmp(archive + len - 4, ".pst") == 0 ? len - 4 : len);

	fprintf(stderr,
	        "%s: record: turn it into other outputs with:\n"
	        "  pystitch flamegraph -i %s -o %.*s.svg\n"
	        "  pystitch pprof -i %s -o %.*s.pb.gz\n"
	        "  pystitch collapse -i %s -o %.*s.folded\n"
	        "  pystitch script -i %s > %.*s.txt\n",
	        cli->program, archive, stem, archive, archive, stem, archive, archive, stem,
	        archive, archive, stem, archive);
	fprintf(stderr, "  pystitch speedscope -i %s -o %.*s.json\n", archive, stem, archive);
}

int record_write_output(struct ps_cli *cli, struct ps_cli_args *args,
                        const struct record_settings *settings, const char *capture,
                        const char *maps_dir, const char *output, bool summary)
{
	const char *input = cli->input;
	const struct ps_cli_command *command = NULL;
	struct summary sum = { 0 };
	const char *dirs[1] = { maps_dir };
	/* Python frames by line where the capture has lines (the lines
	 * show only where pystitch_perf's side file is) */
	static const char *const lines[] = { "lines", NULL };
	const char *const *options = NULL;
	struct stat st;
	int status = PS_EXIT_OK;

	cli->input = capture;
	if (maps_dir) {
		args->opts.perf_map_dir = maps_dir;
		args->opts.perf_map_dirs = dirs;
		args->opts.nr_perf_map_dirs = 1;
	}
	switch (settings->format) {
	case RECORD_FORMAT_ARCHIVE:
		status = write_archive(cli, args, capture, output, summary ? &sum : NULL);
		break;
	case RECORD_FORMAT_TEXT:
		status = write_text(cli, args, output);
		break;
	case RECORD_FORMAT_SVG:
		command = &ps_cmd_flamegraph;
		options = lines;
		break;
	case RECORD_FORMAT_PPROF:
		command = &ps_cmd_pprof;
		break;
	case RECORD_FORMAT_FOLDED:
		command = &ps_cmd_collapse;
		options = lines;
		break;
	case RECORD_FORMAT_SPEEDSCOPE:
		command = &ps_cmd_speedscope;
		break;
	}
	if (command)
		status = ps_cli_run_command(cli, command, args, output, options);
	args->opts.perf_map_dir = NULL;
	args->opts.perf_map_dirs = NULL;
	args->opts.nr_perf_map_dirs = 0;
	cli->input = input;
	if (status == PS_EXIT_OK && !cli->quiet) {
		ps_progress_clear(cli->progress);
		fprintf(stderr, "%s: record: wrote %s (%.1f MB)\n", cli->program, output,
		        stat(output, &st) == 0 ? (double)st.st_size / (1 << 20) : 0.0);
		if (summary) {
			summary_print(cli, settings, &sum);
			print_conversions(cli, output);
		}
	}
	summary_release(&sum);
	return status;
}
