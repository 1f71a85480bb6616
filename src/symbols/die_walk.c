/* A unit's DIE tree walked over its bytes, for addr2line's scan of a
 * unit's functions (addr2line.c): libdw's walk (dwarf_siblingof,
 * dwarf_child, one DIE at a time, an abbreviation lookup under a lock
 * each) was half of that scan's time, and most DIEs (variables,
 * parameters, types, their members) are only stepped over. Here each
 * abbreviation is decoded once per unit and a DIE's attributes are
 * skipped by their forms; the DIEs the scan keeps (functions) go to
 * libdw as before.
 *
 * The order is libdw's: a DIE, its children, then its sibling, where
 * DW_AT_sibling says when it is there (as dwarf_siblingof() follows it).
 * Anything this reader does not know or finds out of place (an unknown
 * form or abbreviation, a reference outside the unit, a unit that ends
 * without its closing entry) stops it with PS_DIE_WALK_UNSURE, before or
 * after some functions were given: the caller forgets them and walks the
 * unit with libdw (ps_die_walk_functions_libdw(), here too), whose
 * answers on damaged DWARF are the reference. */
#include "symbols/symbols_priv.h"

#include <dwarf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"

/* abbreviation codes are dense from 1 in what compilers write; a larger
 * one is left to libdw */
#define ABBREV_CODE_MAX 65536
/* attributes of one abbreviation */
#define ABBREV_ATTRS_MAX 256

struct abbrev {
	uint32_t first_attr; /* into the walk's attrs */
	uint16_t nr_attrs;
	uint16_t tag;
	bool known, has_children;
	/* the attributes take fixed_size bytes whatever their values (no
	 * DW_AT_sibling to read among them): stepped over at once */
	bool fixed;
	uint32_t fixed_size;
};

struct attr_spec {
	uint16_t name, form;
	int64_t implicit; /* DW_FORM_implicit_const's value */
};

struct walk {
	struct ps_cursor info; /* the unit, whole */
	const struct ps_die_strings *strings; /* NULL: attributes left to libdw */
	uint8_t version, address_size, offset_size;
	struct abbrev *abbrevs; /* by code */
	size_t nr_abbrevs;
	struct attr_spec *attrs;
	size_t nr_attrs, cap_attrs;
	/* a C unit: its structures and unions hold no code */
	bool c_unit;
};

static uint32_t form_size(const struct walk *w, uint64_t form);

/* A LEB128 number of at most 64 bits (longer ones are libdw's to read),
 * sign-extended from its last byte when is_signed. */
static bool read_leb(struct ps_cursor *c, uint64_t *out, bool is_signed)
{
	uint64_t value = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte = ps_cursor_u8(c);

		if (!ps_cursor_ok(c))
			return false;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			if (is_signed && shift + 7 < 64 && (byte & 0x40))
				value |= ~(uint64_t)0 << (shift + 7);
			*out = value;
			return true;
		}
	}
	return false;
}

static bool read_uleb(struct ps_cursor *c, uint64_t *out)
{
	return read_leb(c, out, false);
}

static bool read_sleb(struct ps_cursor *c, int64_t *out)
{
	uint64_t value;

	if (!read_leb(c, &value, true))
		return false;
	*out = (int64_t)value;
	return true;
}

/* The unit's abbreviations, from its offset in .debug_abbrev. */
static int read_abbrevs(struct walk *w, struct ps_cursor abbrevs, uint64_t offset)
{
	if (offset > ps_cursor_left(&abbrevs) || !ps_cursor_skip(&abbrevs, offset))
		return PS_DIE_WALK_UNSURE;
	for (;;) {
		uint64_t code, tag, name, form;
		int64_t implicit;
		uint8_t children;
		struct abbrev *a;

		if (!read_uleb(&abbrevs, &code))
			return PS_DIE_WALK_UNSURE;
		if (code == 0)
			return 0;
		if (code >= ABBREV_CODE_MAX || !read_uleb(&abbrevs, &tag) || tag > UINT16_MAX)
			return PS_DIE_WALK_UNSURE;
		children = ps_cursor_u8(&abbrevs);
		if (code >= w->nr_abbrevs) {
			size_t cap = w->nr_abbrevs;

			if (!ps_array_reserve((void **)&w->abbrevs, &cap, code + 1,
			                      sizeof(*w->abbrevs), 64))
				return -ENOMEM;
			memset(w->abbrevs + w->nr_abbrevs, 0,
			       (cap - w->nr_abbrevs) * sizeof(*w->abbrevs));
			w->nr_abbrevs = cap;
		}
		a = &w->abbrevs[code];
		/* the first of a code wins, as libdw's table keeps it */
		if (a->known)
			return PS_DIE_WALK_UNSURE;
		*a = (struct abbrev){ .first_attr = (uint32_t)w->nr_attrs,
			              .tag = (uint16_t)tag,
			              .known = true,
			              .has_children = children == DW_CHILDREN_yes,
			              .fixed = true };
		for (;;) {
			implicit = 0;
			if (!read_uleb(&abbrevs, &name) || !read_uleb(&abbrevs, &form))
				return PS_DIE_WALK_UNSURE;
			if (name == 0 && form == 0)
				break;
			/* its value lives in the abbreviation: nothing to skip */
			if (form == DW_FORM_implicit_const && !read_sleb(&abbrevs, &implicit))
				return PS_DIE_WALK_UNSURE;
			if (name > UINT16_MAX || form > UINT16_MAX ||
			    a->nr_attrs >= ABBREV_ATTRS_MAX)
				return PS_DIE_WALK_UNSURE;
			if (!ps_array_reserve((void **)&w->attrs, &w->cap_attrs, w->nr_attrs + 1,
			                      sizeof(*w->attrs), 256))
				return -ENOMEM;
			w->attrs[w->nr_attrs++] = (struct attr_spec){ .name = (uint16_t)name,
				                                      .form = (uint16_t)form,
				                                      .implicit = implicit };
			a->nr_attrs++;
			if (name == DW_AT_sibling ||
			    (form != DW_FORM_flag_present && form != DW_FORM_implicit_const &&
			     form_size(w, form) == 0))
				a->fixed = false;
			else
				a->fixed_size += form_size(w, form);
		}
	}
}

/* The bytes a form's value takes whatever it is, or 0 when it varies (or
 * the form is one the walk leaves to libdw). */
static uint32_t form_size(const struct walk *w, uint64_t form)
{
	switch (form) {
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return w->address_size;
	case DW_FORM_ref_addr:
		return w->version == 2 ? w->address_size : w->offset_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return w->offset_size;
	default:
		return 0;
	}
}

static bool skip_block(struct ps_cursor *c, uint64_t size)
{
	return size <= ps_cursor_left(c) && ps_cursor_skip(c, size);
}

/* Steps over one attribute's value; a reference's offset into *ref when
 * ref is given (the DW_AT_sibling value: unit-relative forms only). */
static bool skip_form(const struct walk *w, struct ps_cursor *c, uint64_t form, uint64_t *ref)
{
	uint32_t fixed = form_size(w, form);
	uint64_t n;

	if (form == DW_FORM_flag_present || form == DW_FORM_implicit_const)
		return true;
	if (fixed && !ref)
		return skip_block(c, fixed);
	/* the unit-relative references dwarf_siblingof() follows */
	if (ref) {
		switch (form) {
		case DW_FORM_ref1:
			n = ps_cursor_u8(c);
			break;
		case DW_FORM_ref2:
			n = ps_cursor_u16(c);
			break;
		case DW_FORM_ref4:
			n = ps_cursor_u32(c);
			break;
		case DW_FORM_ref8:
			n = ps_cursor_u64(c);
			break;
		case DW_FORM_ref_udata:
			if (!read_uleb(c, &n))
				return false;
			break;
		default:
			return false;
		}
		*ref = n;
		return ps_cursor_ok(c);
	}
	switch (form) {
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		return read_uleb(c, &n);
	case DW_FORM_string:
		return ps_cursor_string(c, ps_cursor_left(c), false) != NULL;
	case DW_FORM_block1:
		n = ps_cursor_u8(c);
		return ps_cursor_ok(c) && skip_block(c, n);
	case DW_FORM_block2:
		n = ps_cursor_u16(c);
		return ps_cursor_ok(c) && skip_block(c, n);
	case DW_FORM_block4:
		n = ps_cursor_u32(c);
		return ps_cursor_ok(c) && skip_block(c, n);
	case DW_FORM_block:
	case DW_FORM_exprloc:
		return read_uleb(c, &n) && skip_block(c, n);
	default:
		/* DW_FORM_indirect among them: libdw reads it */
		return false;
	}
}

/* ---- what addr2line reads of a function ---------------------------- */

/* A debug section the walker may read: one libdw reads the same bytes of.
 * libdw takes the first of a name that is not in a section group (nor
 * NOBITS, nor empty) and takes .zdebug_ sections for their names too; a
 * file where that could be another section than the first of the name
 * (a second one, a group, a .zdebug_ one) is left to libdw. */
bool ps_die_section(struct ps_elf *elf, const char *name, struct ps_cursor *out)
{
	char zname[64];
	int index = ps_elf_section_by_name(elf, name);
	const struct ps_elf_section *sec = index > 0 ? ps_elf_section(elf, (size_t)index) : NULL;

	if (!sec || !sec->in_file || sec->size == 0 || (sec->flags & SHF_GROUP) ||
	    strncmp(name, ".debug_", 7) != 0 ||
	    snprintf(zname, sizeof(zname), ".zdebug_%s", name + 7) >= (int)sizeof(zname) ||
	    ps_elf_section_by_name(elf, zname) >= 0)
		return false;
	for (size_t i = (size_t)index + 1; i < ps_elf_nr_sections(elf); i++)
		if (strcmp(ps_elf_section(elf, i)->name, name) == 0)
			return false;
	return ps_elf_section_contents(elf, name, out);
}

void ps_die_strings_of(struct ps_elf *elf, Dwarf *dwarf, struct ps_die_strings *out)
{
	struct ps_cursor *str = &out->str;
	size_t size;

	memset(out, 0, sizeof(*out));
	/* the bytes libdw's dwarf_formstring() points into, to its last one,
	 * which is a NUL: every offset inside starts a string ending inside */
	if (!dwarf || !ps_die_section(elf, ".debug_str", str))
		return;
	size = ps_cursor_size(str);
	out->has_str =
	        str->start[size - 1] == 0 &&
	        dwarf_getstring(dwarf, 0, NULL) == (const char *)str->start &&
	        dwarf_getstring(dwarf, size - 1, NULL) == (const char *)str->start + size - 1 &&
	        dwarf_getstring(dwarf, size, NULL) == NULL;
}

enum value_kind { VALUE_OTHER, VALUE_STRING, VALUE_CONST, VALUE_ADDR, VALUE_REF };

struct value {
	enum value_kind kind;
	uint64_t u;
	const char *s;
};

/* One attribute's value as libdw's dwarf_formstring(), dwarf_formudata(),
 * dwarf_formaddr() and dwarf_formref_die() read it, for the forms those
 * give without other sections (VALUE_OTHER: any other form, stepped
 * over). False when it cannot be read. */
static bool read_value(const struct walk *w, struct ps_cursor *c, const struct attr_spec *spec,
                       struct value *v)
{
	const struct ps_die_strings *strings = w->strings;
	uint64_t offset;

	v->kind = VALUE_CONST;
	switch (spec->form) {
	case DW_FORM_string:
		v->kind = VALUE_STRING;
		v->s = ps_cursor_string(c, ps_cursor_left(c), false);
		return v->s != NULL;
	case DW_FORM_strp:
		offset = w->offset_size == 8 ? ps_cursor_u64(c) : ps_cursor_u32(c);
		v->kind = strings->has_str ? VALUE_STRING : VALUE_OTHER;
		/* libdw: an offset inside the section, which ends in a NUL */
		v->s = offset < ps_cursor_size(&strings->str)
		               ? (const char *)strings->str.start + offset
		               : NULL;
		return ps_cursor_ok(c);
	case DW_FORM_data1:
		v->u = ps_cursor_u8(c);
		return ps_cursor_ok(c);
	case DW_FORM_data2:
		v->u = ps_cursor_u16(c);
		return ps_cursor_ok(c);
	case DW_FORM_data4:
		v->u = ps_cursor_u32(c);
		return ps_cursor_ok(c);
	case DW_FORM_data8:
		v->u = ps_cursor_u64(c);
		return ps_cursor_ok(c);
	case DW_FORM_udata:
		return read_uleb(c, &v->u);
	case DW_FORM_implicit_const:
		v->u = (uint64_t)spec->implicit;
		return true;
	case DW_FORM_addr:
		v->kind = VALUE_ADDR;
		v->u = w->address_size == 8 ? ps_cursor_u64(c) : ps_cursor_u32(c);
		return ps_cursor_ok(c);
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
	case DW_FORM_ref_udata:
		v->kind = VALUE_REF;
		return skip_form(w, c, spec->form, &v->u);
	default:
		v->kind = VALUE_OTHER;
		return skip_form(w, c, spec->form, NULL);
	}
}

struct names {
	const char *name;
	bool is_linkage, failed;
	unsigned *follows; /* references followed for the function */
	/* the function's own (depth 0): the first of each of its attributes
	 * that say where its code is */
	struct value low, high;
	bool has_low, has_high, has_ranges;
	uint16_t ranges_form;
};

static int read_names(const struct walk *w, struct ps_cursor c, const struct abbrev *a, int depth,
                      struct names *n, struct ps_die_function *f);

/* addr2line.c's follow_reference(): the names of the DIE at a unit
 * offset, as dwarf_formref_die() and dwarf_getattrs() find them. */
static int follow(const struct walk *w, uint64_t offset, int depth, struct names *n)
{
	struct names inner = { .name = n->name,
		               .is_linkage = n->is_linkage,
		               .follows = n->follows };
	struct ps_cursor c = w->info;
	uint64_t code;
	int rc;

	if (depth + 1 >= PS_DIE_ORIGIN_DEPTH_MAX) {
		n->failed = true;
		return 0;
	}
	/* dwarf_formref_die() fails past the unit; dwarf_getattrs() gives
	 * nothing of a null entry (an unknown code, which libdw reads in 32
	 * bits, is left to it) */
	if (offset >= ps_cursor_size(&w->info))
		return 0;
	if (++*n->follows > PS_DIE_FOLLOW_MAX) {
		n->failed = true;
		return 0;
	}
	if (!ps_cursor_skip(&c, offset) || !read_uleb(&c, &code))
		return PS_DIE_WALK_UNSURE;
	if (code == 0)
		return 0;
	if (code >= w->nr_abbrevs || !w->abbrevs[code].known)
		return PS_DIE_WALK_UNSURE;
	rc = read_names(w, c, &w->abbrevs[code], depth + 1, &inner, NULL);
	if (rc)
		return rc;
	n->name = inner.name;
	n->is_linkage = inner.is_linkage;
	n->failed |= inner.failed;
	return 0;
}

/* addr2line.c's name_attr() over the attributes at c, in their order:
 * the function's own (depth 0: its call site into *f too, where its code
 * is into *n) or those of a DIE a reference led to. */
static int read_names(const struct walk *w, struct ps_cursor c, const struct abbrev *a, int depth,
                      struct names *n, struct ps_die_function *f)
{
	bool origin = depth > 0;
	int rc;

	for (uint32_t i = 0; i < a->nr_attrs && !n->failed; i++) {
		const struct attr_spec *spec = &w->attrs[a->first_attr + i];
		struct value v;

		if (!read_value(w, &c, spec, &v))
			return PS_DIE_WALK_UNSURE;
		switch (spec->name) {
		case DW_AT_name:
			if (v.kind != VALUE_STRING)
				return PS_DIE_WALK_UNSURE;
			if (!n->name && v.s) {
				n->name = v.s;
				n->is_linkage |= w->strings->names_are_linkage;
			}
			break;
		case DW_AT_linkage_name:
		case DW_AT_MIPS_linkage_name:
			if (v.kind != VALUE_STRING)
				return PS_DIE_WALK_UNSURE;
			if (v.s) {
				n->name = v.s;
				n->is_linkage = true;
			}
			break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
			if (origin && spec->name == DW_AT_abstract_origin)
				break;
			if (v.kind != VALUE_REF)
				return PS_DIE_WALK_UNSURE;
			rc = follow(w, v.u, depth, n);
			if (rc)
				return rc;
			break;
		case DW_AT_ranges:
			if (!origin && !n->has_ranges) {
				n->has_ranges = true;
				n->ranges_form = spec->form;
			}
			break;
		case DW_AT_low_pc:
			if (!origin && !n->has_low) {
				n->has_low = true;
				n->low = v;
			}
			break;
		case DW_AT_high_pc:
			if (!origin && !n->has_high) {
				n->has_high = true;
				n->high = v;
			}
			break;
		case DW_AT_call_file:
		case DW_AT_call_line:
			if (origin)
				break;
			if (v.kind != VALUE_CONST)
				return PS_DIE_WALK_UNSURE;
			if (spec->name == DW_AT_call_line) {
				f->call_line = v.u;
			} else {
				f->call_file = v.u;
				f->has_call_file = true;
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

/* bfd_die_ranges() of addr2line.c over what read_names() kept:
 * DW_AT_ranges (the first, unless DW_FORM_rnglistx, which bfd does not
 * read) for libdw, else dwarf_highpc() and dwarf_lowpc(). */
static int read_pc(const struct names *n, struct ps_die_function *f)
{
	if (n->has_ranges && n->ranges_form != DW_FORM_rnglistx) {
		f->ranges_attr = true;
		return 0;
	}
	if (!n->has_high)
		return 0;
	/* a low_pc or a high_pc in another form than DW_FORM_addr or a
	 * constant (an index into .debug_addr, which libdw reads) is libdw's */
	if ((n->has_low && n->low.kind != VALUE_ADDR) || n->high.kind == VALUE_OTHER)
		return PS_DIE_WALK_UNSURE;
	if (n->high.kind == VALUE_ADDR)
		f->high = n->high.u;
	else if (!n->has_low)
		return 0; /* an offset from nothing */
	else
		f->high = n->low.u + n->high.u;
	if (f->high == 0)
		return 0;
	f->has_pc = true;
	f->low = n->has_low ? n->low.u : 0;
	return 0;
}

/* What addr2line reads of the function whose attributes are at c, or
 * PS_DIE_WALK_UNSURE for libdw to read it (also when the references run
 * deeper than addr2line follows them: libdw's path says so). */
static int read_function(const struct walk *w, struct ps_cursor c, const struct abbrev *a,
                         struct ps_die_function *f)
{
	unsigned follows = 0;
	struct names n = { .follows = &follows };
	int rc;

	memset(f, 0, sizeof(*f));
	rc = read_names(w, c, a, 0, &n, f);
	if (rc || n.failed)
		return PS_DIE_WALK_UNSURE;
	f->name = n.name;
	f->is_linkage = n.is_linkage;
	return read_pc(&n, f);
}

static bool is_function(unsigned tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_entry_point ||
	       tag == DW_TAG_inlined_subroutine;
}

/* Whether no function DIE can lie among the children of a DIE of tag:
 * its subtree is stepped over where DW_AT_sibling says where it ends, as
 * libdw's walk finds nothing there. Call sites hold their parameters,
 * enumerations their values, array and subroutine types their ranges and
 * parameters. In C a structure or union holds its members alone; in C++
 * a class may hold a member function's code (a lambda's operator()). */
static bool holds_no_function(const struct walk *w, unsigned tag)
{
	switch (tag) {
	case DW_TAG_call_site:
	case DW_TAG_GNU_call_site:
	case DW_TAG_enumeration_type:
	case DW_TAG_array_type:
	case DW_TAG_subroutine_type:
		return true;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return w->c_unit;
	default:
		return false;
	}
}

int ps_die_walk_functions_libdw(Dwarf_Die *cudie, ps_die_walk_fn fn, void *ctx)
{
	struct frame {
		Dwarf_Die die;
		uint32_t enclosing; /* nearest function among the ancestors */
	} *stack = NULL;
	size_t depth = 0, cap = 0;
	Dwarf_Die child;
	int rc = 0;

	if (dwarf_child(cudie, &child) != 0)
		return 0;
	if (!ps_array_reserve((void **)&stack, &cap, 1, sizeof(*stack), 16))
		return -ENOMEM;
	stack[depth++] = (struct frame){ .die = child, .enclosing = PS_DIE_WALK_NONE };
	while (depth > 0 && rc == 0) {
		struct frame *top = &stack[depth - 1];
		Dwarf_Die die = top->die, inner;
		uint32_t enclosing = top->enclosing;
		int tag = dwarf_tag(&die);

		/* the next sibling replaces this entry (an error ends the level
		 * as the end of the siblings does); children go above it */
		if (dwarf_siblingof(&die, &top->die) != 0)
			depth--;
		if (tag >= 0 && is_function((unsigned)tag))
			rc = fn(ctx, &die, tag, enclosing, &enclosing, NULL);
		/* into types too: a C++ lambda's operator(), with its code,
		 * is a member of its closure class, inside the function */
		if (rc == 0 && dwarf_haschildren(&die) && dwarf_child(&die, &inner) == 0) {
			if (!ps_array_reserve((void **)&stack, &cap, depth + 1, sizeof(*stack),
			                      16)) {
				rc = -ENOMEM;
				break;
			}
			stack[depth++] = (struct frame){ .die = inner, .enclosing = enclosing };
		}
	}
	free(stack);
	return rc;
}

struct level {
	size_t next; /* where the next DIE of this level is */
	uint32_t enclosing;
};

static int walk_dies(struct walk *w, const Dwarf_Die *cudie, const uint8_t *unit_start,
                     size_t first, ps_die_walk_fn fn, void *ctx)
{
	struct level *levels = NULL;
	size_t depth = 0, cap = 0;
	int rc = 0;

	if (!ps_array_reserve((void **)&levels, &cap, 1, sizeof(*levels), 16))
		return -ENOMEM;
	levels[depth++] = (struct level){ .next = first, .enclosing = PS_DIE_WALK_NONE };
	while (depth > 0 && rc == 0) {
		struct level *top = &levels[depth - 1];
		struct ps_cursor c = w->info;
		const struct abbrev *a;
		struct ps_cursor attrs;
		uint64_t code, sibling = 0;
		bool has_sibling = false;
		size_t here = top->next;
		uint32_t enclosing = top->enclosing;

		if (here >= ps_cursor_size(&w->info) || !ps_cursor_skip(&c, here) ||
		    !read_uleb(&c, &code)) {
			rc = PS_DIE_WALK_UNSURE; /* no closing entry before the end */
			break;
		}
		/* libdw takes only a single zero byte for a null entry */
		if (code == 0 && ps_cursor_pos(&c) != here + 1) {
			rc = PS_DIE_WALK_UNSURE;
			break;
		}
		if (code == 0) {
			/* the level's end: the parent goes on after it unless its
			 * sibling is elsewhere */
			depth--;
			if (depth > 0 && levels[depth - 1].next == SIZE_MAX)
				levels[depth - 1].next = ps_cursor_pos(&c);
			continue;
		}
		if (code >= w->nr_abbrevs || !w->abbrevs[code].known) {
			rc = PS_DIE_WALK_UNSURE;
			break;
		}
		a = &w->abbrevs[code];
		attrs = c;
		if (a->fixed && !skip_block(&c, a->fixed_size))
			rc = PS_DIE_WALK_UNSURE;
		for (uint32_t i = 0; !a->fixed && i < a->nr_attrs && rc == 0; i++) {
			const struct attr_spec *spec = &w->attrs[a->first_attr + i];
			bool is_sibling = spec->name == DW_AT_sibling && !has_sibling;

			if (!skip_form(w, &c, spec->form, is_sibling ? &sibling : NULL))
				rc = PS_DIE_WALK_UNSURE;
			has_sibling |= is_sibling;
		}
		if (rc)
			break;
		/* dwarf_siblingof() jumps to DW_AT_sibling; forward only, or
		 * libdw decides */
		if (has_sibling && (sibling <= here || sibling >= ps_cursor_size(&w->info))) {
			rc = PS_DIE_WALK_UNSURE;
			break;
		}
		top->next = has_sibling ? (size_t)sibling : SIZE_MAX;
		if (is_function(a->tag)) {
			Dwarf_Die die = *cudie;
			struct ps_die_function read;
			bool known = w->strings && read_function(w, attrs, a, &read) == 0;

			die.addr = (void *)(uintptr_t)(unit_start + here);
			die.abbrev = NULL; /* libdw finds it from the code */
			rc = fn(ctx, &die, a->tag, enclosing, &enclosing, known ? &read : NULL);
			if (rc)
				break;
		}
		/* past a subtree without functions, where it ends */
		if (a->has_children && has_sibling && holds_no_function(w, a->tag))
			continue;
		if (a->has_children) {
			if (!ps_array_reserve((void **)&levels, &cap, depth + 1, sizeof(*levels),
			                      16)) {
				rc = -ENOMEM;
				break;
			}
			levels[depth++] =
			        (struct level){ .next = ps_cursor_pos(&c), .enclosing = enclosing };
		} else if (!has_sibling) {
			levels[depth - 1].next = ps_cursor_pos(&c);
		}
	}
	free(levels);
	return rc;
}

int ps_die_walk_functions(Dwarf *dwarf, Dwarf_Die *cudie, struct ps_cursor info,
                          struct ps_cursor abbrevs, const struct ps_die_strings *strings,
                          ps_die_walk_fn fn, void *ctx)
{
	Dwarf_Off die_offset = dwarf_dieoffset(cudie), unit_offset, next, abbrev_offset;
	Dwarf_Off in_unit = dwarf_cuoffset(cudie);
	uint8_t address_size, offset_size;
	struct walk w = { 0 };
	Dwarf_Half version;
	size_t header_size;
	uint64_t code;
	struct ps_cursor c;
	int rc;

	if (die_offset == (Dwarf_Off)-1 || in_unit == (Dwarf_Off)-1 || in_unit > die_offset)
		return PS_DIE_WALK_UNSURE;
	unit_offset = die_offset - in_unit;
	if (dwarf_next_unit(dwarf, unit_offset, &next, &header_size, &version, &abbrev_offset,
	                    &address_size, &offset_size, NULL, NULL) != 0 ||
	    next <= die_offset || version < 2 || version > 5 ||
	    (address_size != 4 && address_size != 8))
		return PS_DIE_WALK_UNSURE; /* libdw reads other address sizes as 8 */
	/* the unit's bytes from its header on, in the section libdw reads */
	if ((const uint8_t *)cudie->addr != info.start + die_offset ||
	    next > ps_cursor_size(&info) ||
	    !ps_cursor_peek_cursor(&info, unit_offset, next - unit_offset, &w.info))
		return PS_DIE_WALK_UNSURE;
	w.strings = strings;
	w.version = (uint8_t)version;
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
		w.c_unit = true;
		break;
	default:
		/* C++ and the rest: walked whole */
		break;
	}
	w.address_size = address_size;
	w.offset_size = offset_size;
	rc = read_abbrevs(&w, abbrevs, abbrev_offset);
	if (rc == 0) {
		/* past the unit DIE: its children are the first level */
		c = w.info;
		if (!ps_cursor_skip(&c, in_unit) || !read_uleb(&c, &code) || code >= w.nr_abbrevs ||
		    !w.abbrevs[code].known)
			rc = PS_DIE_WALK_UNSURE;
		for (uint32_t i = 0; rc == 0 && i < w.abbrevs[code].nr_attrs; i++)
			if (!skip_form(&w, &c, w.attrs[w.abbrevs[code].first_attr + i].form, NULL))
				rc = PS_DIE_WALK_UNSURE;
		if (rc == 0 && w.abbrevs[code].has_children)
			rc = walk_dies(&w, cudie, info.start + unit_offset, ps_cursor_pos(&c), fn,
			               ctx);
	}
	free(w.abbrevs);
	free(w.attrs);
	return rc;
}
