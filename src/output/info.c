/* `pystitch info`: the header and features as perf 6.1's `perf report --header-only` prints
 * them (header.c's perf_header__fprintf_info and print_* printers; the machine's features
 * and the BPF programs have files of their own), then, on request, the build-ids and
 * tracepoint formats perf shows elsewhere or not at all. */
#include "output/output.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/opts.h"
#include "output/info_priv.h"
#include "output/sink.h"

static bool has_feat(const struct ps_features *f, unsigned bit)
{
	return bit < 256 && (f->present[bit / 64] >> (bit % 64)) & 1;
}

static const char *str_or_null(const char *s)
{
	return s ? s : "(null)"; /* what glibc's printf shows for NULL */
}

/* ------------------------------------------------------------------ */
/* event attributes (perf_event_attr__fprintf)                         */
/* ------------------------------------------------------------------ */

struct bit_name {
	uint64_t bit;
	const char *name;
};

/* "A|B|C" of the named bits. Like perf, a value with no named bit leaves
 * the buffer as the previous field left it. */
static void bits_to_buf(char *buf, size_t size, uint64_t value, const struct bit_name *bits)
{
	size_t len = 0;
	bool first = true;

	for (; bits->name; bits++) {
		if (!(value & bits->bit))
			continue;
		snprintf(buf + len, size - len, "%s%s", first ? "" : "|", bits->name);
		len += strlen(buf + len);
		first = false;
	}
}

static const struct bit_name sample_type_bits[] = {
	{ PERF_SAMPLE_IP, "IP" },
	{ PERF_SAMPLE_TID, "TID" },
	{ PERF_SAMPLE_TIME, "TIME" },
	{ PERF_SAMPLE_ADDR, "ADDR" },
	{ PERF_SAMPLE_READ, "READ" },
	{ PERF_SAMPLE_CALLCHAIN, "CALLCHAIN" },
	{ PERF_SAMPLE_ID, "ID" },
	{ PERF_SAMPLE_CPU, "CPU" },
	{ PERF_SAMPLE_PERIOD, "PERIOD" },
	{ PERF_SAMPLE_STREAM_ID, "STREAM_ID" },
	{ PERF_SAMPLE_RAW, "RAW" },
	{ PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK" },
	{ PERF_SAMPLE_REGS_USER, "REGS_USER" },
	{ PERF_SAMPLE_STACK_USER, "STACK_USER" },
	{ PERF_SAMPLE_IDENTIFIER, "IDENTIFIER" },
	{ PERF_SAMPLE_REGS_INTR, "REGS_INTR" },
	{ PERF_SAMPLE_DATA_SRC, "DATA_SRC" },
	{ PERF_SAMPLE_WEIGHT, "WEIGHT" },
	{ PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" },
	{ PERF_SAMPLE_AUX, "AUX" },
	{ PERF_SAMPLE_CGROUP, "CGROUP" },
	{ PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE" },
	{ PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE" },
	{ PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT" },
	{ 0, NULL },
};

static const struct bit_name branch_type_bits[] = {
	{ 1ULL << 0, "USER" },       { 1ULL << 1, "KERNEL" },
	{ 1ULL << 2, "HV" },         { 1ULL << 3, "ANY" },
	{ 1ULL << 4, "ANY_CALL" },   { 1ULL << 5, "ANY_RETURN" },
	{ 1ULL << 6, "IND_CALL" },   { 1ULL << 7, "ABORT_TX" },
	{ 1ULL << 8, "IN_TX" },      { 1ULL << 9, "NO_TX" },
	{ 1ULL << 10, "COND" },      { 1ULL << 11, "CALL_STACK" },
	{ 1ULL << 12, "IND_JUMP" },  { 1ULL << 13, "CALL" },
	{ 1ULL << 14, "NO_FLAGS" },  { 1ULL << 15, "NO_CYCLES" },
	{ 1ULL << 16, "TYPE_SAVE" }, { 1ULL << 17, "HW_INDEX" },
	{ 1ULL << 18, "PRIV_SAVE" }, { 0, NULL },
};

static const struct bit_name read_format_bits[] = {
	{ PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED" },
	{ PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING" },
	{ PERF_FORMAT_ID, "ID" },
	{ PERF_FORMAT_GROUP, "GROUP" },
	{ PERF_FORMAT_LOST, "LOST" },
	{ 0, NULL },
};

/* The one-bit flags of perf_event_attr, by bit position in the flags
 * word, in the order perf prints them (precise_ip, two bits at 15, is
 * printed in its place by print_attr). */
static const char *const flag_names[] = {
	"disabled",
	"inherit",
	"pinned",
	"exclusive",
	"exclude_user",
	"exclude_kernel",
	"exclude_hv",
	"exclude_idle",
	"mmap",
	"comm",
	"freq",
	"inherit_stat",
	"enable_on_exec",
	"task",
	"watermark",
	NULL,
	NULL,
	"mmap_data",
	"sample_id_all",
	"exclude_host",
	"exclude_guest",
	"exclude_callchain_kernel",
	"exclude_callchain_user",
	"mmap2",
	"comm_exec",
	"use_clockid",
	"context_switch",
	"write_backward",
	"namespaces",
	"ksymbol",
	"bpf_event",
	"aux_output",
	"cgroup",
	"text_poke",
	"build_id",
	"inherit_thread",
	"remove_on_exec",
	"sigtrap",
};

struct attr_printer {
	struct ps_strbuf *out;
	char buf[1024]; /* shared by the fields, as in perf */
};

static void field(struct attr_printer *p, const char *name)
{
	ps_strbuf_addf(p->out, ", %s = %s", name, p->buf);
}

static void field_u(struct attr_printer *p, const char *name, uint64_t v)
{
	if (!v)
		return;
	snprintf(p->buf, sizeof(p->buf), "%" PRIu64, v);
	field(p, name);
}

static void field_x(struct attr_printer *p, const char *name, uint64_t v)
{
	if (!v)
		return;
	snprintf(p->buf, sizeof(p->buf), "%#" PRIx64, v);
	field(p, name);
}

static void field_bits(struct attr_printer *p, const char *name, uint64_t v,
                       const struct bit_name *bits)
{
	if (!v)
		return;
	bits_to_buf(p->buf, sizeof(p->buf), v, bits);
	field(p, name);
}

static void print_attr(struct ps_strbuf *out, const struct ps_attr *a)
{
	struct attr_printer p = { .out = out, .buf = "" };

	field_u(&p, "type", a->type);
	field_u(&p, "size", a->size);
	field_x(&p, "config", a->config);
	field_u(&p, "{ sample_period, sample_freq }", a->sample_period);
	field_bits(&p, "sample_type", a->sample_type, sample_type_bits);
	field_bits(&p, "read_format", a->read_format, read_format_bits);
	for (unsigned bit = 0; bit < sizeof(flag_names) / sizeof(flag_names[0]); bit++) {
		if (bit == 15)
			field_u(&p, "precise_ip", (a->flags >> 15) & 3);
		if (flag_names[bit])
			field_u(&p, flag_names[bit], (a->flags >> bit) & 1);
	}
	field_u(&p, "{ wakeup_events, wakeup_watermark }", a->wakeup_events);
	field_u(&p, "bp_type", a->bp_type);
	field_x(&p, "{ bp_addr, config1 }", a->config1);
	field_x(&p, "{ bp_len, config2 }", a->config2);
	field_bits(&p, "branch_sample_type", a->branch_sample_type, branch_type_bits);
	field_x(&p, "sample_regs_user", a->sample_regs_user);
	field_u(&p, "sample_stack_user", a->sample_stack_user);
	if (a->clockid) {
		snprintf(p.buf, sizeof(p.buf), "%" PRId64, (int64_t)a->clockid);
		field(&p, "clockid");
	}
	field_x(&p, "sample_regs_intr", a->sample_regs_intr);
	field_u(&p, "aux_watermark", a->aux_watermark);
	field_u(&p, "sample_max_stack", a->sample_max_stack);
	field_u(&p, "aux_sample_size", a->aux_sample_size);
	field_u(&p, "sig_data", a->sig_data);
	/* newer than perf 6.1 (which refuses such files); newer perf prints it here */
	field_x(&p, "config3", a->config3);
}

static void print_event_desc(struct ps_strbuf *out, const struct ps_reader *reader)
{
	for (size_t i = 0; i < ps_reader_nr_attrs(reader); i++) {
		const struct ps_attr *a = ps_reader_attr(reader, i);

		if (!a)
			continue;
		ps_strbuf_addf(out, "# event : name = %s, ", a->name);
		if (a->nr_ids) {
			ps_strbuf_addstr(out, ", id = {");
			for (size_t j = 0; j < a->nr_ids; j++)
				ps_strbuf_addf(out, "%s %" PRIu64, j ? "," : "", a->ids[j]);
			ps_strbuf_addstr(out, " }");
		}
		print_attr(out, a);
		ps_strbuf_addch(out, '\n');
	}
}

/* ------------------------------------------------------------------ */
/* other features                                                      */
/* ------------------------------------------------------------------ */

static void print_cmdline(struct ps_strbuf *out, const struct ps_string_list *argv)
{
	ps_strbuf_addstr(out, "# cmdline : ");
	for (size_t i = 0; i < argv->nr; i++) {
		/* perf writes each quote as \' so the line can be pasted back */
		for (const char *s = argv->items[i]; *s; s++) {
			if (*s == '\'')
				ps_strbuf_addstr(out, "\\'");
			else
				ps_strbuf_addch(out, *s);
		}
		ps_strbuf_addch(out, ' ');
	}
	ps_strbuf_addch(out, '\n');
}

static void print_pmu_mappings(struct ps_strbuf *out, const struct ps_features *f)
{
	if (!f->nr_pmu_mappings) {
		ps_strbuf_addstr(out, "# pmu mappings: not available\n");
		return;
	}
	for (size_t i = 0; i < f->nr_pmu_mappings; i++)
		ps_strbuf_addf(out, "%s%s = %" PRIu32,
		               i ? ", " : "# pmu mappings: ", str_or_null(f->pmu_names[i]),
		               f->pmu_types[i]);
	ps_strbuf_addch(out, '\n');
}

static void print_sample_time(struct ps_strbuf *out, const struct ps_features *f)
{
	uint64_t first = f->first_sample_time, last = f->last_sample_time;

	ps_strbuf_addf(out, "# time of first sample : %" PRIu64 ".%06" PRIu64 "\n",
	               first / 1000000000, first % 1000000000 / 1000);
	ps_strbuf_addf(out, "# time of last sample : %" PRIu64 ".%06" PRIu64 "\n",
	               last / 1000000000, last % 1000000000 / 1000);
	ps_strbuf_addf(out, "# sample duration : %10.3f ms\n", (double)(last - first) / 1000000.0);
}

static const char *clockid_name(uint32_t clockid)
{
	switch (clockid) {
	case 0:
		return "realtime";
	case 1:
		return "monotonic";
	case 4:
		return "monotonic_raw";
	case 7:
		return "boottime";
	case 11:
		return "tai";
	default:
		return "(not found)";
	}
}

static void print_clock_data(struct ps_strbuf *out, const struct ps_features *f)
{
	uint64_t tod = f->clock_wall_ns, ref = f->clock_clockid_ns;
	time_t sec = (time_t)(tod / 1000000000);
	int usec = (int)(tod % 1000000000 / 1000);
	char date[64], tstr[96] = "<error>";
	struct tm tm;

	/* perf only takes version 1 of the section */
	if (!f->has_clock_data || f->clock_data_version != 1) {
		ps_strbuf_addstr(out, "# reference time disabled\n");
		return;
	}
	if (localtime_r(&sec, &tm) && strftime(date, sizeof(date), "%F %T", &tm))
		snprintf(tstr, sizeof(tstr), "%s.%06d", date, usec);
	ps_strbuf_addf(out, "# clockid: %s (%u)\n", clockid_name(f->clock_data_clockid),
	               f->clock_data_clockid);
	ps_strbuf_addf(out, "# reference time: %s = %ld.%06d (TOD) = %ld.%09ld (%s)\n", tstr,
	               (long)sec, usec, (long)(ref / 1000000000), (long)(ref % 1000000000),
	               clockid_name(f->clock_data_clockid));
}

static void print_feature(struct ps_strbuf *out, const struct ps_reader *reader,
                          const struct ps_features *f, unsigned bit)
{
	switch (bit) {
	case PS_FEAT_HOSTNAME:
		ps_strbuf_addf(out, "# hostname : %s\n", str_or_null(f->hostname));
		break;
	case PS_FEAT_OSRELEASE:
		ps_strbuf_addf(out, "# os release : %s\n", str_or_null(f->osrelease));
		break;
	case PS_FEAT_VERSION:
		ps_strbuf_addf(out, "# perf version : %s\n", str_or_null(f->version));
		break;
	case PS_FEAT_ARCH:
		ps_strbuf_addf(out, "# arch : %s\n", str_or_null(f->arch));
		break;
	case PS_FEAT_NRCPUS:
		ps_strbuf_addf(out, "# nrcpus online : %u\n# nrcpus avail : %u\n",
		               f->nr_cpus_online, f->nr_cpus_available);
		break;
	case PS_FEAT_CPUDESC:
		ps_strbuf_addf(out, "# cpudesc : %s\n", str_or_null(f->cpudesc));
		break;
	case PS_FEAT_CPUID:
		ps_strbuf_addf(out, "# cpuid : %s\n", str_or_null(f->cpuid));
		break;
	case PS_FEAT_TOTAL_MEM:
		ps_strbuf_addf(out, "# total memory : %" PRIu64 " kB\n", f->total_mem_kb);
		break;
	case PS_FEAT_CMDLINE:
		print_cmdline(out, &f->cmdline);
		break;
	case PS_FEAT_EVENT_DESC:
		print_event_desc(out, reader);
		break;
	case PS_FEAT_CPU_TOPOLOGY:
		ps_info_print_cpu_topology(out, f);
		break;
	case PS_FEAT_NUMA_TOPOLOGY:
		ps_info_print_numa_topology(out, f);
		break;
	case PS_FEAT_CACHE:
		ps_info_print_cache(out, f);
		break;
	case PS_FEAT_MEM_TOPOLOGY:
		ps_info_print_mem_topology(out, f);
		break;
	case PS_FEAT_HYBRID_TOPOLOGY:
		ps_info_print_hybrid_topology(out, f);
		break;
	case PS_FEAT_GROUP_DESC:
		ps_info_print_group_desc(out, reader, f);
		break;
	case PS_FEAT_BPF_PROG_INFO:
		ps_info_print_bpf_prog_info(out, f, !ps_reader_is_pipe(reader));
		break;
	case PS_FEAT_BPF_BTF:
		ps_info_print_bpf_btf(out, f);
		break;
	case PS_FEAT_CPU_PMU_CAPS:
		ps_info_print_cpu_pmu_caps(out, f);
		break;
	case PS_FEAT_PMU_CAPS:
		ps_info_print_pmu_caps(out, f);
		break;
	case PS_FEAT_BRANCH_STACK:
		/* a pipe carries no BRANCH_STACK or STAT record: perf has
		 * nothing to read them with there */
		if (!ps_reader_is_pipe(reader))
			ps_strbuf_addstr(out, "# contains samples with branch stack\n");
		break;
	case PS_FEAT_PMU_MAPPINGS:
		print_pmu_mappings(out, f);
		break;
	case PS_FEAT_AUXTRACE:
		ps_strbuf_addstr(out, "# contains AUX area data (e.g. instruction trace)\n");
		break;
	case PS_FEAT_STAT:
		if (!ps_reader_is_pipe(reader))
			ps_strbuf_addstr(out, "# contains stat data\n");
		break;
	case PS_FEAT_SAMPLE_TIME:
		print_sample_time(out, f);
		break;
	case PS_FEAT_CLOCKID:
		ps_strbuf_addf(out, "# clockid frequency: %" PRIu64 " MHz\n",
		               f->clockid_res_ns * 1000);
		break;
	case PS_FEAT_DIR_FORMAT:
		/* perf reads the version only into a folder's capture: a file
		 * shows 0 */
		ps_strbuf_addf(out, "# directory data version : %" PRIu64 "\n",
		               ps_reader_is_folder(reader) ? f->dir_format_version : 0);
		break;
	case PS_FEAT_COMPRESSED:
		ps_strbuf_addf(out, "# compressed : %s, level = %d, ratio = %d\n",
		               f->comp_type == 1 ? "Zstd" : "Unknown", (int)f->comp_level,
		               (int)f->comp_ratio);
		break;
	case PS_FEAT_CLOCK_DATA:
		print_clock_data(out, f);
		break;
	default:
		/* TRACING_DATA and BUILD_ID: perf prints nothing (pystitch's
		 * own lines, with --pystitch, follow perf's text) */
		break;
	}
}

/* perf's feat_ops[].full_only: printed only with -I, else a hint */
static bool full_only(unsigned bit)
{
	return bit == PS_FEAT_CPU_TOPOLOGY || bit == PS_FEAT_NUMA_TOPOLOGY ||
	       bit == PS_FEAT_CACHE || bit == PS_FEAT_MEM_TOPOLOGY ||
	       bit == PS_FEAT_HYBRID_TOPOLOGY;
}

/* pystitch's own lines (--pystitch), after perf's text: the build-ids
 * (`perf buildid-list`) and how many tracepoint formats the TRACING_DATA
 * held. */
static void print_extras(struct ps_strbuf *out, const struct ps_features *f)
{
	if (f->has_tracing_data)
		ps_strbuf_addf(out, "# tracing data : %" PRIu64 " bytes, %zu event formats\n",
		               f->tracing_data_size, f->tracing_nr_events);
	for (size_t i = 0; i < f->nr_build_ids; i++) {
		const struct ps_build_id *b = &f->build_ids[i];
		size_t n = b->size < sizeof(b->id) ? b->size : sizeof(b->id);

		ps_strbuf_addstr(out, "# build id ");
		for (size_t j = 0; j < n; j++)
			ps_strbuf_addf(out, "%02x", b->id[j]);
		ps_strbuf_addf(out, " %s\n", str_or_null(b->filename));
	}
}

static bool damaged(const struct ps_features *f, unsigned bit)
{
	return (f->damaged[bit / 64] >> (bit % 64)) & 1;
}

/* perf_session__fprintf_info(): the frame, and in a file the features
 * inside it; in a pipe the features arrive as records after perf has
 * closed the frame, and it prints each as it comes (in bit order, the
 * order perf record writes them). */
void ps_info_print(struct ps_strbuf *out, const struct ps_reader *reader, time_t captured_on,
                   bool show_info, bool pystitch)
{
	const struct ps_features *f = ps_reader_features(reader);
	bool pipe = ps_reader_is_pipe(reader);
	char when[64];

	/* ctime()'s format, newline included */
	if (!ctime_r(&captured_on, when))
		snprintf(when, sizeof(when), "(unknown)\n");
	ps_strbuf_addstr(out, "# ========\n");
	ps_strbuf_addf(out, "# captured on    : %s", when);
	ps_strbuf_addstr(out, "# header version : 1\n");
	ps_strbuf_addf(out, "# data offset    : %" PRIu64 "\n",
	               pipe ? 0 : ps_reader_data_offset(reader));
	ps_strbuf_addf(out, "# data size      : %" PRIu64 "\n",
	               pipe ? 0 : ps_reader_data_size(reader));
	ps_strbuf_addf(out, "# feat offset    : %" PRIu64 "\n",
	               pipe ? 0 : ps_reader_data_offset(reader) + ps_reader_data_size(reader));
	if (pipe)
		ps_strbuf_addstr(out, "# ========\n#\n");
	/* a damaged feature was warned about and is left out */
	for (unsigned bit = 1; f && bit < PS_FEAT_LAST; bit++) {
		static const struct ps_features unread;
		unsigned stop = f->perf_stops_at;

		if (!has_feat(f, bit) || damaged(f, bit))
			continue;
		/* where perf stops reading features, a pipe ends (perf
		 * fails); in a file perf prints what it has: nothing read */
		if (stop && bit >= stop && pipe)
			break;
		if (full_only(bit) && !show_info)
			ps_strbuf_addf(out, "# %s info available, use -I to display\n",
			               ps_feature_name(bit));
		else
			print_feature(out, reader, stop && bit > stop ? &unread : f, bit);
	}
	if (!pipe) {
		ps_strbuf_addstr(out, "# missing features: ");
		for (unsigned bit = 1; bit < PS_FEAT_LAST; bit++)
			if (!f || !has_feat(f, bit))
				ps_strbuf_addf(out, "%s ", str_or_null(ps_feature_name(bit)));
		ps_strbuf_addstr(out, "\n# ========\n#\n");
	}
	if (pystitch && f)
		print_extras(out, f);
}

/* "#   lines: FILE, N code objects; L of F Python frames (x%) have a line:
 * D from libpython's DWARF, S from a scan of their registers and stack" */
static void print_lines(struct ps_strbuf *out, const struct ps_python_process *p)
{
	uint64_t lined = p->lines_dwarf + p->lines_scan;

	ps_strbuf_addstr(out, "#   lines: ");
	if (p->lines_error) {
		ps_strbuf_addf(out, "none, %s\n", p->lines_error);
		return;
	}
	if (!p->lines_file) {
		ps_strbuf_addstr(out, "none (no side file: run the program with pystitch_perf)\n");
		return;
	}
	ps_strbuf_addf(out, "%s, %zu code objects; ", p->lines_file, p->lines_codes);
	if (!p->python_frames) {
		ps_strbuf_addstr(out, "no Python frame in the stacks read\n");
		return;
	}
	ps_strbuf_addf(out,
	               "%llu of %llu Python frames (%.2f%%) have a line: %llu from libpython's "
	               "DWARF, %llu from a scan of their registers and stack\n",
	               (unsigned long long)lined, (unsigned long long)p->python_frames,
	               100.0 * (double)lined / (double)p->python_frames,
	               (unsigned long long)p->lines_dwarf, (unsigned long long)p->lines_scan);
}

void ps_info_print_python(struct ps_strbuf *out, const struct ps_python_process *p, bool first)
{
	if (first)
		ps_strbuf_addstr(out, "# ========\n# python processes\n");
	ps_strbuf_addf(out, "# pid %d (%s): ", (int)p->pid, p->comm ? p->comm : "?");
	if (!p->interpreter)
		ps_strbuf_addstr(out, "JIT code, no CPython interpreter found\n");
	else if (p->major)
		ps_strbuf_addf(out, "CPython %d.%d.%d (from %s) in %s%s\n", p->major, p->minor,
		               p->micro, p->version_source ? p->version_source : "?",
		               p->interpreter, p->dynsym_only ? " (.dynsym only)" : "");
	else
		ps_strbuf_addf(out, "CPython, version unknown, in %s\n", p->interpreter);
	if (p->interpreter || p->has_trampoline) {
		ps_strbuf_addf(out, "#   trampoline template: %s",
		               !p->has_trampoline ? "none (-X perf needs 3.12+; the pystitch_perf "
		                                    "module gives 3.8-3.11 one)"
		               : p->trampoline_decoded ? "decoded"
		                                       : "not understood (see the warning)");
		if (p->trampoline_file)
			ps_strbuf_addf(out, ", from %s", p->trampoline_file);
		ps_strbuf_addch(out, '\n');
	}
	ps_strbuf_addstr(out, "#   perf map: ");
	if (p->perf_map)
		ps_strbuf_addf(out, "%s, %zu code ranges\n", p->perf_map, p->perf_map_entries);
	else
		ps_strbuf_addstr(out, "none\n");
	ps_strbuf_addstr(out, "#   jitdump: ");
	if (p->jitdump)
		ps_strbuf_addf(out, "%s, %zu code ranges, %zu with unwinding info\n", p->jitdump,
		               p->jitdump_entries, p->jitdump_unwind);
	else
		ps_strbuf_addstr(out, "none\n");
	if (p->missing)
		ps_strbuf_addf(out, "#   Python frames stay unnamed: %s\n", p->missing);
	if (p->error)
		ps_strbuf_addf(out, "#   error: %s\n", p->error);
	print_lines(out, p);
}

/* ---- the public writers (pystitch/output.h) ------------------------ */

int ps_info_write(const struct ps_reader *reader, const struct ps_info_opts *opts,
                  ps_write_fn write, void *ctx)
{
	struct ps_info_opts o;
	struct ps_sink sink;
	int err;

	if (ps_opts_copy(&o, sizeof(o), opts))
		return -EINVAL;
	ps_sink_init(&sink, write, ctx);
	ps_info_print(&sink.text, reader, (time_t)o.captured_on, o.show_info, o.pystitch);
	err = ps_sink_drain(&sink);
	ps_sink_release(&sink);
	return err;
}

int ps_info_write_python(const struct ps_python_process *process, bool heading, ps_write_fn write,
                         void *ctx)
{
	struct ps_sink sink;
	int err;

	ps_sink_init(&sink, write, ctx);
	ps_info_print_python(&sink.text, process, heading);
	err = ps_sink_drain(&sink);
	ps_sink_release(&sink);
	return err;
}
