/* The session's DSO registry and the per-address cache behind
 * ps_dso_resolve(); finding each DSO's files is dso_locate.c's, the
 * kernel's and modules' symbols dso_kernel.c's. */
#include "symbols/dso_priv.h"

#include "base/hash.h"
#include "base/opts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int ps_symbols_new(const struct ps_symbols_opts *opts, struct ps_symbols **out)
{
	struct ps_symbols *symbols;
	struct ps_symbols_opts o;
	const char *home;

	*out = NULL;
	if (ps_opts_copy(&o, sizeof(o), opts))
		return -EINVAL;
	symbols = calloc(1, sizeof(*symbols));
	if (!symbols)
		return -ENOMEM;
	symbols->no_inline = o.no_inline;
	symbols->srcline = o.srcline;
	symbols->full_source_path = o.full_source_path;
	symbols->no_demangle = o.no_demangle;
	symbols->srccode = o.srccode;
	symbols->log = o.log;
	symbols->log_ctx = o.log_ctx;
	symbols->files = o.files;
	symbols->record_names = o.record_names;
	symbols->no_live_processes = o.no_live_processes;
	symbols->names_unused = o.names_unused;
	symbols->symfs = strdup(o.symfs ? o.symfs : "");
	if (o.symfs && o.symfs[0]) {
		/* perf's --symfs makes DIR/.debug the build-id cache, whatever
		 * else was configured (symbol__config_symfs()) */
		symbols->buildid_dir = malloc(strlen(o.symfs) + sizeof("/.debug"));
		if (symbols->buildid_dir)
			sprintf(symbols->buildid_dir, "%s/.debug", o.symfs);
	} else if (o.buildid_dir) {
		symbols->buildid_dir = strdup(o.buildid_dir);
	} else {
		home = getenv("HOME");
		symbols->buildid_dir = malloc((home ? strlen(home) : 0) + sizeof("/.debug"));
		if (symbols->buildid_dir)
			sprintf(symbols->buildid_dir, "%s%s", home ? home : "",
			        home ? "/.debug" : ".debug");
	}
	symbols->trees = calloc(o.nr_symfs_dirs + 1, sizeof(*symbols->trees));
	if (symbols->trees && symbols->symfs) {
		symbols->trees[symbols->nr_trees++] = symbols->symfs;
		for (size_t i = 0; i < o.nr_symfs_dirs; i++) {
			if (!o.symfs_dirs[i])
				continue;
			symbols->trees[symbols->nr_trees] = strdup(o.symfs_dirs[i]);
			if (!symbols->trees[symbols->nr_trees])
				break;
			symbols->nr_trees++;
		}
	}
	symbols->kallsyms = dup_or_null(o.kallsyms);
	symbols->vmlinux = dup_or_null(o.vmlinux);
	symbols->nr_buckets = 256;
	symbols->buckets = calloc(symbols->nr_buckets, sizeof(*symbols->buckets));
	if (!symbols->symfs || !symbols->buildid_dir || !symbols->buckets || !symbols->trees ||
	    symbols->nr_trees != 1 + (size_t)o.nr_symfs_dirs ||
	    (o.kallsyms && !symbols->kallsyms) || (o.vmlinux && !symbols->vmlinux)) {
		ps_symbols_free(symbols);
		return -ENOMEM;
	}
	*out = symbols;
	return 0;
}

static void dso_free(struct ps_dso *dso)
{
	free(dso->module_path);
	free(dso->code_path);
	free(dso->code_file);
	ps_addr2line_close(dso->a2l);
	ps_addr2line_close(dso->a2l_recording);
	ps_names_free(dso->names);
	ps_variables_free_list(dso->variables);
	for (size_t i = 0; i < dso->nr_opened; i++)
		ps_elf_close(dso->opened[i]);
	ps_symtab_release(&dso->symtab);
	ps_arena_free(&dso->arena);
	free(dso->slots);
	free(dso->module);
	free(dso->errmsg);
	free(dso->name);
	free(dso->root);
	free(dso->tree_owned);
	free(dso);
}

/* How much naming there was, at PS_LOG_DEBUG: bench/stages.sh divides the
 * naming stage's time by the addresses named. */
static void log_named(struct ps_symbols *symbols)
{
	uint64_t addresses = 0, dsos = 0;

	for (size_t i = 0; symbols->buckets && i < symbols->nr_buckets; i++)
		for (const struct ps_dso *dso = symbols->buckets[i]; dso; dso = dso->next) {
			addresses += dso->used_slots;
			dsos += dso->used_slots > 0;
		}
	if (addresses)
		ps_symbols_log(symbols, PS_LOG_DEBUG,
		               "symbols: %llu unique addresses named in %llu DSOs, %llu asked of "
		               "addr2line",
		               (unsigned long long)addresses, (unsigned long long)dsos,
		               (unsigned long long)symbols->addr2line_queries);
}

void ps_symbols_free(struct ps_symbols *symbols)
{
	if (!symbols)
		return;
	log_named(symbols);
	/* first: the helper reads the settings freed below (the files'
	 * pointers to its work are not followed again) */
	ps_ahead_free(symbols->ahead);
	for (size_t i = 0; symbols->buckets && i < symbols->nr_buckets; i++) {
		struct ps_dso *dso = symbols->buckets[i];

		while (dso) {
			struct ps_dso *next = dso->next;

			dso_free(dso);
			dso = next;
		}
	}
	ps_kernel_symbols_free(symbols->kernel);
	ps_kernel_symbols_free(symbols->kernel_core);
	if (symbols->own_vdso) {
		unlink(symbols->own_vdso);
		free(symbols->own_vdso);
	}
	free(symbols->buckets);
	/* trees[0] is symfs */
	for (size_t i = 1; i < symbols->nr_trees; i++)
		free(symbols->trees[i]);
	free(symbols->trees);
	free(symbols->symfs);
	free(symbols->buildid_dir);
	free(symbols->kallsyms);
	free(symbols->vmlinux);
	ps_sources_free(symbols->sources);
	free(symbols->reloc_name);
	free(symbols);
}

void ps_symbols_for_each_build_id(struct ps_symbols *symbols,
                                  void (*fn)(void *ctx, const char *name, bool kernel,
                                             const uint8_t *id, size_t size),
                                  void *ctx)
{
	for (size_t i = 0; i < symbols->nr_buckets; i++) {
		for (const struct ps_dso *dso = symbols->buckets[i]; dso; dso = dso->next) {
			bool kernel = dso->kind == DSO_KERNEL || dso->kind == DSO_MODULE;

			if (dso->build_id_recorded)
				fn(ctx, dso->name, kernel, dso->build_id, dso->build_id_size);
			else if (dso->located && dso->data && dso->data->build_id_size)
				fn(ctx, dso->name, kernel, dso->data->build_id,
				   dso->data->build_id_size);
		}
	}
}

static uint64_t hash_dso(const char *path, const uint8_t *id, size_t size)
{
	return ps_hash_bytes(id, size, ps_hash_string(path, 0));
}

bool ps_dso_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* perf's kmod_path__parse_name: "[name]" with '-' turned into '_'. */
static char *module_name(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;
	char *name;

	base = base ? base + 1 : path;
	len = strcspn(base, ".");
	name = malloc(len + 3);
	if (!name)
		return NULL;
	name[0] = '[';
	for (size_t i = 0; i < len; i++)
		name[i + 1] = base[i] == '-' ? '_' : base[i];
	name[len + 1] = ']';
	name[len + 2] = 0;
	return name;
}

static void classify(struct ps_dso *dso)
{
	const char *name = dso->name;

	if (strcmp(name, "[kernel.kallsyms]") == 0 || strncmp(name, "[kernel.kallsyms]", 17) == 0) {
		dso->kind = DSO_KERNEL;
	} else if (strcmp(name, "[vdso]") == 0) {
		dso->kind = DSO_VDSO;
	} else if (name[0] == '[') {
		static const char *const not_modules[] = { "[vsyscall]", "[heap]",    "[stack",
			                                   "[vvar",      "[uprobes]", "[vectors]",
			                                   "[anon" };
		dso->kind = DSO_MODULE;
		for (size_t i = 0; i < sizeof(not_modules) / sizeof(not_modules[0]); i++)
			if (strncmp(name, not_modules[i], strlen(not_modules[i])) == 0)
				dso->kind = DSO_NONE;
		if (dso->kind == DSO_MODULE)
			dso->module = strdup(name);
	} else if (name[0] == '/' &&
	           (ps_dso_has_suffix(name, ".ko") || ps_dso_has_suffix(name, ".ko.xz") ||
	            ps_dso_has_suffix(name, ".ko.gz") || ps_dso_has_suffix(name, ".ko.zst"))) {
		dso->kind = DSO_MODULE;
		dso->module = module_name(name);
	} else if (strncmp(name, "/tmp/perf-", 10) == 0 || strcmp(name, "//anon") == 0 ||
	           strncmp(name, "/dev/", 5) == 0 || strncmp(name, "/anon_hugepage", 14) == 0 ||
	           strncmp(name, "/SYSV", 5) == 0 || name[0] == 0) {
		dso->kind = DSO_NONE;
	} else {
		dso->kind = DSO_USER;
	}
}

struct ps_dso *ps_symbols_dso(struct ps_symbols *symbols, const char *recorded_path,
                              const uint8_t *build_id, size_t build_id_size)
{
	return ps_symbols_dso_from(symbols, recorded_path, build_id, build_id_size, NULL);
}

struct ps_dso *ps_symbols_dso_from(struct ps_symbols *symbols, const char *recorded_path,
                                   const uint8_t *build_id, size_t build_id_size,
                                   const struct ps_dso_origin *origin)
{
	uint64_t h;
	struct ps_dso *dso;
	const char *slash;
	char root[64];
	bool rooted;

	if (!recorded_path)
		recorded_path = "";
	if (!build_id)
		build_id_size = 0;
	if (build_id_size > PS_BUILD_ID_MAX)
		build_id_size = PS_BUILD_ID_MAX;
	rooted = ps_symbols_root(symbols, recorded_path, origin, root, sizeof(root));
	h = hash_dso(recorded_path, build_id, build_id_size) % symbols->nr_buckets;
	for (dso = symbols->buckets[h]; dso; dso = dso->next)
		if (strcmp(dso->name, recorded_path) == 0 &&
		    dso->build_id_recorded == !!build_id_size &&
		    (!build_id_size || (dso->build_id_size == build_id_size &&
		                        memcmp(dso->build_id, build_id, build_id_size) == 0)) &&
		    (rooted ? dso->root && strcmp(dso->root, root) == 0 : !dso->root))
			return dso;
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->owner = symbols;
	dso->name = strdup(recorded_path);
	dso->root = rooted ? strdup(root) : NULL;
	if (!dso->name || (rooted && !dso->root)) {
		free(dso->name);
		free(dso);
		return NULL;
	}
	slash = strrchr(dso->name, '/');
	dso->short_name = slash && dso->name[0] != '[' ? slash + 1 : dso->name;
	if (build_id_size) {
		memcpy(dso->build_id, build_id, build_id_size);
		dso->build_id_size = build_id_size;
		dso->build_id_recorded = true;
	}
	ps_symtab_init(&dso->symtab);
	classify(dso);
	if (dso->kind == DSO_MODULE && !dso->module) {
		dso_free(dso);
		return NULL;
	}
	if (dso->kind == DSO_KERNEL && !symbols->kernel_dso)
		symbols->kernel_dso = dso;
	dso->next = symbols->buckets[h];
	symbols->buckets[h] = dso;
	symbols->nr_dsos++;
	return dso;
}

const char *ps_dso_name(const struct ps_dso *dso)
{
	return dso->name;
}

const char *ps_dso_file(struct ps_dso *dso)
{
	ps_dso_locate(dso);
	return dso->data ? dso->data->file : NULL;
}

const struct ps_elf *ps_dso_elf(struct ps_dso *dso)
{
	ps_dso_locate(dso);
	return dso->data;
}

const char *ps_dso_symbol_file(struct ps_dso *dso)
{
	ps_dso_locate(dso);
	return dso->has_symtab ? dso->syms->file : NULL;
}

const char *ps_dso_errmsg(struct ps_dso *dso)
{
	ps_dso_locate(dso);
	return dso->errmsg;
}

/* ------------------------------------------------------------------ */
/* resolving, with a cache per DSO and address */

static size_t cache_hash(uint64_t addr, bool chain)
{
	return (size_t)ps_hash_u64(addr * 2 + chain);
}

static struct cached *cache_find(const struct ps_dso *dso, uint64_t addr, bool chain)
{
	size_t mask = dso->nr_slots - 1, i;

	if (!dso->nr_slots)
		return NULL;
	for (i = cache_hash(addr, chain) & mask; dso->slots[i].value; i = (i + 1) & mask)
		if (dso->slots[i].addr == addr && dso->slots[i].chain == chain)
			return dso->slots[i].value;
	return NULL;
}

static void cache_insert(struct ps_dso *dso, uint64_t addr, bool chain, struct cached *value)
{
	size_t mask, i;

	if ((dso->used_slots + 1) * 4 > dso->nr_slots * 3) {
		size_t nr = dso->nr_slots ? dso->nr_slots * 2 : 1024;
		struct cache_slot *old = dso->slots, *slots = calloc(nr, sizeof(*slots));
		size_t old_nr = dso->nr_slots;

		if (!slots)
			return; /* uncached: still correct, only slower */
		dso->slots = slots;
		dso->nr_slots = nr;
		dso->used_slots = 0;
		for (size_t j = 0; j < old_nr; j++)
			if (old[j].value)
				cache_insert(dso, old[j].addr, old[j].chain, old[j].value);
		free(old);
	}
	mask = dso->nr_slots - 1;
	for (i = cache_hash(addr, chain) & mask; dso->slots[i].value; i = (i + 1) & mask)
		;
	dso->slots[i].addr = addr;
	dso->slots[i].chain = chain;
	dso->slots[i].value = value;
	dso->used_slots++;
}

const char *ps_dso_addr_srcline(struct ps_dso *dso, uint64_t addr)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s[%llx]", dso->module ? dso->module : dso->short_name,
	         (unsigned long long)addr);
	return ps_arena_strndup(&dso->arena, buf, sizeof(buf));
}

/* The answer an archive recorded for addr in place of the debug file, into
 * *sym and the records; false when it has none (said once per DSO: the
 * DSO's own symbols answer then). */
static bool recorded_answer(struct ps_dso *dso, uint64_t addr, struct ps_sym *sym, bool *has_sym,
                            const struct ps_addr2line_record **records, size_t *nr_records)
{
	const struct ps_names_entry *e = ps_names_find(dso->names, addr);

	if (!e) {
		if (!dso->warned_unrecorded) {
			dso->warned_unrecorded = true;
			ps_symbols_log(
			        dso->owner, PS_LOG_WARN,
			        "symbols: %s: address %#" PRIx64
			        " was not reached when the archive was made without "
			        "--with-debuginfo, so the archive has no answer of the debug "
			        "file for it: it and any like it are named from the "
			        "library's own symbols",
			        dso->name, addr);
		}
		return false;
	}
	memset(sym, 0, sizeof(*sym));
	sym->name = e->sym;
	sym->start = e->sym_start;
	*has_sym = e->sym != NULL;
	*records = e->records;
	*nr_records = e->nr_records;
	return true;
}

/* A query addr2line could not answer for want of memory: this answer is
 * the library's own symbol, not kept, and not recorded into an archive. */
static void addr2line_failed(struct ps_dso *dso, int err)
{
	dso->owner->answer_incomplete = true;
	if (dso->recording)
		dso->names_failed = true;
	if (dso->warned_a2l_memory)
		return;
	dso->warned_a2l_memory = true;
	ps_symbols_log(dso->owner, PS_LOG_WARN,
	               "symbols: %s: reading its debug information failed (%s): some addresses "
	               "are named from the library's own symbols",
	               dso->name, strerror(-err));
}

static size_t resolve_user(struct ps_dso *dso, uint64_t addr, bool chain,
                           struct ps_frame_name *frames)
{
	struct ps_symbols *symbols = dso->owner;
	const struct ps_addr2line_record *records = symbols->records;
	const struct ps_sym *sym = NULL;
	const char *name = NULL;
	struct ps_sym recorded;
	bool want_chain, has_recorded_sym = false;
	size_t nr_records = 0, n;

	if (dso->names && !dso->recording &&
	    recorded_answer(dso, addr, &recorded, &has_recorded_sym, &records, &nr_records)) {
		sym = has_recorded_sym ? &recorded : NULL;
		name = sym ? sym->name : NULL;
	} else {
		if (dso->symtab_dropped) {
			char err[PS_MSG_MAX];

			/* the same files load the same table (ENOMEM: none) */
			dso->symtab_dropped = false;
			ps_symtab_load_dso(&dso->symtab, dso->syms, dso->runtime, err, sizeof(err));
		}
		sym = dso->has_symtab ? ps_symtab_find(&dso->symtab, addr) : NULL;
		name = sym ? ps_symtab_name(&dso->symtab, sym) : NULL;
		/* what this run asks addr2line; recording an archive's answers,
		 * every other address is asked of a second resolver, so that
		 * the first sees the very sequence of questions it sees in a
		 * run without recording (its answers depend on it) */
		bool asked = (sym && chain) || symbols->srcline;
		struct ps_addr2line **a2l = asked ? &dso->a2l : &dso->a2l_recording;

		if (dso->a2l_file && !*a2l && (asked || dso->recording) &&
		    ps_addr2line_open(dso->a2l_file,
		                      symbols->srcline || symbols->srccode || dso->recording,
		                      a2l) < 0)
			dso->a2l_file = NULL;
		if (*a2l && (asked || dso->recording)) {
			symbols->addr2line_queries++;
			int got = ps_addr2line_query(*a2l, addr + dso->text_offset,
			                             symbols->records, PS_INLINE_MAX);

			if (got < 0)
				addr2line_failed(dso, got);
			nr_records = got > 0 ? (size_t)got : 0;
		}
		if (dso->recording && ps_names_add(dso->names, addr, name, sym ? sym->start : 0,
		                                   records, nr_records) < 0)
			dso->names_failed = true;
	}
	want_chain = sym && chain;
	if (want_chain && nr_records > 0) {
		n = ps_inline_frames(records, nr_records, name, addr - sym->start, symbols->srcline,
		                     symbols->full_source_path, !symbols->no_demangle, &dso->arena,
		                     frames, PS_INLINE_MAX);
		if (n > 0)
			return n;
	}
	frames[0].sym = name;
	frames[0].offset = sym ? addr - sym->start : 0;
	frames[0].size = sym ? sym->end - sym->start : 0;
	frames[0].inlined = false;
	frames[0].srcline = NULL;
	if (symbols->srcline) {
		if (nr_records > 0)
			frames[0].srcline = ps_inline_plain_srcline(
			        records, nr_records, symbols->full_source_path, &dso->arena);
		else
			frames[0].srcline = ps_dso_addr_srcline(dso, addr + dso->text_offset);
	}
	return 1;
}

bool ps_dso_adjusts_symbols(struct ps_dso *dso)
{
	uint64_t text_offset;

	if (dso->loaded && dso->kind == DSO_MODULE)
		return dso->module_source == MODULE_FROM_KO;
	/* a vmlinux's ELF symbols */
	if (dso->loaded && dso->kind == DSO_KERNEL)
		return strcmp(dso->name, "[kernel.kallsyms]") == 0 &&
		       ps_symbols_kernel_vmlinux(dso->owner, &text_offset);
	if (!dso->loaded || (dso->kind != DSO_USER && dso->kind != DSO_VDSO))
		return false;
	ps_dso_locate(dso);
	return dso->syms && (dso->syms->symtab_index >= 0 || dso->syms->dynsym_index >= 0);
}

bool ps_dso_source(struct ps_dso *dso, uint64_t addr, char *path, size_t size, unsigned *line)
{
	struct ps_symbols *symbols = dso->owner;
	int got;

	ps_dso_locate(dso);
	/* perf asks addr2line on the file symbols came from (never on
	 * "[...]" names), every time: it keeps no answer for srccode */
	if ((dso->kind != DSO_USER && dso->kind != DSO_VDSO) || !dso->a2l_file)
		return false;
	if (!dso->a2l && ps_addr2line_open(dso->a2l_file, true, &dso->a2l) < 0) {
		dso->a2l_file = NULL;
		return false;
	}
	got = ps_addr2line_query(dso->a2l, addr + dso->text_offset, symbols->records,
	                         PS_INLINE_MAX);
	return got > 0 && ps_inline_source(&symbols->records[0], path, size, line);
}

/* Every so many new addresses, the pages of the files read to answer
 * them go back to the page cache: DWARF units and line programs are read
 * once into tables, and a busy machine's capture reads tens of MB of them.
 * The pages still in use come back at the cost of a minor fault. */
#define RELEASE_EVERY 1024

static void release_file_pages(struct ps_symbols *symbols)
{
	symbols->resolved_since_release = 0;
	for (size_t i = 0; i < symbols->nr_buckets; i++)
		for (struct ps_dso *dso = symbols->buckets[i]; dso; dso = dso->next)
			for (size_t e = 0; e < dso->nr_opened; e++)
				ps_elf_release_pages(dso->opened[e]);
}

size_t ps_dso_resolve(struct ps_dso *dso, uint64_t addr, bool inline_frames,
                      struct ps_frame_name *out, size_t max)
{
	struct ps_frame_name *frames = dso->owner->frames;
	bool chain = inline_frames && !dso->owner->no_inline &&
	             (dso->kind == DSO_USER || dso->kind == DSO_VDSO);
	struct cached *value;
	size_t n;

	dso->loaded = true;
	if (max == 0)
		return 0;
	value = cache_find(dso, addr, chain);
	if (!value) {
		if (++dso->owner->resolved_since_release >= RELEASE_EVERY)
			release_file_pages(dso->owner);
		dso->owner->answer_incomplete = false;
		ps_dso_locate(dso);
		switch (dso->kind) {
		case DSO_USER:
		case DSO_VDSO:
			n = resolve_user(dso, addr, chain, frames);
			break;
		case DSO_KERNEL:
		case DSO_MODULE:
			n = ps_dso_resolve_kernel(dso, addr, frames);
			break;
		default:
			frames[0] = (struct ps_frame_name){ 0 };
			if (dso->owner->srcline)
				frames[0].srcline = ps_dso_addr_srcline(dso, addr);
			n = 1;
			break;
		}
		if (dso->owner->answer_incomplete)
			value = NULL;
		else
			value = ps_arena_alloc(&dso->arena,
			                       sizeof(*value) + n * sizeof(value->frames[0]));
		if (!value) {
			n = n < max ? n : max;
			memcpy(out, frames, n * sizeof(*out));
			return n;
		}
		value->count = (uint32_t)n;
		memcpy(value->frames, frames, n * sizeof(frames[0]));
		cache_insert(dso, addr, chain, value);
	}
	// cppcheck-suppress nullPointerRedundantCheck
	n = value->count < max ? value->count : max;
	memcpy(out, value->frames, n * sizeof(*out));
	return n;
}

int ps_symbols_recorded_names(struct ps_symbols *symbols, const char *debug_path,
                              struct ps_strbuf *out)
{
	struct ps_names *merged = ps_names_new();
	const char *dso_name = NULL;
	int found = 0, rc = 0;

	if (!merged)
		return -ENOMEM;
	for (size_t i = 0; i < symbols->nr_buckets && !rc; i++) {
		for (struct ps_dso *dso = symbols->buckets[i]; dso && !rc; dso = dso->next) {
			if (!dso->syms || strcmp(dso->syms->path, debug_path) != 0)
				continue;
			if (dso->names_failed) {
				rc = -ENOMEM;
				break;
			}
			if (!dso->recording)
				continue;
			/* DSOs sharing the debug file (one library under two
			 * names) answer alike: one table for the file */
			for (size_t e = 0; e < ps_names_count(dso->names) && !rc; e++) {
				const struct ps_names_entry *entry =
				        ps_names_entry_at(dso->names, e);

				rc = ps_names_add(merged, entry->addr, entry->sym, entry->sym_start,
				                  entry->records, entry->nr_records);
			}
			if (!dso_name)
				dso_name = dso->name;
			found++;
		}
	}
	if (!rc && found)
		rc = ps_names_format(merged, dso_name, out);
	ps_names_free(merged);
	return rc < 0 ? rc : found;
}
