/* bfd's fallback from DWARF to the ELF symbol table (bfd/elf.c
 * _bfd_elf_find_function as in binutils 2.40): the symbol of the section
 * starting nearest below an address, and the STT_FILE name paired with it. */
#include "symbols/symbols_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool is_function_like(const struct ps_elf_sym *sym)
{
	/* elf_maybe_function_sym: not section, file, object or TLS symbols;
	 * not the zero-size local hidden NOTYPE markers annobin emits */
	if (sym->type == STT_SECTION || sym->type == STT_FILE || sym->type == STT_OBJECT ||
	    sym->type == STT_TLS || sym->type == STT_COMMON)
		return false;
	if (sym->shndx == SHN_UNDEF || sym->shndx >= SHN_LORESERVE)
		return false;
	return !(sym->size == 0 && sym->binding == STB_LOCAL && sym->type == STT_NOTYPE &&
	         sym->visibility == STV_HIDDEN);
}

static int compare_elf_syms(const void *pa, const void *pb)
{
	const struct ps_elf_function *a = pa, *b = pb;

	if (a->shndx != b->shndx)
		return a->shndx < b->shndx ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

int ps_elf_functions_load(const struct ps_elf *elf, struct ps_elf_functions *out)
{
	enum { NOTHING_SEEN, SYMBOL_SEEN, FILE_AFTER_SYMBOL_SEEN } state = NOTHING_SEEN;
	struct ps_elf_symtab tab;
	const char *file = NULL;

	memset(out, 0, sizeof(*out));
	/* addr2line's slurp_symtab: .symtab, or .dynsym when that is empty */
	if (!ps_elf_symtab_open(elf, elf->symtab_index, &tab) || tab.count < 2) {
		if (!ps_elf_symtab_open(elf, elf->dynsym_index, &tab))
			return 0;
	}
	out->syms = calloc(tab.count ? tab.count : 1, sizeof(*out->syms));
	if (!out->syms)
		return -ENOMEM;
	for (size_t i = 1; i < tab.count; i++) {
		struct ps_elf_sym sym;

		if (!ps_elf_symtab_get(&tab, i, &sym))
			continue;
		if (sym.type == STT_FILE) {
			file = sym.name;
			if (state == SYMBOL_SEEN)
				state = FILE_AFTER_SYMBOL_SEEN;
			continue;
		}
		if (is_function_like(&sym)) {
			struct ps_elf_function *f = &out->syms[out->nr_syms++];

			f->value = sym.value;
			f->size = sym.size ? sym.size : 1;
			f->name = sym.name;
			f->file = file && (sym.binding == STB_LOCAL ||
			                   state != FILE_AFTER_SYMBOL_SEEN)
			                  ? file
			                  : NULL;
			f->order = (uint32_t)i;
			f->shndx = sym.shndx;
			f->type = sym.type;
			f->is_function = sym.type == STT_FUNC || sym.type == STT_GNU_IFUNC;
		}
		if (state == NOTHING_SEEN)
			state = SYMBOL_SEEN;
	}
	if (out->nr_syms > 1)
		qsort(out->syms, out->nr_syms, sizeof(*out->syms), compare_elf_syms);
	return 0;
}

/* Between two candidates starting at the same offset bfd 2.40 keeps the
 * larger, the first in symbol-table order on a tie (no better_fit yet). */
static bool better_tie(const struct ps_elf_function *best, const struct ps_elf_function *sym)
{
	return sym->size > best->size;
}

/* _bfd_elf_find_function: the symbol of the section starting nearest
 * below addr. */
const struct ps_elf_function *ps_elf_functions_find(const struct ps_elf_functions *functions,
                                                    size_t shndx, uint64_t addr)
{
	size_t low = 0, high = functions->nr_syms, first;
	const struct ps_elf_function *best;

	while (low < high) {
		size_t mid = low + (high - low) / 2;
		const struct ps_elf_function *s = &functions->syms[mid];

		if (s->shndx < shndx || (s->shndx == shndx && s->value <= addr))
			low = mid + 1;
		else
			high = mid;
	}
	if (low == 0 || functions->syms[low - 1].shndx != shndx)
		return NULL;
	first = low - 1;
	while (first > 0 && functions->syms[first - 1].shndx == shndx &&
	       functions->syms[first - 1].value == functions->syms[low - 1].value)
		first--;
	best = &functions->syms[first];
	for (size_t i = first + 1; i < low; i++)
		if (better_tie(best, &functions->syms[i]))
			best = &functions->syms[i];
	return best;
}

void ps_elf_functions_release(struct ps_elf_functions *functions)
{
	free(functions->syms);
	memset(functions, 0, sizeof(*functions));
}
