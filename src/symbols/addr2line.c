/* What `addr2line -f -i -e FILE ADDR` (binutils 2.40, bfd/dwarf2.c and
 * bfd/elf.c) prints, computed with libdw: the innermost DWARF function
 * holding the address (smallest range), its line, the callers of inlined
 * code, and bfd's fallback to the ELF symbol table for names and files.
 * perf 6.1 as Debian builds it learns inline frames only from this. */
#include "symbols/symbols_priv.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

#define FUNC_NONE UINT32_MAX

struct a2l_range {
	uint64_t low, high;
	uint32_t func;
};

struct a2l_func {
	const char *name;
	uint64_t call_file; /* file number of the call site, if has_call_file */
	uint64_t first_low; /* bfd's function->arange.low */
	uint32_t caller; /* enclosing function of inlined code, or FUNC_NONE */
	uint32_t call_line;
	uint16_t tag;
	bool has_call_file;
	bool is_linkage; /* bfd: the name needs no ELF symbol lookup */
};

struct a2l_cu {
	Dwarf_Die die;
	int version;
	bool scanned, error;
	bool has_ranges; /* bfd found ranges in the unit's DIE */
	struct ps_line_table lines;
	struct a2l_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct a2l_range *ranges;
	size_t nr_ranges, cap_ranges;
	uint64_t *max_high;
};

struct a2l_cu_range {
	uint64_t low, high;
	uint32_t cu;
};

struct ps_addr2line {
	struct ps_elf *file;
	/* File names are only printed with srcline; without it they are not
	 * looked up, which spares libdw decoding each unit's line program a
	 * second time (ours decodes the rows) just for its file table. */
	bool want_files;
	Dwarf *dwarf;
	struct ps_cursor debug_line, debug_info, debug_abbrev;
	bool has_debug_line, has_die_bytes;
	struct ps_die_strings strings; /* for the DIE walker's names */
	uint32_t *decoded; /* units whose line table was read, in that order */
	size_t nr_decoded, cap_decoded;
	size_t nr_read; /* bfd has read units [0, nr_read) */
	struct a2l_cu *cus;
	size_t nr_cus;
	struct a2l_cu_range *cu_ranges;
	size_t nr_cu_ranges;
	uint64_t *cu_max_high;
	struct ps_elf_functions functions;
	unsigned refuse_in; /* tests: the refuse_in-th reservation fails */
};

void ps_addr2line_refuse_memory(struct ps_addr2line *a2l, unsigned nth)
{
	a2l->refuse_in = nth;
}

/* ps_array_reserve for the tables a query grows, which tests can make
 * run out of memory. */
static bool reserve(struct ps_addr2line *a2l, void **array, size_t *cap, size_t want,
                    size_t item_size)
{
	if (a2l->refuse_in && --a2l->refuse_in == 0)
		return false;
	return ps_array_reserve(array, cap, want, item_size, 16);
}

/* ------------------------------------------------------------------ */
/* DWARF: compilation units */

static int compare_ranges(const void *pa, const void *pb)
{
	const struct a2l_range *a = pa, *b = pb;

	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	return a->func < b->func ? -1 : a->func > b->func;
}

static int compare_cu_ranges(const void *pa, const void *pb)
{
	const struct a2l_cu_range *a = pa, *b = pb;

	if (a->low != b->low)
		return a->low < b->low ? -1 : 1;
	return a->cu < b->cu ? -1 : a->cu > b->cu;
}

/* bfd 2.40 reads DW_AT_ranges unless its form is rnglistx (which it does
 * not know: such DIEs keep only DW_AT_low_pc/high_pc, often none). */
static bool bfd_reads_ranges(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	return dwarf_attr(die, DW_AT_ranges, &attr) && dwarf_whatform(&attr) != DW_FORM_rnglistx;
}

/* The DIE's DW_AT_ranges, through add(ctx, low, high). */
static int die_ranges(Dwarf_Die *die, int (*add)(void *, uint64_t, uint64_t), void *ctx)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	int rc = 0;

	while (rc == 0 && (off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		rc = add(ctx, start, end);
	return rc;
}

/* The ranges bfd takes from a DIE, through add(ctx, low, high). */
static int bfd_die_ranges(Dwarf_Die *die, int (*add)(void *, uint64_t, uint64_t), void *ctx)
{
	Dwarf_Addr low = 0, high = 0;

	if (bfd_reads_ranges(die))
		return die_ranges(die, add, ctx);
	if (dwarf_highpc(die, &high) == 0 && high != 0) {
		dwarf_lowpc(die, &low);
		return add(ctx, low, high);
	}
	return 0;
}

struct unit_ranges_ctx {
	struct ps_addr2line *a2l;
	size_t *cap;
};

static int add_unit_range(void *arg, uint64_t low, uint64_t high)
{
	struct unit_ranges_ctx *ctx = arg;
	struct ps_addr2line *a2l = ctx->a2l;

	if (low >= high)
		return 0;
	if (!ps_array_reserve((void **)&a2l->cu_ranges, ctx->cap, a2l->nr_cu_ranges + 1,
	                      sizeof(*a2l->cu_ranges), 16))
		return -ENOMEM;
	a2l->cu_ranges[a2l->nr_cu_ranges++] =
	        (struct a2l_cu_range){ .low = low, .high = high, .cu = (uint32_t)a2l->nr_cus };
	a2l->cus[a2l->nr_cus].has_ranges = true;
	return 0;
}

/* Whether bfd (binutils 2.40) cannot read the unit's DW_AT_ranges: a
 * DWARF 5 range list with entries that index .debug_addr
 * (DW_RLE_base_addressx, startx_endx, startx_length), which gcc writes in
 * the skeleton unit of -gsplit-dwarf. bfd then stops reading units: that
 * one and every later one answer nothing (a split unit's skeleton made by
 * clang, with DW_AT_low_pc and DW_AT_high_pc, reads fine). */
static bool bfd_cannot_read_ranges(struct ps_addr2line *a2l, Dwarf_Die *cudie, int version)
{
	Dwarf_Attribute attr;
	Dwarf_Word offset;
	Dwarf_Die unit;
	struct ps_cursor c;
	uint8_t address_size = 0, offset_size = 0;
	uint64_t value;

	if (version < 5 || !dwarf_diecu(cudie, &unit, &address_size, &offset_size) ||
	    !dwarf_attr(cudie, DW_AT_ranges, &attr) ||
	    dwarf_whatform(&attr) != DW_FORM_sec_offset || dwarf_formudata(&attr, &offset) != 0)
		return false;
	if (!ps_elf_section_contents(a2l->file, ".debug_rnglists", &c) ||
	    !ps_cursor_skip(&c, offset))
		return false;
	for (;;) {
		uint8_t kind = ps_cursor_u8(&c);

		if (!ps_cursor_ok(&c))
			return false;
		switch (kind) {
		case DW_RLE_end_of_list:
			return false;
		case DW_RLE_base_addressx:
		case DW_RLE_startx_endx:
		case DW_RLE_startx_length:
			return true;
		case DW_RLE_offset_pair:
			if (!ps_dwarf_read_uleb(&c, &value) || !ps_dwarf_read_uleb(&c, &value))
				return false;
			break;
		case DW_RLE_base_address:
			if (!ps_cursor_skip(&c, address_size))
				return false;
			break;
		case DW_RLE_start_end:
			if (!ps_cursor_skip(&c, 2 * (size_t)address_size))
				return false;
			break;
		case DW_RLE_start_length:
			if (!ps_cursor_skip(&c, address_size) || !ps_dwarf_read_uleb(&c, &value))
				return false;
			break;
		default:
			return false; /* not a range list bfd reads either way */
		}
	}
}

static int load_units(struct ps_addr2line *a2l)
{
	Dwarf_CU *cu = NULL, *next;
	size_t cap_cus = 0, cap_ranges = 0;
	uint64_t max = 0;

	for (;;) {
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie, subdie;
		struct unit_ranges_ctx ctx = { .a2l = a2l, .cap = &cap_ranges };
		struct a2l_cu *unit;
		int tag;

		if (dwarf_get_units(a2l->dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) !=
		    0)
			break;
		cu = next;
		tag = dwarf_tag(&cudie);
		/* a split unit's skeleton (-gsplit-dwarf) is a unit to bfd too:
		 * its ranges and line table are in this file; bfd does not read
		 * the .dwo file with the functions, and neither does this */
		if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit &&
		    tag != DW_TAG_skeleton_unit)
			continue;
		if (bfd_cannot_read_ranges(a2l, &cudie, version))
			break;
		if (!ps_array_reserve((void **)&a2l->cus, &cap_cus, a2l->nr_cus + 1,
		                      sizeof(*a2l->cus), 16))
			return -ENOMEM;
		unit = &a2l->cus[a2l->nr_cus];
		memset(unit, 0, sizeof(*unit));
		unit->die = cudie;
		unit->version = version;
		if (bfd_die_ranges(&cudie, add_unit_range, &ctx) < 0)
			return -ENOMEM;
		a2l->nr_cus++;
	}
	if (a2l->nr_cu_ranges == 0)
		return 0;
	qsort(a2l->cu_ranges, a2l->nr_cu_ranges, sizeof(*a2l->cu_ranges), compare_cu_ranges);
	a2l->cu_max_high = malloc(a2l->nr_cu_ranges * sizeof(*a2l->cu_max_high));
	if (!a2l->cu_max_high)
		return -ENOMEM;
	for (size_t i = 0; i < a2l->nr_cu_ranges; i++) {
		if (a2l->cu_ranges[i].high > max)
			max = a2l->cu_ranges[i].high;
		a2l->cu_max_high[i] = max;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* DWARF: the function table of one unit (bfd's scan_unit_for_symbols) */

bool ps_addr2line_names_are_linkage(int lang)
{
	/* bfd's mangle_style() == 0 */
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_PLI:
	case DW_LANG_C99:
	case DW_LANG_UPC:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
	case 0x8765 /* Upc */:
	case 0x8004 /* HP_Basic91 */:
	case 0x8006 /* HP_IMacro */:
	case 0x8007 /* HP_Assembler */:
		return true;
	default:
		return false;
	}
}

static int die_lang(Dwarf_Die *die)
{
	Dwarf_Die cudie;

	if (!dwarf_diecu(die, &cudie, NULL, NULL))
		return -1;
	return dwarf_srclang(&cudie);
}

struct name_ctx {
	const char *name;
	bool is_linkage;
	int depth;
	bool origin; /* inside find_abstract_instance */
	bool failed;
	Dwarf_Die *die;
	unsigned *follows; /* references followed for the function */
	/* the function's own attributes */
	Dwarf_Word call_file, call_line;
	bool has_call_file;
};

static int name_attr(Dwarf_Attribute *attr, void *arg);

static void follow_reference(struct name_ctx *ctx, Dwarf_Attribute *attr)
{
	struct name_ctx inner;
	Dwarf_Die ref;

	if (ctx->depth + 1 >= PS_DIE_ORIGIN_DEPTH_MAX || !dwarf_formref_die(attr, &ref)) {
		ctx->failed = ctx->depth + 1 >= PS_DIE_ORIGIN_DEPTH_MAX;
		return;
	}
	/* hostile DWARF: DIEs with two references each to the next */
	if (++*ctx->follows > PS_DIE_FOLLOW_MAX) {
		ctx->failed = true;
		return;
	}
	inner = (struct name_ctx){ .name = ctx->name,
		                   .is_linkage = ctx->is_linkage,
		                   .depth = ctx->depth + 1,
		                   .origin = true,
		                   .die = &ref,
		                   .follows = ctx->follows };
	dwarf_getattrs(&ref, name_attr, &inner, 0);
	ctx->name = inner.name;
	ctx->is_linkage = inner.is_linkage;
	ctx->failed |= inner.failed;
}

static int name_attr(Dwarf_Attribute *attr, void *arg)
{
	struct name_ctx *ctx = arg;
	const char *s;

	switch (dwarf_whatattr(attr)) {
	case DW_AT_name:
		/* DW_AT_linkage_name wins over DW_AT_name, whatever the order */
		if (!ctx->name && (s = dwarf_formstring(attr)) != NULL) {
			ctx->name = s;
			if (ps_addr2line_names_are_linkage(die_lang(ctx->die)))
				ctx->is_linkage = true;
		}
		break;
	case DW_AT_linkage_name:
	case DW_AT_MIPS_linkage_name:
		if ((s = dwarf_formstring(attr)) != NULL) {
			ctx->name = s;
			ctx->is_linkage = true;
		}
		break;
	case DW_AT_specification:
		follow_reference(ctx, attr);
		break;
	case DW_AT_abstract_origin:
		if (!ctx->origin)
			follow_reference(ctx, attr);
		break;
	case DW_AT_call_file:
		if (!ctx->origin && dwarf_formudata(attr, &ctx->call_file) == 0)
			ctx->has_call_file = true;
		break;
	case DW_AT_call_line:
		if (!ctx->origin)
			dwarf_formudata(attr, &ctx->call_line);
		break;
	default:
		break;
	}
	return ctx->failed ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* bfd's arange_add on a function's list: extend a touching range or add
 * one after the first. */
struct arange_list {
	uint64_t low[64], high[64];
	size_t nr;
};

static int arange_add(void *arg, uint64_t low, uint64_t high)
{
	struct arange_list *list = arg;

	if (low == high)
		return 0;
	if (list->nr == 0) {
		list->low[0] = low, list->high[0] = high, list->nr = 1;
		return 0;
	}
	for (size_t i = 0; i < list->nr; i++) {
		if (low == list->high[i]) {
			list->high[i] = high;
			return 0;
		}
		if (high == list->low[i]) {
			list->low[i] = low;
			return 0;
		}
	}
	if (list->nr < 64) {
		list->low[list->nr] = low;
		list->high[list->nr] = high;
		list->nr++;
	}
	return 0;
}

/* bfd's concat_filename for file N: in DWARF 4 entry N - 1 of the table
 * it read, which is libdw's entry N (libdw puts a dummy at 0), N = 0
 * being "<unknown>"; in DWARF 5 entry N of both. */
static const char *file_entry(const struct a2l_cu *cu, Dwarf_Word index, bool valid)
{
	Dwarf_Files *files;
	size_t nr = 0;
	const char *name;

	if (!valid || (cu->version < 5 && index == 0))
		return "<unknown>";
	if (dwarf_getsrcfiles((Dwarf_Die *)&cu->die, &files, &nr) != 0 || index >= nr)
		return "<unknown>";
	name = dwarf_filesrc(files, index, NULL, NULL);
	return name ? name : "<unknown>";
}

static const char *unit_comp_dir(const struct a2l_cu *cu)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr((Dwarf_Die *)&cu->die, DW_AT_comp_dir, &attr));
}

int ps_addr2line_function_libdw(Dwarf_Die *die, struct ps_die_function *out)
{
	unsigned follows = 0;
	struct name_ctx ctx = { .die = die, .follows = &follows };
	Dwarf_Addr low = 0, high = 0;

	memset(out, 0, sizeof(*out));
	dwarf_getattrs(die, name_attr, &ctx, 0);
	if (ctx.failed)
		return -EINVAL;
	out->name = ctx.name;
	out->is_linkage = ctx.is_linkage;
	out->has_call_file = ctx.has_call_file;
	out->call_file = ctx.call_file;
	out->call_line = ctx.call_line;
	if (bfd_reads_ranges(die)) {
		out->ranges_attr = true;
	} else if (dwarf_highpc(die, &high) == 0 && high != 0) {
		dwarf_lowpc(die, &low);
		out->has_pc = true;
		out->low = low;
		out->high = high;
	}
	return 0;
}

/* A function to the unit's table, from what the DIE walker read of it
 * (read: NULL when libdw is to read it). */
static int add_function(struct a2l_cu *cu, Dwarf_Die *die, int tag, uint32_t enclosing,
                        const struct ps_die_function *read)
{
	struct ps_die_function own;
	struct arange_list list;
	struct a2l_func *func;
	uint32_t index = (uint32_t)cu->nr_funcs;
	int rc;

	list.nr = 0;
	if (!read) {
		rc = ps_addr2line_function_libdw(die, &own);
		if (rc < 0)
			return rc;
		read = &own;
	}
	if (read->ranges_attr)
		die_ranges(die, arange_add, &list);
	else if (read->has_pc)
		arange_add(&list, read->low, read->high);
	if (!ps_array_reserve((void **)&cu->funcs, &cu->cap_funcs, cu->nr_funcs + 1,
	                      sizeof(*cu->funcs), 16) ||
	    !ps_array_reserve((void **)&cu->ranges, &cu->cap_ranges, cu->nr_ranges + list.nr,
	                      sizeof(*cu->ranges), 16))
		return -ENOMEM;
	func = &cu->funcs[cu->nr_funcs++];
	func->name = read->name;
	func->is_linkage = read->is_linkage;
	func->tag = (uint16_t)tag;
	func->caller = tag == DW_TAG_inlined_subroutine ? enclosing : FUNC_NONE;
	func->has_call_file = read->has_call_file;
	func->call_file = read->call_file;
	func->call_line = (uint32_t)read->call_line;
	func->first_low = list.nr ? list.low[0] : 0;
	for (size_t i = 0; i < list.nr; i++)
		cu->ranges[cu->nr_ranges++] = (struct a2l_range){ .low = list.low[i],
			                                          .high = list.high[i],
			                                          .func = index };
	return 0;
}

static int visit_function(void *ctx, Dwarf_Die *die, int tag, uint32_t enclosing, uint32_t *self,
                          const struct ps_die_function *read)
{
	struct a2l_cu *cu = ctx;

	*self = (uint32_t)cu->nr_funcs;
	return add_function(cu, die, tag, enclosing, read);
}

static int scan_unit(struct ps_addr2line *a2l, struct a2l_cu *cu)
{
	Dwarf_Attribute attr;
	Dwarf_Word stmt_list;
	uint64_t max = 0;
	int rc = 0;

	cu->scanned = true;
	/* bfd gives up on a unit without a (readable) line table */
	if (!a2l->has_debug_line || !dwarf_attr(&cu->die, DW_AT_stmt_list, &attr) ||
	    dwarf_formudata(&attr, &stmt_list) != 0) {
		cu->error = true;
		return 0;
	}
	rc = ps_line_table_read(a2l->debug_line, stmt_list, a2l->file->is64 ? 8 : 4, &cu->lines);
	if (rc == -EINVAL) {
		cu->error = true;
		return 0;
	}
	if (rc < 0)
		return rc;
	/* the same functions in the same order, over the DIEs' bytes (most
	 * DIEs are only stepped over); what that walk leaves to libdw, libdw
	 * walks from the start */
	rc = PS_DIE_WALK_UNSURE;
	if (a2l->has_die_bytes) {
		a2l->strings.names_are_linkage =
		        ps_addr2line_names_are_linkage(dwarf_srclang(&cu->die));
		rc = ps_die_walk_functions(a2l->dwarf, &cu->die, a2l->debug_info, a2l->debug_abbrev,
		                           &a2l->strings, visit_function, cu);
	}
	if (rc == PS_DIE_WALK_UNSURE) {
		cu->nr_funcs = 0;
		cu->nr_ranges = 0;
		rc = ps_die_walk_functions_libdw(&cu->die, visit_function, cu);
	}
	if (rc == -EINVAL) {
		cu->error = true;
		return 0;
	}
	if (rc < 0)
		return rc;
	if (cu->nr_ranges == 0)
		return 0;
	qsort(cu->ranges, cu->nr_ranges, sizeof(*cu->ranges), compare_ranges);
	cu->max_high = malloc(cu->nr_ranges * sizeof(*cu->max_high));
	if (!cu->max_high)
		return -ENOMEM;
	for (size_t i = 0; i < cu->nr_ranges; i++) {
		if (cu->ranges[i].high > max)
			max = cu->ranges[i].high;
		cu->max_high[i] = max;
	}
	return 0;
}

/* The function whose range holding addr is smallest; on a tie the later
 * one in DIE order (bfd compares the funcinfo pointers). */
static uint32_t best_function(const struct a2l_cu *cu, uint64_t addr)
{
	size_t low = 0, high = cu->nr_ranges;
	uint32_t best = FUNC_NONE;
	uint64_t best_len = UINT64_MAX;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (cu->ranges[mid].low <= addr)
			low = mid + 1;
		else
			high = mid;
	}
	while (low > 0 && cu->max_high[low - 1] > addr) {
		const struct a2l_range *r = &cu->ranges[--low];
		uint64_t len = r->high - r->low;

		if (addr >= r->high)
			continue;
		if (len < best_len || (len == best_len && (best == FUNC_NONE || r->func > best))) {
			best = r->func;
			best_len = len;
		}
	}
	return best;
}

/* ------------------------------------------------------------------ */

int ps_addr2line_open(struct ps_elf *file, bool want_files, struct ps_addr2line **out)
{
	struct ps_addr2line *a2l = calloc(1, sizeof(*a2l));
	int rc;

	*out = NULL;
	if (!a2l)
		return -ENOMEM;
	a2l->file = file;
	a2l->want_files = want_files;
	rc = ps_elf_functions_load(file, &a2l->functions);
	if (rc == 0) {
		a2l->dwarf = ps_elf_dwarf(file);
		if (a2l->dwarf) {
			a2l->has_debug_line =
			        ps_elf_section_contents(file, ".debug_line", &a2l->debug_line);
			a2l->has_die_bytes =
			        ps_die_section(file, ".debug_info", &a2l->debug_info) &&
			        ps_die_section(file, ".debug_abbrev", &a2l->debug_abbrev);
			ps_die_strings_of(file, a2l->dwarf, &a2l->strings);
			rc = load_units(a2l);
		}
	}
	if (rc < 0) {
		ps_addr2line_close(a2l);
		return rc;
	}
	*out = a2l;
	return 0;
}

void ps_addr2line_close(struct ps_addr2line *a2l)
{
	if (!a2l)
		return;
	for (size_t i = 0; i < a2l->nr_cus; i++) {
		ps_line_table_release(&a2l->cus[i].lines);
		free(a2l->cus[i].funcs);
		free(a2l->cus[i].ranges);
		free(a2l->cus[i].max_high);
	}
	free(a2l->cus);
	free(a2l->decoded);
	free(a2l->cu_ranges);
	free(a2l->cu_max_high);
	ps_elf_functions_release(&a2l->functions);
	free(a2l);
}

/* addr2line's find_address_in_section: the first allocated section. */
static int section_of(const struct ps_elf *elf, uint64_t addr)
{
	for (size_t i = 1; i < elf->nr_sections; i++) {
		const struct ps_elf_section *sec = &elf->sections[i];

		if ((sec->flags & SHF_ALLOC) && addr >= sec->addr && addr - sec->addr < sec->size)
			return (int)i;
	}
	return -1;
}

/* Back to before scan_unit(), which failed part way. */
static void unit_forget(struct a2l_cu *cu)
{
	ps_line_table_release(&cu->lines);
	free(cu->funcs);
	free(cu->ranges);
	free(cu->max_high);
	cu->funcs = NULL;
	cu->ranges = NULL;
	cu->max_high = NULL;
	cu->nr_funcs = cu->cap_funcs = 0;
	cu->nr_ranges = cu->cap_ranges = 0;
	cu->scanned = cu->error = false;
}

/* comp_unit_find_nearest_line: the function and the line for addr. */
static int try_unit(struct ps_addr2line *a2l, uint32_t index, uint64_t addr, uint32_t *func_out,
                    const char **file, unsigned *line)
{
	struct a2l_cu *cu = &a2l->cus[index];
	const struct ps_line_row *row;
	uint32_t func;

	if (!cu->scanned) {
		int rc;

		/* room first, so that every unit scanned is listed as decoded */
		if (!reserve(a2l, (void **)&a2l->decoded, &a2l->cap_decoded, a2l->nr_decoded + 1,
		             sizeof(*a2l->decoded)))
			return -ENOMEM;
		rc = scan_unit(a2l, cu);
		if (rc < 0) {
			/* not half-read: the next query that needs it reads it again */
			unit_forget(cu);
			return rc;
		}
		if (!cu->error)
			a2l->decoded[a2l->nr_decoded++] = index;
	}
	if (cu->error)
		return 0;
	func = cu->nr_ranges ? best_function(cu, addr) : FUNC_NONE;
	row = ps_line_table_find(&cu->lines, addr);
	*file = NULL;
	*line = 0;
	if (row) {
		if (a2l->want_files)
			*file = file_entry(cu, row->file, row->file_valid);
		*line = row->line;
	}
	*func_out = func;
	return row || func != FUNC_NONE;
}

/* bfd 2.40 reads units lazily. A query first tries the units read so far
 * whose ranges hold the address: the ranges of the unit's DIE and, once a
 * unit's line table was decoded (when a query first looked into it), the
 * ranges of its line sequences too. Then it reads further units, trying
 * those without ranges and those whose ranges hold the address, until one
 * answers. So an address in a gap of a unit's ranges is found only after
 * another address of that unit was asked for: answers depend on the order
 * of the queries, as addr2line's do. */
static int find_in_units(struct ps_addr2line *a2l, uint64_t addr, struct a2l_cu **unit_out,
                         uint32_t *func_out, const char **file, unsigned *line)
{
	size_t low = 0, high = a2l->nr_cu_ranges;
	uint32_t candidates[64];
	size_t nr = 0;
	int rc;

	while (low < high) {
		size_t mid = low + (high - low) / 2;

		if (a2l->cu_ranges[mid].low <= addr)
			low = mid + 1;
		else
			high = mid;
	}
	while (low > 0 && a2l->cu_max_high[low - 1] > addr && nr < 64) {
		const struct a2l_cu_range *r = &a2l->cu_ranges[--low];
		bool seen = false;

		if (addr >= r->high)
			continue;
		for (size_t i = 0; i < nr; i++)
			seen |= candidates[i] == r->cu;
		if (!seen)
			candidates[nr++] = r->cu;
	}
	/* units in .debug_info order */
	for (size_t i = 1; i < nr; i++)
		for (size_t j = i; j > 0 && candidates[j - 1] > candidates[j]; j--) {
			uint32_t t = candidates[j];

			candidates[j] = candidates[j - 1];
			candidates[j - 1] = t;
		}
	for (size_t i = 0; i < nr && candidates[i] < a2l->nr_read; i++) {
		rc = try_unit(a2l, candidates[i], addr, func_out, file, line);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			*unit_out = &a2l->cus[candidates[i]];
			return 1;
		}
	}
	for (size_t i = 0; i < a2l->nr_decoded; i++) {
		uint32_t index = a2l->decoded[i];
		bool seen = false;

		for (size_t j = 0; j < nr; j++)
			seen |= candidates[j] == index;
		if (seen || !ps_line_table_covers(&a2l->cus[index].lines, addr))
			continue;
		rc = try_unit(a2l, index, addr, func_out, file, line);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			*unit_out = &a2l->cus[index];
			return 1;
		}
	}
	while (a2l->nr_read < a2l->nr_cus) {
		uint32_t index = (uint32_t)a2l->nr_read;
		bool holds = !a2l->cus[index].has_ranges;

		for (size_t j = 0; j < nr && !holds; j++)
			holds = candidates[j] == index;
		if (!holds) {
			a2l->nr_read++;
			continue;
		}
		rc = try_unit(a2l, index, addr, func_out, file, line);
		/* a unit that could not be read is read by the next query */
		if (rc < 0)
			return rc;
		a2l->nr_read++;
		if (rc > 0) {
			*unit_out = &a2l->cus[index];
			return 1;
		}
	}
	return 0;
}

int ps_addr2line_query(struct ps_addr2line *a2l, uint64_t addr, struct ps_addr2line_record *out,
                       size_t max)
{
	int section = section_of(a2l->file, addr);
	struct a2l_cu *cu = NULL;
	uint32_t func_index = FUNC_NONE;
	struct a2l_func *func = NULL;
	const char *file = NULL, *name = NULL, *comp_dir = NULL;
	const struct ps_elf_function *elf_fun;
	unsigned line = 0;
	bool found = false;
	size_t n = 0;

	if (section < 0 || max == 0)
		return 0;
	if (a2l->dwarf && a2l->nr_cus) {
		int rc = find_in_units(a2l, addr, &cu, &func_index, &file, &line);

		if (rc < 0)
			return rc;
		found = rc > 0;
		if (file)
			comp_dir = unit_comp_dir(cu);
	}
	if (found && func_index != FUNC_NONE)
		func = &cu->funcs[func_index];
	if (func && func->is_linkage) {
		name = func->name;
	} else {
		elf_fun = ps_elf_functions_find(&a2l->functions, (size_t)section, addr);
		if (elf_fun) {
			name = elf_fun->name;
			if (!file)
				file = elf_fun->file;
			found = true;
		}
		if (func) {
			/* bfd remembers the answer in the function itself */
			if (!elf_fun)
				name = func->name;
			else if (elf_fun->value == func->first_low)
				func->name = elf_fun->name;
			func->is_linkage = true;
		}
	}
	if (!found)
		return 0;
	out[n++] = (struct ps_addr2line_record){
		.function = name, .file = file, .line = line, .comp_dir = comp_dir
	};
	/* bfd_find_inliner_info: the callers of inlined code */
	if (func && func->tag == DW_TAG_inlined_subroutine) {
		const struct a2l_func *f = func;

		while (f->caller != FUNC_NONE && n < max) {
			const struct a2l_func *caller = &cu->funcs[f->caller];

			const char *call_file = NULL;

			if (a2l->want_files && f->has_call_file)
				call_file = file_entry(cu, f->call_file, true);
			out[n++] = (struct ps_addr2line_record){
				.function = caller->name,
				.file = call_file,
				.line = f->call_line,
				.comp_dir = call_file ? unit_comp_dir(cu) : NULL,
			};
			f = caller;
		}
	}
	return (int)n;
}
