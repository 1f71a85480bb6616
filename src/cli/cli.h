/* The pystitch program: a client of the public API (pystitch/pystitch.h
 * and pystitch/output.h) and of nothing else of the library. What its
 * commands share: the command table, the parser of the options several
 * commands take, messages, output files and the progress line. */
#ifndef PS_CLI_CLI_H
#define PS_CLI_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pystitch/pystitch.h>

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
	const char *program; /* "pystitch" or "perf pystitch" */
	const char *command; /* the command's name, for messages */
	const char *input; /* -i; default perf.data */
	bool input_given; /* -i was given */
	/* what pystitch record recorded ("python3 app.py"), the title of the
	 * flame graph or speedscope file it writes; NULL otherwise */
	const char *profile_name;
	bool force;
	bool quiet; /* -q: no progress line, no warnings */
	int verbose;
	/* the progress line; a pointer, so that the error printers, which
	 * take a const cli, can erase it */
	struct ps_progress *progress;
};

/* ---- the commands (commands.c) ---------------------------------------- */

/* The options several commands take, as a command's table entry names
 * them; -i, -f, -q, -v and -h every command takes. */
enum {
	PS_CLI_TAKES_SYMBOLS = 1u << 0, /* --symfs, --buildid-dir */
	PS_CLI_TAKES_KERNEL = 1u << 1, /* -k/--vmlinux, --kallsyms */
	PS_CLI_TAKES_PERF_MAPS = 1u << 2, /* --perf-map-dir */
	/* --no-inline, --python, --unwinder, -j/--jobs */
	PS_CLI_TAKES_STACKS = 1u << 3,
	/* --pid, --tid, -c/--comm/--comms, -C/--cpu, --time */
	PS_CLI_TAKES_FILTERS = 1u << 4,
	PS_CLI_TAKES_SESSION = PS_CLI_TAKES_SYMBOLS | PS_CLI_TAKES_KERNEL | PS_CLI_TAKES_PERF_MAPS |
	                       PS_CLI_TAKES_STACKS | PS_CLI_TAKES_FILTERS,
};

/* What the shared options set: the session's options, and the lists its
 * filters point to (owned here). */
struct ps_cli_args {
	struct ps_session_opts opts;
	int32_t *pids, *tids, *cpus;
	char *comm_text;
	const char **comms;
	const char **perf_map_dirs; /* every --perf-map-dir, in order */
	/* what follows the options of a command that runs one (pystitch
	 * record -- COMMAND ARGS...): argv's own, NULL-terminated; NULL if
	 * none */
	char **command;
	const char **symfs_dirs; /* every --symfs after the first */
};

/* A command's own long options take values from here up, so that they
 * never meet the shared ones (parse.c). */
#define PS_OPT_COMMAND_FIRST 300

/* One entry of the command table. The parser (parse.c) reads the shared
 * options the command takes into struct ps_cli_args and hands its own to
 * option(); then run() runs it. state is the command's own options:
 * state_size bytes, zeroed, then init() (may be NULL). */
struct ps_cli_command {
	const char *name;
	/* its lines in `pystitch --help`, continuation lines indented */
	const char *summary;
	/* `pystitch NAME --help`; the first line is its usage line */
	const char *help;
	unsigned takes; /* PS_CLI_TAKES_* */
	/* its options end at the first argument that is not one, which
	 * starts a command to run (args->command) */
	bool takes_command;
	/* its own options: long ones (ending with a zero entry; NULL: none)
	 * and short ones as getopt spells them ("F:G"; NULL: none) */
	const struct option *options;
	const char *short_options;
	size_t state_size;
	void (*init)(void *state);
	/* one of its own options: 0, or an exit status (after a message) */
	int (*option)(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
	              const char *arg);
	int (*run)(struct ps_cli *cli, struct ps_cli_args *args, void *state);
};

extern const struct ps_cli_command ps_cmd_record, ps_cmd_script, ps_cmd_collapse, ps_cmd_flamegraph,
        ps_cmd_pprof, ps_cmd_speedscope, ps_cmd_archive, ps_cmd_info, ps_cmd_dump;

/* The command of that name, or NULL. */
const struct ps_cli_command *ps_cli_find_command(const char *name);
/* Run command on cli->input with args (parsed for another command that
 * takes the same shared options) and its own options at their defaults,
 * but for -o output when output is not NULL and options ("lines",
 * "weight=period": its long options by name, NULL-terminated; may be
 * NULL): pystitch record's output. Its exit status. */
int ps_cli_run_command(struct ps_cli *cli, const struct ps_cli_command *command,
                       struct ps_cli_args *args, const char *output, const char *const *options);
/* The program: picks the command from argv and runs it. */
int ps_cli_main(int argc, char **argv);

/* ---- the option parser (parse.c) ------------------------------------- */

/* Parse argv (argv[0] is the command's name) for command into cli, args
 * and state. 0: run it; -1: --help was printed; else an exit status
 * (the message printed). */
int ps_cli_parse(struct ps_cli *cli, const struct ps_cli_command *command, int argc, char **argv,
                 struct ps_cli_args *args, void *state);
void ps_cli_args_release(struct ps_cli_args *args);
/* "pystitch: COMMAND: bad value 'VALUE' for OPTION (see --help)"; returns
 * PS_EXIT_USAGE. */
int ps_cli_bad_value(const struct ps_cli *cli, const char *option, const char *value);

/* The --help lines of the shared options, for the commands that take
 * them all as `script` does (collapse, flamegraph, pprof, speedscope). */
/* clang-format off */
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
	"      --symfs DIR       look for the recorded files under DIR (build-id\n" \
	"                        cache: DIR/.debug); may be given again (one\n" \
	"                        exported root file system per container): a file\n" \
	"                        is read from the first tree whose copy has its\n" \
	"                        recorded build-id\n" \
	"      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n" \
	"  -k, --vmlinux FILE    kernel symbols from this vmlinux\n" \
	"      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n" \
	"                        /proc/kallsyms when the capture was made here)\n" \
	"      --python MODE     Python frames, as in `pystitch script`: merged\n" \
	"                        (default), all, native or only\n" \
	"      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n" \
	"                        then next to the capture, then in /tmp; may be\n" \
	"                        given again (one per container): maps of any\n" \
	"                        name there are matched to processes by content\n" \
	"      --unwinder KIND   how DWARF stacks are unwound: table (default;\n" \
	"                        compiled CFI rules, libdwfl for the frames they\n" \
	"                        cannot express) or libdwfl (libdwfl alone); the\n" \
	"                        output is the same\n" \
	PS_CLI_JOBS_HELP
#define PS_CLI_JOBS_HELP \
	"  -j, --jobs N          use N threads: N - 1 unwind, and from 2 on one more\n" \
	"                        loads symbols ahead (default: the online CPUs, at\n" \
	"                        most 16; 1 for a capture of every CPU); the output\n" \
	"                        is the same for any N\n"
/* -f, -q, -v and -h as most commands say them */
#define PS_CLI_COMMON_HELP \
	"  -f, --force           stop quietly at a damaged record\n" \
	"  -q, --quiet           no progress line and no warnings on stderr\n" \
	"  -v, --verbose         more messages on stderr\n" \
	"  -h, --help            this text\n"
/* clang-format on */

/* collapse's and flamegraph's --per and --weight (samples: false, period:
 * true); -EINVAL for anything else. */
int ps_cli_parse_per(const char *text, enum ps_collapse_per *out);
int ps_cli_parse_weight(const char *text, bool *period);

/* ---- running a session (session.c) ------------------------------------ */

/* perf script's refusal of -C on a capture whose samples carry no CPU
 * (perf_session__cpu_bitmap): says so and returns PS_EXIT_USAGE, else
 * PS_EXIT_OK. */
/* fn for the stack as perf delivers it: once, or for a PERF_SAMPLE_READ
 * sample once per delivery (ps_stack.deliveries), as the delivered event
 * with its period; stops at fn's first non-zero return. */
int ps_cli_each_delivery(const struct ps_stack *stack,
                         int (*fn)(void *ctx, const struct ps_stack *stack), void *ctx);
int ps_cli_check_cpus(struct ps_cli *cli, const struct ps_cli_args *args,
                      struct ps_session *session);

/* Defaults that depend on the machine, before ps_session_open(): --jobs
 * (the online CPUs, at most PS_CLI_MAX_DEFAULT_JOBS; 1 for the capture
 * file input when perf recorded it on every CPU). */
void ps_cli_session_defaults(const struct ps_cli *cli, struct ps_cli_args *args, const char *input);
/* Every worker keeps its own address-space model and unwind caches, so
 * memory grows with them: the default stops here. */
#define PS_CLI_MAX_DEFAULT_JOBS 16
/* Open cli->input with args' options (after ps_cli_session_defaults)
 * into *session, and hand every stack to add(ctx, stack) with the
 * progress line drawn; add returns 0, or -ENOMEM to stop ("COMMAND: out
 * of memory"). *status is the exit status: PS_EXIT_OK, or that of the
 * first error, which is printed. Returns whether what was added may be
 * written: also for a capture damaged part-way (its readable part was
 * added, and commands write it as script prints it); not when it could
 * not be opened or add failed. The caller closes *session (NULL when it
 * was not opened). */
bool ps_cli_session_run(struct ps_cli *cli, struct ps_cli_args *args,
                        int (*add)(void *ctx, const struct ps_stack *stack), void *ctx,
                        struct ps_session **session, int *status);
/* Open cli->input with args' options and the program's log; prints the
 * error and returns its exit status, or 0. */
int ps_cli_session_open(struct ps_cli *cli, struct ps_cli_args *args, struct ps_session **session);

/* ---- messages and exit statuses (messages.c) -------------------------- */

/* Log callback the program installs in the library. */
void ps_cli_log(void *ctx, enum ps_log_level level, const char *msg);
/* Print "pystitch: <msg>" on stderr. */
void ps_cli_error(const struct ps_cli *cli, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Print "pystitch: COMMAND: <msg>" on stderr. */
void ps_cli_command_error(const struct ps_cli *cli, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Map a library error to an exit status. */
int ps_cli_status(int err);
/* "COMMAND: out of memory"; returns PS_EXIT_USAGE. */
int ps_cli_out_of_memory(const struct ps_cli *cli);

/* ---- files written with -o (output_file.c) ---------------------------- */

/* Where a command's output goes: the file -o names (a regular file is
 * replaced only when ps_cli_output_close() keeps it, anything else
 * written through), or standard output. */
struct ps_cli_output {
	const char *name; /* the path, or "standard output" */
	bool is_stdout;
	struct ps_output_file *file;
};

/* Start writing path (NULL or "-": standard output). 0 or -errno. Call
 * it before reading the capture, so that a bad name fails at once. */
int ps_cli_output_open(struct ps_cli_output *output, const char *path);
/* ps_cli_output_open() for a command's binary or machine-read output
 * (what: "SVG", "JSON", ...; file: the -o that would do, "FILE.svg"):
 * says why on stderr and returns PS_EXIT_USAGE when path cannot be
 * created, or when it is standard output and that is a terminal; else 0. */
int ps_cli_output_start(const struct ps_cli *cli, struct ps_cli_output *output, const char *path,
                        const char *what, const char *file);
/* Whether output goes to a terminal. */
bool ps_cli_output_is_terminal(const struct ps_cli_output *output);
/* Finish: keep puts the file into place, else it is dropped. 0 or
 * -errno of the first failure. Safe to call again. */
int ps_cli_output_close(struct ps_cli_output *output, bool keep);

/* ---- progress on long runs (progress.c) ------------------------------ */

/* Arm the progress line: it is shown only when stderr is a terminal, not
 * quiet, and (output_on_stdout) stdout is not a terminal too. */
void ps_progress_start(struct ps_progress *p, const char *what, bool quiet, bool output_on_stdout);
/* One more sample (or record) read from reader; redraws when it is time to. */
void ps_progress_tick(struct ps_progress *p, const struct ps_reader *reader);
/* Draw text as the line (pystitch record's own), when it is time to. */
void ps_progress_line(struct ps_progress *p, const char *text);
/* Erase the line (before another message on stderr). */
void ps_progress_clear(struct ps_progress *p);
/* Erase it for good: the run is over. */
void ps_progress_end(struct ps_progress *p);

/* With PYSTITCH_HUGEPAGES=1, start again with glibc's heap on
 * transparent huge pages, where the kernel gives them only on request
 * (hugepages.c); returns when it does not. */
void ps_cli_use_huge_pages(char **argv);

/* ---- script's own sample filters (script_filter.c) -------------------- */

/* A comma-separated list: *text is a copy of arg cut at the commas, *out
 * the words in it (both replace what they held; the caller frees both).
 * 0 or -ENOMEM. */
int ps_cli_split_list(const char *arg, char **text, const char ***out, size_t *nr);

/* What perf script filters after the session's filters: -S (functions by
 * name, and the entries that read as hexadecimal numbers as sampled
 * addresses, --addr-range bytes wide), --dsos, then --switch-on and
 * --switch-off (the show_on_off samples pass). Zeroed to start. */
struct ps_cli_script_filter {
	bool by_symbol; /* -S given */
	char *symbols_text, *dsos_text;
	const char **symbols, **dsos;
	size_t nr_symbols, nr_dsos;
	uint64_t *symbol_addrs;
	size_t nr_symbol_addrs;
	int addr_range;
	const struct ps_attr *switch_on, *switch_off;
	bool discarding, show_on_off;
};

/* -S LIST. 0 or -ENOMEM. */
int ps_cli_script_filter_symbols(struct ps_cli_script_filter *f, const char *arg);
/* Find the events of --switch-on and --switch-off (NULL: not given); an
 * unknown one is said in one line: -ENOENT. */
int ps_cli_script_filter_switches(struct ps_cli_script_filter *f, const struct ps_cli *cli,
                                  const struct ps_reader *reader, const char *on, const char *off);
/* Whether perf script prints the sample; called for each in order. */
bool ps_cli_script_filter_pass(struct ps_cli_script_filter *f, const struct ps_stack *stack);
void ps_cli_script_filter_release(struct ps_cli_script_filter *f);

#endif /* PS_CLI_CLI_H */
