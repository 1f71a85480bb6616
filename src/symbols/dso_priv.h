/* The symbols module's DSO registry, shared by dso.c (the registry, the
 * per-address cache, kernel symbols) and dso_locate.c (finding each DSO's
 * files in perf's order). Private to src/symbols/. */
#ifndef PS_SYMBOLS_DSO_PRIV_H
#define PS_SYMBOLS_DSO_PRIV_H

#include <stdarg.h>
#include <stdio.h>

#include "symbols/symbols_priv.h"

#include "base/message.h"

enum dso_kind { DSO_USER, DSO_VDSO, DSO_KERNEL, DSO_MODULE, DSO_NONE };

struct cache_slot {
	uint64_t addr;
	bool chain; /* resolved with inline frames */
	struct cached *value; /* NULL: empty slot */
};

struct cached {
	uint32_t count;
	struct ps_frame_name frames[];
};

struct ps_dso {
	struct ps_symbols *owner;
	struct ps_dso *next; /* registry bucket */
	char *name;
	const char *short_name; /* basename, perf's dso->short_name */
	uint8_t build_id[PS_BUILD_ID_MAX];
	size_t build_id_size;
	bool build_id_recorded;
	enum dso_kind kind;
	char *module; /* "[name]" for modules */
	bool located;
	/* ps_dso_resolve() was asked: perf has loaded the DSO (map__load) */
	bool loaded;
	/* A kernel module: the path its first MMAP recorded and where it is
	 * mapped (ps_dso_set_module_map()); where its symbols come from,
	 * decided at its first lookup (kmodule.c); with a .ko, the file
	 * offset of its .text, which perf's map of it then starts at. */
	char *module_path;
	uint64_t module_start;
	enum {
		MODULE_UNDECIDED,
		MODULE_FROM_KO,
		MODULE_FROM_KALLSYMS,
		MODULE_NO_SYMBOLS, /* a .ko whose table gave none */
		/* no .ko, first looked up before the kernel's map was loaded:
		 * none until it is, then kallsyms's but the first of each run
		 * of the module's symbols (kmodule.c) */
		MODULE_BEFORE_KERNEL
	} module_source;
	uint64_t module_text_offset;
	/* perf's dso__type() is DSO__TYPE_64BIT (ps_dso_is_elf64()): 0 not
	 * asked yet, 1 yes, -1 no */
	signed char elf64;
	struct ps_elf *opened[8]; /* every file kept open, owned */
	size_t nr_opened;
	struct ps_elf *data, *syms, *runtime, *a2l_file;
	/* the file perf reads the DSO's contents from (ps_dso_read_code()),
	 * as looked up and as read; NULL: none */
	bool code_tried;
	char *code_path, *code_file;
	struct ps_symtab symtab;
	bool has_symtab;
	bool symtab_dropped; /* symtab freed (names_unused): load it again */
	uint64_t text_offset;
	struct ps_addr2line *a2l;
	struct ps_addr2line *a2l_recording; /* see resolve_user() */
	/* The answers of a separate debug file (see names.c): recorded while
	 * an archive writer watches (recording), or read from an archive that
	 * carries them in place of the file. */
	struct ps_names *names;
	bool recording, names_failed, warned_unrecorded, warned_a2l_memory;
	/* why it has no symbols, allocated once known (NULL: nothing said):
	 * a whole machine's capture holds thousands of DSOs, most without one */
	char *errmsg;
	bool warned_build_id;
	/* where its recorded path is read: root, its process's root file
	 * system ("/proc/PID/root", part of its identity; NULL: ours), or
	 * the --symfs tree chosen for it (tree, once tree_chosen) */
	char *root;
	const char *tree;
	char *tree_owned; /* a tree found in an archive */
	bool tree_chosen;
	struct cache_slot *slots;
	size_t nr_slots, used_slots;
	/* local variables' locations (variables.c), one list entry per
	 * function asked; failed: out of memory once, not asked again */
	struct ps_function_variables *variables;
	bool variables_failed;
	struct ps_arena arena;
};

/* A live process found in a mount namespace the capture recorded. */
struct namespace_pid {
	uint64_t dev, ino;
	int32_t pid; /* 0: none runs */
};

struct ps_symbols {
	char *symfs, *buildid_dir, *kallsyms, *vmlinux;
	/* addresses asked of addr2line (resolve_user()), for the debug
	 * line at the end */
	uint64_t addr2line_queries;
	/* addresses resolved since the files' pages were last released */
	uint32_t resolved_since_release;
	/* bytes of compressed kernel modules decompressed into memory so
	 * far (kmod_decompress.c bounds their total) */
	uint64_t kmod_bytes;
	bool names_unused; /* see ps_symbols_opts */
	/* every --symfs tree, symfs first (one per container exported) */
	char **trees;
	size_t nr_trees;
	/* our own mount namespace, and live processes of others (roots.c) */
	bool own_mnt_ns_known;
	uint64_t own_mnt_ns_dev, own_mnt_ns_ino;
	struct namespace_pid namespace_pids[64];
	size_t nr_namespace_pids;
	bool no_inline, srcline, full_source_path, no_demangle;
	bool srccode; /* addr2line's answers name their files */
	bool record_names; /* keep the answers of separate debug files */
	bool no_live_processes; /* the capture's pids are not ours */
	struct ps_file_hooks files;
	ps_log_fn log;
	void *log_ctx;
	struct ps_dso **buckets;
	size_t nr_buckets, nr_dsos;
	struct ps_kernel_symbols *kernel;
	/* the running kernel's files: NULL, the real ones (tests name
	 * others) */
	const struct ps_kernel_live *live_kernel;
	/* kernel_whole() was tried */
	bool kernel_whole_tried;
	/* the kernel's own symbols that kernel replaced (kernel_whole()) */
	struct ps_kernel_symbols *kernel_core;
	bool kernel_tried;
	/* the kernel DSO has resolved an address: perf has loaded the
	 * kernel map, which then covers every kernel symbol */
	bool kernel_map_loaded;
	const struct ps_dso *kernel_dso; /* for its build-id */
	bool have_reloc;
	char *reloc_name;
	uint64_t reloc_addr;
	/* a copy of this process's vdso, for "[vdso]" without a build-id */
	char *own_vdso;
	bool own_vdso_tried;
	/* scratch space of ps_dso_resolve() */
	struct ps_frame_name frames[PS_INLINE_MAX];
	struct ps_addr2line_record records[PS_INLINE_MAX];
	bool answer_incomplete; /* not to be cached: ask again next time */
	struct ps_sources *sources; /* source.c: source files for srccode */
	struct ps_ahead *ahead; /* work started ahead (ahead.c), or NULL */
};

/* ahead.c: what the helper thread did, for the session's thread. The
 * kernel symbols as loaded from source: true with the load's outcome
 * (ps_kernel_symbols_load()'s) when the helper loaded them from the same
 * file, false when the caller is to load them. */
bool ps_ahead_take_kernel(struct ps_ahead *ahead, const struct ps_kernel_source *source,
                          struct ps_kernel_symbols **out, struct ps_kernel_load_result *result,
                          int *rc);
/* Tie elf to the helper's work on the same file, if there is any. */
void ps_ahead_offer(struct ps_ahead *ahead, struct ps_elf *elf);
/* Stops the helper (after the task it is on) and frees what was not
 * taken. */
void ps_ahead_free(struct ps_ahead *ahead);

/* source.c */
struct ps_sources;
void ps_sources_free(struct ps_sources *sources);

/* A message through the session's log callback, when there is one. */
static inline void ps_symbols_log(const struct ps_symbols *symbols, enum ps_log_level level,
                                  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void ps_symbols_log(const struct ps_symbols *symbols, enum ps_log_level level,
                                  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ps_vlog(symbols->log, symbols->log_ctx, level, NULL, fmt, ap);
	va_end(ap);
}
/* Find the DSO's files (once): its data, symbol and runtime files, its
 * symbol table, or why there are none (dso->errmsg). */
void ps_dso_locate(struct ps_dso *dso);
/* dso_locate.c: the first file of the build-id cache entry and --symfs +
 * path that is an ELF file with a .symtab and the recorded build-id (if
 * any), opened and kept with the DSO's files; NULL when none. For kernel
 * modules. */
struct ps_elf *ps_dso_module_file(struct ps_dso *dso);
/* dso.c: whether s ends in suffix. */
bool ps_dso_has_suffix(const char *s, const char *suffix);
/* dso.c: perf's srcline of an address without a line: "DSO[ADDR]", in the
 * DSO's arena. */
const char *ps_dso_addr_srcline(struct ps_dso *dso, uint64_t addr);
/* dso_kernel.c: the name of a kernel or module address into frames[0]
 * (ps_dso_resolve()'s miss); 1. */
size_t ps_dso_resolve_kernel(struct ps_dso *dso, uint64_t addr, struct ps_frame_name *frames);
/* dso_locate.c: size bytes of buf written to fd, through short writes and
 * interruptions; 0 or -errno (-EIO when nothing more is written). */
int ps_symbols_write_all(int fd, const void *buf, size_t size);
/* kmod_decompress.c: the compression a module's recorded path names
 * (perf 6.1's: gzip, xz), and its file decompressed into an anonymous
 * memory file (*fd_out, the caller's to close), counted in *budget (the
 * bytes decompressed so far, whose total is bounded). *fd_out is -1, with 0
 * returned, when the file lacks that compression's magic (read it as it
 * is); a negative errno and err when it cannot be decompressed. */
enum ps_kmod_comp { PS_KMOD_PLAIN, PS_KMOD_GZIP, PS_KMOD_XZ };
enum ps_kmod_comp ps_kmod_compression(const char *module_path);
int ps_kmod_decompress(const char *path, const char *file, enum ps_kmod_comp comp, uint64_t *budget,
                       int *fd_out, char *err, size_t errsz);
/* kmodule.c: decide where a kernel module's symbols come from, as perf's
 * first map__load() of it decides (module_source). */
void ps_kmodule_load(struct ps_dso *dso);
/* Whether perf read the module's symbols from its .ko (which may have
 * given none), once ps_kmodule_load() decided. */
static inline bool ps_kmodule_from_file(const struct ps_dso *dso)
{
	return dso->module_source == MODULE_FROM_KO || dso->module_source == MODULE_NO_SYMBOLS;
}
/* kmodule.c: perf loads the kernel's map from kallsyms after it loaded
 * the module from its .ko: the module's kallsyms symbols go into the
 * .ko's table too, but the first of each run. */
void ps_kmodule_add_kallsyms(struct ps_dso *dso);
/* path under tree as perf's __symbol__join_symfs() joins them; false
 * (buf empty) when it does not fit. */
bool ps_dso_join(const char *tree, const char *path, char *buf, size_t size);
/* Open path as one of the DSO's files (kept, build-id checked); NULL when
 * missing, not ELF or of another build-id. */
struct ps_elf *ps_dso_open_candidate(struct ps_dso *dso, const char *path);

/* roots.c */
/* The root file system the file at path was mapped from, when it is not
 * ours: "/proc/PID/root" of the process that mapped it (or of another in
 * its recorded mount namespace) while it runs in another mount namespace
 * and holds the file; reading an archive, the root it was packed from.
 * false: read it as the recorded path. root must hold 64 bytes. */
bool ps_symbols_root(struct ps_symbols *symbols, const char *path,
                     const struct ps_dso_origin *origin, char *root, size_t size);
/* Set dso->tree (once): its root, else with several --symfs trees the
 * first whose file has the recorded build-id (or, none recorded, holds
 * the file), else the first tree. */
void ps_dso_choose_tree(struct ps_dso *dso);

/* variables.c */
void ps_variables_free_list(struct ps_function_variables *list);

#endif /* PS_SYMBOLS_DSO_PRIV_H */
