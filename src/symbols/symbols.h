/* Symbolisation: from a DSO path (and build-id) and an address to the
 * names perf 6.1's `perf script` prints for that frame.
 *
 * One struct ps_symbols per session holds the options and a registry of
 * DSOs. Each DSO is located once (--symfs, the perf build-id cache,
 * /usr/lib/debug, .gnu_debuglink, the recorded path), its ELF files are
 * opened once and kept, and every resolved address is cached, so a frame
 * seen again costs one hash lookup.
 *
 * What perf does, and therefore what this module reproduces:
 *  - symbols come from the first candidate file with a .symtab (the debug
 *    file from /usr/lib/debug or ~/.debug when present), .dynsym from the
 *    first with one; values are converted to file-offset space, zero-size
 *    symbols end where the next one starts, aliases at one address are
 *    reduced to one by perf's choose_best_symbol, PLT entries become
 *    "name@plt";
 *  - inline frames are what `addr2line -f -i` (binutils 2.40, which
 *    Debian's perf runs as a child) says for the address: each answer
 *    becomes a frame, printed "(inlined)" unless its name equals the ELF
 *    symbol, with the ELF symbol's offset;
 *  - kernel frames are looked up in kallsyms (or a vmlinux) by raw address;
 *  - C++ names are demangled as Debian's perf does (libiberty's
 *    cplus_demangle without parameter lists) when built with
 *    PS_HAVE_CPLUS_DEMANGLE and -liberty; otherwise they stay mangled.
 *
 * Like addr2line, the inline answers for a few addresses (those in gaps of
 * a compilation unit's ranges) depend on which addresses of the DSO were
 * asked before: resolving in perf's order (sample order, leaf first)
 * reproduces perf exactly.
 *
 * Not thread-safe: use one ps_symbols per thread, or serialise calls.
 * Strings handed out stay valid until ps_symbols_free().
 */
#ifndef PS_SYMBOLS_SYMBOLS_H
#define PS_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/cursor.h"
#include "base/file_hooks.h"
#include "pystitch/pystitch.h"

struct ps_symbols;
struct ps_dso;
struct ps_elf;

struct ps_symbols_opts {
	size_t sz; /* sizeof(struct ps_symbols_opts) */
	const char *symfs; /* --symfs DIR: prefix of every recorded path */
	/* more --symfs trees (one exported per container): a DSO is read
	 * under the first tree (symfs, then these) whose file has its
	 * recorded build-id, or, none recorded, that holds its path */
	const char *const *symfs_dirs;
	size_t nr_symfs_dirs;
	/* perf's build-id cache; NULL: $HOME/.debug. Under a symfs it is
	 * SYMFS/.debug, as in perf, whatever this says. */
	const char *buildid_dir;
	const char *kallsyms; /* --kallsyms FILE: kernel symbols from here */
	const char *vmlinux; /* -k FILE: kernel symbols from this ELF */
	bool no_inline; /* --no-inline: no inline frames */
	bool srcline; /* fill ps_frame_name.srcline (-F +srcline) */
	ps_log_fn log; /* warnings (build-id mismatch, damage) */
	void *log_ctx;
	/* Where files are read from, and who is told (see base/file_hooks.h);
	 * copied. With a resolver, a path it does not know does not exist. */
	struct ps_file_hooks files;
	/* Keep the answers separate debug files give, for
	 * ps_symbols_recorded_names() (an archive writer). */
	bool record_names;
	/* srclines with the whole path of the file (--full-source-path) */
	bool full_source_path;
	/* names as the files have them (perf script --no-demangle) */
	bool no_demangle;
	/* ps_dso_source() is asked (perf script -F srccode) */
	bool srccode;
	/* The capture was made on another machine: a pid of it that runs
	 * here is not its process, whose root file system is not read. */
	bool no_live_processes;
	/* Addresses are seldom named (an unwinding worker's symbols): a
	 * DSO's symbol table is loaded to learn whether it has one, then
	 * freed, and loaded again only if an address of it is named. */
	bool names_unused;
};

/* Returns 0 or a negative errno (-EINVAL for bad options, -ENOMEM). */
int ps_symbols_new(const struct ps_symbols_opts *opts, struct ps_symbols **out);
void ps_symbols_free(struct ps_symbols *symbols);

/* The DSO recorded under this path (MMAP2 filename) and build-id (the
 * BUILD_ID feature; NULL/0 when unknown). The same path with the same
 * build-id gives the same handle. Files are located lazily, at the first
 * ps_dso_resolve() or ps_dso_file(). Never NULL except on ENOMEM.
 *
 * Recognised special names: "[kernel.kallsyms]" (the kernel), "[name]" or
 * a path ending in .ko/.ko.xz/.ko.gz/.ko.zst (a kernel module, symbols
 * from kallsyms), "[vdso]" (only in the build-id cache). Other "[...]"
 * names, "//anon" and /tmp/perf-PID.map have no symbols here. */
struct ps_dso *ps_symbols_dso(struct ps_symbols *symbols, const char *recorded_path,
                              const uint8_t *build_id, size_t build_id_size);

/* Start, on a helper thread, work the session's thread would do at its
 * first need of it: the kernel's symbols and the decompression of the
 * debug sections of the files of the DSOs with these build-ids (the
 * capture's table: the DSOs its samples hit). What it makes is what the
 * session's thread would have made. Nothing is started with file hooks
 * (an archive's files, an observer). 0 or -ENOMEM; a thread that cannot
 * start is no error. */
int ps_symbols_ahead(struct ps_symbols *symbols, const struct ps_build_id *ids, size_t nr);

/* Call fn for every DSO of the registry that has a build id: the one
 * recorded for it, else, when its files were located (ps_dso_resolve(),
 * ps_dso_file()), the one of the ELF file holding its code. name is the
 * path given to ps_symbols_dso(); kernel: the kernel or a module. Locates
 * nothing. */
void ps_symbols_for_each_build_id(struct ps_symbols *symbols,
                                  void (*fn)(void *ctx, const char *name, bool kernel,
                                             const uint8_t *id, size_t size),
                                  void *ctx);
/* Where a DSO's file was mapped (all optional): the process that mapped
 * it, and its mount namespace as the capture recorded it. */
struct ps_dso_origin {
	int32_t pid; /* 0: unknown */
	bool has_mnt_ns;
	uint64_t mnt_ns_dev, mnt_ns_ino;
};

/* The same, for a file mapped where origin says. A process that runs now
 * in another mount namespace than ours (a container; the recorded one,
 * when the capture recorded it) had its own root file system: the file
 * is read there, under /proc/PID/root (of that process, or of another
 * still running in its recorded mount namespace), as perf reads it inside
 * that namespace, and is another DSO than the file of that path here.
 * Reading an archive, the copy it packed from there. */
struct ps_dso *ps_symbols_dso_from(struct ps_symbols *symbols, const char *recorded_path,
                                   const uint8_t *build_id, size_t build_id_size,
                                   const struct ps_dso_origin *origin);

/* A process running now in the mount namespace of this nsfs device and
 * inode (as PERF_RECORD_NAMESPACES records it), when that is not ours: a
 * container still running, whose root file system (/proc/PID/root)
 * holds the files of its processes that have ended. 0: none (or reading
 * an archive). Found once per namespace. */
int32_t ps_symbols_live_in_namespace(struct ps_symbols *symbols, uint64_t dev, uint64_t ino);

/* The path given to ps_symbols_dso(). */
const char *ps_dso_name(const struct ps_dso *dso);
/* The ELF file holding the DSO's code (for unwinding: CFI and text), in
 * perf's order: the build-id cache, then --symfs + path (or the path).
 * NULL when none was found or its build-id differs from the recorded one.
 * This and ps_dso_symbol_file() name the file to open: with a resolver
 * (opts.files), the local copy. */
const char *ps_dso_file(struct ps_dso *dso);
/* The file symbols came from: the first candidate with .symtab (may be a
 * debug file), else the one with .dynsym; NULL when there is none. */
const char *ps_dso_symbol_file(struct ps_dso *dso);
/* Why the DSO has no symbols (missing files, damaged ELF), or NULL. */
const char *ps_dso_errmsg(struct ps_dso *dso);
/* Whether perf's dso__type() of the DSO is DSO__TYPE_64BIT: the file perf
 * reads its contents from (the first of the build-id cache entry and
 * --symfs + path that exists, whatever its build-id; for "[vdso]" without
 * a recorded build-id, perf's copy of its own vdso, which a --symfs
 * hides) is a 64-bit ELF. Debian's perf unwinds a process's DWARF stacks
 * only once a map of such a DSO was inserted into it
 * (unwind__prepare_access()). Asked once per DSO; reads the ELF header
 * only, so it does not locate the DSO's symbols. */
bool ps_dso_is_elf64(struct ps_dso *dso);

/* perf's dso__data_read_offset(): up to size bytes of the file perf reads
 * the DSO's contents from (the build-id cache entry, perf's own vdso or
 * --symfs + path, the first that is a regular file, whatever its build-id;
 * none for the kernel and modules read from kallsyms, "[...]" names and
 * //anon), from offset. The bytes read (0 at the end of the file), or -1
 * when there is no such file or offset is past its end. */
ssize_t ps_dso_read_code(struct ps_dso *dso, uint64_t offset, void *buf, size_t size);
/* perf's dso->is_64_bit: whether the file the DSO's symbols come from is
 * a 64-bit ELF (true when there is none), which decides how perf decodes
 * its instructions. */
bool ps_dso_code_is64(struct ps_dso *dso);

/* A kernel module's file (the path its first MMAP recorded) and where it
 * is mapped: perf reads its symbols from that file under --symfs when it
 * is there (a .ko with a symbol table, not compressed), else from
 * kallsyms. The first call counts. */
void ps_dso_set_module_map(struct ps_dso *dso, const char *path, uint64_t start);
/* perf's pgoff of a kernel module's map once it has looked the module up:
 * the file offset of the .ko's .text when its symbols come from it, else
 * 0 (for ps_dso_read_code()). */
uint64_t ps_dso_module_pgoff(struct ps_dso *dso);

/* perf's map__load(): what looking the DSO up first decides (a kernel
 * module's symbols, the kernel's map, ps_dso_adjusts_symbols()), without
 * looking an address up. -1 where perf's map__load() fails: the first
 * load of a kernel module whose .ko perf cannot find (its symbols from
 * kallsyms are there from the next lookup on), else 0. */
int ps_dso_load(struct ps_dso *dso);

/* perf's dso->adjust_symbols: the DSO has been loaded (perf's map__load(),
 * which ps_dso_resolve() stands for) and its symbols came from an ELF
 * file. perf script -F brstackoff prints the addresses of such a DSO as
 * they are, and those of others relative to their map. */
bool ps_dso_adjusts_symbols(struct ps_dso *dso);

/* perf's get_srcline_split() for -F srccode: the source file of an
 * address of the DSO (as ps_dso_resolve() takes it) as addr2line names it
 * (a path, relative to where perf runs when the compilation unit's
 * directory is), into path, and its line. false when addr2line has no
 * answer, or is not run (kernel, "[...]" names, a DSO without its file).
 * The DSO's addr2line answers in the order it is asked, as perf's child. */
bool ps_dso_source(struct ps_dso *dso, uint64_t addr, char *path, size_t size, unsigned *line);

/* perf's find_sourceline() for -F srccode: line (from 1) of the text file
 * at path (read through the file hooks), without its newline: *len bytes
 * at *text, valid until the next call; the last line of a file without a
 * final newline runs to the file's end, and a NUL ends any line, as
 * perf's printf has them. false when the file cannot be read or has no
 * such line. Files are kept as perf keeps them (the 64 most recently
 * used, 32 MiB). */
bool ps_symbols_source_text(struct ps_symbols *symbols, const char *path, unsigned line,
                            const char **text, size_t *len);

/* One printed frame. */
struct ps_frame_name {
	const char *sym; /* NULL: perf prints "[unknown]" */
	uint64_t offset; /* the "+0x..." perf prints after sym */
	uint64_t size; /* the symbol's (end - start), 0 when not known */
	bool inlined; /* perf prints " (inlined)" instead of " (dso)" */
	/* With opts.srcline: the text perf prints on the next line after two
	 * spaces for -F +srcline ("s_sin.c:207", "??:0", "libfoo.so[1a2b]"),
	 * or NULL when perf prints nothing there. */
	const char *srcline;
};

/* Resolve an address of the DSO: file-relative for user DSOs
 * (ip - map.start + map.pgoff, perf's map_ip; callers in DWARF mode pass
 * the return address minus one, as perf prints), the raw ip for the kernel
 * and modules.
 *
 * inline_frames: whether perf expands this frame into its inline chain.
 * perf 6.1 does that only for frames found by DWARF unwinding (the user
 * part of --call-graph dwarf samples), not for frame-pointer or LBR
 * callchain entries, nor for the sample line of samples without a
 * callchain; --no-inline (opts.no_inline) turns it off everywhere.
 *
 * Fills out[] innermost first: the inline chain, then the function itself
 * (unless perf replaced it, see above). Returns the number of entries
 * written, at least 1 when max >= 1 (an unresolved address gives one entry
 * with sym == NULL); chains longer than max are cut at max. */
size_t ps_dso_resolve(struct ps_dso *dso, uint64_t addr, bool inline_frames,
                      struct ps_frame_name *out, size_t max);

/* The kernel's relocation: the address the capture recorded for the
 * kernel map's reference symbol (the pgoff of the "[kernel.kallsyms]_text"
 * MMAP). When the kallsyms file used comes from another boot (another
 * KASLR offset), kernel symbols are moved by the difference, as perf does.
 * Call before resolving kernel addresses; 0 on success or -ENOENT when the
 * symbol is not in the kernel symbols. */
int ps_symbols_kernel_reloc(struct ps_symbols *symbols, const char *ref_name, uint64_t ref_addr);

/* The kernel map as perf has it once loaded: perf record's kernel MMAP
 * covers _text to _etext, and loading kallsyms re-sizes the map to run
 * from the first kernel symbol to the end of the last (map__fixup_start,
 * map__fixup_end), so init text (start_kernel, x86_64_start_kernel) and
 * the other symbols past _etext resolve. perf loads the map at the first
 * address found in it, so this is false until the kernel DSO has
 * resolved an address, and when its symbols are missing. With symbols
 * from a vmlinux perf's kernel map is the vmlinux's .text. Addresses as
 * the capture recorded them: [*start, *end). */
bool ps_symbols_kernel_extent(const struct ps_symbols *symbols, uint64_t *start, uint64_t *end);
/* With the kernel's symbols loaded from a vmlinux: the map perf makes for
 * one of its sections other than .text that holds addr (named
 * "[kernel.kallsyms]" and the section's name), its range and file
 * offset; false otherwise. */
bool ps_symbols_kernel_section(const struct ps_symbols *symbols, uint64_t addr, const char **name,
                               uint64_t *start, uint64_t *end, uint64_t *offset);
/* The vmlinux (-k, as given) the loaded kernel symbols come from, and its
 * .text's file offset; NULL for kallsyms or before the kernel is loaded. */
const char *ps_symbols_kernel_vmlinux(const struct ps_symbols *symbols, uint64_t *text_offset);

/* With opts.record_names, every DSO whose symbols come from a separate
 * debug file records the answers that file gave (the ELF symbol and addr2line's records per address
 * resolved). This appends to out the table of the answers of debug_path (as the observer was told
 * it), which an archive carries in place of the file; a session reading the archive then prints the
 * same names for the same addresses. Returns the number of DSOs the table covers (0: the file gave
 * no answers) or -ENOMEM. */
struct ps_strbuf;
int ps_symbols_recorded_names(struct ps_symbols *symbols, const char *debug_path,
                              struct ps_strbuf *out);

/* ---- local variables (variables.c) ---------------------------------
 * Where named local variables of a function live at each of its
 * addresses, from the DWARF of the DSO (location lists; of variables of
 * the same name, the innermost lexical block's), and their values in one
 * frame of a sample. Only what a frame holds is read: its registers and
 * the sample's stack copy, never other memory. */

#define PS_VARIABLES_MAX 4
#define PS_FRAME_REGS 17 /* x86-64 DWARF registers: rax..r15, rip */

/* What one frame of a sample offers: the registers the unwinder has for
 * it (DWARF numbers, a bit per register in present: everything at the
 * sample's own frame, rsp, rip and the callee-saved ones in callers), its
 * canonical frame address, and the sample's stack copy. */
struct ps_frame_state {
	uint64_t regs[PS_FRAME_REGS];
	uint32_t present;
	uint64_t cfa;
	bool has_cfa;
	const uint8_t *stack;
	uint64_t stack_addr, stack_size; /* the copy covers [stack_addr, +size) */
};

struct ps_function_variables;

/* The variables names[0..nr) (nr at most PS_VARIABLES_MAX) of the
 * function whose code holds addr (file-relative, as for ps_dso_resolve()),
 * compiled on first use and kept with the DSO. 0 and *out; -ENOENT: no
 * DWARF, or no function there; -EINVAL: nr; -ENOMEM. */
int ps_dso_variables(struct ps_dso *dso, uint64_t addr, const char *const *names, size_t nr,
                     const struct ps_function_variables **out);
/* Whether addr (file-relative) is code of the function. */
bool ps_variables_cover(const struct ps_function_variables *vars, uint64_t addr);
/* The value of names[index] at addr (file-relative) in frame: 1 and
 * *value; 0 when it cannot be had there (no location, one this reader
 * does not evaluate such as an entry value, a register the frame does not
 * have, memory outside the stack copy); -EINVAL for a bad index. */
int ps_variables_value(const struct ps_function_variables *vars, size_t index, uint64_t addr,
                       const struct ps_frame_state *frame, uint64_t *value);

/* ---- ELF files ------------------------------------------------------
 * The library's one reader of ELF files. Each DSO's files are opened once
 * per struct ps_symbols (one per pipeline, so one per feed) and kept
 * (ps_dso_elf()); other modules that need more of a
 * file than its symbols (the Python side: CPython's version, the
 * trampoline template) read it through this handle rather than opening it
 * again. Headers are checked against the file's size when it is opened;
 * contents are read through bounds-checked cursors (base/cursor.h). */

/* Opens and checks path. On failure returns a negative errno and writes a
 * one-line message naming the file to err (when errsz > 0). */
int ps_elf_open(const char *path, struct ps_elf **out, char *err, size_t errsz);
void ps_elf_close(struct ps_elf *elf);

/* The opened ELF file ps_dso_file() names, or NULL when it has none. Owned
 * by the DSO; valid until ps_symbols_free(). */
const struct ps_elf *ps_dso_elf(struct ps_dso *dso);

/* The path as looked up (for messages), and the file read (the path, or
 * an archive's copy of it; what ps_dso_file() returns). */
const char *ps_elf_path(const struct ps_elf *elf);
const char *ps_elf_file(const struct ps_elf *elf);
uint16_t ps_elf_machine(const struct ps_elf *elf); /* e_machine */
bool ps_elf_is64(const struct ps_elf *elf); /* ELFCLASS64 */
/* For a mapping of the file at start from file offset pgoff (executable
 * or not): where its first PT_LOAD's file offset lies in memory, placing
 * the file by the segment the mapping holds. start - pgoff when that
 * segment's address and offset differ as the first's do (and when no
 * segment is found). */
uint64_t ps_elf_map_base(const struct ps_elf *elf, uint64_t start, uint64_t pgoff, bool exec);
/* The address and alignment of the file's first PT_LOAD (0 and 0 when it
 * has none). */
void ps_elf_first_load(const struct ps_elf *elf, uint64_t *vaddr, uint64_t *align);

struct ps_elf_section {
	const char *name; /* "" when the name is missing or out of bounds */
	uint32_t type, link, info;
	uint64_t flags, addr, offset, size, entsize;
	bool in_file; /* has contents (not NOBITS) inside the file */
};

size_t ps_elf_nr_sections(const struct ps_elf *elf);
/* Section index (0 is the null section), or NULL past the last. */
const struct ps_elf_section *ps_elf_section(const struct ps_elf *elf, size_t index);
/* Index of the first section with this name, or -1 (perf's
 * elf_section_by_name). */
int ps_elf_section_by_name(const struct ps_elf *elf, const char *name);
/* A cursor over a section's contents; false when it has none in the file. */
bool ps_elf_section_cursor(const struct ps_elf *elf, size_t index, struct ps_cursor *out);
/* The bytes at virtual address vaddr, at least size of them: through
 * section when it is a section index holding the whole range, else
 * through the PT_LOAD segment that holds it in the file. The cursor starts
 * at vaddr and ends where the section's (or segment's) bytes end; false
 * when the range is not in the file. */
bool ps_elf_vaddr_cursor(const struct ps_elf *elf, size_t section, uint64_t vaddr, uint64_t size,
                         struct ps_cursor *out);

/* The index of .symtab (dynamic false) or .dynsym, or -1. */
int ps_elf_symbol_table(const struct ps_elf *elf, bool dynamic);

struct ps_elf_sym {
	const char *name; /* NUL-terminated inside the string table */
	uint64_t value, size;
	uint16_t shndx;
	uint8_t binding, type, visibility;
};

/* Random access to a symbol table section. */
struct ps_elf_symtab {
	const struct ps_elf *elf;
	struct ps_cursor syms;
	const char *strings;
	size_t strings_size;
	size_t count; /* sh_size / sh_entsize, as perf counts */
	size_t stride; /* the native Elf32_Sym / Elf64_Sym size */
};

/* false when index is not a section whose entries and string table (its
 * sh_link) are both in the file. */
bool ps_elf_symtab_open(const struct ps_elf *elf, int index, struct ps_elf_symtab *out);
/* False for an entry outside the section or with a name outside the
 * string table. */
bool ps_elf_symtab_get(const struct ps_elf_symtab *tab, size_t i, struct ps_elf_sym *out);

#endif /* PS_SYMBOLS_SYMBOLS_H */
