/* perf script's --show-*-events: the records other than samples, each on
 * one line that starts as a sample's does (perf_sample__fprintf_start())
 * and goes on with perf_event__fprintf()'s text, the text `pystitch dump`
 * prints after a record's offset and size. */
#include <linux/perf_event.h>

#include "output/script_priv.h"

uint32_t ps_script_record_show(uint32_t record_type)
{
	switch (record_type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return PS_SCRIPT_SHOW_TASK;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return PS_SCRIPT_SHOW_MMAP;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return PS_SCRIPT_SHOW_SWITCH;
	case PERF_RECORD_NAMESPACES:
		return PS_SCRIPT_SHOW_NAMESPACE;
	case PERF_RECORD_CGROUP:
		return PS_SCRIPT_SHOW_CGROUP;
	case PERF_RECORD_LOST:
		return PS_SCRIPT_SHOW_LOST;
	case PS_RECORD_FINISHED_ROUND:
		return PS_SCRIPT_SHOW_ROUND;
	case PERF_RECORD_KSYMBOL:
		return PS_SCRIPT_SHOW_BPF | PS_SCRIPT_SHOW_TEXT_POKE;
	case PERF_RECORD_BPF_EVENT:
		return PS_SCRIPT_SHOW_BPF;
	case PERF_RECORD_TEXT_POKE:
		return PS_SCRIPT_SHOW_TEXT_POKE;
	default:
		return 0;
	}
}

bool ps_script_record_thread(const struct ps_event *ev, int32_t *pid, int32_t *tid)
{
	switch (ev->type) {
	case PERF_RECORD_COMM:
		*pid = (int32_t)ev->u.comm.pid;
		*tid = (int32_t)ev->u.comm.tid;
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		*pid = (int32_t)ev->u.mmap.pid;
		*tid = (int32_t)ev->u.mmap.tid;
		break;
	case PERF_RECORD_NAMESPACES:
		*pid = (int32_t)ev->u.namespaces.pid;
		*tid = (int32_t)ev->u.namespaces.tid;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		*pid = (int32_t)ev->u.fork.pid;
		*tid = (int32_t)ev->u.fork.tid;
		break;
	default:
		/* the trailer's, -1 without one (perf's defaults) */
		*pid = ev->sample_id.has_tid ? (int32_t)ev->sample_id.pid : -1;
		*tid = ev->sample_id.has_tid ? (int32_t)ev->sample_id.tid : -1;
		break;
	}
	return *tid != -1;
}

/* The attr perf prints the record under: the one its id names, else the
 * first (evlist__id2evsel() with one event, or id 0). */
static const struct ps_attr *record_attr(const struct ps_reader *reader, const struct ps_event *ev)
{
	if (ev->attr)
		return ev->attr;
	if (ps_reader_nr_attrs(reader) && (ps_reader_nr_attrs(reader) == 1 || !ev->sample_id.id))
		return ps_reader_attr(reader, 0);
	return NULL;
}

/* filter_cpu(): a record without a CPU (-1) passes */
static bool cpu_wanted(const struct ps_script_format *fmt, int32_t cpu)
{
	if (!fmt->nr_cpus || cpu == -1)
		return true;
	for (size_t i = 0; i < fmt->nr_cpus; i++)
		if (fmt->cpus[i] == cpu)
			return true;
	return false;
}

void ps_script_print_record(struct ps_strbuf *out, struct ps_script_format *fmt,
                            const struct ps_reader *reader, const struct ps_event *ev,
                            const char *comm)
{
	const struct ps_attr *attr = record_attr(reader, ev);
	struct ps_script_start start = { .attr = attr,
		                         .comm = comm,
		                         .pid = -1,
		                         .tid = -1,
		                         .cpu = -1,
		                         .time = UINT64_MAX,
		                         .record_type = ev->type,
		                         .misc = ev->misc };
	if (ev->type == PS_RECORD_FINISHED_ROUND) {
		/* printed as it is read, without a sample's start */
		ps_strbuf_addstr(out, "PERF_RECORD_FINISHED_ROUND\n");
		return;
	}
	if (attr && !(attr->flags & PS_ATTR_SAMPLE_ID_ALL)) {
		int32_t pid, tid;

		ps_script_record_thread(ev, &pid, &tid);
		start.cpu = 0;
		start.pid = pid;
		start.tid = tid;
		start.time = ev->type == PERF_RECORD_FORK || ev->type == PERF_RECORD_EXIT
		                     ? ev->u.fork.time
		                     : 0;
	} else {
		if (ev->sample_id.has_tid) {
			start.pid = (int32_t)ev->sample_id.pid;
			start.tid = (int32_t)ev->sample_id.tid;
		}
		if (ev->sample_id.has_cpu)
			start.cpu = (int32_t)ev->sample_id.cpu;
		if (ev->sample_id.has_time)
			start.time = ev->sample_id.time;
	}
	if (!cpu_wanted(fmt, start.cpu))
		return;
	if (attr)
		ps_script_print_start(out, fmt, &start);
	/* perf_event__fprintf(): the dump's record line, after its
	 * "OFFSET [SIZE]: ", but for LOST, which has a text of its own */
	if (ev->type == PERF_RECORD_LOST) {
		ps_strbuf_addf(out, "PERF_RECORD_LOST lost %llu\n",
		               (unsigned long long)ev->u.lost.lost);
		return;
	}
	/* perf script names a TEXT_POKE's address from its machine */
	struct ps_kernel_namer namer = { .name = fmt->text_poke_symbol,
		                         .ctx = fmt->text_poke_symbol_ctx };

	ps_dump_record_text(out, reader, ev, fmt->text_poke_symbol ? &namer : NULL);
}
