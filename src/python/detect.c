/* CPython detection: whether an ELF file is the interpreter (it defines
 * _PyEval_EvalFrameDefault), its version, and the -X perf trampoline
 * template; cached per path. */
#include "python/python_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EVAL_NAME "_PyEval_EvalFrameDefault"
#define MAX_SYMBOLS (8u << 20) /* per table; more is damage */
#define MAX_SCANNED_CODE 1024 /* bytes of Py_GetVersion decoded */
#define MAX_VERSION_TEXT 16 /* "3.13.10rc2+" fits */
#define ERRMSG_SIZE 512

/* ---- names ----------------------------------------------------------- */

/* One clone suffix (".cold", ".part.3", ...) at s; returns its length or 0. */
static size_t clone_suffix(const char *s)
{
	static const char *const numbered[] = { ".part.", ".constprop.", ".isra.", ".lto_priv.",
		                                ".llvm." };
	const char *end;

	if (!strncmp(s, ".cold", 5) && (s[5] == '\0' || s[5] == '.'))
		return 5;
	if (!strncmp(s, ".localalias", 11) && (s[11] == '\0' || s[11] == '.'))
		return 11;
	for (size_t i = 0; i < sizeof(numbered) / sizeof(numbered[0]); i++) {
		size_t len = strlen(numbered[i]);

		if (strncmp(s, numbered[i], len))
			continue;
		end = s + len;
		while (*end >= '0' && *end <= '9')
			end++;
		if (end == s + len || (*end != '\0' && *end != '.'))
			return 0;
		return (size_t)(end - s);
	}
	/* gcc numbers some cold parts: ".cold.123" is ".cold" then ".123" */
	if (s[0] == '.' && s[1] && strspn(s + 1, "0123456789") == strlen(s + 1))
		return strlen(s);
	return 0;
}

enum ps_py_eval_kind ps_py_eval_name_kind(const char *name)
{
	const char *rest;

	/* asked of every native frame of a Python stack: the first byte
	 * turns most names away before a compare */
	if (!name || name[0] != EVAL_NAME[0] || strncmp(name, EVAL_NAME, sizeof(EVAL_NAME) - 1))
		return PS_PY_EVAL_NONE;
	rest = name + sizeof(EVAL_NAME) - 1;
	if (!*rest)
		return PS_PY_EVAL_MAIN;
	while (*rest) {
		size_t len = clone_suffix(rest);

		if (!len)
			return PS_PY_EVAL_NONE;
		rest += len;
	}
	return PS_PY_EVAL_CLONE;
}

/* ---- versions -------------------------------------------------------- */

static bool read_number(const char **p, const char *end, unsigned max_digits, unsigned *out)
{
	unsigned value = 0, count = 0;

	while (*p < end && **p >= '0' && **p <= '9' && count < max_digits) {
		value = value * 10 + (unsigned)(**p - '0');
		(*p)++;
		count++;
	}
	if (!count || (*p < end && **p >= '0' && **p <= '9'))
		return false;
	*out = value;
	return true;
}

/* PY_VERSION as Include/patchlevel.h spells it: MAJOR.MINOR.MICRO, then
 * aN, bN or rcN for pre-releases, then '+' for builds past a tag. */
uint32_t ps_py_parse_version(const char *text, size_t len)
{
	const char *p, *end;
	unsigned major, minor, micro, level = 0xF, serial = 0;

	if (!text)
		return 0;
	p = text;
	end = text + len;
	if (!read_number(&p, end, 1, &major) || (major != 2 && major != 3))
		return 0;
	if (p >= end || *p++ != '.' || !read_number(&p, end, 2, &minor))
		return 0;
	if (p >= end || *p++ != '.' || !read_number(&p, end, 2, &micro))
		return 0;
	if (p < end && (*p == 'a' || *p == 'b' || *p == 'r')) {
		if (*p == 'r') {
			if (end - p < 2 || p[1] != 'c')
				return 0;
			level = 0xC;
			p += 2;
		} else {
			level = *p == 'a' ? 0xA : 0xB;
			p++;
		}
		if (!read_number(&p, end, 2, &serial) || serial > 15)
			return 0;
	}
	if (p < end && *p == '+')
		p++;
	if (p != end)
		return 0;
	return major << 24 | minor << 16 | micro << 8 | level << 4 | serial;
}

static bool valid_hex(uint64_t hex)
{
	unsigned level = (hex >> 4) & 0xF;

	return hex >> 32 == 0 && (hex >> 24) == 3 && level >= 0xA;
}

/* ---- ELF access ------------------------------------------------------ */

struct elf_file {
	const char *path;
	Elf *elf;
	const uint8_t *image;
	size_t size;
	bool little;
	size_t nr_sections;
	GElf_Shdr *sections;
	const char **section_names;
	size_t nr_segments;
	GElf_Phdr *segments;
	char *err; /* ERRMSG_SIZE bytes */
};

static int fail(struct elf_file *f, int rc, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int fail(struct elf_file *f, int rc, const char *fmt, ...)
{
	va_list ap;
	int used = snprintf(f->err, ERRMSG_SIZE, "%s: ", f->path);

	if (used < 0 || used >= ERRMSG_SIZE)
		return rc;
	va_start(ap, fmt);
	vsnprintf(f->err + used, ERRMSG_SIZE - (size_t)used, fmt, ap);
	va_end(ap);
	return rc;
}

static bool in_file(const struct elf_file *f, uint64_t offset, uint64_t size)
{
	return offset <= f->size && size <= f->size - offset;
}

static uint64_t read_uint(const struct elf_file *f, const uint8_t *at, size_t size)
{
	uint64_t value = 0;

	for (size_t i = 0; i < size; i++) {
		size_t byte = f->little ? size - 1 - i : i;

		value = value << 8 | at[byte];
	}
	return value;
}

static int read_headers(struct elf_file *f)
{
	GElf_Ehdr ehdr;
	size_t count = 0, names = 0;

	if (!gelf_getehdr(f->elf, &ehdr))
		return fail(f, -EINVAL, "cannot read the ELF header");
	f->little = ehdr.e_ident[EI_DATA] == ELFDATA2LSB;
	/* libelf quietly sees no sections when their headers are cut off */
	if (ehdr.e_shoff != 0 &&
	    !in_file(f, ehdr.e_shoff,
	             (uint64_t)(ehdr.e_shnum ? ehdr.e_shnum : 1) * ehdr.e_shentsize))
		return fail(f, -EINVAL,
		            "section headers extend past the end of the file (truncated?)");
	if (elf_getshdrnum(f->elf, &count) != 0)
		return fail(f, -EINVAL, "cannot read the section count");
	if (count &&
	    (ehdr.e_shoff == 0 || !in_file(f, ehdr.e_shoff, (uint64_t)count * ehdr.e_shentsize)))
		return fail(f, -EINVAL, "section headers extend past the end of the file");
	if (count > 65536)
		return fail(f, -EINVAL, "%zu sections", count);
	if (elf_getshdrstrndx(f->elf, &names) != 0)
		names = SIZE_MAX;
	f->sections = calloc(count ? count : 1, sizeof(*f->sections));
	f->section_names = calloc(count ? count : 1, sizeof(*f->section_names));
	if (!f->sections || !f->section_names)
		return fail(f, -ENOMEM, "out of memory");
	f->nr_sections = count;
	for (size_t i = 0; i < count; i++) {
		Elf_Scn *scn = elf_getscn(f->elf, i);
		const char *name;

		if (!scn || !gelf_getshdr(scn, &f->sections[i]))
			return fail(f, -EINVAL, "cannot read section header %zu", i);
		name = names == SIZE_MAX ? NULL : elf_strptr(f->elf, names, f->sections[i].sh_name);
		f->section_names[i] = name ? name : "";
	}
	if (elf_getphdrnum(f->elf, &count) != 0)
		count = 0;
	if (count && !in_file(f, ehdr.e_phoff, (uint64_t)count * ehdr.e_phentsize))
		return fail(f, -EINVAL, "program headers extend past the end of the file");
	f->segments = calloc(count ? count : 1, sizeof(*f->segments));
	if (!f->segments)
		return fail(f, -ENOMEM, "out of memory");
	for (size_t i = 0; i < count; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &f->segments[f->nr_segments]))
			return fail(f, -EINVAL, "cannot read program header %zu", i);
		if (f->segments[f->nr_segments].p_type == PT_LOAD)
			f->nr_segments++;
	}
	return 0;
}

/* The file offset of vaddr with size bytes readable from the file there:
 * through the section the symbol names, else the PT_LOAD segments. */
static bool file_offset(const struct elf_file *f, size_t section, uint64_t vaddr, uint64_t size,
                        uint64_t *offset)
{
	if (section < f->nr_sections) {
		const GElf_Shdr *sec = &f->sections[section];

		if (sec->sh_type != SHT_NOBITS && vaddr >= sec->sh_addr &&
		    vaddr - sec->sh_addr <= sec->sh_size &&
		    size <= sec->sh_size - (vaddr - sec->sh_addr)) {
			*offset = sec->sh_offset + (vaddr - sec->sh_addr);
			return in_file(f, *offset, size);
		}
	}
	for (size_t i = 0; i < f->nr_segments; i++) {
		const GElf_Phdr *seg = &f->segments[i];

		if (vaddr >= seg->p_vaddr && vaddr - seg->p_vaddr <= seg->p_filesz &&
		    size <= seg->p_filesz - (vaddr - seg->p_vaddr)) {
			*offset = seg->p_offset + (vaddr - seg->p_vaddr);
			return in_file(f, *offset, size);
		}
	}
	return false;
}

/* A NUL-terminated PY_VERSION at vaddr (it may be the tail of a longer
 * string: linkers merge string suffixes, so "3.8.18" can end
 * "/usr/local/3.8.18"). */
static uint32_t version_at(const struct elf_file *f, uint64_t vaddr)
{
	uint64_t offset;
	size_t len = 0;
	const char *text;

	if (!file_offset(f, SIZE_MAX, vaddr, 1, &offset))
		return 0;
	text = (const char *)f->image + offset;
	while (len < MAX_VERSION_TEXT && offset + len < f->size && text[len])
		len++;
	if (offset + len >= f->size || text[len])
		return 0;
	return ps_py_parse_version(text, len);
}

/* ---- symbols --------------------------------------------------------- */

struct found {
	struct ps_py_interp *info;
	bool eval_in_symtab, eval_in_dynsym;
	bool has_py_version;
	uint64_t py_version_addr, py_version_size;
	size_t py_version_section;
	bool has_get_version;
	uint64_t get_version_addr, get_version_size;
	size_t get_version_section;
	bool has_trampoline_end;
	uint64_t runtime_addr; /* _PyRuntime, 0 when absent */
};

typedef void (*symbol_fn)(struct elf_file *f, const GElf_Sym *sym, const char *name, bool dynsym,
                          void *ctx);

static int for_each_symbol(struct elf_file *f, symbol_fn fn, void *ctx)
{
	size_t sym_size = gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);

	for (size_t i = 0; i < f->nr_sections; i++) {
		const GElf_Shdr *sec = &f->sections[i];
		Elf_Data *data;
		size_t count;

		if (sec->sh_type != SHT_SYMTAB && sec->sh_type != SHT_DYNSYM)
			continue;
		if (!sym_size || !in_file(f, sec->sh_offset, sec->sh_size) ||
		    sec->sh_link >= f->nr_sections)
			return fail(f, -EINVAL, "symbol table %s is damaged", f->section_names[i]);
		data = elf_getdata(elf_getscn(f->elf, i), NULL);
		if (!data)
			return fail(f, -EINVAL, "cannot read symbol table %s", f->section_names[i]);
		count = data->d_size / sym_size;
		if (count > MAX_SYMBOLS)
			return fail(f, -EINVAL, "symbol table %s has %zu entries",
			            f->section_names[i], count);
		for (size_t k = 1; k < count; k++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)k, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0)
				continue;
			name = elf_strptr(f->elf, sec->sh_link, sym.st_name);
			if (name)
				fn(f, &sym, name, sec->sh_type == SHT_DYNSYM, ctx);
		}
	}
	return 0;
}

static void note_symbol(struct elf_file *f, const GElf_Sym *sym, const char *name, bool dynsym,
                        void *ctx)
{
	struct found *found = ctx;
	struct ps_py_interp *info = found->info;
	enum ps_py_eval_kind kind;

	if (name[0] != '_' && name[0] != 'P')
		return;
	kind = ps_py_eval_name_kind(name);
	if (kind != PS_PY_EVAL_NONE) {
		if (kind == PS_PY_EVAL_MAIN) {
			found->eval_in_dynsym |= dynsym;
			found->eval_in_symtab |= !dynsym;
		}
	} else if (!strcmp(name, "Py_Version") && (sym->st_size == 4 || sym->st_size == 8)) {
		found->has_py_version = true;
		found->py_version_addr = sym->st_value;
		found->py_version_size = sym->st_size;
		found->py_version_section = sym->st_shndx;
	} else if (!strcmp(name, "Py_GetVersion")) {
		found->has_get_version = true;
		found->get_version_addr = sym->st_value;
		found->get_version_size = sym->st_size;
		found->get_version_section = sym->st_shndx;
	} else if (!strcmp(name, "_PyRuntime")) {
		found->runtime_addr = sym->st_value;
	} else if (!strcmp(name, "_Py_trampoline_func_start")) {
		info->has_trampoline = true;
		info->trampoline_start = sym->st_value;
	} else if (!strcmp(name, "_Py_trampoline_func_end")) {
		found->has_trampoline_end = true;
		info->trampoline_end = sym->st_value;
	}
}

/* ---- version sources ------------------------------------------------- */

/* The PY_VERSION_HEX _Py_DebugOffsets carries at the start of .PyRuntime
 * (3.13+), or 0. */
static uint64_t debug_offsets_version(struct elf_file *f, const struct found *found_symbols)
{
	uint64_t offset = 0, version;
	bool found = false;
	const uint8_t *at;

	for (size_t i = 0; i < f->nr_sections && !found; i++) {
		if (!strcmp(f->section_names[i], ".PyRuntime") &&
		    f->sections[i].sh_type != SHT_NOBITS && f->sections[i].sh_size >= 24 &&
		    in_file(f, f->sections[i].sh_offset, 24)) {
			offset = f->sections[i].sh_offset;
			found = true;
		}
	}
	if (!found && found_symbols->runtime_addr)
		found = file_offset(f, SIZE_MAX, found_symbols->runtime_addr, 24, &offset);
	if (!found)
		return 0;
	at = f->image + offset;
	if (memcmp(at, "xdebugpy", 8))
		return 0;
	version = read_uint(f, at + 8, 8);
	return valid_hex(version) ? version : 0;
}

/* Addresses Py_GetVersion's x86-64 code loads (lea rel32(%rip), mov $imm32):
 * one of them is PY_VERSION, the first argument after the format. Each
 * candidate is checked to be a version string, so a mis-decoded byte costs
 * nothing. */
static uint32_t version_from_code(struct elf_file *f, const struct found *found)
{
	uint64_t size = found->get_version_size, offset;
	const uint8_t *code;

	if (size == 0 || size > MAX_SCANNED_CODE)
		size = MAX_SCANNED_CODE;
	while (size &&
	       !file_offset(f, found->get_version_section, found->get_version_addr, size, &offset))
		size /= 2;
	if (!size)
		return 0;
	code = f->image + offset;
	for (uint64_t i = 0; i + 5 <= size; i++) {
		uint64_t target = 0;
		uint32_t hex;

		if (i + 7 <= size && (code[i] == 0x48 || code[i] == 0x4c) && code[i + 1] == 0x8d &&
		    (code[i + 2] & 0xc7) == 0x05) {
			int32_t disp = (int32_t)(uint32_t)read_uint(f, code + i + 3, 4);

			target = found->get_version_addr + i + 7 + (uint64_t)(int64_t)disp;
		} else if (code[i] >= 0xb8 && code[i] <= 0xbf) {
			target = read_uint(f, code + i + 1, 4);
		} else if (i + 6 <= size && code[i] == 0x41 && code[i + 1] >= 0xb8 &&
		           code[i + 1] <= 0xbf) {
			target = read_uint(f, code + i + 2, 4);
		} else {
			continue;
		}
		hex = version_at(f, target);
		if (hex)
			return hex;
	}
	return 0;
}

/* "libpython3.11.so.1.0", "python3.11", "python3.11d": the X.Y in the name. */
static bool version_in_name(const char *path, unsigned *major, unsigned *minor)
{
	const char *base = strrchr(path, '/');
	const char *at;

	base = base ? base + 1 : path;
	at = strstr(base, "python");
	if (!at)
		return false;
	at += 6;
	return sscanf(at, "%1u.%2u", major, minor) == 2;
}

/* Last resort: PY_VERSION-like strings in .rodata. The interpreter's own is
 * the one whose X.Y the file name carries, or the only candidate. */
static uint32_t version_from_rodata(struct elf_file *f)
{
	unsigned name_major = 0, name_minor = 0;
	bool named = version_in_name(f->path, &name_major, &name_minor);
	uint32_t only = 0, matching = 0;
	size_t nr_candidates = 0;

	for (size_t i = 0; i < f->nr_sections; i++) {
		const GElf_Shdr *sec = &f->sections[i];
		const char *text;

		if (strcmp(f->section_names[i], ".rodata") || sec->sh_type == SHT_NOBITS ||
		    !in_file(f, sec->sh_offset, sec->sh_size))
			continue;
		text = (const char *)f->image + sec->sh_offset;
		for (size_t end = 0; end < sec->sh_size; end++) {
			size_t start = end;
			uint32_t hex;

			if (text[end] != '\0')
				continue;
			while (start > 0 && end - start < MAX_VERSION_TEXT && text[start - 1] &&
			       strchr("0123456789.+abrc", text[start - 1]))
				start--;
			/* a version starts with its major digit */
			while (start < end && (text[start] < '0' || text[start] > '9'))
				start++;
			hex = ps_py_parse_version(text + start, end - start);
			if (!hex)
				continue;
			nr_candidates++;
			if (!only)
				only = hex;
			else if (only != hex)
				only = UINT32_MAX;
			if (named && (hex >> 24) == name_major &&
			    ((hex >> 16) & 0xff) == name_minor)
				matching = matching && matching != hex ? UINT32_MAX : hex;
		}
	}
	if (matching && matching != UINT32_MAX)
		return matching;
	if (!named && nr_candidates && only != UINT32_MAX)
		return only;
	return 0;
}

static void set_version(struct ps_py_interp *info, uint32_t hex, enum ps_py_version_source source)
{
	info->version_hex = hex;
	info->major = (int)(hex >> 24);
	info->minor = (int)((hex >> 16) & 0xff);
	info->micro = (int)((hex >> 8) & 0xff);
	info->version_source = source;
}

static void find_version(struct elf_file *f, const struct found *found, struct ps_py_interp *info)
{
	uint64_t debug = debug_offsets_version(f, found);
	uint32_t hex = 0;

	if (found->has_py_version) {
		uint64_t offset;

		if (file_offset(f, found->py_version_section, found->py_version_addr,
		                found->py_version_size, &offset))
			hex = (uint32_t)read_uint(f, f->image + offset, found->py_version_size);
		if (valid_hex(hex))
			set_version(info, hex, PS_PY_VERSION_SYMBOL);
	}
	/* Py_Version wins where both are there */
	if (debug && !info->version_hex)
		set_version(info, (uint32_t)debug, PS_PY_VERSION_DEBUG_OFFSETS);
	if (!info->version_hex && found->has_get_version) {
		hex = version_from_code(f, found);
		if (hex)
			set_version(info, hex, PS_PY_VERSION_STRING);
	}
	if (!info->version_hex) {
		hex = version_from_rodata(f);
		if (hex)
			set_version(info, hex, PS_PY_VERSION_RODATA);
	}
}

/* ---- one file -------------------------------------------------------- */

static int examine(struct elf_file *f, struct ps_py_interp *info)
{
	struct found found = { .info = info };
	int rc;

	rc = read_headers(f);
	if (rc < 0)
		return rc;
	rc = for_each_symbol(f, note_symbol, &found);
	if (rc < 0)
		return rc;
	info->is_python = found.eval_in_symtab || found.eval_in_dynsym;
	if (info->has_trampoline && !found.has_trampoline_end)
		info->trampoline_end = info->trampoline_start;
	if (!info->is_python) {
		/* only a trampoline template may matter: pystitch_perf, the
		 * extension module giving 3.8-3.11 perf-map trampolines,
		 * exports one under CPython's names */
		struct ps_py_interp keep = {
			.path = info->path,
			.has_trampoline = info->has_trampoline,
			.trampoline_start = info->trampoline_start,
			.trampoline_end = info->trampoline_end,
		};
		*info = keep;
		return 0;
	}
	info->dynsym_only = !found.eval_in_symtab;
	find_version(f, &found, info);
	return 1;
}

static int detect_file(const char *path, struct ps_py_interp *info, char *err)
{
	struct elf_file f = { .path = path, .err = err };
	struct stat st;
	int fd, rc;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return fail(&f, -EINVAL, "libelf is too old");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		return fail(&f, rc, "cannot open: %s", strerror(-rc));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(&f, -EINVAL, "not a regular file");
	}
	f.elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) {
		rc = fail(&f, -ENOEXEC, "not an ELF file");
		goto out;
	}
	f.image = (const uint8_t *)elf_rawfile(f.elf, &f.size);
	if (!f.image || f.size != (size_t)st.st_size) {
		rc = fail(&f, -EINVAL, "cannot map the file");
		goto out;
	}
	rc = examine(&f, info);
out:
	free(f.sections);
	free(f.section_names);
	free(f.segments);
	if (f.elf)
		elf_end(f.elf);
	close(fd);
	return rc;
}

/* ---- registry -------------------------------------------------------- */

#define NR_BUCKETS 64

struct registry_entry {
	struct registry_entry *next;
	int rc;
	char *errmsg;
	struct ps_py_interp info;
	char path[];
};

struct ps_py_registry {
	struct registry_entry *buckets[NR_BUCKETS];
	const char *errmsg;
};

int ps_py_registry_new(struct ps_py_registry **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void ps_py_registry_free(struct ps_py_registry *registry)
{
	if (!registry)
		return;
	for (size_t i = 0; i < NR_BUCKETS; i++) {
		struct registry_entry *entry = registry->buckets[i], *next;

		for (; entry; entry = next) {
			next = entry->next;
			free(entry->errmsg);
			free(entry);
		}
	}
	free(registry);
}

const char *ps_py_registry_errmsg(const struct ps_py_registry *registry)
{
	return registry ? registry->errmsg : NULL;
}

static size_t hash_path(const char *path)
{
	uint64_t hash = 1469598103934665603ull;

	for (; *path; path++)
		hash = (hash ^ (uint8_t)*path) * 1099511628211ull;
	return (size_t)(hash % NR_BUCKETS);
}

int ps_py_registry_detect(struct ps_py_registry *registry, const char *path,
                          const struct ps_py_interp **out)
{
	struct registry_entry *entry;
	char err[ERRMSG_SIZE] = "";
	size_t bucket, len;

	if (!registry || !path || !out)
		return -EINVAL;
	*out = NULL;
	bucket = hash_path(path);
	for (entry = registry->buckets[bucket]; entry; entry = entry->next)
		if (!strcmp(entry->path, path))
			break;
	if (!entry) {
		len = strlen(path);
		entry = calloc(1, sizeof(*entry) + len + 1);
		if (!entry) {
			registry->errmsg = "out of memory";
			return -ENOMEM;
		}
		memcpy(entry->path, path, len + 1);
		entry->info.path = entry->path;
		entry->rc = detect_file(entry->path, &entry->info, err);
		if (entry->rc < 0) {
			memset(&entry->info, 0, sizeof(entry->info));
			entry->info.path = entry->path;
			entry->errmsg = strdup(err);
			if (!entry->errmsg) {
				free(entry);
				registry->errmsg = "out of memory";
				return -ENOMEM;
			}
		}
		entry->next = registry->buckets[bucket];
		registry->buckets[bucket] = entry;
	}
	registry->errmsg = entry->errmsg;
	if (entry->rc >= 0)
		*out = &entry->info;
	return entry->rc;
}
