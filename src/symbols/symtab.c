/* Symbol tables with perf 6.1's rules (util/symbol.c, util/symbol-elf.c):
 * which ELF symbols are kept, their conversion to file-offset space, end
 * fix-ups, the choice among aliases, synthesised PLT entries, and lookup. */
#include "symbols/symbols_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

#ifdef PS_HAVE_CPLUS_DEMANGLE
#include <libiberty/demangle.h>
#endif

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif

/* The table is a red-black tree built by the same sequence of inserts and
 * erases perf performs, so that lookups among overlapping symbols (a
 * zero-size _init stretched over .plt, say) meet the same node first. */

#define NIL UINT32_MAX

void ps_symtab_init(struct ps_symtab *tab)
{
	memset(tab, 0, sizeof(*tab));
	tab->root = NIL;
	tab->rightmost = NIL;
}

void ps_symtab_release(struct ps_symtab *tab)
{
	free(tab->syms);
	ps_arena_free(&tab->names);
	memset(tab, 0, sizeof(*tab));
	tab->root = NIL;
	tab->rightmost = NIL;
}

static bool is_red(const struct ps_symtab *tab, uint32_t n)
{
	return n != NIL && tab->syms[n].red;
}

static void set_child(struct ps_symtab *tab, uint32_t parent, uint32_t old, uint32_t child)
{
	if (parent == NIL)
		tab->root = child;
	else if (tab->syms[parent].left == old)
		tab->syms[parent].left = child;
	else
		tab->syms[parent].right = child;
	if (child != NIL)
		tab->syms[child].parent = parent;
}

static void rotate_left(struct ps_symtab *tab, uint32_t x)
{
	struct ps_sym *syms = tab->syms;
	uint32_t y = syms[x].right;

	syms[x].right = syms[y].left;
	if (syms[y].left != NIL)
		syms[syms[y].left].parent = x;
	set_child(tab, syms[x].parent, x, y);
	syms[y].left = x;
	syms[x].parent = y;
}

static void rotate_right(struct ps_symtab *tab, uint32_t x)
{
	struct ps_sym *syms = tab->syms;
	uint32_t y = syms[x].left;

	syms[x].left = syms[y].right;
	if (syms[y].right != NIL)
		syms[syms[y].right].parent = x;
	set_child(tab, syms[x].parent, x, y);
	syms[y].right = x;
	syms[x].parent = y;
}

static void insert_fixup(struct ps_symtab *tab, uint32_t z)
{
	struct ps_sym *syms = tab->syms;

	while (is_red(tab, syms[z].parent)) {
		uint32_t p = syms[z].parent, g = syms[p].parent;
		bool left = syms[g].left == p;
		uint32_t uncle = left ? syms[g].right : syms[g].left;

		if (is_red(tab, uncle)) {
			syms[p].red = false;
			syms[uncle].red = false;
			syms[g].red = true;
			z = g;
			continue;
		}
		if (left && z == syms[p].right) {
			z = p;
			rotate_left(tab, z);
			p = syms[z].parent;
		} else if (!left && z == syms[p].left) {
			z = p;
			rotate_right(tab, z);
			p = syms[z].parent;
		}
		syms[p].red = false;
		syms[g].red = true;
		if (left)
			rotate_right(tab, g);
		else
			rotate_left(tab, g);
	}
	syms[tab->root].red = false;
}

/* Adds a symbol whose name is kept as given: the caller's text outlives
 * the table. */
static int add_named(struct ps_symtab *tab, const char *name, uint64_t start, uint64_t size,
                     uint8_t binding, uint8_t type)
{
	uint32_t index, parent = NIL, *link = &tab->root;
	bool rightmost = true;
	struct ps_sym *sym;

	/* indexes are uint32_t, NIL marks none */
	if (tab->nr >= NIL - 1)
		return -E2BIG;
	if (!ps_array_reserve((void **)&tab->syms, &tab->cap, tab->nr + 1, sizeof(*tab->syms), 256))
		return -ENOMEM;
	index = (uint32_t)tab->nr++;
	sym = &tab->syms[index];
	*sym = (struct ps_sym){ .start = start,
		                .end = size ? start + size : start,
		                .name = name,
		                .binding = binding,
		                .type = type,
		                .left = NIL,
		                .right = NIL,
		                .red = true };
	/* __symbols__insert: equal starts go right, after the older ones. A
	 * start at or past the largest one goes right at every node, so it
	 * becomes the right child of the rightmost node. */
	if (tab->rightmost != NIL && start >= tab->syms[tab->rightmost].start) {
		parent = tab->rightmost;
		link = &tab->syms[parent].right;
	} else {
		while (*link != NIL) {
			parent = *link;
			if (start < tab->syms[parent].start) {
				link = &tab->syms[parent].left;
				rightmost = false;
			} else {
				link = &tab->syms[parent].right;
			}
		}
	}
	if (rightmost)
		tab->rightmost = index;
	*link = index;
	sym->parent = parent;
	insert_fixup(tab, index);
	tab->nr_live++;
	return 0;
}

int ps_symtab_add(struct ps_symtab *tab, const char *name, uint64_t start, uint64_t size,
                  uint8_t binding, uint8_t type)
{
	return ps_symtab_add_n(tab, name, SIZE_MAX, start, size, binding, type);
}

int ps_symtab_add_n(struct ps_symtab *tab, const char *name, size_t max, uint64_t start,
                    uint64_t size, uint8_t binding, uint8_t type)
{
	const char *copy = ps_arena_strndup(&tab->names, name, max);

	return copy ? add_named(tab, copy, start, size, binding, type) : -ENOMEM;
}

uint32_t ps_symtab_first(const struct ps_symtab *tab)
{
	uint32_t n = tab->root;

	while (n != NIL && tab->syms[n].left != NIL)
		n = tab->syms[n].left;
	return n;
}

uint32_t ps_symtab_next(const struct ps_symtab *tab, uint32_t n)
{
	const struct ps_sym *syms = tab->syms;
	uint32_t p;

	if (syms[n].right != NIL) {
		n = syms[n].right;
		while (syms[n].left != NIL)
			n = syms[n].left;
		return n;
	}
	for (p = syms[n].parent; p != NIL && n == syms[p].right; p = syms[p].parent)
		n = p;
	return p;
}

static void erase_fixup(struct ps_symtab *tab, uint32_t x, uint32_t parent)
{
	struct ps_sym *syms = tab->syms;

	while (x != tab->root && !is_red(tab, x)) {
		bool left = syms[parent].right != x; /* x may be NIL */
		uint32_t w = left ? syms[parent].right : syms[parent].left;

		if (is_red(tab, w)) {
			syms[w].red = false;
			syms[parent].red = true;
			if (left)
				rotate_left(tab, parent);
			else
				rotate_right(tab, parent);
			w = left ? syms[parent].right : syms[parent].left;
		}
		if (!is_red(tab, syms[w].left) && !is_red(tab, syms[w].right)) {
			syms[w].red = true;
			x = parent;
			parent = syms[x].parent;
			continue;
		}
		if (left && !is_red(tab, syms[w].right)) {
			syms[syms[w].left].red = false;
			syms[w].red = true;
			rotate_right(tab, w);
			w = syms[parent].right;
		} else if (!left && !is_red(tab, syms[w].left)) {
			syms[syms[w].right].red = false;
			syms[w].red = true;
			rotate_left(tab, w);
			w = syms[parent].left;
		}
		syms[w].red = syms[parent].red;
		syms[parent].red = false;
		if (left) {
			syms[syms[w].right].red = false;
			rotate_left(tab, parent);
		} else {
			syms[syms[w].left].red = false;
			rotate_right(tab, parent);
		}
		x = tab->root;
		parent = NIL;
	}
	if (x != NIL)
		syms[x].red = false;
}

/* rb_erase: a node with two children is replaced by its successor. */
void ps_symtab_erase(struct ps_symtab *tab, uint32_t z)
{
	struct ps_sym *syms = tab->syms;
	uint32_t y, x, x_parent;
	bool removed_red = syms[z].red;

	tab->rightmost = NIL;
	if (syms[z].left == NIL || syms[z].right == NIL) {
		x = syms[z].left == NIL ? syms[z].right : syms[z].left;
		x_parent = syms[z].parent;
		set_child(tab, syms[z].parent, z, x);
	} else {
		y = syms[z].right;
		while (syms[y].left != NIL)
			y = syms[y].left;
		removed_red = syms[y].red;
		x = syms[y].right;
		if (syms[y].parent == z) {
			x_parent = y;
		} else {
			x_parent = syms[y].parent;
			set_child(tab, syms[y].parent, y, x);
			syms[y].right = syms[z].right;
			syms[syms[y].right].parent = y;
		}
		set_child(tab, syms[z].parent, z, y);
		syms[y].left = syms[z].left;
		syms[syms[y].left].parent = y;
		syms[y].red = syms[z].red;
	}
	syms[z].left = syms[z].right = syms[z].parent = NIL;
	syms[z].erased = true;
	tab->nr_live--;
	if (!removed_red)
		erase_fixup(tab, x, x_parent);
}

static uint64_t roundup_page(uint64_t x)
{
	return (x + 4095) & ~(uint64_t)4095;
}

void ps_symtab_fixup_end(struct ps_symtab *tab, bool is_kallsyms)
{
	uint32_t prev = ps_symtab_first(tab), curr;
	struct ps_sym *syms = tab->syms;
	/* whether prev's name has a '[' (kallsyms), carried to the next
	 * step so that each name is looked at once */
	bool prev_module;

	if (prev == NIL)
		return;
	prev_module = is_kallsyms && strchr(syms[prev].name, '[');
	for (curr = ps_symtab_next(tab, prev); curr != NIL;
	     prev = curr, curr = ps_symtab_next(tab, curr)) {
		bool curr_module = is_kallsyms && strchr(syms[curr].name, '[');
		bool was_module = prev_module;

		prev_module = curr_module;
		if (syms[prev].end != syms[prev].start)
			continue;
		/* kallsyms: the last kernel symbol before the modules (or the
		 * reverse) ends on the next page, not at the far-away start. */
		if (was_module != curr_module)
			syms[prev].end = roundup_page(syms[prev].end + 4096);
		else
			syms[prev].end = syms[curr].start;
	}
	if (syms[prev].end == syms[prev].start)
		syms[prev].end = roundup_page(syms[prev].start) + 4096;
}

static size_t leading_underscores(const char *name)
{
	size_t n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

bool ps_symbol_prefer_first(const struct ps_sym *a, const struct ps_sym *b)
{
	uint64_t size_a = a->end - a->start, size_b = b->end - b->start;
	bool weak_a = a->binding == STB_WEAK, weak_b = b->binding == STB_WEAK;
	bool global_a = a->binding == STB_GLOBAL, global_b = b->binding == STB_GLOBAL;
	size_t under_a, under_b, len_a, len_b;

	if (size_b == 0 && size_a > 0)
		return true;
	if (size_a == 0 && size_b > 0)
		return false;
	if (weak_b && !weak_a)
		return true;
	if (weak_a && !weak_b)
		return false;
	if (global_a && !global_b)
		return true;
	if (global_b && !global_a)
		return false;
	under_a = leading_underscores(a->name);
	under_b = leading_underscores(b->name);
	if (under_b > under_a)
		return true;
	if (under_a > under_b)
		return false;
	len_a = strlen(a->name);
	len_b = strlen(b->name);
	if (len_a != len_b)
		return len_a > len_b;
	/* arch__choose_best_symbol: avoid the kernel's "SyS" aliases */
	if (strncmp(a->name, "SyS", 3) == 0 || strncmp(a->name, "compat_SyS", 10) == 0)
		return false;
	return true;
}

/* symbols__fixup_duplicate, erasing in the same order perf does. */
void ps_symtab_fixup_duplicate(struct ps_symtab *tab)
{
	uint32_t curr = ps_symtab_first(tab);

	while (curr != NIL) {
		uint32_t next = ps_symtab_next(tab, curr);

		if (next == NIL)
			break;
		if (tab->syms[curr].start != tab->syms[next].start) {
			curr = next;
			continue;
		}
		/* perf compares the demangled names */
		ps_symtab_name(tab, &tab->syms[curr]);
		ps_symtab_name(tab, &tab->syms[next]);
		if (ps_symbol_prefer_first(&tab->syms[curr], &tab->syms[next])) {
			ps_symtab_erase(tab, next);
		} else {
			ps_symtab_erase(tab, curr);
			curr = next;
		}
	}
}

/* symbols__find: the first symbol on the search path holding addr. */
const struct ps_sym *ps_symtab_find(const struct ps_symtab *tab, uint64_t addr)
{
	uint32_t n = tab->root;

	while (n != NIL) {
		const struct ps_sym *sym = &tab->syms[n];

		if (addr < sym->start)
			n = sym->left;
		else if (addr > sym->end || (addr == sym->end && addr != sym->start))
			n = sym->right;
		else
			return sym;
	}
	return NULL;
}

static bool ocaml_is_mangled(const char *name)
{
	return strncmp(name, "caml", 4) == 0 && isupper((unsigned char)name[4]);
}

static int ocaml_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *ocaml_demangle(const char *name)
{
	size_t out = 0;
	char *buf = malloc(strlen(name) + 1);

	if (!buf)
		return NULL;
	for (size_t i = 4; name[i];) {
		if (name[i] == '_' && name[i + 1] == '_') {
			buf[out++] = '.';
			i += 2;
		} else if (name[i] == '$' && ocaml_hex_digit(name[i + 1]) >= 0 &&
		           ocaml_hex_digit(name[i + 2]) >= 0) {
			buf[out++] = (char)(ocaml_hex_digit(name[i + 1]) << 4 |
			                    ocaml_hex_digit(name[i + 2]));
			i += 3;
		} else {
			buf[out++] = name[i++];
		}
	}
	buf[out] = 0;
	return buf;
}

const char *ps_symtab_name(struct ps_symtab *tab, const struct ps_sym *sym)
{
	struct ps_sym *s;
	char *demangled;
	const char *copy = NULL;

	if (!sym->mangled)
		return sym->name;
	s = &tab->syms[sym - tab->syms];
	demangled = ps_symbol_demangle(s->name);
	if (demangled) {
		copy = ps_arena_strndup(&tab->names, demangled, SIZE_MAX);
		free(demangled);
	}
	/* out of memory: the name as the file has it, for the whole run,
	 * so that a symbol shows under one name */
	if (copy)
		s->name = copy;
	s->mangled = false;
	return s->name;
}

char *ps_symbol_demangle(const char *name)
{
#ifdef PS_HAVE_CPLUS_DEMANGLE
	/* Debian's perf links libiberty: cplus_demangle(name, DMGL_NO_OPTS),
	 * so no parameter lists */
	char *demangled = cplus_demangle(name, 0);

	if (demangled)
		return demangled;
#endif
	if (ocaml_is_mangled(name))
		return ocaml_demangle(name);
	return NULL;
}

uint64_t ps_elf_text_offset(const struct ps_elf *runtime)
{
	int text = ps_elf_section_by_name(runtime, ".text");

	if (text < 0)
		return 0;
	return runtime->sections[text].addr - runtime->sections[text].offset;
}

/* elf_sym__is_function / _is_object / _is_label */
static bool keep_elf_symbol(const struct ps_elf_sym *sym, bool *is_label)
{
	bool named_defined = sym->name[0] != 0 && sym->shndx != SHN_UNDEF;

	*is_label = sym->type == STT_NOTYPE && named_defined && sym->shndx != SHN_ABS &&
	            sym->visibility != STV_HIDDEN && sym->visibility != STV_INTERNAL;
	if (*is_label)
		return true;
	if ((sym->type == STT_FUNC || sym->type == STT_GNU_IFUNC) && named_defined)
		return true;
	return sym->type == STT_OBJECT && named_defined;
}

/* The PT_LOAD of the runtime file holding vaddr (elf_read_program_header). */
static const struct ps_elf_segment *load_segment(const struct ps_elf *runtime, uint64_t vaddr)
{
	for (size_t i = 0; i < runtime->nr_segments; i++) {
		const struct ps_elf_segment *seg = &runtime->segments[i];
		uint64_t size = seg->memsz > seg->filesz ? seg->memsz : seg->filesz;

		if (seg->type == PT_LOAD && size && vaddr >= seg->vaddr &&
		    vaddr - seg->vaddr < size)
			return seg;
	}
	return NULL;
}

/* One pass of dso__load_sym_internal over .symtab or .dynsym of syms. */
static int load_pass(struct ps_symtab *tab, const struct ps_elf *syms, const struct ps_elf *runtime,
                     int section, size_t *loaded)
{
	struct ps_elf_symtab reader;
	bool arm = syms->machine == EM_ARM || syms->machine == EM_AARCH64;

	*loaded = 0;
	if (!ps_elf_symtab_open(syms, section, &reader))
		return 0;
	for (size_t i = 0; i < reader.count; i++) {
		const struct ps_elf_section *sec;
		const struct ps_elf_segment *seg;
		struct ps_elf_sym sym;
		bool is_label;
		uint64_t value;
		int rc;

		if (!ps_elf_symtab_get(&reader, i, &sym) || !keep_elf_symbol(&sym, &is_label))
			continue;
		/* ARM mapping symbols ($a, $d, $t, $x) */
		if (arm && sym.name[0] == '$' && strchr("adtx", sym.name[1]) && sym.name[1] &&
		    (sym.name[2] == 0 || sym.name[2] == '.'))
			continue;
		if (sym.shndx == SHN_ABS || sym.shndx >= syms->nr_sections)
			continue;
		sec = &syms->sections[sym.shndx];
		if (!(sec->flags & SHF_ALLOC) ||
		    (tab->only_section && strcmp(sec->name, tab->only_section) != 0))
			continue;
		/* A debug file's sections are NOBITS: use the runtime file's. */
		if (sec->type == SHT_NOBITS && sym.shndx < runtime->nr_sections)
			sec = &runtime->sections[sym.shndx];
		if (is_label && !strstr(sec->name, "text") && !strstr(sec->name, "data"))
			continue;
		value = sym.value;
		if (syms->machine == EM_ARM && sym.type == STT_FUNC && (value & 1))
			value--;
		/* to file-offset space */
		seg = load_segment(runtime, value);
		if (seg)
			value -= seg->vaddr - seg->offset;
		else
			value -= sec->addr - sec->offset;
		/* a name as the file has it stays in the file's string table
		 * (the file's mapping outlives the table): on a busy machine's
		 * capture the copies were 15 MB. Demangled when asked for. */
		rc = add_named(tab, sym.name, value, sym.size, sym.binding, sym.type);
		if (rc < 0)
			return rc;
		tab->syms[tab->nr - 1].mangled = !tab->no_demangle;
		(*loaded)++;
	}
	if (*loaded > 0) {
		ps_symtab_fixup_end(tab, false);
		ps_symtab_fixup_duplicate(tab);
	}
	return 0;
}

static size_t rel_symbol_index(const struct ps_elf *elf, uint64_t info)
{
	return elf->is64 ? (size_t)(info >> 32) : (size_t)(info >> 8);
}

/* dso__synthesize_plt_symbols as in perf 6.1: one "name@plt" per
 * .rela.plt/.rel.plt entry, laid out over .plt after its first entry
 * (x86: entry size = .plt sh_entsize). .plt.sec is not looked at. */
static int synthesize_plt(struct ps_symtab *tab, const struct ps_elf *runtime, size_t *added)
{
	int rel = ps_elf_section_by_name(runtime, ".rela.plt");
	int plt = ps_elf_section_by_name(runtime, ".plt");
	struct ps_elf_symtab dynsym;
	uint64_t header, entry, offset, count, rel_size;
	struct ps_elf_sym sym = { .name = "" };
	struct ps_cursor relocs;
	char name[1024];

	*added = 0;
	if (runtime->dynsym_index < 0)
		return 0;
	if (rel < 0)
		rel = ps_elf_section_by_name(runtime, ".rel.plt");
	if (rel < 0 || plt < 0 || runtime->sections[rel].link != (uint32_t)runtime->dynsym_index)
		return 0;
	if (runtime->sections[rel].type != SHT_RELA && runtime->sections[rel].type != SHT_REL)
		return 0;
	if (!ps_elf_section_cursor(runtime, (size_t)rel, &relocs) ||
	    !ps_elf_symtab_open(runtime, runtime->dynsym_index, &dynsym) ||
	    dynsym.strings_size == 0)
		return 0;
	if (runtime->sections[rel].entsize == 0)
		return 0;
	switch (runtime->machine) {
	case EM_ARM:
		header = 20, entry = 12;
		break;
	case EM_AARCH64:
		header = 32, entry = 16;
		break;
	case EM_SPARC:
		header = 48, entry = 12;
		break;
	case EM_SPARCV9:
		header = 128, entry = 32;
		break;
	default:
		header = entry = runtime->sections[plt].entsize;
		break;
	}
	count = runtime->sections[rel].size / runtime->sections[rel].entsize;
	offset = runtime->sections[plt].offset + header;
	if (runtime->sections[rel].type == SHT_RELA)
		rel_size = runtime->is64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela);
	else
		rel_size = runtime->is64 ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel);
	for (uint64_t i = 0; i < count; i++) {
		struct ps_cursor c = relocs;
		uint64_t info;
		char *demangled;
		int rc;

		if (!ps_cursor_skip(&c, i * rel_size))
			break;
		if (runtime->is64) {
			ps_cursor_u64(&c);
			info = ps_cursor_u64(&c);
		} else {
			ps_cursor_u32(&c);
			info = ps_cursor_u32(&c);
		}
		if (!ps_cursor_ok(&c))
			break;
		/* perf keeps the previous symbol when the index is bad */
		(void)ps_elf_symtab_get(&dynsym, rel_symbol_index(runtime, info), &sym);
		demangled = tab->no_demangle ? NULL : ps_symbol_demangle(sym.name);
		/* perf's sympltname[1024] */
		snprintf(name, sizeof(name), "%s@plt", demangled ? demangled : sym.name);
		free(demangled);
		rc = ps_symtab_add(tab, name, offset, entry, STB_GLOBAL, STT_FUNC);
		if (rc < 0)
			return rc;
		offset += entry;
		(*added)++;
	}
	return 0;
}

int ps_symtab_load_dso(struct ps_symtab *tab, const struct ps_elf *syms,
                       const struct ps_elf *runtime, char *err, size_t errsz)
{
	size_t from_symtab = 0, from_dynsym = 0, from_plt = 0;
	int rc = 0;

	if (syms->symtab_index >= 0)
		rc = load_pass(tab, syms, runtime, syms->symtab_index, &from_symtab);
	if (rc == 0 && syms->dynsym_index >= 0)
		rc = load_pass(tab, syms, runtime, syms->dynsym_index, &from_dynsym);
	/* perf synthesizes the PLT only when the table loaded */
	if (rc == 0 && from_symtab + from_dynsym > 0)
		rc = synthesize_plt(tab, runtime, &from_plt);
	if (rc < 0) {
		snprintf(err, errsz, "%s: %s", syms->path, strerror(-rc));
		return rc;
	}
	if (from_symtab + from_dynsym == 0) {
		snprintf(err, errsz, "%s: no symbols", syms->path);
		return 0;
	}
	return (int)(tab->nr_live > INT32_MAX ? INT32_MAX : tab->nr_live);
}
