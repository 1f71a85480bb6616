/* What libdwfl sees of the sampled process: its registers (from
 * PERF_SAMPLE_REGS_USER) and its memory (the stack copy, else the contents
 * of the mapped file through a small page cache), as Dwfl_Thread_Callbacks.
 *
 * The one exception to the rule that untrusted bytes are read through a
 * ps_cursor (base/cursor.h): reads here are keyed by the sampled process's
 * addresses, which a CFI program or the unwinder computes, not by a
 * position in a buffer being parsed, and each is one word. Every read
 * checks its own address against the range that holds it instead: the
 * stack copy as [sp, stack_end) in ps_unwind_access_mem(), a mapped file's
 * page by its length in ps_unwind_read_file_word(). Nothing else is read
 * from either.
 */
#include "unwind/unwind_priv.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- mapped files --------------------------------------------------- */

/* Reads outside the stack copy are rare (code bytes, data a CFI expression
 * dereferences), so a handful of 4 KiB pages per unwinder is plenty; a
 * miss costs open+pread+close, and no descriptor is kept open. */
static struct ps_unwind_page *page_get(struct ps_unwinder *u, const char *path, uint64_t offset)
{
	struct ps_unwind_page *pages = u->caches->pages;
	struct ps_unwind_page *victim = &pages[0];

	for (size_t i = 0; i < PS_UNWIND_PAGE_SLOTS; i++) {
		struct ps_unwind_page *page = &pages[i];

		if (page->path && page->offset == offset && strcmp(page->path, path) == 0) {
			page->last_use = ++u->page_clock;
			return page;
		}
		if (!page->path || (victim->path && page->last_use < victim->last_use))
			victim = page;
	}

	u->stats.file_misses++;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t got;
	do {
		got = pread(fd, victim->data, PS_UNWIND_PAGE_SIZE, (off_t)offset);
	} while (got < 0 && errno == EINTR);
	close(fd);
	if (got <= 0)
		return NULL;

	size_t len = strlen(path);
	char *copy = victim->path;
	if (!copy || strlen(copy) < len)
		copy = realloc(victim->path, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, path, len + 1);
	victim->path = copy;
	victim->offset = offset;
	victim->len = (size_t)got;
	victim->last_use = ++u->page_clock;
	return victim;
}

bool ps_unwind_read_file_word(struct ps_unwinder *u, const char *path, uint64_t offset,
                              uint64_t *value)
{
	uint8_t bytes[8];
	size_t done = 0;

	if (offset > INT64_MAX - 16)
		return false;
	u->stats.file_reads++;
	/* a word may straddle two pages */
	while (done < sizeof(bytes)) {
		uint64_t at = offset + done;
		uint64_t page_offset = at & ~(uint64_t)(PS_UNWIND_PAGE_SIZE - 1);
		struct ps_unwind_page *page = page_get(u, path, page_offset);
		size_t in_page = (size_t)(at - page_offset);

		if (!page || in_page >= page->len)
			return false;
		size_t n = page->len - in_page;
		if (n > sizeof(bytes) - done)
			n = sizeof(bytes) - done;
		memcpy(bytes + done, page->data + in_page, n);
		done += n;
	}
	memcpy(value, bytes, sizeof(bytes));
	return true;
}

void ps_unwind_caches_release(struct ps_unwinder *u)
{
	if (!u->caches)
		return;
	for (size_t i = 0; i < PS_UNWIND_PAGE_SLOTS; i++)
		free(u->caches->pages[i].path);
	free(u->caches);
	u->caches = NULL;
}

/* ---- Dwfl_Thread_Callbacks ------------------------------------------ */

/* The Dwfl holds one process whose only thread is "the current sample". */
static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	if (*thread_argp != NULL)
		return 0;
	*thread_argp = dwfl_arg;
	return dwfl_pid(dwfl);
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	*thread_argp = dwfl_arg;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct ps_unwinder *u = thread_arg;

	/* Registers missing from the mask stay undefined, so a rule that
	 * needs one fails instead of using a made-up 0. */
	for (unsigned regno = 0; regno < PS_UNWIND_NR_DWARF_REGS; regno++) {
		if (!(u->dwarf_regs_present & (1u << regno)))
			continue;
		if (!dwfl_thread_state_registers(thread, (int)regno, 1, &u->dwarf_regs[regno]))
			return false;
	}
	if (u->restart_pc_set)
		dwfl_thread_state_register_pc(thread, u->restart_pc);
	return true;
}

/* What mapped memory holds at addr, as perf's access_dso_mem() finds it:
 * 1 read, 0 mapped but without readable contents, -1 not mapped. */
static int read_mapped(struct ps_unwinder *u, uint64_t addr, uint64_t *value)
{
	struct ps_unwind_map map = { 0 };

	if (!u->callbacks.find_map(u->ctx, addr, &map) || addr < map.start || addr >= map.end)
		return -1;
	if (!map.path)
		return 0;
	if (addr - map.start > UINT64_MAX - map.pgoff)
		return 0;
	return ps_unwind_read_file_word(u, map.path, addr - map.start + map.pgoff, value) ? 1 : 0;
}

/* The slot of a callee-saved register that the sample's leaf function has
 * already popped (see ps_unwind_sample.recover_popped): the leaf's CFI row
 * places the register at addr, below the SP. The register still holds
 * what the pop loaded from there. */
static bool popped_register(struct ps_unwinder *u, uint64_t addr, uint64_t *value)
{
	const uint32_t needed = (1u << PS_UNWIND_DWARF_IP) | (1u << PS_UNWIND_DWARF_SP);
	uint64_t ip = u->sample_regs[PS_UNWIND_DWARF_IP];
	Dwarf_Frame *frame = NULL;
	Dwfl_Module *mod;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	Dwarf_Op *ops;
	size_t nops;
	uint64_t cfa;
	bool found = false;

	if (!u->sample->recover_popped || addr >= u->sp || u->sp - addr > 256 ||
	    (u->sample_regs_present & needed) != needed || !u->dwfl ||
	    !(mod = dwfl_addrmodule(u->dwfl, ip)) || !(cfi = dwfl_module_eh_cfi(mod, &bias)) ||
	    dwarf_cfi_addrframe(cfi, ip - bias, &frame) != 0)
		return false;
	/* CFA = rsp + offset, the only form epilogues use */
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number != PS_UNWIND_DWARF_SP)
		goto out;
	cfa = u->sample_regs[PS_UNWIND_DWARF_SP] + ops[0].number2;
	for (int regno = 0; regno < PS_UNWIND_DWARF_IP && !found; regno++) {
		Dwarf_Op mem[3];

		if (!(u->sample_regs_present & (1u << regno)) || regno == PS_UNWIND_DWARF_SP ||
		    dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0 || nops != 2 ||
		    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst ||
		    cfa + ops[1].number != addr)
			continue;
		*value = u->sample_regs[regno];
		found = true;
	}
out:
	free(frame);
	return found;
}

int ps_unwind_access_mem(struct ps_unwinder *u, uint64_t addr, uint64_t *value)
{
	if (addr < u->sp && popped_register(u, addr, value))
		return 0;

	/* perf's libunwind access_mem() tests `addr + 8 >= end`: emulate
	 * by treating the copy as one byte shorter. */
	uint64_t end = u->stack_end - (u->quirks ? 1 : 0);

	if (addr >= u->sp && addr <= UINT64_MAX - sizeof(*value) && addr + sizeof(*value) <= end) {
		memcpy(value, u->sample->stack + (addr - u->sp), sizeof(*value));
		return 0;
	}
	int found = read_mapped(u, addr, value);
	if (found > 0)
		return 0;
	if (addr >= u->sp)
		u->step_read_cut = true;
	if (found == 0) {
		*value = 0;
		return 1;
	}
	return -1;
}

int ps_unwind_dwfl_read(struct ps_unwinder *u, uint64_t addr, uint64_t *value)
{
	int found = ps_unwind_access_mem(u, addr, value);

	/* libunwind takes access_mem()'s 1 for success, with the value 0 */
	if (found == 0 || (found == 1 && u->quirks)) {
		u->step_read_zero = *value == 0;
		return found;
	}
	u->step_read_zero = false;
	u->step_read_failed = true;
	return found;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct ps_unwinder *u = dwfl_arg;
	uint64_t value = 0;
	int found = ps_unwind_dwfl_read(u, addr, &value);

	if (found == 0 || (found == 1 && u->quirks)) {
		*result = value;
		return true;
	}
	return false;
}

/* Is pc the start of the rt_sigreturn trampoline (mov $0xf,%rax; syscall),
 * glibc's __restore_rt? The frame callback uses it to find the trampoline
 * frame, the one frame whose activation libunwind and libdwfl judge
 * differently. */
bool ps_unwind_is_sigreturn(struct ps_unwinder *u, uint64_t pc)
{
	uint64_t w0, w1;

	if (pc > UINT64_MAX - 16 || read_mapped(u, pc, &w0) <= 0 ||
	    read_mapped(u, pc + 8, &w1) <= 0)
		return false;
	return w0 == 0x0f0000000fc0c748ULL && (w1 & 0xff) == 0x05;
}

const Dwfl_Thread_Callbacks ps_unwind_thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};
