/* The session's DSO registry: locating each DSO's files in perf's order
 * (util/dso.c dso__read_binary_type_filename, util/symbol.c dso__load),
 * build-id checks with one warning per DSO, and the per-address cache
 * behind ps_dso_resolve(). */
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

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
	struct ps_elf *opened[8]; /* every file kept open, owned */
	size_t nr_opened;
	struct ps_elf *data, *syms, *runtime, *a2l_file;
	struct ps_symtab symtab;
	bool has_symtab;
	uint64_t text_offset;
	struct ps_addr2line *a2l;
	char errmsg[PS_ERRMSG_MAX];
	bool warned_build_id;
	struct cache_slot *slots;
	size_t nr_slots, used_slots;
	struct ps_arena arena;
};

struct ps_symbols {
	char *symfs, *buildid_dir, *kallsyms, *vmlinux;
	bool no_inline, srcline;
	struct ps_file_hooks files;
	ps_log_fn log;
	void *log_ctx;
	struct ps_dso **buckets;
	size_t nr_buckets, nr_dsos;
	struct ps_kernel_symbols *kernel;
	bool kernel_tried;
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
};

static void log_msg(const struct ps_symbols *symbols, enum ps_log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void log_msg(const struct ps_symbols *symbols, enum ps_log_level level, const char *fmt, ...)
{
	char msg[PS_ERRMSG_MAX + 256];
	va_list ap;

	if (!symbols->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	symbols->log(symbols->log_ctx, level, msg);
}

void ps_build_id_hex(const uint8_t *id, size_t size, char *buf)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < size; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * size] = 0;
}

bool ps_build_id_equal(const uint8_t *recorded, size_t recorded_size, const uint8_t *file,
                       size_t file_size)
{
	/* perf allows trailing zeros in a 20-byte recorded id */
	if (recorded_size > file_size && recorded_size == PS_BUILD_ID_MAX) {
		if (memcmp(recorded, file, file_size) != 0)
			return false;
		for (size_t i = file_size; i < recorded_size; i++)
			if (recorded[i])
				return false;
		return true;
	}
	return recorded_size == file_size && memcmp(recorded, file, file_size) == 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int ps_symbols_new(const struct ps_symbols_opts *opts, struct ps_symbols **out)
{
	struct ps_symbols *symbols;
	struct ps_symbols_opts o = { 0 };
	const char *home;

	*out = NULL;
	if (opts) {
		if (opts->sz < sizeof(size_t))
			return -EINVAL;
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	symbols = calloc(1, sizeof(*symbols));
	if (!symbols)
		return -ENOMEM;
	symbols->no_inline = o.no_inline;
	symbols->srcline = o.srcline;
	symbols->log = o.log;
	symbols->log_ctx = o.log_ctx;
	symbols->files = o.files;
	symbols->symfs = strdup(o.symfs ? o.symfs : "");
	if (o.buildid_dir) {
		symbols->buildid_dir = strdup(o.buildid_dir);
	} else {
		home = getenv("HOME");
		symbols->buildid_dir = malloc((home ? strlen(home) : 0) + sizeof("/.debug"));
		if (symbols->buildid_dir)
			sprintf(symbols->buildid_dir, "%s%s", home ? home : "",
			        home ? "/.debug" : ".debug");
	}
	symbols->kallsyms = dup_or_null(o.kallsyms);
	symbols->vmlinux = dup_or_null(o.vmlinux);
	symbols->nr_buckets = 256;
	symbols->buckets = calloc(symbols->nr_buckets, sizeof(*symbols->buckets));
	if (!symbols->symfs || !symbols->buildid_dir || !symbols->buckets ||
	    (o.kallsyms && !symbols->kallsyms) || (o.vmlinux && !symbols->vmlinux)) {
		ps_symbols_free(symbols);
		return -ENOMEM;
	}
	*out = symbols;
	return 0;
}

static void dso_free(struct ps_dso *dso)
{
	ps_addr2line_close(dso->a2l);
	for (size_t i = 0; i < dso->nr_opened; i++)
		ps_elf_close(dso->opened[i]);
	ps_symtab_release(&dso->symtab);
	ps_arena_free(&dso->arena);
	free(dso->slots);
	free(dso->module);
	free(dso->name);
	free(dso);
}

void ps_symbols_free(struct ps_symbols *symbols)
{
	if (!symbols)
		return;
	for (size_t i = 0; symbols->buckets && i < symbols->nr_buckets; i++) {
		struct ps_dso *dso = symbols->buckets[i];

		while (dso) {
			struct ps_dso *next = dso->next;

			dso_free(dso);
			dso = next;
		}
	}
	ps_kernel_symbols_free(symbols->kernel);
	if (symbols->own_vdso) {
		unlink(symbols->own_vdso);
		free(symbols->own_vdso);
	}
	free(symbols->buckets);
	free(symbols->symfs);
	free(symbols->buildid_dir);
	free(symbols->kallsyms);
	free(symbols->vmlinux);
	free(symbols->reloc_name);
	free(symbols);
}

static uint64_t hash_dso(const char *path, const uint8_t *id, size_t size)
{
	uint64_t h = 1469598103934665603ull;

	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 1099511628211ull;
	for (size_t i = 0; i < size; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	return h;
}

static bool has_suffix(const char *s, const char *suffix)
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
	} else if (name[0] == '/' && (has_suffix(name, ".ko") || has_suffix(name, ".ko.xz") ||
	                              has_suffix(name, ".ko.gz") || has_suffix(name, ".ko.zst"))) {
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
	uint64_t h;
	struct ps_dso *dso;
	const char *slash;

	if (!recorded_path)
		recorded_path = "";
	if (!build_id)
		build_id_size = 0;
	if (build_id_size > PS_BUILD_ID_MAX)
		build_id_size = PS_BUILD_ID_MAX;
	h = hash_dso(recorded_path, build_id, build_id_size) % symbols->nr_buckets;
	for (dso = symbols->buckets[h]; dso; dso = dso->next)
		if (strcmp(dso->name, recorded_path) == 0 &&
		    dso->build_id_recorded == !!build_id_size &&
		    (!build_id_size || (dso->build_id_size == build_id_size &&
		                        memcmp(dso->build_id, build_id, build_id_size) == 0)))
			return dso;
	dso = calloc(1, sizeof(*dso));
	if (!dso)
		return NULL;
	dso->owner = symbols;
	dso->name = strdup(recorded_path);
	if (!dso->name) {
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

/* ------------------------------------------------------------------ */
/* locating files */

/* The name a copy of this process's vdso is known by to the file hooks:
 * its real file is a temporary one, named differently on each run. */
#define OWN_VDSO_NAME "pystitch:own-vdso"

/* Whether path exists as a regular file where files are read from (the
 * file system, or an archive through the resolver). */
static bool is_regular_file(const struct ps_symbols *symbols, const char *path)
{
	const char *local = ps_file_local(&symbols->files, path);
	struct stat st;

	return local && stat(local, &st) == 0 && S_ISREG(st.st_mode);
}

/* snprintf for paths: false when the result did not fit. */
static bool format_path(char *buf, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static bool format_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

/* perf's __symbol__join_symfs */
static void join_symfs(const struct ps_symbols *symbols, const char *path, char *buf, size_t size)
{
	size_t len = strlen(symbols->symfs);

	if (len && symbols->symfs[len - 1] == '/' && path[0] == '/')
		path++;
	if (!format_path(buf, size, "%s%s%s", symbols->symfs,
	                 len && symbols->symfs[len - 1] != '/' && path[0] != '/' ? "/" : "", path))
		buf[0] = 0;
}

/* The build-id cache entry: ~/.debug/.build-id/xx/rest, a link to the
 * directory holding elf/debug/vdso (old caches: the file itself). */
static bool build_id_cache_path(const struct ps_dso *dso, const char *file_name, char *buf,
                                size_t size)
{
	const struct ps_symbols *symbols = dso->owner;
	char hex[2 * PS_BUILD_ID_MAX + 1];

	if (!dso->build_id_size)
		return false;
	ps_build_id_hex(dso->build_id, dso->build_id_size, hex);
	if (!format_path(buf, size, "%s/.build-id/%.2s/%s", symbols->buildid_dir, hex, hex + 2))
		return false;
	if (is_regular_file(symbols, buf))
		return true;
	if (strlen(buf) + strlen(file_name) + 2 > size)
		return false;
	strcat(buf, "/");
	strcat(buf, dso->kind == DSO_VDSO && strcmp(file_name, "elf") == 0 ? "vdso" : file_name);
	return true;
}

/* Opens path for the DSO once, reading it from file; NULL when missing,
 * not ELF, or of another build-id. A file opened is reported to the file
 * observer as kind. */
static struct ps_elf *open_candidate_file(struct ps_dso *dso, const char *path, const char *file,
                                          enum ps_file_kind kind)
{
	char err[PS_ERRMSG_MAX];
	struct ps_elf *elf;
	struct stat st;

	for (size_t i = 0; i < dso->nr_opened; i++)
		if (strcmp(dso->opened[i]->path, path) == 0)
			return dso->opened[i];
	if (!file || stat(file, &st) != 0 || !S_ISREG(st.st_mode) ||
	    dso->nr_opened == sizeof(dso->opened) / sizeof(dso->opened[0]))
		return NULL;
	int rc = ps_elf_open_file(path, file, &elf, err, sizeof(err));
	if (rc < 0) {
		/* once per DSO; a mapped data file that is not ELF at all (a
		 * locale archive, ld.so.cache) is normal and only said with -v */
		if (!dso->errmsg[0]) {
			log_msg(dso->owner, rc == -ENOEXEC ? PS_LOG_INFO : PS_LOG_WARN,
			        "symbols: %s", err);
			snprintf(dso->errmsg, sizeof(dso->errmsg), "%s", err);
		}
		return NULL;
	}
	if (dso->build_id_size && !ps_build_id_equal(dso->build_id, dso->build_id_size,
	                                             elf->build_id, elf->build_id_size)) {
		if (dso->build_id_recorded && !dso->warned_build_id) {
			char want[2 * PS_BUILD_ID_MAX + 1], have[2 * PS_BUILD_ID_MAX + 1];

			ps_build_id_hex(dso->build_id, dso->build_id_size, want);
			ps_build_id_hex(elf->build_id, elf->build_id_size, have);
			dso->warned_build_id = true;
			log_msg(dso->owner, PS_LOG_WARN,
			        "symbols: %s: build-id mismatch: recorded %s, %s has %s; file not "
			        "used",
			        dso->name, want, path, elf->build_id_size ? have : "none");
			snprintf(dso->errmsg, sizeof(dso->errmsg),
			         "%s: build-id mismatch: recorded %s, %s has %s", dso->name, want,
			         path, elf->build_id_size ? have : "none");
		}
		ps_elf_close(elf);
		return NULL;
	}
	dso->opened[dso->nr_opened++] = elf;
	ps_file_note_used(&dso->owner->files, path, file, kind);
	return elf;
}

static struct ps_elf *open_candidate(struct ps_dso *dso, const char *path, enum ps_file_kind kind)
{
	return open_candidate_file(dso, path, ps_file_local(&dso->owner->files, path), kind);
}

enum candidate {
	CAND_DEBUGLINK,
	CAND_BUILD_ID_CACHE,
	CAND_BUILD_ID_CACHE_DEBUG,
	CAND_FEDORA,
	CAND_UBUNTU,
	CAND_BUILDID_DEBUGINFO,
	CAND_SYSTEM_PATH,
	CAND_OPENEMBEDDED,
	CAND_MIXEDUP_UBUNTU,
	CAND_COUNT
};

/* perf's binary_type_symtab order; false when the candidate does not apply. */
static bool candidate_path(struct ps_dso *dso, enum candidate which, char *buf, size_t size)
{
	const struct ps_symbols *symbols = dso->owner;
	char base[4096], hex[2 * PS_BUILD_ID_MAX + 1];
	const char *path = dso->name;

	switch (which) {
	case CAND_DEBUGLINK: {
		char link[1024], dir[4096];
		struct ps_elf *elf;
		char *slash;
		static const char *const formats[] = { "%.0s%s", "%s/%s", "%s/.debug/%s",
			                               "/usr/lib/debug%s/%s" };

		join_symfs(symbols, path, base, sizeof(base));
		elf = open_candidate(dso, base, PS_FILE_ELF);
		if (!elf || !ps_elf_debuglink(elf, link, sizeof(link)))
			return false;
		memcpy(dir, base, sizeof(dir));
		slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else
			dir[0] = 0;
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			bool fits;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			fits = format_path(buf, size, formats[i], dir, link);
#pragma GCC diagnostic pop
			if (fits && is_regular_file(symbols, buf))
				return true;
		}
		return false;
	}
	case CAND_BUILD_ID_CACHE:
		return build_id_cache_path(dso, "elf", buf, size);
	case CAND_BUILD_ID_CACHE_DEBUG:
		return build_id_cache_path(dso, "debug", buf, size);
	case CAND_FEDORA:
		join_symfs(symbols, "/usr/lib/debug", base, sizeof(base));
		return format_path(buf, size, "%s%s.debug", base, path);
	case CAND_UBUNTU:
		join_symfs(symbols, "/usr/lib/debug", base, sizeof(base));
		return format_path(buf, size, "%s%s", base, path);
	case CAND_BUILDID_DEBUGINFO:
		if (!dso->build_id_size)
			return false;
		ps_build_id_hex(dso->build_id, dso->build_id_size, hex);
		join_symfs(symbols, "/usr/lib/debug/.build-id/", base, sizeof(base));
		return format_path(buf, size, "%s%.2s/%s.debug", base, hex, hex + 2);
	case CAND_SYSTEM_PATH:
		join_symfs(symbols, path, buf, size);
		return true;
	case CAND_OPENEMBEDDED: {
		const char *slash = strrchr(path, '/');

		if (!slash)
			return false;
		join_symfs(symbols, "", base, sizeof(base));
		return format_path(buf, size, "%s%.*s.debug%s", base, (int)(slash - path + 1), path,
		                   slash);
	}
	case CAND_MIXEDUP_UBUNTU:
		if (strncmp(path, "/usr/lib/", 9) != 0)
			return false;
		join_symfs(symbols, "/usr/lib/debug", base, sizeof(base));
		return format_path(buf, size, "%s%s", base, path + 4);
	default:
		return false;
	}
}

/* The length of the mapping at base from the "[vdso]" line of
 * /proc/self/maps; 0 when not found. */
static size_t own_vdso_size(uintptr_t base)
{
	char line[512];
	size_t size = 0;
	FILE *maps = fopen("/proc/self/maps", "r");

	if (!maps)
		return 0;
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long start, end;
		size_t len = strcspn(line, "\n");

		line[len] = 0;
		if (len < 6 || strcmp(line + len - 6, "[vdso]") != 0)
			continue;
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && start == base && end > start)
			size = (size_t)(end - start);
		break;
	}
	fclose(maps);
	return size;
}

/* perf with no build-id for "[vdso]" (pipe mode) uses a copy of its own
 * process's vdso (util/vdso.c, /tmp/perf-vdso.so-XXXXXX): do the same with
 * ours, written once per session to a private file removed by
 * ps_symbols_free(). NULL when it cannot be had. */
static const char *own_vdso_file(struct ps_symbols *symbols)
{
	const char *tmpdir = getenv("TMPDIR");
	uintptr_t base;
	size_t size, done = 0;
	char *path;
	int fd;

	/* reading an archive: the copy made when it was written */
	if (symbols->files.resolve)
		return symbols->files.resolve(symbols->files.resolve_ctx, OWN_VDSO_NAME);
	if (symbols->own_vdso_tried)
		return symbols->own_vdso;
	symbols->own_vdso_tried = true;
	base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	if (!base || !(size = own_vdso_size(base)))
		return NULL;
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	path = malloc(strlen(tmpdir) + sizeof("/pystitch-vdso.so-XXXXXX"));
	if (!path)
		return NULL;
	sprintf(path, "%s/pystitch-vdso.so-XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0) {
		log_msg(symbols, PS_LOG_INFO, "symbols: [vdso]: cannot create %s: %s", path,
		        strerror(errno));
		free(path);
		return NULL;
	}
	while (done < size) {
		ssize_t n = write(fd, (const char *)base + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (close(fd) != 0 || done < size) {
		log_msg(symbols, PS_LOG_INFO, "symbols: [vdso]: cannot write %s", path);
		unlink(path);
		free(path);
		return NULL;
	}
	symbols->own_vdso = path;
	return path;
}

static void locate_user(struct ps_dso *dso)
{
	char path[4096];
	struct ps_elf *elf;

	/* perf reads the build-id of the file itself when none was recorded */
	if (!dso->build_id_size && dso->kind == DSO_USER) {
		join_symfs(dso->owner, dso->name, path, sizeof(path));
		elf = open_candidate(dso, path, PS_FILE_ELF);
		if (elf && elf->build_id_size) {
			memcpy(dso->build_id, elf->build_id, elf->build_id_size);
			dso->build_id_size = elf->build_id_size;
		}
	}
	/* the code: binary_type_data = build-id cache, then the system path */
	if (candidate_path(dso, CAND_BUILD_ID_CACHE, path, sizeof(path)))
		dso->data = open_candidate(dso, path, PS_FILE_ELF);
	if (!dso->data && candidate_path(dso, CAND_SYSTEM_PATH, path, sizeof(path)))
		dso->data = open_candidate(dso, path, PS_FILE_ELF);
	/* no build-id recorded for the vdso: perf uses its own */
	if (!dso->data && dso->kind == DSO_VDSO && !dso->build_id_recorded) {
		const char *own = own_vdso_file(dso->owner);

		if (own && (dso->data = open_candidate_file(dso, OWN_VDSO_NAME, own,
		                                            PS_FILE_ELF)) != NULL) {
			if (dso->data->symtab_index >= 0)
				dso->syms = dso->data;
			if (dso->data->dynsym_index >= 0)
				dso->runtime = dso->data;
		}
	}
	/* the symbols: first file with .symtab, first with .dynsym */
	for (int which = 0; which < CAND_COUNT && !(dso->syms && dso->runtime); which++) {
		if (!candidate_path(dso, (enum candidate)which, path, sizeof(path)))
			continue;
		elf = open_candidate(dso, path,
		                     which == CAND_SYSTEM_PATH || which == CAND_BUILD_ID_CACHE
		                             ? PS_FILE_ELF
		                             : PS_FILE_DEBUGINFO);
		if (!elf)
			continue;
		if (!dso->syms && elf->symtab_index >= 0)
			dso->syms = elf;
		if (!dso->runtime && elf->dynsym_index >= 0)
			dso->runtime = elf;
	}
	if (!dso->syms && !dso->runtime) {
		/* nothing at all found (not: found but unusable, said already) */
		if (dso->kind == DSO_USER && !dso->errmsg[0])
			ps_file_note_used(&dso->owner->files, dso->name, NULL, PS_FILE_ELF);
		if (!dso->errmsg[0])
			snprintf(dso->errmsg, sizeof(dso->errmsg),
			         "%s: no ELF file with symbols found", dso->name);
		return;
	}
	/* addr2line runs on the file symbols came from if it had .symtab,
	 * else on the recorded path itself */
	if (dso->syms)
		dso->a2l_file = dso->syms;
	else if (dso->kind == DSO_USER)
		dso->a2l_file = open_candidate(dso, dso->name, PS_FILE_ELF);
	if (!dso->syms)
		dso->syms = dso->runtime;
	if (!dso->runtime)
		dso->runtime = dso->syms;
	if (ps_symtab_load_dso(&dso->symtab, dso->syms, dso->runtime, dso->errmsg,
	                       sizeof(dso->errmsg)) > 0)
		dso->has_symtab = true;
	else
		log_msg(dso->owner, PS_LOG_INFO, "symbols: %s", dso->errmsg);
	dso->text_offset = ps_elf_text_offset(dso->runtime);
	if (dso->kind == DSO_VDSO)
		dso->a2l_file = NULL; /* perf never runs addr2line on "[...]" */
}

static void locate(struct ps_dso *dso)
{
	if (dso->located)
		return;
	dso->located = true;
	if (dso->kind == DSO_USER || dso->kind == DSO_VDSO)
		locate_user(dso);
	else if (dso->kind == DSO_NONE)
		snprintf(dso->errmsg, sizeof(dso->errmsg), "%s: no symbols for this mapping",
		         dso->name);
}

const char *ps_dso_file(struct ps_dso *dso)
{
	locate(dso);
	return dso->data ? dso->data->file : NULL;
}

const char *ps_dso_symbol_file(struct ps_dso *dso)
{
	locate(dso);
	return dso->has_symtab ? dso->syms->file : NULL;
}

const char *ps_dso_errmsg(struct ps_dso *dso)
{
	locate(dso);
	return dso->errmsg[0] ? dso->errmsg : NULL;
}

/* ------------------------------------------------------------------ */
/* kernel symbols */

/* perf's dso__load_kernel_sym, without vmlinux_path and kcore. */
static void load_kernel(struct ps_symbols *symbols)
{
	const struct ps_dso *kdso = symbols->kernel_dso;
	struct ps_kernel_source source = {
		.kallsyms = symbols->kallsyms,
		.vmlinux = symbols->vmlinux,
		.build_id = kdso ? kdso->build_id : NULL,
		.build_id_size = kdso ? kdso->build_id_size : 0,
		.buildid_dir = symbols->buildid_dir,
		.symfs = symbols->symfs,
		.files = &symbols->files,
	};
	struct ps_kernel_load_result result = { 0 };

	symbols->kernel_tried = true;
	if (ps_kernel_symbols_load(&source, &symbols->kernel, &result) < 0) {
		log_msg(symbols, PS_LOG_WARN, "symbols: kernel: %s", result.err);
		return;
	}
	if (result.bad_lines)
		log_msg(symbols, PS_LOG_WARN, "symbols: kernel: %s", result.err);
	if (symbols->have_reloc)
		ps_kernel_symbols_reloc(symbols->kernel, symbols->reloc_name, symbols->reloc_addr);
}

int ps_symbols_kernel_reloc(struct ps_symbols *symbols, const char *ref_name, uint64_t ref_addr)
{
	char *name = strdup(ref_name);

	if (!name)
		return -ENOMEM;
	free(symbols->reloc_name);
	symbols->reloc_name = name;
	symbols->reloc_addr = ref_addr;
	symbols->have_reloc = true;
	if (symbols->kernel)
		return ps_kernel_symbols_reloc(symbols->kernel, ref_name, ref_addr);
	return 0;
}

/* ------------------------------------------------------------------ */
/* resolving, with a cache per DSO and address */

static size_t cache_hash(uint64_t addr, bool chain)
{
	return (size_t)((addr * 2 + chain) * 0x9e3779b97f4a7c15ull >> 20);
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

static const char *addr_srcline(struct ps_dso *dso, uint64_t addr)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s[%llx]", dso->module ? dso->module : dso->short_name,
	         (unsigned long long)addr);
	return ps_arena_strndup(&dso->arena, buf, sizeof(buf));
}

static size_t resolve_user(struct ps_dso *dso, uint64_t addr, bool chain,
                           struct ps_frame_name *frames)
{
	struct ps_symbols *symbols = dso->owner;
	struct ps_addr2line_record *records = symbols->records;
	const struct ps_sym *sym = dso->has_symtab ? ps_symtab_find(&dso->symtab, addr) : NULL;
	bool want_chain = sym && chain;
	size_t nr_records = 0, n;

	if (dso->a2l_file && !dso->a2l && (want_chain || symbols->srcline)) {
		if (ps_addr2line_open(dso->a2l_file, &dso->a2l) < 0)
			dso->a2l_file = NULL;
	}
	if (dso->a2l && (want_chain || symbols->srcline))
		nr_records = ps_addr2line_query(dso->a2l, addr + dso->text_offset, records,
		                                PS_INLINE_MAX);
	if (want_chain && nr_records > 0) {
		n = ps_inline_frames(records, nr_records, sym->name, addr - sym->start,
		                     symbols->srcline, &dso->arena, frames, PS_INLINE_MAX);
		if (n > 0)
			return n;
	}
	frames[0].sym = sym ? sym->name : NULL;
	frames[0].offset = sym ? addr - sym->start : 0;
	frames[0].inlined = false;
	frames[0].srcline = NULL;
	if (symbols->srcline) {
		if (nr_records > 0)
			frames[0].srcline =
			        ps_inline_plain_srcline(records, nr_records, &dso->arena);
		else
			frames[0].srcline = addr_srcline(dso, addr + dso->text_offset);
	}
	return 1;
}

static size_t resolve_kernel(struct ps_dso *dso, uint64_t addr, struct ps_frame_name *frames)
{
	struct ps_symbols *symbols = dso->owner;
	const struct ps_sym *sym = NULL;
	uint64_t symbol_addr = addr;

	if (!symbols->kernel_tried)
		load_kernel(symbols);
	if (symbols->kernel)
		sym = ps_kernel_symbols_find(symbols->kernel, dso->module, addr, &symbol_addr);
	frames[0].sym = sym ? sym->name : NULL;
	frames[0].offset = sym ? symbol_addr - sym->start : 0;
	frames[0].inlined = false;
	frames[0].srcline = symbols->srcline ? addr_srcline(dso, addr) : NULL;
	return 1;
}

size_t ps_dso_resolve(struct ps_dso *dso, uint64_t addr, bool inline_frames,
                      struct ps_frame_name *out, size_t max)
{
	struct ps_frame_name *frames = dso->owner->frames;
	bool chain = inline_frames && !dso->owner->no_inline &&
	             (dso->kind == DSO_USER || dso->kind == DSO_VDSO);
	struct cached *value;
	size_t n;

	if (max == 0)
		return 0;
	value = cache_find(dso, addr, chain);
	if (!value) {
		locate(dso);
		switch (dso->kind) {
		case DSO_USER:
		case DSO_VDSO:
			n = resolve_user(dso, addr, chain, frames);
			break;
		case DSO_KERNEL:
		case DSO_MODULE:
			n = resolve_kernel(dso, addr, frames);
			break;
		default:
			frames[0] = (struct ps_frame_name){ 0 };
			if (dso->owner->srcline)
				frames[0].srcline = addr_srcline(dso, addr);
			n = 1;
			break;
		}
		value = ps_arena_alloc(&dso->arena, sizeof(*value) + n * sizeof(value->frames[0]));
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
