/* CPython detection: whether an ELF file is the interpreter (it defines
 * _PyEval_EvalFrameDefault), its version, and the -X perf trampoline
 * template; cached per file. The file is the symbols module's handle
 * (symbols/symbols.h), opened once per feed: nothing here opens,
 * maps or parses ELF headers itself. */
#include "python/python_priv.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/message.h"

#define EVAL_NAME "_PyEval_EvalFrameDefault"
#define MAX_SYMBOLS (8u << 20) /* per table; more is damage */
#define MAX_SCANNED_CODE 1024 /* bytes of Py_GetVersion decoded */
#define MAX_VERSION_TEXT 16 /* "3.13.10rc2+" fits */

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

	/* asked of every native frame of a Python stack, most of them
	 * CPython's own "_Py..." functions: the bytes up to "_PyEv" turn
	 * them away before a compare */
	if (!name || name[0] != '_' || name[1] != 'P' || name[2] != 'y' || name[3] != 'E' ||
	    name[4] != 'v' || strncmp(name, EVAL_NAME, sizeof(EVAL_NAME) - 1))
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

/* ---- the file -------------------------------------------------------- */

/* One file being examined: read through the symbols module's handle (the
 * DSO's, opened once per feed), every byte through a cursor. */
struct examined {
	const struct ps_elf *elf;
	const char *file; /* what was read, for messages and the name's X.Y */
	char *err; /* PS_MSG_MAX bytes */
};

static int fail(struct examined *f, int rc, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* "FILE: offset 0x...: what", the project's one-line form. */
static int fail(struct examined *f, int rc, uint64_t offset, const char *fmt, ...)
{
	char prefix[PS_MSG_MAX];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s: offset 0x%llx: ", f->file,
	         (unsigned long long)offset);
	va_start(ap, fmt);
	ps_vfail(f->err, PS_MSG_MAX, rc, prefix, fmt, ap);
	va_end(ap);
	return rc;
}

/* A NUL-terminated PY_VERSION at vaddr (it may be the tail of a longer
 * string: linkers merge string suffixes, so "3.8.18" can end
 * "/usr/local/3.8.18"). */
static uint32_t version_at(const struct examined *f, uint64_t vaddr)
{
	struct ps_cursor c;
	const char *text;

	if (!ps_elf_vaddr_cursor(f->elf, SIZE_MAX, vaddr, 1, &c))
		return 0;
	text = ps_cursor_string(&c, MAX_VERSION_TEXT + 1, false);
	return text ? ps_py_parse_version(text, strlen(text)) : 0;
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

typedef void (*symbol_fn)(const struct ps_elf_sym *sym, bool dynsym, void *ctx);

/* Every named, defined symbol of every symbol table (SHT_SYMTAB and
 * SHT_DYNSYM, whatever their names). */
static int for_each_symbol(struct examined *f, symbol_fn fn, void *ctx)
{
	for (size_t i = 0; i < ps_elf_nr_sections(f->elf); i++) {
		const struct ps_elf_section *sec = ps_elf_section(f->elf, i);
		struct ps_elf_symtab table;

		if (sec->type != SHT_SYMTAB && sec->type != SHT_DYNSYM)
			continue;
		if (!ps_elf_symtab_open(f->elf, (int)i, &table))
			return fail(f, -EINVAL, sec->offset,
			            "symbol table %s (or its strings) is not in the file",
			            sec->name);
		if (table.count > MAX_SYMBOLS)
			return fail(f, -EINVAL, sec->offset, "symbol table %s has %zu entries",
			            sec->name, table.count);
		for (size_t k = 1; k < table.count; k++) {
			struct ps_elf_sym sym;

			/* an entry whose name is outside the strings is skipped */
			if (!ps_elf_symtab_get(&table, k, &sym))
				continue;
			if (sym.shndx == SHN_UNDEF || !sym.name[0])
				continue;
			fn(&sym, sec->type == SHT_DYNSYM, ctx);
		}
	}
	return 0;
}

static void note_symbol(const struct ps_elf_sym *sym, bool dynsym, void *ctx)
{
	struct found *found = ctx;
	struct ps_py_interp *info = found->info;
	const char *name = sym->name;
	enum ps_py_eval_kind kind;

	if (name[0] != '_' && name[0] != 'P')
		return;
	kind = ps_py_eval_name_kind(name);
	if (kind != PS_PY_EVAL_NONE) {
		if (kind == PS_PY_EVAL_MAIN) {
			found->eval_in_dynsym |= dynsym;
			found->eval_in_symtab |= !dynsym;
		}
	} else if (!strcmp(name, "Py_Version") && (sym->size == 4 || sym->size == 8)) {
		found->has_py_version = true;
		found->py_version_addr = sym->value;
		found->py_version_size = sym->size;
		found->py_version_section = sym->shndx;
	} else if (!strcmp(name, "Py_GetVersion")) {
		found->has_get_version = true;
		found->get_version_addr = sym->value;
		found->get_version_size = sym->size;
		found->get_version_section = sym->shndx;
	} else if (!strcmp(name, "_PyRuntime")) {
		found->runtime_addr = sym->value;
	} else if (!strcmp(name, "_Py_trampoline_func_start")) {
		info->has_trampoline = true;
		info->trampoline_start = sym->value;
	} else if (!strcmp(name, "_Py_trampoline_func_end")) {
		found->has_trampoline_end = true;
		info->trampoline_end = sym->value;
	}
}

/* ---- version sources ------------------------------------------------- */

/* The PY_VERSION_HEX _Py_DebugOffsets carries at the start of .PyRuntime
 * (3.13+), or 0. */
static uint64_t debug_offsets_version(const struct examined *f, const struct found *found_symbols)
{
	struct ps_cursor runtime;
	const uint8_t *magic;
	uint64_t version;
	bool found = false;

	for (size_t i = 0; i < ps_elf_nr_sections(f->elf) && !found; i++) {
		const struct ps_elf_section *sec = ps_elf_section(f->elf, i);

		found = !strcmp(sec->name, ".PyRuntime") && sec->size >= 24 &&
		        ps_elf_section_cursor(f->elf, i, &runtime);
	}
	if (!found && found_symbols->runtime_addr)
		found = ps_elf_vaddr_cursor(f->elf, SIZE_MAX, found_symbols->runtime_addr, 24,
		                            &runtime);
	if (!found)
		return 0;
	magic = ps_cursor_peek(&runtime, 0, 8);
	if (!magic || memcmp(magic, "xdebugpy", 8) || !ps_cursor_peek_u64(&runtime, 8, &version))
		return 0;
	return valid_hex(version) ? version : 0;
}

/* Addresses Py_GetVersion's x86-64 code loads (lea rel32(%rip), mov $imm32):
 * one of them is PY_VERSION, the first argument after the format. Each
 * candidate is checked to be a version string, so a mis-decoded byte costs
 * nothing. */
static uint32_t version_from_code(const struct examined *f, const struct found *found)
{
	uint64_t size = found->get_version_size;
	struct ps_cursor c;
	const uint8_t *code;

	if (size == 0 || size > MAX_SCANNED_CODE)
		size = MAX_SCANNED_CODE;
	/* the symbol's size may overstate what the file holds there */
	while (size && !ps_elf_vaddr_cursor(f->elf, found->get_version_section,
	                                    found->get_version_addr, size, &c))
		size /= 2;
	if (!size)
		return 0;
	/* every index below stays under size, which the cursor holds */
	code = ps_cursor_peek(&c, 0, size);
	if (!code)
		return 0;
	for (uint64_t i = 0; i + 5 <= size; i++) {
		uint64_t target = 0;
		uint32_t imm = 0;
		uint32_t hex;

		if (i + 7 <= size && (code[i] == 0x48 || code[i] == 0x4c) && code[i + 1] == 0x8d &&
		    (code[i + 2] & 0xc7) == 0x05) {
			ps_cursor_peek_u32(&c, i + 3, &imm);
			target = found->get_version_addr + i + 7 + (uint64_t)(int64_t)(int32_t)imm;
		} else if (code[i] >= 0xb8 && code[i] <= 0xbf) {
			ps_cursor_peek_u32(&c, i + 1, &imm);
			target = imm;
		} else if (i + 6 <= size && code[i] == 0x41 && code[i + 1] >= 0xb8 &&
		           code[i + 1] <= 0xbf) {
			ps_cursor_peek_u32(&c, i + 2, &imm);
			target = imm;
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
static uint32_t version_from_rodata(const struct examined *f)
{
	unsigned name_major = 0, name_minor = 0;
	bool named = version_in_name(f->file, &name_major, &name_minor);
	uint32_t only = 0, matching = 0;
	size_t nr_candidates = 0;

	for (size_t i = 0; i < ps_elf_nr_sections(f->elf); i++) {
		const struct ps_elf_section *sec = ps_elf_section(f->elf, i);
		struct ps_cursor rodata;
		const char *text;
		size_t size;

		if (strcmp(sec->name, ".rodata") || !ps_elf_section_cursor(f->elf, i, &rodata))
			continue;
		/* the scan looks back from each NUL: every index stays in
		 * [0, size), the span the cursor holds */
		size = ps_cursor_size(&rodata);
		text = (const char *)ps_cursor_peek(&rodata, 0, size);
		if (!text)
			continue;
		for (size_t end = 0; end < size; end++) {
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

static void find_version(const struct examined *f, const struct found *found,
                         struct ps_py_interp *info)
{
	uint64_t debug = debug_offsets_version(f, found);
	uint32_t hex = 0;

	if (found->has_py_version) {
		struct ps_cursor c;
		uint64_t wide = 0;

		/* a 4- or 8-byte variable holding PY_VERSION_HEX */
		if (ps_elf_vaddr_cursor(f->elf, found->py_version_section, found->py_version_addr,
		                        found->py_version_size, &c)) {
			if (found->py_version_size == 4)
				ps_cursor_peek_u32(&c, 0, &hex);
			else if (ps_cursor_peek_u64(&c, 0, &wide))
				hex = (uint32_t)wide;
		}
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

static int examine(struct examined *f, struct ps_py_interp *info)
{
	struct found found = { .info = info };
	int rc;

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
	return (size_t)(ps_hash_string(path, 0) % NR_BUCKETS);
}

int ps_py_registry_detect(struct ps_py_registry *registry, const struct ps_elf *elf,
                          const struct ps_py_interp **out)
{
	struct registry_entry *entry;
	char err[PS_MSG_MAX] = "";
	const char *path;
	size_t bucket, len;

	if (!registry || !elf || !out)
		return -EINVAL;
	*out = NULL;
	path = ps_elf_file(elf);
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
		{
			struct examined f = { .elf = elf, .file = entry->path, .err = err };

			entry->rc = examine(&f, &entry->info);
		}
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
