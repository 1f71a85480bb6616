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
	/* perf's dso__type() is DSO__TYPE_64BIT (ps_dso_is_elf64()): 0 not
	 * asked yet, 1 yes, -1 no */
	signed char elf64;
	struct ps_elf *opened[8]; /* every file kept open, owned */
	size_t nr_opened;
	struct ps_elf *data, *syms, *runtime, *a2l_file;
	struct ps_symtab symtab;
	bool has_symtab;
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
	struct cache_slot *slots;
	size_t nr_slots, used_slots;
	/* local variables' locations (variables.c), one list entry per
	 * function asked; failed: out of memory once, not asked again */
	struct ps_function_variables *variables;
	bool variables_failed;
	struct ps_arena arena;
};

struct ps_symbols {
	char *symfs, *buildid_dir, *kallsyms, *vmlinux;
	bool no_inline, srcline, full_source_path;
	bool record_names; /* keep the answers of separate debug files */
	struct ps_file_hooks files;
	ps_log_fn log;
	void *log_ctx;
	struct ps_dso **buckets;
	size_t nr_buckets, nr_dsos;
	struct ps_kernel_symbols *kernel;
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
};

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

/* variables.c */
void ps_variables_free_list(struct ps_function_variables *list);

#endif /* PS_SYMBOLS_DSO_PRIV_H */
