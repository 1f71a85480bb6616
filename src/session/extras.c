/* What perf script prints of a sample besides its stack, which needs the
 * machine model at the sample's time: the sampled instruction (-F insn,
 * insnlen), read from the object's file and decoded as perf's x86 decoder
 * does; the source line of the sampled address (-F srccode); the ends of
 * its branch stack named (-F brstack, brstacksym, brstackoff). */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/array.h"
#include "insn/insn.h"
#include "reader/reader.h"
#include "session/session_priv.h"
#include "symbols/symbols.h"

/* perf fetches instructions only when the capture was made on a machine
 * of this architecture (an i386 one read on x86-64 too), and always in
 * pipe mode, which has no header to tell. */
bool ps_session_native_arch(const struct ps_reader *reader)
{
	const struct ps_features *features = ps_reader_features(reader);
	struct utsname uts;

	if (ps_reader_is_pipe(reader))
		return true;
	if (!features || !features->arch || uname(&uts) != 0)
		return false;
	return strcmp(uts.machine, features->arch) == 0 ||
	       (strcmp(uts.machine, "x86_64") == 0 && strcmp(features->arch, "i386") == 0);
}

/* perf's arch_fetch_insn(): PS_INSN_MAX bytes at the IP, and the length
 * perf's decoder gives them. */
static void sample_insn(struct ps_session *s, const struct ps_feed_sample *sample)
{
	const struct ps_sample *smp = &sample->event->u.sample;
	uint8_t code[PS_INSN_MAX];
	struct ps_insn insn;
	bool is64;
	ssize_t n;

	s->stack.insn_len = 0;
	if (!s->native_arch || !smp->ip || !(sample->event->attr->sample_type & PERF_SAMPLE_IP))
		return;
	n = ps_pipeline_read_code(s->feed.pipeline, sample->process, smp->ip, code, sizeof(code),
	                          &is64);
	if (n <= 0 || !ps_insn_decode(code, (size_t)n, is64, &insn))
		return;
	s->stack.insn_len = insn.length;
	memcpy(s->stack.insn, code, insn.length);
}

/* perf's map__fprintf_srccode() for the sampled address, without its
 * per-thread memory of what it printed last (the printer keeps that,
 * seeing only the samples it prints). */
static void sample_srccode(struct ps_session *s, const struct ps_feed_sample *sample)
{
	const struct ps_event *ev = sample->event;
	const char *text;
	unsigned line;
	size_t len;

	s->stack.srccode_file = NULL;
	if (!ps_pipeline_source(s->feed.pipeline, sample->process,
	                        ev->misc & PERF_RECORD_MISC_CPUMODE_MASK, ev->u.sample.ip,
	                        s->srccode_file, sizeof(s->srccode_file), &line) ||
	    !ps_symbols_source_text(ps_pipeline_symbols(s->feed.pipeline), s->srccode_file, line,
	                            &text, &len))
		return;
	s->stack.srccode_file = s->srccode_file;
	s->stack.srccode_line = line;
	s->stack.srccode_text = text;
	s->stack.srccode_len = len;
}

/* The ends of the sample's branches named as perf's -F brstack* names
 * them, in the order perf looks them up. */
static int sample_branches(struct ps_session *s, const struct ps_feed_sample *sample)
{
	const struct ps_event *ev = sample->event;
	const struct ps_sample *smp = &ev->u.sample;
	unsigned cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool symbols = s->feed.opts.branches == PS_BRANCHES_SYMBOLS;

	s->stack.nr_branches = 0;
	s->stack.branches = NULL;
	if (!smp->branch_nr || !smp->branches)
		return 0;
	if (!ps_array_reserve((void **)&s->branches, &s->cap_branches, smp->branch_nr,
	                      sizeof(*s->branches), 16))
		return -ENOMEM;
	for (size_t i = 0; i < smp->branch_nr; i++) {
		struct ps_branch *b = &s->branches[i];

		ps_pipeline_name_branch(s->feed.pipeline, sample->process, cpumode,
		                        smp->branches[i].from, symbols, &b->from);
		ps_pipeline_name_branch(s->feed.pipeline, sample->process, cpumode,
		                        smp->branches[i].to, symbols, &b->to);
		b->flags = smp->branches[i].flags;
	}
	s->stack.nr_branches = smp->branch_nr;
	s->stack.branches = s->branches;
	return 0;
}

/* perf's sample_addr_correlates_sym(): the addresses of page faults are
 * places in the process (and those of Intel BTS branches, a hardware
 * trace perf script's --itrace decodes, which pystitch leaves out) */
static void sample_addr_name(struct ps_session *s, const struct ps_feed_sample *sample)
{
	const struct ps_event *ev = sample->event;
	const struct ps_attr *attr = ev->attr;

	s->stack.has_addr_name = false;
	if (!(attr->sample_type & PERF_SAMPLE_ADDR) || attr->type != PERF_TYPE_SOFTWARE ||
	    (attr->config != PERF_COUNT_SW_PAGE_FAULTS &&
	     attr->config != PERF_COUNT_SW_PAGE_FAULTS_MIN &&
	     attr->config != PERF_COUNT_SW_PAGE_FAULTS_MAJ))
		return;
	ps_pipeline_name_branch(s->feed.pipeline, sample->process,
	                        ev->misc & PERF_RECORD_MISC_CPUMODE_MASK, ev->u.sample.addr, true,
	                        &s->stack.addr_name);
	s->stack.has_addr_name = true;
}

const char *ps_session_kernel_symbol(void *session, uint64_t addr, uint64_t *start)
{
	struct ps_session *s = session;
	struct ps_branch_end name;

	if (!s)
		return NULL;
	ps_pipeline_name_branch(s->feed.pipeline, NULL, PERF_RECORD_MISC_KERNEL, addr, true, &name);
	if (!name.sym)
		return NULL;
	*start = addr - name.symoff;
	return name.sym;
}

const char *ps_session_text_poke_symbol(void *session, uint64_t addr, uint64_t *start)
{
	struct ps_session *s = session;

	return s ? ps_pipeline_text_poke_symbol(s->feed.pipeline, addr, start) : NULL;
}

void ps_session_stack_printed(struct ps_session *s)
{
	/* perf script fetches every printed sample's instruction of a
	 * native capture, -F insn or not; the first fetch asks where the
	 * kernel starts, which loads the kernel's map */
	if (s && s->native_arch)
		ps_pipeline_load_kernel(s->feed.pipeline);
}

int ps_session_sample_extras(struct ps_session *s, const struct ps_feed_sample *sample)
{
	int err;

	s->stack.thread_serial = sample->thread->serial;
	if (s->feed.opts.addr_names)
		sample_addr_name(s, sample);
	if (s->feed.opts.sample_insn)
		sample_insn(s, sample);
	if (s->feed.opts.branches && sample_branches(s, sample))
		return -ENOMEM;
	if (s->feed.opts.branch_listing && (err = ps_session_branch_listing(s, sample)))
		return err;
	/* last, as perf looks it up after printing the sample (and its
	 * text is valid only until the next source lookup) */
	if (s->feed.opts.srccode)
		sample_srccode(s, sample);
	return 0;
}
