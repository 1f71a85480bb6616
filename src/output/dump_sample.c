/* `pystitch dump` for PERF_RECORD_SAMPLE: what perf 6.1's dump_sample() prints after the
 * record name: callchain, branch stack, registers, user stack, weight, data source, reads. */
#include "output/dump_priv.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/utsname.h>

/* Register names follow the architecture of the recording machine (the
 * ARCH feature), normalised as perf_env__arch() does. perf 6.1 only has
 * name tables for some architectures; x86 and ARM are the ones we carry,
 * the rest print "unknown" (as riscv64 does in perf 6.1 itself). */
enum reg_arch { ARCH_OTHER, ARCH_X86, ARCH_ARM64, ARCH_ARM };

static enum reg_arch arch_of(const char *arch)
{
	if (!strcmp(arch, "x86_64"))
		return ARCH_X86;
	if (arch[0] == 'i' && strlen(arch) >= 4 && arch[2] == '8' && arch[3] == '6')
		return ARCH_X86;
	if (!strncmp(arch, "aarch64", 7) || !strncmp(arch, "arm64", 5))
		return ARCH_ARM64;
	if (!strncmp(arch, "arm", 3) || !strcmp(arch, "sa110"))
		return ARCH_ARM;
	return ARCH_OTHER;
}

static const char *recording_arch(const struct ps_reader *reader)
{
	const struct ps_features *f = ps_reader_features(reader);
	static struct utsname uts; /* perf falls back to the local machine */

	if (f && f->arch)
		return f->arch;
	if (!uts.machine[0] && uname(&uts) < 0)
		return "";
	return uts.machine;
}

static const char *reg_name(enum reg_arch arch, unsigned id)
{
	static const char *const x86[] = {
		"AX", "BX", "CX", "DX", "SI", "DI", "BP",  "SP",  "IP",  "FLAGS", "CS",  "SS",
		"DS", "ES", "FS", "GS", "R8", "R9", "R10", "R11", "R12", "R13",   "R14", "R15",
	};
	/* each XMM register takes two ids, both print the same name */
	static const char *const xmm[] = {
		"XMM0", "XMM1", "XMM2",  "XMM3",  "XMM4",  "XMM5",  "XMM6",  "XMM7",
		"XMM8", "XMM9", "XMM10", "XMM11", "XMM12", "XMM13", "XMM14", "XMM15",
	};
	static const char *const arm64[] = {
		"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
		"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
		"x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "lr",  "sp",  "pc",
	};
	static const char *const arm[] = {
		"r0", "r1", "r2",  "r3", "r4", "r5", "r6", "r7",
		"r8", "r9", "r10", "fp", "ip", "sp", "lr", "pc",
	};

	switch (arch) {
	case ARCH_X86:
		if (id < sizeof(x86) / sizeof(x86[0]))
			return x86[id];
		if (id >= 32 && id < 64)
			return xmm[(id - 32) / 2];
		break;
	case ARCH_ARM64:
		if (id < sizeof(arm64) / sizeof(arm64[0]))
			return arm64[id];
		if (id == 46)
			return "vg";
		break;
	case ARCH_ARM:
		if (id < sizeof(arm) / sizeof(arm[0]))
			return arm[id];
		break;
	case ARCH_OTHER:
		break;
	}
	return "unknown";
}

static void print_regs(struct ps_strbuf *out, const char *kind, const struct ps_regs *regs,
                       enum reg_arch arch)
{
	static const char *const abi_names[] = { "none", "32-bit", "64-bit" };
	size_t i = 0;

	/* perf prints nothing when the kernel wrote no registers (abi 0) */
	if (!regs->abi)
		return;
	ps_strbuf_addf(out, "... %s regs: mask 0x%" PRIx64 " ABI %s\n", kind, regs->mask,
	               regs->abi < 3 ? abi_names[regs->abi] : "unknown");
	for (unsigned bit = 0; bit < 64 && i < regs->nr; bit++) {
		if (!(regs->mask & (1ULL << bit)))
			continue;
		ps_strbuf_addf(out, ".... %-5s 0x%016" PRIx64 "\n", reg_name(arch, bit),
		               regs->regs[i++]);
	}
}

/* With a branch call stack (LBR callstack mode) perf first prints the
 * kernel part of the callchain stitched to the LBR entries. */
static void print_lbr_callchain(struct ps_strbuf *out, const struct ps_sample *s)
{
	size_t i, kernel_nr;

	for (i = 0; i < s->callchain_nr; i++)
		if (s->callchain[i] == (uint64_t)PERF_CONTEXT_USER)
			break;
	if (i == s->callchain_nr || !s->branch_nr)
		return;
	kernel_nr = i + 1;
	ps_strbuf_addf(out, "... LBR call chain: nr:%zu\n", kernel_nr + s->branch_nr + 1);
	for (i = 0; i < kernel_nr; i++)
		ps_strbuf_addf(out, "..... %2d: %016" PRIx64 "\n", (int)i, s->callchain[i]);
	ps_strbuf_addf(out, "..... %2d: %016" PRIx64 "\n", (int)kernel_nr, s->branches[0].to);
	for (i = 0; i < s->branch_nr; i++)
		ps_strbuf_addf(out, "..... %2d: %016" PRIx64 "\n", (int)(i + kernel_nr + 1),
		               s->branches[i].from);
}

static const char *branch_type_name(uint64_t flags)
{
	static const char *const types[16] = {
		"N/A",    "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",   "SYSCALL",
		"SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX", "",
	};
	/* the names an x86 build of perf 6.1 uses for the extended types */
	static const char *const new_types[8] = {
		"FAULT_ALGN", "FAULT_DATA", "FAULT_INST", "ARCH_1",
		"ARCH_2",     "ARCH_3",     "ARCH_4",     "ARCH_5",
	};
	unsigned type = (unsigned)(flags >> 20) & 0xf;
	unsigned new_type = (unsigned)(flags >> 26) & 0xf;

	if (type == 0) /* PERF_BR_UNKNOWN */
		return "";
	if (type == 15) /* PERF_BR_EXTEND_ABI; perf passes NULL to printf past its table */
		return new_type < 8 ? new_types[new_type] : "(null)";
	return types[type];
}

static void print_branch_stack(struct ps_strbuf *out, const struct ps_sample *s, bool callstack)
{
	/* a call stack of n branches expands to n + 1 frames */
	ps_strbuf_addf(out, "%s: nr:%zu\n", callstack ? "... branch callstack" : "... branch stack",
	               s->branch_nr + (callstack ? 1 : 0));
	for (size_t i = 0; i < s->branch_nr; i++) {
		const struct ps_branch_entry *e = &s->branches[i];

		if (!callstack) {
			/* flags word: mispred:1 predicted:1 in_tx:1 abort:1
			 * cycles:16 type:4 spec:2 new_type:4 priv:3 reserved:31 */
			ps_strbuf_addf(out,
			               "..... %2zu: %016" PRIx64 " -> %016" PRIx64
			               " %hu cycles %s%s%s%s %x %s\n",
			               i, e->from, e->to,
			               (unsigned short)((e->flags >> 4) & 0xffff),
			               (e->flags & 1) ? "M" : " ", (e->flags & 2) ? "P" : " ",
			               (e->flags & 8) ? "A" : " ", (e->flags & 4) ? "T" : " ",
			               (unsigned)(e->flags >> 33), branch_type_name(e->flags));
		} else if (i == 0) {
			ps_strbuf_addf(out,
			               "..... %2zu: %016" PRIx64 "\n..... %2zu: %016" PRIx64 "\n",
			               i, e->to, i + 1, e->from);
		} else {
			ps_strbuf_addf(out, "..... %2zu: %016" PRIx64 "\n", i + 1, e->from);
		}
	}
}

/* perf prints where the user stack's size field sits in the record, so
 * walk the sample layout up to PERF_SAMPLE_STACK_USER. */
static uint64_t ustack_offset(const struct ps_attr *attr, const struct ps_sample *s)
{
	static const uint64_t one_word[] = {
		PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,   PERF_SAMPLE_TID,
		PERF_SAMPLE_TIME,       PERF_SAMPLE_ADDR, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,  PERF_SAMPLE_PERIOD,
	};
	uint64_t t = attr->sample_type, rf = attr->read_format;
	uint64_t off = 8; /* the record header */

	for (size_t i = 0; i < sizeof(one_word) / sizeof(one_word[0]); i++)
		if (t & one_word[i])
			off += 8;
	if (t & PERF_SAMPLE_READ) {
		uint64_t times = ((rf & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0) +
		                 ((rf & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0);
		uint64_t per_value =
		        8 + ((rf & PERF_FORMAT_ID) ? 8 : 0) + ((rf & PERF_FORMAT_LOST) ? 8 : 0);

		if (rf & PERF_FORMAT_GROUP)
			off += 8 + times + s->read.nr * per_value;
		else
			off += times + per_value;
	}
	if (t & PERF_SAMPLE_CALLCHAIN)
		off += 8 + 8 * (uint64_t)s->callchain_nr;
	if (t & PERF_SAMPLE_RAW)
		off += 4 + (uint64_t)s->raw_size;
	if (t & PERF_SAMPLE_BRANCH_STACK)
		off += 8 + (s->has_branch_hw_idx ? 8 : 0) + 24 * (uint64_t)s->branch_nr;
	if (t & PERF_SAMPLE_REGS_USER)
		off += 8 + (s->regs_user.abi
		                    ? 8 * (uint64_t)__builtin_popcountll(attr->sample_regs_user)
		                    : 0);
	return off;
}

/* unit_number__scnprintf(): divide by 1024 while the quotient exceeds 1,
 * so 1024 stays "1024B" and 2048 becomes "2K". */
static void print_page_size(struct ps_strbuf *out, const char *what, uint64_t size)
{
	static const char units[] = "BKMG";
	int i = 0;

	if (!size) {
		ps_strbuf_addf(out, " .. %s page size: N/A\n", what);
		return;
	}
	while (size / 1024 > 1 && i < 3) {
		size /= 1024;
		i++;
	}
	ps_strbuf_addf(out, " .. %s page size: %" PRIu64 "%c\n", what, size, units[i]);
}

static void print_read_values(struct ps_strbuf *out, const struct ps_read_data *rd, uint64_t rf)
{
	ps_strbuf_addstr(out, "... sample_read:\n");
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		ps_strbuf_addf(out, "...... time enabled %016" PRIx64 "\n", rd->time_enabled);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		ps_strbuf_addf(out, "...... time running %016" PRIx64 "\n", rd->time_running);
	if (rf & PERF_FORMAT_GROUP)
		ps_strbuf_addf(out, ".... group nr %zu\n", rd->nr);
	for (size_t i = 0; i < rd->nr; i++) {
		ps_strbuf_addf(out, "..... id %016" PRIx64 ", value %016" PRIx64, rd->values[i].id,
		               rd->values[i].value);
		if (rf & PERF_FORMAT_LOST)
			ps_strbuf_addf(out, ", lost %" PRIu64, rd->values[i].lost);
		ps_strbuf_addch(out, '\n');
		if (!(rf & PERF_FORMAT_GROUP))
			break;
	}
	/* a non-group read always prints its one value line */
	if (!(rf & PERF_FORMAT_GROUP) && !rd->nr)
		ps_strbuf_addf(out, "..... id %016" PRIx64 ", value %016" PRIx64 "%s\n",
		               (uint64_t)0, (uint64_t)0, (rf & PERF_FORMAT_LOST) ? ", lost 0" : "");
}

void ps_dump_sample(struct ps_strbuf *out, const struct ps_reader *reader,
                    const struct ps_event *event)
{
	const struct ps_attr *attr = event->attr;
	const struct ps_sample *s = &event->u.sample;
	uint64_t t;
	enum reg_arch arch;

	/* perf cannot tell the event of a sample with an unknown id: it
	 * counts it and prints nothing after the record name */
	if (!attr) {
		ps_strbuf_addch(out, '\n');
		return;
	}
	t = attr->sample_type;
	arch = arch_of(recording_arch(reader));

	/* fields the sample lacks print perf's defaults: -1 for the pid and
	 * tid; the period of a sample without one is already the attr's
	 * sample_period (or frequency), as perf has it */
	ps_strbuf_addf(
	        out, "(IP, 0x%x): %d/%d: %#" PRIx64 " period: %" PRIu64 " addr: %#" PRIx64 "\n",
	        event->misc, (t & PERF_SAMPLE_TID) ? (int32_t)s->pid : -1,
	        (t & PERF_SAMPLE_TID) ? (int32_t)s->tid : -1, (t & PERF_SAMPLE_IP) ? s->ip : 0,
	        s->period, (t & PERF_SAMPLE_ADDR) ? s->addr : 0);

	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK)
			print_lbr_callchain(out, s);
		ps_strbuf_addf(out, "... FP chain: nr:%zu\n", s->callchain_nr);
		for (size_t i = 0; i < s->callchain_nr; i++)
			ps_strbuf_addf(out, "..... %2d: %016" PRIx64 "\n", (int)i, s->callchain[i]);
	}
	if (t & PERF_SAMPLE_BRANCH_STACK)
		print_branch_stack(out, s,
		                   attr->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
	if (t & PERF_SAMPLE_REGS_USER)
		print_regs(out, "user", &s->regs_user, arch);
	if (t & PERF_SAMPLE_REGS_INTR)
		print_regs(out, "intr", &s->regs_intr, arch);
	if (t & PERF_SAMPLE_STACK_USER)
		ps_strbuf_addf(out, "... ustack: size %" PRIu64 ", offset 0x%x\n",
		               s->stack_size ? s->stack_dyn_size : 0,
		               (unsigned)ustack_offset(attr, s));
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
		ps_strbuf_addf(out, "... weight: %" PRIu64, s->weight);
		if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
			/* perf 6.1 fills the third weight (p_stage_cyc) only
			 * for powerpc; elsewhere it prints 0 */
			const char *a = recording_arch(reader);
			bool ppc = !strncmp(a, "ppc", 3) || !strncmp(a, "powerpc", 7);

			ps_strbuf_addf(out, ",0x%x,0x%x", (unsigned)s->weight_var2,
			               ppc ? (unsigned)s->weight_var3 : 0u);
		}
		ps_strbuf_addch(out, '\n');
	}
	if (t & PERF_SAMPLE_DATA_SRC)
		ps_strbuf_addf(out, " . data_src: 0x%" PRIx64 "\n", s->data_src);
	if (t & PERF_SAMPLE_PHYS_ADDR)
		ps_strbuf_addf(out, " .. phys_addr: 0x%" PRIx64 "\n", s->phys_addr);
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		print_page_size(out, "data", s->data_page_size);
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		print_page_size(out, "code", s->code_page_size);
	if (t & PERF_SAMPLE_TRANSACTION)
		ps_strbuf_addf(out, "... transaction: %" PRIx64 "\n", s->transaction);
	if (t & PERF_SAMPLE_READ)
		print_read_values(out, &s->read, attr->read_format);
}
