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
#include "base/strbuf.h"
#include "insn/insn.h"
#include "session/session_priv.h"

/* perf's MAXBB: the longest block it reads */
#define MAX_BLOCK 16384u
#define MAX_INSN 15u

/* where a line's source file and text sit in the listing's text, until
 * the listing is whole and they can be pointed to */
struct srccode_at {
	size_t line, file, text;
};

struct listing {
	struct ps_session *s;
	struct ps_process *process;
	/* -F srccode: the lines perf prints a source line after, and the
	 * path of the last one looked up */
	struct ps_strbuf text;
	char path[4096];
	struct srccode_at *at;
	size_t nr_at, cap_at;
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

/* print_srccode() after the last line, for ip: its source line, kept
 * (file and text) in the listing's text. */
static void srccode_after(struct listing *l, uint64_t ip)
{
	struct ps_session *s = l->s;
	struct srccode_at *at;
	const char *text;
	unsigned line;
	size_t len;

	if (!s->feed.opts.srccode || l->err || !s->stack.nr_branch_lines)
		return;
	if (!ps_pipeline_source(s->feed.pipeline, l->process, l->cpumode, ip, l->path,
	                        sizeof(l->path), &line) ||
	    !ps_symbols_source_text(ps_pipeline_symbols(s->feed.pipeline), l->path, line, &text,
	                            &len))
		return;
	if (!ps_array_reserve((void **)&l->at, &l->cap_at, l->nr_at + 1, sizeof(*l->at), 16)) {
		l->err = -ENOMEM;
		return;
	}
	at = &l->at[l->nr_at++];
	at->line = s->stack.nr_branch_lines - 1;
	at->file = l->text.len;
	ps_strbuf_add(&l->text, l->path, strlen(l->path) + 1);
	at->text = l->text.len;
	ps_strbuf_add(&l->text, text, len);
	s->branch_lines[at->line].srccode_line = line;
	s->branch_lines[at->line].srccode_len = len;
}

/* The source lines' strings, once the listing's text stops moving. */
static void point_srccode(struct listing *l)
{
	if (l->text.failed) {
		l->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < l->nr_at; i++) {
		struct ps_branch_line *line = &l->s->branch_lines[l->at[i].line];

		line->srccode_file = l->text.buf + l->at[i].file;
		line->srccode_text = l->text.buf + l->at[i].text;
	}
}

static void jump_line(struct listing *l, uint64_t ip, long off, long len,
                      const struct ps_branch_entry *entry, unsigned insns)
{
	struct ps_branch_line *line = insn_line(l, PS_BRANCH_LINE_JUMP, ip, off, len);

	if (line) {
		line->flags = entry->flags;
		line->insns = insns;
		srccode_after(l, ip);
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
			srccode_after(l, ip);
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
		if (len > 0 && insn_line(l, PS_BRANCH_LINE_INSN, ip, 0, len))
			srccode_after(l, ip);
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
		srccode_after(l, start + off);
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
	l->s = s;
	ps_strbuf_reset(&l->text);
	l->nr_at = 0;
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
	if (!l->err)
		point_srccode(l);
	return l->err;
}

void ps_session_listing_free(struct listing *l)
{
	if (!l)
		return;
	ps_strbuf_release(&l->text);
	free(l->at);
	free(l);
}
