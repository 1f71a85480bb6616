/* `pystitch dump`: the fields perf 6.1's `perf report -D` prints for the
 * kernel's records (type < 64) other than samples: what the machine_*
 * and perf_event__fprintf_* functions of util/machine.c and util/event.c
 * print after the record's name. */
#include "output/dump_priv.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <string.h>

static void print_mmap(struct ps_strbuf *out, const struct ps_event *ev)
{
	const struct ps_record_mmap *m = &ev->u.mmap;

	ps_strbuf_addf(out, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
	               (int32_t)m->pid, (int32_t)m->tid, m->start, m->len, m->pgoff,
	               (ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 'r' : 'x', m->filename);
}

static void print_mmap2(struct ps_strbuf *out, const struct ps_event *ev)
{
	const struct ps_record_mmap *m = &ev->u.mmap;
	char prot[5] = {
		(m->prot & 1) ? 'r' : '-', /* PROT_READ */
		(m->prot & 2) ? 'w' : '-', /* PROT_WRITE */
		(m->prot & 4) ? 'x' : '-', /* PROT_EXEC */
		(m->flags & 1) ? 's' : 'p', /* MAP_SHARED */
		0,
	};

	ps_strbuf_addf(out, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64, (int32_t)m->pid,
	               (int32_t)m->tid, m->start, m->len, m->pgoff);
	if (ev->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		size_t n = m->build_id_size < sizeof(m->build_id) ? m->build_id_size
		                                                  : sizeof(m->build_id);

		ps_strbuf_addstr(out, " <");
		for (size_t i = 0; i < n; i++)
			ps_strbuf_addf(out, "%02x", m->build_id[i]);
		ps_strbuf_addch(out, '>');
	} else {
		ps_strbuf_addf(out, " %02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min, m->ino,
		               m->ino_generation);
	}
	ps_strbuf_addf(out, "]: %s %s\n", prot, m->filename);
}

static void print_namespaces(struct ps_strbuf *out, const struct ps_record_namespaces *ns)
{
	static const char *const names[] = { "net", "uts", "ipc", "pid", "user", "mnt", "cgroup" };
	uint32_t nr = (uint32_t)ns->nr_namespaces;

	ps_strbuf_addf(out, " %d/%d - nr_namespaces: %u\n\t\t[", (int32_t)ns->pid, (int32_t)ns->tid,
	               nr);
	/* only the entries the record really holds are printed */
	for (uint32_t i = 0; i < nr && i < ns->nr; i++) {
		if (i && i % 4 == 0)
			ps_strbuf_addstr(out, "\n\t\t ");
		ps_strbuf_addf(out, "%u/%s: %" PRIu64 "/%#" PRIx64 "%s", i,
		               i < sizeof(names) / sizeof(names[0]) ? names[i] : "UNKNOWN",
		               ns->dev_ino[2 * i], ns->dev_ino[2 * i + 1],
		               i + 1 != nr ? ", " : "]\n");
	}
}

static void print_switch(struct ps_strbuf *out, const struct ps_event *ev)
{
	bool is_out = ev->misc & PERF_RECORD_MISC_SWITCH_OUT;
	const char *in_out = !is_out                                             ? "IN         "
	                     : !(ev->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? "OUT        "
	                                                                         : "OUT preempt";

	if (ev->type == PERF_RECORD_SWITCH) {
		ps_strbuf_addf(out, " %s\n", in_out);
		return;
	}
	ps_strbuf_addf(out, " %s  %s pid/tid: %5d/%-5d\n", in_out, is_out ? "next" : "prev",
	               (int32_t)ev->u.context_switch.next_prev_pid,
	               (int32_t)ev->u.context_switch.next_prev_tid);
}

/* perf_event__fprintf_text_poke(): the address, the kernel's symbol there
 * with its offset when the machine's kernel maps have one, the lengths,
 * then the old and the new bytes. */
static void print_text_poke(struct ps_strbuf *out, const struct ps_record_text_poke *tp,
                            const struct ps_kernel_namer *namer)
{
	const char *sym = NULL;
	uint64_t start = 0;

	if (namer)
		sym = namer->name(namer->ctx, tp->addr, &start);
	ps_strbuf_addf(out, " %" PRIx64 " ", tp->addr);
	if (sym)
		ps_strbuf_addf(out, "%s+0x%" PRIx64, sym, tp->addr - start);
	ps_strbuf_addf(out, " old len %u new len %u\n", tp->old_len, tp->new_len);
	for (int part = 0; part < 2 && tp->bytes; part++) {
		const uint8_t *b = tp->bytes + (part ? tp->old_len : 0);
		size_t len = part ? tp->new_len : tp->old_len;

		for (size_t i = 0; i < len; i++) {
			if (i % 16 == 0)
				ps_strbuf_addf(out, "            %s bytes:", part ? "New" : "Old");
			ps_strbuf_addf(out, " %02x", b[i]);
			if (i % 16 == 15 || i == len - 1)
				ps_strbuf_addch(out, '\n');
		}
	}
}

/* dump_read(): perf reads the values at the offsets of the
 * {value, time_enabled, time_running, id, lost} layout whatever the
 * read_format, so we read them from the raw record the same way. */
static void print_read(struct ps_strbuf *out, const struct ps_reader *reader,
                       const struct ps_event *ev)
{
	const struct ps_attr *attr = ev->attr;
	uint64_t rf;

	ps_strbuf_addf(out, ": %d %d %s %" PRIu64 "\n", (int32_t)ev->u.read.pid,
	               (int32_t)ev->u.read.tid, attr ? attr->name : "unknown",
	               ps_dump_raw_u64(reader, ev, 16));
	if (!attr)
		return;
	rf = attr->read_format;
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		ps_strbuf_addf(out, "... time enabled : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 24));
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		ps_strbuf_addf(out, "... time running : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 32));
	if (rf & PERF_FORMAT_ID)
		ps_strbuf_addf(out, "... id           : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 40));
	if (rf & PERF_FORMAT_LOST)
		ps_strbuf_addf(out, "... lost         : %" PRIu64 "\n",
		               ps_dump_raw_u64(reader, ev, 48));
}

/* Not known to perf 6.1; the layout of newer perf's dump is not copied,
 * this prints the cookie and the user callchain. */
static void print_callchain_deferred(struct ps_strbuf *out,
                                     const struct ps_record_callchain_deferred *cd)
{
	ps_strbuf_addf(out, " cookie: %#" PRIx64 "\n... FP chain: nr:%zu\n", cd->cookie, cd->nr);
	for (size_t i = 0; i < cd->nr; i++)
		ps_strbuf_addf(out, "..... %2d: %016" PRIx64 "\n", (int)i, cd->ips[i]);
}

void ps_dump_kernel_fields(struct ps_strbuf *out, const struct ps_reader *reader,
                           const struct ps_event *ev, const struct ps_kernel_namer *namer)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
		print_mmap(out, ev);
		break;
	case PERF_RECORD_MMAP2:
		print_mmap2(out, ev);
		break;
	case PERF_RECORD_COMM:
		ps_strbuf_addf(out, "%s: %s:%d/%d\n",
		               (ev->misc & PERF_RECORD_MISC_COMM_EXEC) ? " exec" : "",
		               ev->u.comm.comm, (int32_t)ev->u.comm.pid, (int32_t)ev->u.comm.tid);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ps_strbuf_addf(out, "(%d:%d):(%d:%d)\n", (int32_t)ev->u.fork.pid,
		               (int32_t)ev->u.fork.tid, (int32_t)ev->u.fork.ppid,
		               (int32_t)ev->u.fork.ptid);
		break;
	case PERF_RECORD_LOST:
		ps_strbuf_addf(out, ": id:%" PRIu64 ": lost:%" PRIu64 "\n", ev->u.lost.id,
		               ev->u.lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		/* the id comes from the sample_id trailer; perf's default is -1 */
		ps_strbuf_addf(out, ": id:%" PRIu64 ": lost samples :%" PRIu64 "\n",
		               ev->sample_id.has_id ? ev->sample_id.id : UINT64_MAX,
		               ev->u.lost.lost);
		break;
	case PERF_RECORD_READ:
		print_read(out, reader, ev);
		break;
	case PERF_RECORD_AUX:
		ps_strbuf_addf(out,
		               " offset: %#" PRIx64 " size: %#" PRIx64 " flags: %#" PRIx64
		               " [%s%s%s]\n",
		               ev->u.aux.aux_offset, ev->u.aux.aux_size, ev->u.aux.flags,
		               (ev->u.aux.flags & PERF_AUX_FLAG_TRUNCATED) ? "T" : "",
		               (ev->u.aux.flags & PERF_AUX_FLAG_OVERWRITE) ? "O" : "",
		               (ev->u.aux.flags & PERF_AUX_FLAG_PARTIAL) ? "P" : "");
		break;
	case PERF_RECORD_ITRACE_START:
		ps_strbuf_addf(out, " pid: %u tid: %u\n", ev->u.itrace_start.pid,
		               ev->u.itrace_start.tid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		print_switch(out, ev);
		break;
	case PERF_RECORD_NAMESPACES:
		print_namespaces(out, &ev->u.namespaces);
		break;
	case PERF_RECORD_KSYMBOL:
		ps_strbuf_addf(out, " addr %" PRIx64 " len %u type %u flags 0x%x name %s\n",
		               ev->u.ksymbol.addr, ev->u.ksymbol.len, ev->u.ksymbol.ksym_type,
		               ev->u.ksymbol.flags, ev->u.ksymbol.name);
		break;
	case PERF_RECORD_BPF_EVENT:
		ps_strbuf_addf(out, " type %u, flags %u, id %u\n", ev->u.bpf_event.type,
		               ev->u.bpf_event.flags, ev->u.bpf_event.id);
		break;
	case PERF_RECORD_CGROUP:
		ps_strbuf_addf(out, " cgroup: %" PRIu64 " %s\n", ev->u.cgroup.id,
		               ev->u.cgroup.path);
		break;
	case PERF_RECORD_TEXT_POKE:
		print_text_poke(out, &ev->u.text_poke, namer);
		break;
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		ps_strbuf_addf(out, " hw_id: %#" PRIx64 "\n", ev->u.aux_output_hw_id.hw_id);
		break;
	case PS_RECORD_CALLCHAIN_DEFERRED:
		print_callchain_deferred(out, &ev->u.callchain_deferred);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		ps_dump_unhandled(out);
		break;
	default:
		break;
	}
}
