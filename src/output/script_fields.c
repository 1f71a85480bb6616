/* The -F fields of `perf script` beyond the header line and the stack:
 * misc, tod, data_src, the register dumps, page sizes, flags; each
 * printed as perf 6.1's builtin-script.c prints it. */
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "output/script_priv.h"

/* perf_sample__fprintf_start(): the cpumode letters (each tested as all
 * of its bits, so cpumode 3, the hypervisor, is "KUH"), then the record's
 * own letter, padded with fprintf("%*s", 6 - n, " "). */
void ps_script_print_misc(struct ps_strbuf *out, uint32_t record_type, uint16_t misc)
{
	static const struct {
		uint16_t bits;
		char letter;
	} modes[] = {
		{ PERF_RECORD_MISC_KERNEL, 'K' },     { PERF_RECORD_MISC_USER, 'U' },
		{ PERF_RECORD_MISC_HYPERVISOR, 'H' }, { PERF_RECORD_MISC_GUEST_KERNEL, 'G' },
		{ PERF_RECORD_MISC_GUEST_USER, 'g' },
	};
	int n = 0;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if ((misc & modes[i].bits) == modes[i].bits) {
			ps_strbuf_addch(out, modes[i].letter);
			n++;
		}
	switch (record_type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (misc & PERF_RECORD_MISC_MMAP_DATA) {
			ps_strbuf_addch(out, 'M');
			n++;
		}
		break;
	case PERF_RECORD_COMM:
		if (misc & PERF_RECORD_MISC_COMM_EXEC) {
			ps_strbuf_addch(out, 'E');
			n++;
		}
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (misc & PERF_RECORD_MISC_SWITCH_OUT) {
			ps_strbuf_addch(out, 'S');
			n++;
			if (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) {
				ps_strbuf_addch(out, 'p');
				n++;
			}
		}
		break;
	default:
		break;
	}
	/* "%*s" of " ": at least the one space */
	ps_strbuf_add_padded(out, " ", 1, 6 - n);
}

/* tod_scnprintf(): the wall-clock time of the sample from the capture's
 * clock data, in local time. */
void ps_script_print_tod(struct ps_strbuf *out, const struct ps_script_format *fmt, uint64_t time)
{
	const struct ps_features *f = fmt->features;
	uint64_t tod_ns;
	struct tm tm;
	time_t secs;
	char date[64];

	if (!f || !f->has_clock_data) {
		ps_strbuf_addstr(out, "disabled ");
		return;
	}
	tod_ns = f->clock_wall_ns;
	if (time > f->clock_clockid_ns)
		tod_ns += time - f->clock_clockid_ns;
	else
		tod_ns -= f->clock_clockid_ns - time;
	secs = (time_t)(tod_ns / 1000000000u);
	if (!localtime_r(&secs, &tm)) {
		ps_strbuf_addstr(out, "failed ");
		return;
	}
	strftime(date, sizeof(date), "%F %H:%M:%S", &tm);
	if (fmt->ns)
		ps_strbuf_addf(out, "%s.%09" PRIu64 " ", date, tod_ns % 1000000000u);
	else
		ps_strbuf_addf(out, "%s.%06" PRIu64 " ", date, tod_ns % 1000000000u / 1000u);
}

/* ---- data_src: perf_script__meminfo_scnprintf() -------------------- */

/* union perf_mem_data_src, little-endian bit fields */
static uint64_t bits(uint64_t v, unsigned shift, unsigned width)
{
	return (v >> shift) & ((UINT64_C(1) << width) - 1);
}

/* names[i] for each set bit i of m, joined by " or " */
static void add_bit_names(struct ps_strbuf *out, uint64_t m, const char *const *names, size_t nr,
                          bool *printed)
{
	for (size_t i = 0; m && i < nr; i++, m >>= 1) {
		if (!(m & 1))
			continue;
		if (*printed)
			ps_strbuf_addstr(out, " or ");
		ps_strbuf_addstr(out, names[i]);
		*printed = true;
	}
}

static void add_lvl(struct ps_strbuf *out, uint64_t d)
{
	static const char *const lvl[] = {
		"N/A",
		"HIT",
		"MISS",
		"L1",
		"LFB/MAB",
		"L2",
		"L3",
		"Local RAM",
		"Remote RAM (1 hop)",
		"Remote RAM (2 hops)",
		"Remote Cache (1 hop)",
		"Remote Cache (2 hops)",
		"I/O",
		"Uncached",
	};
	static const char *const lvlnum[16] = {
		[0x09] = "CXL", [0x0a] = "I/O",  [0x0b] = "Any cache", [0x0c] = "LFB/MAB",
		[0x0d] = "RAM", [0x0e] = "PMEM", [0x0f] = "N/A",
	};
	static const char *const hops[8] = {
		"N/A", "core, same node", "node, same socket", "socket, same board", "board",
	};
	uint64_t m = bits(d, 5, 14), num = bits(d, 33, 4), hop = bits(d, 43, 3);
	uint64_t hit = m & 2, miss = m & 4;
	size_t start = out->len;
	bool printed = false;

	m &= ~(uint64_t)6;
	if (bits(d, 37, 1))
		ps_strbuf_addstr(out, "Remote ");
	if (hop) {
		/* perf indexes its five names with the 3-bit field */
		ps_strbuf_addstr(out, hops[hop] ? hops[hop] : "");
		ps_strbuf_addch(out, ' ');
	} else {
		add_bit_names(out, m, lvl, sizeof(lvl) / sizeof(lvl[0]), &printed);
	}
	if (num) {
		if (printed)
			ps_strbuf_addstr(out, " or ");
		if (lvlnum[num])
			ps_strbuf_addstr(out, lvlnum[num]);
		else
			ps_strbuf_addf(out, "L%d", (int)num);
	}
	if (out->len == start)
		ps_strbuf_addstr(out, "N/A");
	if (hit)
		ps_strbuf_addstr(out, " hit");
	if (miss)
		ps_strbuf_addstr(out, " miss");
}

static void add_meminfo(struct ps_strbuf *out, uint64_t d)
{
	static const char *const snoop[] = { "N/A", "None", "Hit", "Miss", "HitM" };
	static const char *const snoopx[] = { "Fwd", "Peer" };
	static const char *const tlb[] = { "N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault" };
	uint64_t op = bits(d, 0, 5), lock = bits(d, 24, 2), dtlb = bits(d, 26, 7),
	         blk = bits(d, 40, 3);
	size_t start;
	bool printed = false;

	ps_strbuf_addstr(out, "|OP ");
	ps_strbuf_addstr(out, (op & PERF_MEM_OP_NA)       ? "N/A"
	                      : (op & PERF_MEM_OP_LOAD)   ? "LOAD"
	                      : (op & PERF_MEM_OP_STORE)  ? "STORE"
	                      : (op & PERF_MEM_OP_PFETCH) ? "PFETCH"
	                      : (op & PERF_MEM_OP_EXEC)   ? "EXEC"
	                                                  : "No");
	ps_strbuf_addstr(out, "|LVL ");
	add_lvl(out, d);
	ps_strbuf_addstr(out, "|SNP ");
	start = out->len;
	add_bit_names(out, bits(d, 19, 5), snoop, 5, &printed);
	add_bit_names(out, bits(d, 38, 2), snoopx, 2, &printed);
	if (out->len == start)
		ps_strbuf_addstr(out, "N/A");
	ps_strbuf_addstr(out, "|TLB ");
	start = out->len;
	printed = false;
	add_bit_names(out, dtlb & ~(uint64_t)6, tlb, sizeof(tlb) / sizeof(tlb[0]), &printed);
	if (out->len == start)
		ps_strbuf_addstr(out, "N/A");
	if (dtlb & 2)
		ps_strbuf_addstr(out, " hit");
	if (dtlb & 4)
		ps_strbuf_addstr(out, " miss");
	ps_strbuf_addstr(out, "|LCK ");
	ps_strbuf_addstr(out, (lock & PERF_MEM_LOCK_NA)       ? "N/A"
	                      : (lock & PERF_MEM_LOCK_LOCKED) ? "Yes"
	                                                      : "No");
	ps_strbuf_addstr(out, "|BLK ");
	if (!blk || (blk & 1)) {
		ps_strbuf_addstr(out, " N/A");
	} else {
		if (blk & 2)
			ps_strbuf_addstr(out, " Data");
		if (blk & 4)
			ps_strbuf_addstr(out, " Addr");
	}
}

/* "%16lx %s" of the value and its decoding, left-justified to the widest
 * printed so far (perf keeps that width in a static: it only grows). perf
 * builds the text in a 100-byte buffer: longer text is cut there. */
void ps_script_print_data_src(struct ps_strbuf *out, struct ps_script_format *fmt,
                              uint64_t data_src)
{
	size_t start = out->len;
	int len;

	ps_strbuf_add_hex(out, data_src, 16);
	ps_strbuf_addch(out, ' ');
	add_meminfo(out, data_src);
	if (out->len - start > 99)
		out->len = start + 99;
	len = (int)(out->len - start);
	if (fmt->data_src_width < len)
		fmt->data_src_width = len;
	for (; len < fmt->data_src_width; len++)
		ps_strbuf_addch(out, ' ');
}

/* ---- registers ------------------------------------------------------- */

/* perf_reg_name() for the recording machine's architecture (x86 here;
 * perf prints "unknown" for the names it has no table for) */
static const char *reg_name(const char *arch, unsigned id)
{
	static const char *const x86[] = {
		"AX", "BX", "CX", "DX", "SI", "DI", "BP",  "SP",  "IP",  "FLAGS", "CS",  "SS",
		"DS", "ES", "FS", "GS", "R8", "R9", "R10", "R11", "R12", "R13",   "R14", "R15",
	};
	static const char *const xmm[] = {
		"XMM0", "XMM1", "XMM2",  "XMM3",  "XMM4",  "XMM5",  "XMM6",  "XMM7",
		"XMM8", "XMM9", "XMM10", "XMM11", "XMM12", "XMM13", "XMM14", "XMM15",
	};
	bool is_x86 =
	        arch && (strcmp(arch, "x86_64") == 0 ||
	                 (arch[0] == 'i' && strlen(arch) >= 4 && arch[2] == '8' && arch[3] == '6'));

	if (is_x86 && id < sizeof(x86) / sizeof(x86[0]))
		return x86[id];
	if (is_x86 && id >= 32 && id < 64)
		return xmm[(id - 32) / 2];
	return "unknown";
}

/* perf_sample__fprintf_regs(): nothing when the kernel wrote none */
void ps_script_print_regs(struct ps_strbuf *out, const struct ps_script_format *fmt,
                          const struct ps_regs *regs, uint64_t attr_mask)
{
	const char *arch = fmt->features ? fmt->features->arch : NULL;
	size_t i = 0;

	if (!regs->abi)
		return;
	ps_strbuf_addf(out, " ABI:%" PRIu64 " ", regs->abi);
	/* perf walks the attr's mask; the sample holds one value per bit */
	for (unsigned bit = 0; bit < 64 && i < regs->nr; bit++) {
		if (!(attr_mask & (UINT64_C(1) << bit)))
			continue;
		ps_strbuf_add_padded(out, reg_name(arch, bit), strlen(reg_name(arch, bit)), 5);
		ps_strbuf_addf(out, ":0x%" PRIx64 " ", regs->regs[i++]);
	}
}

/* get_page_size_name(): "N/A" for 0, else unit_number__scnprintf(),
 * which divides by 1024 while the quotient exceeds 1 */
void ps_script_print_page_size(struct ps_strbuf *out, uint64_t size)
{
	static const char units[] = "BKMG";
	int i = 0;

	ps_strbuf_addch(out, ' ');
	if (!size) {
		ps_strbuf_addstr(out, "N/A");
		return;
	}
	while (size / 1024 > 1 && i < 3) {
		size /= 1024;
		i++;
	}
	ps_strbuf_addf(out, "%" PRIu64 "%c", size, units[i]);
}

/* print_bstack_flags(): "/%c/%c/%c/%d/%s " of perf's branch_flags bits:
 * mispred 0, predicted 1, in_tx 2, abort 3, cycles 4-19, type 20-23,
 * new_type 26-29 (for type 15, PERF_BR_EXTEND_ABI). */
static void print_branch_flags(struct ps_strbuf *out, uint64_t flags)
{
	static const char *const types[] = {
		"",       "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",   "SYSCALL",
		"SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX",
	};
	static const char *const new_types[] = {
		"FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1",
		"ARCH_2",     "ARCH_3",     "ARCH_4",     "ARCH_5"
	};
	unsigned type = (unsigned)(flags >> 20) & 15, new_type = (unsigned)(flags >> 26) & 15;
	bool mispred = flags & 1, predicted = flags & 2;

	ps_strbuf_addch(out, '/');
	ps_strbuf_addch(out, !(mispred || predicted) ? '-' : predicted ? 'P' : 'M');
	ps_strbuf_add(out, flags & 4 ? "/X/" : "/-/", 3);
	ps_strbuf_addch(out, flags & 8 ? 'A' : '-');
	ps_strbuf_addch(out, '/');
	ps_strbuf_add_uint(out, (flags >> 4) & 0xffff, 0, false);
	ps_strbuf_addch(out, '/');
	if (type < 15)
		ps_strbuf_addstr(out, types[type]);
	else /* glibc's printf of a NULL string past the names */
		ps_strbuf_addstr(out, new_type < 8 ? new_types[new_type] : "(null)");
	ps_strbuf_addch(out, ' ');
}

static void print_branch_dso(struct ps_strbuf *out, const struct ps_branch_end *end,
                             uint64_t fields)
{
	if (!(fields & PS_FIELD_DSO))
		return;
	ps_strbuf_addch(out, '(');
	ps_strbuf_addstr(out, end->dso ? end->dso : "[unknown]");
	ps_strbuf_addch(out, ')');
}

/* symbol__fprintf_symname_offs() */
static void print_branch_symbol(struct ps_strbuf *out, const struct ps_branch_end *end)
{
	if (!end->sym) {
		ps_strbuf_addstr(out, "[unknown]");
		return;
	}
	ps_strbuf_addstr(out, end->sym);
	ps_strbuf_add(out, "+0x", 3);
	ps_strbuf_add_hex(out, end->symoff, 0);
}

void ps_script_print_branches(struct ps_strbuf *out, const struct ps_stack *stack, uint64_t fields)
{
	/* perf prints one of them, in this order of precedence */
	bool sym = !(fields & PS_FIELD_BRSTACK) && (fields & PS_FIELD_BRSTACKSYM);
	bool off = !(fields & (PS_FIELD_BRSTACK | PS_FIELD_BRSTACKSYM));

	for (size_t i = 0; i < stack->nr_branches; i++) {
		const struct ps_branch *b = &stack->branches[i];

		if (sym) {
			print_branch_symbol(out, &b->from);
			print_branch_dso(out, &b->from, fields);
			ps_strbuf_addch(out, '/');
			print_branch_symbol(out, &b->to);
		} else {
			ps_strbuf_add(out, " 0x", 3);
			ps_strbuf_add_hex(out, off ? b->from.offset : b->from.addr, 0);
			print_branch_dso(out, &b->from, fields);
			ps_strbuf_add(out, "/0x", 3);
			ps_strbuf_add_hex(out, off ? b->to.offset : b->to.addr, 0);
		}
		print_branch_dso(out, &b->to, fields);
		print_branch_flags(out, b->flags);
	}
}

/* perf_sample__fprintf_bpf_output(): the raw data as binary__fprintf()
 * dumps it, 8 bytes a line ("BPF output:" on the first), then, when the
 * bytes are printable characters ended by a NUL with only NULs after,
 * the string. isprint() is the kernel's (tools/lib/ctype.c, which perf
 * uses): ASCII's printable characters and Latin-1's 0xa0 to 0xff. */
void ps_script_print_bpf_output(struct ps_strbuf *out, const uint8_t *data, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	bool printable = true, hit_nul = false;

	ps_strbuf_addch(out, '\n');
	for (size_t line = 0; line * 8 < size; line++) {
		size_t first = line * 8, n = size - first < 8 ? size - first : 8;

		/* "%17s" of the title, " %04x:" of the offset */
		ps_strbuf_add_padded(out, line ? "" : "BPF output:", line ? 0 : 11, 17);
		ps_strbuf_add(out, " ", 1);
		for (int shift = 12; shift >= 0; shift -= 4)
			ps_strbuf_addch(out, hex[(first >> shift) & 15]);
		ps_strbuf_addch(out, ':');
		for (size_t i = 0; i < 8; i++) {
			if (i < n) {
				char byte[3] = { ' ', hex[data[first + i] >> 4],
					         hex[data[first + i] & 15] };

				ps_strbuf_add(out, byte, 3);
			} else {
				ps_strbuf_add(out, "   ", 3);
			}
		}
		ps_strbuf_add(out, "  ", 2);
		for (size_t i = 0; i < n; i++) {
			uint8_t ch = data[first + i];

			if (hit_nul && ch)
				printable = false;
			if ((ch >= 0x20 && ch < 0x7f) || ch >= 0xa0) {
				ps_strbuf_addch(out, (char)ch);
				continue;
			}
			ps_strbuf_addch(out, '.');
			if (!printable)
				continue;
			if (ch == 0)
				hit_nul = true;
			else
				printable = false;
		}
		for (size_t i = n; i < 8; i++)
			ps_strbuf_addch(out, ' ');
		ps_strbuf_addch(out, '\n');
	}
	if (printable && hit_nul) {
		/* "%17s \"%s\"\n": the string up to its NUL */
		ps_strbuf_add_padded(out, "BPF string:", 11, 17);
		ps_strbuf_add(out, " \"", 2);
		ps_strbuf_add(out, (const char *)data, strnlen((const char *)data, size));
		ps_strbuf_add(out, "\"\n", 2);
	}
}

/* dump_insn() of perf's decoder: "insn: " and each byte with a space, or
 * "<bad>". */
static size_t dump_insn(char *buf, const struct ps_branch_line *line)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	if (!line->len) {
		memcpy(buf, "<bad>", 5);
		return 5;
	}
	memcpy(buf, "insn: ", 6);
	n = 6;
	for (size_t i = 0; i < line->len && i < sizeof(line->code); i++) {
		buf[n++] = hex[line->code[i] >> 4];
		buf[n++] = hex[line->code[i] & 15];
		buf[n++] = ' ';
	}
	return n;
}

/* perf_sample__fprintf_brstackinsn()'s lines. */
/* print_srccode() after a listing's line, on perf's standard output */
static void listing_srccode(struct ps_script_format *fmt, const struct ps_stack *stack,
                            const struct ps_branch_line *line)
{
	int err;

	if (!line->srccode_file || !fmt->srccode || fmt->srccode_err)
		return;
	err = ps_script_print_source_line(fmt->srccode_out, fmt->srccode, stack->thread_serial,
	                                  line->srccode_file, line->srccode_line,
	                                  line->srccode_text, line->srccode_len);
	if (err)
		fmt->srccode_err = err;
}

void ps_script_print_branch_listing(struct ps_strbuf *out, struct ps_script_format *fmt,
                                    const struct ps_stack *stack, uint64_t fields)
{
	bool ilen = fields & PS_FIELD_BRSTACKINSNLEN;
	bool srccode = fields & PS_FIELD_SRCCODE;
	char dump[64];
	int total_cycles = 0;

	ps_strbuf_addch(out, '\n');
	for (size_t i = 0; i < stack->nr_branch_lines; i++) {
		const struct ps_branch_line *line = &stack->branch_lines[i];
		size_t n;

		switch (line->kind) {
		case PS_BRANCH_LINE_SYMBOL:
			ps_strbuf_addch(out, '\t');
			ps_strbuf_addstr(out, line->sym);
			if (line->symoff) /* "%+d" */
				ps_strbuf_addf(out, "%+d", (int)line->symoff);
			ps_strbuf_addch(out, ':');
			if ((fields & PS_FIELD_SRCLINE) && line->srcline) {
				ps_strbuf_addch(out, '\t');
				ps_strbuf_addstr(out, line->srcline);
			}
			ps_strbuf_addch(out, '\n');
			break;
		case PS_BRANCH_LINE_INSN:
			/* "\t%016lx\t%s" */
			ps_strbuf_addch(out, '\t');
			ps_strbuf_addf(out, "%016" PRIx64, line->ip);
			ps_strbuf_addch(out, '\t');
			ps_strbuf_add(out, dump, dump_insn(dump, line));
			if (ilen)
				ps_strbuf_addf(out, "\tilen: %u", line->len);
			ps_strbuf_addch(out, '\n');
			if (srccode)
				listing_srccode(fmt, stack, line);
			break;
		case PS_BRANCH_LINE_JUMP: {
			unsigned cycles = (unsigned)(line->flags >> 4) & 0xffff;

			/* "\t%016lx\t%-30s\t" */
			ps_strbuf_addch(out, '\t');
			ps_strbuf_addf(out, "%016" PRIx64, line->ip);
			ps_strbuf_addch(out, '\t');
			n = dump_insn(dump, line);
			ps_strbuf_add_padded(out, dump, n, -30);
			ps_strbuf_addch(out, '\t');
			if (ilen)
				ps_strbuf_addf(out, "ilen: %u\t", line->len);
			ps_strbuf_addch(out, '#');
			if (line->flags & 2)
				ps_strbuf_addstr(out, " PRED");
			if (line->flags & 1)
				ps_strbuf_addstr(out, " MISPRED");
			if (line->flags & 4)
				ps_strbuf_addstr(out, " INTX");
			if (line->flags & 8)
				ps_strbuf_addstr(out, " ABORT");
			if (cycles) {
				total_cycles += (int)cycles;
				ps_strbuf_addf(out, " %u cycles [%d]", cycles, total_cycles);
				/* perf divides in float */
				if (line->insns)
					ps_strbuf_addf(
					        out, " %.2f IPC",
					        (double)((float)line->insns / (float)cycles));
			}
			ps_strbuf_addch(out, '\n');
			if (srccode)
				listing_srccode(fmt, stack, line);
			break;
		}
		case PS_BRANCH_LINE_MISMATCH:
			ps_strbuf_addstr(out, "\tmismatch of LBR data and executable\n");
			break;
		case PS_BRANCH_LINE_NOT_REACHING:
			ps_strbuf_addstr(out, "\t... not reaching sample ...\n");
			break;
		}
	}
}
