/* Kernel symbols as perf 6.1 loads them: a kallsyms file (/proc/kallsyms
 * format, read bounded and skipping damaged lines) split into the kernel
 * proper and one table per module, or the symbol table of a vmlinux ELF;
 * lookups by raw address. */
#include "symbols/symbols_priv.h"
#include "base/array.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KALLSYMS_SYMBOLS_MAX (16u << 20) /* a bound on damaged input */

struct kernel_group {
	char *module; /* NULL: the kernel proper */
	struct ps_symtab tab;
};

struct ps_kernel_symbols {
	struct kernel_group *groups; /* [0] is the kernel */
	size_t nr_groups, cap_groups;
	bool from_vmlinux;
	struct ps_elf *vmlinux; /* kept open: section lookups */
	uint64_t reloc; /* applied to the kernel group */
	/* kallsyms: the kernel group's first start and last end; a vmlinux:
	 * its .text, and .text's file offset */
	bool has_extent;
	uint64_t extent_start, extent_end, text_offset;
	/* the kernel's own lines only (ps_kernel_symbols_read_core()), made
	 * into symbols where asked (kallsyms_index.c) or, when the index
	 * declined the file, into groups[0] */
	bool core_only;
	struct ps_kallsyms_index *index;
};

void ps_kernel_symbols_free(struct ps_kernel_symbols *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->nr_groups; i++) {
		ps_symtab_release(&ks->groups[i].tab);
		free(ks->groups[i].module);
	}
	free(ks->groups);
	ps_elf_close(ks->vmlinux);
	ps_kallsyms_index_free(ks->index);
	free(ks);
}

static struct ps_kernel_symbols *kernel_symbols_new(void)
{
	struct ps_kernel_symbols *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	ks->groups = calloc(1, sizeof(*ks->groups));
	if (!ks->groups) {
		free(ks);
		return NULL;
	}
	ks->nr_groups = ks->cap_groups = 1;
	ps_symtab_init(&ks->groups[0].tab);
	return ks;
}

static struct kernel_group *group_for(struct ps_kernel_symbols *ks, const char *module)
{
	struct kernel_group *groups;

	if (!module)
		return &ks->groups[0];
	for (size_t i = 1; i < ks->nr_groups; i++)
		if (strcmp(ks->groups[i].module, module) == 0)
			return &ks->groups[i];
	if (!ps_array_reserve((void **)&ks->groups, &ks->cap_groups, ks->nr_groups + 1,
	                      sizeof(*ks->groups), 4))
		return NULL;
	groups = ks->groups;
	groups[ks->nr_groups].module = strdup(module);
	if (!groups[ks->nr_groups].module)
		return NULL;
	ps_symtab_init(&groups[ks->nr_groups].tab);
	return &ks->groups[ks->nr_groups++];
}

/* A hex digit's value with HEX_OK set; 0 for any other byte. */
#define HEX_OK 0x10
static const uint8_t hex_digit[256] = {
	['0'] = 0x10, ['1'] = 0x11, ['2'] = 0x12, ['3'] = 0x13, ['4'] = 0x14, ['5'] = 0x15,
	['6'] = 0x16, ['7'] = 0x17, ['8'] = 0x18, ['9'] = 0x19, ['a'] = 0x1a, ['b'] = 0x1b,
	['c'] = 0x1c, ['d'] = 0x1d, ['e'] = 0x1e, ['f'] = 0x1f, ['A'] = 0x1a, ['B'] = 0x1b,
	['C'] = 0x1c, ['D'] = 0x1d, ['E'] = 0x1e, ['F'] = 0x1f,
};

/* The digits of the line's address: 16 on a 64-bit kernel, taken without
 * a test per digit when they are. */
static size_t parse_address(const char *line, size_t len, uint64_t *addr)
{
	uint64_t value = 0;
	unsigned all = HEX_OK;
	size_t digits;

	if (len > 16 && line[16] == ' ') {
		for (size_t i = 0; i < 16; i++) {
			unsigned v = hex_digit[(unsigned char)line[i]];

			all &= v;
			value = value << 4 | (v & 0xf);
		}
		if (all & HEX_OK) {
			*addr = value;
			return 16;
		}
		value = 0;
	}
	for (digits = 0; digits < len && hex_digit[(unsigned char)line[digits]]; digits++)
		value = value << 4 | (hex_digit[(unsigned char)line[digits]] & 0xf);
	*addr = value;
	return digits;
}

bool ps_kallsyms_parse_line(const char *line, size_t len, uint64_t *addr, char *type,
                            const char **name, size_t *name_len)
{
	size_t digits = parse_address(line, len, addr);

	if (digits == 0 || digits > 16 || len - digits < 3 || line[digits] != ' ' ||
	    line[digits + 2] != ' ')
		return false;
	*type = line[digits + 1];
	*name = line + digits + 3;
	*name_len = len - digits - 3;
	return true;
}

/* toupper() and tolower() of the C locale, which the program runs in */
static char ascii_upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

bool ps_kallsyms_keep_type(char type)
{
	type = ascii_upper(type);
	return type == 'T' || type == 'W' || type == 'D' || type == 'B';
}

uint8_t ps_kallsyms_binding(char type)
{
	if (type == 'W')
		return STB_WEAK;
	return type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;
}

uint8_t ps_kallsyms_type(char type)
{
	type = ascii_upper(type);
	return type == 'T' || type == 'W' ? STT_FUNC : STT_OBJECT;
}

/* maps__split_kallsyms: walking the sorted kernel table, module symbols
 * ("name\t[module]") move to their module's table, the entry trampoline
 * symbols go, and kernel symbols met after a module symbol move to maps
 * of their own ("[kernel].N") where the kernel map no longer finds them.
 * *last is the kernel's last symbol kept (PS_SYMTAB_NONE: none). */
static int split_groups(struct ps_kernel_symbols *ks, uint32_t *last)
{
	struct ps_symtab *kernel = &ks->groups[0].tab;
	uint32_t index = ps_symtab_first(kernel);
	bool in_module = false;
	size_t count = 0;
	/* the module of the symbol before, NULL after one of the kernel's
	 * (perf's curr_map): a symbol of another module starts a run */
	const char *run = NULL;

	while (index != PS_SYMTAB_NONE) {
		uint32_t next = ps_symtab_next(kernel, index);
		struct ps_sym *sym = &kernel->syms[index];
		const char *tab = strchr(sym->name, '\t');

		if (tab) {
			struct kernel_group *group = group_for(ks, tab + 1);
			char name[PS_KSYM_NAME_LEN + 1];
			int rc;

			if (!group)
				return -ENOMEM;
			kernel = &ks->groups[0].tab; /* group_for may move groups */
			sym = &kernel->syms[index];
			snprintf(name, sizeof(name), "%.*s", (int)(tab - sym->name), sym->name);
			rc = ps_symtab_add(&group->tab, name, sym->start, 0, sym->binding,
			                   sym->type);
			if (rc < 0)
				return rc;
			group->tab.syms[group->tab.nr - 1].end = sym->end;
			group->tab.syms[group->tab.nr - 1].run_start =
			        !run || strcmp(run, group->module) != 0;
			run = group->module;
			ps_symtab_erase(kernel, index);
			in_module = true;
		} else if (sym->name[0] == '_' &&
		           strcmp(sym->name, PS_ENTRY_TRAMPOLINE_NAME) == 0) {
			ps_symtab_erase(kernel, index);
		} else if (in_module && count > 0) {
			ps_symtab_erase(kernel, index);
			run = NULL;
		} else {
			in_module = false;
			count++;
			run = NULL;
			*last = index;
		}
		index = next;
	}
	return 0;
}

/* map__fixup_start/end after the split: the kernel map runs from the
 * kernel group's first symbol to the end of its last. */
static void set_extent(struct ps_kernel_symbols *ks, uint32_t last)
{
	const struct ps_symtab *tab = &ks->groups[0].tab;
	uint32_t first = ps_symtab_first(tab);

	if (first == PS_SYMTAB_NONE || last == PS_SYMTAB_NONE)
		return;
	ks->has_extent = true;
	ks->extent_start = tab->syms[first].start;
	ks->extent_end = tab->syms[last].end;
}

int ps_kernel_symbols_from_kallsyms(const char *path, struct ps_kernel_symbols **out,
                                    struct ps_kernel_load_result *result)
{
	return ps_kernel_symbols_read_kallsyms(path, NULL, out, result);
}

/* Reads path (through files) as kallsyms; core_only: up to the first
 * module's line, and a damaged line fails the read. */
static int read_kallsyms(const char *path, const struct ps_file_hooks *files, bool core_only,
                         struct ps_kernel_symbols **out, struct ps_kernel_load_result *result)
{
	const char *file = ps_file_local(files, path);
	struct ps_kernel_symbols *ks;
	struct ps_symtab *all;
	char copy[PS_KALLSYMS_LINE_MAX];
	const char *line;
	size_t len;
	uint32_t last = PS_SYMTAB_NONE;
	bool any_address = false;
	struct ps_kallsyms_reader lr;
	int fd;
	int rc = 0;

	*out = NULL;
	memset(result, 0, sizeof(*result));
	fd = file ? open(file, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0) {
		int err = file ? errno : ENOENT;

		snprintf(result->err, sizeof(result->err), "%s: %s", path, strerror(err));
		return -err;
	}
	ps_file_note_used(files, path, file, PS_FILE_KALLSYMS);
	ks = kernel_symbols_new();
	if (!ks || ps_kallsyms_reader_open(&lr, fd) < 0) {
		ps_kernel_symbols_free(ks);
		close(fd);
		return -ENOMEM;
	}
	all = &ks->groups[0].tab;
	for (;;) {
		enum ps_kallsyms_line kind = ps_kallsyms_next_line(&lr, copy, &line, &len);
		const char *name;
		size_t name_len;
		uint64_t addr;
		char type;

		if (kind == PS_KALLSYMS_END)
			break;
		if (kind == PS_KALLSYMS_OVER_LONG) {
			result->bad_lines++;
			continue;
		}
		if (len == 0)
			continue;
		if (!ps_kallsyms_parse_line(line, len, &addr, &type, &name, &name_len)) {
			result->bad_lines++;
			if (core_only)
				break;
			continue;
		}
		/* the modules' lines (and BPF's, ftrace's) follow the kernel's */
		if (core_only && memchr(name, '\t', name_len))
			break;
		if (!ps_kallsyms_keep_type(type) || (name_len && name[0] == '$'))
			continue;
		if (all->nr >= KALLSYMS_SYMBOLS_MAX) {
			result->bad_lines++;
			break;
		}
		/* perf keeps KSYM_NAME_LEN characters of a name */
		if (name_len > PS_KSYM_NAME_LEN)
			name_len = PS_KSYM_NAME_LEN;
		any_address |= addr != 0;
		rc = ps_symtab_add_n(all, name, name_len, addr, 0, ps_kallsyms_binding(type),
		                     ps_kallsyms_type(type));
		if (rc < 0)
			break;
	}
	ps_kallsyms_reader_close(&lr);
	if (rc == 0 && core_only && result->bad_lines) {
		snprintf(result->err, sizeof(result->err), "%s: damaged line", path);
		rc = -EILSEQ;
	} else if (rc == 0 && all->nr == 0) {
		snprintf(result->err, sizeof(result->err), "%s: no kernel symbols", path);
		rc = -ENOENT;
	} else if (rc == 0 && !any_address) {
		snprintf(result->err, sizeof(result->err),
		         "%s: all addresses are zero (kernel.kptr_restrict?)", path);
		rc = -EACCES;
	}
	if (rc < 0) {
		if (!result->err[0])
			snprintf(result->err, sizeof(result->err), "%s: %s", path, strerror(-rc));
		ps_kernel_symbols_free(ks);
		return rc;
	}
	ps_symtab_fixup_end(all, true);
	ps_symtab_fixup_duplicate(all);
	result->symbols = all->nr_live;
	rc = split_groups(ks, &last);
	if (rc < 0) {
		ps_kernel_symbols_free(ks);
		snprintf(result->err, sizeof(result->err), "%s: %s", path, strerror(-rc));
		return rc;
	}
	set_extent(ks, last);
	ks->core_only = core_only;
	if (result->bad_lines)
		snprintf(result->err, sizeof(result->err), "%s: skipped %zu damaged line%s", path,
		         result->bad_lines, result->bad_lines == 1 ? "" : "s");
	*out = ks;
	return 0;
}

int ps_kernel_symbols_read_kallsyms(const char *path, const struct ps_file_hooks *files,
                                    struct ps_kernel_symbols **out,
                                    struct ps_kernel_load_result *result)
{
	return read_kallsyms(path, files, false, out, result);
}

int ps_kernel_symbols_read_core(const char *path, struct ps_kernel_symbols **out,
                                struct ps_kernel_load_result *result)
{
	struct ps_kallsyms_index *index;
	struct ps_kernel_symbols *ks;

	*out = NULL;
	memset(result, 0, sizeof(*result));
	if (ps_kallsyms_index_build(path, &index) < 0)
		return read_kallsyms(path, NULL, true, out, result);
	ks = kernel_symbols_new();
	if (!ks) {
		ps_kallsyms_index_free(index);
		return -ENOMEM;
	}
	ks->core_only = true;
	ks->index = index;
	ks->has_extent = ps_kallsyms_index_extent(index, &ks->extent_start, &ks->extent_end);
	*out = ks;
	return 0;
}

bool ps_kernel_symbols_core_only(const struct ps_kernel_symbols *ks)
{
	return ks && ks->core_only;
}

/* dso__load_sym for the kernel: the .symtab of a vmlinux, symbols kept in
 * address space with their section (perf makes one map per section). */
int ps_kernel_symbols_from_vmlinux(const char *path, const uint8_t *build_id, size_t build_id_size,
                                   struct ps_kernel_symbols **out,
                                   struct ps_kernel_load_result *result)
{
	return ps_kernel_symbols_read_vmlinux(path, NULL, build_id, build_id_size, out, result);
}

int ps_kernel_symbols_read_vmlinux(const char *path, const struct ps_file_hooks *files,
                                   const uint8_t *build_id, size_t build_id_size,
                                   struct ps_kernel_symbols **out,
                                   struct ps_kernel_load_result *result)
{
	const char *file = ps_file_local(files, path);
	struct ps_kernel_symbols *ks;
	struct ps_elf_symtab reader;
	struct ps_elf *elf;
	struct ps_symtab *tab;
	int rc = 0, text;

	*out = NULL;
	memset(result, 0, sizeof(*result));
	if (!file) {
		snprintf(result->err, sizeof(result->err), "%s: %s", path, strerror(ENOENT));
		return -ENOENT;
	}
	rc = ps_elf_open_file(path, file, &elf, result->err, sizeof(result->err));
	if (rc < 0)
		return rc;
	if (build_id_size &&
	    !ps_build_id_equal(build_id, build_id_size, elf->build_id, elf->build_id_size)) {
		char want[2 * PS_BUILD_ID_MAX + 1], have[2 * PS_BUILD_ID_MAX + 1];

		ps_build_id_hex(build_id, build_id_size, want);
		ps_build_id_hex(elf->build_id, elf->build_id_size, have);
		snprintf(result->err, sizeof(result->err),
		         "%s: build-id mismatch: recorded %s, file has %s", path, want,
		         elf->build_id_size ? have : "none");
		ps_elf_close(elf);
		return -ENOENT;
	}
	/* a stripped vmlinux is refused (perf falls back to kallsyms) */
	if (!ps_elf_symtab_open(elf, elf->symtab_index, &reader)) {
		snprintf(result->err, sizeof(result->err), "%s: no .symtab", path);
		ps_elf_close(elf);
		return -ENOENT;
	}
	ks = kernel_symbols_new();
	if (!ks) {
		ps_elf_close(elf);
		return -ENOMEM;
	}
	ps_file_note_used(files, path, file, PS_FILE_VMLINUX);
	ks->from_vmlinux = true;
	ks->vmlinux = elf;
	text = ps_elf_section_by_name(elf, ".text");
	for (size_t i = 0; i < reader.count; i++) {
		struct ps_elf_sym sym;
		bool named = false, label;

		if (!ps_elf_symtab_get(&reader, i, &sym))
			continue;
		named = sym.name[0] && sym.shndx != SHN_UNDEF;
		label = sym.type == STT_NOTYPE && named && sym.shndx != SHN_ABS &&
		        sym.visibility != STV_HIDDEN && sym.visibility != STV_INTERNAL;
		if (!label && !(named && (sym.type == STT_FUNC || sym.type == STT_GNU_IFUNC ||
		                          sym.type == STT_OBJECT)))
			continue;
		if (sym.shndx == SHN_ABS || sym.shndx >= elf->nr_sections ||
		    !(elf->sections[sym.shndx].flags & SHF_ALLOC))
			continue;
		if (label && !strstr(elf->sections[sym.shndx].name, "text") &&
		    !strstr(elf->sections[sym.shndx].name, "data"))
			continue;
		/* one map per section: .text is the kernel's, others their own */
		tab = sym.shndx == text ? &ks->groups[0].tab
		                        : &group_for(ks, elf->sections[sym.shndx].name)->tab;
		if (!tab) {
			rc = -ENOMEM;
			break;
		}
		rc = ps_symtab_add(tab, sym.name, sym.value, sym.size, sym.binding, sym.type);
		if (rc < 0)
			break;
		tab->syms[tab->nr - 1].shndx = sym.shndx;
	}
	/* perf fixes up the kernel's table only */
	if (rc == 0) {
		ps_symtab_fixup_end(&ks->groups[0].tab, false);
		ps_symtab_fixup_duplicate(&ks->groups[0].tab);
	}
	/* perf's kernel map becomes the .text section (remap_kernel in
	 * dso__process_kernel_symbol) */
	if (text >= 0) {
		ks->has_extent = true;
		ks->extent_start = elf->sections[text].addr;
		ks->extent_end = elf->sections[text].addr + elf->sections[text].size;
		ks->text_offset = elf->sections[text].offset;
	}
	if (rc < 0) {
		snprintf(result->err, sizeof(result->err), "%s: %s", path, strerror(-rc));
		ps_kernel_symbols_free(ks);
		return rc;
	}
	for (size_t i = 0; i < ks->nr_groups; i++)
		result->symbols += ks->groups[i].tab.nr_live;
	*out = ks;
	return 0;
}

const struct ps_sym *ps_kernel_symbols_find(const struct ps_kernel_symbols *ks, const char *module,
                                            uint64_t addr, uint64_t *symbol_addr)
{
	*symbol_addr = addr;
	if (!ks)
		return NULL;
	if (module) {
		for (size_t i = 1; i < ks->nr_groups; i++)
			if (strcmp(ks->groups[i].module, module) == 0)
				return ps_symtab_find(&ks->groups[i].tab, addr);
		return NULL;
	}
	/* symbols of another boot move with the kernel (maps__split_kallsyms) */
	*symbol_addr = addr - ks->reloc;
	if (ks->from_vmlinux) {
		/* perf maps each vmlinux section separately */
		const struct ps_elf *elf = ks->vmlinux;
		int text = ps_elf_section_by_name(elf, ".text");

		for (size_t i = 1; i < elf->nr_sections; i++) {
			const struct ps_elf_section *sec = &elf->sections[i];

			if (!(sec->flags & SHF_ALLOC) || *symbol_addr < sec->addr ||
			    *symbol_addr - sec->addr >= sec->size)
				continue;
			if ((int)i == text)
				return ps_symtab_find(&ks->groups[0].tab, *symbol_addr);
			for (size_t g = 1; g < ks->nr_groups; g++)
				if (strcmp(ks->groups[g].module, sec->name) == 0)
					return ps_symtab_find(&ks->groups[g].tab, *symbol_addr);
			return NULL;
		}
		return NULL;
	}
	if (ks->index)
		return ps_kallsyms_index_find(ks->index, *symbol_addr);
	return ps_symtab_find(&ks->groups[0].tab, *symbol_addr);
}

const struct ps_symtab *ps_kernel_symbols_module(const struct ps_kernel_symbols *ks,
                                                 const char *module)
{
	if (!ks || ks->from_vmlinux || !module)
		return NULL;
	for (size_t i = 1; i < ks->nr_groups; i++)
		if (strcmp(ks->groups[i].module, module) == 0)
			return &ks->groups[i].tab;
	return NULL;
}

bool ps_kernel_symbols_section(const struct ps_kernel_symbols *ks, uint64_t addr, const char **name,
                               uint64_t *start, uint64_t *end, uint64_t *offset)
{
	if (!ks || !ks->from_vmlinux)
		return false;
	for (size_t i = 1; i < ks->vmlinux->nr_sections; i++) {
		const struct ps_elf_section *sec = &ks->vmlinux->sections[i];

		if (!(sec->flags & SHF_ALLOC) || addr < sec->addr + ks->reloc ||
		    addr - (sec->addr + ks->reloc) >= sec->size || strcmp(sec->name, ".text") == 0)
			continue;
		/* perf makes a section's map at its first symbol */
		for (size_t g = 1; g < ks->nr_groups; g++)
			if (strcmp(ks->groups[g].module, sec->name) == 0) {
				*name = ks->groups[g].module;
				*start = sec->addr + ks->reloc;
				*end = *start + sec->size;
				*offset = sec->offset;
				return true;
			}
		return false;
	}
	return false;
}

bool ps_kernel_symbols_vmlinux(const struct ps_kernel_symbols *ks, uint64_t *text_offset)
{
	if (!ks || !ks->from_vmlinux)
		return false;
	*text_offset = ks->text_offset;
	return true;
}

bool ps_kernel_symbols_extent(const struct ps_kernel_symbols *ks, uint64_t *start, uint64_t *end)
{
	if (!ks || !ks->has_extent)
		return false;
	*start = ks->extent_start + ks->reloc;
	*end = ks->extent_end + ks->reloc;
	return true;
}

int ps_kernel_symbols_reloc(struct ps_kernel_symbols *ks, const char *ref_name, uint64_t ref_addr)
{
	const struct ps_symtab *tab;

	if (!ks)
		return -ENOENT;
	if (ks->index) {
		uint64_t start;

		if (!ps_kallsyms_index_start(ks->index, ref_name, &start))
			return -ENOENT;
		ks->reloc = ref_addr - start;
		return 0;
	}
	tab = &ks->groups[0].tab;
	for (size_t i = 0; i < tab->nr; i++) {
		if (!tab->syms[i].erased && strcmp(tab->syms[i].name, ref_name) == 0) {
			ks->reloc = ref_addr - tab->syms[i].start;
			return 0;
		}
	}
	return -ENOENT;
}
