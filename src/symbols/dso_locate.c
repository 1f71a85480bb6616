/* Finding a DSO's files in perf's order (util/dso.c
 * dso__read_binary_type_filename, util/symbol.c dso__load): under
 * --symfs, in the build-id cache, at the recorded path, then separate
 * debug files; build-id checks with one warning per DSO. Every lookup goes
 * through the file hooks, so an archive's files replace the machine's. */
#include "symbols/dso_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/message.h"

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

/* Say once why the DSO has no symbols (ps_dso_errmsg()). Out of memory,
 * nothing is said: the DSO still resolves as it would, unexplained. */
static void set_errmsg(struct ps_dso *dso, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void set_errmsg(struct ps_dso *dso, const char *fmt, ...)
{
	char msg[PS_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	ps_vformat(msg, sizeof(msg), NULL, fmt, ap);
	va_end(ap);
	free(dso->errmsg);
	dso->errmsg = strdup(msg);
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

bool ps_dso_join(const char *tree, const char *path, char *buf, size_t size)
{
	size_t len = strlen(tree);

	if (len && tree[len - 1] == '/' && path[0] == '/')
		path++;
	if (format_path(buf, size, "%s%s%s", tree,
	                len && tree[len - 1] != '/' && path[0] != '/' ? "/" : "", path))
		return true;
	buf[0] = 0;
	return false;
}

/* perf's __symbol__join_symfs, under the DSO's tree (its process's root,
 * the --symfs tree that holds it, or the first) */
static void join_symfs(const struct ps_dso *dso, const char *path, char *buf, size_t size)
{
	ps_dso_join(dso->tree ? dso->tree : dso->owner->symfs, path, buf, size);
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
 * observer as kind, as used (file, or what file was made from). */
static struct ps_elf *open_candidate_as(struct ps_dso *dso, const char *path, const char *file,
                                        const char *used, enum ps_file_kind kind)
{
	char err[PS_MSG_MAX];
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
		/* once per DSO. A mapped data file that is not ELF at all (a
		 * locale archive, ld.so.cache, gconv-modules.cache) is normal:
		 * every mapping a process makes is looked up when it arrives,
		 * for the unwinder to see what it replaces, so -v would list each
		 * such file; it is said at -vv (debug) only */
		if (!dso->errmsg) {
			ps_symbols_log(dso->owner, rc == -ENOEXEC ? PS_LOG_DEBUG : PS_LOG_WARN,
			               "symbols: %s", err);
			set_errmsg(dso, "%s", err);
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
			ps_symbols_log(
			        dso->owner, PS_LOG_WARN,
			        "symbols: %s: build-id mismatch: recorded %s, %s has %s; file not "
			        "used",
			        dso->name, want, path, elf->build_id_size ? have : "none");
			set_errmsg(dso, "%s: build-id mismatch: recorded %s, %s has %s", dso->name,
			           want, path, elf->build_id_size ? have : "none");
		}
		ps_elf_close(elf);
		return NULL;
	}
	dso->opened[dso->nr_opened++] = elf;
	ps_ahead_offer(dso->owner->ahead, elf);
	ps_file_note_used(&dso->owner->files, path, used, kind);
	return elf;
}

static struct ps_elf *open_candidate_file(struct ps_dso *dso, const char *path, const char *file,
                                          enum ps_file_kind kind)
{
	return open_candidate_as(dso, path, file, file, kind);
}

static struct ps_elf *open_candidate(struct ps_dso *dso, const char *path, enum ps_file_kind kind)
{
	return open_candidate_file(dso, path, ps_file_local(&dso->owner->files, path), kind);
}

struct ps_elf *ps_dso_open_candidate(struct ps_dso *dso, const char *path)
{
	return open_candidate(dso, path, PS_FILE_ELF);
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

		join_symfs(dso, path, base, sizeof(base));
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
		join_symfs(dso, "/usr/lib/debug", base, sizeof(base));
		return format_path(buf, size, "%s%s.debug", base, path);
	case CAND_UBUNTU:
		join_symfs(dso, "/usr/lib/debug", base, sizeof(base));
		return format_path(buf, size, "%s%s", base, path);
	case CAND_BUILDID_DEBUGINFO:
		if (!dso->build_id_size)
			return false;
		ps_build_id_hex(dso->build_id, dso->build_id_size, hex);
		join_symfs(dso, "/usr/lib/debug/.build-id/", base, sizeof(base));
		return format_path(buf, size, "%s%.2s/%s.debug", base, hex, hex + 2);
	case CAND_SYSTEM_PATH:
		join_symfs(dso, path, buf, size);
		return true;
	case CAND_OPENEMBEDDED: {
		const char *slash = strrchr(path, '/');

		if (!slash)
			return false;
		join_symfs(dso, "", base, sizeof(base));
		return format_path(buf, size, "%s%.*s.debug%s", base, (int)(slash - path + 1), path,
		                   slash);
	}
	case CAND_MIXEDUP_UBUNTU:
		if (strncmp(path, "/usr/lib/", 9) != 0)
			return false;
		join_symfs(dso, "/usr/lib/debug", base, sizeof(base));
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
	size_t size;
	int written;
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
		ps_symbols_log(symbols, PS_LOG_INFO, "symbols: [vdso]: cannot create %s: %s", path,
		               strerror(errno));
		free(path);
		return NULL;
	}
	written = ps_symbols_write_all(fd, (const void *)base, size);
	if (close(fd) != 0 || written < 0) {
		ps_symbols_log(symbols, PS_LOG_INFO, "symbols: [vdso]: cannot write %s", path);
		unlink(path);
		free(path);
		return NULL;
	}
	symbols->own_vdso = path;
	return path;
}

/* Whether perf reads "[vdso]" from its copy of its own vdso: when the
 * capture recorded no build-id for it (util/vdso.c: the DSO perf makes for
 * a [vdso] map it has no DSO of is /tmp/perf-vdso.so-XXXXXX). perf looks
 * for that file under --symfs like any other, and a symfs has no such
 * file. */
static bool own_vdso_applies(const struct ps_dso *dso)
{
	return dso->kind == DSO_VDSO && !dso->build_id_recorded && !dso->owner->symfs[0];
}

/* What perf's open_dso() and dso__type_fd() make of one candidate: -1 no
 * regular file there to open (perf tries the next candidate), 0 opened but
 * not a 64-bit ELF, 1 a 64-bit ELF. libelf decides, as in perf. An ELF
 * file is noted as used, so that an archive carries it and its reader
 * gets the same answer. */
static int candidate_elf64(struct ps_dso *dso, const char *path, const char *file)
{
	struct stat st;
	int fd, is64 = 0;
	Elf *elf;

	if (!file || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ps_elf_library_init();
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		is64 = gelf_getclass(elf) == ELFCLASS64;
		ps_file_note_used(&dso->owner->files, path, file, PS_FILE_ELF);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return is64;
}

/* perf's try_to_open_dso() order for the DSO's contents: the build-id
 * cache, then --symfs + path (or perf's own vdso), the first that opens
 * deciding, whatever its build-id. */
static bool data_elf64(struct ps_dso *dso)
{
	char path[4096];
	int found = -1;

	ps_dso_choose_tree(dso);
	if (dso->build_id_recorded && candidate_path(dso, CAND_BUILD_ID_CACHE, path, sizeof(path)))
		found = candidate_elf64(dso, path, ps_file_local(&dso->owner->files, path));
	if (found < 0 && own_vdso_applies(dso))
		found = candidate_elf64(dso, OWN_VDSO_NAME, own_vdso_file(dso->owner));
	else if (found < 0 && candidate_path(dso, CAND_SYSTEM_PATH, path, sizeof(path)))
		found = candidate_elf64(dso, path, ps_file_local(&dso->owner->files, path));
	return found > 0;
}

bool ps_dso_is_elf64(struct ps_dso *dso)
{
	if (!dso->elf64)
		dso->elf64 = data_elf64(dso) ? 1 : -1;
	return dso->elf64 > 0;
}

int ps_symbols_write_all(int fd, const void *buf, size_t size)
{
	const char *p = buf;

	while (size) {
		ssize_t n = write(fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* kernel modules */

/* a path perf reads a module from: .ko, or one in a compression it takes */
static bool module_file_name(const char *path)
{
	size_t n = strlen(path);

	return (n >= 3 && strcmp(path + n - 3, ".ko") == 0) ||
	       ps_kmod_compression(path) != PS_KMOD_PLAIN;
}

/* A module's candidate file, decompressed first when the module's name
 * says it is compressed and the file has that compression's magic (perf's
 * symsrc__init() and __open_dso() of a _KMODULE_COMP DSO); the archive
 * packs the file as it was found. */
static struct ps_elf *open_module_candidate(struct ps_dso *dso, const char *path,
                                            enum ps_file_kind kind)
{
	enum ps_kmod_comp comp = ps_kmod_compression(dso->module_path);
	const char *file = ps_file_local(&dso->owner->files, path);
	char err[PS_MSG_MAX], memory[64];
	struct ps_elf *elf;
	struct stat st;
	int fd;

	if (comp == PS_KMOD_PLAIN || !file || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return open_candidate_file(dso, path, file, kind);
	for (size_t i = 0; i < dso->nr_opened; i++)
		if (strcmp(dso->opened[i]->path, path) == 0)
			return dso->opened[i];
	if (ps_kmod_decompress(path, file, comp, &dso->owner->kmod_bytes, &fd, err, sizeof(err)) <
	    0) {
		/* perf goes on without the file, to kallsyms's symbols */
		if (!dso->errmsg) {
			ps_symbols_log(dso->owner, PS_LOG_WARN, "symbols: %s", err);
			set_errmsg(dso, "%s", err);
		}
		return NULL;
	}
	if (fd < 0)
		return open_candidate_file(dso, path, file, kind);
	snprintf(memory, sizeof(memory), "/proc/self/fd/%d", fd);
	elf = open_candidate_as(dso, path, memory, file, kind);
	close(fd); /* libelf has the contents mapped */
	return elf;
}

struct ps_elf *ps_dso_module_file(struct ps_dso *dso)
{
	char path[4096];
	struct ps_elf *elf = NULL;

	/* perf's kmod candidates: the build-id cache (elf, then debug),
	 * then the recorded path under --symfs, each decompressed first
	 * when the module's name ends in a compression's (.ko.xz, .ko.gz) */
	if (dso->build_id_recorded) {
		if (candidate_path(dso, CAND_BUILD_ID_CACHE, path, sizeof(path)))
			elf = open_module_candidate(dso, path, PS_FILE_ELF);
		if ((!elf || elf->symtab_index < 0) &&
		    candidate_path(dso, CAND_BUILD_ID_CACHE_DEBUG, path, sizeof(path)))
			elf = open_module_candidate(dso, path, PS_FILE_DEBUGINFO);
	}
	if ((!elf || elf->symtab_index < 0) && dso->module_path &&
	    module_file_name(dso->module_path)) {
		join_symfs(dso, dso->module_path, path, sizeof(path));
		if (path[0])
			elf = open_module_candidate(dso, path, PS_FILE_ELF);
	}
	return elf && elf->symtab_index >= 0 ? elf : NULL;
}

/* ------------------------------------------------------------------ */
/* the contents perf reads (dso__data_read_offset) */

/* perf's try_to_open_dso() for the DSO's contents: the first of the
 * build-id cache entry, perf's own vdso and --symfs + path that is a
 * regular file, whatever its build-id and whether ELF or not. */
static void find_code_file(struct ps_dso *dso)
{
	char path[4096];
	const char *file = NULL;
	uint64_t text_offset;

	dso->code_tried = true;
	if (dso->kind == DSO_MODULE && dso->module_path) {
		/* the module's file; a compressed one is read decompressed,
		 * from its ELF image kept with the DSO's files */
		if (dso->build_id_recorded &&
		    candidate_path(dso, CAND_BUILD_ID_CACHE, path, sizeof(path)) &&
		    is_regular_file(dso->owner, path)) {
			file = ps_file_local(&dso->owner->files, path);
		} else if (module_file_name(dso->module_path)) {
			join_symfs(dso, dso->module_path, path, sizeof(path));
			if (path[0] && is_regular_file(dso->owner, path))
				file = ps_file_local(&dso->owner->files, path);
		}
		if (file && ps_kmod_compression(dso->module_path) != PS_KMOD_PLAIN &&
		    !open_module_candidate(dso, path, PS_FILE_ELF))
			file = NULL;
		goto found;
	}
	if (dso->kind == DSO_KERNEL && strcmp(dso->name, "[kernel.kallsyms]") == 0 &&
	    dso->owner->vmlinux && dso->owner->kernel_map_loaded &&
	    ps_symbols_kernel_vmlinux(dso->owner, &text_offset)) {
		/* the vmlinux, under --symfs unless its path is absolute */
		if (dso->owner->vmlinux[0] == '/')
			snprintf(path, sizeof(path), "%s", dso->owner->vmlinux);
		else
			join_symfs(dso, dso->owner->vmlinux, path, sizeof(path));
		if (path[0] && is_regular_file(dso->owner, path))
			file = ps_file_local(&dso->owner->files, path);
		goto found;
	}
	if (dso->kind != DSO_USER && dso->kind != DSO_VDSO)
		return; /* kallsyms has no contents; "[...]" and //anon no file */
	if (dso->build_id_recorded &&
	    candidate_path(dso, CAND_BUILD_ID_CACHE, path, sizeof(path)) &&
	    is_regular_file(dso->owner, path))
		file = ps_file_local(&dso->owner->files, path);
	if (!file && own_vdso_applies(dso)) {
		snprintf(path, sizeof(path), "%s", OWN_VDSO_NAME);
		file = own_vdso_file(dso->owner);
	} else if (!file && candidate_path(dso, CAND_SYSTEM_PATH, path, sizeof(path)) &&
	           is_regular_file(dso->owner, path)) {
		file = ps_file_local(&dso->owner->files, path);
	}
found:
	if (!file)
		return;
	dso->code_path = strdup(path);
	dso->code_file = strdup(file);
	if (!dso->code_path || !dso->code_file) {
		free(dso->code_path);
		free(dso->code_file);
		dso->code_path = dso->code_file = NULL;
		return;
	}
	ps_file_note_used(&dso->owner->files, path, file, PS_FILE_ELF);
}

ssize_t ps_dso_read_code(struct ps_dso *dso, uint64_t offset, void *buf, size_t size)
{
	ssize_t n;
	int fd;

	if (!dso->code_tried)
		find_code_file(dso);
	if (!dso->code_file)
		return -1;
	/* the file is mostly one of the DSO's ELF files, already mapped */
	for (size_t i = 0; i < dso->nr_opened; i++) {
		const struct ps_elf *elf = dso->opened[i];

		if (strcmp(elf->path, dso->code_path) != 0)
			continue;
		if (offset > elf->image_size)
			return -1;
		n = (ssize_t)(elf->image_size - offset < size ? elf->image_size - offset : size);
		memcpy(buf, elf->image + offset, (size_t)n);
		return n;
	}
	fd = open(dso->code_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	do
		n = pread(fd, buf, size, (off_t)offset);
	while (n < 0 && errno == EINTR);
	close(fd);
	return n;
}

bool ps_dso_code_is64(struct ps_dso *dso)
{
	ps_dso_locate(dso);
	/* perf's dso->is_64_bit: the class of the file symbols were read
	 * from, 64-bit when none was */
	if (dso->syms && (dso->syms->symtab_index >= 0 || dso->syms->dynsym_index >= 0))
		return dso->syms->is64;
	return true;
}

static bool has_debug_frame(const struct ps_elf *elf)
{
	int index = ps_elf_section_by_name(elf, ".debug_frame");

	return index >= 0 && elf->sections[index].in_file && elf->sections[index].size > 0;
}

/* Reading an archive: the symbol answers it carries in place of the
 * debug file at path (see names.c). True when path holds such a table
 * (loaded, or refused with a warning: the debug file is not there either). */
static bool load_names(struct ps_dso *dso, const char *path)
{
	const char *local;
	char err[PS_MSG_MAX];

	if (!dso->owner->files.resolve || dso->names)
		return false;
	local = ps_file_local(&dso->owner->files, path);
	if (!local || !ps_names_detect(local))
		return false;
	if (ps_names_load(path, local, &dso->names, err, sizeof(err)) < 0) {
		ps_symbols_log(dso->owner, PS_LOG_WARN, "symbols: %s", err);
		set_errmsg(dso, "%s", err);
	}
	return true;
}

static void locate_user(struct ps_dso *dso)
{
	char path[4096];
	struct ps_elf *elf;
	bool syms_debug = false;
	char err[PS_MSG_MAX];

	/* perf reads the build-id of the file itself when none was recorded */
	if (!dso->build_id_size && dso->kind == DSO_USER) {
		join_symfs(dso, dso->name, path, sizeof(path));
		elf = open_candidate(dso, path, PS_FILE_ELF);
		if (elf && elf->build_id_size) {
			memcpy(dso->build_id, elf->build_id, elf->build_id_size);
			dso->build_id_size = elf->build_id_size;
		}
	}
	/* the code: binary_type_data = build-id cache, then the system path.
	 * perf opens a DSO's data (to unwind, or to tell its ELF class when
	 * it is mapped) before it loads its symbols, which is what reads the
	 * file's own build-id: without a recorded one the data is the file
	 * at its path (a debug file shares its library's build-id, and the
	 * cache entry under that id is the library) */
	if (dso->build_id_recorded && candidate_path(dso, CAND_BUILD_ID_CACHE, path, sizeof(path)))
		dso->data = open_candidate(dso, path, PS_FILE_ELF);
	if (!dso->data && candidate_path(dso, CAND_SYSTEM_PATH, path, sizeof(path)))
		dso->data = open_candidate(dso, path, PS_FILE_ELF);
	/* no build-id recorded for the vdso: perf uses its own */
	if (!dso->data && own_vdso_applies(dso)) {
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
		bool debug = which != CAND_SYSTEM_PATH && which != CAND_BUILD_ID_CACHE;

		if (!candidate_path(dso, (enum candidate)which, path, sizeof(path)))
			continue;
		if (debug && load_names(dso, path))
			continue;
		elf = open_candidate(dso, path, debug ? PS_FILE_DEBUGINFO : PS_FILE_ELF);
		if (!elf)
			continue;
		if (!dso->syms && elf->symtab_index >= 0) {
			dso->syms = elf;
			syms_debug = debug;
		}
		if (!dso->runtime && elf->dynsym_index >= 0)
			dso->runtime = elf;
	}
	/* The unwinder is given the debug file too: with a .debug_frame of
	 * its own, CFI the library lacks may come from it, so it is code,
	 * which an archive must carry, not only a source of names. */
	if (syms_debug && has_debug_frame(dso->syms)) {
		ps_file_note_used(&dso->owner->files, dso->syms->path, dso->syms->file,
		                  PS_FILE_ELF);
		syms_debug = false;
	}
	/* an archive writer gets the answers of the debug file */
	if (syms_debug && dso->owner->record_names && !dso->names) {
		dso->names = ps_names_new();
		dso->recording = dso->names != NULL;
		dso->names_failed = !dso->names;
	}
	if (!dso->syms && !dso->runtime) {
		/* nothing at all found (not: found but unusable, said already) */
		if (dso->kind == DSO_USER && !dso->errmsg)
			ps_file_note_used(&dso->owner->files, dso->name, NULL, PS_FILE_ELF);
		if (!dso->errmsg)
			set_errmsg(dso, "%s: no ELF file with symbols found", dso->name);
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
	dso->symtab.no_demangle = dso->owner->no_demangle;
	if (ps_symtab_load_dso(&dso->symtab, dso->syms, dso->runtime, err, sizeof(err)) > 0) {
		dso->has_symtab = true;
		/* the symbol table is read: only the names in use come back */
		ps_elf_release_pages(dso->syms);
		ps_elf_release_pages(dso->runtime);
		/* an unwinding worker asks which file the symbols are in, not
		 * for names: the table (tens of MB on a busy machine) goes */
		if (dso->owner->names_unused) {
			ps_symtab_release(&dso->symtab);
			ps_symtab_init(&dso->symtab);
			dso->symtab.no_demangle = dso->owner->no_demangle;
			dso->symtab_dropped = true;
		}
	} else {
		set_errmsg(dso, "%s", err);
		ps_symbols_log(dso->owner, PS_LOG_INFO, "symbols: %s", err);
	}
	dso->text_offset = ps_elf_text_offset(dso->runtime);
	if (dso->kind == DSO_VDSO)
		dso->a2l_file = NULL; /* perf never runs addr2line on "[...]" */
	/* an archive's answers replace addr2line on the debug file */
	if (dso->names && !dso->recording)
		dso->a2l_file = NULL;
}

void ps_dso_locate(struct ps_dso *dso)
{
	if (dso->located)
		return;
	dso->located = true;
	ps_dso_choose_tree(dso);
	if (dso->kind == DSO_USER || dso->kind == DSO_VDSO)
		locate_user(dso);
	else if (dso->kind == DSO_NONE)
		set_errmsg(dso, "%s: no symbols for this mapping", dso->name);
}
