/* perf script -F brstackinsn (perf_sample__fprintf_brstackinsn() of perf
 * 6.1): the code a sample's branch stack says ran, block by block, from
 * the oldest branch to the sampled IP, read from the objects' files
 * (grab_bb()) and cut into instructions by perf's decoder; a line for the
 * function wherever it changes. The lines are the printer's to format.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "insn/insn.h"
#include "session/session_priv.h"

/* perf's MAXBB: the longest block it reads */
#define MAX_BLOCK 16384u
#define MAX_INSN 15u

struct listing {
	struct ps_session *s;
	struct ps_process *process;
	uint8_t code[MAX_BLOCK];
	bool is64;
	unsigned cpumode;
	/* ip__fprintf_sym()'s last function, in its map's addresses */
	bool has_last;
	uint64_t last_start, last_end;
	int err;
};

static struct ps_branch_line *add_line(struct listing *l, enum ps_branch_line_kind kind)
{
	struct ps_session *s = l->s;
	struct ps_branch_line *line;

	if (!ps_array_reserve((void **)&s->branch_lines, &s->cap_branch_lines,
	                      s->stack.nr_branch_lines + 1, sizeof(*s->branch_lines), 64)) {
		l->err = -ENOMEM;
		return NULL;
	}
	s->stack.branch_lines = s->branch_lines;
	line = &s->branch_lines[s->stack.nr_branch_lines++];
	memset(line, 0, sizeof(*line));
	line->kind = kind;
	return line;
}

/* grab_bb(): the code from start to end and an instruction past it, of
 * the object holding start; 0 when there is none to read, -ENXIO when
 * start and end are not both in the kernel or both out of it. */
static long grab_block(struct listing *l, uint64_t start, uint64_t end)
{
	struct ps_pipeline *pipeline = l->s->feed.pipeline;
	bool kernel;
	ssize_t n;

	if (!start || !end)
		return 0;
	kernel = ps_pipeline_kernel_ip(pipeline, start);
	l->cpumode = kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	if (kernel != ps_pipeline_kernel_ip(pipeline, end))
		return -ENXIO;
	if (end - start > MAX_BLOCK - MAX_INSN)
		return 0;
	n = ps_pipeline_read_code(pipeline, l->process, start, l->code,
	                          (size_t)(end - start) + MAX_INSN, &l->is64);
	return n < 0 ? 0 : (long)n;
}

/* ip__fprintf_sym(): the function of ip, unless it is the last one. */
static void symbol_line(struct listing *l, uint64_t ip)
{
	struct ps_pipeline_symbol sym;
	struct ps_branch_line *line;

	ps_pipeline_symbol_at(l->s->feed.pipeline, l->process, l->cpumode, ip, &sym);
	if (l->has_last && sym.mapped && sym.addr >= l->last_start && sym.addr < l->last_end)
		return;
	if (!sym.sym)
		return;
	line = add_line(l, PS_BRANCH_LINE_SYMBOL);
	if (!line)
		return;
	line->sym = sym.sym;
	line->symoff = (int64_t)(sym.addr - sym.start);
	line->srcline = sym.srcline;
	l->has_last = true;
	l->last_start = sym.start;
	l->last_end = sym.end;
}

/* dump_insn(): the instruction at code[off], len - off bytes readable. */
static struct ps_branch_line *insn_line(struct listing *l, enum ps_branch_line_kind kind,
                                        uint64_t ip, long off, long len)
{
	struct ps_branch_line *line = add_line(l, kind);
	struct ps_insn insn;

	if (!line)
		return NULL;
	line->ip = ip;
	if (off < len && ps_insn_decode(l->code + off, (size_t)(len - off), l->is64, &insn)) {
		line->len = insn.length;
		memcpy(line->code, l->code + off, insn.length);
	}
	return line;
}

static void jump_line(struct listing *l, uint64_t ip, long off, long len,
                      const struct ps_branch_entry *entry, unsigned insns)
{
	struct ps_branch_line *line = insn_line(l, PS_BRANCH_LINE_JUMP, ip, off, len);

	if (line) {
		line->flags = entry->flags;
		line->insns = insns;
	}
}

/* The blocks between the branches, oldest first. */
static void middle_blocks(struct listing *l, const struct ps_branch_entry *entries, size_t nr)
{
	for (size_t i = nr - 1; i-- > 0 && !l->err;) {
		uint64_t start = entries[i + 1].to, end = entries[i].from, off;
		long len = grab_block(l, start, end);
		unsigned insns = 0;

		/* an entry into the kernel the LBR filtered out */
		if (len == -ENXIO && i > 0) {
			end = entries[--i].from;
			len = grab_block(l, start, end);
		}
		if (len <= 0)
			continue;
		for (off = 0; off < (uint64_t)len && !l->err;) {
			uint64_t ip = start + off;
			struct ps_branch_line *line;

			symbol_line(l, ip);
			if (ip == end) {
				jump_line(l, ip, (long)off, len, &entries[i], ++insns);
				break;
			}
			line = insn_line(l, PS_BRANCH_LINE_INSN, ip, (long)off, len);
			if (!line || !line->len)
				break;
			off += line->len;
			insns++;
		}
		if (off != end - start)
			add_line(l, PS_BRANCH_LINE_MISMATCH);
	}
}

/* From the latest branch's target to the sampled IP. */
static void last_block(struct listing *l, const struct ps_branch_entry *entries, uint64_t ip)
{
	uint64_t start = entries[0].to, end = ip;
	long len;

	if (entries[0].from == ip || (entries[0].flags & 8)) /* reached, or aborted */
		return;
	/* a branch the LBR missed: the 128 bytes after the target */
	if (end < start)
		end = start + 128;
	len = grab_block(l, start, end);
	symbol_line(l, start);
	if (len <= 0) {
		len = grab_block(l, ip, ip);
		if (len > 0)
			insn_line(l, PS_BRANCH_LINE_INSN, ip, 0, len);
		return;
	}
	for (uint64_t off = 0; off <= end - start && !l->err;) {
		struct ps_branch_line *line =
		        insn_line(l, PS_BRANCH_LINE_INSN, start + off, (long)off, len);
		struct ps_insn insn;

		if (!line || !line->len)
			break;
		/* arch_is_branch() */
		if (ps_insn_decode(l->code + off, (size_t)(len - (long)off), l->is64, &insn) &&
		    insn.branch && start + off != ip) {
			add_line(l, PS_BRANCH_LINE_NOT_REACHING);
			break;
		}
		off += line->len;
	}
}

int ps_session_branch_listing(struct ps_session *s, const struct ps_feed_sample *sample)
{
	const struct ps_sample *smp = &sample->event->u.sample;
	size_t nr = smp->branch_nr;
	struct listing *l = s->listing;
	long len;

	s->stack.has_branch_listing = false;
	s->stack.nr_branch_lines = 0;
	if (!nr || !smp->branches)
		return 0;
	if (!l && !(l = s->listing = calloc(1, sizeof(*l))))
		return -ENOMEM;
	memset(l, 0, offsetof(struct listing, code));
	l->s = s;
	l->process = sample->process;
	l->has_last = false;
	l->err = 0;
	l->is64 = false;
	s->stack.has_branch_listing = true;
	if (s->feed.opts.max_blocks && nr > (size_t)s->feed.opts.max_blocks + 1)
		nr = (size_t)s->feed.opts.max_blocks + 1;
	/* the oldest branch, whose block began before the LBR */
	len = grab_block(l, smp->branches[nr - 1].from, smp->branches[nr - 1].from);
	if (len > 0) {
		symbol_line(l, smp->branches[nr - 1].from);
		jump_line(l, smp->branches[nr - 1].from, 0, len, &smp->branches[nr - 1], 0);
	}
	middle_blocks(l, smp->branches, nr);
	if (!l->err)
		last_block(l, smp->branches, smp->ip);
	return l->err;
}
