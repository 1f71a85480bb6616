/* libFuzzer target for what pystitch reads from ELF files: every input is
 * one object file, given to
 *  - the symbols module (symbol tables by perf's rules, build-id notes,
 *    addr2line's inline chains and -F +srcline line tables) at addresses
 *    of the input's own functions;
 *  - the unwinder: the input is mapped executable in a synthetic process
 *    and a sample whose IP and return addresses land in its functions is
 *    unwound, so .eh_frame and .debug_frame are compiled into the CFI
 *    table and libdwfl walks the rest; the PCs found are resolved too;
 *  - CPython detection (Py_Version, _Py_DebugOffsets, version strings)
 *    and the -X perf trampoline template;
 *  - perf script's -F insn, brstackinsn and srccode: the code at those
 *    addresses read as perf reads a DSO's contents and decoded by the
 *    x86 decoder in both modes, their source lines, and the input read
 *    as a source file.
 * The addresses come from the input's own symbols (read here with
 * libelf), or from its entry point when it has none.
 * Build: ./configure CC=clang --enable-fuzzing && make fuzz/fuzz_elf
 * Run:   fuzz/run.sh 60 fuzz_elf
 */
#include "fuzz_common.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/message.h"
#include "insn/insn.h"
#include "python/python_priv.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h"

#define MAX_ADDRS 16
#define MAX_FRAMES 32
#define BASE 0x7f0000000000ull /* where the input is mapped */
#define STACK_SP 0x7ffff0000000ull
#define STACK_WORDS 64

struct target {
	const char *path;
	size_t size;
	uint64_t addrs[MAX_ADDRS]; /* file offsets of functions */
	size_t nr_addrs;
};

/* A symbol value as a file offset: through the PT_LOAD that holds it. */
static uint64_t file_offset(Elf *elf, uint64_t vaddr)
{
	size_t nr;
	GElf_Phdr phdr;

	if (elf_getphdrnum(elf, &nr) != 0)
		return vaddr;
	for (size_t i = 0; i < nr && i < 64; i++)
		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_LOAD &&
		    vaddr >= phdr.p_vaddr && vaddr - phdr.p_vaddr < phdr.p_memsz)
			return vaddr - phdr.p_vaddr + phdr.p_offset;
	return vaddr;
}

static void pick_addresses(struct target *t, const uint8_t *data, size_t size)
{
	char *image = malloc(size ? size : 1);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;

	if (!image)
		return;
	memcpy(image, data, size);
	elf = elf_memory(image, size);
	while (elf && (scn = elf_nextscn(elf, scn)) && t->nr_addrs < MAX_ADDRS) {
		GElf_Shdr shdr;
		Elf_Data *symbols;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    !shdr.sh_entsize || !(symbols = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0;
		     i < shdr.sh_size / shdr.sh_entsize && i < 4096 && t->nr_addrs < MAX_ADDRS;
		     i++) {
			GElf_Sym sym;
			if (gelf_getsym(symbols, (int)i, &sym) &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value)
				t->addrs[t->nr_addrs++] =
				        file_offset(elf, sym.st_value + sym.st_size / 2);
		}
	}
	if (elf && t->nr_addrs == 0 && gelf_getehdr(elf, &ehdr) && ehdr.e_entry)
		t->addrs[t->nr_addrs++] = file_offset(elf, ehdr.e_entry);
	if (t->nr_addrs == 0)
		t->addrs[t->nr_addrs++] = 0x1000;
	elf_end(elf);
	free(image);
}

static void resolve(struct ps_dso *dso, uint64_t addr, bool inline_frames)
{
	struct ps_frame_name names[MAX_FRAMES];

	size_t n = ps_dso_resolve(dso, addr, inline_frames, names, MAX_FRAMES);

	/* as the Python side marks each native frame */
	for (size_t i = 0; i < n; i++)
		if (names[i].sym)
			ps_py_eval_name_kind(names[i].sym);
}

/* ---- the synthetic process ------------------------------------------ */

static bool find_map(void *ctx, uint64_t addr, struct ps_unwind_map *out)
{
	const struct target *t = ctx;
	uint64_t end = BASE + ((t->size + 4095) & ~4095ull);

	memset(out, 0, sizeof(*out));
	if (addr >= BASE && addr < end) {
		out->start = BASE;
		out->end = end;
		out->path = t->path;
		out->name = "/usr/lib/libfuzz.so";
		out->exec = true;
		return true;
	}
	if (addr >= STACK_SP - 0x10000 && addr < STACK_SP + 0x10000) {
		out->start = STACK_SP - 0x10000;
		out->end = STACK_SP + 0x10000;
		out->name = "[stack]";
		return true;
	}
	return false;
}

static void unwind(const struct target *t, struct ps_dso *dso, bool quirks, bool libdwfl)
{
	static const struct ps_unwind_callbacks callbacks = { .find_map = find_map };
	struct ps_unwind_opts opts = {
		.sz = sizeof(opts),
		.max_frames = MAX_FRAMES,
		.style = quirks ? PS_UNWIND_PERF_LIBUNWIND : PS_UNWIND_PERF_LIBDW,
		.engine = libdwfl ? PS_UNWIND_ENGINE_LIBDWFL : PS_UNWIND_ENGINE_TABLE,
	};
	/* perf's --call-graph dwarf mask: AX..R15 without the segment registers */
	uint64_t regs[20], stack[STACK_WORDS], pcs[MAX_FRAMES];
	struct ps_unwind_sample sample = {
		.pid = 1,
		.tid = 1,
		.regs_abi = 2,
		.regs_mask = 0xff0fffull,
		.nr_regs = 20,
		.regs = regs,
		.stack = (const uint8_t *)stack,
		.stack_size = sizeof(stack),
		.recover_popped = !quirks,
	};
	struct ps_unwinder *unwinder = NULL;
	enum ps_unwind_stop stop;

	/* return addresses into the input's functions, each with a frame
	 * pointer to the next pair, as a frame chain would have them */
	for (size_t i = 0; i < STACK_WORDS; i += 2) {
		stack[i] = STACK_SP + (i + 2) * 8;
		stack[i + 1] = BASE + t->addrs[(i / 2 + 1) % t->nr_addrs] + 5;
	}
	for (size_t i = 0; i < 20; i++)
		regs[i] = STACK_SP + 8 * i;
	if (ps_unwinder_new(&callbacks, (void *)t, &opts, &unwinder))
		return;
	for (size_t i = 0; i < t->nr_addrs && i < 4; i++) {
		regs[8] = BASE + t->addrs[i]; /* IP */
		int n = ps_unwinder_unwind(unwinder, &sample, pcs, MAX_FRAMES, &stop);
		for (int j = 1; j < n; j++)
			if (pcs[j] >= BASE)
				resolve(dso, pcs[j] - BASE, true);
	}
	ps_unwinder_free(unwinder);
}

/* ---- CPython -------------------------------------------------------- */

static void python(struct ps_dso *dso)
{
	const struct ps_elf *elf = ps_dso_elf(dso);
	struct ps_py_registry *registry = NULL;
	const struct ps_py_interp *interp;
	struct ps_trampoline trampoline;
	struct ps_unwind_rule rule;
	char err[PS_MSG_MAX];

	/* through the DSO's own handle, as the pipeline reads them */
	if (!elf)
		return;
	if (ps_py_registry_new(&registry) == 0) {
		ps_py_registry_detect(registry, elf, &interp);
		ps_py_registry_free(registry);
	}
	if (ps_trampoline_from_elf(elf, &trampoline, err, sizeof(err)) == 0)
		for (uint32_t i = 0; i <= trampoline.code_end; i++)
			ps_trampoline_rule_at(&trampoline, i, &rule);
}

/* -F insn, brstackinsn, srccode on the input's code and text. */
static void code(struct ps_symbols *symbols, struct ps_dso *dso, const struct target *t)
{
	uint8_t buf[64];
	struct ps_insn insn;
	char source[256];
	const char *text;
	unsigned line;
	size_t len;

	for (size_t i = 0; i < t->nr_addrs; i++) {
		ssize_t n = ps_dso_read_code(dso, t->addrs[i], buf, sizeof(buf));

		for (ssize_t off = 0; off < n; off++) {
			ps_insn_decode(buf + off, (size_t)(n - off), true, &insn);
			ps_insn_decode(buf + off, (size_t)(n - off), false, &insn);
		}
		if (ps_dso_source(dso, t->addrs[i], source, sizeof(source), &line))
			ps_symbols_source_text(symbols, source, line, &text, &len);
	}
	for (unsigned l = 0; l < 4; l++)
		ps_symbols_source_text(symbols, t->path, l * 300 + 1, &text, &len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts),
		                        .buildid_dir = "/nonexistent/pystitch-fuzz",
		                        .srcline = true,
		                        .srccode = true };
	struct target t = { .size = size };
	struct ps_symbols *symbols = NULL;
	struct ps_dso *dso;
	char path[64];
	int fd;

	if (size < 64 || memcmp(data, "\177ELF", 4) != 0)
		return 0;
	fd = fuzz_input_file(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	t.path = path;
	pick_addresses(&t, data, size);
	if (ps_symbols_new(&opts, &symbols) == 0) {
		dso = ps_symbols_dso(symbols, path, NULL, 0);
		if (dso) {
			ps_dso_file(dso);
			ps_dso_symbol_file(dso);
			for (size_t i = 0; i < t.nr_addrs; i++) {
				resolve(dso, t.addrs[i], true);
				resolve(dso, t.addrs[i] + 1, false);
			}
			/* Debian's perf on every other input, libdwfl alone
			 * on every other pair: the styles differ at the end
			 * of the stack copy, the engines must not differ */
			unwind(&t, dso, size & 1, size & 2);
			python(dso);
			code(symbols, dso, &t);
		}
		ps_symbols_free(symbols);
	}
	close(fd);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	elf_version(EV_CURRENT);
	return 0;
}
