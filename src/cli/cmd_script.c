/* `pystitch script` (the default command): every sample with its stack,
 * as `perf script` prints it, streamed out in large blocks. */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char script_usage[] =
        "usage: pystitch [script] [-i FILE] [options]\n"
        "\n"
        "Print every sample of a perf.data capture with its stack, in the text\n"
        "format of `perf script`. DWARF captures (--call-graph dwarf) are unwound\n"
        "offline; frame-pointer captures (-g) use the recorded call chain.\n"
        "\n"
        "  -i, --input FILE      capture to read (default perf.data; - for stdin)\n"
        "  -F, --fields LIST     fields to print, as perf script -F: comm, tid, pid,\n"
        "                        time, cpu, period, event, trace, ip, sym, symoff,\n"
        "                        dso, addr, srcline, srccode, insn, insnlen, ...;\n"
        "                        TYPE:LIST for one event type\n"
        "                        (hw, sw, trace, raw, break); +f / -f edit the defaults\n"
        "  -G, --hide-call-graph one line per sample, without the stack\n"
        "      --ns              times in nanoseconds\n"
        "      --no-inline       no frames for inlined functions\n"
        "      --pid LIST        only these process ids (comma-separated)\n"
        "      --tid LIST        only these thread ids\n"
        "  -c, --comm LIST       only threads with these names (also --comms)\n"
        "  -C, --cpu LIST        only these CPUs (e.g. 0-3,6)\n"
        "      --time START,END  only samples in this time range, in seconds as\n"
        "                        printed (START, or END, may be empty)\n"
        "                        or, as perf, a share of the capture: P%/N (the\n"
        "                        Nth slice of P%) or A%-B%\n"
        "      --symfs DIR       look for the recorded files under DIR (build-id\n"
        "                        cache: DIR/.debug); may be given again (one\n"
        "                        exported root file system per container): a file\n"
        "                        is read from the first tree whose copy has its\n"
        "                        recorded build-id\n"
        "      --buildid-dir DIR perf's build-id cache (default ~/.debug)\n"
        "  -k, --vmlinux FILE    kernel symbols from this vmlinux\n"
        "      --kallsyms FILE   kernel symbols from this kallsyms file (default:\n"
        "                        /proc/kallsyms when the capture's kernel is the\n"
        "                        running one, else perf record's copy of it in\n"
        "                        the build-id cache)\n"
        "      --max-stack N     frames per stack part (default 127, as perf)\n"
        "      --libdw-unwind    print the DWARF stacks perf built with libdw prints\n"
        "                        instead of Debian's perf (libunwind's ends of stacks);\n"
        "                        the Python modes always unwind so the processes that\n"
        "                        ran JIT code\n"
        "      --stitch-lbr      LBR call graphs (--call-graph lbr): join each stack to\n"
        "                        the frames the thread's previous sample saw below\n"
        "                        it, as perf script --stitch-lbr\n"
        "      --python MODE     Python frames of CPython 3.12+ run with -X perf or\n"
        "                        -X perf_jit, or 3.8-3.11 with pystitch_perf:\n"
        "                        merged (default: Python frames replace\n"
        "                        the interpreter frames that ran them), all (every\n"
        "                        native frame too), native (what perf script prints)\n"
        "                        or only (Python frames alone)\n"
        "      --perf-map-dir DIR look for perf-PID.map and jit-PID.dump here first,\n"
        "                        then next to the capture, then in /tmp; may be\n"
        "                        given again (one per container): maps of any\n"
        "                        name there are matched to processes by content\n"
        "      --unwinder KIND   how DWARF stacks are unwound: table (default;\n"
        "                        compiled CFI rules, libdwfl for the frames they\n"
        "                        cannot express) or libdwfl (libdwfl alone); the\n"
        "                        output is the same\n" PS_CLI_JOBS_HELP
        "      --reltime         times from the first sample\n"
        "      --deltatime       times from the previous sample\n"
        "      --inline          frames for inlined functions (the default)\n"
        "  -S, --symbols LIST    only samples in these functions (names, start\n"
        "                        addresses 0x..., or sampled addresses in hex)\n"
        "      --addr-range N    -S addresses match the N bytes from each\n"
        "      --dsos LIST       only samples in these objects (file names or paths)\n"
        "      --header          print the capture's header first (as perf report\n"
        "                        --header-only); --header-only: the header alone\n"
        "  -I, --show-info       the header's CPU and NUMA topology too\n"
        "  -L, --Latency         names in 8 columns, CPUs without brackets\n"
        "      --stop-bt LIST    print each stack down to a function of LIST\n"
        "      --switch-on EVENT only samples from the first EVENT sample on\n"
        "      --switch-off EVENT no samples from the first EVENT sample on\n"
        "      --show-on-off-events  print the samples of those two events too\n"
        "      --no-demangle     C++ names as the files have them\n"
        "      --show-task-events, --show-mmap-events, --show-switch-events,\n"
        "      --show-namespace-events, --show-cgroup-events, --show-lost-events,\n"
        "      --show-round-events, --show-bpf-events, --show-text-poke-events\n"
        "                        print those records too, as perf script does\n"
        "      --per-event-dump  each event's lines into FILE.EVENT.dump\n"
        "      --full-source-path srclines with the whole path of the file\n"
        "      --show-kernel-path  modules' and a vmlinux's paths instead of names\n"
        "      --demangle, --demangle-kernel  taken as perf takes them\n"
        "      --max-blocks N    at most N blocks per brstackinsn listing\n"
        "  -f, --force           stop quietly at a damaged record\n"
        "  -q, --quiet           no progress line and no warnings on stderr\n"
        "  -v, --verbose         more messages on stderr\n"
        "  -h, --help            this text\n";

enum {
	OPT_NS = PS_OPT_COMMAND_FIRST,
	OPT_MAX_STACK,
	OPT_LIBDW,
	OPT_RELTIME,
	OPT_DELTATIME,
	OPT_INLINE,
	OPT_DSOS,
	OPT_HEADER,
	OPT_HEADER_ONLY,
	OPT_PER_EVENT_DUMP,
	OPT_SHOW_KERNEL_PATH,
	OPT_DEMANGLE,
	OPT_DEMANGLE_KERNEL,
	OPT_STITCH_LBR,
	OPT_MAX_BLOCKS,
	OPT_FULL_SOURCE_PATH,
	OPT_NO_DEMANGLE,
	OPT_STOP_BT,
	OPT_SWITCH_ON,
	OPT_SWITCH_OFF,
	OPT_SHOW_ON_OFF,
	OPT_ADDR_RANGE,
	OPT_SHOW_FIRST, /* one per PS_SCRIPT_SHOW_* bit, in its order */
	OPT_LEFT_OUT_FIRST = 1000, /* one per LEFT_OUT() entry, in its order */
};

struct script_state {
	const char *fields;
	bool ns, reltime, deltatime, header, header_only, show_info, per_event_dump;
	bool show_kernel_path, latency;
	uint32_t show_events;
	char *stop_bt_text;
	const char **stop_bt;
	size_t nr_stop_bt;
	struct ps_cli_script_filter filter; /* -S, --dsos, --switch-on, ... */
	const char *switch_on, *switch_off;
};

/* The options of perf 6.1's `perf script -h` pystitch leaves out, each
 * with why (the man page has the list): refused in one line naming it,
 * not the usage. X(id, name, getopt argument, why): each has the option
 * value OPT_LEFT_id, in this order from OPT_LEFT_OUT_FIRST. */
#define LEFT_OUT(X)                                                                                \
	X(SCRIPT, "script", required_argument, "runs Perl/Python scripts in perf")                 \
	X(GEN_SCRIPT, "gen-script", required_argument, "writes a perf script skeleton")            \
	X(LIST, "list", optional_argument, "lists perf's scripts")                                 \
	X(LIST_DLFILTERS, "list-dlfilters", no_argument, "lists perf's dlfilters")                 \
	X(DLFILTER, "dlfilter", required_argument, "loads perf dlfilter plugins")                  \
	X(DLARG, "dlarg", required_argument, "an argument of --dlfilter")                          \
	X(ITRACE, "itrace", optional_argument, "decodes hardware traces (Intel PT, CoreSight)")    \
	X(INSN_TRACE, "insn-trace", optional_argument, "decodes hardware traces")                  \
	X(CALL_TRACE, "call-trace", no_argument, "decodes hardware traces")                        \
	X(CALL_RET_TRACE, "call-ret-trace", no_argument, "decodes hardware traces")                \
	X(GRAPH_FUNCTION, "graph-function", required_argument, "filters decoded hardware traces")  \
	X(XED, "xed", no_argument, "disassembles hardware traces with Intel XED")                  \
	X(DUMP_RAW_TRACE, "dump-raw-trace", no_argument, "that is `pystitch dump`")                \
	X(DUMP_UNSORTED, "dump-unsorted-raw-trace", no_argument, "that is `pystitch dump`")        \
	X(DEBUG_MODE, "debug-mode", no_argument, "checks perf's own event ordering")               \
	X(GUESTMOUNT, "guestmount", required_argument, "reads guest machines' symbols")            \
	X(GUESTVMLINUX, "guestvmlinux", required_argument, "reads guest machines' symbols")        \
	X(GUESTKALLSYMS, "guestkallsyms", required_argument, "reads guest machines' symbols")      \
	X(GUESTMODULES, "guestmodules", required_argument, "reads guest machines' symbols")        \
	X(GUEST_CODE, "guest-code", no_argument, "reads guest machines' code")                     \
	X(ALL_CPUS, "all-cpus", no_argument, "belongs to `perf script record`")

enum {
	OPT_LEFT_OUT_BEFORE = OPT_LEFT_OUT_FIRST - 1,
#define LEFT_OUT_ENUM(id, name, has_arg, why) OPT_LEFT_##id,
	LEFT_OUT(LEFT_OUT_ENUM)
#undef LEFT_OUT_ENUM
};

static const struct {
	const char *name;
	const char *why;
} left_out[] = {
#define LEFT_OUT_WHY(id, name, has_arg, why) { name, why },
	LEFT_OUT(LEFT_OUT_WHY)
#undef LEFT_OUT_WHY
};
#define NR_LEFT_OUT (sizeof(left_out) / sizeof(left_out[0]))

static const char *const show_names[] = {
	"show-task-events",      "show-mmap-events",   "show-switch-events",
	"show-namespace-events", "show-cgroup-events", "show-lost-events",
	"show-round-events",     "show-bpf-events",    "show-text-poke-events",
};
#define NR_SHOW (sizeof(show_names) / sizeof(show_names[0]))

/* perf's short letters of the options left out */
static const struct {
	char letter;
	const char *name;
} left_out_letters[] = {
	{ 's', "script" },         { 'g', "gen-script" }, { 'l', "list" },
	{ 'D', "dump-raw-trace" }, { 'd', "debug-mode" }, { 'a', "all-cpus" },
};

static int refuse(const struct ps_cli *cli, int opt)
{
	const char *name = NULL;

	if (opt >= OPT_LEFT_OUT_FIRST && opt < OPT_LEFT_OUT_FIRST + (int)NR_LEFT_OUT)
		name = left_out[opt - OPT_LEFT_OUT_FIRST].name;
	for (size_t i = 0; i < sizeof(left_out_letters) / sizeof(left_out_letters[0]); i++)
		if (opt == left_out_letters[i].letter)
			name = left_out_letters[i].name;
	for (size_t i = 0; name && i < NR_LEFT_OUT; i++)
		if (strcmp(left_out[i].name, name) == 0) {
			ps_cli_command_error(cli, "--%s: left out (%s; see the man page)", name,
			                     left_out[i].why);
			return PS_EXIT_USAGE;
		}
	return 0;
}

static int script_option(struct ps_cli *cli, struct ps_cli_args *args, void *state, int opt,
                         const char *arg)
{
	struct script_state *st = state;
	struct ps_session_opts *o = &args->opts;

	switch (opt) {
	case 'F':
		st->fields = arg;
		break;
	case 'G':
		o->no_callchain = true;
		break;
	case OPT_NS:
		st->ns = true;
		break;
	case OPT_MAX_STACK: {
		char *end;
		long n = strtol(arg, &end, 10);
		if (*end || n < 1 || n > 254)
			return ps_cli_bad_value(cli, "--max-stack", arg);
		o->max_stack = (unsigned)n;
		break;
	}
	case OPT_LIBDW:
		o->unwind_style = PS_UNWIND_PERF_LIBDW;
		break;
	case OPT_RELTIME:
		st->reltime = true;
		break;
	case OPT_DELTATIME:
		st->deltatime = true;
		break;
	case OPT_INLINE:
		o->no_inline = false;
		break;
	case 'S':
		if (ps_cli_script_filter_symbols(&st->filter, arg))
			return ps_cli_out_of_memory(cli);
		break;
	case OPT_ADDR_RANGE: {
		char *end;
		long n = strtol(arg, &end, 0);

		/* perf's OPT_INTEGER */
		if (*end || end == arg || n < INT32_MIN || n > INT32_MAX)
			return ps_cli_bad_value(cli, "--addr-range", arg);
		st->filter.addr_range = (int)n;
		break;
	}
	case OPT_STOP_BT:
		if (ps_cli_split_list(arg, &st->stop_bt_text, &st->stop_bt, &st->nr_stop_bt))
			return ps_cli_out_of_memory(cli);
		break;
	case OPT_SWITCH_ON:
		st->switch_on = arg;
		break;
	case OPT_SWITCH_OFF:
		st->switch_off = arg;
		break;
	case OPT_SHOW_ON_OFF:
		st->filter.show_on_off = true;
		break;
	case 'L':
		st->latency = true;
		break;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		break;
	case OPT_DSOS:
		if (ps_cli_split_list(arg, &st->filter.dsos_text, &st->filter.dsos,
		                      &st->filter.nr_dsos))
			return ps_cli_out_of_memory(cli);
		break;
	case OPT_HEADER:
		st->header = true;
		break;
	case OPT_HEADER_ONLY:
		st->header = st->header_only = true;
		break;
	case 'I':
		st->show_info = true;
		break;
	case OPT_PER_EVENT_DUMP:
		st->per_event_dump = true;
		break;
	case OPT_FULL_SOURCE_PATH:
		o->full_source_path = true;
		break;
	case OPT_STITCH_LBR:
		o->stitch_lbr = true; /* the session switches it off as perf */
		break;
	case OPT_SHOW_KERNEL_PATH:
		st->show_kernel_path = o->show_kernel_path = true;
		break;
	case OPT_DEMANGLE:
		o->no_demangle = false;
		break;
	case OPT_DEMANGLE_KERNEL:
		/* kernel names are not mangled */
		break;
	case OPT_MAX_BLOCKS: {
		char *end;
		long n = strtol(arg, &end, 10);

		/* only brstackinsn prints blocks, 0: all of them (perf reads
		 * before its branch stack with a negative one) */
		if (*end || end == arg || n < 0 || n > INT32_MAX)
			return ps_cli_bad_value(cli, "--max-blocks", arg);
		o->max_blocks = (unsigned)n;
		break;
	}
	default:
		if (opt >= OPT_SHOW_FIRST && opt < OPT_SHOW_FIRST + (int)NR_SHOW) {
			st->show_events |= 1u << (opt - OPT_SHOW_FIRST);
			break;
		}
		return refuse(cli, opt);
	}
	return 0;
}

static int write_stdout(void *ctx, const void *data, size_t size)
{
	return ps_output_file_write(ctx, data, size);
}

/* One output: standard output, or with --per-event-dump one file per
 * event (FILE.EVENT.dump), each with its writer. */
struct script_out {
	struct ps_output_file *file;
	struct ps_script *script;
	char *path;
	uint64_t samples, bytes;
};

struct script_run {
	struct ps_cli *cli;
	struct ps_session *session;
	struct script_out *outs; /* [0] standard output, then one per event */
	size_t nr_outs;
	bool per_event;
	/* --header of a pipe: perf prints the features as their records
	 * arrive, before any sample or record; printed before the first */
	const struct script_state *pending_header;
	struct ps_cli_script_filter *filter;
	bool printed; /* the current stack printed at least once */
};

static int write_header(struct script_run *run, const struct script_state *st);

static int write_pending_header(struct script_run *run)
{
	const struct script_state *st = run->pending_header;

	run->pending_header = NULL;
	return st ? write_header(run, st) : 0;
}

static int count_write(void *ctx, const void *data, size_t size)
{
	struct script_out *o = ctx;

	o->bytes += size;
	return ps_output_file_write(o->file, data, size);
}

/* --show-*-events: the session tells of every record; the writer on
 * standard output (perf prints them there, even with --per-event-dump)
 * says which it prints. */
static int on_record(void *ctx, const struct ps_event *event)
{
	struct script_run *run = ctx;
	struct ps_script *script = run->outs[0].script;
	const char *comm = NULL;
	int32_t pid, tid;

	if (!ps_script_shows_record(script, event, &pid, &tid))
		return 0;
	int err = write_pending_header(run);
	if (err)
		return err;
	if (tid != -1 && !(comm = ps_session_comm(run->session, pid, tid)))
		return -ENOMEM;
	return ps_script_write_record(script, event, comm);
}

/* What perf prints as "captured on": the file's modification time (as
 * `pystitch info` has it). */
static int64_t captured_on(const struct ps_cli *cli, struct ps_session *session)
{
	int64_t archived_mtime;
	struct stat st;

	if (ps_reader_is_archive(ps_session_reader(session), &archived_mtime))
		return archived_mtime;
	if (strcmp(cli->input, "-") == 0 ? fstat(0, &st) == 0 : stat(cli->input, &st) == 0)
		return st.st_mtime;
	return 0;
}

static int open_out(struct script_run *run, const struct script_state *st,
                    const struct ps_session_opts *opts, struct script_out *o)
{
	return ps_script_open(ps_session_reader(run->session),
	                      &(struct ps_script_opts){
	                              .sz = sizeof(struct ps_script_opts),
	                              .fields = st->fields,
	                              .hide_call_graph = opts->no_callchain,
	                              .ns = st->ns,
	                              .write = count_write,
	                              .write_ctx = o,
	                              .reltime = st->reltime,
	                              .deltatime = st->deltatime,
	                              .show_events = st->show_events,
	                              .cpus = opts->cpus,
	                              .nr_cpus = opts->nr_cpus,
	                              .latency = st->latency,
	                              .stop_bt = st->stop_bt,
	                              .nr_stop_bt = st->nr_stop_bt,
	                              /* perf prints them on stdout */
	                              .srccode_to = o == &run->outs[0] ? NULL : run->outs[0].script,
	                              .kernel_symbol = ps_session_kernel_symbol,
	                              .kernel_symbol_ctx = run->session,
	                              .text_poke_symbol = ps_session_text_poke_symbol,
	                              .text_poke_symbol_ctx = run->session },
	                      &o->script);
}

/* perf's files are named after the input and each event. */
static int open_outs(struct script_run *run, const struct script_state *st,
                     const struct ps_session_opts *opts)
{
	const struct ps_reader *reader = ps_session_reader(run->session);
	size_t nr = run->per_event ? ps_reader_nr_attrs(reader) : 0;

	run->outs = calloc(nr + 1, sizeof(*run->outs));
	if (!run->outs)
		return -ENOMEM;
	run->nr_outs = nr + 1;
	if (ps_output_file_open_fd(STDOUT_FILENO, &run->outs[0].file) ||
	    open_out(run, st, opts, &run->outs[0]))
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		struct script_out *o = &run->outs[i + 1];
		const char *name = ps_reader_attr(reader, i)->name;
		int err;

		if (asprintf(&o->path, "%s.%s.dump", run->cli->input, name) < 0) {
			o->path = NULL;
			return -ENOMEM;
		}
		err = ps_output_file_open(o->path, &o->file);
		if (err) {
			ps_cli_command_error(run->cli, "cannot write %s: %s", o->path,
			                     strerror(-err));
			return -EIO;
		}
		if (open_out(run, st, opts, o))
			return -ENOMEM;
	}
	return 0;
}

static struct script_out *out_of(struct script_run *run, const struct ps_stack *stack)
{
	if (!run->per_event)
		return &run->outs[0];
	return &run->outs[1 + stack->event->attr->index];
}

/* One sample as perf delivers it, to its event's output. */
static int write_sample(void *ctx, const struct ps_stack *stack)
{
	struct script_run *run = ctx;
	struct script_out *o;
	int err;

	/* perf filters each delivery: --switch-on/off go by its event */
	if (!ps_cli_script_filter_pass(run->filter, stack))
		return 0;
	o = out_of(run, stack);
	run->printed = true;
	o->samples++;
	err = write_pending_header(run);
	return err ? err : ps_script_write(o->script, stack);
}

/* perf's closing lines of --per-event-dump: each file's size as fstat()
 * had it, with stdio's 4 KiB buffer not yet written out. */
static int per_event_summary(struct script_run *run)
{
	for (size_t i = 1; i < run->nr_outs; i++) {
		struct script_out *o = &run->outs[i];
		uint64_t written = o->bytes ? (o->bytes - 1) / 4096 * 4096 : 0;
		char line[PATH_MAX + 128];
		int n;

		n = snprintf(
		        line, sizeof(line), "[ perf script: Wrote %.3f MB %s (%llu samples) ]\n",
		        (double)written / 1024.0 / 1024.0, o->path, (unsigned long long)o->samples);
		if (n < 0 || (size_t)n >= sizeof(line) ||
		    ps_output_file_write(run->outs[0].file, line, (size_t)n))
			return -EIO;
	}
	return 0;
}

static void close_outs(struct script_run *run, bool keep)
{
	for (size_t i = 0; i < run->nr_outs; i++) {
		struct script_out *o = &run->outs[i];

		ps_script_close(o->script);
		if (i && keep && o->file)
			ps_output_file_commit(o->file);
		else
			ps_output_file_abort(o->file);
		free(o->path);
	}
	free(run->outs);
	run->outs = NULL;
}

static int write_header(struct script_run *run, const struct script_state *st)
{
	return ps_info_write(
	        ps_session_reader(run->session),
	        &(struct ps_info_opts){ .sz = sizeof(struct ps_info_opts),
	                                .captured_on = captured_on(run->cli, run->session),
	                                .show_info = st->show_info },
	        write_stdout, run->outs[0].file);
}

static int script_run(struct ps_cli *cli, struct ps_cli_args *args, void *state)
{
	struct script_state *st = state;
	struct ps_session_opts *opts = &args->opts;
	struct script_run run = { .cli = cli,
		                  .per_event = st->per_event_dump,
		                  .filter = &st->filter };
	const struct ps_stack *stack;
	int status = 0, ret = 0, err = 0;

	/* source lines cost a DWARF line lookup per frame: only on request */
	opts->srcline = ps_script_fields_need_srcline(st->fields);
	/* and the sampled instruction is read only when printed */
	opts->sample_insn = st->fields && strstr(st->fields, "insn");
	opts->srccode = ps_script_fields_need_srccode(st->fields);
	opts->branches = ps_script_fields_need_branches(st->fields);
	opts->branch_listing = ps_script_fields_need_branch_listing(st->fields);
	opts->addr_names = ps_script_fields_need_addr_names(st->fields);
	ps_cli_session_defaults(cli, args, cli->input);
	/* the --show-*-events records, and those of a perf stat capture,
	 * which perf script always prints */
	opts->record = on_record;
	opts->record_ctx = &run;
	opts->file_order = st->show_events & PS_SCRIPT_SHOW_ROUND;
	status = ps_cli_session_open(cli, args, &run.session);
	if (status)
		goto out;
	if (ps_cli_script_filter_switches(&st->filter, cli, ps_session_reader(run.session),
	                                  st->switch_on, st->switch_off)) {
		status = PS_EXIT_USAGE;
		goto out;
	}
	err = open_outs(&run, st, opts);
	if (err == -EIO) {
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (err) {
		status = ps_cli_out_of_memory(cli);
		goto out;
	}
	if (st->header && !st->header_only && ps_reader_is_pipe(ps_session_reader(run.session)))
		run.pending_header = st;
	else if (st->header && (err = write_header(&run, st)))
		goto written;
	if (st->header_only)
		goto written;
	/* after the header, as perf */
	if ((status = ps_cli_check_cpus(cli, args, run.session)))
		goto out;
	ps_progress_start(cli->progress, "samples", cli->quiet, true);
	while ((ret = ps_session_next(run.session, &stack)) > 0) {
		ps_progress_tick(cli->progress, ps_session_reader(run.session));
		run.printed = false;
		err = ps_cli_each_delivery(stack, write_sample, &run);
		if (err)
			break;
		if (run.printed)
			ps_session_stack_printed(run.session);
	}
	ps_progress_end(cli->progress);
	if (ret < 0 && !ps_session_errmsg(run.session)[0]) {
		/* the record callback's writer failed: its fields, or the
		 * output */
		err = ps_script_errmsg(run.outs[0].script)[0] ? -EINVAL : ret;
		ret = 0;
	}
written:
	if (!err && ret >= 0)
		err = write_pending_header(&run);
	for (size_t i = 0; !err && i < run.nr_outs; i++)
		err = ps_script_flush(run.outs[i].script);
	if (!err && run.per_event && ret >= 0)
		err = per_event_summary(&run);
	if (err == -EINVAL) {
		for (size_t i = 0; i < run.nr_outs; i++)
			if (ps_script_errmsg(run.outs[i].script)[0]) {
				ps_cli_command_error(cli, "%s",
				                     ps_script_errmsg(run.outs[i].script));
				break;
			}
		status = PS_EXIT_USAGE;
		goto out;
	}
	if (err) {
		ps_cli_command_error(cli, "cannot write output");
		status = PS_EXIT_USAGE;
	}
	if (ret < 0) {
		ps_cli_error(cli, "%s", ps_session_errmsg(run.session));
		status = ps_cli_status(ret);
	}
out:
	close_outs(&run, !status);
	ps_session_close(run.session);
	ps_cli_script_filter_release(&st->filter);
	free(st->stop_bt);
	free(st->stop_bt_text);
	return status;
}

static const struct option script_options[] = {
	{ "fields", required_argument, NULL, 'F' },
	{ "hide-call-graph", no_argument, NULL, 'G' },
	{ "ns", no_argument, NULL, OPT_NS },
	{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
	{ "libdw-unwind", no_argument, NULL, OPT_LIBDW },
	{ "reltime", no_argument, NULL, OPT_RELTIME },
	{ "deltatime", no_argument, NULL, OPT_DELTATIME },
	{ "inline", no_argument, NULL, OPT_INLINE },
	{ "symbols", required_argument, NULL, 'S' },
	{ "dsos", required_argument, NULL, OPT_DSOS },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "header-only", no_argument, NULL, OPT_HEADER_ONLY },
	{ "show-info", no_argument, NULL, 'I' },
	{ "per-event-dump", no_argument, NULL, OPT_PER_EVENT_DUMP },
	{ "show-kernel-path", no_argument, NULL, OPT_SHOW_KERNEL_PATH },
	{ "demangle", no_argument, NULL, OPT_DEMANGLE },
	{ "demangle-kernel", no_argument, NULL, OPT_DEMANGLE_KERNEL },
	{ "stitch-lbr", no_argument, NULL, OPT_STITCH_LBR },
	{ "max-blocks", required_argument, NULL, OPT_MAX_BLOCKS },
	{ "full-source-path", no_argument, NULL, OPT_FULL_SOURCE_PATH },
	{ "show-task-events", no_argument, NULL, OPT_SHOW_FIRST + 0 },
	{ "show-mmap-events", no_argument, NULL, OPT_SHOW_FIRST + 1 },
	{ "show-switch-events", no_argument, NULL, OPT_SHOW_FIRST + 2 },
	{ "show-namespace-events", no_argument, NULL, OPT_SHOW_FIRST + 3 },
	{ "show-cgroup-events", no_argument, NULL, OPT_SHOW_FIRST + 4 },
	{ "show-lost-events", no_argument, NULL, OPT_SHOW_FIRST + 5 },
	{ "show-round-events", no_argument, NULL, OPT_SHOW_FIRST + 6 },
	{ "show-bpf-events", no_argument, NULL, OPT_SHOW_FIRST + 7 },
	{ "show-text-poke-events", no_argument, NULL, OPT_SHOW_FIRST + 8 },
	{ "Latency", no_argument, NULL, 'L' },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "stop-bt", required_argument, NULL, OPT_STOP_BT },
	{ "switch-on", required_argument, NULL, OPT_SWITCH_ON },
	{ "switch-off", required_argument, NULL, OPT_SWITCH_OFF },
	{ "show-on-off-events", no_argument, NULL, OPT_SHOW_ON_OFF },
	{ "addr-range", required_argument, NULL, OPT_ADDR_RANGE },
#define LEFT_OUT_OPTION(id, name, has_arg, why) { name, has_arg, NULL, OPT_LEFT_##id },
	LEFT_OUT(LEFT_OUT_OPTION)
#undef LEFT_OUT_OPTION
	        { NULL, 0, NULL, 0 },
};

const struct ps_cli_command ps_cmd_script = {
	.name = "script",
	.summary = "print every sample with its stack, as perf script does (the\n"
	           "              default: `pystitch -i perf.data` is `pystitch script -i "
	           "perf.data`)\n",
	.help = script_usage,
	.takes = PS_CLI_TAKES_SESSION,
	.options = script_options,
	.short_options = "F:GS:Is:g:l::LDda",
	.state_size = sizeof(struct script_state),
	.option = script_option,
	.run = script_run,
};
