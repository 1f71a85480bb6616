/* The pystitch program: sub-commands and what they share. */
#ifndef PS_CLI_CLI_H
#define PS_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include "base/output_file.h"
#include "output/output.h"
#include "pystitch/pystitch.h"

/* Exit statuses */
#define PS_EXIT_OK 0
#define PS_EXIT_USAGE 1 /* bad command line, or the environment failed us */
#define PS_EXIT_BAD_INPUT 2 /* the capture (or a file it needs) is damaged */

/* The progress line on stderr (progress.c). */
struct ps_progress {
	bool enabled, shown;
	uint64_t start_ns, next_ns;
	uint64_t items; /* samples or records so far */
	const char *what; /* "samples" or "records" */
};

struct ps_cli {
	const char *program; /* "pystitch" or "perf-pystitch" */
	const char *input; /* -i; default perf.data */
	bool force;
	bool quiet; /* -q: no progress line, no warnings */
	int verbose;
	/* the progress line; a pointer, so that the error printers, which
	 * take a const cli, can erase it */
	struct ps_progress *progress;
};

/* Log callback the program installs in the library. */
void ps_cli_log(void *ctx, enum ps_log_level level, const char *msg);
/* Print "pystitch: <msg>" on stderr. */
void ps_cli_error(const struct ps_cli *cli, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Open the capture named by cli->input with the given order; prints the
 * error and returns NULL on failure (then *status is set). */
struct ps_reader *ps_cli_open(const struct ps_cli *cli, enum ps_order order, int *status);
/* Start again with glibc's heap on transparent huge pages, where the
 * kernel gives them only on request (hugepages.c); returns when it does
 * not. */
void ps_cli_use_huge_pages(char **argv);
/* Map a library error to an exit status. */
int ps_cli_status(int err);

/* ---- options several commands share (options.c) ---------------------- */

/* Session options: sample filters, where symbols come from, Python frames,
 * threads. A command lists PS_CLI_SESSION_OPTIONS in its getopt_long table
 * (and "c:C:j:k:" in its short options) and passes every option it does not know
 * itself to ps_cli_session_option(). The lists the filters point to are
 * owned here: ps_cli_session_args_release() frees them. */
enum {
	PS_OPT_NO_INLINE = 256,
	PS_OPT_PID,
	PS_OPT_TID,
	PS_OPT_COMM,
	PS_OPT_TIME,
	PS_OPT_SYMFS,
	PS_OPT_BUILDID_DIR,
	PS_OPT_KALLSYMS,
	PS_OPT_PYTHON,
	PS_OPT_PERF_MAP_DIR,
	PS_OPT_UNWINDER,
	PS_OPT_COMMAND_FIRST = 300, /* a command's own long options start here */
};

/* clang-format off */
#define PS_CLI_SESSION_OPTIONS \
	{ "no-inline", no_argument, NULL, PS_OPT_NO_INLINE }, \
	{ "pid", required_argument, NULL, PS_OPT_PID }, \
	{ "tid", required_argument, NULL, PS_OPT_TID }, \
	{ "comm", required_argument, NULL, PS_OPT_COMM }, \
	{ "comms", required_argument, NULL, 'c' }, \
	{ "cpu", required_argument, NULL, 'C' }, \
	{ "time", required_argument, NULL, PS_OPT_TIME }, \
	{ "symfs", required_argument, NULL, PS_OPT_SYMFS }, \
	{ "buildid-dir", required_argument, NULL, PS_OPT_BUILDID_DIR }, \
	{ "vmlinux", required_argument, NULL, 'k' }, \
	{ "kallsyms", required_argument, NULL, PS_OPT_KALLSYMS }, \
	{ "python", required_argument, NULL, PS_OPT_PYTHON }, \
	{ "perf-map-dir", required_argument, NULL, PS_OPT_PERF_MAP_DIR }, \
	{ "unwinder", required_argument, NULL, PS_OPT_UNWINDER }, \
	{ "jobs", required_argument, NULL, 'j' }
/* Their lines in the --help of the commands that take them all as
 * `script` does (collapse, flamegraph, pprof). */
#define PS_CLI_SESSION_HELP \
	"      --no-inline       no frames for inlined functions\n" \
	"      --pid LIST        only these process ids (comma-separated)\n" \
	"      --tid LIST        only these thread ids\n" \
	"  -c, --comm LIST       only threads with these names (also --comms)\n" \
	"  -C, --cpu LIST        only these CPUs (e.g. 0-3,6)\n" \
	"      --time START,END  only samples in this time range, in seconds as\n" \
	"                        `pystitch script` prints them\n" \
	"                        or, as perf, a share of the capture: P%/N (the\n" \
	"                        Nth slice of P%) or A%-B%\n" \
	"      --symfs DIR       look for the recorded files under DIR\n" \
	"      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n" \
	"  -k, --vmlinux FILE    kernel symbols from this vmlinux\n" \
	"      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n" \
	"                        /proc/kallsyms when the capture was made here)\n" \
	"      --python MODE     Python frames, as in `pystitch script`: merged\n" \
	"                        (default), all, native or only\n" \
	"      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n" \
	"                        then next to the capture, then in /tmp\n" \
	"      --unwinder KIND   how DWARF stacks are unwound: table (default;\n" \
	"                        compiled CFI rules, libdwfl for the frames they\n" \
	"                        cannot express) or libdwfl (libdwfl alone); the\n" \
	"                        output is the same\n" \
	PS_CLI_JOBS_HELP
#define PS_CLI_JOBS_HELP \
	"  -j, --jobs N          use N threads: N - 1 unwind (default: the online\n" \
	"                        CPUs, at most 16); the output is the same for any N\n"
/* clang-format on */

struct ps_cli_session_args {
	struct ps_session_opts opts;
	int32_t *pids, *tids, *cpus;
	char *comm_text;
	const char **comms;
};

/* Apply opt (with its argument) to a->opts. 1: it was a session option;
 * 0: it is not one; -1: bad value (the message, naming command, is
 * printed). */
int ps_cli_session_option(const struct ps_cli *cli, const char *command,
                          struct ps_cli_session_args *a, int opt, const char *arg);
void ps_cli_session_args_release(struct ps_cli_session_args *a);
/* Defaults that depend on the machine, before ps_session_open(): --jobs
 * (the online CPUs, at most PS_CLI_MAX_DEFAULT_JOBS). */
void ps_cli_session_defaults(struct ps_cli_session_args *a);
/* Every worker keeps its own address-space model and unwind caches, so
 * memory grows with them: the default stops here. */
#define PS_CLI_MAX_DEFAULT_JOBS 16
/* Open cli->input with a's options (after ps_cli_session_defaults) into
 * *session, and hand every stack to add(ctx, stack) with the progress line
 * drawn; add returns 0, or -ENOMEM to stop ("COMMAND: out of memory").
 * *status is the exit status: PS_EXIT_OK, or that of the first error,
 * which is printed. Returns whether what was added may be written: also
 * for a capture damaged part-way (its readable part was added, and
 * commands write it as script prints it); not when it could not be
 * opened or add failed. The caller closes *session (set even then). */
bool ps_cli_session_run(struct ps_cli *cli, const char *command, struct ps_cli_session_args *a,
                        int (*add)(void *ctx, const struct ps_stack *stack), void *ctx,
                        struct ps_session **session, int *status);
/* "pystitch: COMMAND: bad value 'VALUE' for OPTION (see --help)"; returns
 * PS_EXIT_USAGE. */
int ps_cli_bad_value(const struct ps_cli *cli, const char *command, const char *option,
                     const char *value);

/* ---- files written with -o (output_file.c) ---------------------------- */

/* An output file being written (base/output_file.h: a regular file is
 * replaced by ps_cli_output_close(keep = true), anything else written
 * through), or standard output. */
struct ps_cli_output {
	const char *path; /* NULL: standard output */
	struct ps_output_file target;
	FILE *file;
	int error; /* errno of the first failed write */
};

/* Start writing path (NULL or "-": standard output). 0 or -errno. Call
 * it before reading the capture, so that a bad name fails at once. */
int ps_cli_output_open(struct ps_cli_output *o, const char *path);
/* false once a write has failed (o->error says why). */
bool ps_cli_output_write(struct ps_cli_output *o, const void *data, size_t len);
/* Finish: keep puts the file into place, else it is dropped. 0 or
 * -errno of the first failure. Safe to call again. */
int ps_cli_output_close(struct ps_cli_output *o, bool keep);

/* ---- progress on long runs (progress.c) ------------------------------ */

/* Arm the progress line: it is shown only when stderr is a terminal, not
 * quiet, and (output_on_stdout) stdout is not a terminal too. */
void ps_progress_start(struct ps_progress *p, const char *what, bool quiet, bool output_on_stdout);
/* One more sample (or record) read from reader; redraws when it is time to. */
void ps_progress_tick(struct ps_progress *p, const struct ps_reader *reader);
/* Erase the line (before another message on stderr). */
void ps_progress_clear(struct ps_progress *p);
/* Erase it for good: the run is over. */
void ps_progress_end(struct ps_progress *p);

/* collapse's and flamegraph's --per (enum ps_collapse_per) and --weight
 * (samples: false, period: true); -EINVAL for anything else. */
int ps_cli_parse_per(const char *text, enum ps_collapse_per *out);
int ps_cli_parse_weight(const char *text, bool *period);

int ps_cmd_script(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_dump(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_info(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_collapse(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_pprof(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_flamegraph(struct ps_cli *cli, int argc, char **argv);
int ps_cmd_archive(struct ps_cli *cli, int argc, char **argv);

#endif /* PS_CLI_CLI_H */
