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
};

struct walk {
	struct ps_cursor info; /* the unit, whole */
	uint8_t version, address_size, offset_size;
	struct abbrev *abbrevs; /* by code */
	size_t nr_abbrevs;
	struct attr_spec *attrs;
	size_t nr_attrs, cap_attrs;
};

static uint32_t form_size(const struct walk *w, uint64_t form);

static bool read_uleb(struct ps_cursor *c, uint64_t *out)
{
	uint64_t value = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t byte = ps_cursor_u8(c);

		if (!ps_cursor_ok(c))
			return false;
		value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*out = value;
			return true;
		}
	}
	return false;
}

/* The unit's abbreviations, from its offset in .debug_abbrev. */
static int read_abbrevs(struct walk *w, struct ps_cursor abbrevs, uint64_t offset)
{
	if (offset > ps_cursor_left(&abbrevs) || !ps_cursor_skip(&abbrevs, offset))
		return PS_DIE_WALK_UNSURE;
	for (;;) {
		uint64_t code, tag, name, form, implicit;
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
			if (!read_uleb(&abbrevs, &name) || !read_uleb(&abbrevs, &form))
				return PS_DIE_WALK_UNSURE;
			if (name == 0 && form == 0)
				break;
			/* its value lives in the abbreviation: nothing to skip */
			if (form == DW_FORM_implicit_const && !read_uleb(&abbrevs, &implicit))
				return PS_DIE_WALK_UNSURE;
			if (name > UINT16_MAX || form > UINT16_MAX ||
			    a->nr_attrs >= ABBREV_ATTRS_MAX)
				return PS_DIE_WALK_UNSURE;
			if (!ps_array_reserve((void **)&w->attrs, &w->cap_attrs, w->nr_attrs + 1,
			                      sizeof(*w->attrs), 256))
				return -ENOMEM;
			w->attrs[w->nr_attrs++] = (struct attr_spec){ .name = (uint16_t)name,
				                                      .form = (uint16_t)form };
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

static bool is_function(unsigned tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_entry_point ||
	       tag == DW_TAG_inlined_subroutine;
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
			rc = fn(ctx, &die, tag, enclosing, &enclosing);
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

			die.addr = (void *)(uintptr_t)(unit_start + here);
			die.abbrev = NULL; /* libdw finds it from the code */
			rc = fn(ctx, &die, a->tag, enclosing, &enclosing);
			if (rc)
				break;
		}
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
                          struct ps_cursor abbrevs, ps_die_walk_fn fn, void *ctx)
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
	w.version = (uint8_t)version;
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
