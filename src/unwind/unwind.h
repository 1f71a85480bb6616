/* The unwind module: offline DWARF unwinding of the user stack of one perf
 * sample (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER) with elfutils
 * libdwfl, x86-64 only.
 *
 * One struct ps_unwinder per process (address space). It keeps one Dwfl
 * across samples: modules are reported lazily, the first time a frame needs
 * an address in a mapping (base = map.start - map.pgoff), and the Dwfl is
 * attached once with callbacks whose argument is the unwinder itself,
 * updated with the current sample before each walk. The caller owns the
 * address-space model and answers "which mapping holds this address at this
 * sample's time" through ps_unwind_callbacks.find_map; the module knows
 * nothing about perf.data.
 *
 * Most frames do not reach libdwfl: a table of CFI rows compiled from libdw
 * (cfi.c) walks a sample as far as its simple rules go, exactly as libdwfl
 * and the frame callback would, and hands the rest of the walk to libdwfl
 * (table.c). ps_unwind_opts.engine = PS_UNWIND_ENGINE_LIBDWFL turns it
 * off; the two must print
 * the same, which tests/unit/unwind/test_table.c and every e2e capture
 * check.
 *
 * Output: frame PCs, leaf first, as perf prints them: frame 0 is the user IP
 * unchanged, callers are return address - 1 (unless the frame was
 * interrupted by a signal), at most max_frames of them.
 *
 * ps_unwind_opts.style selects which perf to match: Debian's (perf 6.1
 * linked with libunwind) or perf 6.1 built with libdw (NO_LIBUNWIND=1). The
 * two print the same frames except in the cases listed at that option.
 * Measured on captures of C recursion (dwarf,1024 and 8192), .debug_frame-only
 * code, CPython 3.11 and 3.12 -X perf, threads, signal handlers,
 * dlopen/dlclose and fork+exec: the PC lists equal the matching perf's on
 * every sample, in both modes.
 */
#ifndef PS_UNWIND_UNWIND_H
#define PS_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pystitch/pystitch.h"

/* perf's default --max-stack (PERF_MAX_STACK_DEPTH) */
#define PS_UNWIND_DEFAULT_MAX_FRAMES 127

/* What ps_unwind_callbacks.find_map reports about one mapping. */
struct ps_unwind_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff; /* file offset of start */
	/* A readable file with the mapping's contents, already located by
	 * the caller (the recorded path, a --symfs copy, the build-id cache
	 * copy of [vdso], ...), or NULL when there is none (anonymous
	 * memory, [stack], [heap], a file that cannot be found). */
	const char *path;
	/* A separate debug file for path (for .debug_frame, which libdwfl
	 * tries after .eh_frame), or NULL. */
	const char *debug_path;
	/* The name as recorded ("/usr/lib/.../libc.so.6", "[vdso]",
	 * "//anon", "/tmp/jitted-123-4.so"); used for messages and perf's
	 * jitted-ELF rule. May be NULL. */
	const char *name;
	bool exec;
	/* Quirk mode only, optional (0: start - pgoff). The base perf's
	 * libunwind path uses to look up this file's .eh_frame_hdr: that of
	 * the lowest-addressed mapping of the same file in the process
	 * (read_unwind_spec_eh_frame()). perf keeps mappings across exec
	 * (a child inherits its parent's) and after dlclose (there is no
	 * munmap record), so a process can hold a file twice; when this base
	 * is not the mapping's own, libunwind finds no unwind info for the
	 * frame and guesses with frame pointers, and so does this module. */
	uint64_t libunwind_base;
};

/* Where a synthetic rule (ps_unwind_callbacks.frame_rule) takes the CFA
 * from. */
enum ps_unwind_cfa_base {
	PS_UNWIND_CFA_SP = 0, /* rsp */
	PS_UNWIND_CFA_RBP, /* rbp */
};

/* How to find the caller of a frame that has no CFI, as a CFI row would say
 * it: CFA = base register + cfa_offset, the return address is stored at
 * CFA + ra_offset, the caller's rbp at CFA + rbp_offset when rbp_saved
 * (else rbp still holds it). The caller's rsp is the CFA; rbx, rbp and
 * r12-r15 are carried over (callee-saved), the other registers are
 * undefined, as after any DWARF step. */
struct ps_unwind_rule {
	enum ps_unwind_cfa_base cfa_base;
	int64_t cfa_offset;
	int64_t ra_offset; /* x86-64: -8 */
	bool rbp_saved;
	int64_t rbp_offset;
};

struct ps_unwind_callbacks {
	/* Find the mapping that contains addr at the current sample's time
	 * and fill *out; return false when addr is not mapped. Report every
	 * recorded mapping, executable or not: with the libunwind quirks,
	 * "mapped but unreadable" (the [stack] mapping perf records with
	 * --call-graph dwarf) and "not mapped" lead to different output.
	 * The strings must stay valid until the next call to find_map or the
	 * end of the current ps_unwinder_unwind() call. */
	bool (*find_map)(void *ctx, uint64_t addr, struct ps_unwind_map *out);
	/* Optional (NULL: the walk ends at such a PC as described at quirk 5
	 * of ps_unwind_opts.style, in either mode). Asked
	 * for a PC that has no ELF module (no mapping, anonymous or JIT
	 * code, an unreadable file): fill *out with the unwind rule of the
	 * frame and return true, or return false to keep the default. pc is
	 * where the frame resumes: the sample's IP for the first frame (or a
	 * frame interrupted by a signal), the return address for callers,
	 * not decremented (the output shows it minus one, as perf does); the
	 * rule describes the frame just before the instruction at pc runs.
	 * With a rule the frame is shown and the walk goes on from the
	 * caller's registers, in both modes: the libunwind quirks describe
	 * perf, which has no such hook. */
	bool (*frame_rule)(void *ctx, uint64_t pc, struct ps_unwind_rule *out);
};

struct ps_unwind_opts {
	size_t sz; /* sizeof(struct ps_unwind_opts) */
	/* Most frames returned, frame 0 included; 0 means
	 * PS_UNWIND_DEFAULT_MAX_FRAMES. */
	unsigned max_frames;
	/* Which perf to match: Debian's (PS_UNWIND_PERF_LIBUNWIND, perf 6.1
	 * built with libunwind: the "libunwind quirks") or perf built with
	 * libdw (PS_UNWIND_PERF_LIBDW). The differences:
	 *
	 * 1. At stacks cut off by the stack-copy limit (--call-graph
	 *    dwarf,SIZE) the last 8 bytes of the copy are not used: perf's
	 *    libunwind access_mem() rejects `addr + 8 >= sp + dyn_size`
	 *    (off by one; its libdw memory_read uses `>`), so a return
	 *    address stored in the last word of the copy is not found and
	 *    the last real frame is lost.
	 *
	 * 2. There, a bogus last frame 0xffffffffffffffff ("IP 0,
	 *    decremented"), printed by perf script as `ffffffffffffffff
	 *    [unknown] ([unknown])`. perf's access_mem() falls back to
	 *    reading the mapped file; for an address in a mapping without
	 *    readable contents (the [stack] mapping, recorded because
	 *    --call-graph dwarf records data mmaps; a thread's anonymous
	 *    stack) that fallback returns 1, which libunwind takes for
	 *    success with the value 0. The return address of the frame
	 *    that crosses the end of the copy thus reads as 0; libunwind
	 *    steps to IP 0, perf stores IP - 1 and the next step fails. A
	 *    return address of 0 read from the copy itself gives the same
	 *    frame. When the address is not mapped at all the read fails
	 *    and no bogus frame is added.
	 *
	 * 3. A frame that .eh_frame does not describe (code described only
	 *    by .debug_frame, .init/.fini stubs, assembly without CFI) is
	 *    unwound with libunwind's frame-chain guess, not with .debug_frame
	 *    (Debian's perf is built without libunwind's .debug_frame support:
	 *    it does not import dwarf_find_debug_frame) nor with libdwfl's
	 *    frame-pointer step. The guess keeps only rbp, rsp and rip, and
	 *    sets rsp to the old CFA + 16 rather than rbp + 16; the next
	 *    frames often come out wrong, as in perf. Same for a file whose
	 *    ps_unwind_map.libunwind_base is not its own base.
	 *    But a frame in a file with no usable .eh_frame_hdr (no such
	 *    section, as in plain `gcc -static` binaries; version not 1;
	 *    a table encoding other than datarel|sdata4) is shown and ends
	 *    the walk: perf finds the header by section name, its
	 *    find_proc_info() returns -EINVAL, which libunwind takes for a
	 *    hard error (not -UNW_ENOINFO) and unw_step() fails without
	 *    guessing.
	 *
	 * 4. The PC of a signal trampoline frame (__restore_rt) reached as
	 *    a caller is decremented (libunwind looks at the frame below
	 *    it), which libdw does not do.
	 *
	 * 5. A PC with no ELF module (no mapping, anonymous or JIT code,
	 *    a file that cannot be read) is shown and ends the walk.
	 *    perf's libdw glue instead shows no user frame at all when it
	 *    is the IP; drops it and ends the walk when it is a caller in
	 *    a mapping; shows it and lets libdwfl go on with frame pointers
	 *    when it is a caller in no mapping. Neither applies to a PC
	 *    for which callbacks.frame_rule gives a rule.
	 *
	 * 1 and 2 are the differences between the two perf builds on the
	 * captures of the research notes (stacks cut by the copy limit); 3
	 * to 5 show up with .debug_frame-only code, signal handlers,
	 * fork+exec and CPython's -X perf trampolines. */
	enum ps_unwind_style style;
	/* The compiled CFI table (cfi.c) with libdwfl for the rest, or
	 * libdwfl alone. The output is the same either way; libdwfl alone is
	 * the reference the table is checked against. */
	enum ps_unwind_engine engine;
	ps_log_fn log; /* diagnostics; may be NULL */
	void *log_ctx;
};

/* The user-space state of one sample. Pointers are borrowed for the
 * duration of ps_unwinder_unwind(). */
struct ps_unwind_sample {
	uint32_t pid, tid;
	/* PERF_SAMPLE_REGS_USER: abi (PERF_SAMPLE_REGS_ABI_*: 0 none,
	 * 1 32-bit, 2 64-bit), the attr's sample_regs_user mask, and the
	 * values in increasing bit order of the mask (perf x86 register
	 * numbers: AX=0 BX=1 CX=2 DX=3 SI=4 DI=5 BP=6 SP=7 IP=8 ...
	 * R8..R15=16..23). */
	uint64_t regs_abi;
	uint64_t regs_mask;
	size_t nr_regs;
	const uint64_t *regs;
	/* PERF_SAMPLE_STACK_USER: dyn_size bytes copied from the user SP. */
	const uint8_t *stack;
	uint64_t stack_size;
	/* A sample taken in an epilogue, after the pops: GCC's CFI there may
	 * still say callee-saved registers are saved in slots now below the
	 * SP, which the copy does not hold. With this set such a slot reads
	 * as the live register the pop restored from it, instead of failing
	 * (perf fails, and its walk ends a frame later). */
	bool recover_popped;
};

/* Why a walk ended. */
enum ps_unwind_stop {
	/* the outermost frame: the CFI marks the return address undefined */
	PS_UNWIND_STOP_END = 0,
	/* the next frame needed memory beyond the stack copy */
	PS_UNWIND_STOP_STACK_CUT,
	/* max_frames (or the caller's buffer) reached */
	PS_UNWIND_STOP_MAX_FRAMES,
	/* a PC outside any mapping with a readable ELF file (JIT code, such
	 * as CPython's -X perf trampolines, ends here unless
	 * callbacks.frame_rule gives a rule for it) */
	PS_UNWIND_STOP_NO_MODULE,
	/* no unwind rule, unreadable memory or a frame that does not move */
	PS_UNWIND_STOP_BAD_FRAME,
	/* the sample has no user registers or an empty stack copy */
	PS_UNWIND_STOP_NO_STACK,
};

const char *ps_unwind_stop_name(enum ps_unwind_stop stop);

struct ps_unwind_stats {
	uint64_t samples; /* ps_unwinder_unwind() calls that walked */
	uint64_t frames; /* frames returned */
	uint64_t dwfl_builds; /* Dwfl handles created (1 + rebuilds) */
	uint64_t modules; /* ELF modules reported */
	uint64_t module_failures; /* mappings whose file could not be reported */
	uint64_t file_reads; /* words read from mapped files */
	uint64_t file_misses; /* of which needed a pread() */
	uint64_t table_frames; /* frames the compiled CFI table walked */
	uint64_t dwfl_frames; /* frames libdwfl walked (its frame callbacks) */
	uint64_t table_rules; /* rules compiled (libdw asked once per PC) */
};

struct ps_unwinder;

/* Create an unwinder for one process. callbacks and ctx must outlive it.
 * Returns 0 or a negative errno (-EINVAL, -ENOMEM). */
int ps_unwinder_new(const struct ps_unwind_callbacks *callbacks, void *ctx,
                    const struct ps_unwind_opts *opts, struct ps_unwinder **out);
void ps_unwinder_free(struct ps_unwinder *unwinder);

/* A mapping appeared (mmap, mprotect) while samples were being unwound.
 * Optional: every frame checks that its module agrees with find_map (same
 * file, same base) and a disagreement rebuilds the Dwfl and walks again;
 * telling the unwinder up front only saves that wasted walk. The Dwfl is
 * rebuilt before the next walk if map overlaps a reported module of another
 * file or base (or is executable anonymous memory). */
void ps_unwinder_map_changed(struct ps_unwinder *unwinder, const struct ps_unwind_map *map);
/* The process exec'd: forget every module. */
void ps_unwinder_reset(struct ps_unwinder *unwinder);

/* Unwind one sample. Writes at most min(cap, max_frames) PCs to pcs, leaf
 * first, and returns how many, or a negative errno: -EINVAL (bad
 * arguments, regs without IP or SP, fewer values than the mask has bits),
 * -EOPNOTSUPP (32-bit ABI), -ENOMEM. 0 frames is a valid answer, with perf
 * printing no user frame: a sample without user registers or stack copy
 * (PS_UNWIND_STOP_NO_STACK), an IP of 0, and without the quirks an IP that
 * has no ELF module. *stop (may be NULL) says why the walk ended.
 * Allocates nothing once the modules of the process are loaded (libdwfl
 * itself allocates per frame). */
int ps_unwinder_unwind(struct ps_unwinder *unwinder, const struct ps_unwind_sample *sample,
                       uint64_t *pcs, size_t cap, enum ps_unwind_stop *stop);

/* A one-line description of the last failure, or "". */
const char *ps_unwinder_errmsg(const struct ps_unwinder *unwinder);
const struct ps_unwind_stats *ps_unwinder_stats(const struct ps_unwinder *unwinder);

/* ------------------------------------------------------------------ */
/* Shared by the files of src/unwind only.                             */
/* ------------------------------------------------------------------ */
#ifdef PS_UNWIND_INTERNAL

#include <elfutils/libdwfl.h>

#define PS_UNWIND_NR_DWARF_REGS 17 /* x86-64: rax..r15, rip */
#define PS_UNWIND_DWARF_SP 7
#define PS_UNWIND_DWARF_IP 16
#define PS_UNWIND_COVERAGE_BITS 9
#define PS_UNWIND_PAGE_SLOTS 8
#define PS_UNWIND_PAGE_SIZE 4096

/* One mapping whose file was reported to the Dwfl (or failed to be). */
struct ps_unwind_module {
	uint64_t base; /* map.start - map.pgoff */
	uint64_t low, high; /* the module's range in libdwfl, or the mapping's on failure */
	char *path;
	char *debug_path; /* given to find_debuginfo through the module's userdata */
	Dwfl_Module *mod; /* NULL: the file could not be reported */
	/* quirk mode: whether the file has a .eh_frame_hdr libunwind can
	 * search (0 not asked yet, 1 yes, -1 no) */
	signed char eh_frame_hdr;
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
	int64_t cfa_offset;
	int32_t offsets[PS_UNWIND_NR_DWARF_REGS];
};

/* A page of a mapped file, read with pread() on a miss. */
struct ps_unwind_page {
	char *path; /* NULL: empty slot */
	uint64_t offset; /* page-aligned file offset */
	size_t len; /* valid bytes (short at the end of the file) */
	uint64_t last_use;
	uint8_t data[PS_UNWIND_PAGE_SIZE];
};

struct ps_unwinder {
	struct ps_unwind_callbacks callbacks;
	void *ctx;
	unsigned max_frames;
	bool quirks;
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
	bool stale; /* rebuild the Dwfl before the next walk */
	Elf *arch_elf; /* a bare x86-64 ELF header: tells libdwfl the architecture */
	unsigned char arch_image[64];

	struct ps_unwind_module *modules;
	size_t nr_modules, cap_modules;
	size_t last_module; /* index of the last module hit */

	struct ps_unwind_coverage coverage[1u << PS_UNWIND_COVERAGE_BITS];
	struct ps_unwind_page pages[PS_UNWIND_PAGE_SLOTS];
	uint64_t page_clock;

	/* the current sample */
	const struct ps_unwind_sample *sample;
	Dwarf_Word sample_regs[PS_UNWIND_NR_DWARF_REGS];
	uint32_t sample_regs_present; /* bit per DWARF register */
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
	size_t nr; /* PCs stored */
	size_t depth; /* frames walked (PCs of 0 are not stored) */
	size_t max;
	enum ps_unwind_stop stop;
	bool stopped; /* the frame callback decided the end */
	bool retry; /* a module disagreed with find_map: rebuild and walk again */
	bool restart; /* continue with a new libdwfl walk from dwarf_regs */
	uint64_t frame_base; /* of the current frame's module (set by ps_unwind_module_ensure) */
	uint64_t frame_file_base; /* the mapping's start - pgoff, even for jitted files */
	uint64_t frame_libunwind_base; /* the mapping's libunwind_base, or frame_base */
	bool restarted; /* this libdwfl walk continues an earlier one */
	size_t walk_frames; /* frames seen by this libdwfl walk */
	/* what the memory reads of the current step saw */
	bool step_read_zero; /* the last read returned 0 (libunwind: IP 0) */
	bool step_read_cut; /* a read past the end of the stack copy found no data */
	bool step_read_failed; /* a read failed */
	uint64_t prev_pc, prev_sp;

	struct ps_unwind_stats stats;
	char errmsg[256];
};

/* unwinder.c: the frame callback's bookkeeping, shared with the table walk */
/* Store one frame; false once max frames are stored. */
bool ps_unwind_record(struct ps_unwinder *u, uint64_t pc);
/* End the walk with stop (sets u->stop and u->stopped). */
void ps_unwind_end_walk(struct ps_unwinder *u, enum ps_unwind_stop stop);

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
enum ps_unwind_table_result {
	PS_UNWIND_TABLE_STOPPED, /* the walk is over: stopped or retry is set */
	PS_UNWIND_TABLE_ENDED, /* the last frame's return address is undefined */
	PS_UNWIND_TABLE_HANDOVER, /* libdwfl goes on from dwarf_regs */
};
/* Walk the current sample with the compiled rules as far as they reach
 * exactly as libdwfl would; at the first frame they cannot do, load
 * dwarf_regs (and restarted) for libdwfl to do that frame and the rest. */
enum ps_unwind_table_result ps_unwind_table_walk(struct ps_unwinder *u);

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

/* heuristic.c */
bool ps_unwind_eh_covered(struct ps_unwinder *u, Dwfl_Module *mod, uint64_t pc);
/* Whether the file of mod has a .eh_frame_hdr that perf's libunwind glue
 * can use; cached per module. */
bool ps_unwind_has_eh_frame_hdr(struct ps_unwinder *u, Dwfl_Module *mod);
/* libunwind's frame-chain guess for the frame in state, whose PC is ip:
 * on success the caller's registers are in dwarf_regs (rip undecremented). */
bool ps_unwind_guess_caller(struct ps_unwinder *u, Dwfl_Frame *state, uint64_t ip);
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
void ps_unwind_pages_release(struct ps_unwinder *u);
bool ps_unwind_is_sigreturn(struct ps_unwinder *u, uint64_t pc);
/* One word of the sampled process as perf's libunwind access_mem() sees
 * it: 0 read, 1 mapped without readable contents (*value = 0), -1 not
 * mapped. The stack copy's last word counts only without the quirks. */
int ps_unwind_access_mem(struct ps_unwinder *u, uint64_t addr, uint64_t *value);
/* A read as libdwfl's memory_read callback does it (setting the step_read_
 * flags the same way); returns what ps_unwind_access_mem() returned. */
int ps_unwind_dwfl_read(struct ps_unwinder *u, uint64_t addr, uint64_t *value);
extern const Dwfl_Thread_Callbacks ps_unwind_thread_callbacks;

#endif /* PS_UNWIND_INTERNAL */

#endif /* PS_UNWIND_UNWIND_H */
