/* Private to src/python (its unit tests and fuzz/fuzz_jit.c reach in here
 * too): what the module's parts share. Other modules use python/python.h.
 *  - frame-name sources written while the program ran: perf maps
 *    (perf-PID.map) and jitdumps (jit-PID.dump), with the unwind rules of
 *    the trampolines they describe;
 *  - CPython detection and version;
 *  - the merger of native and Python frames;
 *  - the Python side of a pipeline (struct ps_python), which puts them to
 *    work on the capture's processes.
 * Each section below is owned by one part of the module.
 */
#ifndef PS_PYTHON_PYTHON_PRIV_H
#define PS_PYTHON_PYTHON_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/file_hooks.h"
#include "machine/machine.h"
#include "pipeline/pipeline.h"
#include "pystitch/pystitch.h"
#include "python/python.h"
#include "symbols/symbols.h"
#include "unwind/unwind.h" /* struct ps_unwind_rule */

/* ==== section: frame-name sources (perfmap.c, jitdump.c) ============ */

/* Names of JIT code ranges -- CPython's trampolines, "py::qualname:filename"
 * -- from the files a process wrote while it ran:
 *  - perf maps, perf-PID.map: text lines "START SIZE NAME" (hex without 0x,
 *    the name is the rest of the line), -X perf, 3.12+;
 *  - jitdumps, jit-PID.dump: perf's binary jitdump format, code loads and the
 *    .eh_frame of each trampoline, -X perf_jit, 3.13+.
 * Both are untrusted input: a damaged line or record is skipped and counted,
 * never trusted; files are streamed and memory is bounded by caps.
 *
 * Overlaps in one file: entries are sorted by start. Of entries with the same
 * start the one written last wins (CPython only appends, and reuses an
 * address only after freeing the arena that held it). An entry ends at the
 * latest where the next-starting entry begins. Between the two files of a
 * process the jitdump wins. Timestamps are not used: an answer holds for the
 * whole run.
 *
 * Not thread-safe (ps_jit_names loads lazily); strings and bytes handed out
 * stay valid until the table or ps_jit_names is freed. */

enum ps_jit_source {
	PS_JIT_SOURCE_MAP = 1, /* perf-PID.map */
	PS_JIT_SOURCE_DUMP = 2, /* jit-PID.dump */
};

/* One named code range. */
struct ps_jit_symbol {
	const char *name;
	uint64_t start, size; /* [start, start + size), after the overlap rule */
	enum ps_jit_source source;
	/* Jitdump only: the JIT_CODE_LOAD's code_index, and the unwinding
	 * info of the JIT_CODE_UNWINDING_INFO record that preceded the load
	 * (NULL/0 when there was none), bytes in the file's byte order:
	 * .eh_frame (CIE + FDEs) and .eh_frame_hdr. eh_frame_addr is where
	 * `perf inject --jit` places that .eh_frame (start + size rounded up
	 * to 8), the base its pc-relative encodings assume. */
	uint64_t code_index;
	const uint8_t *eh_frame;
	size_t eh_frame_size;
	const uint8_t *eh_frame_hdr;
	size_t eh_frame_hdr_size;
	uint64_t eh_frame_addr;
};

/* Caps per file; 0 means the default. Lines or records past a cap are
 * dropped and counted in over_limit (unwind_dropped for unwinding info). */
struct ps_jit_limits {
	size_t max_entries; /* default 16 Mi */
	size_t max_name_bytes; /* sum of name lengths + 1; default 256 MiB */
	size_t max_unwind_bytes; /* jitdump unwinding data kept; default 64 MiB */
};

/* What reading one file skipped, for one-line notes from the CLI
 * ("perf-1234.map: 3 damaged lines skipped"). */
struct ps_jit_file_stats {
	size_t entries; /* ranges kept (after the overlap rule) */
	size_t damaged; /* lines or records skipped as damaged */
	size_t over_limit; /* valid lines or code loads dropped by the caps */
	size_t unknown; /* jitdump records of unknown type, skipped */
	size_t unwind_dropped; /* unwinding infos too large or over the cap */
	/* jitdump bytes from a record that could not be skipped to where
	 * whole records follow again, or to the end */
	uint64_t bytes_dropped;
	/* the file ends inside a record: its process did not finish
	 * writing it (a jitdump whose buffer a process that ended with
	 * _exit() never wrote out) */
	bool ends_cut;
};

/* A sorted table of named ranges read from one file. */
struct ps_jit_table;

/* Read one file. Returns 0 when the file was read, damaged parts skipped
 * (see ps_jit_table_stats()); a negative errno when it could not be read at
 * all: -ENOENT (no such file), -EINVAL (not a regular file, not a jitdump,
 * damaged jitdump header), -ENOTSUP (jitdump version), -ENOMEM, or the
 * errno of open/read. On failure *out still holds an empty table whose
 * ps_jit_table_errmsg() says what went wrong (NULL only on ENOMEM). */
int ps_perf_map_read(const char *path, const struct ps_jit_limits *limits,
                     struct ps_jit_table **out);
int ps_jitdump_read(const char *path, const struct ps_jit_limits *limits,
                    struct ps_jit_table **out);
/* Same, reading the contents from file (an archive's copy of path). */
int ps_perf_map_read_file(const char *path, const char *file, const struct ps_jit_limits *limits,
                          struct ps_jit_table **out);
int ps_jitdump_read_file(const char *path, const char *file, const struct ps_jit_limits *limits,
                         struct ps_jit_table **out);
void ps_jit_table_free(struct ps_jit_table *table);

bool ps_jit_table_lookup(const struct ps_jit_table *table, uint64_t addr,
                         struct ps_jit_symbol *out);
/* Entries in address order, for listing and tests. */
size_t ps_jit_table_count(const struct ps_jit_table *table);
bool ps_jit_table_at(const struct ps_jit_table *table, size_t index, struct ps_jit_symbol *out);
const char *ps_jit_table_path(const struct ps_jit_table *table);
const struct ps_jit_file_stats *ps_jit_table_stats(const struct ps_jit_table *table);
/* Why reading failed, else the first damage found ("PATH: line 17: bad
 * size", "PATH: offset 0x1a0: JIT_CODE_LOAD name without NUL"), else NULL. */
const char *ps_jit_table_errmsg(const struct ps_jit_table *table);

/* Building a table: for the two readers only (perfmap.c, jitdump.c). */
#define PS_JIT_NO_UNWIND UINT32_MAX
struct ps_jit_table *ps_jit_table_new(enum ps_jit_source source, const char *path,
                                      const struct ps_jit_limits *limits);
/* Keep eh_frame_size bytes of .eh_frame followed by hdr_size bytes of
 * .eh_frame_hdr; returns the id for ps_jit_table_add(), -ENOSPC over the
 * cap or -ENOMEM. */
int64_t ps_jit_table_add_unwind(struct ps_jit_table *table, const uint8_t *data,
                                size_t eh_frame_size, size_t hdr_size);
/* order: position in the file (line number, record number); of entries
 * with the same start the greatest order wins. 0, -ENOSPC or -ENOMEM. */
int ps_jit_table_add(struct ps_jit_table *table, uint64_t start, uint64_t size, const char *name,
                     size_t name_len, uint32_t unwind, uint64_t code_index, uint64_t order);
/* A JIT_CODE_MOVE: a range named like the entry with this code_index added
 * last (before any call here). 0, -ENOENT (no such entry), -ENOSPC, -ENOMEM. */
int ps_jit_table_add_moved(struct ps_jit_table *table, uint64_t code_index, uint64_t start,
                           uint64_t size, uint64_t order);
/* Sort and apply the overlap rule; call once, after the last add. */
void ps_jit_table_finish(struct ps_jit_table *table);
struct ps_jit_file_stats *ps_jit_table_counters(struct ps_jit_table *table);
/* Keep msg as the table's message unless one is already kept. */
void ps_jit_table_note(struct ps_jit_table *table, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* The file cannot be used: drop every entry, set the message (replacing
 * any) and return err. */
int ps_jit_table_fail(struct ps_jit_table *table, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The candidate files of every process of a capture, each read once and
 * shared (jitnames.c): perf-*.map and jit-*.dump of any name in the
 * --perf-map-dir directories, and the files found by a process's name. */
struct ps_jit_pool;

/* dirs: the --perf-map-dir directories, listed on first use (files of any
 * name there may belong to any process: containers name theirs by their
 * namespace pid). files may be NULL; it and log must outlive the pool.
 * 0, -ENOMEM. */
int ps_jit_pool_new(const char *const *dirs, size_t nr_dirs, const struct ps_file_hooks *files,
                    const struct ps_jit_limits *limits, ps_log_fn log, void *log_ctx,
                    struct ps_jit_pool **out);
void ps_jit_pool_free(struct ps_jit_pool *pool);
/* At the end of the capture: say once of each listed file that no
 * process took it. */
void ps_jit_pool_report_unused(struct ps_jit_pool *pool);

/* The frame-name sources of one process, found and loaded on first use. */
struct ps_jit_names;

struct ps_jit_names_opts {
	size_t sz; /* sizeof(struct ps_jit_names_opts) */
	const char *perf_map_dir; /* --perf-map-dir DIR: searched first; may be NULL */
	/* more --perf-map-dir directories, searched after perf_map_dir */
	const char *const *perf_map_dirs;
	size_t nr_perf_map_dirs;
	const char *perf_data_path; /* the capture; its directory is searched
	                             * second (NULL or "-": not searched) */
	/* Where files are read from and who is told (may be NULL); must
	 * outlive the names. */
	const struct ps_file_hooks *files;
	struct ps_jit_limits limits;
	/* Shared candidates (NULL: the names keep a pool of their own, of
	 * perf_map_dir and perf_map_dirs); must outlive the names. */
	struct ps_jit_pool *pool;
	/* Where the choice of a file is said (NULL: not said). */
	ps_log_fn log;
	void *log_ctx;
};

/* The candidates of a pid, in this order of precedence: while the pid runs
 * in another pid or mount namespace, /proc/PID/root/tmp/perf-NSPID.map
 * (the namespace pid from /proc/PID/status NStgid, as perf looks); then
 * perf-PID.map and jit-PID.dump in perf_map_dir(s), the capture's
 * directory and /tmp; then every perf-*.map and jit-*.dump in the
 * --perf-map-dir directories. A file is taken for the pid only when its
 * entries account for the pid's JIT addresses looked up: after
 * PS_JIT_MATCH_EVIDENCE lookups, the candidate covering at least 9 in 10
 * of them (of several, the one covering most, then precedence; two with
 * different contents are said); until then each lookup is answered by
 * the covering candidate with most hits so far. No file is touched until
 * the first load or lookup. 0, -EINVAL (pid < 0, opts) or -ENOMEM. */
#define PS_JIT_MATCH_EVIDENCE 32
int ps_jit_names_new(const struct ps_jit_names_opts *opts, int32_t pid, struct ps_jit_names **out);
void ps_jit_names_free(struct ps_jit_names *names);
/* Before the first load: root ("/proc/PID/root") is that of a process
 * running now in the pid's recorded mount namespace; the perf maps and
 * jitdumps in its /tmp are candidates too (by content), after those of
 * the pid's name. 0 or -ENOMEM. */
int ps_jit_names_set_namespace_root(struct ps_jit_names *names, const char *root);
/* Load now (lookups do it on first use; later calls return the first
 * result). Returns how many of the two kinds of file were found (1 or 2;
 * one may have failed, see ps_jit_names_errmsg()), -ENOENT when no
 * candidate exists (see ps_jit_names_where()), or the error of a file
 * that exists but could not be read. */
int ps_jit_names_load(struct ps_jit_names *names);
/* The jitdump's range containing addr, else the perf map's; each lookup
 * is evidence for the choice of the files. */
bool ps_jit_names_lookup(struct ps_jit_names *names, uint64_t addr, struct ps_jit_symbol *out);
/* The same; evidence false: addr is not the pid's own (a forked child's
 * address looked up in its parent's files) and does not count. */
bool ps_jit_names_lookup_as(struct ps_jit_names *names, uint64_t addr, bool evidence,
                            struct ps_jit_symbol *out);
/* Whether the files are chosen: from then on a lookup's answer depends
 * on the address alone. */
bool ps_jit_names_decided(const struct ps_jit_names *names);
/* After a load that found no candidate: "no perf-1234.map or
 * jit-1234.dump in /data, /tmp"; NULL when a file was found or before
 * loading. */
const char *ps_jit_names_where(const struct ps_jit_names *names);
/* How many readable files listed from --perf-map-dir are candidates (after
 * loading): when no file of the pid's name exists, the choice says what
 * was found, not the load. */
size_t ps_jit_names_nr_listed(const struct ps_jit_names *names);
/* The first failure to read a file that exists, else NULL. Damage inside
 * files is in the tables' stats and messages. */
const char *ps_jit_names_errmsg(const struct ps_jit_names *names);
/* The table of that source taken (or, before the choice, the best so
 * far; NULL: none, refused, not loaded). */
const struct ps_jit_table *ps_jit_names_table(const struct ps_jit_names *names,
                                              enum ps_jit_source source);
/* perf's file for the pid, by name only (native mode): the first
 * candidate of that source found by the pid's name. */
const struct ps_jit_table *ps_jit_names_by_name(const struct ps_jit_names *names,
                                                enum ps_jit_source source);
/* Make the choice now with the evidence there is (the end of the
 * capture). */
void ps_jit_names_decide(struct ps_jit_names *names);

/* ==== end section: frame-name sources =============================== */

/* ==== section: trampolines (trampoline.c) =========================== */

/* Unwind rules for CPython's trampolines, which have no CFI in memory:
 *  - -X perf (3.12+): every trampoline is a copy of the template between
 *    _Py_trampoline_func_start and _Py_trampoline_func_end in libpython
 *    (or a static interpreter). It is decoded with capstone and simulated,
 *    so the rule at each of its instructions is derived, not hard-coded
 *    per version (3.12/3.13: sub $8,%rsp; call *%rcx; add $8,%rsp; ret;
 *    3.14: push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret; either
 *    may start with endbr64). x86-64 only.
 *  - -X perf_jit (3.13+): the jitdump carries an .eh_frame (one CIE, one
 *    FDE) per trampoline; ps_eh_frame_rule() runs its CFA program.
 * A rule is the unwinder's struct ps_unwind_rule, ready for
 * ps_unwind_callbacks.frame_rule. Errors are negative errno values; when
 * errmsg is not NULL it receives a one-line reason. */

/* Larger templates are rejected: CPython's is 8 to 15 bytes. */
#define PS_TRAMPOLINE_MAX_SIZE 64

/* The rule that holds just before the instruction at offset runs. */
struct ps_trampoline_insn {
	uint32_t offset;
	struct ps_unwind_rule rule;
};

struct ps_trampoline {
	uint32_t size; /* template bytes: _Py_trampoline_func_end - _start */
	/* The return site: the instruction after the call, where the PC of
	 * a trampoline frame that is not the sample's leaf points (perf
	 * shows it as return_offset - 1), and the rule there. */
	uint32_t return_offset;
	struct ps_unwind_rule return_rule;
	uint32_t code_end; /* past the ret; any bytes after it are padding */
	uint32_t nr_insns; /* instructions up to and including the ret */
	struct ps_trampoline_insn insns[PS_TRAMPOLINE_MAX_SIZE];
};

/* Decode and simulate size bytes of template code (offset 0 is the
 * entry). -EINVAL, with the instruction and the reason in errmsg, for
 * anything that is not understood: bytes that are not x86-64 code, jumps, a
 * second call, no ret, rsp changed other than by push/pop/add/sub/mov from
 * rbp/leave, rbp overwritten without being saved, stores to the stack, an
 * unbalanced stack at the ret. */
int ps_trampoline_decode(const uint8_t *code, size_t size, struct ps_trampoline *out, char *errmsg,
                         size_t errmsg_size);
/* Copy the template's bytes out of an interpreter's ELF file, the symbols
 * module's handle (symbols from .symtab, else .dynsym; bytes from the
 * section or PT_LOAD segment holding them). -ENOENT: no such symbols;
 * -EOPNOTSUPP: not x86-64; -EINVAL: a template that is empty, larger than
 * cap or PS_TRAMPOLINE_MAX_SIZE, or not in the file. */
int ps_trampoline_read_template(const struct ps_elf *elf, uint8_t *buf, size_t cap, size_t *size,
                                char *errmsg, size_t errmsg_size);
/* Both: read the template of the interpreter in elf and decode it. */
int ps_trampoline_from_elf(const struct ps_elf *elf, struct ps_trampoline *out, char *errmsg,
                           size_t errmsg_size);
/* The rule at offset (pc - trampoline start): at the return site for a
 * caller frame, at any instruction for the sample's leaf. false for an
 * offset that is not an instruction boundary before the end of the ret. */
bool ps_trampoline_rule_at(const struct ps_trampoline *trampoline, uint64_t offset,
                           struct ps_unwind_rule *out);

/* The rule at pc of code that starts at code_start, from an .eh_frame blob
 * of CIEs and exactly one FDE (as CPython's perf_jit writes per
 * trampoline: the FDE's initial location is encoded relative to where
 * `perf inject` will put the section, so it is taken to be code_start and
 * only its length is used). Understands DW_CFA_advance_loc*, def_cfa*,
 * offset*, restore*, same_value, undefined (not for the return address),
 * remember/restore_state, GNU_args_size and nop, CIE augmentations z, R, P,
 * L and S; the CFA must be rsp or rbp plus an offset, the return address and
 * rbp saved at an offset from it, no other register saved. pc is where the
 * frame resumes (see ps_unwind_callbacks.frame_rule); the row holding pc is
 * used, which for a return address is the call's row unless the call ends
 * the code. -ERANGE: pc outside the FDE; -EINVAL: a malformed blob or
 * anything not understood. Reads stay within [eh_frame, eh_frame + size). */
int ps_eh_frame_rule(const uint8_t *eh_frame, size_t size, uint64_t code_start, uint64_t pc,
                     struct ps_unwind_rule *out, char *errmsg, size_t errmsg_size);

/* ==== end section: trampolines ====================================== */

/* ==== section: interpreter (detect.c, merge.c) ====================== */

/* -- detection (detect.c) --------------------------------------------
 * Whether an ELF file (a mapped DSO: libpython or a static interpreter)
 * is CPython, its version, and the -X perf trampoline template it holds.
 * Read once per file through the symbols module's handle (the DSO's, see
 * ps_dso_elf(); bounded; a damaged file is an error naming it) and kept in
 * a registry. Addresses are ELF virtual addresses (vaddr). */

/* How a symbol name relates to the eval loop. */
enum ps_py_eval_kind {
	PS_PY_EVAL_NONE = 0,
	PS_PY_EVAL_MAIN, /* _PyEval_EvalFrameDefault itself */
	PS_PY_EVAL_CLONE, /* .cold, .part.N, .localalias, .constprop.N, .isra.N */
};

enum ps_py_version_source {
	PS_PY_VERSION_UNKNOWN = 0,
	PS_PY_VERSION_SYMBOL, /* Py_Version (3.11+): PY_VERSION_HEX */
	PS_PY_VERSION_DEBUG_OFFSETS, /* _Py_DebugOffsets.version (3.13+) */
	PS_PY_VERSION_STRING, /* PY_VERSION, as Py_GetVersion uses it */
	PS_PY_VERSION_RODATA, /* a PY_VERSION-like string in .rodata */
};

struct ps_py_interp {
	const char *path;
	bool is_python; /* defines _PyEval_EvalFrameDefault */
	bool dynsym_only; /* found in .dynsym only (no .symtab, stripped) */
	int major, minor, micro; /* 0 when unknown */
	uint32_t version_hex; /* PY_VERSION_HEX, 0 when unknown */
	enum ps_py_version_source version_source;
	/* the -X perf trampoline template (3.12+), vaddr; 0 when absent.
	 * Also filled for a file that is not CPython (is_python false) but
	 * exports the template's symbols: the pystitch_perf module. */
	bool has_trampoline;
	uint64_t trampoline_start, trampoline_end;
};

struct ps_py_registry;

/* Returns 0 or -ENOMEM. */
int ps_py_registry_new(struct ps_py_registry **out);
void ps_py_registry_free(struct ps_py_registry *registry);
/* Examine an opened ELF file, or return the cached answer for the file it
 * was read from (ps_elf_file(), which becomes info->path).
 * 1: CPython (*out filled), 0: an ELF file that is not CPython (*out
 * filled, is_python false), negative errno: damaged (-EINVAL: a symbol
 * table not in the file; -ENOMEM); ps_py_registry_errmsg() says why, in
 * one line naming the file and the offset. Opening the file (missing,
 * not ELF, truncated headers) is ps_elf_open()'s part. *out stays valid
 * until ps_py_registry_free(). */
int ps_py_registry_detect(struct ps_py_registry *registry, const struct ps_elf *elf,
                          const struct ps_py_interp **out);
const char *ps_py_registry_errmsg(const struct ps_py_registry *registry);

/* By name: "_PyEval_EvalFrameDefault" is MAIN, the name with the clone
 * suffixes gcc and clang emit is CLONE, anything else NONE. */
enum ps_py_eval_kind ps_py_eval_name_kind(const char *name);

/* Parse a PY_VERSION string ("3.12.1", "3.13.0rc2", "3.11.2+") into
 * PY_VERSION_HEX; 0 when it does not follow CPython's convention. */
uint32_t ps_py_parse_version(const char *text, size_t len);

/* -- merger (merge.c) ---------------------------------------------------
 * Native frames in (the py:: frames of trampolines among them), one frame
 * list out. Pure data. */

struct ps_py_native_frame {
	const char *sym; /* symbol name, NULL when unresolved */
	const char *python_name; /* a -X perf trampoline: "py::qualname:file" */
	enum ps_py_eval_kind eval; /* named like the eval loop */
	bool in_interpreter; /* in libpython or the interpreter binary */
	bool internal; /* sym is named like call machinery: ps_py_is_internal_name() */
};

struct ps_py_merge_input {
	const struct ps_py_native_frame *native; /* leaf first: user frames */
	size_t nr_native;
	bool native_truncated; /* the unwind stopped at the end of the stack copy */
};

enum ps_py_out_kind {
	PS_PY_OUT_NATIVE = 0, /* native[index] */
	PS_PY_OUT_TRUNCATED, /* the "[truncated]" marker */
	/* the "[python: unnamed]" marker standing for an eval activation
	 * that no trampoline names (merged and only modes); index is the
	 * activation's leaf-most eval frame */
	PS_PY_OUT_UNNAMED,
};

struct ps_py_out_frame {
	enum ps_py_out_kind kind;
	size_t index;
	const char *name; /* sym, Python name, or a marker's name */
	bool is_python; /* a trampoline's py:: frame */
};

struct ps_py_merge_result {
	const struct ps_py_out_frame *frames; /* leaf first; valid until the next merge */
	size_t nr_frames;
	size_t nr_activations; /* eval activations in the native stack */
	size_t nr_matched; /* activations with their trampoline */
	bool trampolines; /* the stack has a py:: frame */
};

struct ps_py_merger;

int ps_py_merger_new(struct ps_py_merger **out);
void ps_py_merger_free(struct ps_py_merger *merger);
/* 0, -EINVAL (bad input) or -ENOMEM. */
int ps_py_merge(struct ps_py_merger *merger, const struct ps_py_merge_input *input,
                enum ps_python_mode mode, struct ps_py_merge_result *result);

/* CPython-internal by name: the call machinery between Python frames
 * (_Py*, Py*, *Vectorcall*, py_trampoline_evaluator, cfunction_*, ...). */
bool ps_py_is_internal_name(const char *name);

/* ==== end section: interpreter ====================================== */

/* ==== section: line numbers (linetable.c, codefile.c, lines.c) ===== */

/* The line tables of CPython's code objects (linetable.c). */
enum ps_py_line_format {
	PS_PY_LINES_LNOTAB = 1, /* co_lnotab, 3.8 and 3.9 */
	PS_PY_LINES_310 = 2, /* the 3.10 co_linetable */
	PS_PY_LINES_311 = 3, /* the 3.11+ location table */
};

/* The line of the code unit at offset (bytes from the first code unit) of
 * a code object whose line table is table (size bytes) and whose first
 * line is first_line, as PyCode_Addr2Line answers: 1 and *line; 0 when
 * the table gives no line there (a 3.10 range marked so, a 3.11+ entry
 * without location, an offset past the table); -EINVAL for a table cut
 * inside an entry or whose line leaves an int. */
int ps_py_line_at(enum ps_py_line_format format, const uint8_t *table, size_t size,
                  int32_t first_line, uint64_t offset, int32_t *line);

/* The side file pystitch_perf writes next to its perf map (codefile.c):
 * perf-PID.pylines, format in python/pystitch_perf.h. */
struct ps_py_code {
	uint64_t object; /* the code object's address */
	uint64_t bytecode; /* its first code unit */
	uint32_t bytecode_size; /* bytes */
	int32_t first_line;
	enum ps_py_line_format format;
	const uint8_t *table;
	uint32_t table_size;
	const char *name, *file; /* as the perf map names it: not NUL-terminated */
	uint32_t name_size, file_size;
	uint64_t trampoline; /* the trampoline that runs it; 0: not known */
	/* CLOCK_MONOTONIC ns: when the module saw it (made, or first run),
	 * and freed (UINT64_MAX: never) */
	uint64_t created, freed;
	/* a copy of another code object's bytecode that a thread runs (3.14+
	 * free-threaded), bytecode being the copy's: the rest is the code
	 * object's, its life too */
	bool copy;
	/* the next copy of the same code object's bytecode (an index of
	 * ps_py_codes_at()), UINT32_MAX: none; a copy's code object */
	uint32_t next_copy, original;
};

struct ps_py_codes_stats {
	size_t damaged; /* records found damaged (the reading ends at the first) */
	size_t unknown; /* records of a type this reader does not know, skipped */
};

struct ps_py_codes;

/* Read a side file (path as looked up, file the one to open: an
 * archive's copy). 0, or a negative errno: the errno of open, -EINVAL
 * (not a side file), -ENOTSUP (another version), -EFBIG (over max_bytes,
 * 0: 1 GiB), -ENOMEM. *out is set either way (NULL only without memory)
 * and says why (ps_py_codes_errmsg()); a damaged record ends the reading
 * without failing it. */
int ps_py_codes_read(const char *path, const char *file, uint64_t max_bytes,
                     struct ps_py_codes **out);
/* The same from bytes (copied): the fuzz target's way in. */
int ps_py_codes_parse(const char *path, const uint8_t *data, size_t size, struct ps_py_codes **out);
void ps_py_codes_free(struct ps_py_codes *codes);
/* Why reading failed, else the first damage, else NULL. */
const char *ps_py_codes_errmsg(const struct ps_py_codes *codes);
const char *ps_py_codes_path(const struct ps_py_codes *codes);
uint32_t ps_py_codes_python(const struct ps_py_codes *codes); /* the writer's PY_VERSION_HEX */
bool ps_py_codes_own_trampolines(const struct ps_py_codes *codes);
/* The entries, bytecode copies included (ps_py_code.copy), for
 * ps_py_codes_at(); and the code objects alone. */
size_t ps_py_codes_count(const struct ps_py_codes *codes);
const struct ps_py_code *ps_py_codes_at(const struct ps_py_codes *codes, size_t index);
size_t ps_py_codes_objects(const struct ps_py_codes *codes);
const struct ps_py_codes_stats *ps_py_codes_stats(const struct ps_py_codes *codes);
/* Whether code was alive at time, give or take margin (ns). */
bool ps_py_code_alive(const struct ps_py_code *code, uint64_t time, uint64_t margin);
/* The code objects whose bytecode holds address at time (give or take
 * margin: more than one when its memory was reused within the margin),
 * into out (at most max): how many, max + 1 when there are more. */
size_t ps_py_codes_find(const struct ps_py_codes *codes, uint64_t address, uint64_t time,
                        uint64_t margin, const struct ps_py_code **out, size_t max);
/* The code object run by the trampoline at time; NULL: none, or several. */
const struct ps_py_code *ps_py_codes_by_trampoline(const struct ps_py_codes *codes,
                                                   uint64_t trampoline, uint64_t time,
                                                   uint64_t margin);
/* The code objects named so alive at time, into out (at most max): how
 * many, max + 1 when there are more. */
size_t ps_py_codes_by_name(const struct ps_py_codes *codes, const char *name, size_t name_size,
                           const char *file, size_t file_size, uint64_t time, uint64_t margin,
                           const struct ps_py_code **out, size_t max);

/* ==== end section: line numbers ===================================== */

/* ==== section: the Python side of a pipeline (python.c, sources.c,
 * process.c, stack.c, report.c) ====================================== */

/* A recorded call chain (perf record -g: the kernel's frame-pointer walk)
 * that reaches a caller in no mapping read that return address from a
 * frame built without frame pointers (a library's code, as libsqlite3
 * between a Python callback and the query that called it): from there on
 * it holds no stack. The number of user frames (leaf first) before such
 * a caller, with *cut set, so that the merged stack is marked cut as at
 * the stack-copy limit and a broken chain never passes for a whole one;
 * else nr_user. The first frame (the sampled IP) may be in no mapping:
 * JIT code whose map perf did not see. (stack.c) */
size_t ps_python_chain_before_break(const struct ps_frame *user, size_t nr_user, bool *cut);
/* Whether a recorded call chain (leaf first, user frames) that holds no
 * garbage still ends where a thread starts: at the function a process or
 * thread is entered by (_start, __libc_start_call_main, start_thread,
 * clone3, ...). A frame-pointer walk that stops elsewhere stopped in code
 * built without frame pointers (libc waiting on a futex) without reading
 * garbage: it looks whole and is not. (stack.c) */
bool ps_python_chain_reaches_root(const struct ps_frame *user, size_t nr_user);

#define PS_PYTHON_NAMES_BUCKETS 256
#define PS_PYTHON_MAX_TRAMPOLINES 16 /* interpreter files with a template */

/* The name sources of one pid (sources.c), loaded on first use and shared
 * by the processes whose JIT objects name that pid (a forked child keeps
 * its parent's trampolines). */
struct python_pid_names {
	int32_t pid;
	struct ps_jit_names *names;
	bool loaded; /* ps_jit_names_load() ran and its outcome was reported */
	struct python_pid_names *next;
};

/* A decoded trampoline template, per interpreter file (process.c). */
struct python_trampoline {
	char *path;
	int rc; /* 0: trampoline is usable */
	struct ps_trampoline trampoline;
};

/* What the report needs of a process that has been freed (report.c): the
 * files it mapped executable, in address order (each once where its maps
 * follow each other), whether it had JIT code, and its leader's name.
 * Many processes share one (every run of one program), so each is kept
 * once and a freed process is its pid and the number of its shape. */
struct python_shape {
	uint64_t hash;
	char *comm; /* NULL: ":PID" */
	bool jit_code;
	size_t nr_objects;
	struct ps_mapped_object **objects;
};
struct python_gone {
	int32_t pid;
	uint32_t shape;
	/* what the report says of its lines (describe_lines()), when it had
	 * Python frames or a side file; NULL and zeros otherwise */
	struct python_gone_lines *lines;
};

struct python_gone_lines {
	char *file, *error;
	size_t codes;
	uint64_t python_frames, dwarf, scan;
};

#define PS_PY_NAME_CLASSES_BITS 10
struct python_name_class {
	const char *name; /* NULL: an empty slot */
	enum ps_py_eval_kind eval;
	bool internal;
};

struct ps_python {
	struct ps_pipeline *pipeline;
	enum ps_python_mode mode;
	bool srcline, full_source_path;
	/* the "FILE:LINE" texts of Python frames, made once each (stack.c) */
	struct ps_arena srclines;
	struct python_srcline *srcline_slots;
	size_t srcline_cap, srcline_used;
	ps_log_fn log;
	void *log_ctx;
	struct ps_jit_names_opts names_opts;
	struct ps_jit_pool *pool; /* the candidates every pid shares */
	bool finished;
	char *data_path;
	struct python_pid_names *names[PS_PYTHON_NAMES_BUCKETS];
	struct ps_py_registry *registry;
	struct python_trampoline trampolines[PS_PYTHON_MAX_TRAMPOLINES];
	size_t nr_trampolines;
	struct ps_py_merger *merger;
	/* the processes freed so far, for the report (report.c) */
	struct python_shape *shapes;
	size_t nr_shapes, cap_shapes;
	uint32_t *shape_slots;
	size_t nr_shape_slots;
	struct python_gone *gone;
	size_t nr_gone, cap_gone;
	bool gone_nomem; /* one could not be kept: the report fails */
	/* per-stack buffers, grown to the largest stack seen (stack.c) */
	struct ps_py_native_frame *native;
	size_t cap_native;
	struct ps_frame *merged;
	size_t cap_merged;
	/* what the merge asks of a frame's name, kept by the name's address
	 * (1 << PS_PY_NAME_CLASSES_BITS slots, made on first use; stack.c) */
	struct python_name_class *name_classes;
};

/* What gives one process's Python frames their lines (lines.c): its side
 * file and the eval loop's variables in libpython's DWARF. */
enum ps_py_line_source {
	PS_PY_LINE_NONE = 0,
	PS_PY_LINE_DWARF, /* the instruction pointer's DWARF location */
	PS_PY_LINE_SCAN, /* a pointer found in the frame's registers */
	PS_PY_LINE_SOURCES
};
/* A note (ps_pipeline_stack.notes) of a trampoline's frame: the line in
 * the low 32 bits, the source above. */
#define PS_PY_NOTE_SOURCE_SHIFT 32

struct python_lines {
	char *path; /* the side file found, or NULL */
	struct ps_py_codes *codes; /* NULL: none, or it could not be read */
	int error; /* why not: -ENOENT (none found), or reading's */
	char *message; /* reading's failure, when error is not -ENOENT */
	const struct ps_function_variables *vars; /* the eval loop's, or NULL */
	bool vars_tried;
};

/* One "FILE:LINE" text, by the hash of the frame's name and the line. */
struct python_srcline {
	uint64_t hash;
	const char *name; /* the frame's "py::qualname:file" */
	uint32_t line;
	const char *text; /* NULL: an empty slot */
};

/* A JIT lookup kept for its address (python_process.jit_hits) */
#define PS_PY_JIT_HITS_BITS 8
struct python_jit_hit {
	uint64_t addr;
	int32_t jit_pid; /* 0: an empty slot */
	bool found;
	struct ps_jit_symbol sym;
};

/* What the Python side knows of one process, hung on it
 * (PS_PROCESS_SLOT_RULES): its interpreter, the trampoline template its
 * perf-map entries are copies of and where both are mapped, looked up
 * again when the maps change, and whether it has JIT code. */
struct python_process {
	struct ps_process *process;
	uint64_t interp_generation;
	bool interp_searched;
	uint64_t interp_map_start;
	const struct ps_mapped_object *interp_object;
	const struct ps_py_interp *interp;
	uint64_t template_map_start;
	const struct ps_mapped_object *template_object;
	const struct ps_trampoline *trampoline;
	bool jit_checked, has_jit;
	uint64_t jit_generation;
	struct python_lines *lines; /* looked for on first use */
	/* 1 << PS_PY_JIT_HITS_BITS slots, made on first use: every sample
	 * looks the same trampolines up for their unwind rules and again for
	 * their names */
	struct python_jit_hit *jit_hits;
	/* the Python frames the merge delivered, and of them those with a
	 * line by source */
	uint64_t python_frames;
	uint64_t lined[PS_PY_LINE_SOURCES];
};

/* sources.c */
void ps_python_say(const struct ps_python *python, enum ps_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* The loaded name sources of pid, or NULL (none found, out of memory);
 * the outcome of loading them is said once unless quiet. */
struct ps_jit_names *ps_python_pid_names(struct ps_python *python, int32_t pid, bool quiet);
/* The named range of JIT code at addr in a process (pid) whose JIT
 * object is named after jit_pid. *settled (when not NULL) is cleared
 * when a later lookup of addr could answer otherwise (the files are not
 * chosen yet). */
bool ps_python_lookup_jit(struct ps_python *python, int32_t jit_pid, int32_t pid, uint64_t addr,
                          struct ps_jit_symbol *out, bool *settled);
/* The same in a process, its JIT object's jit_pid given or (0) looked up
 * among its maps, and kept per address and jit_pid once settled. */
bool ps_python_jit_symbol(struct ps_python *python, struct ps_process *process, int32_t jit_pid,
                          uint64_t addr, struct ps_jit_symbol *out);
/* ps_pipeline_rules.name_jit */
void ps_python_name_jit(void *ctx, struct ps_process *process,
                        const struct ps_mapped_object *object, uint64_t ip, struct ps_frame *f);
void ps_python_sources_free(struct ps_python *python);

/* process.c */
/* The process's state, created on first use; NULL only when out of memory. */
struct python_process *ps_python_process(struct ps_process *process);
/* Look the interpreter and the template up (again when the maps changed). */
void ps_python_find_interpreter(struct ps_python *python, struct python_process *state);
/* The same among the files a freed process mapped executable (report.c):
 * state->process is not looked at. */
void ps_python_find_interpreter_in(struct ps_python *python, struct python_process *state,
                                   struct ps_mapped_object *const *objects, size_t nr);
/* Whether a map is one the interpreter is searched among: an executable
 * file mapping. */
bool ps_python_searched_map(const struct ps_map *map);
/* Whether the process has mapped executable anonymous memory (JIT code). */
bool ps_python_has_jit_code(const struct ps_process *process);
/* ps_pipeline_rules.frame_rule and recover_popped */
bool ps_python_frame_rule(void *ctx, struct ps_process *process, uint64_t pc,
                          struct ps_unwind_rule *out);
bool ps_python_recover_popped(void *ctx, struct ps_process *process);
void ps_python_trampolines_free(struct ps_python *python);

/* report.c */
/* ps_pipeline_rules.process_gone: keep what the report says of it. */
void ps_python_process_gone(void *ctx, struct ps_process *process, const char *comm);
void ps_python_gone_free(struct ps_python *python);
/* lines.c */
/* The process's lines (its side file read on first use), or NULL when it
 * has none. */
struct python_lines *ps_python_lines(struct ps_python *python, struct python_process *state);
void ps_python_lines_free(struct python_lines *lines);
/* ps_pipeline_rules.inspects and inspect_frames */
bool ps_python_inspects(void *ctx, struct ps_process *process);
void ps_python_inspect_frames(void *ctx, struct ps_process *process, const struct ps_event *event,
                              const uint64_t *pcs, const struct ps_unwind_frame_regs *regs,
                              size_t n, uint64_t *notes);

/* ==== end section: the Python side of a pipeline ==================== */

#endif /* PS_PYTHON_PYTHON_PRIV_H */
