/* What the files of `pystitch record` share: the settings of one
 * recording, running perf (record_perf.c), the Python side of the
 * recorded processes (record_python.c, record_attach.c), their perf maps
 * (record_maps.c) and the output (record_output.c). cmd_record.c holds
 * the command itself. */
#ifndef PS_CLI_RECORD_PRIV_H
#define PS_CLI_RECORD_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli.h"

/* The text files record writes into its cache (record_files.c, made at
 * build time by embed_files.sh): the start-up hook and the pystitch_perf
 * module's source. */
struct record_file {
	const char *name;
	const char *text;
};
extern const struct record_file record_files[];
extern const size_t record_nr_files;

enum record_format {
	RECORD_FORMAT_ARCHIVE, /* .pst */
	RECORD_FORMAT_SVG, /* .svg */
	RECORD_FORMAT_PPROF, /* .pb.gz */
	RECORD_FORMAT_TEXT, /* .txt: perf script text */
	RECORD_FORMAT_FOLDED, /* .folded */
	RECORD_FORMAT_SPEEDSCOPE, /* .json */
};

/* What to record and where to put it, from the command line. */
struct record_settings {
	char **command; /* COMMAND ARGS..., NULL-terminated; NULL with --pid or -a */
	int32_t *pids;
	size_t nr_pids;
	bool all_cpus; /* -a */
	uint64_t duration_ns; /* 0: until the command ends, or Ctrl-C */
	unsigned frequency; /* samples per second per CPU */
	bool frame_pointers; /* --call-graph fp */
	unsigned stack_size; /* bytes of stack copied per sample (DWARF) */
	bool stack_size_given; /* else chosen by the interpreter's version */
	const char **events; /* -e, each handed to perf */
	size_t nr_events;
	const char *perf; /* the perf program */
	const char *output; /* -o; NULL: an archive named after what was recorded */
	enum record_format format;
	bool format_given;
	bool keep_maps;
};

/* ---- the formats (record_output.c) ---------------------------------- */

/* The format a file name asks for by its ending; false if none. */
bool record_format_of_path(const char *path, enum record_format *format);
/* The format named by --format; false if none. */
bool record_format_of_name(const char *name, enum record_format *format);
const char *record_format_extension(enum record_format format);

/* ---- running perf (record_perf.c) ----------------------------------- */

/* How perf ended, and what that says of the recorded command. */
struct record_outcome {
	bool started; /* perf ran (it may still have failed) */
	bool interrupted; /* stopped by Ctrl-C, SIGTERM or --duration */
	bool by_duration;
	uint64_t recorded_ns; /* from perf's start to the stop, or its end */
	int perf_status; /* perf's wait status */
	uint64_t elapsed_ns;
};

/* Called about once a second while perf runs, to copy the perf maps of
 * processes that may go away (record_maps.c). */
typedef void (*record_tick_fn)(void *ctx, pid_t perf_pid);

/* The perf program to run: settings->perf, or "perf" found on PATH. A
 * malloc'd path, or NULL after one line on stderr. */
char *record_find_perf(const struct ps_cli *cli, const char *given);
/* Whether this process may record what settings ask, by
 * perf_event_paranoid and its capabilities; one line on stderr if not. */
bool record_may_record(const struct ps_cli *cli, const struct record_settings *settings);
/* Run perf record into data with settings, the environment additions
 * env (NAME=VALUE, NULL-terminated; for the recorded command), the
 * progress line on a terminal, and tick about once a second. Ctrl-C,
 * SIGTERM and --duration stop it; it still writes its capture. 0, or an
 * exit status after one line on stderr (perf could not be started). */
int record_run_perf(struct ps_cli *cli, const char *perf, const struct record_settings *settings,
                    const char *data, char *const *env, record_tick_fn tick, void *tick_ctx,
                    struct record_outcome *outcome);

/* ---- the recorded command's Python processes (record_python.c) ------ */

struct record_python {
	char *hook_dir; /* the start-up hook, on the command's PYTHONPATH */
	char *cache_dir; /* modules built per interpreter */
	char *env[5]; /* NAME=VALUE for the recorded command, NULL-terminated */
};

/* Write the hook into the per-user cache and say how the command's
 * Python processes are to get names: 0, or an exit status after one line
 * on stderr. */
int record_python_prepare(struct ps_cli *cli, struct record_python *python);
/* If command runs a CPython interpreter (by its name or its script's
 * #! line), build what it needs before recording and say in one line
 * when its frames cannot be named. Its version as 100 * major + minor
 * (312), or 0 when it runs none (or it could not be told). */
int record_python_check_command(struct ps_cli *cli, const struct record_python *python,
                                char *const *command);
void record_python_release(struct record_python *python);
/* The directory of the per-user cache (created, private): a malloc'd
 * path, or NULL after one line on stderr. */
char *record_cache_dir(const struct ps_cli *cli);
/* Run argv, its output (at most size - 1 bytes) in out; its exit status
 * as waitpid(2) gives it, or -1 when it could not be run. */
int record_run_capture(char *const *argv, char *const *env, char *out, size_t size,
                       unsigned timeout_ms);

/* ---- processes, as /proc shows them (record_proc.c) ------------------ */

/* The pid a process has in its own pid namespace (the last of NSpid);
 * pid when it cannot be told. */
pid_t record_namespace_pid(pid_t pid);
/* Whether the process sees the same mounts (and so the same /tmp). */
bool record_same_mount_namespace(pid_t pid);
/* The parent of a process; -1 when it is gone. */
pid_t record_parent_pid(pid_t pid);

/* ---- processes recorded with --pid (record_attach.c) ---------------- */

/* A running process's CPython: version from its mappings, and whether
 * record turned perf trampolines on in it. */
struct record_target {
	pid_t pid;
	int major, minor; /* 0: not CPython */
	bool names_frames; /* it writes a perf map (trampolines on) */
	bool activated; /* record turned its trampolines on */
};

/* Check every --pid: it exists and runs CPython (else one line, and an
 * exit status); on 3.14+ turn perf trampolines on where they are off,
 * through sys.remote_exec(); elsewhere say how to start the process so
 * that its frames are named. *targets is malloc'd. */
int record_attach(struct ps_cli *cli, const struct record_settings *settings,
                  struct record_target **targets);
/* Turn off again what record_attach() turned on, and say so. */
void record_detach(struct ps_cli *cli, struct record_target *targets, size_t nr);

/* ---- perf maps (record_maps.c) ---------------------------------------- */

/* The perf maps and jitdumps of the recorded processes: copied from a
 * process's own /tmp when it is in another mount namespace (a container)
 * while it runs, and removed from /tmp at the end when the recording made
 * them. */
struct record_maps;

/* Copies go to dir (as perf-HOSTPID.map, jit-HOSTPID.dump). NULL when out
 * of memory. */
struct record_maps *record_maps_open(const struct record_settings *settings, const char *dir);
/* A record_tick_fn: copy what the recorded processes in containers wrote
 * so far, and note the files the recording makes them write. */
void record_maps_tick(void *maps, pid_t perf_pid);
/* How many files were copied from containers. */
size_t record_maps_copied(const struct record_maps *maps);
/* Remove the maps and jitdumps the recording made processes write to
 * this machine's /tmp: those of the command's processes (every process
 * of the capture's COMM and FORK records), or with --pid those of the
 * targets record turned trampolines on in. Returns how many. */
size_t record_maps_remove(struct ps_cli *cli, struct record_maps *maps, const char *capture,
                          const struct record_target *targets, size_t nr_targets);
void record_maps_close(struct record_maps *maps);

/* ---- the output (record_output.c) ------------------------------------- */

/* Write the capture (with the copied maps in maps_dir) as settings ask,
 * to output; the hottest Python functions on stderr when summary. 0 or
 * an exit status (after one line on stderr). */
int record_write_output(struct ps_cli *cli, struct ps_cli_args *args,
                        const struct record_settings *settings, const char *capture,
                        const char *maps_dir, const char *output, bool summary);

#endif /* PS_CLI_RECORD_PRIV_H */
