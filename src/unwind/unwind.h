/* The unwind module (this is its interface to the other modules; what its
 * files share is in unwind_priv.h): offline DWARF unwinding of the user stack of one perf
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
 * off; the two must print the same, which tests/unit/unwind/test_table.c
 * and every e2e capture check.
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
	/* Optional (0: start - pgoff). Where the file's first loadable page
	 * lies given this mapping, as its program headers place the segment
	 * the mapping holds: start - pgoff assumes that segment's address
	 * and file offset differ as the first's do, which lld's executable
	 * segment does not (nor a writable one, whose first page a read-only
	 * segment may share: that one is taken then, and the module, once
	 * reported, recognises the writable one's mappings). */
	uint64_t file_base;
	/* Optional (0). The address and alignment of the file's first
	 * PT_LOAD: libdwfl and perf's libunwind path place a file by that
	 * address rounded down, to the alignment and to the page, which
	 * differ for the files `perf inject --jit` writes (code at offset
	 * and address 0x80, aligned to 8). */
	uint64_t first_load_vaddr, first_load_align;
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
	/* Optional: a number that changes whenever any mapping find_map
	 * reports changes. With it the unwinder answers again, without
	 * asking find_map, for an address of a mapping it met already. */
	uint64_t (*maps_generation)(void *ctx);
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
	 * 6. What libunwind finds for a frame (libunwind.c): the unwind
	 *    state it found for the same frame IP before, kept per process
	 *    for the last 128 IPs (ps_unwinder_replay()); else perf's
	 *    find_proc_info(), which looks the frame up relative to the
	 *    file's lowest mapping and reads the header's table and the FDE
	 *    through the process's memory, whatever is mapped there (a
	 *    symbolizer mapping part of its own library lower down, an
	 *    ET_EXEC file mapped away from its addresses as Node.js does).
	 *
	 * 1 and 2 are the differences between the two perf builds on the
	 * captures of the research notes (stacks cut by the copy limit); 3
	 * to 6 show up with .debug_frame-only code, signal handlers,
	 * fork+exec, CPython's -X perf trampolines, Node.js and
	 * AddressSanitizer's leak reports. */
	enum ps_unwind_style style;
	/* The compiled CFI table (cfi.c) with libdwfl for the rest, or
	 * libdwfl alone. The output is the same either way; libdwfl alone is
	 * the reference the table is checked against. */
	enum ps_unwind_engine engine;
	ps_log_fn log; /* diagnostics; may be NULL */
	void *log_ctx;
	/* Quirk mode: without the register-state cache Debian's perf's
	 * libunwind keeps per process (see ps_unwinder_replay()), looking
	 * every frame up afresh and logging the lookups for the unwinder that
	 * keeps it (the unwinding workers, whose unwinders see only some of
	 * a process's samples). */
	bool fresh_lookups;
};

/* One lookup of a frame's unwind info by Debian's perf's libunwind (quirk
 * mode): key is the frame's IP as libunwind holds it (the sample's IP, a
 * return address), shift what the lookup found: how far below the frame's
 * lookup address lies the address whose CFI row libunwind applies (0: the
 * frame's own), or one of these. */
#define PS_UNWIND_STEP_ENOINFO INT64_MIN /* no info: the frame-chain guess */
#define PS_UNWIND_STEP_FAIL (INT64_MIN + 1) /* an error: the walk ends */
struct ps_unwind_step {
	uint64_t key;
	int64_t shift;
};

/* The registers the walk had for one frame it returned: DWARF numbers
 * 0-16 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, rip), a bit per
 * register in present. The sample's own frame has every register the
 * sample recorded; a caller has what the CFI (or a frame rule) recovers:
 * rsp, rip (the return address, not decremented) and the callee-saved
 * registers. present is 0 for a frame the walk made up (perf's bogus
 * ffffffffffffffff). */
#define PS_UNWIND_NR_REGS 17
struct ps_unwind_frame_regs {
	uint64_t regs[PS_UNWIND_NR_REGS];
	uint32_t present;
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
	/* Walk as perf built with libdw does (PS_UNWIND_PERF_LIBDW), whatever
	 * the unwinder's style: the stack is pystitch's own text, not perf's. */
	bool no_quirks;
	/* Optional, NULL: no registers kept. Room for as many entries as
	 * ps_unwinder_unwind() has for PCs: entry i gets the registers of
	 * the frame of PC i. Reading them costs a libdwfl call per register
	 * of each frame libdwfl walks, which is why only a caller that uses
	 * them asks. */
	struct ps_unwind_frame_regs *frame_regs;
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
	uint64_t debug_files; /* separate debug files handed to libdwfl */
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
/* The process exec'd: forget every module, and empty libunwind's cache
 * (perf's unwind__flush_access()). */
void ps_unwinder_reset(struct ps_unwinder *unwinder);
/* Forget every module only: an exec perf does not flush the cache for
 * (the first COMM of a thread perf had no name for). */
void ps_unwinder_forget_modules(struct ps_unwinder *unwinder);
/* The process has ended (its last thread exited): keep only libunwind's
 * cache, the one state whose loss would change a later walk, and free the
 * rest (the Dwfl with its modules and their debug information, the
 * compiled rules, the pages of mapped files), which a walk of one of the
 * samples still to come of it builds again as it would have been. */
void ps_unwinder_trim(struct ps_unwinder *unwinder);

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

/* The lookups of the last ps_unwinder_unwind() (quirk mode), in order;
 * NULL with *n = SIZE_MAX when there were more than it keeps. Valid until
 * the next call. */
const struct ps_unwind_step *ps_unwinder_steps(const struct ps_unwinder *unwinder, size_t *n);
/* Debian's perf's libunwind keeps, per process, the unwind state it found
 * for the last 128 frame IPs it looked up successfully, and reuses it for
 * a frame of the same IP even when the process's maps would now give
 * another (a symbolizer mapping part of its own library lower down moves
 * the base libunwind looks that library up from). An unwinder with
 * fresh_lookups sees only some of a process's samples; this enters the
 * lookups it logged for one sample (ps_unwinder_steps()) in this
 * unwinder's cache, in order, as if it had unwound the sample itself.
 * false, changing nothing, when this cache would have answered one of them
 * otherwise: the sample must be unwound here. true without the cache. */
bool ps_unwinder_replay(struct ps_unwinder *unwinder, const struct ps_unwind_step *steps, size_t n);

/* A one-line description of the last failure, or "". */
const char *ps_unwinder_errmsg(const struct ps_unwinder *unwinder);
const struct ps_unwind_stats *ps_unwinder_stats(const struct ps_unwinder *unwinder);

#endif /* PS_UNWIND_UNWIND_H */
