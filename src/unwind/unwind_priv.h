/* Private to src/unwind (tests/unit/unwind reaches in here too): what the
 * module's files share. Other modules use unwind/unwind.h. */
#ifndef PS_UNWIND_UNWIND_PRIV_H
#define PS_UNWIND_UNWIND_PRIV_H

#include "unwind/unwind.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "base/message.h"

#define PS_UNWIND_NR_DWARF_REGS 17 /* x86-64: rax..r15, rip */
#define PS_UNWIND_DWARF_SP 7
#define PS_UNWIND_DWARF_IP 16
#define PS_UNWIND_COVERAGE_BITS 9
#define PS_UNWIND_PAGE_SLOTS 8
#define PS_UNWIND_PAGE_SIZE 4096

/* A module's separate debug file, as find_debuginfo sees it. */
struct ps_unwind_debug_file {
	struct ps_unwinder *unwinder; /* for its statistics */
	char path[];
};

/* One mapping whose file was reported to the Dwfl (or failed to be). */
struct ps_unwind_module {
	uint64_t base; /* map.start - map.pgoff */
	uint64_t low, high; /* the module's range in libdwfl, or the mapping's on failure */
	char *path;
	/* the separate debug file, given to find_debuginfo through the
	 * module's userdata */
	struct ps_unwind_debug_file *debug;
	Dwfl_Module *mod; /* NULL: the file could not be reported */
	/* mod NULL for a mapping of an ET_EXEC file away from its own
	 * addresses: the file's module (its CFI), or NULL */
	Dwfl_Module *file_mod;
	/* no other module of the Dwfl overlaps this one's range, as of
	 * modules_epoch alone_epoch (module.c): libdwfl's module for any
	 * address in the range is then mod, without asking it */
	uint64_t alone_epoch;
	bool alone;
	/* quirk mode: whether the file has a .eh_frame_hdr libunwind can
	 * search (0 not asked yet, 1 yes, -1 no) */
	signed char eh_frame_hdr;
	/* quirk mode, what libunwind.c reads of the file for a lookup away
	 * from its own base (0 not read yet, 1 read, -1 some is missing,
	 * -2 perf cannot read the header) */
	signed char lu_layout;
	uint64_t lu_first_load, lu_hdr_addr, lu_hdr_size, lu_eh_addr, lu_eh_size;
	uint64_t lu_count, lu_table_off;
};

/* Whether .eh_frame describes a PC (quirk mode), cached per PC. */
struct ps_unwind_coverage {
	uint64_t pc;
	Dwfl_Module *mod;
	uint64_t generation; /* of the Dwfl the answer is about */
	bool covered;
};

/* What a compiled rule says of one register of the caller (cfi.c). */
enum ps_unwind_reg_rule {
	PS_UNWIND_REG_UNDEFINED = 0,
	PS_UNWIND_REG_SAME, /* the callee's value, if it has one */
	PS_UNWIND_REG_OFFSET, /* saved at CFA + offset */
	PS_UNWIND_REG_VAL_OFFSET, /* the value CFA + offset */
};

enum ps_unwind_row_kind {
	PS_UNWIND_ROW_SIMPLE = 0, /* the table can step with it */
	PS_UNWIND_ROW_SIGNAL, /* a signal frame's row ('S' augmentation) */
	PS_UNWIND_ROW_OTHER, /* no CFI, or rules the table cannot express */
	/* not in .eh_frame, .debug_frame not asked yet (see
	 * ps_unwind_row_get()) */
	PS_UNWIND_ROW_NOT_EH,
	/* a SIMPLE row but for its CFA: the expression of PLT stubs, CFA =
	 * reg + offset + (((rip + plt_rip_offset) & plt_mask) >= plt_min) <<
	 * plt_shift (cfi.c); the table applies it to the frames whose rip
	 * libdwfl sees as the table does */
	PS_UNWIND_ROW_PLT,
};

/* The CFI row libdwfl would unwind a frame with, for one lookup address of
 * one module, compiled into what the table walk needs: CFA = register +
 * offset, and a rule per register. Cached per (module, address). */
struct ps_unwind_row {
	uint64_t pc; /* the lookup address (callers: return address - 1) */
	Dwfl_Module *mod; /* NULL: an empty cache slot */
	unsigned char kind; /* enum ps_unwind_row_kind */
	bool from_eh; /* found in .eh_frame (else .debug_frame) */
	unsigned char cfa_reg; /* DWARF register number */
	unsigned char regs[PS_UNWIND_NR_DWARF_REGS]; /* enum ps_unwind_reg_rule */
	/* the registers of each rule, a bit per register (SIMPLE rows):
	 * what ps_unwind_row_apply() walks instead of regs[] */
	uint32_t same_mask, offset_mask, val_offset_mask;
	/* the lowest and highest offsets of the offset_mask registers */
	int32_t read_low, read_high;
	int64_t cfa_offset;
	int32_t offsets[PS_UNWIND_NR_DWARF_REGS];
	int32_t plt_rip_offset; /* PLT rows: their CFA expression's terms */
	unsigned char plt_mask, plt_min, plt_shift;
};

/* A page of a mapped file, read with pread() on a miss. */
struct ps_unwind_page {
	char *path; /* NULL: empty slot */
	uint64_t offset; /* page-aligned file offset */
	size_t len; /* valid bytes (short at the end of the file) */
	uint64_t last_use;
	uint8_t data[PS_UNWIND_PAGE_SIZE];
};

/* What the walks of an unwinder cache: which PCs .eh_frame covers, and
 * pages of mapped files. */
struct ps_unwind_caches {
	struct ps_unwind_coverage coverage[1u << PS_UNWIND_COVERAGE_BITS];
	struct ps_unwind_page pages[PS_UNWIND_PAGE_SLOTS];
};

/* Debian's perf's libunwind's register-state cache (libunwind.c): which
 * frame IPs it holds a state for, and the shift (struct ps_unwind_step)
 * of the row that state came from. */
#define PS_UNWIND_RS_LOG 7
#define PS_UNWIND_RS_SIZE (1 << PS_UNWIND_RS_LOG)
struct ps_unwind_rscache {
	uint64_t ip[PS_UNWIND_RS_SIZE];
	int64_t shift[PS_UNWIND_RS_SIZE];
	int16_t chain[PS_UNWIND_RS_SIZE];
	int16_t head[2 * PS_UNWIND_RS_SIZE];
	bool valid[PS_UNWIND_RS_SIZE];
	uint16_t rr; /* the next entry replaced */
};

/* One answer of ps_unwind_module_ensure() that holds for every address
 * of [low, high): mod NULL for PS_UNWIND_MODULE_NONE (a mapping without
 * a file), else PS_UNWIND_MODULE_OK with modules[module] and the frame's
 * bases. */
struct ps_unwind_hit {
	uint64_t low, high;
	uint64_t base, libunwind_base;
	bool partial;
	Dwfl_Module *mod;
	size_t module;
};

#define PS_UNWIND_HITS 4

/* A jitted file reported to the side Dwfl (jitted.c) */
#define PS_UNWIND_MAX_JITTED 64
struct ps_unwind_jitted {
	char *path;
	uint64_t base;
	Dwfl_Module *mod;
};

#define PS_UNWIND_JIT_MODULES 64

struct ps_unwinder {
	struct ps_unwind_callbacks callbacks;
	void *ctx;
	unsigned max_frames;
	bool style_quirks; /* PS_UNWIND_PERF_LIBUNWIND */
	bool quirks; /* this walk's: style_quirks unless the sample's no_quirks */
	bool own; /* this walk's: the sample's no_quirks (pystitch's own text) */
	ps_log_fn log;
	void *log_ctx;
	bool table; /* walk with the compiled rules before libdwfl */

	/* compiled rules, an open-addressing hash table keyed by (module,
	 * address); emptied with the Dwfl, whose modules are its keys */
	struct ps_unwind_row *rows;
	size_t rows_cap, rows_used;

	/* libdwfl state: the callbacks tables must outlive the Dwfl */
	Dwfl_Callbacks dwfl_callbacks;
	Dwfl *dwfl;
	uint64_t generation; /* counts Dwfl handles, for caches keyed by Dwfl_Module */
	uint64_t modules_epoch; /* counts changes of the Dwfl's modules, from 1 */
	bool stale; /* rebuild the Dwfl before the next walk */
	Elf *arch_elf; /* a bare x86-64 ELF header: tells libdwfl the architecture */
	unsigned char arch_image[64];

	/* jitted.c: perf inject's files inside another file's module, in a
	 * Dwfl of their own */
	Dwfl *side_dwfl;
	struct ps_unwind_jitted side[PS_UNWIND_MAX_JITTED];
	size_t nr_side;

	struct ps_unwind_module *modules;
	size_t nr_modules, cap_modules;
	size_t last_module; /* index of the last module hit */
	/* ps_unwind_module_ensure()'s last answers, good while the Dwfl's
	 * modules (modules_epoch, nr_modules) and the mappings
	 * (callbacks.maps_generation) are as they were then */
	struct ps_unwind_hit hits[PS_UNWIND_HITS];
	unsigned nr_hits, next_hit;
	uint64_t hits_epoch, hits_maps;
	size_t hits_modules;
	/* whether libdwfl has a module at a JIT frame's address
	 * (dwfl_addrmodule(), table.c), good while the Dwfl's modules are as
	 * they were: the same trampolines come back in every sample */
	struct {
		uint64_t addr, epoch; /* epoch 0: an empty slot */
		size_t nr_modules;
		bool has;
	} jit_modules[PS_UNWIND_JIT_MODULES];

	/* caches of the walks, allocated for the first one (and again after
	 * ps_unwinder_trim()) */
	struct ps_unwind_caches *caches;
	uint64_t page_clock;

	/* the current sample */
	const struct ps_unwind_sample *sample;
	Dwarf_Word sample_regs[PS_UNWIND_NR_DWARF_REGS];
	uint32_t sample_regs_present; /* bit per DWARF register */
	/* for the last sample register mask (load_sample(), unwinder.c):
	 * its bit count, and each DWARF register's index among the values
	 * (-1: not sampled); a capture has one mask per event */
	uint64_t regs_mask;
	size_t regs_mask_bits;
	int8_t regs_index[PS_UNWIND_NR_DWARF_REGS];
	bool regs_mask_known;
	/* the registers the next libdwfl walk starts from: the sample's, or
	 * those of a caller found by ps_unwind_guess_caller() */
	Dwarf_Word dwarf_regs[PS_UNWIND_NR_DWARF_REGS];
	uint32_t dwarf_regs_present;
	/* the table hands over a caller: libdwfl's PC for it is restart_pc
	 * (the return address - 1) while rip holds the return address, as
	 * in a frame libdwfl unwound itself (CFA expressions read rip) */
	bool restart_pc_set;
	uint64_t restart_pc;
	uint64_t sp, stack_end; /* the stack copy covers [sp, stack_end) */
	uint64_t *pcs;
	struct ps_unwind_frame_regs *frame_regs; /* the sample's, or NULL */
	size_t nr; /* PCs stored */
	size_t depth; /* frames walked (PCs of 0 are not stored) */
	size_t max;
	enum ps_unwind_stop stop;
	bool stopped; /* the frame callback decided the end */
	bool retry; /* a module disagreed with find_map: rebuild and walk again */
	bool restart; /* continue with a new libdwfl walk from dwarf_regs */
	uint64_t frame_base; /* of the current frame's module (set by ps_unwind_module_ensure) */
	uint64_t frame_libunwind_base; /* the mapping's libunwind_base, or frame_base */
	/* ps_unwind_map_partial(): a jitted file, whose unwinding tables lie
	 * in memory only as far as its JIT said (the jitdump's mapped_size):
	 * libunwind reads them through memory (ps_unwind_libunwind_info()) */
	bool frame_partial;
	/* PS_UNWIND_MODULE_NONE for a mapping of a readable ELF file that
	 * libdwfl could not place there: the file's module as libdwfl placed
	 * it, or NULL (no file, or libdwfl failed) */
	Dwfl_Module *frame_file_mod;
	bool restarted; /* this libdwfl walk continues an earlier one */
	size_t walk_frames; /* frames seen by this libdwfl walk */
	/* a caller of a libdwfl walk the table goes on from (take_back()
	 * in unwinder.c): its registers, rip its return address */
	bool take_back;
	Dwarf_Word back_regs[PS_UNWIND_NR_DWARF_REGS];
	uint32_t back_present;
	/* what the memory reads of the current step saw */
	bool step_read_zero; /* the last read returned 0 (libunwind: IP 0) */
	bool step_read_cut; /* a read past the end of the stack copy found no data */
	bool step_read_failed; /* a read failed */
	uint64_t prev_pc, prev_sp;
	/* quirk mode: the registers libunwind holds for the current frame.
	 * It takes a register its CFI row does not mention for unchanged;
	 * libdw takes it for undefined unless the ABI's initial rules say
	 * otherwise, and elfutils' x86-64 rules name rax where rbx is meant:
	 * an rbx that libdw drops, libunwind keeps (see
	 * ps_unwind_fill_carried()). */
	Dwarf_Word carry[PS_UNWIND_NR_DWARF_REGS];
	uint32_t carry_present;

	/* quirk mode: libunwind's cache (unless fresh_lookups), as it was
	 * before the sample's first change (a retried walk starts from it),
	 * and the lookups of the sample's walk */
	bool rs_kept; /* style_quirks without fresh_lookups */
	bool rs_on; /* this walk's: rs_kept and quirks */
	struct ps_unwind_rscache rs, rs_before;
	bool rs_saved;
	struct ps_unwind_step *steps;
	size_t nr_steps, cap_steps;
	bool steps_lost;

	struct ps_unwind_stats stats;
	char errmsg[PS_MSG_MAX];
};

/* The bookkeeping of a walk, which the frame callback (unwinder.c) and
 * the table walk (table.c) share. */
/* Store one frame; false once max frames are stored. perf skips frames
 * whose PC is 0 but counts them against --max-stack, and so does depth. */
static inline bool ps_unwind_record_regs(struct ps_unwinder *u, uint64_t pc, const uint64_t *regs,
                                         uint32_t present)
{
	if (pc) {
		if (u->frame_regs) {
			struct ps_unwind_frame_regs *f = &u->frame_regs[u->nr];

			f->present = regs ? present : 0;
			if (regs)
				for (unsigned regno = 0; regno < PS_UNWIND_NR_REGS; regno++)
					f->regs[regno] = regs[regno];
		}
		u->pcs[u->nr++] = pc;
	}
	return ++u->depth < u->max;
}

/* A frame without registers of its own (perf's made-up frames). */
static inline bool ps_unwind_record(struct ps_unwinder *u, uint64_t pc)
{
	return ps_unwind_record_regs(u, pc, NULL, 0);
}

/* A frame libdwfl walked, with the registers libdwfl has for it when the
 * sample asks for them (unwinder.c), rip being raw, where the frame
 * resumes (the return address of a caller). */
bool ps_unwind_record_state(struct ps_unwinder *u, uint64_t pc, Dwfl_Frame *state, uint64_t raw);

/* End the walk with stop. */
static inline void ps_unwind_end_walk(struct ps_unwinder *u, enum ps_unwind_stop stop)
{
	u->stop = stop;
	u->stopped = true;
}

/* Whether map starts inside a page of its file, which no mmap() can: a
 * file of `perf inject --jit`'s, whose code alone is mapped, from offset
 * 0x80. */
static inline bool ps_unwind_map_partial(const struct ps_unwind_map *map)
{
	return (map->pgoff & (PS_UNWIND_PAGE_SIZE - 1)) != 0;
}

/* jitted.c */
/* Whether map is a file of perf inject --jit's whose mapping touches
 * another file's (a V8 builtin's code in node's text). */
bool ps_unwind_jitted_inside(struct ps_unwinder *u, const struct ps_unwind_map *map);
/* That file's module in the side Dwfl at base, or NULL (libdwfl refused
 * it, or out of memory). Good until the next call. */
Dwfl_Module *ps_unwind_jitted_module(struct ps_unwinder *u, uint64_t base, const char *name,
                                     const char *path);
void ps_unwind_jitted_destroy(struct ps_unwinder *u);

/* cfi.c */
/* The compiled rule for the frame whose lookup address is pc in mod, or
 * NULL when out of memory. With eh_only, a row .eh_frame does not have is
 * PS_UNWIND_ROW_NOT_EH: .debug_frame is not looked at, which can cost
 * reading and decompressing a separate debug file that libdwfl would not
 * have opened for that frame. */
const struct ps_unwind_row *ps_unwind_row_get(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc,
                                              bool eh_only);
void ps_unwind_rows_clear(struct ps_unwinder *u);
void ps_unwind_rows_release(struct ps_unwinder *u);

/* table.c */
/* Quirk mode, a caller frame found in mod at lookup, with libdw's
 * registers in regs and present: when the frame's .eh_frame row takes its
 * CFA from a register libdw dropped and libunwind kept (carry, as
 * ps_unwinder.carry), put that value in regs and return true: the walk
 * goes on from the frame as from a new first frame, in both engines. */
bool ps_unwind_fill_carried(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t lookup,
                            Dwarf_Word *regs, uint32_t *present, const Dwarf_Word *carry,
                            uint32_t carry_present);
enum ps_unwind_table_result {
	PS_UNWIND_TABLE_STOPPED, /* the walk is over: stopped or retry is set */
	PS_UNWIND_TABLE_ENDED, /* the last frame's return address is undefined */
	PS_UNWIND_TABLE_HANDOVER, /* libdwfl goes on from dwarf_regs */
};
/* Walk the current sample with the compiled rules as far as they reach
 * exactly as libdwfl would; at the first frame they cannot do, load
 * dwarf_regs (and restarted) for libdwfl to do that frame and the rest. */
enum ps_unwind_table_result ps_unwind_table_walk(struct ps_unwinder *u);
/* The same from a caller a libdwfl walk found (back_regs, back_present,
 * carry), as if the table had found it: libdwfl has done the frames
 * before it. */
enum ps_unwind_table_result ps_unwind_table_resume(struct ps_unwinder *u);
/* A compiled row applied to a frame's registers (bit per DWARF register in
 * present): the caller's in next. 1, 0 when the return address is
 * undefined, -1 when a read does not come cleanly from the sample or a
 * register the CFA needs is missing. A SIMPLE or PLT row. */
int ps_unwind_row_apply(struct ps_unwinder *u, const struct ps_unwind_row *row,
                        const Dwarf_Word *regs, uint32_t present, Dwarf_Word *next,
                        uint32_t *next_present);

/* module.c */
enum ps_unwind_lookup {
	PS_UNWIND_MODULE_OK,
	PS_UNWIND_MODULE_UNMAPPED, /* no mapping */
	PS_UNWIND_MODULE_NONE, /* a mapping without a usable ELF file */
	PS_UNWIND_MODULE_STALE, /* the Dwfl disagrees with find_map: rebuild */
	PS_UNWIND_MODULE_ERROR, /* out of memory */
};
enum ps_unwind_lookup ps_unwind_module_ensure(struct ps_unwinder *u, uint64_t addr,
                                              Dwfl_Module **mod);
int ps_unwind_dwfl_create(struct ps_unwinder *u, uint32_t pid);
void ps_unwind_dwfl_destroy(struct ps_unwinder *u);
void ps_unwind_log(struct ps_unwinder *u, enum ps_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The first section of elf named name, its header in *shdr; NULL when
 * there is none or the section table cannot be read. perf and libunwind
 * find .eh_frame_hdr and .eh_frame so, by name. */
Elf_Scn *ps_unwind_elf_section(Elf *elf, const char *name, GElf_Shdr *shdr);

/* libunwind.c */
enum ps_unwind_info {
	PS_UNWIND_INFO_FOUND, /* a DWARF step with the row at *row_pc */
	PS_UNWIND_INFO_ENOINFO, /* the frame-chain guess */
	PS_UNWIND_INFO_FAIL, /* the walk ends at the frame */
};
/* What libunwind's step finds for the frame in mod (quirk mode) whose IP
 * as libunwind holds it is key and whose lookup address is lookup: from
 * its cache, or looked up now (entered in the cache when found); logged. */
enum ps_unwind_info ps_unwind_libunwind_info(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t key,
                                             uint64_t lookup, uint64_t *row_pc);
/* The same for a frame the table walk steps with its own row: whether
 * the cache holds key with another row (the walk is not the table's). */
bool ps_unwind_libunwind_other_row(struct ps_unwinder *u, uint64_t key);
void ps_unwind_rs_flush(struct ps_unwind_rscache *c);
/* Quirk mode, a frame in a mapping whose ELF file libdwfl could not place
 * there (u->frame_file_mod set by ps_unwind_module_ensure()): whether
 * libunwind finds no unwind info for it (-UNW_ENOINFO) and guesses its
 * caller with frame pointers, rather than failing (no usable
 * .eh_frame_hdr) or finding an FDE. lookup is the frame's lookup address. */
bool ps_unwind_foreign_enoinfo(struct ps_unwinder *u, uint64_t lookup);

/* Start of a sample's walk (and of each retry): the cache as it was before
 * the sample, no lookups logged. */
void ps_unwind_lookups_begin(struct ps_unwinder *u, bool retry);

/* heuristic.c */
bool ps_unwind_eh_covered(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc);
/* Whether the file of mod has a .eh_frame_hdr that perf's libunwind glue
 * can use; cached per module. */
bool ps_unwind_has_eh_frame_hdr(struct ps_unwinder *u, Dwfl_Module *mod);
/* libunwind's frame-chain guess for the frame in state, whose PC is ip:
 * on success the caller's registers are in dwarf_regs (rip undecremented). */
bool ps_unwind_guess_caller(struct ps_unwinder *u, Dwfl_Frame *state, uint64_t ip);
/* A sample's IP in a PLT stub of mod that no CFI describes (lld writes
 * none): the stub's rule into *out. */
bool ps_unwind_plt_rule(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc,
                        struct ps_unwind_rule *out);
/* Whether neither .eh_frame nor .debug_frame of mod describes pc. */
bool ps_unwind_no_cfi(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc);
/* The caller of the frame in state by a rule from callbacks.frame_rule: on
 * success its registers are in dwarf_regs (rip undecremented). */
bool ps_unwind_apply_rule(struct ps_unwinder *u, Dwfl_Frame *state,
                          const struct ps_unwind_rule *rule);
/* The same from registers (present: bit per DWARF register). */
bool ps_unwind_apply_rule_regs(struct ps_unwinder *u, const Dwarf_Word *regs, uint32_t present,
                               const struct ps_unwind_rule *rule);

/* memory.c */
bool ps_unwind_read_file_word(struct ps_unwinder *u, const char *path, uint64_t offset,
                              uint64_t *value);
/* Free the caches of the walks (struct ps_unwind_caches). */
void ps_unwind_caches_release(struct ps_unwinder *u);
bool ps_unwind_is_sigreturn(struct ps_unwinder *u, uint64_t pc);
/* One word of the sampled process as perf's libunwind access_mem() sees
 * it: 0 read, 1 mapped without readable contents (*value = 0), -1 not
 * mapped. The stack copy's last word counts only without the quirks. */
int ps_unwind_access_mem(struct ps_unwinder *u, uint64_t addr, uint64_t *value);
/* A read as libdwfl's memory_read callback does it (setting the step_read_
 * flags the same way); returns what ps_unwind_access_mem() returned. */
int ps_unwind_dwfl_read(struct ps_unwinder *u, uint64_t addr, uint64_t *value);
extern const Dwfl_Thread_Callbacks ps_unwind_thread_callbacks;

#endif /* PS_UNWIND_UNWIND_PRIV_H */
