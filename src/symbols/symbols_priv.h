/* Private interface of src/symbols: what its files share. Nothing outside
 * src/symbols includes this (the unit tests in tests/unit/symbols do, to
 * reach the pieces one at a time). */
#ifndef PS_SYMBOLS_PRIV_H
#define PS_SYMBOLS_PRIV_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/cursor.h"
#include "base/message.h"
#include "base/strbuf.h"
#include "symbols/symbols.h"

#define PS_BUILD_ID_MAX 20 /* perf's BUILD_ID_SIZE */

/* ------------------------------------------------------------------ */
/* elf_file.c: one opened ELF file, its headers checked against its size */

struct ps_elf_segment {
	uint32_t type, flags;
	uint64_t vaddr, offset, filesz, memsz, align;
};

/* Which file an open descriptor reads (ahead.c matches files by it). */
struct ps_elf_file_id {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
};

/* libelf's elf_version(), once for the process (the helper thread opens
 * files too). */
void ps_elf_library_init(void);

/* Of a regular file; false for anything else. */
bool ps_elf_file_id_of(int fd, struct ps_elf_file_id *out);
bool ps_elf_file_id_equal(const struct ps_elf_file_id *a, const struct ps_elf_file_id *b);

struct ps_ahead_task;

struct ps_elf {
	char *path; /* as looked up (messages, identity) */
	char *file; /* what was opened: path, or an archive's copy of it */
	int fd;
	Elf *elf;
	const uint8_t *image; /* the whole file, read-only */
	size_t image_size;
	bool image_mapped; /* image is a mapping of the file (see below) */
	bool swap; /* file byte order differs from ours */
	bool is64;
	uint16_t type, machine;
	struct ps_elf_section *sections;
	size_t nr_sections;
	struct ps_elf_segment *segments;
	size_t nr_segments;
	uint8_t build_id[PS_BUILD_ID_MAX];
	size_t build_id_size; /* 0: no GNU build-id note */
	int symtab_index; /* SHT_SYMTAB ".symtab", or -1 */
	int dynsym_index; /* SHT_DYNSYM ".dynsym", or -1 */
	Dwarf *dwarf; /* opened on first use */
	bool dwarf_tried;
	struct ps_elf_file_id id;
	/* the helper's work for this file (ahead.c), until the DWARF opens */
	struct ps_ahead_task *ahead;
	/* the handle the DWARF was opened on when its sections were
	 * decompressed apart (owned; on dwarf_copy when that is not NULL),
	 * else NULL: elf */
	Elf *dwarf_elf;
	struct ps_elf_inflated *dwarf_copy;
	bool inflate_tried;
};

/* Hands the pages of the file read so far back to the page cache, when
 * the image is a mapping of it: pointers into the image stay valid, and
 * the pages are read in again when used. What was read once to build a
 * table (symbols, DWARF units, line programs) then costs no memory. */
void ps_elf_release_pages(const struct ps_elf *elf);
/* Same as ps_elf_open(), reading the contents from file (an archive's copy
 * of path). */
int ps_elf_open_file(const char *path, const char *file, struct ps_elf **out, char *err,
                     size_t errsz);
/* A cursor over a section's contents, decompressed when SHF_COMPRESSED
 * (through libelf; the bytes stay valid while the file is open). */
bool ps_elf_section_contents(struct ps_elf *elf, const char *name, struct ps_cursor *out);
/* The DWARF of the file, or NULL (no debug info, or libdw refused it). */
Dwarf *ps_elf_dwarf(struct ps_elf *elf);
/* The same, for reading locations: its location lists inflated first
 * (empty when they do not inflate, as libdw drops a section libelf
 * cannot decompress). */
Dwarf *ps_elf_dwarf_locations(struct ps_elf *elf);
/* ahead.c: the file's ELF handle with its debug sections decompressed by
 * the helper (the caller's now, with *copy, the image it reads, to free
 * after it, or NULL), waiting while it works on it; NULL when it did not
 * (the caller then uses its own handle). */
Elf *ps_ahead_take_elf(struct ps_ahead_task *task, struct ps_elf_inflated **copy);

/* elf_inflate.c: whether dwarf_begin_elf() decompresses the section of
 * that name when it is compressed. */
bool ps_elf_libdw_section(const char *name);
/* An ELF handle on a copy of image (*copy; ps_elf_inflated_free() it
 * after elf_end()) whose compressed debug sections are inflated, but for
 * the location lists, which ps_elf_inflate_later() inflates; false, with
 * nothing made, when there are none or the file is left to libelf. */
struct ps_elf_inflated;
bool ps_elf_inflate(const uint8_t *image, size_t size, Elf **out, struct ps_elf_inflated **copy);
/* Whether the section of that name is one ps_elf_inflate_later()
 * inflates (the location lists). */
bool ps_elf_inflated_later(const char *name);
/* The location lists inflated in the copy (once, but for running out of
 * memory; true for NULL): false when their streams do not inflate as
 * libelf would inflate them, and they then read as empty. */
bool ps_elf_inflate_later(struct ps_elf_inflated *copy);
void ps_elf_inflated_free(struct ps_elf_inflated *copy);
/* The file named in .gnu_debuglink, into buf; false when there is none. */
bool ps_elf_debuglink(const struct ps_elf *elf, char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* die_walk.c: a unit's function DIEs, found over the DIE bytes */

#define PS_DIE_WALK_UNSURE 1 /* walk the unit with libdw instead */
#define PS_DIE_WALK_NONE UINT32_MAX /* no enclosing function */
/* bfd's find_abstract_instance limit: references followed for a name */
#define PS_DIE_ORIGIN_DEPTH_MAX 100
/* references followed for one function's name in all: the depth alone
 * lets DIEs with two references each to the next make 2^100 paths */
#define PS_DIE_FOLLOW_MAX 1000

/* What addr2line reads of a function DIE (bfd's scan_unit_for_symbols,
 * through libdw as addr2line.c asks it): the name, from the DIE or the
 * DIEs its DW_AT_specification and DW_AT_abstract_origin lead to, the
 * call site of inlined code, and the code's addresses. */
struct ps_die_function {
	const char *name;
	bool is_linkage; /* a linkage name, or a name in a C-like unit */
	bool has_call_file;
	uint64_t call_file, call_line;
	/* DW_AT_ranges in a form bfd reads: the caller asks libdw for them */
	bool ranges_attr;
	/* else dwarf_highpc() and dwarf_lowpc()'s [low, high), when high != 0 */
	bool has_pc;
	uint64_t low, high;
};

/* The strings a function's names may be in, for ps_die_walk_functions()
 * to read names itself: .debug_str as libdw reads it (has_str false: names
 * in it, and in other sections, are left to libdw), and whether the unit's
 * language makes DW_AT_name a linkage name. */
struct ps_die_strings {
	struct ps_cursor str;
	bool has_str;
	bool names_are_linkage;
};

/* Called for each DIE whose tag is DW_TAG_subprogram, _entry_point or
 * _inlined_subroutine, in libdw's order, with the value it set in *self
 * for its nearest such ancestor (PS_DIE_WALK_NONE for none); *self starts
 * as enclosing. fn is what the walker read of the function (NULL: read it
 * with libdw). Non-zero stops the walk and is returned. */
typedef int (*ps_die_walk_fn)(void *ctx, Dwarf_Die *die, int tag, uint32_t enclosing,
                              uint32_t *self, const struct ps_die_function *fn);
/* Walks the DIEs below cudie (info and abbrevs: the file's .debug_info,
 * the bytes libdw reads, and .debug_abbrev). With strings, it reads each
 * function's attributes too where it can. 0, fn's non-zero value,
 * -ENOMEM, or PS_DIE_WALK_UNSURE when the unit holds what this walker
 * leaves to libdw (some functions may have been given by then). */
int ps_die_walk_functions(Dwarf *dwarf, Dwarf_Die *cudie, struct ps_cursor info,
                          struct ps_cursor abbrevs, const struct ps_die_strings *strings,
                          ps_die_walk_fn fn, void *ctx);
/* The same walk through libdw (dwarf_child, dwarf_siblingof): 0, fn's
 * non-zero value or -ENOMEM. */
int ps_die_walk_functions_libdw(Dwarf_Die *cudie, ps_die_walk_fn fn, void *ctx);
/* A cursor over the debug section name when its bytes are the ones libdw
 * reads (the first section of the name, the only one, in no group, not
 * empty, no .zdebug_ one beside it); false otherwise. */
bool ps_die_section(struct ps_elf *elf, const char *name, struct ps_cursor *out);
/* The string section of the file's DWARF, checked against what libdw
 * reads of it (names_are_linkage false). */
void ps_die_strings_of(struct ps_elf *elf, Dwarf *dwarf, struct ps_die_strings *out);
/* addr2line.c: what addr2line reads of a function DIE, through libdw (what
 * the DIE walker's reading is checked against); -EINVAL when its
 * references run deeper than addr2line follows them. */
int ps_addr2line_function_libdw(Dwarf_Die *die, struct ps_die_function *out);
/* Whether bfd takes DW_AT_name for a linkage name in a unit of this
 * DW_LANG (C-like languages). */
bool ps_addr2line_names_are_linkage(int lang);

/* ------------------------------------------------------------------ */
/* symtab.c: a symbol table with perf's rules */

struct ps_sym {
	uint64_t start, end;
	const char *name;
	uint32_t left, right, parent; /* tree links, UINT32_MAX for none */
	uint16_t shndx; /* section (vmlinux only) */
	uint8_t binding, type;
	bool red, erased;
	/* a kernel module's symbol from kallsyms that follows one of another
	 * module or of the kernel in address order (kallsyms.c) */
	bool run_start;
	/* name is the ELF file's, demangled when first asked for
	 * (ps_symtab_name()) */
	bool mangled;
};

/* Symbols in a red-black tree shaped like perf's: same inserts and erases
 * in the same order, so lookups among overlapping symbols agree. */
struct ps_symtab {
	struct ps_sym *syms; /* every node ever added, erased ones too */
	size_t nr, cap, nr_live;
	uint32_t root;
	/* the node with the largest start while known (PS_SYMTAB_NONE after
	 * an erase): symbol tables mostly come sorted, and an insert at the
	 * right end then skips the walk down the tree */
	uint32_t rightmost;
	struct ps_arena names;
	/* names are kept as the ELF file has them (perf script
	 * --no-demangle); set before loading */
	bool no_demangle;
	/* only the symbols of this section (a kernel module's ".text": perf
	 * puts those of its other sections in DSOs of their own); set
	 * before loading, NULL: all */
	const char *only_section;
};

#define PS_SYMTAB_NONE UINT32_MAX

void ps_symtab_init(struct ps_symtab *tab);
void ps_symtab_release(struct ps_symtab *tab);
/* __symbols__insert of a symbol (start, start + size); the name is copied. */
int ps_symtab_add(struct ps_symtab *tab, const char *name, uint64_t start, uint64_t size,
                  uint8_t binding, uint8_t type);
/* The same with at most max bytes of name (no NUL needed after them). */
int ps_symtab_add_n(struct ps_symtab *tab, const char *name, size_t max, uint64_t start,
                    uint64_t size, uint8_t binding, uint8_t type);
void ps_symtab_erase(struct ps_symtab *tab, uint32_t index);
/* In-order walk; PS_SYMTAB_NONE at the end. */
uint32_t ps_symtab_first(const struct ps_symtab *tab);
uint32_t ps_symtab_next(const struct ps_symtab *tab, uint32_t index);
/* perf's symbols__fixup_end and symbols__fixup_duplicate. */
void ps_symtab_fixup_end(struct ps_symtab *tab, bool is_kallsyms);
void ps_symtab_fixup_duplicate(struct ps_symtab *tab);
/* perf's symbols__find. */
const struct ps_sym *ps_symtab_find(const struct ps_symtab *tab, uint64_t addr);
/* A symbol's name as perf shows it (demangled unless no_demangle):
 * demangling is put off until a name is shown or compared, since a run
 * shows a few symbols of each file and a C++ file has hundreds of
 * thousands. */
const char *ps_symtab_name(struct ps_symtab *tab, const struct ps_sym *sym);
/* perf's choose_best_symbol: true when a is kept over b. */
bool ps_symbol_prefer_first(const struct ps_sym *a, const struct ps_sym *b);
/* perf's demangle_sym as Debian builds it: C++ through libiberty's
 * cplus_demangle without parameters (when built with it), else OCaml.
 * A malloc'ed name, or NULL when the name is not mangled. */
char *ps_symbol_demangle(const char *name);

/* Loads a user DSO's symbols as perf's dso__load_sym and
 * dso__synthesize_plt_symbols do: syms is the file with .symtab (or the
 * runtime file), runtime the file with .dynsym. Names the files hold as
 * printed point into their string tables: both files stay open as long as
 * the table. Returns the number of symbols, or a negative errno with a
 * message in err. */
int ps_symtab_load_dso(struct ps_symtab *tab, const struct ps_elf *syms,
                       const struct ps_elf *runtime, char *err, size_t errsz);
/* variables.c: one DWARF operation, copied out of libdw, and the
 * evaluation of a location expression in a frame: the variable's value, or
 * false when the expression needs what the frame does not hold (or an
 * operation this reader does not do). frame_base (nr_frame_base
 * operations) is the function's DW_AT_frame_base, for DW_OP_fbreg. */
struct ps_var_op {
	uint8_t atom;
	uint64_t number, number2;
};
bool ps_variables_eval(const struct ps_var_op *ops, size_t n, const struct ps_var_op *frame_base,
                       size_t nr_frame_base, const struct ps_frame_state *frame, uint64_t *value);

/* perf's dso->text_offset: .text sh_addr - sh_offset of the runtime file. */
uint64_t ps_elf_text_offset(const struct ps_elf *runtime);

/* ------------------------------------------------------------------ */
/* elf_function.c: bfd's ELF symbol fallback for addr2line */

/* An ELF symbol bfd's _bfd_elf_find_function may pick. */
struct ps_elf_function {
	uint64_t value, size; /* size >= 1 */
	const char *name;
	const char *file; /* the STT_FILE name bfd pairs with it */
	uint32_t order;
	uint16_t shndx;
	uint8_t type;
	bool is_function;
};

struct ps_elf_functions {
	struct ps_elf_function *syms; /* by section, value, table order */
	size_t nr_syms;
};

/* From .symtab, or .dynsym when that is empty (addr2line's slurp_symtab). */
int ps_elf_functions_load(const struct ps_elf *elf, struct ps_elf_functions *out);
void ps_elf_functions_release(struct ps_elf_functions *functions);
const struct ps_elf_function *ps_elf_functions_find(const struct ps_elf_functions *functions,
                                                    size_t shndx, uint64_t addr);

/* ------------------------------------------------------------------ */
/* addr2line.c: what `addr2line -f -i -e FILE` answers for an address */

struct ps_addr2line;

struct ps_addr2line_record {
	const char *function; /* NULL: addr2line prints "??" */
	const char *file; /* full path; NULL: "??" */
	unsigned line; /* 0: "?" */
	/* the unit's DW_AT_comp_dir, which addr2line puts before a relative
	 * file (--full-source-path); NULL: none, or not from DWARF */
	const char *comp_dir;
};

/* want_files: the records name their files (for srcline); else .file is NULL. */
int ps_addr2line_open(struct ps_elf *file, bool want_files, struct ps_addr2line **out);
void ps_addr2line_close(struct ps_addr2line *a2l);
/* The number of records addr2line prints for addr (innermost function
 * first, then the callers of inlined code); 0 when it prints "??" /
 * "??:0"; -ENOMEM when a unit could not be read (it is read again by the
 * next query that needs it, so answers stay those of addr2line). */
int ps_addr2line_query(struct ps_addr2line *a2l, uint64_t addr, struct ps_addr2line_record *out,
                       size_t max);
/* Tests: the nth time from now that a query needs more memory, it gets
 * none (0: always gets it). */
void ps_addr2line_refuse_memory(struct ps_addr2line *a2l, unsigned nth);

/* ------------------------------------------------------------------ */
/* lines.c: a DWARF line table as bfd 2.40 reads it */

/* 16 bytes: a busy machine's capture keeps hundreds of thousands */
#define PS_LINE_FILE_MAX ((1u << 30) - 1)
struct ps_line_row {
	uint64_t address;
	uint32_t line;
	uint32_t file : 30; /* entry of libdw's file list (see lines.c) */
	uint32_t file_valid : 1; /* 0: bfd says "<unknown>" */
	uint32_t end_sequence : 1;
};

struct ps_line_sequence {
	uint64_t low; /* after bfd's trimming of overlaps */
	uint64_t high; /* the address of the end_sequence row */
	size_t first, count; /* rows[first .. first + count), the last ends it */
};

struct ps_line_table {
	struct ps_line_row *rows;
	size_t nr_rows, cap_rows;
	struct ps_line_sequence *seqs;
	size_t nr_seqs, cap_seqs;
};

/* Decodes the line program at offset of .debug_line (cursor over the whole
 * section). address_size is the unit's. Returns 0 or a negative errno
 * (-EINVAL: damaged, bfd gives up on the unit). */
/* A DWARF unsigned LEB128 of any length, as bfd reads it (bits past 64
 * dropped); false when the cursor ends first. */
bool ps_dwarf_read_uleb(struct ps_cursor *c, uint64_t *out);
int ps_line_table_read(struct ps_cursor debug_line, uint64_t offset, uint8_t address_size,
                       struct ps_line_table *out);
void ps_line_table_release(struct ps_line_table *table);
/* Whether a sequence of the table spans addr (bfd then files the unit
 * under that range). */
bool ps_line_table_covers(const struct ps_line_table *table, uint64_t addr);
/* The row holding addr, or NULL. */
const struct ps_line_row *ps_line_table_find(const struct ps_line_table *table, uint64_t addr);

/* ------------------------------------------------------------------ */
/* inline.c: perf's view of the addr2line answers */

#define PS_INLINE_MAX 1024 /* perf's MAX_INLINE_NEST */

/* Turns the records for an address into frames the way perf's
 * inline_list__append_record/new_inline_sym do: base_name is the ELF
 * symbol perf chose (NULL: none, no chain then). Strings are allocated in
 * arena. Returns the number of frames (0: perf keeps the plain frame). */
size_t ps_inline_frames(const struct ps_addr2line_record *records, size_t nr, const char *base_name,
                        uint64_t offset, bool want_srcline, bool full_path, bool demangle,
                        struct ps_arena *arena, struct ps_frame_name *out, size_t max);
/* The source file and line perf takes from addr2line's answer for -F
 * srccode (get_srcline_split()): the file as addr2line prints it (the
 * unit's directory before a relative name) into path, cut at its first
 * ':' as perf cuts it; false for addr2line's "??:0". */
bool ps_inline_source(const struct ps_addr2line_record *record, char *path, size_t size,
                      unsigned *line);
/* perf's srcline for a frame without a chain: "file:line" (the file's
 * base name unless full_path), or NULL when that is "??:0" (perf prints
 * nothing); records == 0 means not found. */
const char *ps_inline_plain_srcline(const struct ps_addr2line_record *records, size_t nr,
                                    bool full_path, struct ps_arena *arena);

/* ------------------------------------------------------------------ */
/* names.c: recorded symbol answers, carried by archives in place of a
 * separate debug file */

struct ps_names;

struct ps_names_entry {
	uint64_t addr; /* DSO-relative, as ps_dso_resolve() takes it */
	const char *sym; /* the ELF symbol perf chose; NULL: none */
	uint64_t sym_start;
	struct ps_addr2line_record *records; /* addr2line's answer */
	uint32_t nr_records;
};

struct ps_names *ps_names_new(void);
void ps_names_free(struct ps_names *names);
size_t ps_names_count(const struct ps_names *names);
/* The i-th entry in the order added (or read). */
const struct ps_names_entry *ps_names_entry_at(const struct ps_names *names, size_t i);
/* Record the answer for addr (strings copied). 0 or -ENOMEM. */
int ps_names_add(struct ps_names *names, uint64_t addr, const char *sym, uint64_t sym_start,
                 const struct ps_addr2line_record *records, size_t nr_records);
/* The table as text; an address recorded twice keeps its first answer.
 * 0 or -ENOMEM. */
int ps_names_format(const struct ps_names *names, const char *dso_name, struct ps_strbuf *out);
/* Whether file starts like a table of symbol answers. */
bool ps_names_detect(const char *file);
/* Read and check a table (path names it in messages, file is read). 0, or
 * -EINVAL/-ENOMEM/-errno with "PATH: offset N: what" in err. */
int ps_names_load(const char *path, const char *file, struct ps_names **out, char *err,
                  size_t errsz);
/* The entry of a table read by ps_names_load() for addr, or NULL. */
const struct ps_names_entry *ps_names_find(const struct ps_names *names, uint64_t addr);

/* ------------------------------------------------------------------ */
/* kallsyms.c: kernel symbols */

struct ps_kernel_symbols;

struct ps_kernel_load_result {
	size_t symbols;
	size_t bad_lines; /* damaged kallsyms lines skipped */
	char err[PS_MSG_MAX];
};

/* The running kernel's files (tests name others; NULL fields: the
 * real ones). */
struct ps_kernel_live {
	const char *kallsyms; /* /proc/kallsyms */
	const char *notes; /* /sys/kernel/notes: its build-id */
	const char *modules; /* /proc/modules */
	const char *sys_module; /* /sys/module: each module's sections */
};

/* Where kernel symbols may come from. */
struct ps_kernel_source {
	const char *kallsyms, *vmlinux; /* the user's choice, or NULL */
	const uint8_t *build_id; /* the capture's kernel, or NULL */
	size_t build_id_size;
	const char *buildid_dir, *symfs;
	const struct ps_file_hooks *files; /* may be NULL */
	/* all of /proc/kallsyms, never the kernel's part alone from perf
	 * record's copy (modules' symbols are asked for) */
	bool whole;
	const struct ps_kernel_live *live; /* NULL: the running kernel's files */
};

int ps_kernel_symbols_load(const struct ps_kernel_source *source, struct ps_kernel_symbols **out,
                           struct ps_kernel_load_result *result);
/* Whether loading from a and from b reads the same file the same way. */
bool ps_kernel_symbols_same_load(const struct ps_kernel_source *a,
                                 const struct ps_kernel_source *b);
int ps_kernel_symbols_from_kallsyms(const char *path, struct ps_kernel_symbols **out,
                                    struct ps_kernel_load_result *result);
int ps_kernel_symbols_from_vmlinux(const char *path, const uint8_t *build_id, size_t build_id_size,
                                   struct ps_kernel_symbols **out,
                                   struct ps_kernel_load_result *result);
/* Same, with path looked up through files (NULL: the file system) and
 * reported to its observer when read. */
int ps_kernel_symbols_read_kallsyms(const char *path, const struct ps_file_hooks *files,
                                    struct ps_kernel_symbols **out,
                                    struct ps_kernel_load_result *result);
/* kallsyms_lines.c: kallsyms text line by line, as fgets() with a
 * PS_KALLSYMS_LINE_MAX buffer gives it to perf. */
#define PS_KALLSYMS_LINE_MAX 4096
struct ps_kallsyms_reader {
	int fd;
	char *buf;
	size_t head, tail;
	uint64_t base; /* the file offset of buf[0] */
	bool eof;
};
enum ps_kallsyms_line { PS_KALLSYMS_END, PS_KALLSYMS_LINE, PS_KALLSYMS_OVER_LONG };
/* Takes fd (closed by ps_kallsyms_reader_close()) unless it fails:
 * 0 or -ENOMEM. */
int ps_kallsyms_reader_open(struct ps_kallsyms_reader *reader, int fd);
void ps_kallsyms_reader_close(struct ps_kallsyms_reader *reader);
/* The file offset of the line the next call returns. */
uint64_t ps_kallsyms_reader_offset(const struct ps_kallsyms_reader *reader);
/* The next line as fgets(copy, PS_KALLSYMS_LINE_MAX, f), strlen() and the
 * trimming of its newline leave it: *line, *len. A whole line without
 * NULs is left where it is in the reader's buffer (valid until the next
 * call); any other is cut as fgets() cuts it, in copy. A read error ends
 * the input, as it ends fgets(). */
enum ps_kallsyms_line ps_kallsyms_next_line(struct ps_kallsyms_reader *reader,
                                            char copy[PS_KALLSYMS_LINE_MAX], const char **line,
                                            size_t *len);

/* kallsyms.c: one line of kallsyms, len bytes without NULs or its
 * newline: "ADDR TYPE NAME[\t[module]]"; false when damaged. */
#define PS_KSYM_NAME_LEN 512 /* perf's symbol_name[KSYM_NAME_LEN + 1] */
#define PS_ENTRY_TRAMPOLINE_NAME "__entry_SYSCALL_64_trampoline"
bool ps_kallsyms_parse_line(const char *line, size_t len, uint64_t *addr, char *type,
                            const char **name, size_t *name_len);
/* symbol_type__filter: text, weak, data, bss */
bool ps_kallsyms_keep_type(char type);
/* a kallsyms type letter as ELF binding and type */
uint8_t ps_kallsyms_binding(char type);
uint8_t ps_kallsyms_type(char type);

/* kallsyms_index.c: the kernel's table of a kallsyms file that has only
 * the kernel's own lines (up to the first module's), kept as the lines'
 * addresses and file offsets and made into symbols only where asked; its
 * answers are those of the table kallsyms.c builds from the same lines. */
struct ps_kallsyms_index;
/* 0, or -errno (-EILSEQ: lines it cannot answer for as the table would:
 * damaged, out of order, cut by a NUL; kallsyms.c builds the table). */
int ps_kallsyms_index_build(const char *path, struct ps_kallsyms_index **out);
void ps_kallsyms_index_free(struct ps_kallsyms_index *index);
const struct ps_sym *ps_kallsyms_index_find(struct ps_kallsyms_index *index, uint64_t addr);
/* The start of the first symbol named name that the table keeps. */
bool ps_kallsyms_index_start(struct ps_kallsyms_index *index, const char *name, uint64_t *start);
bool ps_kallsyms_index_extent(const struct ps_kallsyms_index *index, uint64_t *start,
                              uint64_t *end);

/* The kernel's own lines of a kallsyms file, up to the first module's:
 * a table without modules (ps_kernel_symbols_core_only()), whose kernel
 * part is what the whole file gives when every module, BPF and ftrace
 * address lies above the kernel's (x86-64's layout). A damaged line
 * fails it (-EILSEQ). */
int ps_kernel_symbols_read_core(const char *path, struct ps_kernel_symbols **out,
                                struct ps_kernel_load_result *result);
bool ps_kernel_symbols_core_only(const struct ps_kernel_symbols *ks);
/* kernel_source.c: the running kernel's part of its kallsyms read from
 * copy (perf record's copy of it in the build-id cache) when the copy is
 * of this boot (its first lines, through kernel addresses, are the live
 * file's) and no module's lines can fall among the kernel's. -errno when
 * it cannot stand in for the live file (-ENOTSUP off x86-64, -ESTALE
 * another boot's or another layout's, -EXDEV a module in the kernel's
 * range). */
int ps_kernel_symbols_from_copy(const struct ps_kernel_live *live, const char *copy,
                                struct ps_kernel_symbols **out,
                                struct ps_kernel_load_result *result);
int ps_kernel_symbols_read_vmlinux(const char *path, const struct ps_file_hooks *files,
                                   const uint8_t *build_id, size_t build_id_size,
                                   struct ps_kernel_symbols **out,
                                   struct ps_kernel_load_result *result);
void ps_kernel_symbols_free(struct ps_kernel_symbols *ks);
/* module NULL: the kernel proper; else a module name like "[xfs]".
 * *symbol_addr gets addr in the symbols' space (the offset is taken
 * from it). One thread at a time: on perf record's copy (core only,
 * indexed) it reads the file and keeps the symbols it makes. */
const struct ps_sym *ps_kernel_symbols_find(const struct ps_kernel_symbols *ks, const char *module,
                                            uint64_t addr, uint64_t *symbol_addr);
/* A module's symbols from kallsyms (a module name like "[xfs]"), or NULL:
 * none, or the kernel's symbols came from a vmlinux. */
const struct ps_symtab *ps_kernel_symbols_module(const struct ps_kernel_symbols *ks,
                                                 const char *module);
int ps_kernel_symbols_reloc(struct ps_kernel_symbols *ks, const char *ref_name, uint64_t ref_addr);
/* kallsyms: from the first symbol of the kernel proper to the end of its
 * last; a vmlinux: its .text; in the capture's addresses (relocated). */
bool ps_kernel_symbols_extent(const struct ps_kernel_symbols *ks, uint64_t *start, uint64_t *end);
/* A vmlinux's section other than .text that holds addr and has symbols
 * (perf's map of it, named "[kernel.kallsyms]" and the section's name):
 * its name, range (relocated) and file offset. */
bool ps_kernel_symbols_section(const struct ps_kernel_symbols *ks, uint64_t addr, const char **name,
                               uint64_t *start, uint64_t *end, uint64_t *offset);
/* Whether the symbols come from a vmlinux, and its .text's file offset. */
bool ps_kernel_symbols_vmlinux(const struct ps_kernel_symbols *ks, uint64_t *text_offset);

/* ------------------------------------------------------------------ */
/* build_id.c */

/* Lowercase hex of a build-id into buf (2 * size + 1 bytes). */
void ps_build_id_hex(const uint8_t *id, size_t size, char *buf);
/* perf's dso__build_id_equal: recorded vs file. */
bool ps_build_id_equal(const uint8_t *recorded, size_t recorded_size, const uint8_t *file,
                       size_t file_size);

#endif /* PS_SYMBOLS_PRIV_H */
